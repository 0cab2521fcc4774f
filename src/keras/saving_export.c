/* model.export(dir): a Keras model as a SavedModel for serving (Keras's ExportArchive with the model's call as
 * the `serve` endpoint and `serving_default`). The model's forward pass in inference mode is traced as a graph function whose input
 * signature is the model's inputs with an unknown batch dim, and saved by tfc_saved_model_save: the captured
 * weights become the SavedModel's variables and the object graph's attributes.
 *
 * Keys, as tf_keras's and Keras 3's model.export write them: inputs by their Input layer's name ("conv2d_input",
 * "input_1", or the name given to Input), outputs "output_0", "output_1", ... in the model's output order.
 * TensorFlow flattens the signature's dicts by sorted key, so the traced function takes its inputs in sorted key
 * order (the trace puts them back in the model's order); output_0 .. output_7 are already sorted. */
#include <stdio.h>
#include <string.h>

#include "keras/model_internal.h"
#include "proto/proto_internal.h"
#include "tfc/keras/saving.h"
#include "tfc/saved_model.h"

typedef struct {
    tfc_model *m;
    int n_in, n_out;
    int order[TFC_KERAS_MAX_IO];  /* order[k]: the model input fed by the function's input k (sorted by key) */
    const char *keys[TFC_KERAS_MAX_IO];
} export_job;

static int serve(tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int max_out, void *user,
                 tfc_status *st) {
    (void)ctx;
    export_job *j = user;
    tfc_tensor *x[TFC_KERAS_MAX_IO];
    if (n_in != j->n_in || max_out < j->n_out)
        return tfc_status_set(st, TFC_INTERNAL, "model.export: %d inputs, room for %d outputs", n_in, max_out), -1;
    for (int k = 0; k < n_in; k++) x[j->order[k]] = in[k];
    return tfc_model_forward(j->m, x, n_in, out, j->n_out, false, st) ? j->n_out : -1;
}

/* tf_ops_only on l when it is a model and on every model nested in its layers (a Sequential inside a functional
 * model runs its own plan, so it decides its own fusions). */
static void set_tf_ops_only(tfc_layer *l, bool on) {
    if (l->is_model) TFC_IMPL((tfc_model *)l)->tf_ops_only = on;
    for (int i = 0; i < l->n_sublayers; i++) set_tf_ops_only(l->sublayers[i], on);
}

bool tfc_model_export(tfc_model *m, const char *export_dir, tfc_status *st) {
    if (!m || !export_dir || !export_dir[0])
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "model.export: needs a model and a directory");
    tfc_model_impl *impl = TFC_IMPL(m);
    if (impl->deferred.code != TFC_OK) return tfc_status_set(st, impl->deferred.code, "%s", impl->deferred.msg);
    if (m->n_inputs < 1 || !m->inputs)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "model.export: model \"%s\" has no known inputs (a Sequential "
                              "model must be built, e.g. with an Input or input_shape; subclassed models are not "
                              "exported)", m->base.name);
    export_job j = {.m = m, .n_in = m->n_inputs, .n_out = m->n_outputs};
    if (j.n_in > TFC_KERAS_MAX_IO || j.n_out < 1 || j.n_out > TFC_KERAS_MAX_IO)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "model.export: model \"%s\" has %d inputs and %d outputs "
                              "(1 to %d each)", m->base.name, j.n_in, j.n_out, TFC_KERAS_MAX_IO);
    const char *names[TFC_KERAS_MAX_IO];
    for (int i = 0; i < j.n_in; i++) {
        names[i] = tfc_ktensor_layer(m->inputs[i])->name;
        j.order[i] = i;
        for (int k = 0; k < i; k++)
            if (!strcmp(names[k], names[i]))
                return tfc_status_set(st, TFC_INVALID_ARGUMENT, "model.export: model \"%s\" has two inputs named '%s'",
                                      m->base.name, names[i]);
    }
    /* insertion sort of the input positions by name (at most TFC_KERAS_MAX_IO) */
    for (int i = 1; i < j.n_in; i++)
        for (int k = i; k > 0 && strcmp(names[j.order[k - 1]], names[j.order[k]]) > 0; k--) {
            int t = j.order[k];
            j.order[k] = j.order[k - 1], j.order[k - 1] = t;
        }
    tfc_tensor_spec specs[TFC_KERAS_MAX_IO];
    for (int k = 0; k < j.n_in; k++) {
        const tfc_ktensor *kt = m->inputs[j.order[k]];
        specs[k] = (tfc_tensor_spec){kt->dtype, kt->shape};
        if (specs[k].shape.rank > 0) specs[k].shape.dims[0] = -1; /* a servable takes any batch */
        j.keys[k] = names[j.order[k]];
    }
    char out_names[TFC_KERAS_MAX_IO][24];
    const char *out_keys[TFC_KERAS_MAX_IO];
    for (int o = 0; o < j.n_out; o++) {
        snprintf(out_names[o], sizeof out_names[o], "output_%d", o);
        out_keys[o] = out_names[o];
    }
    tfc_function_opts fo = {.name = "serve", .input_signature = specs, .n_input_signature = j.n_in,
                            .input_names = j.keys};
    tfc_function *f = tfc_function_new(m->ctx, serve, &j, &fo, st);
    set_tf_ops_only(&m->base, true);
    tfc_concrete_function *cf = f ? tfc_function_get_concrete_function(f, NULL, 0, st) : NULL;
    set_tf_ops_only(&m->base, false);
    /* the endpoint "serve" and serving_default, as Keras's ExportArchive writes them (so the call nodes get
     * TensorFlow's names: serving_default's outputs are "StatefulPartitionedCall_1:k") */
    tfc_saved_model_signature_spec sig[2] = {
        {.key = "serve", .function = cf, .input_keys = j.keys, .output_keys = out_keys},
        {.key = TFC_SAVED_MODEL_DEFAULT_SIGNATURE, .function = cf, .input_keys = j.keys, .output_keys = out_keys}};
    bool ok = cf && tfc_saved_model_save(m->ctx, export_dir, sig, 2, st);
    if (!ok && !strstr(st->msg, "model.export")) { /* say which call failed (the trace's errors name only ops) */
        char pre[256];
        snprintf(pre, sizeof pre, "model.export(%.200s): ", export_dir);
        tfc_pb_status_prefix(st, pre);
    }
    tfc_function_free(f);
    return ok;
}
