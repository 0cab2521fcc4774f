/* tf.keras.activations: each activation is built from ops so it is differentiable on tapes. */
#include <string.h>

#include "eager/context_internal.h"
#include "keras/keras_internal.h"

static const char *const names[] = {
    "linear", "relu", "sigmoid", "tanh", "softmax", "elu", "selu", "gelu", "swish", "silu", "softplus",
    "softsign", "relu6", "exponential", "hard_sigmoid", "leaky_relu", "mish",
};

bool tfc_activation_valid(const char *name) {
    if (!name || !*name) return true;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcmp(name, names[i])) return true;
    return false;
}

static tfc_tensor *unary(tfc_ctx *ctx, const char *op, tfc_tensor *x, tfc_status *st) {
    return tfc_emit(ctx, op, &x, 1, NULL, 0, st);
}

static tfc_tensor *binary(tfc_ctx *ctx, const char *op, tfc_tensor *x, tfc_tensor *y, tfc_status *st) {
    return x && y ? tfc_emit(ctx, op, (tfc_tensor *[]){x, y}, 2, NULL, 0, st) : NULL;
}

/* op(x, c) with a scalar constant c of x's dtype. */
static tfc_tensor *with_const(tfc_ctx *ctx, const char *op, tfc_tensor *x, double c, tfc_status *st) {
    if (!x) return NULL;
    tfc_tensor *k = tfc_scalar(tfc_tensor_dtype(x), c, st);
    if (!k) return NULL;
    tfc_tensor *y = binary(ctx, op, x, k, st);
    tfc_tensor_unref(k);
    return y;
}

/* Runs inside a scope opened by tfc_activation_apply: intermediates are released there. */
static tfc_tensor *activation(tfc_ctx *ctx, const char *n, tfc_tensor *x, tfc_status *st) {
    if (!n || !*n || !strcmp(n, "linear")) return unary(ctx, "Identity", x, st);
    if (!strcmp(n, "relu")) return unary(ctx, "Relu", x, st);
    if (!strcmp(n, "sigmoid")) return unary(ctx, "Sigmoid", x, st);
    if (!strcmp(n, "tanh")) return unary(ctx, "Tanh", x, st);
    if (!strcmp(n, "elu")) return unary(ctx, "Elu", x, st);
    if (!strcmp(n, "selu")) return unary(ctx, "Selu", x, st);
    if (!strcmp(n, "softplus")) return unary(ctx, "Softplus", x, st);
    if (!strcmp(n, "softsign")) return unary(ctx, "Softsign", x, st);
    if (!strcmp(n, "relu6")) return unary(ctx, "Relu6", x, st);
    if (!strcmp(n, "exponential")) return unary(ctx, "Exp", x, st);
    if (!strcmp(n, "softmax")) {
        if (tfc_tensor_rank(x) <= 1) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "Cannot apply softmax to a tensor that is 1D. Received input shape: %s",
                           TFC_KSHP(tfc_tensor_shape(x)));
            return NULL;
        }
        return unary(ctx, "Softmax", x, st);
    }
    if (!strcmp(n, "swish") || !strcmp(n, "silu")) return binary(ctx, "Mul", x, unary(ctx, "Sigmoid", x, st), st);
    if (!strcmp(n, "gelu")) {
        /* exact form: 0.5 * x * (1 + erf(x / sqrt(2))) */
        tfc_tensor *e = unary(ctx, "Erf", with_const(ctx, "RealDiv", x, 1.4142135623730951, st), st);
        return binary(ctx, "Mul", with_const(ctx, "Mul", x, 0.5, st), with_const(ctx, "AddV2", e, 1.0, st), st);
    }
    if (!strcmp(n, "hard_sigmoid")) {
        /* Keras 2: clip(0.2 * x + 0.5, 0, 1) */
        tfc_tensor *y = with_const(ctx, "AddV2", with_const(ctx, "Mul", x, 0.2, st), 0.5, st);
        if (!y) return NULL;
        tfc_dtype dt = tfc_tensor_dtype(x);
        tfc_tensor *lo = tfc_scalar(dt, 0, st), *hi = lo ? tfc_scalar(dt, 1, st) : NULL;
        tfc_tensor *r = hi ? tfc_emit(ctx, "ClipByValue", (tfc_tensor *[]){y, lo, hi}, 3, NULL, 0, st) : NULL;
        tfc_tensor_unref(lo);
        tfc_tensor_unref(hi);
        return r;
    }
    if (!strcmp(n, "leaky_relu")) {
        tfc_attr a = TFC_ATTR_F("alpha", 0.2);
        return tfc_emit(ctx, "LeakyRelu", &x, 1, &a, 1, st);
    }
    if (!strcmp(n, "mish")) return binary(ctx, "Mul", x, unary(ctx, "Tanh", unary(ctx, "Softplus", x, st), st), st);
    tfc_status_set(st, TFC_INVALID_ARGUMENT, "Unknown activation function: %s", n);
    return NULL;
}

tfc_tensor *tfc_activation_apply(tfc_ctx *ctx, const char *name, tfc_tensor *x, tfc_status *st) {
    if (!ctx || !x) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "activation: NULL argument");
        return NULL;
    }
    if (!tfc_activation_valid(name)) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Unknown activation function: %s", name);
        return NULL;
    }
    if (!tfc_scope_begin(ctx, st)) return NULL;
    tfc_tensor *y = activation(ctx, name, x, st);
    if (!y) {
        if (st->code == TFC_OK) tfc_status_set(st, TFC_INTERNAL, "activation %s failed", name);
        tfc_scope_end(ctx);
        return NULL;
    }
    if (!tfc_scope_end_keep(ctx, &y, 1, st)) return NULL;
    if (name && (!strcmp(name, "softmax") || !strcmp(name, "sigmoid"))) tfc_keras_note_logits(y, x);
    tfc_status_clear(st);
    return y;
}

const char *tfc_activation_fused_op(const char *name) {
    if (!name || !*name || !strcmp(name, "linear")) return "";
    if (!strcmp(name, "relu")) return "Relu";
    if (!strcmp(name, "relu6")) return "Relu6";
    if (!strcmp(name, "elu")) return "Elu";
    if (!strcmp(name, "leaky_relu")) return "LeakyRelu";
    return NULL;
}

int tfc_activation_fused_attrs(const char *op, const char *ops[2], tfc_attr *attrs, int n) {
    ops[0] = "BiasAdd";
    ops[1] = op;
    attrs[n++] = (tfc_attr){.name = "fused_ops", .kind = TFC_ATTR_LIST_STRING, .n = *op ? 2 : 1, .v.strs = ops};
    attrs[n++] = TFC_ATTR_I("num_args", 1);
    attrs[n++] = TFC_ATTR_F("leakyrelu_alpha", 0.2); /* activations.leaky_relu's default negative_slope */
    return n;
}

/* The name Keras's get_config writes: activations serialize as their function, so aliases collapse
 * ("silu" is tf.keras.activations.swish) and no activation is "linear". */
const char *tfc_activation_config_name(const char *name) {
    if (!name || !*name) return "linear";
    if (!strcmp(name, "silu")) return "swish";
    return name;
}
