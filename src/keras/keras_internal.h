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
    tfc_dtype dtype;         /* variable (and compute) dtype */
    /* input_shape= given to the constructor ([batch=-1, ...]); used by Sequential and summary */
    bool has_input_shape;
    tfc_shape input_shape;
    /* shapes the layer was built for (dim 0 batch, -1 unknown), checked on later calls */
    int n_build_shapes;
    tfc_shape build_shapes[8];
    tfc_weight *weights;
    int n_weights, cap_weights;
    tfc_layer **sublayers;   /* tracked (owned references) */
    int n_sublayers, cap_sublayers;
    tfc_knode **nodes;       /* inbound nodes (owned) */
    int n_nodes, cap_nodes;
    tfc_regularizer activity_reg;
    bool has_activity_reg;
    tfc_ctx *ctx;            /* context the weights live in (set at build) */
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
    bool run_eagerly;
};

/* ---- the layer base (src/keras/layer.c) ---- */
/* Snake-case of a Keras class name ("MaxPooling2D" -> "max_pooling2d"), written into buf. */
void tfc_keras_snake_case(const char *class_name, char *buf, size_t size);
/* Applies the common constructor options to a new layer. */
void tfc_layer_apply_common(tfc_layer *l, const char *name, tfc_flag trainable, tfc_dtype dtype,
                            const int64_t *input_shape, int input_rank);
/* Sinks a floating reference (the container takes it) or adds one. */
tfc_layer *tfc_layer_take(tfc_layer *l);
/* Builds the layer if needed for inputs of the given shapes. */
bool tfc_layer_ensure_built(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st);
/* Registers a sublayer (owned reference taken with tfc_layer_take). */
bool tfc_layer_track(tfc_layer *parent, tfc_layer *child, tfc_status *st);

/* ---- layer construction from config (src/keras/layer_registry.c) ----
 * Each built-in class registers a from_config function; config is the parsed JSON object (keys absent =
 * Keras defaults). */
typedef tfc_layer *(*tfc_layer_from_config_fn)(const cJSON *config, tfc_status *st);
typedef struct tfc_layer_registration {
    const char *class_name;
    tfc_layer_from_config_fn from_config;
} tfc_layer_registration;

/* JSON helpers for get_config / from_config (src/keras/config_json.c). */
bool tfc_json_add_initializer(cJSON *cfg, const char *key, const tfc_initializer *init);
bool tfc_json_add_regularizer(cJSON *cfg, const char *key, const tfc_regularizer *reg, bool has);
bool tfc_json_get_initializer(const cJSON *cfg, const char *key, tfc_initializer *out, char *name_buf,
                              size_t name_size, tfc_status *st);
bool tfc_json_get_regularizer(const cJSON *cfg, const char *key, tfc_regularizer *out, bool *has, tfc_status *st);
cJSON *tfc_json_int_array(const int64_t *v, int n);
cJSON *tfc_json_shape(const tfc_shape *s); /* [null, 28, 28, 1] with -1 as null */

#endif
