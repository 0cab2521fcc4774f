/* tfc — Keras losses (tf.keras.losses) and metrics (tf.keras.metrics). */
#ifndef TFC_KERAS_LOSSES_H
#define TFC_KERAS_LOSSES_H

#include "tfc/keras/layer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- losses ----
 * A loss object computes per-sample losses (mean over the last axis where Keras does) and reduces them:
 * "sum_over_batch_size" (default: sum / number of elements), "sum", "none" (per-sample tensor [batch, ...]).
 * sample_weight (may be NULL) broadcasts against the per-sample losses as Keras.
 * Everything is computed with ops, so the result is differentiable with respect to y_pred.
 * Stable for huge logits: from_logits variants use the fused log-softmax / sigmoid cross-entropy forms, and
 * probability inputs are clipped to [epsilon, 1 - epsilon] with epsilon 1e-7 as Keras. */
typedef struct tfc_loss tfc_loss;
typedef struct {
    const char *name;
    const char *reduction;   /* NULL = "sum_over_batch_size" */
    bool from_logits;        /* cross-entropies */
    double label_smoothing;  /* BinaryCrossentropy, CategoricalCrossentropy */
    double delta;            /* Huber (0 = 1.0) */
} tfc_loss_opts;
TFC_API tfc_loss *tfc_losses_mean_squared_error_new(const tfc_loss_opts *o);
TFC_API tfc_loss *tfc_losses_mean_absolute_error_new(const tfc_loss_opts *o);
TFC_API tfc_loss *tfc_losses_huber_new(const tfc_loss_opts *o);
TFC_API tfc_loss *tfc_losses_binary_crossentropy_new(const tfc_loss_opts *o);
TFC_API tfc_loss *tfc_losses_categorical_crossentropy_new(const tfc_loss_opts *o);
TFC_API tfc_loss *tfc_losses_sparse_categorical_crossentropy_new(const tfc_loss_opts *o);
TFC_API tfc_loss *tfc_losses_kl_divergence_new(const tfc_loss_opts *o);
#define tfc_losses_mean_squared_error(...) tfc_losses_mean_squared_error_new(&(tfc_loss_opts){__VA_ARGS__})
#define tfc_losses_mean_absolute_error(...) tfc_losses_mean_absolute_error_new(&(tfc_loss_opts){__VA_ARGS__})
#define tfc_losses_huber(...) tfc_losses_huber_new(&(tfc_loss_opts){__VA_ARGS__})
#define tfc_losses_binary_crossentropy(...) tfc_losses_binary_crossentropy_new(&(tfc_loss_opts){__VA_ARGS__})
#define tfc_losses_categorical_crossentropy(...) tfc_losses_categorical_crossentropy_new(&(tfc_loss_opts){__VA_ARGS__})
#define tfc_losses_sparse_categorical_crossentropy(...) tfc_losses_sparse_categorical_crossentropy_new(&(tfc_loss_opts){__VA_ARGS__})
#define tfc_losses_kl_divergence(...) tfc_losses_kl_divergence_new(&(tfc_loss_opts){__VA_ARGS__})
/* tf.keras.losses.get: "mse"/"mean_squared_error", "mae"/"mean_absolute_error", "huber" ("huber_loss"),
 * "binary_crossentropy", "categorical_crossentropy", "sparse_categorical_crossentropy",
 * "kld"/"kl_divergence"/"kullback_leibler_divergence", or class names with a config JSON (may be NULL).
 * INVALID_ARGUMENT "Unknown loss function: x". */
TFC_API tfc_loss *tfc_loss_from_config(const char *name, const char *config_json, tfc_status *st);
TFC_API char *tfc_loss_get_config(const tfc_loss *l, tfc_status *st);
TFC_API const char *tfc_loss_name(const tfc_loss *l);
TFC_API void tfc_loss_free(tfc_loss *l);
/* loss(y_true, y_pred, sample_weight): a scalar (or per-sample tensor for reduction "none").
 * INVALID_ARGUMENT for incompatible shapes or, for sparse labels, labels outside [0, classes). */
TFC_API tfc_tensor *tfc_loss_call(const tfc_loss *l, tfc_ctx *ctx, tfc_tensor *y_true, tfc_tensor *y_pred,
                                  tfc_tensor *sample_weight, tfc_status *st);

/* ---- metrics ----
 * Stateful: update_state accumulates (weighted), result reads, reset_state clears. Values are accumulated in
 * float64 host memory (not recorded on tapes). */
typedef struct tfc_metric tfc_metric;
typedef struct {
    const char *name;
    double threshold;          /* BinaryAccuracy 0.5 default; Precision/Recall 0.5 */
    bool has_threshold;
    int64_t k;                 /* TopKCategoricalAccuracy (0 = 5) */
    int64_t num_thresholds;    /* AUC (0 = 200) */
    const char *curve;         /* AUC: "ROC" (default) or "PR" */
} tfc_metric_opts;
TFC_API tfc_metric *tfc_metrics_mean_new(const tfc_metric_opts *o);
TFC_API tfc_metric *tfc_metrics_accuracy_new(const tfc_metric_opts *o);
TFC_API tfc_metric *tfc_metrics_binary_accuracy_new(const tfc_metric_opts *o);
TFC_API tfc_metric *tfc_metrics_categorical_accuracy_new(const tfc_metric_opts *o);
TFC_API tfc_metric *tfc_metrics_sparse_categorical_accuracy_new(const tfc_metric_opts *o);
TFC_API tfc_metric *tfc_metrics_top_k_categorical_accuracy_new(const tfc_metric_opts *o);
TFC_API tfc_metric *tfc_metrics_mean_squared_error_new(const tfc_metric_opts *o);
TFC_API tfc_metric *tfc_metrics_precision_new(const tfc_metric_opts *o);
TFC_API tfc_metric *tfc_metrics_recall_new(const tfc_metric_opts *o);
TFC_API tfc_metric *tfc_metrics_auc_new(const tfc_metric_opts *o);
#define tfc_metrics_mean(...) tfc_metrics_mean_new(&(tfc_metric_opts){__VA_ARGS__})
#define tfc_metrics_accuracy(...) tfc_metrics_accuracy_new(&(tfc_metric_opts){__VA_ARGS__})
#define tfc_metrics_binary_accuracy(...) tfc_metrics_binary_accuracy_new(&(tfc_metric_opts){__VA_ARGS__})
#define tfc_metrics_categorical_accuracy(...) tfc_metrics_categorical_accuracy_new(&(tfc_metric_opts){__VA_ARGS__})
#define tfc_metrics_sparse_categorical_accuracy(...) tfc_metrics_sparse_categorical_accuracy_new(&(tfc_metric_opts){__VA_ARGS__})
#define tfc_metrics_top_k_categorical_accuracy(...) tfc_metrics_top_k_categorical_accuracy_new(&(tfc_metric_opts){__VA_ARGS__})
#define tfc_metrics_mean_squared_error(...) tfc_metrics_mean_squared_error_new(&(tfc_metric_opts){__VA_ARGS__})
#define tfc_metrics_precision(...) tfc_metrics_precision_new(&(tfc_metric_opts){__VA_ARGS__})
#define tfc_metrics_recall(...) tfc_metrics_recall_new(&(tfc_metric_opts){__VA_ARGS__})
#define tfc_metrics_auc(...) tfc_metrics_auc_new(&(tfc_metric_opts){__VA_ARGS__})
/* tf.keras.metrics.get by name or class name ("accuracy"/"acc" is resolved against the loss by compile, as
 * Keras: sparse_categorical_accuracy for sparse labels, etc.). INVALID_ARGUMENT "Unknown metric function". */
TFC_API tfc_metric *tfc_metric_from_config(const char *name, const char *config_json, tfc_status *st);
TFC_API const char *tfc_metric_name(const tfc_metric *m);
/* Mean takes the values in y_pred (y_true ignored, may be NULL). */
TFC_API bool tfc_metric_update_state(tfc_metric *m, tfc_ctx *ctx, tfc_tensor *y_true, tfc_tensor *y_pred,
                                     tfc_tensor *sample_weight, tfc_status *st);
TFC_API double tfc_metric_result(const tfc_metric *m);
TFC_API void tfc_metric_reset_state(tfc_metric *m);
TFC_API void tfc_metric_free(tfc_metric *m);

#ifdef __cplusplus
}
#endif
#endif
