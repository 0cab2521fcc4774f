/* tf.keras.layers.Subtract (exactly 2 inputs), Maximum, Minimum and Average: elementwise merges broadcasting as
 * Keras's _Merge (merge.h); Average divides the sum by the input count as Keras's `output / len(inputs)`. */
#include "keras/layers/merge.h"
#include "tfc/keras/merge_layers.h"

static bool sub_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out, tfc_status *st) {
    if (n_in != 2) {
        char buf[TFC_SHAPE_STR * 2];
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "A `Subtract` layer should be called on exactly 2 inputs. Received: input_shape=%s "
                              "(layer \"%s\")", tfc_merge_shapes_str(in, n_in, buf, sizeof buf), l->name);
    }
    return tfc_merge_elementwise_shape(l, in, n_in, out, n_out, st);
}

static bool sub_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                     bool training, tfc_status *st) {
    tfc_shape s[2];
    for (int i = 0; i < n_in && i < 2; i++) s[i] = *tfc_tensor_shape(in[i]);
    tfc_shape o;
    return sub_shape(l, s, n_in, &o, &(int){0}, st) && tfc_merge_elementwise_call(l, ctx, "Sub", in, n_in, out, st);
}

static bool max_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                     bool training, tfc_status *st) {
    return tfc_merge_elementwise_call(l, ctx, "Maximum", in, n_in, out, st);
}

static bool min_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                     bool training, tfc_status *st) {
    return tfc_merge_elementwise_call(l, ctx, "Minimum", in, n_in, out, st);
}

static bool avg_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                     bool training, tfc_status *st) {
    tfc_tensor *sum;
    if (!tfc_merge_elementwise_call(l, ctx, "AddV2", in, n_in, &sum, st)) return false;
    tfc_tensor *n = tfc_scalar_f32((float)n_in, st);
    tfc_attr dt = TFC_ATTR_T("DstT", tfc_tensor_dtype(sum));
    tfc_tensor *nc = n ? tfc_emit(ctx, "Cast", &n, 1, &dt, 1, st) : NULL;
    tfc_tensor_unref(n);
    return (out[0] = nc ? tfc_emit(ctx, "RealDiv", (tfc_tensor *[]){sum, nc}, 2, NULL, 0, st) : NULL) != NULL;
}

#define MERGE_CLASS(var, name, shape_fn, call_fn)                                                                  \
    static const tfc_layer_class var = {.class_name = name, .size = sizeof(tfc_merge), .build = tfc_merge_build,  \
                                        .compute_output_shape = shape_fn, .call = call_fn}
MERGE_CLASS(subtract_class, "Subtract", sub_shape, sub_call);
MERGE_CLASS(maximum_class, "Maximum", tfc_merge_elementwise_shape, max_call);
MERGE_CLASS(minimum_class, "Minimum", tfc_merge_elementwise_shape, min_call);
MERGE_CLASS(average_class, "Average", tfc_merge_elementwise_shape, avg_call);

static tfc_layer *merge_new(const tfc_layer_class *cls, const tfc_merge_opts *o) {
    tfc_merge *m = TFC_LAYER_NEW(tfc_merge, cls, o);
    if (!m) return NULL;
    m->base.keeps_input_dtype = true;
    return &m->base;
}

tfc_layer *tfc_layers_subtract_new(const tfc_merge_opts *o) { return merge_new(&subtract_class, o); }
tfc_layer *tfc_layers_maximum_new(const tfc_merge_opts *o) { return merge_new(&maximum_class, o); }
tfc_layer *tfc_layers_minimum_new(const tfc_merge_opts *o) { return merge_new(&minimum_class, o); }
tfc_layer *tfc_layers_average_new(const tfc_merge_opts *o) { return merge_new(&average_class, o); }

static tfc_layer *from_config(const cJSON *cfg, tfc_layer *(*ctor)(const tfc_merge_opts *), const char *cls,
                              tfc_status *st) {
    tfc_merge_opts o;
    if (!tfc_merge_opts_from_config(cfg, &o, st)) return NULL;
    tfc_layer *l = ctor(&o);
    if (!l) tfc_status_oom(st, cls, sizeof(tfc_merge));
    return l;
}

tfc_layer *tfc_keras_from_config_subtract(const cJSON *cfg, tfc_status *st) {
    return from_config(cfg, tfc_layers_subtract_new, "Subtract", st);
}
tfc_layer *tfc_keras_from_config_maximum(const cJSON *cfg, tfc_status *st) {
    return from_config(cfg, tfc_layers_maximum_new, "Maximum", st);
}
tfc_layer *tfc_keras_from_config_minimum(const cJSON *cfg, tfc_status *st) {
    return from_config(cfg, tfc_layers_minimum_new, "Minimum", st);
}
tfc_layer *tfc_keras_from_config_average(const cJSON *cfg, tfc_status *st) {
    return from_config(cfg, tfc_layers_average_new, "Average", st);
}
