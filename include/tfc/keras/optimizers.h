/* tfc — Keras optimizers (tf.keras.optimizers, TensorFlow 2.4's OptimizerV2) and learning-rate schedules.
 * Defaults are Keras's: learning_rate 0.01 for SGD, 0.001 for the others; epsilon 1e-7; Adam beta_1 0.9,
 * beta_2 0.999; RMSprop rho 0.9; Adagrad initial_accumulator_value 0.1; Nadam schedule_decay 0.004. Updates
 * run the TensorFlow training ops (ResourceApplyAdam, ResourceApplyGradientDescent, ...) in place on the
 * variables, or ops composed as Keras composes them (Nadam, RMSprop without momentum). Slot variables are
 * created on the first apply. An optimizer is owned by its creator until passed to tfc_model_compile, which
 * takes it.
 *
 * Semantics are those of OptimizerV2 (tf_keras.optimizers.legacy.*): hyper-parameters held in float32, the
 * iteration count starting at 0, lr = schedule(iterations) / (1 + decay * iterations), clipping after
 * aggregation. AdamW follows the Keras 2.11+ (and Keras 3) AdamW: before each Adam step every variable is
 * decayed, var -= var * weight_decay * lr, with the step's learning rate (tfa's AdamW instead subtracts
 * weight_decay * var without lr). tfc_optimizer_from_config reads both Keras dialects: a config with
 * "is_legacy_optimizer": false (what tf_keras 2.11+ writes for keras.optimizers.*) gets that optimizer's
 * formulas, slot names and clipping rules. */
#ifndef TFC_KERAS_OPTIMIZERS_H
#define TFC_KERAS_OPTIMIZERS_H

#include "tfc/keras/layer.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tfc_optimizer tfc_optimizer;

/* ---- learning-rate schedules (tf.keras.optimizers.schedules) ----
 * A schedule maps the optimizer's iteration count (step, starting at 0) to a learning rate. Owned by the
 * optimizer it is given to. */
typedef struct tfc_lr_schedule tfc_lr_schedule;
typedef struct { double initial_learning_rate; int64_t decay_steps; double decay_rate; bool staircase; } tfc_exponential_decay_opts;
typedef struct { const int64_t *boundaries; int n_boundaries; const double *values; /* n_boundaries + 1 */ } tfc_piecewise_constant_decay_opts;
/* warmup (tf_keras 2.13+): with has_warmup_target, the rate rises linearly from initial_learning_rate to
 * warmup_target over warmup_steps, then decays from warmup_target. */
typedef struct { double initial_learning_rate; int64_t decay_steps; double alpha; double warmup_target; bool has_warmup_target; int64_t warmup_steps; } tfc_cosine_decay_opts;
/* tf.keras.optimizers.schedules.ExponentialDecay (initial * decay_rate ^ (step / decay_steps), floored with
 * staircase), PiecewiseConstantDecay (values[i] for step <= boundaries[i], the last value after; the arrays are
 * copied) and CosineDecay. A new schedule owned by the caller until given to an optimizer (learning_rate_schedule);
 * NULL only when out of memory. */
TFC_API tfc_lr_schedule *tfc_schedules_exponential_decay_new(const tfc_exponential_decay_opts *o);
TFC_API tfc_lr_schedule *tfc_schedules_piecewise_constant_decay_new(const tfc_piecewise_constant_decay_opts *o);
TFC_API tfc_lr_schedule *tfc_schedules_cosine_decay_new(const tfc_cosine_decay_opts *o);
#define tfc_schedules_exponential_decay(...) tfc_schedules_exponential_decay_new(&(tfc_exponential_decay_opts){__VA_ARGS__})
#define tfc_schedules_piecewise_constant_decay(...) tfc_schedules_piecewise_constant_decay_new(&(tfc_piecewise_constant_decay_opts){__VA_ARGS__})
#define tfc_schedules_cosine_decay(...) tfc_schedules_cosine_decay_new(&(tfc_cosine_decay_opts){__VA_ARGS__})
/* A user schedule: fn(step, user) returns the learning rate. */
TFC_API tfc_lr_schedule *tfc_schedules_function(double (*fn)(int64_t step, void *user), void *user);
/* The learning rate of schedule s at the 0-based optimizer step; tfc_lr_schedule_free releases a schedule not given
 * to an optimizer (NULL-safe). */
TFC_API double tfc_lr_schedule_value(const tfc_lr_schedule *s, int64_t step);
TFC_API void tfc_lr_schedule_free(tfc_lr_schedule *s);

/* Gradient hooks of TensorFlow 2.4's OptimizerV2 (apply_gradients: aggregate, then _transform_gradients):
 * the aggregator combines gradients (default: identity on one replica); then clipvalue, clipnorm and
 * global_clipnorm clip, in that order; then each user transformer rewrites the list in order. Keras rejects
 * clipping together with gradient_transformers (ValueError), and so does tfc (INVALID_ARGUMENT at the first
 * apply). A hook may replace grads[i] with a new tensor (scope-owned) or NULL (that variable is then not
 * updated). */
typedef bool (*tfc_gradient_hook)(void *user, tfc_ctx *ctx, tfc_tensor **grads, tfc_variable *const *vars, int n,
                                  tfc_status *st);

#define TFC_OPTIMIZER_COMMON_OPTS                                                                          \
    const char *name;                                                                                      \
    double learning_rate;             /* 0 = the optimizer's Keras default */                              \
    tfc_lr_schedule *learning_rate_schedule; /* overrides learning_rate; owned by the optimizer */          \
    double clipnorm, clipvalue, global_clipnorm; /* 0 = off */                                             \
    double decay;                     /* OptimizerV2's time decay of the learning rate (0 = none) */       \
    tfc_gradient_hook gradient_aggregator;                                                                 \
    tfc_gradient_hook gradient_transformers[4];                                                            \
    void *hook_user

typedef struct { TFC_OPTIMIZER_COMMON_OPTS; double momentum; bool nesterov; } tfc_sgd_opts;
typedef struct { TFC_OPTIMIZER_COMMON_OPTS; double beta_1, beta_2, epsilon; bool amsgrad; } tfc_adam_opts;
typedef struct { TFC_OPTIMIZER_COMMON_OPTS; double beta_1, beta_2, epsilon; bool amsgrad; double weight_decay; } tfc_adamw_opts;
typedef struct { TFC_OPTIMIZER_COMMON_OPTS; double rho, momentum, epsilon; bool centered; bool has_rho; } tfc_rmsprop_opts;
typedef struct { TFC_OPTIMIZER_COMMON_OPTS; double initial_accumulator_value, epsilon; bool has_initial_accumulator_value; } tfc_adagrad_opts;
typedef struct { TFC_OPTIMIZER_COMMON_OPTS; double beta_1, beta_2, epsilon; } tfc_adamax_opts;
typedef struct { TFC_OPTIMIZER_COMMON_OPTS; double beta_1, beta_2, epsilon; double schedule_decay; bool has_schedule_decay; } tfc_nadam_opts;
/* tf.keras.optimizers.SGD(learning_rate, momentum, nesterov), Adam(beta_1, beta_2, epsilon, amsgrad),
 * AdamW(weight_decay), RMSprop(rho, momentum, epsilon, centered), Adagrad(initial_accumulator_value, epsilon),
 * Adamax, Nadam; zero options take Keras's defaults, opts may be NULL. A new optimizer owned by the caller
 * (tfc_optimizer_free) until given to tfc_model_compile; NULL only when out of memory. Bad hyper-parameters (a
 * negative learning rate, momentum outside [0, 1]) are INVALID_ARGUMENT at the first apply, as Keras's constructor
 * would raise. */
TFC_API tfc_optimizer *tfc_optimizers_sgd_new(const tfc_sgd_opts *o);
TFC_API tfc_optimizer *tfc_optimizers_adam_new(const tfc_adam_opts *o);
TFC_API tfc_optimizer *tfc_optimizers_adamw_new(const tfc_adamw_opts *o); /* weight_decay 0 = 0.004 (Keras) */
TFC_API tfc_optimizer *tfc_optimizers_rmsprop_new(const tfc_rmsprop_opts *o);
TFC_API tfc_optimizer *tfc_optimizers_adagrad_new(const tfc_adagrad_opts *o);
TFC_API tfc_optimizer *tfc_optimizers_adamax_new(const tfc_adamax_opts *o);
TFC_API tfc_optimizer *tfc_optimizers_nadam_new(const tfc_nadam_opts *o);
#define tfc_optimizers_sgd(...) tfc_optimizers_sgd_new(&(tfc_sgd_opts){__VA_ARGS__})
#define tfc_optimizers_adam(...) tfc_optimizers_adam_new(&(tfc_adam_opts){__VA_ARGS__})
#define tfc_optimizers_adamw(...) tfc_optimizers_adamw_new(&(tfc_adamw_opts){__VA_ARGS__})
#define tfc_optimizers_rmsprop(...) tfc_optimizers_rmsprop_new(&(tfc_rmsprop_opts){__VA_ARGS__})
#define tfc_optimizers_adagrad(...) tfc_optimizers_adagrad_new(&(tfc_adagrad_opts){__VA_ARGS__})
#define tfc_optimizers_adamax(...) tfc_optimizers_adamax_new(&(tfc_adamax_opts){__VA_ARGS__})
#define tfc_optimizers_nadam(...) tfc_optimizers_nadam_new(&(tfc_nadam_opts){__VA_ARGS__})

/* tf.keras.optimizers.get / deserialize: by Keras name ("sgd", "adam", "adamw", "rmsprop", "adagrad", "adamax",
 * "nadam") or class name ("Adam", "Custom>Adam") with defaults, or with a config JSON (NULL = defaults): the
 * get_config dict of either Keras dialect, or a whole serialized object {"class_name", "config", "module"?}
 * (class_name may then be NULL). A learning_rate that is a serialized schedule is deserialized. Keys Keras
 * does not use for the class are ignored. INVALID_ARGUMENT for unknown names, bad values, or what Keras's
 * constructor rejects; UNIMPLEMENTED for use_ema. */
TFC_API tfc_optimizer *tfc_optimizer_from_config(const char *class_name, const char *config_json, tfc_status *st);
/* Keras's get_config as JSON in the optimizer's dialect (legacy: {"name", "learning_rate", "decay", ...};
 * new: {"name", "weight_decay", "clipnorm", ..., "is_legacy_optimizer": false, ...}); caller frees (tfc_free). */
TFC_API char *tfc_optimizer_get_config(const tfc_optimizer *o, tfc_status *st);
/* optimizer.name (the name option, or Keras's class default such as "Adam") and the Keras class name ("Adam",
 * "SGD"); borrowed strings valid while the optimizer lives. */
TFC_API const char *tfc_optimizer_name(const tfc_optimizer *o);
TFC_API const char *tfc_optimizer_class_name(const tfc_optimizer *o);
TFC_API void tfc_optimizer_free(tfc_optimizer *o); /* NULL-safe; frees slots and the schedule */

/* optimizer.apply_gradients(zip(grads, vars)): NULL gradients are skipped (as TF with a warning); all NULL is
 * INVALID_ARGUMENT "No gradients provided for any variable". Increments iterations. INVALID_ARGUMENT when a
 * gradient's shape or dtype differs from its variable's or a variable is not floating. Runs with tapes paused
 * (the updates are not recorded); temporaries are released before returning. */
TFC_API bool tfc_optimizer_apply_gradients(tfc_optimizer *o, tfc_ctx *ctx, tfc_tensor *const *grads,
                                           tfc_variable *const *vars, int n, tfc_status *st);
/* optimizer.minimize(loss, var_list, tape): gradients of loss from tape (which must have recorded the loss; it
 * is consumed: minimize frees it, also on failure), then apply_gradients. */
TFC_API bool tfc_optimizer_minimize(tfc_optimizer *o, tfc_ctx *ctx, tfc_tensor *loss, tfc_variable *const *vars,
                                    int n, tfc_tape *tape, tfc_status *st);
TFC_API int64_t tfc_optimizer_iterations(const tfc_optimizer *o);
TFC_API double tfc_optimizer_learning_rate(const tfc_optimizer *o);    /* current value (schedule applied) */
TFC_API void tfc_optimizer_set_learning_rate(tfc_optimizer *o, double lr); /* replaces a schedule too */
/* Optimizer state in Keras's optimizer.weights order: iterations, (Nadam's momentum_cache,) then the slots in
 * creation order, which is Keras's: legacy optimizers create one slot kind for all variables before the next
 * (m of every variable, then v, ...); the new family interleaves per variable for Adam/AdamW/Adamax/Nadam.
 * Writes up to max borrowed variables and returns the count (0 before the first apply). */
TFC_API int tfc_optimizer_variables(const tfc_optimizer *o, tfc_variable **out, int max);
/* optimizer.get_slot(var, name): the slot variable ("m", "v", "vhat", "momentum", "rms", "mg", "accumulator";
 * new family: "m", "v", "vhat", "u", "velocity", "average_gradient", "accumulator"), borrowed; NULL if none. */
TFC_API tfc_variable *tfc_optimizer_get_slot(const tfc_optimizer *o, const tfc_variable *var, const char *slot_name);

#ifdef __cplusplus
}
#endif
#endif
