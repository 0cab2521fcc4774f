/* Internal: the optimizer object shared by src/keras/optimizers.c (the OptimizerV2 base: iterations, slots,
 * gradient hooks, clipping, configs), the per-class files src/keras/optimizer_<name>.c and schedules.c. */
#ifndef TFC_KERAS_OPTIMIZER_INTERNAL_H
#define TFC_KERAS_OPTIMIZER_INTERNAL_H

#include "keras/keras_internal.h"

#define TFC_OPT_MAX_SLOTS 3

/* The slots of one model variable (keyed by the variable's id, so a freed variable's address reused by a new
 * one never inherits its state). */
typedef struct tfc_opt_slots {
    uint64_t var_id;
    tfc_variable *slot[TFC_OPT_MAX_SLOTS]; /* owned; NULL until created */
} tfc_opt_slots;

/* The update of one variable: the coefficients an optimizer computes once per step and dtype. */
typedef struct tfc_opt_step {
    tfc_dtype dt;
    int64_t iterations;  /* before this step's increment */
    double lr;           /* learning rate for this step (schedule and decay applied), in dt's precision */
} tfc_opt_step;

typedef struct tfc_opt_class tfc_opt_class;

struct tfc_optimizer {
    const tfc_opt_class *cls;
    char *name;
    /* Keras has two optimizer families with the same class names: TensorFlow 2.4's OptimizerV2 (tf_keras's
     * keras.optimizers.legacy, the default here) and the Keras 2.11+ optimizer (keras.optimizers, configs with
     * "is_legacy_optimizer": false). They differ in a few update formulas (RMSprop without momentum, Adagrad,
     * Nadam), slot names and order, clipping precedence and weight decay; from_config picks the family of the
     * config it reads. AdamW exists only in the new family. */
    bool legacy;
    double learning_rate;
    tfc_lr_schedule *schedule;
    double decay;        /* legacy time decay: lr / (1 + decay * iterations); Nadam: schedule_decay */
    double clipnorm, clipvalue, global_clipnorm;
    bool has_clipnorm, has_clipvalue, has_global_clipnorm;
    double weight_decay; /* new family: decoupled weight decay, var -= var * weight_decay * lr */
    bool has_weight_decay;
    tfc_gradient_hook gradient_aggregator;
    tfc_gradient_hook gradient_transformers[4];
    int n_transformers;
    void *hook_user;
    /* hyper-parameters (the classes read the ones they use) */
    double beta_1, beta_2, epsilon, rho, momentum, initial_accumulator_value;
    bool amsgrad, nesterov, centered;
    /* state */
    tfc_ctx *ctx;                 /* where the optimizer's variables live (set at the first apply) */
    tfc_variable *iterations;     /* int64 scalar, owned */
    tfc_variable *extra;          /* legacy Nadam's momentum_cache / new Nadam's u_product (owned) */
    tfc_opt_slots *slots;
    int n_slots, cap_slots;
    char slot_names[TFC_OPT_MAX_SLOTS][24]; /* name of each slot kind, set when first created */
    tfc_variable **weights;       /* Keras's optimizer.weights order (borrowed from the fields above) */
    int n_weights, cap_weights;
    /* coefficients a class's prepare computed for this step, per variable dtype (reset each apply) */
    int n_prep;
    tfc_dtype prep_dt[4];
    double prep[4][8];
    /* scalar inputs a class made for this step's ops (Adam: beta powers, lr, betas, epsilon), shared by the
     * variables of dtype consts_dt while consts_key (what they were made from) holds; owned (NULL: none) */
    tfc_tensor *consts[6];
    tfc_dtype consts_dt;
    double consts_key[6];
    /* a LossScaleOptimizer (optimizer_loss_scale.c): the wrapped optimizer (owned) and the loss-scale state */
    tfc_optimizer *inner;
    bool ls_dynamic;
    float ls_scale;
    double ls_initial;
    int64_t ls_counter, ls_growth_steps;
};

/* The prepared coefficients of dtype dt for this step (a new zeroed row when add; NULL if none / full). */
double *tfc_opt_prep(tfc_optimizer *o, tfc_dtype dt, bool add);

/* Applies a constructor's TFC_OPTIMIZER_COMMON_OPTS (NULL when out of memory; the schedule is then freed). */
#define TFC_OPT_NEW(cls, opts)                                                                                 \
    tfc_opt_alloc((cls), (opts)->name, (opts)->learning_rate, (opts)->learning_rate_schedule, (opts)->clipnorm, \
                  (opts)->clipvalue, (opts)->global_clipnorm, (opts)->gradient_aggregator,                     \
                  (opts)->gradient_transformers, (opts)->hook_user)

struct tfc_opt_class {
    const char *class_name;       /* Keras's: "Adam" */
    double default_lr;
    /* Creates the slots of variables that lack them, in Keras's creation order. */
    bool (*create_slots)(tfc_optimizer *o, tfc_ctx *ctx, tfc_variable *const *vars, int n, tfc_status *st);
    /* Once per apply_gradients, before any update (legacy Nadam advances its momentum cache here). */
    bool (*prepare)(tfc_optimizer *o, tfc_ctx *ctx, tfc_dtype dt, const tfc_opt_step *s, tfc_status *st);
    /* Updates one variable with its (transformed) gradient. Runs inside a scope. */
    bool (*apply_dense)(tfc_optimizer *o, tfc_ctx *ctx, tfc_tensor *grad, tfc_variable *var, tfc_opt_slots *slots,
                        const tfc_opt_step *s, tfc_status *st);
    /* Adds the class's config keys after the common ones. */
    bool (*get_config)(const tfc_optimizer *o, cJSON *cfg);
    /* Reads the class's keys from a config (absent keys keep the defaults already set). */
    bool (*from_config)(tfc_optimizer *o, const cJSON *cfg, tfc_status *st);
    /* Keras's constructor checks (ValueError there): INVALID_ARGUMENT here, at the first apply. */
    bool (*validate)(const tfc_optimizer *o, tfc_status *st);
};

extern const tfc_opt_class tfc_opt_loss_scale; /* the wrapper: no functions of its own */
extern const tfc_opt_class tfc_opt_sgd, tfc_opt_adam, tfc_opt_adamw, tfc_opt_rmsprop, tfc_opt_adagrad,
    tfc_opt_adamax, tfc_opt_nadam;

/* ---- base helpers (optimizers.c) ---- */
/* True when o's update can be traced into a graph function and stay right on later calls: what it computes
 * on the host per step must not change between steps (no learning-rate schedule, no legacy time decay, not
 * Nadam's momentum cache, no loss scaling, no gradient hooks). Adam's and Adamax's beta powers are ops on the
 * iterations variable inside a trace (tfc_opt_beta_power). */
bool tfc_optimizer_traceable(const tfc_optimizer *o);
/* Keras's optimizer.build(var_list): creates iterations and the slots of vars (in apply_gradients's order)
 * eagerly and without a step, so that a traced step only reads and updates them and saved optimizer state can
 * be assigned before training continues (saving_keras3.c). */
bool tfc_optimizer_build(tfc_optimizer *o, tfc_ctx *ctx, tfc_variable *const *vars, int n, tfc_status *st);
/* beta^t, t = iterations + 1, of dtype p->dt (rounded as the eager value: pow in float64, then to dt): a
 * scope-owned scalar, computed on the host eagerly and from the iterations variable inside a trace. */
tfc_tensor *tfc_opt_beta_power(tfc_optimizer *o, tfc_ctx *ctx, const tfc_opt_step *p, double beta, tfc_status *st);
/* A skipped step: iterations advance (created if need be), nothing else changes. */
bool tfc_opt_skip_step(tfc_optimizer *o, tfc_ctx *ctx, tfc_status *st);
/* A LossScaleOptimizer's get_config (tfc_free). */
char *tfc_opt_loss_scale_config(const tfc_optimizer *o, tfc_status *st);
/* A LossScaleOptimizer's apply_gradients (optimizer_loss_scale.c), given unscaled gradients. */
bool tfc_opt_loss_scale_apply(tfc_optimizer *o, tfc_ctx *ctx, tfc_tensor *const *grads, tfc_variable *const *vars,
                              int n, tfc_status *st);
/* A new optimizer of cls with the common options applied (NULL when out of memory). */
tfc_optimizer *tfc_opt_alloc(const tfc_opt_class *cls, const char *name, double learning_rate,
                             tfc_lr_schedule *schedule, double clipnorm, double clipvalue, double global_clipnorm,
                             tfc_gradient_hook aggregator, const tfc_gradient_hook *transformers, void *hook_user);
/* Creates slot `kind` (named slot_name, filled with init) for each of vars that lacks it, in order. */
bool tfc_opt_add_slot(tfc_optimizer *o, tfc_ctx *ctx, tfc_variable *const *vars, int n, int kind,
                      const char *slot_name, double init, tfc_status *st);
/* The slot record of a variable (NULL if none). */
tfc_opt_slots *tfc_opt_find_slots(const tfc_optimizer *o, const tfc_variable *var);
/* Adds a variable to optimizer.weights (order of creation). */
bool tfc_opt_track_weight(tfc_optimizer *o, tfc_variable *v, tfc_status *st);
/* The helpers below are sticky: with an error already in st they do nothing and return NULL / false, so that an
 * update composed of many calls reports its first failure (a later call that succeeded would otherwise clear
 * it). An update starts from a clear status (apply_locked clears it).
 * A scalar of dtype dt owned by the current scope. */
tfc_tensor *tfc_opt_scalar(tfc_ctx *ctx, tfc_dtype dt, double v, tfc_status *st);
/* x rounded to the precision dt computes in (float32 for all but float64), as a tensor of dt would hold it. */
double tfc_opt_in(tfc_dtype dt, double x);
/* A hyper-parameter as the optimizer holds it: legacy OptimizerV2 keeps them in float32 variables (then cast
 * to dt); the new optimizer casts the Python float to dt. */
double tfc_opt_hyper(const tfc_optimizer *o, tfc_dtype dt, double x);
/* Runs a training op (no outputs) on the given inputs. */
bool tfc_opt_run(tfc_ctx *ctx, const char *op, tfc_tensor *const *in, int n, const tfc_attr *attrs, int n_attrs,
                 tfc_status *st);
/* Op helpers for composed updates: NULL-propagating (a NULL input returns NULL with st already set). */
tfc_tensor *tfc_opt_op2(tfc_ctx *ctx, const char *op, tfc_tensor *a, tfc_tensor *b, tfc_status *st);
tfc_tensor *tfc_opt_op1(tfc_ctx *ctx, const char *op, tfc_tensor *a, tfc_status *st);
/* Reads a variable's current value without recording (apply runs with tapes paused). */
tfc_tensor *tfc_opt_read(tfc_ctx *ctx, tfc_variable *v, tfc_status *st);
bool tfc_opt_assign(tfc_ctx *ctx, tfc_variable *v, tfc_tensor *value, tfc_status *st);

/* JSON number helpers for configs: a float32 hyper-parameter printed as the new optimizer reports it. */
bool tfc_opt_json_num(cJSON *cfg, const char *key, double v);

/* ---- schedules (schedules.c) ---- */
/* Keras's serialize(schedule): {"module": "keras.optimizers.schedules", "class_name", "config", ...}; a
 * function schedule serialises as its value at step (Keras calls a callable learning rate). */
cJSON *tfc_lr_schedule_to_json(const tfc_lr_schedule *s, int64_t step);
/* Keras's deserialize of a schedule object ({"class_name": "ExponentialDecay", "config": {...}}). */
tfc_lr_schedule *tfc_lr_schedule_from_json(const cJSON *obj, tfc_status *st);

#endif
