/* tf.saved_model.save for signatures: the graph TensorFlow's loaders read (tf.saved_model.load, TF Serving, the C++
 * loader). Each signature's concrete function and its callees go into the library; the graph holds a Placeholder
 * per input ("<key>_<input>"), a VarHandleOp per captured variable (shared_name = its checkpoint key), a Const per
 * other captured tensor, and one StatefulPartitionedCall per signature. A SaverDef names the restore subgraph
 * (RestoreV2 -> AssignVariableOp -> save/restore_all) and the save subgraph (SaveV2), which TensorFlow runs to
 * restore variables/ when the MetaGraphDef has no SavedObjectGraph (sm_save_objects.c writes one when it can).
 * Everything is written into a temporary folder
 * next to export_dir and renamed into place. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graph/graphdef_io.h"
#include "graph/trace.h"
#include "platform/file_io.h"
#include "platform/files.h"
#include "proto/fingerprint.pb-c.h"
#include "proto/graphdef_internal.h"
#include "saved_model/bundle.h"
#include "saved_model/sm_internal.h"
#include "saved_model/sm_save_objects.h"
#include "tfc/version.h"

#define PREDICT "tensorflow/serving/predict"

typedef struct {
    tfc_ctx *ctx;
    tfc_graphdef *gd;
    tfc_status *st;
    tfc_variable **vars; /* captured variables, first-seen order */
    char **var_names;    /* their node names (also their checkpoint keys) */
    int n_vars, cap_vars;
    char **used;         /* node names taken at the top level */
    int n_used, cap_used;
    char **keys;         /* each variable's checkpoint key */
    tfc_sm_sig_objects *objs; /* per signature, for the object graph (arrays owned here) */
} saver;

static bool oom(saver *s) { return tfc_status_oom(s->st, "SavedModel save", 256); }

static bool name_used(const saver *s, const char *n) {
    for (int i = 0; i < s->n_used; i++)
        if (!strcmp(s->used[i], n)) return true;
    return false;
}

/* A node name from `base` (characters TensorFlow's node names allow; made unique with _1, _2, ...), recorded as used
 * and copied into out. */
static bool unique_name(saver *s, const char *base, char *out, size_t size) {
    char clean[512];
    size_t n = 0;
    for (const char *p = base; *p && n + 1 < sizeof clean; p++) {
        char c = *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                  (n && (c == '_' || c == '/' || c == '-'));
        clean[n] = ok ? c : (n ? '_' : 'v');
        n++;
    }
    clean[n] = 0;
    if (!n) snprintf(clean, sizeof clean, "Variable");
    snprintf(out, size, "%s", clean);
    for (int k = 1; name_used(s, out); k++) snprintf(out, size, "%s_%d", clean, k);
    if (s->n_used == s->cap_used) {
        int c = s->cap_used ? 2 * s->cap_used : 16;
        char **u = tfc_realloc(s->used, (size_t)c * sizeof *u);
        if (!u) return oom(s);
        s->used = u, s->cap_used = c;
    }
    if (!(s->used[s->n_used] = tfc_strdup(out))) return oom(s);
    s->n_used++;
    return true;
}

static bool add(saver *s, const char *name, const char *op, const char *const *in, int n_in, const tfc_attr *at,
                int n_at) {
    return tfc_graphdef_add_node(s->gd, TFC_GRAPHDEF_TOP, name, op, in, n_in, at, n_at, s->st);
}

/* The VarHandleOp node of variable v (added on first use). */
static const char *var_node(saver *s, tfc_variable *v) {
    for (int i = 0; i < s->n_vars; i++)
        if (s->vars[i] == v) return s->var_names[i];
    if (s->n_vars == s->cap_vars) {
        int c = s->cap_vars ? 2 * s->cap_vars : 8;
        tfc_variable **nv = tfc_realloc(s->vars, (size_t)c * sizeof *nv);
        char **nn = nv ? tfc_realloc(s->var_names, (size_t)c * sizeof *nn) : NULL;
        if (nv) s->vars = nv;
        if (!nn) return oom(s), NULL;
        s->var_names = nn, s->cap_vars = c;
    }
    char name[600];
    if (!unique_name(s, tfc_variable_name(v) ? tfc_variable_name(v) : "Variable", name, sizeof name)) return NULL;
    const tfc_shape *shp = tfc_variable_shape(v);
    tfc_attr at[4] = {TFC_ATTR_T("dtype", tfc_variable_dtype(v)), TFC_ATTR_SHAPE_("shape", shp->dims, shp->rank),
                      TFC_ATTR_S("shared_name", name), TFC_ATTR_S("container", "")};
    if (!add(s, name, "VarHandleOp", NULL, 0, at, 4)) return NULL;
    if (!(s->var_names[s->n_vars] = tfc_strdup(name))) return oom(s), NULL;
    s->vars[s->n_vars] = v;
    return s->var_names[s->n_vars++];
}

static bool add_signature(saver *s, const tfc_saved_model_signature_spec *spec, int index,
                          Tensorflow__SignatureDef *sd) {
    tfc_flib *lib = tfc_ctx_flib(s->ctx, s->st);
    const char *fname = spec->function ? tfc_concrete_function_name(spec->function) : NULL;
    const tfc_gfunc *fn = lib && fname ? tfc_flib_find(lib, fname) : NULL;
    if (!fn)
        return tfc_status_set(s->st, TFC_INVALID_ARGUMENT, "signature '%s': its function is not a concrete function "
                              "traced in this context", spec->key ? spec->key : "");
    if (!tfc_graphdef_export_function_tree(fn, lib, s->gd, s->st)) return false;
    const int n_in = tfc_concrete_function_num_inputs(spec->function), n_caps = tfc_concrete_function_num_captures(spec->function);
    const int n_out = fn->n_rets;
    char **ins = tfc_calloc((size_t)(n_in + n_caps) + 1, sizeof *ins);
    tfc_dtype *tin = tfc_calloc((size_t)(n_in + n_caps + n_out) + 1, sizeof *tin);
    sd->inputs = tfc_calloc((size_t)n_in + 1, sizeof *sd->inputs);
    sd->outputs = tfc_calloc((size_t)n_out + 1, sizeof *sd->outputs);
    bool ok = ins && tin && sd->inputs && sd->outputs;
    if (!ok) oom(s);
    char name[700], call[64];
    for (int i = 0; ok && i < n_in; i++) {
        const tfc_gnode *arg = fn->body->nodes[fn->arg_nodes[i]];
        const char *key = spec->input_keys ? spec->input_keys[i] : arg->name;
        tfc_tensor_spec ts = tfc_concrete_function_input_spec(spec->function, i);
        snprintf(name, sizeof name, "%s_%s", spec->key, key);
        ok = unique_name(s, name, name, sizeof name);
        tfc_attr at[2] = {TFC_ATTR_T("dtype", ts.dtype), TFC_ATTR_SHAPE_("shape", ts.shape.dims, ts.shape.rank)};
        ok = ok && add(s, name, "Placeholder", NULL, 0, at, 2) && (ins[i] = tfc_strdup(name));
        tin[i] = ts.dtype;
        Tensorflow__SignatureDef__InputsEntry *e = tfc_malloc(sizeof *e);
        Tensorflow__TensorInfo *ti = tfc_malloc(sizeof *ti);
        if (e) tensorflow__signature_def__inputs_entry__init(e), e->key = NULL;
        if (ti) tensorflow__tensor_info__init(ti);
        char tn[710];
        snprintf(tn, sizeof tn, "%s:0", name);
        if (!ok || !e || !ti || !(e->key = tfc_strdup(key)) || !(ti->name = tfc_strdup(tn)) ||
            !(ti->tensor_shape = tfc_pb_shape_to_proto(&ts.shape, s->st))) {
            if (e && !e->key) e->key = (char *)protobuf_c_empty_string;
            tfc_pb_free(e);
            if (ti && !ti->name) ti->name = (char *)protobuf_c_empty_string;
            tfc_pb_free(ti);
            ok = ok ? oom(s) : false;
            break;
        }
        ti->encoding_case = TENSORFLOW__TENSOR_INFO__ENCODING_NAME;
        ti->dtype = (Tensorflow__DataType)ts.dtype;
        e->value = ti;
        sd->inputs[sd->n_inputs++] = e;
    }
    for (int c = 0; ok && c < n_caps; c++) {
        const tfc_tensor *t = tfc_concrete_function_capture(spec->function, c);
        tfc_variable *v = tfc_variable_from_handle(t);
        tin[n_in + c] = tfc_tensor_dtype(t);
        if (v) {
            const char *vn = var_node(s, v);
            ok = vn && (ins[n_in + c] = tfc_strdup(vn));
        } else {
            tfc_attr at[2] = {TFC_ATTR_T("dtype", tfc_tensor_dtype(t)), {.name = "value", .kind = TFC_ATTR_TENSOR, .v.tensor = t}};
            ok = unique_name(s, "Const", name, sizeof name) && add(s, name, "Const", NULL, 0, at, 2) &&
                 (ins[n_in + c] = tfc_strdup(name));
        }
        if (!ok && s->st->code == TFC_OK) oom(s);
    }
    for (int o = 0; o < n_out; o++) tin[n_in + n_caps + o] = fn->body->nodes[fn->rets[o].node]->out_dtypes[fn->rets[o].index];
    /* TensorFlow's names: the first call of its kind "StatefulPartitionedCall" (a function with a stateful op) or
     * "PartitionedCall", the next ones "_1", "_2", ... in the order of the signatures' keys */
    const char *call_op = fn->stateful ? "StatefulPartitionedCall" : "PartitionedCall";
    snprintf(call, sizeof call, "%s", call_op);
    tfc_attr at[3] = {{.name = "Tin", .kind = TFC_ATTR_LIST_TYPE, .n = n_in + n_caps, .v.types = tin},
                      {.name = "Tout", .kind = TFC_ATTR_LIST_TYPE, .n = n_out, .v.types = tin + n_in + n_caps},
                      TFC_ATTR_FN("f", fname)};
    ok = ok && unique_name(s, call, call, sizeof call) &&
         add(s, call, call_op, (const char *const *)ins, n_in + n_caps, at, 3);
    for (int o = 0; ok && o < n_out; o++) {
        char key[64], tn[96];
        snprintf(key, sizeof key, "output_%d", o);
        snprintf(tn, sizeof tn, "%s:%d", call, o);
        tfc_tensor_spec os = tfc_concrete_function_output_spec(spec->function, o);
        Tensorflow__SignatureDef__OutputsEntry *e = tfc_malloc(sizeof *e);
        Tensorflow__TensorInfo *ti = tfc_malloc(sizeof *ti);
        if (e) tensorflow__signature_def__outputs_entry__init(e), e->key = NULL;
        if (ti) tensorflow__tensor_info__init(ti);
        if (!e || !ti || !(e->key = tfc_strdup(spec->output_keys ? spec->output_keys[o] : key)) ||
            !(ti->name = tfc_strdup(tn)) || !(ti->tensor_shape = tfc_pb_shape_to_proto(&os.shape, s->st))) {
            if (e && !e->key) e->key = (char *)protobuf_c_empty_string;
            tfc_pb_free(e);
            if (ti && !ti->name) ti->name = (char *)protobuf_c_empty_string;
            tfc_pb_free(ti);
            ok = oom(s);
            break;
        }
        ti->encoding_case = TENSORFLOW__TENSOR_INFO__ENCODING_NAME;
        ti->dtype = (Tensorflow__DataType)tin[n_in + n_caps + o];
        e->value = ti;
        sd->outputs[sd->n_outputs++] = e;
    }
    if (ok && !(sd->method_name = tfc_strdup(spec->method_name ? spec->method_name : PREDICT))) ok = oom(s);
    /* what the object graph says of this signature (keys borrowed from sd) */
    tfc_sm_sig_objects *g = &s->objs[index];
    const char **ik = tfc_calloc((size_t)n_in + 1, sizeof *ik), **ok_ = tfc_calloc((size_t)n_out + 1, sizeof *ok_);
    tfc_tensor_spec *is = tfc_calloc((size_t)n_in + 1, sizeof *is), *os = tfc_calloc((size_t)n_out + 1, sizeof *os);
    int *bound = tfc_calloc((size_t)n_caps + 1, sizeof *bound);
    *g = (tfc_sm_sig_objects){spec->key, fname, n_in, n_out, n_caps, ik, is, ok_, os, bound};
    if (ok && (!ik || !ok_ || !is || !os || !bound)) ok = oom(s);
    for (int i = 0; ok && i < n_in; i++) ik[i] = sd->inputs[i]->key, is[i] = tfc_concrete_function_input_spec(spec->function, i);
    for (int o = 0; ok && o < n_out; o++) ok_[o] = sd->outputs[o]->key, os[o] = tfc_concrete_function_output_spec(spec->function, o);
    for (int c = 0; ok && c < n_caps; c++) {
        tfc_variable *v = tfc_variable_from_handle(tfc_concrete_function_capture(spec->function, c));
        bound[c] = -1;
        for (int k = 0; v && k < s->n_vars; k++)
            if (s->vars[k] == v) bound[c] = k;
    }
    for (int i = 0; ins && i < n_in + n_caps; i++) tfc_free(ins[i]);
    tfc_free(ins);
    tfc_free(tin);
    return ok;
}

/* saver_filename -> RestoreV2 -> AssignVariableOp per variable -> save/restore_all, and SaveV2 of every variable's
 * ReadVariableOp -> save/control_dependency (TensorFlow 1's Saver layout, format V2). */
static bool add_saver(saver *s, Tensorflow__SaverDef *sv) {
    const int n = s->n_vars;
    const char **keys = tfc_calloc((size_t)n + 1, sizeof *keys), **empty = tfc_calloc((size_t)n + 1, sizeof *empty);
    tfc_dtype *dts = tfc_calloc((size_t)n + 1, sizeof *dts);
    char **ins = tfc_calloc((size_t)n + 4, sizeof *ins);
    tfc_tensor *names = NULL, *slices = NULL;
    bool ok = keys && empty && dts && ins;
    if (!ok) return tfc_free(keys), tfc_free(empty), tfc_free(dts), tfc_free(ins), oom(s);
    for (int i = 0; i < n; i++) keys[i] = s->keys[i], empty[i] = "", dts[i] = tfc_variable_dtype(s->vars[i]);
    const int64_t dim = n;
    ok = (names = tfc_tensor_from_strings(keys, NULL, &dim, 1, s->st)) &&
         (slices = tfc_tensor_from_strings(empty, NULL, &dim, 1, s->st));
    const int64_t scalar_dims[1] = {0};
    tfc_attr ph[2] = {TFC_ATTR_T("dtype", TFC_STRING), TFC_ATTR_SHAPE_("shape", scalar_dims, 0)};
    tfc_attr cn[2] = {TFC_ATTR_T("dtype", TFC_STRING), {.name = "value", .kind = TFC_ATTR_TENSOR, .v.tensor = names}};
    tfc_attr cs[2] = {TFC_ATTR_T("dtype", TFC_STRING), {.name = "value", .kind = TFC_ATTR_TENSOR, .v.tensor = slices}};
    tfc_attr dl = {.name = "dtypes", .kind = TFC_ATTR_LIST_TYPE, .n = n, .v.types = dts};
    char fname[64], tn[64], sl[64], rs[64], ra[64], sv2[64], cd[64], nm[700];
    ok = ok && unique_name(s, "saver_filename", fname, sizeof fname) && add(s, fname, "Placeholder", NULL, 0, ph, 2) &&
         unique_name(s, "save/tensor_names", tn, sizeof tn) && add(s, tn, "Const", NULL, 0, cn, 2) &&
         unique_name(s, "save/shape_and_slices", sl, sizeof sl) && add(s, sl, "Const", NULL, 0, cs, 2) &&
         unique_name(s, "save/RestoreV2", rs, sizeof rs) &&
         add(s, rs, "RestoreV2", (const char *[]){fname, tn, sl}, 3, &dl, 1);
    /* restore: one assign per variable, grouped by a NoOp */
    char **ctrl = tfc_calloc((size_t)n + 1, sizeof *ctrl);
    if (ok && !ctrl) ok = oom(s);
    for (int i = 0; ok && i < n; i++) {
        char in[80];
        snprintf(in, sizeof in, "%s:%d", rs, i);
        tfc_attr dt = TFC_ATTR_T("dtype", dts[i]);
        snprintf(nm, sizeof nm, "save/AssignVariableOp_%d", i);
        ok = unique_name(s, nm, nm, sizeof nm) && add(s, nm, "AssignVariableOp", (const char *[]){s->var_names[i], in}, 2, &dt, 1);
        char c[720];
        snprintf(c, sizeof c, "^%s", nm);
        if (ok && !(ctrl[i] = tfc_strdup(c))) ok = oom(s);
    }
    ok = ok && unique_name(s, "save/restore_all", ra, sizeof ra) &&
         add(s, ra, "NoOp", (const char *const *)ctrl, n, NULL, 0);
    /* save: SaveV2(prefix, names, slices, values...) then the prefix, after it */
    ins[0] = fname, ins[1] = tn, ins[2] = sl;
    char **reads = tfc_calloc((size_t)n + 1, sizeof *reads);
    if (ok && !reads) ok = oom(s);
    for (int i = 0; ok && i < n; i++) {
        tfc_attr dt = TFC_ATTR_T("dtype", dts[i]);
        snprintf(nm, sizeof nm, "save/ReadVariableOp_%d", i);
        ok = unique_name(s, nm, nm, sizeof nm) && add(s, nm, "ReadVariableOp", (const char *[]){s->var_names[i]}, 1, &dt, 1) &&
             (reads[i] = tfc_strdup(nm));
        ins[3 + i] = reads[i];
    }
    ok = ok && unique_name(s, "save/SaveV2", sv2, sizeof sv2) &&
         add(s, sv2, "SaveV2", (const char *const *)ins, 3 + n, &dl, 1);
    char dep[80];
    snprintf(dep, sizeof dep, "^%s", sv2);
    tfc_attr st = TFC_ATTR_T("T", TFC_STRING);
    ok = ok && unique_name(s, "save/control_dependency", cd, sizeof cd) &&
         add(s, cd, "Identity", (const char *[]){fname, dep}, 2, &st, 1);
    char t1[80], t2[80];
    snprintf(t1, sizeof t1, "%s:0", fname);
    snprintf(t2, sizeof t2, "%s:0", cd);
    if (ok && (!(sv->filename_tensor_name = tfc_strdup(t1)) || !(sv->save_tensor_name = tfc_strdup(t2)) ||
               !(sv->restore_op_name = tfc_strdup(ra))))
        ok = oom(s);
    sv->max_to_keep = 5;
    sv->keep_checkpoint_every_n_hours = 10000.0f;
    sv->version = TENSORFLOW__SAVER_DEF__CHECKPOINT_FORMAT_VERSION__V2;
    for (int i = 0; ctrl && i < n; i++) tfc_free(ctrl[i]);
    for (int i = 0; reads && i < n; i++) tfc_free(reads[i]);
    tfc_free(ctrl);
    tfc_free(reads);
    tfc_tensor_unref(names);
    tfc_tensor_unref(slices);
    tfc_free(keys);
    tfc_free(empty);
    tfc_free(dts);
    tfc_free(ins);
    return ok;
}

/* FNV-1a 64 of bytes: fingerprint.pb's checksum (TensorFlow uses its Fingerprint64; readers only compare). */
static uint64_t fnv64(const uint8_t *p, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

/* rm -r of the folder tfc made (files and one level of sub-folders: variables/). */
static void remove_tree(const char *dir) {
    const char *subs[] = {"variables/variables.index", "variables/variables.data-00000-of-00001", "saved_model.pb",
                          "fingerprint.pb"};
    char p[4300];
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, subs[i]);
        unlink(p);
    }
    snprintf(p, sizeof p, "%s/variables", dir);
    rmdir(p);
    snprintf(p, sizeof p, "%s/assets", dir);
    rmdir(p);
    rmdir(dir);
}

static bool write_files(saver *s, const char *tmp, const Tensorflow__SavedModel *sm, const uint8_t *ckpt_graph,
                        size_t ckpt_size) {
    char path[4300];
    uint8_t *bytes = NULL;
    size_t size = 0;
    bool ok = tfc_make_dirs(tmp, "SavedModel export_dir", s->st);
    if (ok && s->n_vars) {
        snprintf(path, sizeof path, "%s/variables/variables", tmp);
        tfc_bundle_writer *w = tfc_bundle_writer_new(path, s->st);
        ok = w != NULL;
        for (int i = 0; ok && i < s->n_vars; i++) {
            const tfc_tensor *v = tfc_variable_value(s->vars[i]); /* borrowed: no read op, nothing a scope tracks */
            ok = v ? tfc_bundle_writer_add(w, s->keys[i], v, s->st)
                   : tfc_status_set(s->st, TFC_FAILED_PRECONDITION, "variable '%s' is uninitialized", s->var_names[i]);
        }
        if (ok && ckpt_graph) {
            tfc_tensor *g = tfc_tensor_from_strings((const char *[]){(const char *)ckpt_graph}, &ckpt_size, NULL, 0, s->st);
            ok = g && tfc_bundle_writer_add(w, TFC_BUNDLE_OBJECT_GRAPH_KEY, g, s->st);
            tfc_tensor_unref(g);
        }
        ok = ok && tfc_bundle_writer_finish(w, s->st);
        tfc_bundle_writer_free(w);
    }
    if (ok) snprintf(path, sizeof path, "%s/saved_model.pb", tmp);
    ok = ok && tfc_pb_pack(&sm->base, &bytes, &size, "SavedModel", s->st) &&
         tfc_file_write_atomic(path, bytes, size, s->st);
    if (ok) {
        Tensorflow__FingerprintDef fp = TENSORFLOW__FINGERPRINT_DEF__INIT;
        Tensorflow__VersionDef ver = TENSORFLOW__VERSION_DEF__INIT;
        ver.producer = 1;
        fp.saved_model_checksum = fnv64(bytes, size);
        fp.version = &ver;
        uint8_t *fb = NULL;
        size_t fs = 0;
        snprintf(path, sizeof path, "%s/fingerprint.pb", tmp);
        ok = tfc_pb_pack(&fp.base, &fb, &fs, "FingerprintDef", s->st) && tfc_file_write_atomic(path, fb, fs, s->st);
        tfc_free(fb);
    }
    tfc_free(bytes);
    return ok;
}

/* Moves tmp into export_dir: a previous model there is moved aside first and removed after (a crash in between
 * leaves one of the two complete). */
static bool install(const char *tmp, const char *dir, tfc_status *st) {
    char old[4200];
    snprintf(old, sizeof old, "%s.old-%ld", dir, (long)getpid());
    struct stat sb;
    bool had = stat(dir, &sb) == 0;
    if (had && rename(dir, old) != 0)
        return tfc_status_set(st, tfc_errno_code(errno), "SavedModel %s: cannot replace the existing folder: %s", dir,
                               strerror(errno));
    if (rename(tmp, dir) != 0) {
        int e = errno;
        if (had) rename(old, dir);
        return tfc_status_set(st, tfc_errno_code(e), "SavedModel %s: rename from %s: %s", dir, tmp, strerror(e));
    }
    if (had) remove_tree(old);
    return true;
}

bool tfc_saved_model_save(tfc_ctx *ctx, const char *export_dir, const tfc_saved_model_signature_spec *sigs, int n_sigs,
                          tfc_status *st) {
    if (!ctx || !export_dir || !export_dir[0] || n_sigs < 1 || !sigs)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "tfc_saved_model_save: needs a context, an export_dir and at "
                              "least one signature");
    for (int i = 0; i < n_sigs; i++) {
        if (!sigs[i].key || !sigs[i].key[0] || !sigs[i].function)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "tfc_saved_model_save: signature %d has no key or function", i);
        for (int k = 0; k < i; k++)
            if (!strcmp(sigs[k].key, sigs[i].key))
                return tfc_status_set(st, TFC_INVALID_ARGUMENT, "tfc_saved_model_save: duplicate signature key '%s'",
                                      sigs[i].key);
    }
    saver s = {.ctx = ctx, .st = st};
    Tensorflow__SavedModel sm = TENSORFLOW__SAVED_MODEL__INIT;
    Tensorflow__MetaGraphDef mg = TENSORFLOW__META_GRAPH_DEF__INIT, *mgs[1] = {&mg};
    Tensorflow__MetaGraphDef__MetaInfoDef mi = TENSORFLOW__META_GRAPH_DEF__META_INFO_DEF__INIT;
    Tensorflow__SaverDef sv = TENSORFLOW__SAVER_DEF__INIT;
    char *tags[1] = {TFC_SAVED_MODEL_SERVE};
    char tf_version[] = "2.21.0", git_version[64];
    snprintf(git_version, sizeof git_version, "tfc %s", tfc_version());
    Tensorflow__MetaGraphDef__SignatureDefEntry **entries = tfc_calloc((size_t)n_sigs + 1, sizeof *entries);
    s.objs = tfc_calloc((size_t)n_sigs + 1, sizeof *s.objs);
    bool ok = (s.gd = tfc_graphdef_new(st)) != NULL && entries && s.objs;
    if (!entries || !s.objs) oom(&s);
    uint8_t *og_bytes = NULL, *ckpt_graph = NULL;
    size_t og_size = 0, ckpt_size = 0;
    /* in the order of the keys, as TensorFlow adds its signatures' nodes (their names follow that order) */
    int *order = tfc_malloc(((size_t)n_sigs + 1) * sizeof *order);
    if (!order) ok = oom(&s);
    for (int i = 0; ok && i < n_sigs; i++) {
        int r = i;
        while (r > 0 && strcmp(sigs[order[r - 1]].key, sigs[i].key) > 0) order[r] = order[r - 1], r--;
        order[r] = i;
    }
    for (int r = 0; ok && r < n_sigs; r++) {
        const int i = order[r];
        Tensorflow__MetaGraphDef__SignatureDefEntry *e = tfc_malloc(sizeof *e);
        Tensorflow__SignatureDef *sd = tfc_malloc(sizeof *sd);
        if (!e || !sd) {
            tfc_free(e);
            tfc_free(sd);
            ok = oom(&s);
            break;
        }
        tensorflow__meta_graph_def__signature_def_entry__init(e);
        tensorflow__signature_def__init(sd);
        e->key = tfc_strdup(sigs[i].key);
        e->value = sd;
        entries[mg.n_signature_def++] = e;
        if (!e->key) ok = oom(&s), e->key = (char *)protobuf_c_empty_string;
        ok = ok && add_signature(&s, &sigs[i], i, sd);
        if (!ok) {
            char pre[300];
            snprintf(pre, sizeof pre, "SavedModel %s: signature '%s': ", export_dir, sigs[i].key);
            tfc_pb_status_prefix(st, pre);
        }
    }
    /* the object graph when TensorFlow's structured signatures can describe the functions; its checkpoint keys */
    ok = ok && tfc_sm_object_graphs(s.vars, (const char *const *)s.var_names, s.n_vars, s.objs, n_sigs, &og_bytes,
                                    &og_size, &ckpt_graph, &ckpt_size, st);
    if (ok && og_bytes &&
        !(mg.object_graph_def = (Tensorflow__SavedObjectGraph *)tfc_pb_unpack(&tensorflow__saved_object_graph__descriptor,
                                                                              og_bytes, og_size, INT32_MAX, "SavedObjectGraph", st)))
        ok = false;
    if (ok && !(s.keys = tfc_calloc((size_t)s.n_vars + 1, sizeof *s.keys))) ok = oom(&s);
    for (int i = 0; ok && i < s.n_vars; i++) {
        char key[1200];
        if (og_bytes) tfc_sm_checkpoint_key(s.var_names[i], key, sizeof key);
        else snprintf(key, sizeof key, "%s", s.var_names[i]);
        if (!(s.keys[i] = tfc_strdup(key))) ok = oom(&s);
    }
    ok = ok && (!s.n_vars || add_saver(&s, &sv));
    tfc_graphdef_opts vo = {.allow_unknown_ops = true};
    ok = ok && tfc_graphdef_validate(s.gd, &vo, st);
    char tmp[4200];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp-%ld", export_dir, (long)getpid()) >= sizeof tmp - 64)
        ok = ok && tfc_status_set(st, TFC_INVALID_ARGUMENT, "SavedModel export_dir too long: %.200s...", export_dir);
    if (ok) {
        mi.n_tags = 1, mi.tags = tags;
        mi.tensorflow_version = tf_version;
        mi.tensorflow_git_version = git_version;
        mg.meta_info_def = &mi;
        mg.graph_def = s.gd->pb;
        if (s.n_vars) mg.saver_def = &sv;
        mg.signature_def = entries;
        sm.saved_model_schema_version = 1;
        sm.n_meta_graphs = 1, sm.meta_graphs = mgs;
        remove_tree(tmp);
        ok = write_files(&s, tmp, &sm, ckpt_graph, ckpt_size) && install(tmp, export_dir, st);
        if (!ok) remove_tree(tmp);
    }
    for (int i = 0; entries && i < (int)mg.n_signature_def; i++) tfc_pb_free(entries[i]);
    tfc_free(entries);
    tfc_free(order);
    char *owned[3] = {sv.filename_tensor_name, sv.save_tensor_name, sv.restore_op_name};
    for (int i = 0; i < 3; i++)
        if (owned[i] != protobuf_c_empty_string) tfc_free(owned[i]);
    tfc_pb_free(mg.object_graph_def);
    tfc_free(og_bytes);
    tfc_free(ckpt_graph);
    for (int i = 0; s.objs && i < n_sigs; i++) {
        tfc_free((void *)s.objs[i].in_keys);
        tfc_free((void *)s.objs[i].in_specs);
        tfc_free((void *)s.objs[i].out_keys);
        tfc_free((void *)s.objs[i].out_specs);
        tfc_free((void *)s.objs[i].bound);
    }
    tfc_free(s.objs);
    for (int i = 0; s.keys && i < s.n_vars; i++) tfc_free(s.keys[i]);
    tfc_free(s.keys);
    for (int i = 0; i < s.n_vars; i++) tfc_free(s.var_names[i]);
    for (int i = 0; i < s.n_used; i++) tfc_free(s.used[i]);
    tfc_free(s.vars);
    tfc_free(s.var_names);
    tfc_free(s.used);
    tfc_graphdef_free(s.gd);
    return ok;
}
