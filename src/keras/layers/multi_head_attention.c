/* tf.keras.layers.MultiHeadAttention over axis 1 of rank-3 inputs: Keras's EinsumDense projections computed as
 * products with the kernels viewed as matrices, scaled dot-product attention per head (BatchMatMulV2), and the
 * output projection. */
#include <math.h>
#include <string.h>

#include "keras/layers/dropout_mask.h"
#include "tfc/keras/attention.h"
#include "tfc/ops/array.h"

typedef struct {
    tfc_layer base;
    int64_t num_heads, key_dim, value_dim, output_shape;
    double dropout;
    bool use_bias, causal, return_scores;
    tfc_kinit kernel_init, bias_init;
    tfc_regularizer kernel_reg, bias_reg;
    bool has_kernel_reg, has_bias_reg;
    tfc_variable *w[4][2]; /* query, key, value, attention_output: kernel, bias */
} mha;

enum { Q, K, V, O };

static bool mha_output_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out,
                             tfc_status *st) {
    mha *m = (mha *)l;
    if (m->num_heads <= 0 || m->key_dim <= 0 || m->value_dim <= 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "Layer \"%s\": num_heads, key_dim and value_dim must be positive; received %lld, %lld "
                              "and %lld",
                              l->name, (long long)m->num_heads, (long long)m->key_dim, (long long)m->value_dim);
    if (n_in < 2 || n_in > 4)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "Layer \"%s\" expects query, value and optionally key and attention_mask (2 to 4 "
                              "inputs), but it received %d input tensors",
                              l->name, n_in);
    int nt = n_in < 3 ? 2 : 3;
    for (int i = 0; i < nt; i++)
        if (in[i].rank != 3 || in[i].dims[2] < 0)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                  "Layer \"%s\": %s must be [batch, length, dim] with a known dim (MultiHeadAttention "
                                  "over axis 1); received %s",
                                  l->name, i == 0 ? "query" : i == 1 ? "value" : "key", TFC_KSHP(&in[i]));
    const tfc_shape *q = &in[0], *v = &in[1], *k = nt == 3 ? &in[2] : &in[1];
    bool bad = (q->dims[0] >= 0 && v->dims[0] >= 0 && q->dims[0] != v->dims[0]) ||
               (k->dims[0] >= 0 && v->dims[0] >= 0 && k->dims[0] != v->dims[0]) ||
               (k->dims[1] >= 0 && v->dims[1] >= 0 && k->dims[1] != v->dims[1]);
    if (bad)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "Layer \"%s\": query %s, value %s and key %s disagree in batch size or key length",
                              l->name, TFC_KSHP(q), TFC_KSHP(v), TFC_KSHP(k));
    if (n_in == 4) {
        const tfc_shape *mk = &in[3];
        int64_t want[3] = {q->dims[0], q->dims[1], v->dims[1]};
        bool ok = mk->rank == 3;
        for (int i = 0; ok && i < 3; i++) ok = mk->dims[i] < 0 || want[i] < 0 || mk->dims[i] == want[i];
        if (!ok)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                  "Layer \"%s\": attention_mask must be [batch, Tq, Tk] = (%lld, %lld, %lld); received "
                                  "%s",
                                  l->name, (long long)want[0], (long long)want[1], (long long)want[2], TFC_KSHP(mk));
    }
    out[0] = (tfc_shape){.rank = 3, .dims = {q->dims[0], q->dims[1], m->output_shape ? m->output_shape : q->dims[2]}};
    *n_out = 1;
    if (m->return_scores) {
        out[1] = (tfc_shape){.rank = 4, .dims = {q->dims[0], m->num_heads, q->dims[1], v->dims[1]}};
        *n_out = 2;
    }
    return true;
}

static bool add_dense(mha *m, tfc_ctx *ctx, int which, const char *name, const tfc_shape *ks, const tfc_shape *bs,
                      tfc_status *st) {
    char wn[64];
    snprintf(wn, sizeof wn, "%s/kernel", name);
    tfc_layer *l = &m->base;
    if (!(m->w[which][0] = tfc_layer_add_weight(l, ctx, wn, ks, l->dtype, &m->kernel_init.init,
                                                m->has_kernel_reg ? &m->kernel_reg : NULL, true, st)))
        return false;
    if (!m->use_bias) return true;
    snprintf(wn, sizeof wn, "%s/bias", name);
    return (m->w[which][1] = tfc_layer_add_weight(l, ctx, wn, bs, l->dtype, &m->bias_init.init,
                                                  m->has_bias_reg ? &m->bias_reg : NULL, true, st)) != NULL;
}

static bool mha_build(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st) {
    mha *m = (mha *)l;
    int64_t h = m->num_heads, dq = in[0].dims[2], dv = in[1].dims[2], dk = n_in >= 3 ? in[2].dims[2] : dv;
    int64_t out = m->output_shape ? m->output_shape : dq;
    if (!add_dense(m, ctx, Q, "query", &(tfc_shape){.rank = 3, .dims = {dq, h, m->key_dim}},
                   &(tfc_shape){.rank = 2, .dims = {h, m->key_dim}}, st) ||
        !add_dense(m, ctx, K, "key", &(tfc_shape){.rank = 3, .dims = {dk, h, m->key_dim}},
                   &(tfc_shape){.rank = 2, .dims = {h, m->key_dim}}, st) ||
        !add_dense(m, ctx, V, "value", &(tfc_shape){.rank = 3, .dims = {dv, h, m->value_dim}},
                   &(tfc_shape){.rank = 2, .dims = {h, m->value_dim}}, st) ||
        !add_dense(m, ctx, O, "attention_output", &(tfc_shape){.rank = 3, .dims = {h, m->value_dim, out}},
                   &(tfc_shape){.rank = 1, .dims = {out}}, st))
        return false;
    for (int i = 0; i < n_in; i++)
        l->input_spec[i] = (tfc_input_spec){.ndim = 3, .n_axes = i < 3, .axes = {-1}, .values = {in[i].dims[2]}};
    l->has_input_spec = true;
    return true;
}

static tfc_tensor *reshape(tfc_ctx *ctx, tfc_tensor *x, const int64_t *dims, int rank, tfc_status *st) {
    return x ? tfc_reshape(ctx, x, dims, rank, st) : NULL;
}

/* [batch, a, b, d] <-> [batch, b, a, d] */
static tfc_tensor *swap12(tfc_ctx *ctx, tfc_tensor *x, tfc_status *st) {
    return x ? tfc_transpose(ctx, x, (int64_t[]){0, 2, 1, 3}, st) : NULL;
}

/* x [batch, len, d] through projection `which` (kernel [d, heads, dh]) -> [batch, heads, len, dh]. */
static tfc_tensor *project_in(mha *m, tfc_ctx *ctx, int which, tfc_tensor *x, int64_t dh, tfc_status *st) {
    tfc_layer *l = &m->base;
    int64_t b = tfc_tensor_dim(x, 0), n = tfc_tensor_dim(x, 1), d = tfc_tensor_dim(x, 2), hd = m->num_heads * dh;
    tfc_tensor *k = reshape(ctx, tfc_layer_read_var(l, ctx, m->w[which][0], st), (int64_t[]){d, hd}, 2, st);
    tfc_tensor *x2 = k ? reshape(ctx, x, (int64_t[]){-1, d}, 2, st) : NULL;
    tfc_tensor *y = x2 ? tfc_emit(ctx, "MatMul", (tfc_tensor *[]){x2, k}, 2, NULL, 0, st) : NULL;
    if (y && m->use_bias) {
        tfc_tensor *bias = reshape(ctx, tfc_layer_read_var(l, ctx, m->w[which][1], st), (int64_t[]){hd}, 1, st);
        y = bias ? tfc_emit(ctx, "BiasAdd", (tfc_tensor *[]){y, bias}, 2, NULL, 0, st) : NULL;
    }
    y = reshape(ctx, y, (int64_t[]){b, n, m->num_heads, dh}, 4, st);
    return swap12(ctx, y, st);
}

/* The additive mask: 0 where attended, -1e9 (the dtype's lowest for float16) where masked; [batch or 1, 1, Tq, Tk]. */
static tfc_tensor *mask_adder(mha *m, tfc_ctx *ctx, tfc_tensor *mask, int64_t tq, int64_t tk, tfc_dtype dt,
                              tfc_status *st) {
    tfc_attr ca = TFC_ATTR_T("DstT", dt);
    tfc_tensor *keep = NULL;
    if (mask) {
        keep = tfc_emit(ctx, "Cast", &mask, 1, &ca, 1, st);
        keep = reshape(ctx, keep, (int64_t[]){tfc_tensor_dim(mask, 0), 1, tq, tk}, 4, st);
        if (!keep) return NULL;
    }
    if (m->causal) {
        int64_t n = tq * tk;
        tfc_tensor *c = tfc_tensor_new(TFC_FLOAT, (int64_t[]){1, 1, tq, tk}, 4, st);
        if (!c) return NULL;
        float *p = tfc_tensor_mutable_data(c);
        for (int64_t i = 0; i < n; i++) p[i] = i % tk <= i / tk; /* lower triangle, as tf.linalg.band_part(-1, 0) */
        tfc_tensor *cd = tfc_emit(ctx, "Cast", &c, 1, &ca, 1, st);
        tfc_tensor_unref(c);
        keep = keep ? (cd ? tfc_emit(ctx, "Mul", (tfc_tensor *[]){keep, cd}, 2, NULL, 0, st) : NULL) : cd;
    }
    double neg = dt == TFC_HALF ? -65504.0 : -1e9;
    tfc_tensor *one = tfc_scalar(dt, 1.0, st), *big = tfc_scalar(dt, neg, st);
    tfc_tensor *inv = keep && one ? tfc_emit(ctx, "Sub", (tfc_tensor *[]){one, keep}, 2, NULL, 0, st) : NULL;
    tfc_tensor *add = inv && big ? tfc_emit(ctx, "Mul", (tfc_tensor *[]){inv, big}, 2, NULL, 0, st) : NULL;
    tfc_tensor_unref(one);
    tfc_tensor_unref(big);
    return add;
}

static bool mha_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                     bool training, tfc_status *st) {
    mha *m = (mha *)l;
    if (n_out > 1 + m->return_scores)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\" has %d output(s); %d requested", l->name,
                              1 + m->return_scores, n_out);
    tfc_tensor *query = in[0], *value = in[1], *key = n_in >= 3 ? in[2] : in[1], *mask = n_in == 4 ? in[3] : NULL;
    int64_t b = tfc_tensor_dim(query, 0), tq = tfc_tensor_dim(query, 1), tk = tfc_tensor_dim(value, 1);
    int64_t dout = tfc_variable_shape(m->w[O][0])->dims[2];
    tfc_dtype dt = tfc_tensor_dtype(query);
    tfc_tensor *q = project_in(m, ctx, Q, query, m->key_dim, st);
    tfc_tensor *k = q ? project_in(m, ctx, K, key, m->key_dim, st) : NULL;
    tfc_tensor *v = k ? project_in(m, ctx, V, value, m->value_dim, st) : NULL;
    tfc_tensor *scale = v ? tfc_scalar(dt, 1.0 / sqrt((double)m->key_dim), st) : NULL;
    q = scale ? tfc_emit(ctx, "Mul", (tfc_tensor *[]){q, scale}, 2, NULL, 0, st) : NULL;
    tfc_tensor_unref(scale);
    tfc_attr adj[2] = {TFC_ATTR_B("adj_x", false), TFC_ATTR_B("adj_y", true)};
    tfc_tensor *scores = q ? tfc_emit(ctx, "BatchMatMulV2", (tfc_tensor *[]){q, k}, 2, adj, 2, st) : NULL;
    if (scores && (mask || m->causal)) {
        tfc_tensor *add = mask_adder(m, ctx, mask, tq, tk, dt, st);
        scores = add ? tfc_emit(ctx, "AddV2", (tfc_tensor *[]){scores, add}, 2, NULL, 0, st) : NULL;
    }
    tfc_tensor *probs = scores ? tfc_emit(ctx, "Softmax", &scores, 1, NULL, 0, st) : NULL;
    tfc_tensor *p = probs;
    if (p && training && m->dropout > 0) {
        tfc_tensor *mk = tfc_keras_dropout_mask(ctx, dt, tfc_tensor_shape(p)->dims, 4, m->dropout, st);
        p = mk ? tfc_emit(ctx, "Mul", (tfc_tensor *[]){p, mk}, 2, NULL, 0, st) : NULL;
    }
    tfc_tensor *o = p ? tfc_emit(ctx, "BatchMatMulV2", (tfc_tensor *[]){p, v}, 2, NULL, 0, st) : NULL;
    int64_t hv = m->num_heads * m->value_dim;
    o = reshape(ctx, swap12(ctx, o, st), (int64_t[]){-1, hv}, 2, st);
    tfc_tensor *wo = o ? reshape(ctx, tfc_layer_read_var(l, ctx, m->w[O][0], st), (int64_t[]){hv, dout}, 2, st) : NULL;
    tfc_tensor *y = wo ? tfc_emit(ctx, "MatMul", (tfc_tensor *[]){o, wo}, 2, NULL, 0, st) : NULL;
    if (y && m->use_bias) {
        tfc_tensor *bias = tfc_layer_read_var(l, ctx, m->w[O][1], st);
        y = bias ? tfc_emit(ctx, "BiasAdd", (tfc_tensor *[]){y, bias}, 2, NULL, 0, st) : NULL;
    }
    if (!(out[0] = reshape(ctx, y, (int64_t[]){b, tq, dout}, 3, st))) return false;
    if (n_out > 1) out[1] = probs;
    return true;
}

static bool mha_get_config(const tfc_layer *l, void *vcfg, tfc_status *st) {
    const mha *m = (const mha *)l;
    cJSON *cfg = vcfg;
    bool ok = cJSON_AddNumberToObject(cfg, "num_heads", (double)m->num_heads) &&
              cJSON_AddNumberToObject(cfg, "key_dim", (double)m->key_dim) &&
              cJSON_AddNumberToObject(cfg, "value_dim", (double)m->value_dim) &&
              cJSON_AddNumberToObject(cfg, "dropout", m->dropout) && cJSON_AddBoolToObject(cfg, "use_bias", m->use_bias);
    ok = ok && (m->output_shape ? cJSON_AddNumberToObject(cfg, "output_shape", (double)m->output_shape) != NULL
                                : cJSON_AddNullToObject(cfg, "output_shape") != NULL);
    /* Keras's attention_axes: None until built, then (1,) for rank-3 inputs */
    ok = ok && (l->built ? cJSON_AddItemToObject(cfg, "attention_axes", tfc_json_int_array((int64_t[]){1}, 1))
                         : cJSON_AddNullToObject(cfg, "attention_axes") != NULL);
    return ok && tfc_json_add_initializer(cfg, "kernel_initializer", &m->kernel_init.init) &&
           tfc_json_add_initializer(cfg, "bias_initializer", &m->bias_init.init) &&
           tfc_json_add_regularizer(cfg, "kernel_regularizer", &m->kernel_reg, m->has_kernel_reg) &&
           tfc_json_add_regularizer(cfg, "bias_regularizer", &m->bias_reg, m->has_bias_reg) &&
           tfc_json_add_regularizer(cfg, "activity_regularizer", &l->activity_reg, l->has_activity_reg) &&
           cJSON_AddNullToObject(cfg, "kernel_constraint") && cJSON_AddNullToObject(cfg, "bias_constraint");
}

static const tfc_layer_class mha_class = {
    .class_name = "MultiHeadAttention",
    .size = sizeof(mha),
    .build = mha_build,
    .compute_output_shape = mha_output_shape,
    .call = mha_call,
    .get_config = mha_get_config,
};

tfc_layer *tfc_layers_multi_head_attention_new(const tfc_multi_head_attention_opts *o) {
    mha *m = TFC_LAYER_NEW(mha, &mha_class, o);
    if (!m) return NULL;
    m->num_heads = o->num_heads;
    m->key_dim = o->key_dim;
    m->value_dim = o->value_dim ? o->value_dim : o->key_dim;
    m->output_shape = o->output_shape;
    m->dropout = o->dropout;
    m->use_bias = TFC_FLAG(o->use_bias, true);
    m->causal = o->use_causal_mask;
    m->return_scores = o->return_attention_scores;
    tfc_kinit_set(&m->kernel_init, o->kernel_initializer, "glorot_uniform");
    tfc_kinit_set(&m->bias_init, o->bias_initializer, "zeros");
    if ((m->has_kernel_reg = o->kernel_regularizer)) m->kernel_reg = *o->kernel_regularizer;
    if ((m->has_bias_reg = o->bias_regularizer)) m->bias_reg = *o->bias_regularizer;
    if ((m->base.has_activity_reg = o->activity_regularizer)) m->base.activity_reg = *o->activity_regularizer;
    return &m->base;
}

tfc_layer *tfc_keras_from_config_multi_head_attention(const cJSON *cfg, tfc_status *st) {
    tfc_layer_common_cfg c;
    if (!tfc_json_get_common(cfg, &c, st)) return NULL;
    tfc_multi_head_attention_opts o = {0};
    TFC_COMMON_TO_OPTS(c, o);
    bool has_heads, has_key, use_bias = true, hk, hb, ha;
    char kn[32], bn[32];
    tfc_initializer ki = {0}, bi = {0};
    tfc_regularizer kr, br, ar;
    int64_t outs[TFC_MAX_RANK];
    int n_outs = 0;
    if (!tfc_json_get_i64(cfg, "num_heads", &o.num_heads, &has_heads, st) ||
        !tfc_json_get_i64(cfg, "key_dim", &o.key_dim, &has_key, st) ||
        !tfc_json_get_i64(cfg, "value_dim", &o.value_dim, NULL, st) ||
        !tfc_json_get_f64(cfg, "dropout", &o.dropout, NULL, st) ||
        !tfc_json_get_bool(cfg, "use_bias", &use_bias, NULL, st) ||
        !tfc_json_get_bool(cfg, "use_causal_mask", &o.use_causal_mask, NULL, st) ||
        !tfc_json_get_bool(cfg, "return_attention_scores", &o.return_attention_scores, NULL, st) ||
        !tfc_json_get_i64_list(cfg, "output_shape", outs, TFC_MAX_RANK, &n_outs, NULL, st) ||
        !tfc_json_get_initializer(cfg, "kernel_initializer", &ki, kn, sizeof kn, st) ||
        !tfc_json_get_initializer(cfg, "bias_initializer", &bi, bn, sizeof bn, st) ||
        !tfc_json_get_regularizer(cfg, "kernel_regularizer", &kr, &hk, st) ||
        !tfc_json_get_regularizer(cfg, "bias_regularizer", &br, &hb, st) ||
        !tfc_json_get_regularizer(cfg, "activity_regularizer", &ar, &ha, st))
        return NULL;
    if (!has_heads || !has_key) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "MultiHeadAttention: the config needs \"num_heads\" and \"key_dim\"");
        return NULL;
    }
    if (n_outs > 1) {
        tfc_status_set(st, TFC_UNIMPLEMENTED, "MultiHeadAttention: output_shape of rank %d is not supported", n_outs);
        return NULL;
    }
    if (n_outs == 1) o.output_shape = outs[0];
    o.use_bias = use_bias ? TFC_YES : TFC_NO;
    if (ki.name) o.kernel_initializer = &ki;
    if (bi.name) o.bias_initializer = &bi;
    if (hk) o.kernel_regularizer = &kr;
    if (hb) o.bias_regularizer = &br;
    if (ha) o.activity_regularizer = &ar;
    tfc_layer *l = tfc_layers_multi_head_attention_new(&o);
    if (!l) tfc_status_oom(st, "MultiHeadAttention", sizeof(mha));
    return l;
}
