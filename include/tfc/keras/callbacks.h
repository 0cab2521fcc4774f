/* tfc — Keras callbacks (tf.keras.callbacks). fit/evaluate call them at Keras's hook points with the logs
 * Keras would pass ("loss", metric names, "val_*" at epoch end, "lr" when a callback sets it). Values are the
 * float32 results of the metrics, as Keras's. fit runs the user's callbacks in order, then History, then the
 * progress bar (tf-keras's order, so "lr" added by a callback is shown and recorded). Callbacks run outside
 * fit's scopes: tensors they create belong to them. Messages of the built-in callbacks go to fit's `out`. */
#ifndef TFC_KERAS_CALLBACKS_H
#define TFC_KERAS_CALLBACKS_H

#include "tfc/keras/model.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TFC_LOGS_MAX 32
typedef struct tfc_logs {
    int n;
    const char *keys[TFC_LOGS_MAX];
    double values[TFC_LOGS_MAX];
} tfc_logs;
/* Value of key in logs, or NAN when absent. */
TFC_API double tfc_logs_get(const tfc_logs *logs, const char *key);
/* Sets logs[key] (a callback adding "lr" in on_epoch_end, as Keras's logs dict); key is borrowed and must outlive
 * the logs (a string literal or the callback's own storage). False when the logs are full (TFC_LOGS_MAX). */
TFC_API bool tfc_logs_set(tfc_logs *logs, const char *key, double value);

/* Hooks; any may be NULL. Returning false (with st set) stops training with that error (on_train_end is then
 * not called, as with an exception in Keras). Hooks get the model; tfc_model_stop_training stops after the
 * current batch (and its epoch end). */
typedef struct tfc_callback_fns {
    bool (*on_train_begin)(tfc_callback *cb, tfc_model *m, const tfc_logs *logs, tfc_status *st);
    bool (*on_train_end)(tfc_callback *cb, tfc_model *m, const tfc_logs *logs, tfc_status *st);
    bool (*on_epoch_begin)(tfc_callback *cb, tfc_model *m, int epoch, const tfc_logs *logs, tfc_status *st);
    bool (*on_epoch_end)(tfc_callback *cb, tfc_model *m, int epoch, tfc_logs *logs, tfc_status *st);
    bool (*on_train_batch_begin)(tfc_callback *cb, tfc_model *m, int64_t batch, const tfc_logs *logs, tfc_status *st);
    bool (*on_train_batch_end)(tfc_callback *cb, tfc_model *m, int64_t batch, const tfc_logs *logs, tfc_status *st);
    bool (*on_test_begin)(tfc_callback *cb, tfc_model *m, const tfc_logs *logs, tfc_status *st);
    bool (*on_test_end)(tfc_callback *cb, tfc_model *m, const tfc_logs *logs, tfc_status *st);
    void (*destroy)(tfc_callback *cb);
} tfc_callback_fns;

/* A user callback (a subclass of tf.keras.callbacks.Callback): fns is borrowed (keep it static), user is
 * passed back through tfc_callback_user. */
TFC_API tfc_callback *tfc_callback_new(const tfc_callback_fns *fns, void *user);
TFC_API void *tfc_callback_user(const tfc_callback *cb);
TFC_API void tfc_callback_free(tfc_callback *cb);

/* ModelCheckpoint: at each epoch end, saves to filepath formatted as Python's str.format with epoch (1-based)
 * and the logs ("w.{epoch:02d}-{val_loss:.2f}.h5"; specs d, f, e, g with width/precision; an unknown key is
 * INVALID_ARGUMENT "Failed to format this callback filepath"), creating missing folders. monitor default
 * "val_loss"; mode "auto" (max when monitor contains "acc", else min), "min", "max"; save_best_only saves only
 * when monitor improves (strictly). verbose 1 prints tf-keras's "Epoch 3: val_loss improved from 0.50000 to
 * 0.25000, saving model to ..." lines. save_weights_only saves with tfc_model_save_weights (the layout by the
 * suffix: ".weights.h5" Keras 3's, others Keras 2's); otherwise the whole model with tfc_model_save (".keras"
 * or ".h5"; another suffix fails the epoch with INVALID_ARGUMENT). */
typedef struct {
    const char *filepath, *monitor, *mode;
    bool save_best_only, save_weights_only;
    tfc_verbose verbose;
} tfc_model_checkpoint_opts;
/* tf.keras.callbacks.ModelCheckpoint: a new callback owned by the caller until given to fit (callbacks[], which
 * takes it); NULL when filepath is NULL or out of memory. Errors while saving (an unwritable folder) stop fit with
 * that status. */
TFC_API tfc_callback *tfc_callbacks_model_checkpoint_new(const tfc_model_checkpoint_opts *o);
#define tfc_callbacks_model_checkpoint(...) tfc_callbacks_model_checkpoint_new(&(tfc_model_checkpoint_opts){__VA_ARGS__})

/* EarlyStopping (tf-keras 2.x semantics): monitor default "val_loss"; mode "auto" is max for names ending in
 * "acc", "accuracy" or "auc"; an epoch improves when (value - |min_delta|) beats the best (max) or
 * (value + |min_delta|) does (min); `wait` restarts only when the value also beats baseline (has_baseline);
 * training stops when wait >= patience (never at epoch 0). restore_best_weights sets the best epoch's weights
 * at train end. verbose 1 prints "Epoch 4: early stopping" and the restore message. */
typedef struct {
    const char *monitor, *mode;
    double min_delta, baseline;
    bool has_baseline;
    int patience;
    bool restore_best_weights;
    tfc_verbose verbose;
} tfc_early_stopping_opts;
/* tf.keras.callbacks.EarlyStopping: a new callback owned by the caller until given to fit (callbacks[], which takes
 * it); NULL only when out of memory. */
TFC_API tfc_callback *tfc_callbacks_early_stopping_new(const tfc_early_stopping_opts *o);
#define tfc_callbacks_early_stopping(...) tfc_callbacks_early_stopping_new(&(tfc_early_stopping_opts){__VA_ARGS__})

/* ReduceLROnPlateau: monitor "val_loss", factor 0.1 (0 = default; >= 1 is refused: NULL), patience 10
 * (has_patience to pass 0), mode (auto: max when monitor contains "acc"), min_delta 1e-4 (0 = default),
 * cooldown, min_lr. Adds "lr" (before reducing) to the epoch logs; reduces in float32 as Keras
 * (new = max(lr * factor, min_lr)); verbose 1 prints "Epoch 2: ReduceLROnPlateau reducing learning rate to
 * 0.0005." */
typedef struct {
    const char *monitor, *mode;
    double factor, min_delta, min_lr;
    int patience, cooldown;
    bool has_patience;
    tfc_verbose verbose;
} tfc_reduce_lr_on_plateau_opts;
/* tf.keras.callbacks.ReduceLROnPlateau: a new callback owned by the caller until given to fit (callbacks[], which
 * takes it); NULL for factor >= 1 (logged as an error, as Keras raises ValueError) or out of memory. */
TFC_API tfc_callback *tfc_callbacks_reduce_lr_on_plateau_new(const tfc_reduce_lr_on_plateau_opts *o);
#define tfc_callbacks_reduce_lr_on_plateau(...) tfc_callbacks_reduce_lr_on_plateau_new(&(tfc_reduce_lr_on_plateau_opts){__VA_ARGS__})

/* LearningRateScheduler: schedule(epoch, current lr, user) returns the new lr, set at each epoch begin; "lr" is
 * added to the epoch logs. A non-finite rate stops training (INVALID_ARGUMENT). */
TFC_API tfc_callback *tfc_callbacks_learning_rate_scheduler(double (*schedule)(int epoch, double lr, void *user),
                                                            void *user);
/* CSVLogger: Keras's format: a header "epoch,<log keys sorted>" (written unless appending to a non-empty file),
 * then per epoch the 0-based epoch and each value as Python prints it (repr of the float32 value:
 * 0.5375000238418579, 1e-05), lines ending in "\r\n" (Python's csv module); "NA" for a key missing when
 * training stops. separator NULL = ",". */
TFC_API tfc_callback *tfc_callbacks_csv_logger(const char *filename, const char *separator, bool append);
/* TerminateOnNaN: stops training when the batch loss is NaN or infinite, printing "Batch 0: Invalid loss,
 * terminating training". */
TFC_API tfc_callback *tfc_callbacks_terminate_on_nan(void);
/* BackupAndRestore: at each epoch end saves weights, optimizer state (iterations, slots), the epoch and fit's
 * seed base into backup_dir/backup.tfcb (written to a temporary file and renamed: a crash never leaves a torn
 * backup); a fit started again with the same backup_dir (same model and optimizer) restores it and resumes
 * after the last completed epoch; the backup is deleted when training ends normally (also by EarlyStopping).
 * Shuffling, and under a global seed (tfc_ctx_opts.seed) the random layers, depend only on (seed, epoch), so
 * a run killed and resumed ends with the weights of an uninterrupted run. A corrupt backup is DATA_LOSS; one
 * of another model INVALID_ARGUMENT. */
TFC_API tfc_callback *tfc_callbacks_backup_and_restore(const char *backup_dir);
/* BackupAndRestore(backup_dir, save_freq=N): as above, and for a fit fed from a dataset (tfc_model_fit_dataset)
 * also a backup every save_freq batches (counted across epochs, as Keras) holding the batches done in the
 * running epoch and the dataset iterator's state (tfc/data_checkpoint.h; epoch-end backups of a dataset fit hold
 * it too). A fit resumed from a mid-epoch backup restores the iterator (re-running the pipeline up to its
 * position) and continues that epoch with the next batch; metrics of the resumed epoch cover the batches run
 * after the resume. With a deterministic pipeline (seeded or unseeded shuffle, see data_checkpoint.h) and no
 * random layers the resumed run ends with the weights of an uninterrupted one. save_freq 0 = "epoch" (the
 * function above); negative: NULL. Errors from fit: INVALID_ARGUMENT when save_freq > 0 and fit is fed from
 * arrays, or a dataset fit's backup is resumed by fit on arrays; FAILED_PRECONDITION when the pipeline's
 * iterator cannot be checkpointed (from_generator, non-deterministic parallel stages). */
TFC_API tfc_callback *tfc_callbacks_backup_and_restore_freq(const char *backup_dir, int64_t save_freq);

/* TensorBoard (tf.keras.callbacks.TensorBoard, tf-keras 2.x): event files (include/tfc/summary.h) under
 * log_dir/train and log_dir/validation with what tf-keras writes:
 *  - each epoch end, to train/ at step = epoch (0-based): "epoch_<key>" for every log key without the "val_"
 *    prefix ("epoch_loss", "epoch_accuracy", "epoch_lr" when a callback adds "lr"), "epoch_learning_rate"
 *    (the schedule's value at the optimizer's iterations) when the learning rate is a schedule, and
 *    "epoch_steps_per_second" with write_steps_per_second; to validation/: "epoch_<key>" for each "val_<key>";
 *  - each test end (fit's validation and evaluate), to validation/ at step = the optimizer's iterations:
 *    "evaluation_<key>_vs_iterations";
 *  - every histogram_freq epochs (0: never), to train/ at step = epoch: "<layer>/<weight>_0/histogram"
 *    (tf.summary.histogram, 30 buckets) per weight of every layer, and with write_images "<...>/image" (the
 *    weight as a grayscale image, as tf-keras lays it out).
 * update_freq "epoch" (NULL) or "batch", or update_freq_steps N > 0: while fit runs, the train writer is the
 * thread's default writer (tfc_summary_default_writer) with the step set to the optimizer's iterations before
 * each batch and recording on when iterations % N == 0 -- for the user's own tf.summary calls, as tf-keras
 * (which writes no batch-level summaries itself).
 * profile_batch_start/stop (0, 0: off; start == stop profiles one batch): the global training batches
 * (1-based) to profile with the profiler (include/tfc/profiler.h), written under log_dir/plugins/profile.
 * write_graph (default yes): at train begin, to train/ at step 0, tag "keras": the model's JSON (Keras's
 * to_json: class_name, config, keras_version, backend) as a string scalar with plugin "graph_keras_model", the
 * conceptual graph TensorBoard draws (models without a config, subclassed ones, write none). The train
 * function's op graph (Event.graph_def) is not written: tfc has no GraphDef of it yet.
 * An unwritable log_dir or a failing write (a full disk) is logged once as an ERROR (tfc_log) naming the file
 * and the callback stops writing; training goes on. Errors: INVALID_ARGUMENT for a bad update_freq or
 * profile_batch. */
typedef struct {
    const char *log_dir; /* NULL: "logs" */
    int histogram_freq;
    bool write_images, write_steps_per_second;
    const char *update_freq;   /* "epoch" (NULL) or "batch" */
    int64_t update_freq_steps; /* > 0: update_freq as an integer */
    int64_t profile_batch_start, profile_batch_stop;
    tfc_flag write_graph; /* default yes */
} tfc_tensorboard_opts;
/* Returns the callback, owned by the caller until handed to fit (tfc_callback_free), or NULL with st set:
 * INVALID_ARGUMENT for a bad update_freq or profile_batch range (o NULL: all defaults). */
TFC_API tfc_callback *tfc_callbacks_tensorboard_new(const tfc_tensorboard_opts *o, tfc_status *st);

#ifdef __cplusplus
}
#endif
#endif
