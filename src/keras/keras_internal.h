/* Internal: Keras object layouts shared by layers, models, training and saving. */
#ifndef TFC_KERAS_INTERNAL_H
#define TFC_KERAS_INTERNAL_H

#include <cjson/cJSON.h>
#include <stdatomic.h>

#include "tfc/keras.h"

typedef struct tfc_weight {
    tfc_variable *var;       /* owned */
    char *name;              /* "kernel" (the variable is named "<layer>/kernel:0") */
    tfc_regularizer reg;
    bool has_reg;
    bool trainable;
} tfc_weight;

/* An initializer as stored by a layer: the public struct plus owned copies of its strings (constructor
 * options are borrowed only during the constructor). */
typedef struct tfc_kinit {
    tfc_initializer init;    /* init.name / mode / distribution point into the buffers below */
    char name[32], mode[16], distribution[32];
} tfc_kinit;
/* Copies src (NULL: the initializer named dflt, e.g. "glorot_uniform") into dst. */
void tfc_kinit_set(tfc_kinit *dst, const tfc_initializer *src, const char *dflt);

/* Keras's InputSpec: what calls after the build must match. Set by a class's build (has_input_spec); when a
 * class sets none, the base requires the built rank and every known non-batch dim of the build shape. */
typedef struct tfc_input_spec {
    int ndim;                /* exact rank; -1 = any */
    int min_ndim;            /* 0 = no minimum */
    int n_axes;
    int axes[TFC_MAX_RANK];  /* negative: from the end (Keras's axes={-1: 3}) */
    int64_t values[TFC_MAX_RANK];
} tfc_input_spec;

#define TFC_KERAS_MAX_IO 8   /* inputs (and outputs) of one layer call */

/* One call of a layer on Keras tensors (Keras's Node). */
typedef struct tfc_knode {
    tfc_layer *layer;
    int n_in, n_out;
    tfc_ktensor **in;        /* borrowed: owned by the nodes that produced them */
    tfc_ktensor **out;       /* owned */
    int index;               /* position in layer->nodes */
} tfc_knode;

struct tfc_ktensor {
    tfc_knode *node;
    int index;               /* output index in node */
    tfc_shape shape;         /* dim 0 = batch (-1 unknown) */
    tfc_dtype dtype;
};

struct tfc_layer {
    const tfc_layer_class *cls;
    atomic_int refcount;
    bool floating;           /* not yet owned by a container */
    char *name;
    bool trainable, built;
    tfc_dtype dtype;         /* variable dtype (Keras's layer.dtype) */
    tfc_dtype compute_dtype; /* dtype of the computations and floating outputs (the policy's) */
    char policy[32];         /* the dtype policy's name: "mixed_float16", "float32", ... */
    /* input_shape= given to the constructor ([batch=-1, ...]); used by Sequential and summary */
    bool has_input_shape;
    tfc_shape input_shape;
    /* shapes the layer was built for (dim 0 batch, -1 unknown), checked on later calls */
    int n_build_shapes;
    tfc_shape build_shapes[TFC_KERAS_MAX_IO];
    bool has_input_spec;     /* set by build; otherwise derived from build_shapes */
    tfc_input_spec input_spec[TFC_KERAS_MAX_IO];
    tfc_weight *weights;
    int n_weights, cap_weights;
    tfc_layer **sublayers;   /* tracked (owned references) */
    int n_sublayers, cap_sublayers;
    tfc_knode **nodes;       /* inbound nodes (owned) */
    int n_nodes, cap_nodes;
    tfc_regularizer activity_reg;
    bool has_activity_reg;
    tfc_tensor *activity_loss; /* activity-regularization loss of the latest call (owned; NULL = none) */
    tfc_ctx *ctx;            /* context the weights live in (set at build) */
    /* Models list weights layer by layer (Keras's Model.weights: each layer's trainable then non-trainable,
     * then the model's own); plain layers list all trainable weights first. Set by model constructors. */
    bool is_model;
    bool no_autocast;        /* Keras's autocast=False: floating inputs keep their dtype (Embedding) */
    bool keeps_input_dtype;  /* non-floating inputs give outputs of their dtype (Reshape, merges, ...) */
};

typedef enum { TFC_MODEL_SEQUENTIAL, TFC_MODEL_FUNCTIONAL, TFC_MODEL_SUBCLASSED } tfc_model_kind;

struct tfc_model {
    tfc_layer base;          /* model.layers are base.sublayers (Sequential: in order, without InputLayer) */
    tfc_ctx *ctx;
    tfc_model_kind kind;
    /* Functional graph (Sequential models build one too once their input shape is known) */
    int n_inputs, n_outputs;
    tfc_ktensor **inputs, **outputs;
    int n_order;
    tfc_knode **order;       /* nodes in execution order */
    /* compile state */
    bool compiled;
    tfc_optimizer *optimizer;
    tfc_loss *loss;
    int n_metrics;
    tfc_metric *metrics[8];
    tfc_metric *loss_tracker;
    bool stop_training;
    tfc_flag run_eagerly;
};

/* Keras's serialized name of an activation ("silu" -> "swish", NULL -> "linear"); src/keras/activations.c. */
const char *tfc_activation_config_name(const char *name);
/* The activation as the fused ops (_FusedConv2D, _FusedMatMul) name it after "BiasAdd": "" for linear (or
 * none), "Relu", "Relu6", "Elu", "LeakyRelu" (slope 0.2, as Keras's "leaky_relu"); NULL when it has no fused
 * form (the layer then runs BiasAdd and the activation's own ops). src/keras/activations.c. */
const char *tfc_activation_fused_op(const char *name);
/* Appends the fused_ops, num_args and leakyrelu_alpha attrs for tfc_activation_fused_op's `op` to attrs
 * (3 of them); `ops` is storage for the fused_ops list that must outlive the call. Returns the new count. */
int tfc_activation_fused_attrs(const char *op, const char *ops[2], tfc_attr *attrs, int n);

/* ---- the layer base (src/keras/layer.c) ---- */
/* Keras's backend.get_uid(prefix): 1, 2, ... per prefix, process-wide (reset by tfc_keras_clear_session). */
int64_t tfc_keras_get_uid(const char *prefix);
/* Keras-style shape text for messages: "(None, 28, 28, 1)", "(3,)", "()". Returns buf. */
char *tfc_keras_shape_str(const tfc_shape *s, char *buf, size_t size);
#define TFC_KSHP(s) tfc_keras_shape_str((s), (char[TFC_SHAPE_STR]){0}, TFC_SHAPE_STR)
/* Allocates a layer (tfc_layer_alloc) and applies the common options of a TFC_LAYER_COMMON_OPTS struct. */
tfc_layer *tfc_layer_new_common(const tfc_layer_class *cls, const char *name, tfc_flag trainable, tfc_dtype dtype,
                                const char *dtype_policy, const int64_t *input_shape, int input_rank);
#define TFC_LAYER_NEW(type, cls, o)                                                                         \
    ((type *)tfc_layer_new_common((cls), (o)->name, (o)->trainable, (o)->dtype, (o)->dtype_policy, (o)->input_shape, \
                                  (o)->input_rank))
/* Snake-case of a Keras class name ("MaxPooling2D" -> "max_pooling2d"), written into buf. */
void tfc_keras_snake_case(const char *class_name, char *buf, size_t size);
/* Applies the common constructor options to a new layer: dtype_policy (a policy name) wins over dtype, which
 * wins over the global policy the layer was allocated with. An invalid policy name leaves compute_dtype
 * TFC_INVALID_DTYPE: the layer's build reports it. */
void tfc_layer_apply_common(tfc_layer *l, const char *name, tfc_flag trainable, tfc_dtype dtype,
                            const char *dtype_policy, const int64_t *input_shape, int input_rank);
/* ---- mixed precision (mixed_precision.c) ---- */
struct tfc_policy;
void tfc_layer_set_policy(tfc_layer *l, const struct tfc_policy *p);
/* Adds the layer's "dtype" config key (layer.c). */
bool tfc_policy_config_add(cJSON *cfg, const tfc_layer *l);
/* Whether the layer computes in another dtype than its variables' (a mixed policy). */
bool tfc_layer_policy_mixed(const tfc_layer *l);
/* A variable's value as the layer's call uses it: cast to the compute dtype under a mixed policy (Keras's
 * AutoCastVariable read), else as it is. Owned like an op output. */
tfc_tensor *tfc_layer_read_var(const tfc_layer *l, tfc_ctx *ctx, tfc_variable *v, tfc_status *st);
/* t cast to the compute dtype under a mixed policy when floating (t itself otherwise; NULL stays NULL). */
tfc_tensor *tfc_layer_cast_compute(const tfc_layer *l, tfc_ctx *ctx, tfc_tensor *t, tfc_status *st);
/* Sinks a floating reference (the container takes it) or adds one. */
tfc_layer *tfc_layer_take(tfc_layer *l);
/* Builds the layer if needed for inputs of the given shapes. */
bool tfc_layer_ensure_built(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st);
/* Registers a sublayer (owned reference taken with tfc_layer_take). */
bool tfc_layer_track(tfc_layer *parent, tfc_layer *child, tfc_status *st);
/* Checks input shapes against a built layer's input spec (count, rank, axes): INVALID_ARGUMENT naming the
 * layer, the received shape and the shape it was built for. True for layers not yet built. */
bool tfc_layer_check_inputs(const tfc_layer *l, const tfc_shape *in, int n_in, tfc_status *st);
/* The layer's Keras config as a cJSON object (base keys + class keys); caller deletes. */
cJSON *tfc_layer_config_json(const tfc_layer *l, tfc_status *st);
/* compute_output_shape of layers whose single output has the input's shape (Activation, Dropout, ...). */
bool tfc_keras_same_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out, tfc_status *st);
/* INVALID_ARGUMENT 'Layer "x" expects n input(s), but it received m input tensors' unless n_in == n. */
bool tfc_keras_expect_inputs(const tfc_layer *l, int n_in, int n, tfc_status *st);
/* Weight name helper: the tfc_weight of a variable, or NULL. */
const tfc_weight *tfc_layer_find_weight(const tfc_layer *l, const tfc_variable *v);
/* Regularization loss l1 * sum(|w|) + l2 * sum(w^2) of one tensor, as a float32 scalar (ops, differentiable). */
tfc_tensor *tfc_regularizer_apply(tfc_ctx *ctx, const tfc_regularizer *reg, tfc_tensor *w, tfc_status *st);
/* Keras's _keras_logits (training.c): during a train/test step, y = softmax(x) or sigmoid(x) remembers x so that
 * the cross-entropies compute from logits (tfc_loss_call_logits). A no-op outside steps. */
void tfc_keras_note_logits(tfc_tensor *y, tfc_tensor *x);
/* The seed generator of the running training step (training_rng.c): an int64 variable [2] (key, counter) that
 * Dropout reads its seed pair from, adding 1 to the counter; NULL outside a model's training step. */
tfc_variable *tfc_keras_step_rng(void);
/* Reads the activation name at build/call: INVALID_ARGUMENT "Unknown activation function: x (layer "d")". */
bool tfc_layer_check_activation(const tfc_layer *l, const char *activation, tfc_status *st);

/* ---- layer construction from config (src/keras/layer_registry.c) ----
 * Each built-in class registers a from_config function; config is the parsed JSON object (keys absent =
 * Keras defaults). */
typedef tfc_layer *(*tfc_layer_from_config_fn)(const cJSON *config, tfc_status *st);
typedef struct tfc_layer_registration {
    const char *class_name;
    tfc_layer_from_config_fn from_config;
} tfc_layer_registration;
/* The registration of a class name, or NULL. The table is generated from src/keras/layer_list.h. */
const tfc_layer_registration *tfc_layer_registry_find(const char *class_name);
/* A layer of a class registered with tfc_keras_register_layer (layer_custom.c); *found is false when no such
 * class is registered. */
tfc_layer *tfc_keras_custom_layer_from_config(const char *class_name, const cJSON *config, bool *found,
                                              tfc_status *st);
/* tfc_layer_from_config on a parsed config. */
tfc_layer *tfc_layer_from_config_json(const char *class_name, const cJSON *config, tfc_status *st);

/* JSON helpers for get_config / from_config (src/keras/config_json.c). */
bool tfc_json_add_initializer(cJSON *cfg, const char *key, const tfc_initializer *init);
bool tfc_json_add_regularizer(cJSON *cfg, const char *key, const tfc_regularizer *reg, bool has);
/* The keys Dense and Conv2D end their configs with, in Keras's order: activation, use_bias,
 * kernel/bias initializers, kernel/bias/activity regularizers, kernel/bias constraints (null). */
bool tfc_json_add_kernel_bias_tail(cJSON *cfg, const tfc_layer *l, const char *activation, bool use_bias,
                                   const tfc_kinit *kernel_init, const tfc_kinit *bias_init,
                                   const tfc_regularizer *kernel_reg, bool has_kernel_reg,
                                   const tfc_regularizer *bias_reg, bool has_bias_reg);
bool tfc_json_get_initializer(const cJSON *cfg, const char *key, tfc_initializer *out, char *name_buf,
                              size_t name_size, tfc_status *st);
bool tfc_json_get_regularizer(const cJSON *cfg, const char *key, tfc_regularizer *out, bool *has, tfc_status *st);
cJSON *tfc_json_int_array(const int64_t *v, int n);
cJSON *tfc_json_shape(const tfc_shape *s); /* [null, 28, 28, 1] with -1 as null */
/* Prints JSON as Python's json module would read it back exactly (floats in shortest round-trip form);
 * tfc_malloc'd string (tfc_free), NULL when out of memory. */
char *tfc_json_print(const cJSON *item);
/* Keras stores float hyper-parameters of regularizers/LeakyReLU/ReLU as float32 (backend.cast_to_floatx). */
bool tfc_json_add_f32(cJSON *cfg, const char *key, double v);
/* Readers: absent or null keys leave *out unchanged and set *present (may be NULL) to false; a value of the
 * wrong type is INVALID_ARGUMENT naming the key. Strings are borrowed from cfg. */
bool tfc_json_get_f64(const cJSON *cfg, const char *key, double *out, bool *present, tfc_status *st);
bool tfc_json_get_i64(const cJSON *cfg, const char *key, int64_t *out, bool *present, tfc_status *st);
bool tfc_json_get_bool(const cJSON *cfg, const char *key, bool *out, bool *present, tfc_status *st);
bool tfc_json_get_str(const cJSON *cfg, const char *key, const char **out, bool *present, tfc_status *st);
/* An int list (or a single int, as Keras accepts for kernel_size=3) into out[max]; null entries become -1. */
bool tfc_json_get_i64_list(const cJSON *cfg, const char *key, int64_t *out, int max, int *n, bool *present,
                           tfc_status *st);
/* The common keys of every layer config: name, trainable, dtype (a string or a DTypePolicy object),
 * batch_input_shape / batch_shape. Strings are borrowed from cfg. */
typedef struct tfc_layer_common_cfg {
    const char *name;
    tfc_flag trainable;
    tfc_dtype dtype;
    const char *dtype_policy; /* a mixed policy's name ("mixed_float16"); NULL for a dtype */
    int64_t input_shape[TFC_MAX_RANK];
    int input_rank;          /* -1 when there is no batch_input_shape */
    int64_t batch_size;      /* -1 unknown */
} tfc_layer_common_cfg;
bool tfc_json_get_common(const cJSON *cfg, tfc_layer_common_cfg *out, tfc_status *st);
/* Copies the common keys into a constructor options struct (TFC_LAYER_COMMON_OPTS). */
#define TFC_COMMON_TO_OPTS(c, o)                                                                 \
    do {                                                                                         \
        (o).name = (c).name;                                                                     \
        (o).trainable = (c).trainable;                                                           \
        (o).dtype = (c).dtype;                                                                   \
        (o).dtype_policy = (c).dtype_policy;                                                     \
        if ((c).input_rank >= 0) {                                                               \
            for (int i_ = 0; i_ < (c).input_rank; i_++) (o).input_shape[i_] = (c).input_shape[i_]; \
            (o).input_rank = (c).input_rank > 0 ? (c).input_rank : -1;                           \
        }                                                                                        \
    } while (0)

#endif
