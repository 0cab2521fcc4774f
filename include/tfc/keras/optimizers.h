/* tfc — Keras optimizers (tf.keras.optimizers, TensorFlow 2.4's OptimizerV2) and learning-rate schedules.
 * Defaults are Keras's: learning_rate 0.01 for SGD, 0.001 for the others; epsilon 1e-7; Adam beta_1 0.9,
 * beta_2 0.999; RMSprop rho 0.9; Adagrad initial_accumulator_value 0.1. Updates run the TensorFlow
 * training ops (ResourceApplyAdam, ResourceApplyGradientDescent, ...) in place on the variables.
 * Slot variables are created on the first apply. An optimizer is owned by its creator until passed to
 * tfc_model_compile, which takes it. */
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
typedef struct { double initial_learning_rate; int64_t decay_steps; double alpha; } tfc_cosine_decay_opts;
TFC_API tfc_lr_schedule *tfc_schedules_exponential_decay_new(const tfc_exponential_decay_opts *o);
TFC_API tfc_lr_schedule *tfc_schedules_piecewise_constant_decay_new(const tfc_piecewise_constant_decay_opts *o);
TFC_API tfc_lr_schedule *tfc_schedules_cosine_decay_new(const tfc_cosine_decay_opts *o);
#define tfc_schedules_exponential_decay(...) tfc_schedules_exponential_decay_new(&(tfc_exponential_decay_opts){__VA_ARGS__})
#define tfc_schedules_piecewise_constant_decay(...) tfc_schedules_piecewise_constant_decay_new(&(tfc_piecewise_constant_decay_opts){__VA_ARGS__})
#define tfc_schedules_cosine_decay(...) tfc_schedules_cosine_decay_new(&(tfc_cosine_decay_opts){__VA_ARGS__})
/* A user schedule: fn(step, user) returns the learning rate. */
TFC_API tfc_lr_schedule *tfc_schedules_function(double (*fn)(int64_t step, void *user), void *user);
TFC_API double tfc_lr_schedule_value(const tfc_lr_schedule *s, int64_t step);
TFC_API void tfc_lr_schedule_free(tfc_lr_schedule *s);

/* Gradient hooks of TensorFlow 2.4's OptimizerV2: the aggregator combines gradients (default: identity on one
 * replica), then each transformer rewrites the list in order (clipping is implemented as transformers run
 * after user ones, as TF). Each may replace grads[i] with a new tensor (scope-owned) or NULL. */
typedef bool (*tfc_gradient_hook)(void *user, tfc_ctx *ctx, tfc_tensor **grads, tfc_variable *const *vars, int n,
                                  tfc_status *st);

#define TFC_OPTIMIZER_COMMON_OPTS                                                                          \
    const char *name;                                                                                      \
    double learning_rate;             /* 0 = the optimizer's Keras default */                              \
    tfc_lr_schedule *learning_rate_schedule; /* overrides learning_rate; owned by the optimizer */          \
    double clipnorm, clipvalue, global_clipnorm; /* 0 = off */                                             \
    tfc_gradient_hook gradient_aggregator;                                                                 \
    tfc_gradient_hook gradient_transformers[4];                                                            \
    void *hook_user

typedef struct { TFC_OPTIMIZER_COMMON_OPTS; double momentum; bool nesterov; } tfc_sgd_opts;
typedef struct { TFC_OPTIMIZER_COMMON_OPTS; double beta_1, beta_2, epsilon; bool amsgrad; } tfc_adam_opts;
typedef struct { TFC_OPTIMIZER_COMMON_OPTS; double beta_1, beta_2, epsilon; bool amsgrad; double weight_decay; } tfc_adamw_opts;
typedef struct { TFC_OPTIMIZER_COMMON_OPTS; double rho, momentum, epsilon; bool centered; bool has_rho; } tfc_rmsprop_opts;
typedef struct { TFC_OPTIMIZER_COMMON_OPTS; double initial_accumulator_value, epsilon; bool has_initial_accumulator_value; } tfc_adagrad_opts;
typedef struct { TFC_OPTIMIZER_COMMON_OPTS; double beta_1, beta_2, epsilon; } tfc_adamax_opts;
typedef struct { TFC_OPTIMIZER_COMMON_OPTS; double beta_1, beta_2, epsilon; } tfc_nadam_opts;
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

/* tf.keras.optimizers.get: by Keras name ("sgd", "adam", "adamw", "rmsprop", "adagrad", "adamax", "nadam")
 * with defaults, or deserialize with a config JSON (NULL = defaults). INVALID_ARGUMENT for unknown names. */
TFC_API tfc_optimizer *tfc_optimizer_from_config(const char *class_name, const char *config_json, tfc_status *st);
TFC_API char *tfc_optimizer_get_config(const tfc_optimizer *o, tfc_status *st); /* JSON; caller frees (tfc_free) */
TFC_API void tfc_optimizer_free(tfc_optimizer *o); /* NULL-safe; frees slots and the schedule */

/* optimizer.apply_gradients(zip(grads, vars)): NULL gradients are skipped (as TF with a warning). Increments
 * iterations. INVALID_ARGUMENT when a gradient's shape or dtype differs from its variable's. */
TFC_API bool tfc_optimizer_apply_gradients(tfc_optimizer *o, tfc_ctx *ctx, tfc_tensor *const *grads,
                                           tfc_variable *const *vars, int n, tfc_status *st);
/* optimizer.minimize(loss, var_list, tape): gradients of loss from tape (which must have recorded the loss and
 * is consumed), then apply_gradients. */
TFC_API bool tfc_optimizer_minimize(tfc_optimizer *o, tfc_ctx *ctx, tfc_tensor *loss, tfc_variable *const *vars,
                                    int n, tfc_tape *tape, tfc_status *st);
TFC_API int64_t tfc_optimizer_iterations(const tfc_optimizer *o);
TFC_API double tfc_optimizer_learning_rate(const tfc_optimizer *o);    /* current value (schedule applied) */
TFC_API void tfc_optimizer_set_learning_rate(tfc_optimizer *o, double lr); /* replaces a schedule too */
/* Optimizer state in Keras's get_weights order (iterations, then slots per variable in creation order). */
TFC_API int tfc_optimizer_variables(const tfc_optimizer *o, tfc_variable **out, int max);

#ifdef __cplusplus
}
#endif
#endif
