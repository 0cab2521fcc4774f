/* tf.keras.mixed_precision: Policy, the process-wide global policy and a layer's policy (see
 * include/tfc/keras/mixed_precision.h). The global policy is the one piece of process state here, as Keras's
 * own global policy is; it is read once when a layer is constructed. */
#include <pthread.h>
#include <string.h>

#include "keras/keras_internal.h"
#include "tfc/keras/mixed_precision.h"

bool tfc_policy_init(tfc_policy *p, const char *name, tfc_status *st) {
    tfc_dtype dt = TFC_INVALID_DTYPE, var = TFC_FLOAT;
    if (name && !strcmp(name, "mixed_float16")) dt = TFC_HALF;
    else if (name && !strcmp(name, "mixed_bfloat16")) dt = TFC_BFLOAT16;
    else if (name && (var = dt = tfc_dtype_from_name(name)) == TFC_RESOURCE) dt = TFC_INVALID_DTYPE;
    if (dt == TFC_INVALID_DTYPE)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "Cannot convert value %s to a mixed precision Policy. Valid policies include "
                              "\"mixed_float16\", \"mixed_bfloat16\", and the name of any dtype such as \"float32\".",
                              name ? name : "None");
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", name); /* Keras keeps the name given ("half"), dtypes canonical */
    p->compute_dtype = dt;
    p->variable_dtype = var;
    tfc_status_clear(st);
    return true;
}

static pthread_mutex_t global_lock = PTHREAD_MUTEX_INITIALIZER;
static tfc_policy global_policy = {"float32", TFC_FLOAT, TFC_FLOAT};

bool tfc_mixed_precision_set_global_policy(const char *name, tfc_status *st) {
    tfc_policy p;
    if (!tfc_policy_init(&p, name ? name : "float32", st)) return false;
    if (!tfc_dtype_is_floating(p.compute_dtype))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "set_global_policy can only be used to set the global policy to floating-point "
                              "policies, such as \"float32\" and \"mixed_float16\", but got policy: %s",
                              p.name);
    pthread_mutex_lock(&global_lock);
    global_policy = p;
    pthread_mutex_unlock(&global_lock);
    return true;
}

tfc_policy tfc_mixed_precision_global_policy(void) {
    pthread_mutex_lock(&global_lock);
    tfc_policy p = global_policy;
    pthread_mutex_unlock(&global_lock);
    return p;
}

void tfc_layer_set_policy(tfc_layer *l, const tfc_policy *p) {
    snprintf(l->policy, sizeof l->policy, "%s", p->name);
    l->dtype = p->variable_dtype;
    l->compute_dtype = p->compute_dtype;
}

bool tfc_layer_policy_mixed(const tfc_layer *l) { return l->compute_dtype != l->dtype; }

tfc_policy tfc_layer_dtype_policy(const tfc_layer *l) {
    tfc_policy p = {"float32", TFC_FLOAT, TFC_FLOAT};
    if (!l) return p;
    snprintf(p.name, sizeof p.name, "%s", l->policy[0] ? l->policy : tfc_dtype_name(l->dtype));
    p.compute_dtype = l->compute_dtype;
    p.variable_dtype = l->dtype;
    return p;
}

tfc_dtype tfc_layer_compute_dtype(const tfc_layer *l) { return l ? l->compute_dtype : TFC_INVALID_DTYPE; }
tfc_dtype tfc_layer_variable_dtype(const tfc_layer *l) { return l ? l->dtype : TFC_INVALID_DTYPE; }

tfc_tensor *tfc_layer_cast_compute(const tfc_layer *l, tfc_ctx *ctx, tfc_tensor *t, tfc_status *st) {
    if (!t || !tfc_layer_policy_mixed(l) || !tfc_dtype_is_floating(tfc_tensor_dtype(t)) ||
        tfc_tensor_dtype(t) == l->compute_dtype)
        return t;
    tfc_attr a = TFC_ATTR_T("DstT", l->compute_dtype);
    return tfc_emit(ctx, "Cast", &t, 1, &a, 1, st);
}

tfc_tensor *tfc_layer_read_var(const tfc_layer *l, tfc_ctx *ctx, tfc_variable *v, tfc_status *st) {
    return tfc_layer_cast_compute(l, ctx, tfc_variable_read(ctx, v, st), st);
}
