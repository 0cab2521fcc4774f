/* tfc — Keras mixed precision (tf.keras.mixed_precision): dtype policies, the global policy, the loss-scale
 * optimizer, and TensorFlow's TensorFloat-32 switch.
 *
 * A policy names the dtype a layer computes in and the dtype of its variables:
 *   "mixed_float16"   compute float16,  variables float32
 *   "mixed_bfloat16"  compute bfloat16, variables float32
 *   any dtype name    both that dtype ("float32", "float64", "float16", "bfloat16", "int32", ...)
 * A layer under a mixed policy keeps float32 variables and reads them cast to the compute dtype (Keras's
 * AutoCastVariable), casts its floating inputs to the compute dtype at entry, and outputs the compute dtype;
 * its `dtype` (config "dtype" of a plain policy, tfc_layer_variable_dtype) is the variable dtype. As Keras
 * recommends, give the model's last layer (or its softmax) `.dtype_policy = "float32"` so the outputs, and the
 * losses and metrics computed from them, are float32. Layers and models take a policy at construction
 * through the common option `.dtype_policy` (Keras's `dtype=` given a policy or its name), else the global
 * policy in force when they are constructed. Configs write a mixed policy as Keras does
 * ({"module": "keras.mixed_precision", "class_name": "Policy", "config": {"name": "mixed_float16"}, ...})
 * and read it back (also the bare name). */
#ifndef TFC_KERAS_MIXED_PRECISION_H
#define TFC_KERAS_MIXED_PRECISION_H

#include "tfc/keras/layer.h"
#include "tfc/keras/optimizers.h"

#ifdef __cplusplus
extern "C" {
#endif

/* tf.keras.mixed_precision.Policy. */
typedef struct tfc_policy {
    char name[32];            /* "mixed_float16", "mixed_bfloat16" or a dtype's name ("float32") */
    tfc_dtype compute_dtype;  /* dtype of a layer's computations and outputs */
    tfc_dtype variable_dtype; /* dtype of a layer's variables */
} tfc_policy;

/* Policy(name): fills p. INVALID_ARGUMENT, as Keras's ValueError, for any other name: "Cannot convert value
 * x to a mixed precision Policy. Valid policies include "mixed_float16", "mixed_bfloat16", and the name of any
 * dtype such as "float32"." */
TFC_API bool tfc_policy_init(tfc_policy *p, const char *name, tfc_status *st);

/* set_global_policy / global_policy: the process-wide policy new layers take when not given one (Keras's
 * global policy; initially "float32"). name NULL resets it to "float32". Layers already constructed keep
 * theirs. INVALID_ARGUMENT for names Policy rejects, and for a policy whose compute dtype is not floating
 * (Keras: "set_global_policy can only be used to set the global policy to floating-point policies"). */
TFC_API bool tfc_mixed_precision_set_global_policy(const char *name, tfc_status *st);
TFC_API tfc_policy tfc_mixed_precision_global_policy(void);

/* A layer's policy (layer.dtype_policy), compute dtype (layer.compute_dtype) and variable dtype
 * (layer.variable_dtype, also layer.dtype). */
TFC_API tfc_policy tfc_layer_dtype_policy(const tfc_layer *l);
TFC_API tfc_dtype tfc_layer_compute_dtype(const tfc_layer *l);
TFC_API tfc_dtype tfc_layer_variable_dtype(const tfc_layer *l);

/* ---- LossScaleOptimizer (tf.keras.mixed_precision.LossScaleOptimizer) ----------------------------------
 * Wraps `inner` (taking ownership of it; freed with the wrapper): the loss is multiplied by the loss scale
 * before gradients are taken and the gradients multiplied by 1 / scale after, so small float16 gradients do
 * not underflow. apply_gradients (given unscaled gradients):
 *   dynamic: when every gradient is finite, applies them with `inner` and counts a good step; after
 *            dynamic_growth_steps good steps in a row the scale doubles (if the double is finite). When any
 *            is inf or NaN, the step is skipped (inner's iterations still advance, as Keras), the scale halves
 *            (not below 1) and the count restarts.
 *   fixed (dynamic = TFC_NO): the scale stays initial_scale and gradients are always applied.
 * Model.fit and tfc_optimizer_minimize scale and unscale by themselves; custom loops use get_scaled_loss and
 * get_unscaled_gradients. compile wraps the optimizer in one (dynamic, defaults) when the model's policy is
 * mixed_float16, as Keras does. */
typedef struct {
    tfc_flag dynamic;             /* default yes */
    double initial_scale;         /* 0: 2^15 when dynamic; required (> 0) when fixed */
    int64_t dynamic_growth_steps; /* 0: 2000 */
} tfc_loss_scale_opts;
/* NULL when out of memory (inner is then freed) or inner is NULL. Bad options (a fixed scale <= 0, growth
 * steps < 1) are INVALID_ARGUMENT at the first apply_gradients. */
TFC_API tfc_optimizer *tfc_mixed_precision_loss_scale_optimizer_new(tfc_optimizer *inner,
                                                                   const tfc_loss_scale_opts *o);
#define tfc_mixed_precision_loss_scale_optimizer(inner, ...) \
    tfc_mixed_precision_loss_scale_optimizer_new((inner), &(tfc_loss_scale_opts){__VA_ARGS__})
/* Whether o is a LossScaleOptimizer; its inner optimizer (borrowed; NULL when not one). */
TFC_API bool tfc_optimizer_is_loss_scale(const tfc_optimizer *o);
TFC_API tfc_optimizer *tfc_loss_scale_optimizer_inner(const tfc_optimizer *o);
/* The current loss scale, and the dynamic counter (good steps since the last change; -1 when fixed). */
TFC_API double tfc_loss_scale_optimizer_loss_scale(const tfc_optimizer *o);
TFC_API int64_t tfc_loss_scale_optimizer_dynamic_counter(const tfc_optimizer *o);
/* loss * scale (in loss's dtype), owned like an op's output. */
TFC_API tfc_tensor *tfc_loss_scale_optimizer_get_scaled_loss(const tfc_optimizer *o, tfc_ctx *ctx, tfc_tensor *loss,
                                                            tfc_status *st);
/* out[i] = grads[i] * (1 / scale) in each gradient's dtype (NULL stays NULL); owned like op outputs. */
TFC_API bool tfc_loss_scale_optimizer_get_unscaled_gradients(const tfc_optimizer *o, tfc_ctx *ctx,
                                                             tfc_tensor *const *grads, int n, tfc_tensor **out,
                                                             tfc_status *st);

#ifdef __cplusplus
}
#endif
#endif
