/* tfc — Keras models (tf.keras.Sequential, tf.keras.Model for the Functional API and subclassing) and the
 * training loop: compile, fit, evaluate, predict, *_on_batch, summary, save_weights / load_weights.
 *
 * A model is a layer (tfc_model_as_layer) and can be nested in another model. It owns its layers, its
 * optimizer, loss and metrics once compiled. Training runs eagerly with a GradientTape; tensors of a step are
 * released by a scope at the end of each step; or, compiled with run_eagerly = TFC_NO, as traced graph
 * functions (tfc_compile_opts). */
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
typedef struct tfc_dataset tfc_dataset; /* tf.data (tfc/data.h) */

/* ---- construction ---- */
/* tf.keras.Sequential(layers): layers is NULL-terminated and may be NULL (then tfc_model_add). The model takes
 * the layers. The input shape comes from the first layer's input_shape, from an input layer
 * (tfc_layers_input_layer), or from the first batch it sees (or tfc_model_build); once it is known each added
 * layer is built and shape-checked. NULL only when out of memory; an incompatible layer in the list is
 * reported by every later call on the model (build, call, compile, fit, summary). */
TFC_API tfc_model *tfc_sequential(tfc_ctx *ctx, tfc_layer *const *layers);
TFC_API tfc_model *tfc_sequential_named(tfc_ctx *ctx, tfc_layer *const *layers, const char *name);
/* tf.keras.Sequential(layers) from a counted list: layers[0 .. n). A layer constructor that ran out of memory
 * returned NULL, which in tfc_sequential's NULL-terminated list would silently end the list (a shorter model);
 * here a NULL entry is an error: RESOURCE_EXHAUSTED "Sequential \"<name>\": layer <i> of <n> is NULL (its
 * constructor ran out of memory)", NULL returned and every given layer released. NULL with RESOURCE_EXHAUSTED
 * also when the model or the adding of a layer runs out of memory (layers released); INVALID_ARGUMENT for n < 0
 * or layers NULL with n > 0. Otherwise as tfc_sequential_named (an incompatible layer is reported by every later
 * call on the model). name NULL: "sequential", "sequential_1", ... tfc_sequential_of(ctx, name, st, layer, ...)
 * counts its arguments. */
TFC_API tfc_model *tfc_sequential_n(tfc_ctx *ctx, tfc_layer *const *layers, int n, const char *name, tfc_status *st);
#define tfc_sequential_of(ctx, name, st, ...)                                                                      \
    tfc_sequential_n((ctx), (tfc_layer *const[]){__VA_ARGS__},                                                    \
                     (int)(sizeof((tfc_layer *const[]){__VA_ARGS__}) / sizeof(tfc_layer *)), (name), (st))
/* model.add(layer): INVALID_ARGUMENT (layer left unowned is released) when shapes are incompatible with the
 * model built so far. */
TFC_API bool tfc_model_add(tfc_model *m, tfc_layer *layer, tfc_status *st);
/* tf.keras.Model(inputs, outputs): the Functional API over Keras tensors from tfc_input / tfc_layer_apply.
 * Multi-input, multi-output (at most 8 each), shared layers (a layer called twice is two nodes) and nested
 * models are supported; model.layers are in Keras's order (by depth from the inputs). name NULL: "model",
 * "model_1", ... INVALID_ARGUMENT when a tensor a layer needs cannot be computed from the inputs ("Graph
 * disconnected: ..." naming the tensor and layer), when inputs do not come from tfc_input, or when two layers
 * share a name. On failure the floating layers of the graph are released. */
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
/* Subclassed models (a subclass of tf.keras.Model): cls->class_name names the class ("MyModel"; the default
 * model name is its snake_case, "my_model"), cls->size is the size of the subclass's own data (zeroed, aligned
 * for any type, reached with tfc_model_subclass_data), cls->call does the forward pass with tfc_layer_call on
 * sublayers registered through tfc_model_track, cls->build (optional) runs before the first call and
 * cls->destroy (optional) releases what the data owns. cls must stay valid for the process (keep it static).
 * The model is built on its first call (or tfc_model_build); its layers are listed in tracking order.
 * NULL when out of memory or cls has no call. */
TFC_API tfc_model *tfc_model_subclass_new(tfc_ctx *ctx, const tfc_layer_class *cls, const char *name);
TFC_API void *tfc_model_subclass_data(tfc_model *m); /* NULL for other models */
/* Registers a sublayer of a subclassed model (self.dense = Dense(...)): takes a floating layer (or adds a
 * reference) and returns it, or NULL when out of memory (a floating layer is then released). */
TFC_API tfc_layer *tfc_model_track(tfc_model *m, tfc_layer *sublayer);
TFC_API size_t tfc_model_base_size(void); /* bytes of the model part before the subclass data */
/* The model as a layer (for nesting or tfc_layer_* queries); borrowed. A model used as a layer of another
 * model (nested: tfc_layer_apply, a Sequential list, tfc_model_track) is shared: the outer model holds its own
 * reference and the creator still frees its model with tfc_model_free. */
TFC_API tfc_layer *tfc_model_as_layer(tfc_model *m);
/* The model a layer is (for a subclassed model's call, which receives its model as a tfc_layer), or NULL. */
TFC_API tfc_model *tfc_layer_as_model(tfc_layer *l);
TFC_API void tfc_model_free(tfc_model *m); /* NULL-safe; releases layers, optimizer, loss and metrics */
/* model.layers: writes up to max borrowed layers, returns the count. */
TFC_API int tfc_model_layers(const tfc_model *m, tfc_layer **out, int max);
TFC_API tfc_layer *tfc_model_get_layer(const tfc_model *m, const char *name);
/* model.build(input_shape) for models whose input shape is not yet known. shape includes the batch (-1). */
TFC_API bool tfc_model_build(tfc_model *m, const tfc_shape *input_shape, tfc_status *st);
/* model.summary(): tf-keras's table, character for character (tf-keras 2.x: cells indented by a space, a blank
 * line after each layer, long cells wrapped, totals "Total params: 34826 (136.04 KB)"): 65 columns for
 * Sequential, subclassed and branch-free Functional models; 98 columns with "Connected to" for other
 * Functional models. Output shapes as "(None, 26, 26, 32)", "[(None, 16)]" for inputs, "multiple" for layers
 * called with several shapes or only eagerly (subclassed models); "0 (unused)" for layers never built.
 * Written to out (NULL = stdout). INVALID_ARGUMENT "This model has not yet been built..." before the input
 * shape is known. */
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
    const char *metrics[8];        /* names, NULL-terminated; "accuracy"/"acc" and "crossentropy"/"ce" are
                                      resolved at the first batch as Keras: binary when y_pred's last dim is 1,
                                      sparse when y_true has a lower rank or a last dim of 1, else categorical
                                      (so sparse_categorical_accuracy with sparse CE labels); logs use the name
                                      given ("acc"), prefixed by the output layer's name for multi-output
                                      models ("out_a_acc") */
    tfc_metric *metric_objs[8];    /* taken by the model; NULL-terminated; measure the first output */
    /* Keras's run_eagerly. TFC_NO: fit / evaluate / predict / *_on_batch run compiled steps (Keras's
     * train_function, test_function, predict_function): each is a graph function (tfc/function.h) traced once
     * per input signature (batch shapes and dtypes, with or without sample weights) and called per execution;
     * the model's variables, the optimizer's iterations and slots and the model's seed generator (Dropout's
     * masks in training, set by fit per epoch without a new trace) are captured resources; the loss tracker
     * and the metrics are updated from the losses and predictions each step returns (the same values as
     * eagerly, within float32 rounding). A callback that changes the learning rate makes the next call retrace.
     * Steps run eagerly instead under a distribution strategy and for optimizers whose step depends on host
     * state (learning-rate schedules, legacy decay, Nadam, loss scaling, gradient hooks).
     * TFC_YES (true): every step runs op by op (the layers' hand-fused eager paths; debuggable).
     * TFC_DEFAULT: the context's keras_run_eagerly switch (tfc_runtime_config, tfc/eager.h): eagerly unless
     * it is off (TFC_KERAS_RUN_EAGERLY=0 when the context was created). Both modes draw the same Dropout masks
     * from the model's seed generator. */
    tfc_flag run_eagerly;
    /* Keras's steps_per_execution (0 = 1; at most 64, else INVALID_ARGUMENT): fit runs this many steps per
     * execution (one call of train_function in graph mode, the steps unrolled in its trace); batch-level
     * callbacks see every N-th step as Keras's: on_train_batch_begin(first step of the execution),
     * on_train_batch_end(its last step, logs after it); an epoch's last execution may be shorter. */
    int steps_per_execution;
} tfc_compile_opts;
/* model.compile: replaces any previous compile state. The optimizer, loss and metric objects given are taken
 * by the model, also when compile fails. A model may be compiled without a loss (predict only); fit and
 * evaluate then fail with INVALID_ARGUMENT "No loss found". Multi-output models apply the loss to every output
 * and train on their sum. INVALID_ARGUMENT for unknown optimizer/loss/metric names ("Unknown loss function:
 * x"). */
/* Distribution (tfc/distribute.h): a model compiled while a strategy's scope is open on this thread trains and
 * evaluates under that strategy, as Keras under strategy.scope(): batch_size (or a dataset's batch) is the
 * GLOBAL batch, split over all replicas of all workers (tfc_distribute_split_batch); each replica's loss is scaled
 * by its share of the global batch; the gradients are summed over the local replicas and all-reduced across
 * workers in packs of communication_options.bytes_per_pack, then applied once; the logs (loss and metrics) come
 * from the metric states summed over the workers; the weights and fit's shuffling seed are broadcast from worker
 * 0 when fit starts (and when a batch builds the model). Every worker must run the same fit / evaluate calls on
 * the same data. BackupAndRestore and ModelCheckpoint write only on the chief. */
TFC_API bool tfc_model_compile(tfc_model *m, const tfc_compile_opts *opts, tfc_status *st);
#define tfc_compile(m, st, ...) tfc_model_compile((m), &(tfc_compile_opts){__VA_ARGS__}, (st))
/* Names of the values fit/evaluate report, in order: "loss", the per-output losses of multi-output models, then
 * each metric (Keras's metrics_names); known right after compile. */
TFC_API int tfc_model_metrics_names(const tfc_model *m, const char **out, int max);
TFC_API tfc_optimizer *tfc_model_optimizer(tfc_model *m); /* borrowed */

/* ---- training ----
 * Progress output (tf-keras's Progbar): PROGRESS draws a bar redrawn in place ("\b" and "\r", at most every
 * 0.05 s, with an ETA) and ends each epoch with "422/422 [==============================] - 12s 28ms/step -
 * loss: 0.5432 - accuracy: 0.8012 - val_loss: 0.4000 - val_accuracy: 0.8500"; EPOCH prints one line per epoch
 * "422/422 - 12s - loss: 0.5432 - ... - 12s/epoch - 28ms/step"; "Epoch 1/5" precedes each epoch when epochs > 1.
 * Values print with 4 decimals ("%.4e" below 1e-3). AUTO is PROGRESS on a terminal and EPOCH otherwise. */
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
    /* At each epoch's end (before validation) prints "Epoch 3: 41.2 steps/s, input pipeline wait 12.5% of the
     * epoch (310.123 ms of 2480.456 ms)" to out: the steps trained per second of the epoch and the time spent getting
     * batches (from the prefetch queue, or gathering them when it misses) as a share of it, as the profiler's
     * overview page reports an input-bound run. Any verbose. */
    bool report_throughput;
} tfc_fit_opts;

/* model.fit(x, y, ...): x [samples, ...], y [samples, ...]. Each epoch shuffles the samples (a seeded
 * Fisher-Yates permutation; batches hold the rows GatherV2 would gather) unless shuffle is TFC_NO (batches are slices);
 * steps_per_epoch takes batches from one stream over successive passes, as Keras. The randomness of an epoch
 * (permutation; under a global seed, the op seeds of Dropout and other random layers) depends only on the
 * context's seed and the epoch, so runs repeat exactly and BackupAndRestore can resume one. A train step is
 * forward (training) -> compiled loss of each output (+ regularization losses) -> gradients of the trainable
 * weights -> optimizer update -> metrics, in a scope. class_weight (single output): per-sample weights from the
 * class of each label (argmax of one-hot rows), multiplied with sample_weight. Logs: "loss" (the running
 * mean weighted by batch size, including regularization), "<output>_loss" per output of multi-output models,
 * metrics, then "val_*". *history (may be NULL) receives the History (free with tfc_history_free).
 * FAILED_PRECONDITION before compile; INVALID_ARGUMENT for mismatched sample counts ("Data cardinality is
 * ambiguous"), shapes the model rejects, labels out of range (naming the layer/loss and values), a
 * validation_split leaving no training or validation samples; the error of a callback stops training.
 * Prefetch: as Keras's tf.data pipeline, fit gathers the next batch's rows of x, y and sample_weight on one
 * background thread (its own, besides the context's intra-op threads) while the current step runs: a queue of
 * 2 to 8 batches ahead (as many as fit in 8 MiB; TFC_FIT_PREFETCH_DEPTH=n sets it), never more than one pass
 * ahead, the same batches in the same order as without it (bit-identical training), its errors reported by
 * fit, the thread joined before fit returns (also on early stop or an error). x, y and sample_weight must not
 * be written while fit runs. TFC_FIT_PREFETCH=0 in the environment gathers on the calling thread; arrays of
 * strings are always gathered there. */
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
/* model.evaluate: resets the metrics, then writes loss then each metric (tfc_model_metrics_names order) into
 * results (max entries); returns the count or -1. */
TFC_API int tfc_model_evaluate(tfc_model *m, tfc_tensor *x, tfc_tensor *y, const tfc_eval_opts *opts, double *results,
                               int max, tfc_status *st);
TFC_API int tfc_model_evaluate_n(tfc_model *m, tfc_tensor *const *x, int n_x, tfc_tensor *const *y, int n_y,
                                 const tfc_eval_opts *opts, double *results, int max, tfc_status *st);
/* model.predict: outputs concatenated over batches; a new caller-owned tensor. */
TFC_API tfc_tensor *tfc_model_predict(tfc_model *m, tfc_tensor *x, const tfc_eval_opts *opts, tfc_status *st);
/* predict for multi-input / multi-output models: writes n_out new caller-owned tensors (n_out must equal the
 * model's output count). */
TFC_API bool tfc_model_predict_n(tfc_model *m, tfc_tensor *const *x, int n_x, const tfc_eval_opts *opts,
                                 tfc_tensor **out, int n_out, tfc_status *st);
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

/* ---- datasets (model.fit / evaluate / predict given a tf.data.Dataset) ----
 * The dataset (borrowed) yields batches: elements (x, y) or (x, y, sample_weight) of single tensors for fit and
 * evaluate, x alone (or (x, ...), whose first component is used) for predict; models of one input and one
 * output. An epoch is one pass (a fresh iterator), or, with steps_per_epoch, the next steps_per_epoch batches of
 * one iterator kept across epochs (when it runs out, training stops with Keras's "Your input ran out of data"
 * warning). Options as fit/evaluate/predict except: batch_size, validation_split, sample_weight and
 * validation_x/y must stay unset (INVALID_ARGUMENT), shuffle is ignored (shuffle the dataset), class_weight
 * applies per batch. validation_data (may be NULL) is evaluated at the end of every validation_freq-th epoch
 * (validation_steps batches, 0 = all). Callbacks, History and the progress bar behave as in fit (the bar has
 * no target for datasets of unknown cardinality without steps_per_epoch).
 * Errors: INVALID_ARGUMENT for other element structures, an x spec or batch the model's input does not accept
 * (naming the expected and received shapes), an infinite dataset without steps_per_epoch (evaluate/predict:
 * steps), a dataset with no batches; UNIMPLEMENTED for nested (multi-input/output) elements; the error of an
 * element stops training. */
TFC_API bool tfc_model_fit_dataset(tfc_model *m, tfc_dataset *dataset, const tfc_fit_opts *opts,
                                   tfc_dataset *validation_data, tfc_history **history, tfc_status *st);
/* Returns the count of results (loss, then each metric) or -1. */
TFC_API int tfc_model_evaluate_dataset(tfc_model *m, tfc_dataset *dataset, const tfc_eval_opts *opts, double *results,
                                       int max, tfc_status *st);
/* The outputs of all batches concatenated (a new caller-owned tensor). */
TFC_API tfc_tensor *tfc_model_predict_dataset(tfc_model *m, tfc_dataset *dataset, const tfc_eval_opts *opts,
                                              tfc_status *st);

/* ---- History ---- */
TFC_API int tfc_history_epochs(const tfc_history *h);
/* Values of one key ("loss", "accuracy", "val_loss", "lr", ...) per epoch; NULL when absent. */
TFC_API const double *tfc_history_get(const tfc_history *h, const char *key, int *n);
TFC_API int tfc_history_keys(const tfc_history *h, const char **out, int max);
TFC_API void tfc_history_free(tfc_history *h);

/* ---- weights files: model.save_weights(path) / model.load_weights(path) ----
 * The layout follows the name as in Keras: "x.weights.h5" is Keras 3's tree (layers/<name>/vars/<i>, and the
 * compiled optimizer's state under optimizer/vars once it has trained; Keras 3 and tf_keras 2.21 read it),
 * any other name Keras 2's layer_names layout (tf.keras 2 / tf_keras "w.h5"). load_weights detects the layout
 * from the contents (a full-model .h5 is read from its model_weights group). save_weights writes atomically (a
 * temporary file renamed over path), so an existing file is never left half-written. load_weights matches
 * layers positionally as Keras (Keras 2: layers with weights, in order; Keras 3: the object tree) and checks
 * counts, shapes and dtypes before assigning anything: INVALID_ARGUMENT naming the layer and shapes; DATA_LOSS
 * naming the file for corrupt files; NOT_FOUND for a missing file. Whole models: tfc/keras/saving.h. */
TFC_API bool tfc_model_save_weights(tfc_model *m, const char *path, tfc_status *st);
TFC_API bool tfc_model_load_weights(tfc_model *m, const char *path, tfc_status *st);
/* Weights of the whole model in Keras's model.get_weights() order. */
TFC_API int tfc_model_get_weights(const tfc_model *m, tfc_tensor **out, int max, tfc_status *st);
TFC_API bool tfc_model_set_weights(tfc_model *m, tfc_tensor *const *w, int n, tfc_status *st);

#ifdef __cplusplus
}
#endif
#endif
