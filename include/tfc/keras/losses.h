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
    const char *name;        /* NULL = Keras's default ("mean_squared_error", "huber_loss", ...) */
    const char *reduction;   /* NULL = "auto" (which is "sum_over_batch_size"), "sum", "none" */
    bool from_logits;        /* cross-entropies */
    double label_smoothing;  /* BinaryCrossentropy, CategoricalCrossentropy */
    double delta;            /* Huber (0 = 1.0) */
} tfc_loss_opts;
/* Loss objects of tf.keras.losses: MeanSquaredError, MeanAbsoluteError, Huber, BinaryCrossentropy,
 * CategoricalCrossentropy, SparseCategoricalCrossentropy (integer labels [batch, ...] against [batch, ..., classes]
 * predictions), KLDivergence. opts may be NULL (Keras's defaults). A new loss owned by the caller (tfc_loss_free)
 * until given to tfc_model_compile, which takes it; NULL only when out of memory.
 * Errors of a call (tfc_loss_call) are INVALID_ARGUMENT for shapes that do not match and labels out of range. */
TFC_API tfc_loss *tfc_losses_mean_squared_error_new(const tfc_loss_opts *o);
TFC_API tfc_loss *tfc_losses_mean_absolute_error_new(const tfc_loss_opts *o);
TFC_API tfc_loss *tfc_losses_huber_new(const tfc_loss_opts *o);
TFC_API tfc_loss *tfc_losses_binary_crossentropy_new(const tfc_loss_opts *o);
TFC_API tfc_loss *tfc_losses_categorical_crossentropy_new(const tfc_loss_opts *o);
TFC_API tfc_loss *tfc_losses_sparse_categorical_crossentropy_new(const tfc_loss_opts *o);
TFC_API tfc_loss *tfc_losses_kl_divergence_new(const tfc_loss_opts *o);
/* Also: MeanAbsolutePercentageError, MeanSquaredLogarithmicError, Poisson, LogCosh, Hinge, SquaredHinge,
 * CategoricalHinge, CosineSimilarity (axis -1), with Keras's formulas. */
TFC_API tfc_loss *tfc_losses_mean_absolute_percentage_error_new(const tfc_loss_opts *o);
TFC_API tfc_loss *tfc_losses_mean_squared_logarithmic_error_new(const tfc_loss_opts *o);
TFC_API tfc_loss *tfc_losses_poisson_new(const tfc_loss_opts *o);
TFC_API tfc_loss *tfc_losses_log_cosh_new(const tfc_loss_opts *o);
TFC_API tfc_loss *tfc_losses_hinge_new(const tfc_loss_opts *o);
TFC_API tfc_loss *tfc_losses_squared_hinge_new(const tfc_loss_opts *o);
TFC_API tfc_loss *tfc_losses_categorical_hinge_new(const tfc_loss_opts *o);
TFC_API tfc_loss *tfc_losses_cosine_similarity_new(const tfc_loss_opts *o);
#define tfc_losses_mean_squared_error(...) tfc_losses_mean_squared_error_new(&(tfc_loss_opts){__VA_ARGS__})
#define tfc_losses_mean_absolute_error(...) tfc_losses_mean_absolute_error_new(&(tfc_loss_opts){__VA_ARGS__})
#define tfc_losses_huber(...) tfc_losses_huber_new(&(tfc_loss_opts){__VA_ARGS__})
#define tfc_losses_binary_crossentropy(...) tfc_losses_binary_crossentropy_new(&(tfc_loss_opts){__VA_ARGS__})
#define tfc_losses_categorical_crossentropy(...) tfc_losses_categorical_crossentropy_new(&(tfc_loss_opts){__VA_ARGS__})
#define tfc_losses_sparse_categorical_crossentropy(...) tfc_losses_sparse_categorical_crossentropy_new(&(tfc_loss_opts){__VA_ARGS__})
#define tfc_losses_kl_divergence(...) tfc_losses_kl_divergence_new(&(tfc_loss_opts){__VA_ARGS__})
#define tfc_losses_mean_absolute_percentage_error(...) tfc_losses_mean_absolute_percentage_error_new(&(tfc_loss_opts){__VA_ARGS__})
#define tfc_losses_mean_squared_logarithmic_error(...) tfc_losses_mean_squared_logarithmic_error_new(&(tfc_loss_opts){__VA_ARGS__})
#define tfc_losses_poisson(...) tfc_losses_poisson_new(&(tfc_loss_opts){__VA_ARGS__})
#define tfc_losses_log_cosh(...) tfc_losses_log_cosh_new(&(tfc_loss_opts){__VA_ARGS__})
#define tfc_losses_hinge(...) tfc_losses_hinge_new(&(tfc_loss_opts){__VA_ARGS__})
#define tfc_losses_squared_hinge(...) tfc_losses_squared_hinge_new(&(tfc_loss_opts){__VA_ARGS__})
#define tfc_losses_categorical_hinge(...) tfc_losses_categorical_hinge_new(&(tfc_loss_opts){__VA_ARGS__})
#define tfc_losses_cosine_similarity(...) tfc_losses_cosine_similarity_new(&(tfc_loss_opts){__VA_ARGS__})
/* tf.keras.losses.get / deserialize: "mse"/"mean_squared_error", "mae"/"mean_absolute_error", "mape", "msle",
 * "huber" ("huber_loss"), "binary_crossentropy" ("bce"), "categorical_crossentropy",
 * "sparse_categorical_crossentropy", "kld"/"kl_divergence"/"kullback_leibler_divergence", "poisson",
 * "log_cosh"/"logcosh", "hinge", "squared_hinge", "categorical_hinge", "cosine_similarity" (a function name:
 * the loss is named after the function, as compile wraps it), or class names ("MeanSquaredError", ...) with a
 * config JSON (may be NULL): Keras's get_config dict ({"reduction": "auto", "name": ..., "from_logits": ...})
 * or a whole serialized object {"class_name", "config", "module"?} (name may then be NULL). The config's "fn"
 * key is ignored. INVALID_ARGUMENT "Unknown loss function: x" or for bad values; UNIMPLEMENTED for
 * ignore_class and axis other than -1. */
TFC_API tfc_loss *tfc_loss_from_config(const char *name, const char *config_json, tfc_status *st);
/* Keras's get_config: {"reduction", "name", class keys..., "fn"}; caller frees (tfc_free). */
TFC_API char *tfc_loss_get_config(const tfc_loss *l, tfc_status *st);
TFC_API const char *tfc_loss_name(const tfc_loss *l);
TFC_API void tfc_loss_free(tfc_loss *l);
/* loss(y_true, y_pred, sample_weight): a scalar (or per-sample tensor for reduction "none") of y_pred's dtype
 * (float32 for Huber, as Keras casts to floatx). The result is owned by the current scope (else the caller);
 * temporaries are released. Recorded on active tapes, so tfc_tape_gradient differentiates it.
 * INVALID_ARGUMENT naming the loss for incompatible shapes (y_true/y_pred, sample_weight) or, for sparse labels,
 * labels outside [0, classes) ("sparse_categorical_crossentropy: Received a label value of 5 which is outside
 * the valid range of [0, 3). ..."). */
TFC_API tfc_tensor *tfc_loss_call(const tfc_loss *l, tfc_ctx *ctx, tfc_tensor *y_true, tfc_tensor *y_pred,
                                  tfc_tensor *sample_weight, tfc_status *st);
/* Keras's _keras_logits: when y_pred is the output of a "softmax" or "sigmoid" activation (keras.activations,
 * so also Dense(..., activation="softmax")), tf_keras's cross-entropies (binary, categorical, sparse; with
 * from_logits False) compute from the activation's input instead, as if from_logits were True (for any of the
 * two activations: Keras does not check which). Training code passes that input as logits; with logits NULL,
 * or for other losses, this is tfc_loss_call. */
TFC_API tfc_tensor *tfc_loss_call_logits(const tfc_loss *l, tfc_ctx *ctx, tfc_tensor *y_true, tfc_tensor *y_pred,
                                         tfc_tensor *logits, tfc_tensor *sample_weight, tfc_status *st);

/* ---- metrics ----
 * Stateful: update_state accumulates (weighted), result reads, reset_state clears. Values are accumulated in
 * float64 host memory (not recorded on tapes), from the float32 values Keras computes (inputs are cast to
 * float32 as Keras's metric dtype). sample_weight (may be NULL) is squeezed/expanded by one dim and broadcast
 * as Keras's Reduce / update_confusion_matrix_variables. A failed update_state (INVALID_ARGUMENT naming the
 * metric and the shapes) leaves the state unchanged. */
typedef struct tfc_metric tfc_metric;
typedef struct {
    const char *name;
    double threshold;          /* BinaryAccuracy 0.5 default; Precision/Recall 0.5 */
    bool has_threshold;
    int64_t k;                 /* TopKCategoricalAccuracy (0 = 5) */
    int64_t num_thresholds;    /* AUC (0 = 200) */
    const char *curve;         /* AUC: "ROC" (default) or "PR" */
} tfc_metric_opts;
/* Mean: weighted mean of the values given as y_pred. Accuracy: y_true == y_pred. BinaryAccuracy: y_true ==
 * (y_pred > threshold). CategoricalAccuracy: argmax(y_true) == argmax(y_pred) (last axis).
 * SparseCategoricalAccuracy: y_true (class ids, [batch] or [batch, 1]) == argmax(y_pred). TopK / SparseTopK:
 * the label is among the k largest predictions (tf.math.in_top_k: ties count as in). MeanSquaredError: the
 * per-sample MSE. Precision = TP / (TP + FP), Recall = TP / (TP + FN) at threshold (y_pred > threshold is
 * positive; y_true != 0 is a positive label). AUC: Keras's approximate AUC over num_thresholds thresholds,
 * curve ROC or PR, summation "interpolation". Names default to Keras's ("accuracy", "auc", ...). */
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
TFC_API tfc_metric *tfc_metrics_sparse_top_k_categorical_accuracy_new(const tfc_metric_opts *o);
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
#define tfc_metrics_sparse_top_k_categorical_accuracy(...) tfc_metrics_sparse_top_k_categorical_accuracy_new(&(tfc_metric_opts){__VA_ARGS__})
/* tf.keras.metrics.get / deserialize by function name ("accuracy", "acc", "binary_accuracy", "mse", "mae",
 * "binary_crossentropy", "kld", "top_k_categorical_accuracy", ...; the metric is named after that string, as
 * compile names it) or class name ("Accuracy", "AUC", "Precision", "MeanSquaredError", ...; default names)
 * with an optional config JSON: Keras's get_config dict ({"name", "dtype", "threshold"/"k"/"thresholds"/
 * "top_k"/"class_id"/"num_thresholds"/"curve"/"summation_method"/"from_logits"...}) or a whole serialized
 * object {"class_name", "config"} (name may then be NULL). INVALID_ARGUMENT "Unknown metric function: x";
 * UNIMPLEMENTED for AUC multi_label / label_weights and Precision/Recall with several thresholds. */
TFC_API tfc_metric *tfc_metric_from_config(const char *name, const char *config_json, tfc_status *st);
/* Keras compile's metric lookup (compile_utils.get_metric_function): "accuracy"/"acc" become binary_accuracy
 * when y_pred's last dim is 1, sparse_categorical_accuracy when y_true has lower rank than y_pred or a last dim
 * of 1 (and y_pred's is > 1), else categorical_accuracy; "crossentropy"/"ce" likewise; the metric keeps the
 * given name. Other names as tfc_metric_from_config. Shapes include the batch dim. */
TFC_API tfc_metric *tfc_metric_resolve(const char *name, const tfc_shape *y_true, const tfc_shape *y_pred,
                                       tfc_status *st);
/* Keras's get_config ({"name", "dtype": "float32", ...}); caller frees (tfc_free). */
TFC_API char *tfc_metric_get_config(const tfc_metric *m, tfc_status *st);
TFC_API const char *tfc_metric_name(const tfc_metric *m);
TFC_API const char *tfc_metric_class_name(const tfc_metric *m);
/* Mean takes the values in y_pred (y_true ignored, may be NULL). Inputs are borrowed. */
TFC_API bool tfc_metric_update_state(tfc_metric *m, tfc_ctx *ctx, tfc_tensor *y_true, tfc_tensor *y_pred,
                                     tfc_tensor *sample_weight, tfc_status *st);
TFC_API double tfc_metric_result(const tfc_metric *m); /* 0 before any update (divide_no_nan) */
TFC_API void tfc_metric_reset_state(tfc_metric *m);
TFC_API void tfc_metric_free(tfc_metric *m);

#ifdef __cplusplus
}
#endif
#endif
