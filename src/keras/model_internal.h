/* Internal: the private layout of models (Sequential, Functional, subclassed) shared by model.c, summary.c,
 * training.c and the callbacks. Every model is allocated with at least sizeof(tfc_model_impl) bytes, so the
 * public struct tfc_model (keras_internal.h) stays what other modules see. */
#ifndef TFC_KERAS_MODEL_INTERNAL_H
#define TFC_KERAS_MODEL_INTERNAL_H

#include <stdio.h>

#include "keras/keras_internal.h"

/* One node of the model's graph in execution order. Input nodes (InputLayer) are listed too (Keras's
 * nodes_by_depth includes them) but not run. Slots index the tensor table of one forward pass. */
typedef struct tfc_plan_node {
    tfc_knode *node;
    bool is_input;
    int depth;
    int in_slot[TFC_KERAS_MAX_IO];
    int out_slot[TFC_KERAS_MAX_IO];
} tfc_plan_node;

/* A compiled metric of one output: the display name ("accuracy", or "out_a_accuracy" for multi-output
 * models) and its object, created at the first batch when Keras resolves it from the shapes ("accuracy",
 * "acc", "crossentropy", "ce"). */
typedef struct tfc_metric_slot {
    char *name;
    char *spec;        /* the name given to compile (NULL for metric objects) */
    tfc_metric *obj;   /* owned; NULL until resolved */
    int output;
} tfc_metric_slot;

/* The running fit's state that callbacks reach (BackupAndRestore): set by fit (training.c) and fit on a
 * dataset (training_data.c) for the duration of the call. */
typedef struct tfc_fit_state {
    FILE *out;
    int initial_epoch;
    uint64_t seed_base;
    /* fit on a dataset: the running epoch's iterator (NULL between epochs and for arrays) */
    bool dataset;
    struct tfc_iterator *iter;
    /* BackupAndRestore resuming a dataset fit: the first epoch (initial_epoch) continues after initial_step
     * batches (-1: the saved epoch was complete) from the saved iterator state (owned; NULL: none) */
    int64_t initial_step;
    tfc_tensor *iter_state;
} tfc_fit_state;

typedef struct tfc_model_impl {
    tfc_model m;
    /* Sequential: the InputLayer its graph starts from (an owned reference; not in model.layers). */
    tfc_layer *seq_input;
    tfc_dtype build_dtype;         /* dtype of the Input a deferred Sequential model builds (0: float32) */
    /* The graph (Sequential once its input shape is known, Functional always). */
    tfc_plan_node *plan;
    int n_plan;
    int n_slots;
    int *in_slots, *out_slots;
    /* Subclassed models: the user's class and where its data lives (tfc_model_subclass_data). */
    const tfc_layer_class *user_cls;
    size_t data_offset;
    /* compile */
    char *loss_name;               /* as given ("sparse_categorical_crossentropy") or the object's name */
    char *optimizer_name;
    int n_out;                     /* outputs the losses/metrics were set up for (0: not yet known) */
    tfc_metric_slot *slots;
    int n_slot;
    char **spec_names;             /* metric names given to compile, in order */
    int n_spec;
    tfc_metric **spec_objs;        /* metric objects given to compile (owned until placed in a slot) */
    int n_spec_obj;
    char **out_names;              /* per-output loss names ("out_a_loss") when n_out > 1 */
    double loss_sum, loss_count;   /* the "loss" tracker (Mean weighted by batch size) */
    double *out_loss_sum;          /* per output, when n_out > 1 */
    /* tf.distribute: the strategy whose scope was open at compile (NULL: none); see training.c */
    struct tfc_strategy *strategy;
    int dist_synced;               /* weights broadcast from worker 0 so far (tfc_model_dist_sync) */
    /* compile's steps_per_execution (>= 1) and the traced train/test/predict functions (training_function.c) */
    int steps_per_execution;
    struct tfc_model_fns *fns;
    /* the seed generator of training steps (training_rng.c); NULL until the first training step */
    tfc_variable *rng;
    /* model.export is tracing the call (set on the exported model and every model nested in it): only
     * TensorFlow's ops, so that TensorFlow runs the SavedModel (no _Tfc fusions such as Conv2D + MaxPooling2D
     * as one op) */
    bool tf_ops_only;
    /* fit in progress (NULL otherwise): callbacks reach it through the model */
    tfc_fit_state *fit;
    /* A Sequential model whose construction failed (an incompatible layer) reports this error from every
     * later call, as constructors cannot return a status. */
    tfc_status deferred;
} tfc_model_impl;

#define TFC_IMPL(m) ((tfc_model_impl *)(m))

/* ---- model.c ---- */
/* True when l is a model (Sequential, Functional or subclassed). */
bool tfc_layer_is_model(const tfc_layer *l);
/* Runs the model's forward pass: n_x inputs, n_y outputs (new tensors in the current scope). */
bool tfc_model_forward(tfc_model *m, tfc_tensor *const *x, int n_x, tfc_tensor **y, int n_y, bool training,
                       tfc_status *st);
/* Number of model outputs (1 for subclassed models), inputs (1 for subclassed). */
int tfc_model_num_outputs(const tfc_model *m);
int tfc_model_num_inputs(const tfc_model *m);
/* Checks data shapes (batch dim ignored) against the model's inputs, building a deferred Sequential model for
 * them. INVALID_ARGUMENT naming the model and shapes. */
bool tfc_model_prepare_inputs(tfc_model *m, tfc_tensor *const *x, int n_x, tfc_status *st);
/* The name of output i's layer ("dense_1") for per-output log names. */
const char *tfc_model_output_name(const tfc_model *m, int i);

/* ---- training.c ---- */
/* Releases compile state (optimizer, loss, metrics). */
void tfc_model_compile_free(tfc_model *m);
/* Output stream of the running fit (stdout otherwise), for callbacks' messages. */
FILE *tfc_model_fit_out(tfc_model *m);
/* BackupAndRestore: makes the running fit start at `epoch` (called from on_train_begin). */
void tfc_model_fit_set_initial_epoch(tfc_model *m, int epoch);
/* The seed every epoch's shuffling and dropout derive from (with the epoch), so that a fit resumed from a
 * backup repeats the epochs of an uninterrupted one. 0 outside fit. */
uint64_t tfc_model_fit_seed_base(tfc_model *m);
void tfc_model_fit_set_seed_base(tfc_model *m, uint64_t seed);
/* Keras's optimizer.build(model.trainable_variables) when the optimizer has not stepped yet: its iterations and
 * slot variables exist (zeros) without a step, so saved state can be restored into them (tfc_optimizer_build);
 * weights and the iteration count are unchanged. */
bool tfc_model_build_optimizer(tfc_model *m, tfc_status *st);
/* Python's repr of a float32 / float64 value (shortest round-trip digits), as Keras prints logs. */
char *tfc_py_repr_f32(float v, char *buf, size_t size);
char *tfc_py_repr_f64(double v, char *buf, size_t size);

/* Under a strategy (compiled in its scope): broadcasts the model's weights from worker 0 (no-op otherwise). */
bool tfc_model_dist_sync(tfc_model *m, tfc_status *st);

/* The tensors one step yields: its total loss (float32 scalar), each output's loss (float32 scalars) and the
 * predictions. */
#define TFC_MAX_STEPS_PER_EXECUTION 64
typedef struct tfc_step_out {
    tfc_tensor *total;
    tfc_tensor *out_loss[TFC_KERAS_MAX_IO];
    tfc_tensor *pred[TFC_KERAS_MAX_IO];
} tfc_step_out;
/* One step's ops, run eagerly or traced into a function (they read no tensor data): train = forward (training)
 * -> compiled loss of each output (+ regularization) -> gradients of the trainable weights -> optimizer update;
 * test = forward -> loss. y holds the model's n_out targets. Results are op results (current scope). */
bool tfc_model_step_ops(tfc_model *m, bool train, tfc_tensor *const *x, int n_x, tfc_tensor *const *y, tfc_tensor *sw,
                        tfc_step_out *out, tfc_status *st);

/* ---- training_function.c: compiled steps (Keras's train_function, test_function, predict_function) ---- */
typedef enum { TFC_FN_TRAIN, TFC_FN_TEST, TFC_FN_PREDICT } tfc_fn_kind;
/* True when m's steps of this kind run as traced functions: compiled with run_eagerly = TFC_NO, no
 * distribution strategy, and (train) an optimizer whose step can be traced (tfc_optimizer_traceable). */
bool tfc_model_graph_mode(tfc_model *m, bool train);
/* Runs n steps (1 .. TFC_MAX_STEPS_PER_EXECUTION) as one call of the model's function of this kind, traced
 * once per input signature: in holds each step's x[n_x], then (train/test) y[n_out] and, with has_sw, its
 * sample weights. out[s] receives step s's tensors (eager, current scope; predict: pred only). */
bool tfc_model_fn_run(tfc_model *m, tfc_fn_kind kind, int n, tfc_tensor *const *in, int n_x, bool has_sw,
                      tfc_step_out *out, tfc_status *st);
/* Drops the functions of this kind (the next call traces again). */
void tfc_model_fns_forget(tfc_model *m, tfc_fn_kind kind);
/* How many times the model's functions were traced (all kinds), for tests. */
int tfc_model_fn_tracing_count(const tfc_model *m);
/* Frees the traced functions (compile, recompile and model free; they hold the optimizer's variables). */
void tfc_model_fns_free(tfc_model *m);

/* ---- training_rng.c: the model's seed generator ---- */
/* Creates m's seed generator when missing: an int64 variable [2] (key, counter), the key from the global seed
 * (tfc_random_get_seed) or random without one. */
bool tfc_model_rng_ready(tfc_model *m, tfc_status *st);
/* Sets the generator to (key, 0) (fit, at each epoch), creating it when missing. */
bool tfc_model_rng_reset(tfc_model *m, uint64_t key, tfc_status *st);
/* Makes m's generator the one tfc_keras_step_rng returns on this thread (a training step's forward pass), and
 * ends that. */
void tfc_model_rng_begin(tfc_model *m);
void tfc_model_rng_end(void);
void tfc_model_rng_free(tfc_model *m);
/* A nondeterministic 64-bit seed (training.c). */
uint64_t tfc_model_fresh_seed(void);

/* ---- metrics.c: a metric's state as doubles (for cross-worker aggregation) ---- */
int tfc_metric_state_size(const tfc_metric *m);
void tfc_metric_state_get(const tfc_metric *m, double *out);
void tfc_metric_state_set(tfc_metric *m, const double *in);

/* ---- callbacks.c ---- */
/* The callback list fit/evaluate run: user callbacks, then History, then the progress bar (Keras's order). */
typedef enum {
    TFC_HOOK_TRAIN_BEGIN, TFC_HOOK_TRAIN_END, TFC_HOOK_EPOCH_BEGIN, TFC_HOOK_EPOCH_END,
    TFC_HOOK_TRAIN_BATCH_BEGIN, TFC_HOOK_TRAIN_BATCH_END, TFC_HOOK_TEST_BEGIN, TFC_HOOK_TEST_END
} tfc_hook;
bool tfc_callbacks_run(tfc_callback *const *cbs, int n, tfc_hook hook, tfc_model *m, int64_t index, tfc_logs *logs,
                       tfc_status *st);
/* Built-in hooks for History (training.c owns the history object). */
tfc_callback *tfc_callback_history_new(tfc_history *h);
tfc_history *tfc_history_new(void);

/* ---- progbar.c ---- */
typedef struct tfc_progbar tfc_progbar;
/* Keras's ProgbarLogger for fit (mode "fit": epochs, steps), evaluate ("test") or predict ("predict").
 * verbose 1: live bar (\b and \r, ETA); 2: one line per epoch. */
tfc_callback *tfc_progbar_new(FILE *out, int verbose, int epochs, int64_t steps, bool in_fit);
/* fit's validation log names, "val_" + each of tfc_model_metrics_names (their count in *n_names), for the fits
 * on arrays and on datasets. INVALID_ARGUMENT when training and validation logs would not fit in tfc_logs,
 * RESOURCE_EXHAUSTED when out of memory (NULL then). Free with tfc_fit_val_names_free (NULL-safe). */
char **tfc_fit_val_names(tfc_model *m, int *n_names, tfc_status *st);
void tfc_fit_val_names_free(char **names, int n);
/* evaluate/predict drive their bar directly. */
void tfc_progbar_test_batch(tfc_callback *cb, int64_t batch, const tfc_logs *logs);
void tfc_progbar_test_end(tfc_callback *cb, const tfc_logs *logs);
/* Resolves TFC_VERBOSE_AUTO: progress bar on a terminal, one line per epoch otherwise. */
int tfc_verbose_resolve(tfc_verbose v, FILE *out);

#endif
