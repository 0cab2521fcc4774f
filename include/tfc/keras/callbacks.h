/* tfc — Keras callbacks (tf.keras.callbacks). fit/evaluate call them at Keras's hook points with the logs
 * Keras would pass ("loss", metric names, "val_*" at epoch end, "lr" when a callback sets it). */
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

/* Hooks; any may be NULL. Returning false (with st set) stops training with that error. */
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

/* ModelCheckpoint: filepath may contain {epoch:02d} and {<metric>:.4f} style fields as Keras. monitor default
 * "val_loss"; mode "auto"/"min"/"max"; save_freq "epoch". Full-model saving is not available yet:
 * save_weights_only false saves weights too (documented difference). */
typedef struct {
    const char *filepath, *monitor, *mode;
    bool save_best_only, save_weights_only;
    tfc_verbose verbose;
} tfc_model_checkpoint_opts;
TFC_API tfc_callback *tfc_callbacks_model_checkpoint_new(const tfc_model_checkpoint_opts *o);
#define tfc_callbacks_model_checkpoint(...) tfc_callbacks_model_checkpoint_new(&(tfc_model_checkpoint_opts){__VA_ARGS__})

/* EarlyStopping: monitor default "val_loss", min_delta, patience, mode, baseline, restore_best_weights. */
typedef struct {
    const char *monitor, *mode;
    double min_delta, baseline;
    bool has_baseline;
    int patience;
    bool restore_best_weights;
    tfc_verbose verbose;
} tfc_early_stopping_opts;
TFC_API tfc_callback *tfc_callbacks_early_stopping_new(const tfc_early_stopping_opts *o);
#define tfc_callbacks_early_stopping(...) tfc_callbacks_early_stopping_new(&(tfc_early_stopping_opts){__VA_ARGS__})

/* ReduceLROnPlateau: monitor "val_loss", factor 0.1, patience 10, mode, min_delta 1e-4, cooldown, min_lr. */
typedef struct {
    const char *monitor, *mode;
    double factor, min_delta, min_lr;
    int patience, cooldown;
    bool has_patience;
    tfc_verbose verbose;
} tfc_reduce_lr_on_plateau_opts;
TFC_API tfc_callback *tfc_callbacks_reduce_lr_on_plateau_new(const tfc_reduce_lr_on_plateau_opts *o);
#define tfc_callbacks_reduce_lr_on_plateau(...) tfc_callbacks_reduce_lr_on_plateau_new(&(tfc_reduce_lr_on_plateau_opts){__VA_ARGS__})

/* LearningRateScheduler: schedule(epoch, current lr, user) returns the new lr, set at each epoch begin. */
TFC_API tfc_callback *tfc_callbacks_learning_rate_scheduler(double (*schedule)(int epoch, double lr, void *user),
                                                            void *user);
/* CSVLogger: epoch and every log value per line; separator default ","; append to an existing file. */
TFC_API tfc_callback *tfc_callbacks_csv_logger(const char *filename, const char *separator, bool append);
/* TerminateOnNaN: stops training when the batch loss is NaN or infinite. */
TFC_API tfc_callback *tfc_callbacks_terminate_on_nan(void);
/* BackupAndRestore: at each epoch end saves weights, optimizer state and the epoch into backup_dir
 * (atomically); a fit started again with the same backup_dir resumes after the last completed epoch; the
 * backup is deleted when training ends normally. */
TFC_API tfc_callback *tfc_callbacks_backup_and_restore(const char *backup_dir);

#ifdef __cplusplus
}
#endif
#endif
