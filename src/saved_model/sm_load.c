/* tf.saved_model.load for inference: the MetaGraphDef's graph is validated (ops tfc lacks are allowed: the
 * save/restore functions hold string and checkpoint ops), each signature becomes a function of the context's
 * library pruned to what its outputs need (its inputs, then every variable handle, are the arguments), and the
 * variables are restored straight from the bundle rather than by running the graph's restore function. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/exec.h"
#include "graph/graphdef_io.h"
#include "graph/trace.h"
#include "proto/get_model_metadata.pb-c.h"
#include "proto/graphdef_internal.h"
#include "saved_model/sm_internal.h"

#define INIT_OP_KEY "__saved_model_init_op"

static atomic_int model_ids;

static void sig_clear(tfc_saved_model *m, tfc_saved_model_signature *s) {
    tfc_flib *lib = tfc_ctx_flib(m->ctx, &(tfc_status){0});
    if (lib && s->fn) tfc_flib_remove(lib, s->fn);
    tfc_free(s->key);
    tfc_free(s->in);
    tfc_free(s->out);
}

void tfc_saved_model_free(tfc_saved_model *m) {
    if (!m) return;
    for (int i = 0; i < m->n_sigs; i++) sig_clear(m, &m->sigs[i]);
    tfc_free(m->sigs);
    for (int i = 0; i < m->n_vars; i++) {
        tfc_variable_free(m->vars ? m->vars[i] : NULL);
        tfc_free(m->var_nodes ? m->var_nodes[i] : NULL);
    }
    tfc_free(m->vars);
    tfc_free(m->var_nodes);
    for (int i = 0; i < m->n_fixed; i++) {
        tfc_tensor_unref(m->fixed_values[i]);
        tfc_free(m->fixed_names[i]);
    }
    tfc_free(m->fixed);
    tfc_free(m->fixed_names);
    tfc_free(m->fixed_values);
    tfc_graphdef_free(m->gd);
    tfc_pb_free(m->pb);
    tfc_free(m->dir);
    tfc_free(m);
}

/* TensorInfo -> tfc_saved_model_tensor_info (validated by tfc_sm_read; _REF dtypes read as their base). */
static bool tensor_info(const char *key, const Tensorflow__TensorInfo *ti, const char *sig,
                        tfc_saved_model_tensor_info *out, tfc_status *st) {
    if (ti->encoding_case != TENSORFLOW__TENSOR_INFO__ENCODING_NAME)
        return tfc_status_set(st, TFC_UNIMPLEMENTED, "signature '%s': '%s' is a %s tensor (only dense tensors are "
                              "supported)", sig, key, ti->encoding_case == TENSORFLOW__TENSOR_INFO__ENCODING_COO_SPARSE
                              ? "sparse" : "composite");
    if (!ti->dtype)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "signature '%s': '%s' (%s) has no dtype", sig, key, ti->name);
    out->key = key;
    out->name = ti->name;
    out->dtype = (tfc_dtype)(ti->dtype >= 100 ? ti->dtype - 100 : ti->dtype);
    out->shape = (tfc_shape){.rank = -1};
    if (ti->tensor_shape) tfc_pb_shape_from_proto(ti->tensor_shape, &out->shape, "TensorInfo", st);
    return true;
}

static bool load_signature(tfc_saved_model *m, int id, Tensorflow__MetaGraphDef__SignatureDefEntry *e,
                           tfc_saved_model_signature *s, tfc_status *st) {
    Tensorflow__SignatureDef *sd = e->value;
    tfc_sm_sort_tensor_infos(sd->inputs, sd->n_inputs);
    tfc_sm_sort_tensor_infos((Tensorflow__SignatureDef__InputsEntry **)sd->outputs, sd->n_outputs);
    s->def = sd;
    s->model = m;
    s->n_in = (int)sd->n_inputs;
    s->n_out = (int)sd->n_outputs;
    s->key = tfc_strdup(e->key);
    s->in = tfc_calloc(sd->n_inputs + 1, sizeof *s->in);
    s->out = tfc_calloc(sd->n_outputs + 1, sizeof *s->out);
    const size_t n_feeds = sd->n_inputs + (size_t)m->n_fixed;
    tfc_graphdef_feed *feeds = tfc_calloc(n_feeds + 1, sizeof *feeds);
    const char **outs = tfc_calloc(sd->n_outputs + 1, sizeof *outs);
    bool ok = s->key && s->in && s->out && feeds && outs;
    if (!ok) tfc_status_oom(st, "SavedModel signature", n_feeds * 64);
    for (size_t i = 0; ok && i < sd->n_inputs; i++) {
        ok = tensor_info(sd->inputs[i]->key, sd->inputs[i]->value, e->key, &s->in[i], st);
        feeds[i] = (tfc_graphdef_feed){s->in[i].name, s->in[i].dtype, s->in[i].shape.rank >= 0 ? &s->in[i].shape : NULL};
    }
    size_t n_feeds_used = sd->n_inputs;
    for (int v = 0; ok && v < m->n_fixed; v++) feeds[n_feeds_used++] = m->fixed[v]; /* resources, assets */
    for (size_t i = 0; ok && i < sd->n_outputs; i++) {
        ok = tensor_info(sd->outputs[i]->key, sd->outputs[i]->value, e->key, &s->out[i], st);
        outs[i] = s->out[i].name;
    }
    char name[300];
    snprintf(name, sizeof name, "__saved_model_%d_%.200s", id, e->key);
    tfc_flib *lib = ok ? tfc_ctx_flib(m->ctx, st) : NULL;
    if (lib && !(s->fn = tfc_graphdef_import_subgraph(m->gd, lib, name, feeds, (int)n_feeds_used, outs, s->n_out, st))) {
        char pre[300];
        snprintf(pre, sizeof pre, "%s: signature '%s': ", m->dir, e->key);
        tfc_pb_status_prefix(st, pre);
    }
    tfc_free(feeds);
    tfc_free(outs);
    return ok && s->fn;
}

tfc_saved_model *tfc_saved_model_load(tfc_ctx *ctx, const char *export_dir, const char *const *tags, int n_tags,
                                      tfc_status *st) {
    tfc_saved_model *m = tfc_calloc(1, sizeof *m);
    if (!m || !(m->dir = tfc_strdup(export_dir))) {
        tfc_free(m);
        return tfc_status_oom(st, "SavedModel", sizeof *m), NULL;
    }
    m->ctx = ctx;
    if (!(m->pb = tfc_sm_read(export_dir, st)) || !(m->mg = tfc_sm_find_meta_graph(m->pb, export_dir, tags, n_tags, st)))
        goto fail;
    /* the graph: its GraphDef is detached from the MetaGraphDef and validated on its own */
    Tensorflow__GraphDef *g = m->mg->graph_def;
    m->mg->graph_def = NULL;
    tfc_graphdef_opts gopts = {.allow_unknown_ops = true};
    if (!(m->gd = tfc_gd_adopt(g, &gopts, st))) {
        char pre[4200];
        snprintf(pre, sizeof pre, "%s/saved_model.pb: graph_def: ", export_dir);
        tfc_pb_status_prefix(st, pre);
        goto fail;
    }
    tfc_graphdef *gd = m->gd;
    /* the variables: one per VarHandleOp */
    for (size_t i = 0; i < gd->top.n_nodes; i++) m->n_vars += tfc_sm_is_variable_op(gd->top.nodes[i]->op);
    m->vars = tfc_calloc((size_t)m->n_vars + 1, sizeof *m->vars);
    m->var_nodes = tfc_calloc((size_t)m->n_vars + 1, sizeof *m->var_nodes);
    if (!m->vars || !m->var_nodes) {
        tfc_status_oom(st, "SavedModel variables", (size_t)m->n_vars * 16);
        goto fail;
    }
    for (size_t i = 0, v = 0; i < gd->top.n_nodes; i++)
        if (tfc_sm_is_variable_op(gd->top.nodes[i]->op) && !(m->var_nodes[v++] = tfc_strdup(gd->top.nodes[i]->name))) {
            tfc_status_oom(st, "SavedModel variables", 64);
            goto fail;
        }
    const int id = atomic_fetch_add(&model_ids, 1);
    if (!tfc_sm_restore_variables(m, st) || !tfc_sm_bind_resources(m, id, st) || !tfc_sm_run_init_op(m, id, st))
        goto fail;
    /* the signatures, sorted by key */
    m->sigs = tfc_calloc(m->mg->n_signature_def + 1, sizeof *m->sigs);
    if (!m->sigs) {
        tfc_status_oom(st, "SavedModel signatures", m->mg->n_signature_def * sizeof *m->sigs);
        goto fail;
    }
    tfc_sm_sort_tensor_infos((Tensorflow__SignatureDef__InputsEntry **)m->mg->signature_def, m->mg->n_signature_def);
    for (size_t i = 0; i < m->mg->n_signature_def; i++) {
        if (!strcmp(m->mg->signature_def[i]->key, INIT_OP_KEY)) continue;
        /* a signature tfc cannot run (an op without a kernel) keeps its error for its calls; the others load */
        tfc_saved_model_signature *s = &m->sigs[m->n_sigs++];
        if (!load_signature(m, id, m->mg->signature_def[i], s, &s->error)) {
            if (s->error.code == TFC_RESOURCE_EXHAUSTED || !s->key) {
                *st = s->error;
                goto fail;
            }
            if (s->fn) s->fn = NULL;
        }
    }
    tfc_status_clear(st);
    return m;
fail:
    tfc_saved_model_free(m);
    return NULL;
}

int tfc_saved_model_num_signatures(const tfc_saved_model *m) { return m ? m->n_sigs : 0; }

tfc_saved_model_signature *tfc_saved_model_signature_at(tfc_saved_model *m, int i) {
    return m && i >= 0 && i < m->n_sigs ? &m->sigs[i] : NULL;
}

tfc_saved_model_signature *tfc_saved_model_signature_find(tfc_saved_model *m, const char *key) {
    for (int i = 0; m && key && i < m->n_sigs; i++)
        if (!strcmp(m->sigs[i].key, key)) return &m->sigs[i];
    return NULL;
}

const char *tfc_saved_model_signature_key(const tfc_saved_model_signature *s) { return s ? s->key : NULL; }
const char *tfc_saved_model_signature_method(const tfc_saved_model_signature *s) {
    return s && s->def->method_name ? s->def->method_name : "";
}
int tfc_saved_model_signature_num_inputs(const tfc_saved_model_signature *s) { return s ? s->n_in : 0; }
int tfc_saved_model_signature_num_outputs(const tfc_saved_model_signature *s) { return s ? s->n_out : 0; }
const tfc_saved_model_tensor_info *tfc_saved_model_signature_input(const tfc_saved_model_signature *s, int i) {
    return s && i >= 0 && i < s->n_in ? &s->in[i] : NULL;
}
const tfc_saved_model_tensor_info *tfc_saved_model_signature_output(const tfc_saved_model_signature *s, int i) {
    return s && i >= 0 && i < s->n_out ? &s->out[i] : NULL;
}
int tfc_saved_model_num_variables(const tfc_saved_model *m) { return m ? m->n_vars : 0; }
tfc_variable *tfc_saved_model_variable(const tfc_saved_model *m, int i) {
    return m && i >= 0 && i < m->n_vars ? m->vars[i] : NULL;
}

bool tfc_saved_model_signature_call(tfc_saved_model_signature *s, tfc_tensor *const *inputs, int n_inputs,
                                    tfc_tensor **outputs, int max_outputs, tfc_status *st) {
    if (!s || n_inputs != s->n_in || max_outputs < s->n_out || (n_inputs && !inputs) || !outputs)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "signature '%s' takes %d inputs and gives %d outputs (called "
                              "with %d inputs, room for %d outputs)", s ? s->key : "?", s ? s->n_in : 0,
                              s ? s->n_out : 0, n_inputs, max_outputs);
    tfc_saved_model *m = NULL;
    for (int i = 0; i < n_inputs; i++) {
        const tfc_saved_model_tensor_info *ti = &s->in[i];
        const tfc_tensor *x = inputs[i];
        char a[TFC_SHAPE_STR], b[TFC_SHAPE_STR];
        if (!x) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "signature '%s': input '%s' is NULL", s->key, ti->key);
        bool fits = x->dtype == ti->dtype && (ti->shape.rank < 0 || ti->shape.rank == x->shape.rank);
        for (int d = 0; fits && ti->shape.rank >= 0 && d < ti->shape.rank; d++)
            fits = ti->shape.dims[d] < 0 || ti->shape.dims[d] == x->shape.dims[d];
        if (!fits)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "signature '%s': input '%s' expects %s %s, got %s %s", s->key,
                                  ti->key, tfc_dtype_name(ti->dtype), tfc_shape_str(&ti->shape, a, sizeof a),
                                  tfc_dtype_name(x->dtype), tfc_shape_str(&x->shape, b, sizeof b));
    }
    /* the model owning s: signatures are stored in their model's array */
    m = s->model;
    if (s->error.code != TFC_OK) {
        *st = s->error;
        return false;
    }
    if (!m || !s->fn) return tfc_status_set(st, TFC_FAILED_PRECONDITION, "signature '%s' is not loaded", s->key);
    const int n = s->fn->n_args;
    tfc_tensor **in = tfc_calloc((size_t)n + 1, sizeof *in);
    if (!in) return tfc_status_oom(st, "signature call", (size_t)n * sizeof *in);
    for (int i = 0; i < n_inputs; i++) in[i] = inputs[i];
    for (int v = 0, k = n_inputs; v < m->n_fixed && k < n; v++) in[k++] = m->fixed_values[v];
    for (int o = 0; o < s->n_out; o++) outputs[o] = NULL;
    tfc_exec *x = tfc_exec_get(m->ctx, s->fn, st);
    bool ok = x && tfc_exec_run(m->ctx, x, in, n, outputs, st);
    tfc_free(in);
    if (!ok) {
        char pre[300];
        snprintf(pre, sizeof pre, "signature '%s': ", s->key);
        tfc_pb_status_prefix(st, pre);
    }
    return ok;
}

/* tensorflow.serving.SignatureDefMap (proto/get_model_metadata.proto) over the MetaGraphDef's own entries. */
void *tfc_saved_model_signature_def_map(const tfc_saved_model *m, size_t *len, tfc_status *st) {
    const size_t n = m ? m->mg->n_signature_def : 0;
    Tensorflow__Serving__SignatureDefMap map = TENSORFLOW__SERVING__SIGNATURE_DEF_MAP__INIT;
    Tensorflow__Serving__SignatureDefMap__SignatureDefEntry *ents = tfc_calloc(n + 1, sizeof *ents);
    Tensorflow__Serving__SignatureDefMap__SignatureDefEntry **ptrs = tfc_calloc(n + 1, sizeof *ptrs);
    uint8_t *buf = NULL;
    *len = 0;
    if (ents && ptrs) {
        for (size_t i = 0; i < n; i++) {
            tensorflow__serving__signature_def_map__signature_def_entry__init(&ents[i]);
            ents[i].key = m->mg->signature_def[i]->key;
            ents[i].value = m->mg->signature_def[i]->value;
            ptrs[i] = &ents[i];
        }
        map.n_signature_def = n, map.signature_def = ptrs;
        *len = tensorflow__serving__signature_def_map__get_packed_size(&map);
        if ((buf = tfc_malloc(*len + 1))) tensorflow__serving__signature_def_map__pack(&map, buf);
    }
    tfc_free(ents);
    tfc_free(ptrs);
    if (!buf) {
        tfc_status_oom(st, "SignatureDefMap", *len);
        *len = 0;
        return NULL;
    }
    tfc_status_clear(st);
    return buf;
}
