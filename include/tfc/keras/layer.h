/* tfc — Keras layers: the base layer, symbolic Keras tensors (Functional API), initializers,
 * regularizers and activations (tf.keras.layers.Layer, tf.keras.Input, tf.keras.initializers,
 * tf.keras.regularizers, tf.keras.activations).
 *
 * Construction: every built-in layer has a constructor macro taking Keras's argument names as designated
 * initialisers, zero meaning "Keras default" (booleans whose default is true use tfc_flag: TFC_NO turns them
 * off). Constructors never fail except out of memory (NULL); errors such as an unknown activation name or
 * incompatible shapes surface when the layer is built or called, with a status naming the layer.
 *
 * Ownership: a new layer is "floating": the first model or container that takes it (tfc_sequential,
 * tfc_model_new, tfc_model_track) owns it. A layer never given to a model must be released with
 * tfc_layer_unref. Keras tensors (tfc_ktensor) belong to the layer call that produced them and live as long
 * as that layer. */
#ifndef TFC_KERAS_LAYER_H
#define TFC_KERAS_LAYER_H

#include "tfc/eager.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tfc_layer tfc_layer;
typedef struct tfc_ktensor tfc_ktensor;

/* tfc_flag (Keras booleans whose default is true) is declared in tfc/platform.h. */

/* ---- initializers (tf.keras.initializers) --------------------------------------------------------------
 * name: Keras identifier: "glorot_uniform", "glorot_normal", "he_uniform", "he_normal", "lecun_uniform",
 * "lecun_normal", "zeros", "ones", "constant", "random_normal", "random_uniform", "truncated_normal",
 * "orthogonal", "identity", "variance_scaling". Parameters use Keras's names; zero/NaN-free defaults apply
 * as Keras (random_normal stddev 0.05, random_uniform [-0.05, 0.05], orthogonal gain 1, ...). */
typedef struct tfc_initializer {
    const char *name;
    double value;            /* constant */
    double mean, stddev;     /* random_normal, truncated_normal (stddev 0 = 0.05) */
    double minval, maxval;   /* random_uniform (both 0 = [-0.05, 0.05]) */
    double gain;             /* orthogonal, identity (0 = 1) */
    double scale;            /* variance_scaling (0 = 1) */
    const char *mode;        /* variance_scaling: "fan_in" (default), "fan_out", "fan_avg" */
    const char *distribution;/* variance_scaling: "truncated_normal" (default), "untruncated_normal", "uniform" */
    int64_t seed;
    bool has_seed;
} tfc_initializer;
#define tfc_initializer_of(...) (&(const tfc_initializer){__VA_ARGS__})

/* Fills a new tensor of `shape` and dtype with the initializer's values (Keras's fan computation for
 * kernels of rank 2..5). The result is owned like an op's output: by the current scope, else by the caller.
 * INVALID_ARGUMENT for an unknown name or bad parameters (naming them). */
TFC_API tfc_tensor *tfc_initializer_sample(tfc_ctx *ctx, const tfc_initializer *init, const tfc_shape *shape,
                                           tfc_dtype dtype, tfc_status *st);

/* ---- regularizers (tf.keras.regularizers.l1 / l2 / l1_l2): loss = l1 * sum(|w|) + l2 * sum(w^2) ---- */
typedef struct tfc_regularizer {
    double l1, l2;
    bool l1_l2; /* Keras's L1L2 class, whatever the values (configs keep the class: L1L2 with l2 = 0 stays L1L2) */
} tfc_regularizer;
#define tfc_l1(v) (&(const tfc_regularizer){.l1 = (v)})
#define tfc_l2(v) (&(const tfc_regularizer){.l2 = (v)})
#define tfc_l1_l2(a, b) (&(const tfc_regularizer){.l1 = (a), .l2 = (b), .l1_l2 = true})

/* ---- activations (tf.keras.activations.get) ----
 * Applies the named activation: "linear" (or NULL/""), "relu", "sigmoid", "tanh", "softmax" (last axis),
 * "elu", "selu", "gelu" (exact erf form, approximate=False as Keras 2.4), "swish" ("silu"), "softplus",
 * "softsign", "relu6", "exponential", "hard_sigmoid". INVALID_ARGUMENT "Unknown activation function: x". */
TFC_API tfc_tensor *tfc_activation_apply(tfc_ctx *ctx, const char *name, tfc_tensor *x, tfc_status *st);
TFC_API bool tfc_activation_valid(const char *name);

/* ---- the layer base (tf.keras.layers.Layer) ------------------------------------------------------------ */

/* A layer class: Keras's class name and its behaviour. Subclassed layers and models supply their own. */
typedef struct tfc_layer_class {
    const char *class_name;  /* "Dense" */
    size_t size;             /* sizeof the concrete struct, which embeds tfc_layer first */
    /* Creates the weights for inputs of the given shapes (dim 0 is the batch, -1 when unknown). */
    bool (*build)(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st);
    /* Output shapes for input shapes (batch -1 allowed); validates compatibility. NULL: run call symbolically
     * is not available, so layers must provide it. */
    bool (*compute_output_shape)(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out,
                                 tfc_status *st);
    /* The forward computation on eager tensors; outputs are new tensors (scope-owned or caller-owned). */
    bool (*call)(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                 bool training, tfc_status *st);
    /* Adds the class's own config keys to cfg (a cJSON object, passed as void* so this header needs no cJSON).
     * cfg already holds the base keys (name, trainable, dtype, batch_input_shape); a class may replace them
     * (InputLayer's config has no "trainable"). */
    bool (*get_config)(const tfc_layer *l, void *cfg, tfc_status *st);
    /* Releases what the concrete struct owns beyond the base (may be NULL). */
    void (*destroy)(tfc_layer *l);
} tfc_layer_class;

/* Allocates a zeroed layer of cls->size bytes with the base initialised (name: `name`, or Keras's
 * snake_case class name with a per-class counter: "dense", "dense_1", ...). Floating ownership as above. */
TFC_API tfc_layer *tfc_layer_alloc(const tfc_layer_class *cls, const char *name);
TFC_API tfc_layer *tfc_layer_ref(tfc_layer *l);
TFC_API void tfc_layer_unref(tfc_layer *l); /* NULL-safe */
/* tf.keras.backend.clear_session() for names: automatic names start again at "dense", "input_1", ... */
TFC_API void tfc_keras_clear_session(void);

/* layer.name (borrowed), the Keras class name ("Dense"), layer.built and layer.trainable. l must
 * not be NULL. */
TFC_API const char *tfc_layer_name(const tfc_layer *l);
TFC_API const char *tfc_layer_class_name(const tfc_layer *l);
TFC_API bool tfc_layer_built(const tfc_layer *l);
TFC_API bool tfc_layer_trainable(const tfc_layer *l);
/* Freezes or unfreezes the layer and, for models, every sublayer (layer.trainable = ...). */
TFC_API void tfc_layer_set_trainable(tfc_layer *l, bool trainable);

/* Adds a weight (layer.add_weight): a variable named "<layer>/<name>:0" initialised by init (NULL = zeros),
 * with an optional regularizer whose loss is added to the model loss. trainable weights come first in
 * tfc_layer_weights. Returns the borrowed variable (owned by the layer) or NULL. */
TFC_API tfc_variable *tfc_layer_add_weight(tfc_layer *l, tfc_ctx *ctx, const char *name, const tfc_shape *shape,
                                           tfc_dtype dtype, const tfc_initializer *init,
                                           const tfc_regularizer *reg, bool trainable, tfc_status *st);
/* Weights in Keras order (trainable first, then non-trainable, creation order; recursing into sublayers).
 * Writes up to max borrowed pointers and returns the total count. */
TFC_API int tfc_layer_weights(const tfc_layer *l, tfc_variable **out, int max);
TFC_API int tfc_layer_trainable_weights(const tfc_layer *l, tfc_variable **out, int max);
TFC_API int tfc_layer_non_trainable_weights(const tfc_layer *l, tfc_variable **out, int max);
TFC_API int64_t tfc_layer_count_params(const tfc_layer *l);
/* get_weights / set_weights: copies of the values, in tfc_layer_weights order. set_weights checks count,
 * dtypes and shapes (INVALID_ARGUMENT naming the layer, the weight and both shapes). */
TFC_API int tfc_layer_get_weights(const tfc_layer *l, tfc_tensor **out, int max, tfc_status *st);
TFC_API bool tfc_layer_set_weights(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *w, int n, tfc_status *st);

/* layer.build(input_shape): validates the shapes (as compute_output_shape) and creates the weights in ctx.
 * Shapes include the batch dim (-1 when unknown). No-op for a built layer whose input spec accepts them. */
TFC_API bool tfc_layer_build(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st);
/* Calls the layer on eager tensors (layer(x, training=...)): builds it on first use from the input shapes,
 * checks the input shapes against the built ones (INVALID_ARGUMENT naming the layer, the received shape and the
 * built one), casts floating inputs to the layer's dtype, then runs call. Outputs are new tensors owned by the
 * current scope, or by the caller without one; the call's temporaries are released. The activity-regularizer
 * loss of the call is kept for tfc_layer_regularization_loss. */
TFC_API bool tfc_layer_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out,
                            int n_out, bool training, tfc_status *st);
/* Single-input, single-output shorthand. */
TFC_API tfc_tensor *tfc_layer_call1(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *x, bool training, tfc_status *st);
/* Sum of the regularization losses of the layer's (and sublayers') weights, plus the activity-regularizer
 * losses of their latest calls (regularizer(output) / batch size, as Keras's layer.losses), as a scalar
 * float32 tensor computed with ops (so it is differentiable; scope- or caller-owned); NULL with st OK when the
 * layer has no regularizers. */
TFC_API tfc_tensor *tfc_layer_regularization_loss(tfc_layer *l, tfc_ctx *ctx, tfc_status *st);
/* Keras get_config as a JSON object string {"name": ..., "trainable": ..., "dtype": ..., ...}; caller frees
 * with tfc_free. NULL on error. */
TFC_API char *tfc_layer_get_config(const tfc_layer *l, tfc_status *st);
/* Creates a layer from Keras's class name and config JSON (tf.keras.layers.deserialize); keys left out take
 * Keras's defaults, so "{\"units\": 4}" works. INVALID_ARGUMENT for unknown classes or bad values. */
TFC_API tfc_layer *tfc_layer_from_config(const char *class_name, const char *config_json, tfc_status *st);

/* ---- symbolic Keras tensors (Functional API) -------------------------------------------------------------- */
typedef struct tfc_input_opts {
    int64_t shape[TFC_MAX_RANK]; /* without the batch dim; -1 for unknown dims */
    int rank;                    /* 0: count the leading non-zero entries of shape */
    int64_t batch_size;          /* 0: unknown */
    tfc_dtype dtype;             /* 0: float32 */
    const char *name;
} tfc_input_opts;
/* tf.keras.Input: a symbolic tensor produced by a new InputLayer (floating, owned by the model built on it). */
TFC_API tfc_ktensor *tfc_input_new(const tfc_input_opts *opts);
#define tfc_input(...) tfc_input_new(&(tfc_input_opts){__VA_ARGS__})
/* Calls a layer on symbolic tensors (recording a node): returns the layer's first output, or NULL with st set
 * (shape incompatibilities name the layer and the shapes). The layer's weights are created when a context is
 * known: at once for a layer built before, otherwise by the model constructed on these tensors
 * (tfc_model_new), as Keras tensors carry no context. */
TFC_API tfc_ktensor *tfc_layer_apply(tfc_layer *l, tfc_ktensor *const *in, int n_in, tfc_status *st);
#define tfc_apply(layer, st, ...) \
    tfc_layer_apply((layer), (tfc_ktensor *[]){__VA_ARGS__}, (int)(sizeof((tfc_ktensor *[]){__VA_ARGS__}) / sizeof(tfc_ktensor *)), (st))
/* All outputs of the node that produced k (multi-output layers): writes up to max, returns the count. */
TFC_API int tfc_ktensor_siblings(const tfc_ktensor *k, tfc_ktensor **out, int max);
TFC_API const tfc_shape *tfc_ktensor_shape(const tfc_ktensor *k); /* dim 0 = batch (-1 unknown) */
TFC_API tfc_dtype tfc_ktensor_dtype(const tfc_ktensor *k);
/* The layer whose call produced k (borrowed; for tfc_input tensors, the floating InputLayer, which a caller
 * that builds no model releases with tfc_layer_unref). */
TFC_API tfc_layer *tfc_ktensor_layer(const tfc_ktensor *k);

#ifdef __cplusplus
}
#endif
#endif
