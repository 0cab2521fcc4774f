/* tfc — Keras models (tf.keras.Sequential, tf.keras.Model for the Functional API and subclassing) and the
 * training loop: compile, fit, evaluate, predict, *_on_batch, summary, save_weights / load_weights.
 *
 * A model is a layer (tfc_model_as_layer) and can be nested in another model. It owns its layers, its
 * optimizer, loss and metrics once compiled. Training runs eagerly with a GradientTape; tensors of a step are
 * released by a scope at the end of each step. */
#ifndef TFC_KERAS_MODEL_H
#define TFC_KERAS_MODEL_H

#include <stdio.h>

#include "tfc/keras/losses.h"
#include "tfc/keras/optimizers.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tfc_model tfc_model;
typedef struct tfc_callback tfc_callback;
typedef struct tfc_history tfc_history;

/* ---- construction ---- */
/* tf.keras.Sequential(layers): layers is NULL-terminated and may be NULL (then tfc_model_add). The model takes
 * the layers. The input shape comes from the first layer's input_shape, from an input layer, or from the
 * first batch it sees. NULL only when out of memory. */
TFC_API tfc_model *tfc_sequential(tfc_ctx *ctx, tfc_layer *const *layers);
TFC_API tfc_model *tfc_sequential_named(tfc_ctx *ctx, tfc_layer *const *layers, const char *name);
/* model.add(layer): INVALID_ARGUMENT (layer left unowned is released) when shapes are incompatible with the
 * model built so far. */
TFC_API bool tfc_model_add(tfc_model *m, tfc_layer *layer, tfc_status *st);
/* tf.keras.Model(inputs, outputs): the Functional API over Keras tensors from tfc_input / tfc_layer_apply.
 * Multi-input, multi-output, shared layers and nested models are supported. INVALID_ARGUMENT when an output
 * does not depend on the inputs (names the tensor and layer). */
TFC_API tfc_model *tfc_model_new(tfc_ctx *ctx, tfc_ktensor *const *inputs, int n_in, tfc_ktensor *const *outputs,
                                 int n_out, const char *name, tfc_status *st);
/* tf.keras.models.model_from_config / model_from_json: a Sequential or Functional model rebuilt from Keras's model
 * JSON: {"class_name": "Sequential"|"Functional"|"Model", "config": {...}} in the Keras 2 or Keras 3 dialect, as
 * written by model.to_json() (extra top-level keys ignored), or wrapped in {"model_config": ...} (.h5, tfjs).
 * Layers come from tfc_layer_from_config; Functional inbound nodes are replayed on Keras tensors (shared layers,
 * multi-input/output and nested models included). Weights are created (initialised as the configs say) when
 * the config gives the input shapes. INVALID_ARGUMENT for malformed configs and unknown layer classes (naming
 * them), the layer errors of tfc_model_add / tfc_layer_apply for incompatible shapes. (src/keras/model_config.c) */
TFC_API tfc_model *tfc_model_from_config(tfc_ctx *ctx, const char *json, tfc_status *st);
/* Subclassed models: cls->size bytes, zeroed, with a struct that embeds tfc_model first (use
 * TFC_MODEL_BASE_SIZE to check) and cls->call doing the forward pass with tfc_layer_call on sublayers
 * registered through tfc_model_track (which takes the sublayer and returns it). */
TFC_API tfc_model *tfc_model_subclass_new(tfc_ctx *ctx, const tfc_layer_class *cls, const char *name);
TFC_API tfc_layer *tfc_model_track(tfc_model *m, tfc_layer *sublayer);
TFC_API size_t tfc_model_base_size(void);
/* The model as a layer (for nesting or tfc_layer_* queries); borrowed. */
TFC_API tfc_layer *tfc_model_as_layer(tfc_model *m);
TFC_API void tfc_model_free(tfc_model *m); /* NULL-safe; releases layers, optimizer, loss and metrics */
/* model.layers: writes up to max borrowed layers, returns the count. */
TFC_API int tfc_model_layers(const tfc_model *m, tfc_layer **out, int max);
TFC_API tfc_layer *tfc_model_get_layer(const tfc_model *m, const char *name);
/* model.build(input_shape) for models whose input shape is not yet known. shape includes the batch (-1). */
TFC_API bool tfc_model_build(tfc_model *m, const tfc_shape *input_shape, tfc_status *st);
/* model.summary(): Keras's table (Layer (type), Output Shape, Param #; totals of params, trainable and
 * non-trainable) written to out (NULL = stdout). */
TFC_API bool tfc_model_summary(tfc_model *m, FILE *out, tfc_status *st);
/* model(x, training) on eager tensors: single input and output. */
TFC_API tfc_tensor *tfc_model_call(tfc_model *m, tfc_tensor *x, bool training, tfc_status *st);
TFC_API bool tfc_model_call_n(tfc_model *m, tfc_tensor *const *x, int n_x, tfc_tensor **y, int n_y, bool training,
                              tfc_status *st);

/* ---- compile ---- */
typedef struct tfc_compile_opts {
    tfc_optimizer *optimizer;      /* taken by the model; NULL: optimizer_name */
    const char *optimizer_name;    /* NULL and no optimizer: "rmsprop" (Keras's default) */
    tfc_loss *loss;                /* taken by the model; NULL: loss_name */
    const char *loss_name;         /* e.g. "sparse_categorical_crossentropy" */
    const char *metrics[8];        /* names, NULL-terminated ("accuracy" is resolved against the loss) */
    tfc_metric *metric_objs[8];    /* taken by the model; NULL-terminated */
    bool run_eagerly;
    int steps_per_execution;       /* accepted for API parity; steps run one at a time */
} tfc_compile_opts;
/* INVALID_ARGUMENT for unknown optimizer/loss/metric names ("Unknown loss function: x"). */
TFC_API bool tfc_model_compile(tfc_model *m, const tfc_compile_opts *opts, tfc_status *st);
#define tfc_compile(m, st, ...) tfc_model_compile((m), &(tfc_compile_opts){__VA_ARGS__}, (st))
/* Names of the values fit/evaluate report, in order: "loss", then each metric (Keras's metrics_names). */
TFC_API int tfc_model_metrics_names(const tfc_model *m, const char **out, int max);
TFC_API tfc_optimizer *tfc_model_optimizer(tfc_model *m); /* borrowed */

/* ---- training ---- */
typedef enum { TFC_VERBOSE_AUTO = 0, TFC_VERBOSE_SILENT = -1, TFC_VERBOSE_PROGRESS = 1, TFC_VERBOSE_EPOCH = 2 } tfc_verbose;

typedef struct tfc_fit_opts {
    int64_t batch_size;            /* 0 = 32 */
    int epochs;                    /* 0 = 1 */
    tfc_verbose verbose;           /* AUTO: progress bar on a terminal, one line per epoch otherwise */
    tfc_callback *callbacks[16];   /* NULL-terminated; taken by fit (freed when fit returns) */
    double validation_split;       /* last fraction of x/y, before shuffling, as Keras */
    tfc_tensor *validation_x, *validation_y; /* validation_data (borrowed) */
    tfc_flag shuffle;              /* default yes: reshuffled each epoch */
    const double *class_weight;    /* per class index, n_class_weight entries */
    int n_class_weight;
    tfc_tensor *sample_weight;     /* [samples] (borrowed) */
    int initial_epoch;
    int64_t steps_per_epoch;       /* 0 = all batches */
    int64_t validation_steps;
    int64_t validation_batch_size; /* 0 = batch_size */
    int validation_freq;           /* 0 = 1 */
    FILE *out;                     /* progress output; NULL = stdout */
} tfc_fit_opts;

/* model.fit(x, y, ...): x [samples, ...], y [samples, ...]. *history (may be NULL) receives the History
 * (free with tfc_history_free). INVALID_ARGUMENT for mismatched sample counts, shapes the model rejects,
 * labels out of range (naming the layer/loss and values); the error of a callback stops training. */
TFC_API bool tfc_model_fit(tfc_model *m, tfc_tensor *x, tfc_tensor *y, const tfc_fit_opts *opts, tfc_history **history,
                           tfc_status *st);
TFC_API bool tfc_model_fit_n(tfc_model *m, tfc_tensor *const *x, int n_x, tfc_tensor *const *y, int n_y,
                             const tfc_fit_opts *opts, tfc_history **history, tfc_status *st);

typedef struct tfc_eval_opts {
    int64_t batch_size;            /* 0 = 32 */
    tfc_verbose verbose;
    tfc_tensor *sample_weight;
    int64_t steps;
    tfc_callback *callbacks[16];
    FILE *out;
} tfc_eval_opts;
/* model.evaluate: writes loss then each metric into results (max entries); returns the count or -1. */
TFC_API int tfc_model_evaluate(tfc_model *m, tfc_tensor *x, tfc_tensor *y, const tfc_eval_opts *opts, double *results,
                               int max, tfc_status *st);
TFC_API int tfc_model_evaluate_n(tfc_model *m, tfc_tensor *const *x, int n_x, tfc_tensor *const *y, int n_y,
                                 const tfc_eval_opts *opts, double *results, int max, tfc_status *st);
/* model.predict: outputs concatenated over batches; a new caller-owned tensor. */
TFC_API tfc_tensor *tfc_model_predict(tfc_model *m, tfc_tensor *x, const tfc_eval_opts *opts, tfc_status *st);
/* train_on_batch / test_on_batch: one step on the given batch; results as evaluate (metrics accumulate
 * across calls unless reset_metrics, as Keras). predict_on_batch: one forward pass. */
TFC_API int tfc_model_train_on_batch(tfc_model *m, tfc_tensor *x, tfc_tensor *y, tfc_tensor *sample_weight,
                                     bool reset_metrics, double *results, int max, tfc_status *st);
TFC_API int tfc_model_test_on_batch(tfc_model *m, tfc_tensor *x, tfc_tensor *y, tfc_tensor *sample_weight,
                                    bool reset_metrics, double *results, int max, tfc_status *st);
TFC_API tfc_tensor *tfc_model_predict_on_batch(tfc_model *m, tfc_tensor *x, tfc_status *st);
TFC_API void tfc_model_reset_metrics(tfc_model *m);
/* model.stop_training = true (from a callback). */
TFC_API void tfc_model_stop_training(tfc_model *m);

/* ---- History ---- */
TFC_API int tfc_history_epochs(const tfc_history *h);
/* Values of one key ("loss", "accuracy", "val_loss", "lr", ...) per epoch; NULL when absent. */
TFC_API const double *tfc_history_get(const tfc_history *h, const char *key, int *n);
TFC_API int tfc_history_keys(const tfc_history *h, const char **out, int max);
TFC_API void tfc_history_free(tfc_history *h);

/* ---- weights files (Keras's HDF5 weights layout, see model.save_weights('w.h5')) ----
 * save_weights writes atomically (a temporary file renamed over path), so an existing file is never left
 * half-written. load_weights matches layers positionally as Keras (layers with weights, in order) and checks
 * counts and shapes: INVALID_ARGUMENT naming the layer and shapes; DATA_LOSS naming the file for corrupt
 * files; NOT_FOUND for a missing file. */
TFC_API bool tfc_model_save_weights(tfc_model *m, const char *path, tfc_status *st);
TFC_API bool tfc_model_load_weights(tfc_model *m, const char *path, tfc_status *st);
/* Weights of the whole model in Keras's model.get_weights() order. */
TFC_API int tfc_model_get_weights(const tfc_model *m, tfc_tensor **out, int max, tfc_status *st);
TFC_API bool tfc_model_set_weights(tfc_model *m, tfc_tensor *const *w, int n, tfc_status *st);

#ifdef __cplusplus
}
#endif
#endif
