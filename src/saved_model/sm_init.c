/* What a SavedModel's graph holds besides its signatures: resources and assets, and the init op TensorFlow's loader
 * runs once after restoring the variables. Every part of the graph tfc runs is fed the same resource handles and
 * asset paths, so a table the init op fills is the table the signatures look up:
 *   - resource nodes (variables, lookup tables): a restored variable's handle, else the handle its node makes
 *     when run once at load (an uninitialized variable, an empty table);
 *   - assets: asset_file_def's tensors (TensorFlow 1's asset collection, TensorFlow 2's asset path constants)
 *     hold the path the model was exported from; they are fed <dir>/assets/<filename> instead;
 *   - the init op: the `__saved_model_init_op` signature (TensorFlow 2, and TensorFlow 1's Builder since 1.15),
 *     else the `saved_model_main_op` / `legacy_init_op` collections. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "graph/exec.h"
#include "graph/trace.h"
#include "proto/graphdef_internal.h"
#include "proto/proto_internal.h"
#include "saved_model/sm_internal.h"
#include "tfc/tstring.h"

#define INIT_OP_KEY "__saved_model_init_op"

bool tfc_sm_is_variable_op(const char *op) {
    return !strcmp(op, "VarHandleOp") || !strcmp(op, "VariableV2") || !strcmp(op, "Variable");
}

static bool is_table_op(const char *op) { return !strcmp(op, "HashTableV2") || !strcmp(op, "MutableHashTableV2"); }

static bool add_fixed(tfc_saved_model *m, const char *tensor, tfc_dtype dt, tfc_tensor *value, tfc_status *st) {
    const int i = m->n_fixed;
    if (!(m->fixed_names[i] = tfc_strdup(tensor))) return tfc_status_oom(st, "SavedModel resources", 64);
    m->fixed[i] = (tfc_graphdef_feed){m->fixed_names[i], dt, NULL};
    m->fixed_values[i] = value;
    m->n_fixed++;
    return true;
}

/* Runs the nodes of `tensors` once (nothing fed) and returns their outputs. */
static bool run_once(tfc_saved_model *m, int id, const char *what, const char *const *tensors, int n,
                     tfc_tensor **out, tfc_status *st) {
    char name[200];
    snprintf(name, sizeof name, "__saved_model_%d_%s", id, what);
    tfc_flib *lib = tfc_ctx_flib(m->ctx, st);
    tfc_gfunc *fn = lib ? tfc_graphdef_import_subgraph(m->gd, lib, name, m->fixed, m->n_fixed, tensors, n, st) : NULL;
    tfc_exec *x = fn ? tfc_exec_get(m->ctx, fn, st) : NULL;
    tfc_tensor *none[1];
    bool ok = x && tfc_exec_run(m->ctx, x, m->fixed_values, m->n_fixed, out ? out : none, st);
    if (fn) tfc_flib_remove(lib, fn);
    return ok;
}

static const Tensorflow__CollectionDef *collection(const Tensorflow__MetaGraphDef *mg, const char *key) {
    for (size_t c = 0; c < mg->n_collection_def; c++)
        if (!strcmp(mg->collection_def[c]->key, key)) return mg->collection_def[c]->value;
    return NULL;
}

/* Feeds the asset path tensor of af with <dir>/assets/<filename> (the file must be there). */
static bool add_asset(tfc_saved_model *m, const Tensorflow__AssetFileDef *af, const char *field, size_t a,
                      tfc_status *st) {
    const char *f = af->filename;
    if (!af->tensor_info || af->tensor_info->encoding_case != TENSORFLOW__TENSOR_INFO__ENCODING_NAME || !f || !f[0] ||
        strchr(f, '/') || !strcmp(f, "..") || !strcmp(f, "."))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%.100s/saved_model.pb: %s[%zu]: no tensor name, or '%.40s' is "
                              "not a file name inside assets/", m->dir, field, a, f ? f : "");
    for (int i = 0; i < m->n_fixed; i++)
        if (!strcmp(m->fixed_names[i], af->tensor_info->name)) return true; /* listed twice */
    char path[4200];
    snprintf(path, sizeof path, "%s/assets/%s", m->dir, f);
    struct stat sb;
    if (stat(path, &sb) != 0)
        return tfc_status_set(st, TFC_NOT_FOUND, "%.160s: asset file missing (%s[%zu])", path, field, a);
    tfc_tensor *t = tfc_tensor_new(TFC_STRING, NULL, 0, st);
    bool ok = t && tfc_tstring_copy((tfc_tstring *)tfc_tensor_data(t), path, strlen(path), st) &&
              add_fixed(m, af->tensor_info->name, TFC_STRING, t, st);
    if (!ok) tfc_tensor_unref(t);
    return ok;
}

bool tfc_sm_bind_resources(tfc_saved_model *m, int id, tfc_status *st) {
    const tfc_graphdef *gd = m->gd;
    size_t n_res = 0;
    for (size_t i = 0; i < gd->top.n_nodes; i++)
        n_res += tfc_sm_is_variable_op(gd->top.nodes[i]->op) || is_table_op(gd->top.nodes[i]->op);
    const Tensorflow__CollectionDef *ac = collection(m->mg, "saved_model_assets");
    const size_t cap = n_res + m->mg->n_asset_file_def +
                       (ac && ac->kind_case == TENSORFLOW__COLLECTION_DEF__KIND_ANY_LIST ? ac->any_list->n_value : 0);
    m->fixed = tfc_calloc(cap + 1, sizeof *m->fixed);
    m->fixed_names = tfc_calloc(cap + 1, sizeof *m->fixed_names);
    m->fixed_values = tfc_calloc(cap + 1, sizeof *m->fixed_values);
    const char **make = tfc_calloc(n_res + 1, sizeof *make);
    tfc_tensor **made = tfc_calloc(n_res + 1, sizeof *made);
    char *names = tfc_malloc(n_res * 1040 + 1);
    bool ok = m->fixed && m->fixed_names && m->fixed_values && make && made && names;
    if (!ok) tfc_status_oom(st, "SavedModel resources", cap * 64);
    /* the resources: restored variables first, then the others made by their nodes */
    int n_make = 0;
    for (size_t i = 0, v = 0; ok && i < gd->top.n_nodes; i++) {
        const char *op = gd->top.nodes[i]->op;
        const bool var = tfc_sm_is_variable_op(op);
        if (!var && !is_table_op(op)) continue;
        char *nm = names + (size_t)n_make * 1040;
        snprintf(nm, 1040, "%.1000s:0", gd->top.nodes[i]->name);
        tfc_variable *restored = var ? m->vars[v++] : NULL;
        if (restored) ok = add_fixed(m, nm, TFC_RESOURCE, tfc_tensor_ref(tfc_variable_handle(restored)), st);
        else make[n_make++] = nm;
    }
    ok = ok && (!n_make || run_once(m, id, "resources", make, n_make, made, st));
    for (int k = 0; ok && k < n_make; k++) {
        ok = add_fixed(m, make[k], TFC_RESOURCE, made[k], st);
        made[k] = NULL;
    }
    /* the assets: asset_file_def (TensorFlow 2, TensorFlow 1's Builder before 2.x) and the saved_model_assets
     * collection (TensorFlow 1's Builder of TensorFlow 2.x: AssetFileDefs packed in Any) */
    for (size_t a = 0; ok && a < m->mg->n_asset_file_def; a++) ok = add_asset(m, m->mg->asset_file_def[a], "asset_file_def", a, st);
    const Tensorflow__CollectionDef *cd = collection(m->mg, "saved_model_assets");
    for (size_t a = 0; ok && cd && cd->kind_case == TENSORFLOW__COLLECTION_DEF__KIND_ANY_LIST && a < cd->any_list->n_value; a++) {
        const Google__Protobuf__Any *any = cd->any_list->value[a];
        char what[200];
        snprintf(what, sizeof what, "%.100s/saved_model.pb: collection_def['saved_model_assets'][%zu]", m->dir, a);
        Tensorflow__AssetFileDef *af = (Tensorflow__AssetFileDef *)tfc_pb_unpack(
            &tensorflow__asset_file_def__descriptor, any->value.data, any->value.len, INT32_MAX, what, st);
        ok = af && add_asset(m, af, "collection_def['saved_model_assets']", a, st);
        tfc_pb_free(af);
    }
    for (size_t k = 0; k < n_res; k++) tfc_tensor_unref(made ? made[k] : NULL);
    tfc_free(make);
    tfc_free(made);
    tfc_free(names);
    return ok;
}

/* The init op's node name ("" when there is none). */
static void init_op_name(const Tensorflow__MetaGraphDef *mg, char *out, size_t n) {
    out[0] = 0;
    const Tensorflow__SignatureDef *sd = tfc_sm_signature_def(mg, INIT_OP_KEY);
    const char *name = NULL;
    if (sd && sd->n_outputs && sd->outputs[0]->value &&
        sd->outputs[0]->value->encoding_case == TENSORFLOW__TENSOR_INFO__ENCODING_NAME)
        name = sd->outputs[0]->value->name;
    static const char *const keys[] = {"saved_model_main_op", "legacy_init_op"};
    for (size_t k = 0; !name && k < 2; k++) {
        const Tensorflow__CollectionDef *cd = collection(mg, keys[k]);
        if (cd && cd->kind_case == TENSORFLOW__COLLECTION_DEF__KIND_NODE_LIST && cd->node_list->n_value)
            name = cd->node_list->value[0];
    }
    if (name) snprintf(out, n, "^%.*s", (int)strcspn(name + (name[0] == '^'), ":"), name + (name[0] == '^'));
}

bool tfc_sm_run_init_op(tfc_saved_model *m, int id, tfc_status *st) {
    char target[1100];
    init_op_name(m->mg, target, sizeof target);
    if (!target[0]) return true;
    const char *const targets[] = {target};
    if (run_once(m, id, "init_op", targets, 1, NULL, st)) return true;
    char msg[sizeof st->msg];
    memcpy(msg, st->msg, sizeof msg);
    return tfc_status_set(st, st->code, "%.100s: init op '%.60s': %s", m->dir, target + 1, msg);
}
