/* Convolution and pooling ops (tensorflow/core/ops/nn_ops.cc): Conv2D and its backprops, depthwise
 * convolution, MaxPool, AvgPool and their gradients. Gradients mirror tensorflow/python/ops/nn_grad.py:
 * each backprop op is itself differentiable (defined through the forward op and the other backprop),
 * so second-order gradients work. */
#include <string.h>

#include "core/tensor_internal.h"
#include "ops/conv_geom.h"
#include "ops/op_util.h"

/* ---- geometry ------------------------------------------------------------------------------------- */

typedef enum { PAD_VALID, PAD_SAME, PAD_EXPLICIT } padding_kind;

static char *ints_str(const int64_t *v, int n, char *buf, size_t size) {
    size_t k = 0;
    buf[0] = 0;
    k += (size_t)snprintf(buf, size, "[");
    for (int i = 0; i < n && k < size; i++) k += (size_t)snprintf(buf + k, size - k, "%s%lld", i ? "," : "", (long long)v[i]);
    if (k < size) snprintf(buf + k, size - k, "]");
    return buf;
}
#define INTS(v, n) ints_str((v), (n), (char[96]){0}, 96)

static bool dims_str_shape(const int64_t d[4], tfc_shape *s) {
    s->rank = 4;
    for (int i = 0; i < 4; i++) s->dims[i] = d[i];
    return true;
}

static const int64_t *list_attr(const tfc_attrs *a, const char *name, int *n) { return tfc_attrs_ints(a, name, n); }

/* TensorFlow's GetWindowedOutputSizeVerbose: output size and padding of one spatial dimension. Arithmetic is
 * done in 128 bits so absurd attrs give an error instead of wrapping. */
static bool window_out(const char *op, int64_t in, int64_t k, int64_t dil, int64_t stride, padding_kind pad,
                       int64_t *before, int64_t *after, int64_t *out, tfc_status *st) {
    __int128 eff = (__int128)(k - 1) * dil + 1, o;
    if (eff > INT64_MAX) return tfc_op_error(op, st, "effective filter size (%lld - 1) * %lld + 1 overflows", (long long)k, (long long)dil);
    switch (pad) {
    case PAD_VALID:
        o = ((__int128)in - eff + stride) / stride;
        *before = *after = 0;
        break;
    case PAD_EXPLICIT:
        o = ((__int128)in + *before + *after - eff + stride) / stride;
        break;
    default: {
        o = ((__int128)in + stride - 1) / stride;
        __int128 need = (o - 1) * stride + eff - in;
        if (need < 0) need = 0;
        if (need > INT64_MAX) return tfc_op_error(op, st, "padding overflows");
        *before = (int64_t)(need / 2);
        *after = (int64_t)(need - need / 2);
    }
    }
    if (o < 0)
        return tfc_op_error(op, st,
                            "Computed output size would be negative: %lld [input_size: %lld, effective_filter_size: %lld, "
                            "stride: %lld]",
                            (long long)o, (long long)in, (long long)eff, (long long)stride);
    if (o > INT64_MAX) return tfc_op_error(op, st, "output size overflows");
    *out = (int64_t)o;
    return true;
}

/* The longest EXPLICIT-padded pooling window, stride or padding accepted (see conv_geom.h). */
#define POOL_EXPLICIT_MAX ((int64_t)1 << 24)

bool tfc_pool_window(const char *op, int64_t in, int64_t *k, int64_t *stride, int padding, int64_t *before,
                     int64_t *after, int64_t *out, tfc_status *st) {
    const padding_kind pad = padding == 1 ? PAD_SAME : padding == 2 ? PAD_EXPLICIT : PAD_VALID;
    if (pad == PAD_EXPLICIT && (*k > POOL_EXPLICIT_MAX || *stride > POOL_EXPLICIT_MAX ||
                                *before > POOL_EXPLICIT_MAX || *after > POOL_EXPLICIT_MAX))
        return tfc_op_error(op, st, "pooling window %lld, stride %lld or paddings %lld/%lld larger than %lld",
                            (long long)*k, (long long)*stride, (long long)*before, (long long)*after,
                            (long long)POOL_EXPLICIT_MAX);
    /* SAME: a window of at least twice the input covers all of it wherever it sits, as one of 2 * in does */
    const int64_t ke = pad == PAD_SAME && *k / 2 > in ? (in > 0 ? 2 * in : 1) : *k;
    if (!window_out(op, in, ke, 1, *stride, pad, before, after, out, st)) return false;
    *k = ke;
    if (*out <= 1 && *stride > *k) *stride = *k; /* a stride never applied: keep only whether it passes k */
    return true;
}

bool tfc_conv_attrs_parse(const char *op, tfc_conv_kind kind, const tfc_attrs *attrs, tfc_conv_attrs *a,
                          tfc_status *st) {
    memset(a, 0, sizeof *a);
    const char *fmt = tfc_attrs_string(attrs, "data_format", "NHWC");
    if (!strcmp(fmt, "NCHW_VECT_C"))
        return tfc_status_set(st, TFC_UNIMPLEMENTED, "%s: data_format NCHW_VECT_C is only supported for qint8", op);
    a->nchw = !strcmp(fmt, "NCHW");
    const int hi = a->nchw ? 2 : 1, wi = a->nchw ? 3 : 2, ci = a->nchw ? 1 : 3;

    int ns = 0, nd = 0, nk = 0, np = 0;
    const int64_t *s = list_attr(attrs, "strides", &ns);
    if (ns != 4) return tfc_op_error(op, st, "Sliding window strides field must specify 4 dimensions, got %d", ns);
    const int64_t one[4] = {1, 1, 1, 1};
    const int64_t *d = one, *k = NULL;
    if (kind == TFC_CONV_POOL) {
        k = list_attr(attrs, "ksize", &nk);
        if (nk != 4) return tfc_op_error(op, st, "Sliding window ksize field must specify 4 dimensions, got %d", nk);
        for (int i = 0; i < 4; i++)
            if (k[i] <= 0) return tfc_op_error(op, st, "Sliding window ksize must be positive, got ksize %s", INTS(k, 4));
        for (int i = 0; i < 4; i++)
            if (s[i] <= 0) return tfc_op_error(op, st, "Stride must be > 0, got strides %s", INTS(s, 4));
        if (k[0] != 1 || s[0] != 1)
            return tfc_status_set(st, TFC_UNIMPLEMENTED, "%s: Pooling is not yet supported on the batch dimension (ksize %s, strides %s)",
                                  op, INTS(k, 4), INTS(s, 4));
        if (k[ci] != 1)
            return tfc_status_set(st, TFC_UNIMPLEMENTED, "%s: pooling across depth is not supported (ksize %s)", op, INTS(k, 4));
        a->k_h = k[hi];
        a->k_w = k[wi];
    } else {
        if (s[0] != 1 || s[ci] != 1)
            return tfc_status_set(st, kind == TFC_CONV_2D ? TFC_UNIMPLEMENTED : TFC_INVALID_ARGUMENT,
                                  "%s: Current implementation does not yet support strides in the batch and depth "
                                  "dimensions (strides %s)", op, INTS(s, 4));
        if (s[hi] <= 0 || s[wi] <= 0)
            return tfc_op_error(op, st, "Row and column strides should be larger than 0, got strides %s", INTS(s, 4));
        d = list_attr(attrs, "dilations", &nd);
        if (!d) d = one, nd = 4;
        if (nd != 4) return tfc_op_error(op, st, "Sliding window dilations field must specify 4 dimensions, got %d", nd);
        if (d[0] != 1 || d[ci] != 1)
            return tfc_status_set(st, TFC_UNIMPLEMENTED,
                                  "%s: Current implementation does not yet support dilations in the batch and depth "
                                  "dimensions (dilations %s)", op, INTS(d, 4));
        if (d[hi] <= 0 || d[wi] <= 0)
            return tfc_op_error(op, st, "Dilated rates should be larger than 0, got dilations %s", INTS(d, 4));
    }
    a->stride_h = s[hi];
    a->stride_w = s[wi];
    a->dil_h = d[hi];
    a->dil_w = d[wi];

    const char *pad_s = tfc_attrs_string(attrs, "padding", "VALID");
    padding_kind pad = !strcmp(pad_s, "SAME") ? PAD_SAME : !strcmp(pad_s, "EXPLICIT") ? PAD_EXPLICIT : PAD_VALID;
    a->padding = (int)pad;
    const int64_t *ep = list_attr(attrs, "explicit_paddings", &np);
    if (pad == PAD_EXPLICIT) {
        if (np != 8) return tfc_op_error(op, st, "explicit_paddings attribute must contain 8 values, but got: %d", np);
        for (int i = 0; i < 8; i++)
            if (ep[i] < 0)
                return tfc_op_error(op, st, "All elements of explicit_paddings must be nonnegative, got %s", INTS(ep, 8));
        if (ep[0] || ep[1] || ep[2 * ci] || ep[2 * ci + 1])
            return tfc_op_error(op, st, "Nonzero explicit padding in the batch or depth dimensions is not supported, got %s",
                                INTS(ep, 8));
        a->pad_top = ep[2 * hi];
        a->pad_bottom = ep[2 * hi + 1];
        a->pad_left = ep[2 * wi];
        a->pad_right = ep[2 * wi + 1];
    } else if (np != 0) {
        return tfc_op_error(op, st, "explicit_paddings attribute must be empty if the padding attribute is not EXPLICIT, got %s",
                            INTS(ep, np < 8 ? np : 8));
    }
    return true;
}

bool tfc_conv_geom_init(const char *op, tfc_conv_kind kind, const tfc_attrs *attrs, const int64_t in_dims[4],
                        const int64_t f_dims[4], tfc_conv_geom *g, tfc_status *st) {
    tfc_conv_attrs a;
    return tfc_conv_attrs_parse(op, kind, attrs, &a, st) && tfc_conv_geom_make(op, kind, &a, in_dims, f_dims, g, st);
}

bool tfc_conv_geom_make(const char *op, tfc_conv_kind kind, const tfc_conv_attrs *a, const int64_t in_dims[4],
                        const int64_t f_dims[4], tfc_conv_geom *g, tfc_status *st) {
    memset(g, 0, sizeof *g);
    g->nchw = a->nchw;
    const int hi = g->nchw ? 2 : 1, wi = g->nchw ? 3 : 2, ci = g->nchw ? 1 : 3;
    g->batch = in_dims[0];
    g->in_h = in_dims[hi];
    g->in_w = in_dims[wi];
    g->in_c = in_dims[ci];
    g->stride_h = a->stride_h;
    g->stride_w = a->stride_w;
    g->dil_h = a->dil_h;
    g->dil_w = a->dil_w;
    const padding_kind pad = (padding_kind)a->padding;
    if (pad == PAD_EXPLICIT) {
        g->pad_top = a->pad_top;
        g->pad_bottom = a->pad_bottom;
        g->pad_left = a->pad_left;
        g->pad_right = a->pad_right;
    }

    tfc_shape is, fs;
    dims_str_shape(in_dims, &is);
    g->groups = 1;
    g->mult = 1;
    switch (kind) {
    case TFC_CONV_2D:
        dims_str_shape(f_dims, &fs);
        g->k_h = f_dims[0], g->k_w = f_dims[1], g->k_c = f_dims[2], g->out_c = f_dims[3];
        /* a filter of 0 output channels gives an empty output, as TensorFlow's (its other dims may not be 0) */
        if (!g->k_h || !g->k_w || !g->k_c)
            return tfc_op_error(op, st, "filter must not have zero elements (i.e. all dimensions must be non-zero), got filter %s",
                                SHP(&fs));
        if (g->in_c == 0 || g->in_c % g->k_c)
            return tfc_op_error(op, st, "input depth %lld must equal filter in_channels %lld or be a multiple of it (input %s, filter %s)",
                                (long long)g->in_c, (long long)g->k_c, SHP(&is), SHP(&fs));
        g->groups = g->in_c / g->k_c;
        if (g->out_c % g->groups)
            return tfc_op_error(op, st, "output depth %lld must be evenly divisible by the number of groups %lld (input %s, filter %s)",
                                (long long)g->out_c, (long long)g->groups, SHP(&is), SHP(&fs));
        break;
    case TFC_CONV_DEPTHWISE:
        dims_str_shape(f_dims, &fs);
        g->k_h = f_dims[0], g->k_w = f_dims[1], g->k_c = f_dims[2], g->mult = f_dims[3];
        if (g->k_c != g->in_c)
            return tfc_op_error(op, st, "input and filter must have the same depth: %lld vs %lld (input %s, filter %s)",
                                (long long)g->in_c, (long long)g->k_c, SHP(&is), SHP(&fs));
        if (!g->k_h || !g->k_w)
            return tfc_op_error(op, st, "filter spatial dimensions must be non-zero, got filter %s", SHP(&fs));
        if (!tfc_mul_overflow_i64(g->in_c, g->mult, &g->out_c))
            return tfc_op_error(op, st, "output depth %lld * %lld overflows", (long long)g->in_c, (long long)g->mult);
        break;
    case TFC_CONV_POOL:
        g->k_h = a->k_h, g->k_w = a->k_w, g->k_c = 1, g->out_c = g->in_c;
        if (pad == PAD_EXPLICIT) {
            if (g->pad_top >= g->k_h || g->pad_bottom >= g->k_h)
                return tfc_op_error(op, st, "Top/bottom padding %lld/%lld needs to be smaller than the window size %lld",
                                    (long long)g->pad_top, (long long)g->pad_bottom, (long long)g->k_h);
            if (g->pad_left >= g->k_w || g->pad_right >= g->k_w)
                return tfc_op_error(op, st, "Left/right padding %lld/%lld needs to be smaller than the window size %lld",
                                    (long long)g->pad_left, (long long)g->pad_right, (long long)g->k_w);
        }
        break;
    }
    if (kind == TFC_CONV_POOL)
        return tfc_pool_window(op, g->in_h, &g->k_h, &g->stride_h, (int)pad, &g->pad_top, &g->pad_bottom, &g->out_h,
                               st) &&
               tfc_pool_window(op, g->in_w, &g->k_w, &g->stride_w, (int)pad, &g->pad_left, &g->pad_right, &g->out_w,
                               st);
    return window_out(op, g->in_h, g->k_h, g->dil_h, g->stride_h, pad, &g->pad_top, &g->pad_bottom, &g->out_h, st) &&
           window_out(op, g->in_w, g->k_w, g->dil_w, g->stride_w, pad, &g->pad_left, &g->pad_right, &g->out_w, st);
}

/* ---- shape functions ------------------------------------------------------------------------------ */

static bool known4(const tfc_shape *s) { return s->rank == 4 && tfc_shape_is_fully_defined(s); }

static void unknown4(tfc_shape_ctx *c) {
    tfc_shape s = {.rank = 4, .dims = {-1, -1, -1, -1}};
    tfc_set_out(c, 0, &s);
}

static tfc_conv_kind kind_of(const tfc_shape_ctx *c) {
    return !strncmp(c->op->name, "Depthwise", 9) ? TFC_CONV_DEPTHWISE : TFC_CONV_2D;
}

/* Output shape of a conv/pool from its geometry, in data_format order. */
static bool set_out_geom(tfc_shape_ctx *c, const tfc_conv_geom *g, tfc_status *st) {
    tfc_shape s = {.rank = 4};
    tfc_conv_dims(g->nchw, g->batch, g->out_h, g->out_w, g->out_c, s.dims);
    if (!tfc_check_out_shape(c, &s, st)) return false;
    tfc_set_out(c, 0, &s);
    return true;
}

/* Output shape of a conv/pool whose input has all dims known but perhaps the batch. */
static bool set_out_batch_free(tfc_shape_ctx *c, tfc_conv_kind kind, const int64_t *filter, tfc_status *st) {
    int64_t d[4];
    bool unknown_batch;
    if (!tfc_conv_batch_free_dims(&c->in_shapes[0], d, &unknown_batch)) {
        unknown4(c);
        return true;
    }
    tfc_conv_geom g;
    if (!tfc_conv_geom_init(c->op->name, kind, c->attrs, d, filter, &g, st) || !set_out_geom(c, &g, st)) return false;
    if (unknown_batch) c->out_shapes[0].dims[0] = -1;
    return true;
}

static bool conv_shape(tfc_shape_ctx *c, tfc_status *st) {
    if (!tfc_check_rank(c, 0, 4, "input", st) || !tfc_check_rank(c, 1, 4, "filter", st)) return false;
    if (!known4(&c->in_shapes[1])) {
        unknown4(c);
        return true;
    }
    return set_out_batch_free(c, kind_of(c), c->in_shapes[1].dims, st);
}

/* Reads a 1-D int32 sizes input (input_sizes, filter_sizes, orig_input_shape) of 4 values (or 2 spatial values
 * when allow2). Returns the count, 0 when the value is unknown (graph), -1 on error. */
static int read_sizes(tfc_shape_ctx *c, int i, const char *what, bool allow2, int64_t v[4], tfc_status *st) {
    const tfc_shape *s = &c->in_shapes[i];
    if (s->rank != 1)
        return TFC_OP_ERR(c, st, "%s must be 1-dimensional, got shape %s", what, SHP(s)), -1;
    if (!c->in_values || !c->in_values[i] || !c->in_values[i]->data) return 0;
    int64_t n = s->dims[0];
    if (n != 4 && !(allow2 && n == 2))
        return TFC_OP_ERR(c, st, "%s must contain 4 values%s, got %lld", what, allow2 ? " or 2 values" : "", (long long)n), -1;
    if (tfc_read_ints(c->op->name, what, c->in_values[i], v, 4, st) < 0) return -1;
    for (int k = 0; k < n; k++)
        if (v[k] < 0) return TFC_OP_ERR(c, st, "%s %s has a negative dimension", what, INTS(v, (int)n)), -1;
    return (int)n;
}

/* Checks that dy (input `dyi`) has the shape the forward op would produce from geometry g. */
static bool check_backprop(tfc_shape_ctx *c, const tfc_conv_geom *g, int dyi, const char *what, tfc_status *st) {
    const tfc_shape *dy = &c->in_shapes[dyi];
    int64_t want[4];
    tfc_conv_dims(g->nchw, g->batch, g->out_h, g->out_w, g->out_c, want);
    tfc_shape ws = {.rank = 4};
    memcpy(ws.dims, want, sizeof want);
    const int hi = g->nchw ? 2 : 1, ci = g->nchw ? 1 : 3;
    if (dy->dims[0] != want[0])
        return TFC_OP_ERR(c, st, "input and %s must have the same batch size: %lld vs %lld (%s %s, expected %s)", what,
                          (long long)g->batch, (long long)dy->dims[0], what, SHP(dy), SHP(&ws));
    if (dy->dims[ci] != want[ci])
        return TFC_OP_ERR(c, st, "filter and %s must have the same out_depth: %lld vs %lld (%s %s, expected %s)", what,
                          (long long)want[ci], (long long)dy->dims[ci], what, SHP(dy), SHP(&ws));
    for (int k = hi; k < hi + 2; k++)
        if (dy->dims[k] != want[k]) {
            bool h = k == hi;
            return TFC_OP_ERR(c, st,
                              "Size of %s doesn't match computed: actual = %lld, computed = %lld spatial_dim: %d input: %lld "
                              "filter: %lld output: %lld stride: %lld dilation: %lld",
                              what, (long long)dy->dims[k], (long long)want[k], k, (long long)(h ? g->in_h : g->in_w),
                              (long long)(h ? g->k_h : g->k_w), (long long)want[k], (long long)(h ? g->stride_h : g->stride_w),
                              (long long)(h ? g->dil_h : g->dil_w));
        }
    return true;
}

/* Conv2DBackpropInput / DepthwiseConv2dNativeBackpropInput (input_sizes, filter, out_backprop). */
static bool conv_backprop_input_shape(tfc_shape_ctx *c, tfc_status *st) {
    if (!tfc_check_rank(c, 1, 4, "filter", st) || !tfc_check_rank(c, 2, 4, "out_backprop", st)) return false;
    int64_t v[4], in[4];
    int n = read_sizes(c, 0, "input_sizes", true, v, st);
    if (n < 0) return false;
    if (n == 0 || !known4(&c->in_shapes[1]) || !known4(&c->in_shapes[2])) {
        unknown4(c);
        return true;
    }
    const char *fmt = tfc_attrs_string(c->attrs, "data_format", "NHWC");
    bool nchw = !strcmp(fmt, "NCHW");
    if (n == 4) memcpy(in, v, sizeof in);
    else tfc_conv_dims(nchw, c->in_shapes[2].dims[0], v[0], v[1], c->in_shapes[1].dims[2], in);
    tfc_conv_geom g;
    if (!tfc_conv_geom_init(c->op->name, kind_of(c), c->attrs, in, c->in_shapes[1].dims, &g, st) ||
        !check_backprop(c, &g, 2, "out_backprop", st))
        return false;
    tfc_shape s = {.rank = 4};
    memcpy(s.dims, in, sizeof in);
    if (!tfc_check_out_shape(c, &s, st)) return false;
    tfc_set_out(c, 0, &s);
    return true;
}

/* Conv2DBackpropFilter / DepthwiseConv2dNativeBackpropFilter (input, filter_sizes, out_backprop). */
static bool conv_backprop_filter_shape(tfc_shape_ctx *c, tfc_status *st) {
    if (!tfc_check_rank(c, 0, 4, "input", st) || !tfc_check_rank(c, 2, 4, "out_backprop", st)) return false;
    int64_t f[4];
    int n = read_sizes(c, 1, "filter_sizes", false, f, st);
    if (n < 0) return false;
    if (n == 0 || !known4(&c->in_shapes[0]) || !known4(&c->in_shapes[2])) {
        unknown4(c);
        return true;
    }
    tfc_conv_geom g;
    if (!tfc_conv_geom_init(c->op->name, kind_of(c), c->attrs, c->in_shapes[0].dims, f, &g, st) ||
        !check_backprop(c, &g, 2, "out_backprop", st))
        return false;
    tfc_shape s = {.rank = 4};
    memcpy(s.dims, f, sizeof f);
    if (!tfc_check_out_shape(c, &s, st)) return false;
    tfc_set_out(c, 0, &s);
    return true;
}

static bool pool_shape(tfc_shape_ctx *c, tfc_status *st) {
    if (!tfc_check_rank(c, 0, 4, "input", st)) return false;
    return set_out_batch_free(c, TFC_CONV_POOL, NULL, st);
}

static bool expect_shape(tfc_shape_ctx *c, int i, const char *what, const tfc_shape *want, tfc_status *st) {
    if (!tfc_shape_equal(&c->in_shapes[i], want))
        return TFC_OP_ERR(c, st, "Expected %s shape to be %s, but got %s", what, SHP(want), SHP(&c->in_shapes[i]));
    return true;
}

/* MaxPoolGrad (orig_input, orig_output, grad) -> like orig_input; MaxPoolGradGrad -> like orig_output. */
static bool max_pool_grad_shape(tfc_shape_ctx *c, tfc_status *st) {
    bool gradgrad = !strcmp(c->op->name, "MaxPoolGradGrad");
    if (!tfc_check_rank(c, 0, 4, "orig_input", st) || !tfc_check_rank(c, 1, 4, "orig_output", st) ||
        !tfc_check_rank(c, 2, 4, "grad", st))
        return false;
    if (!known4(&c->in_shapes[0]) || !known4(&c->in_shapes[1]) || !known4(&c->in_shapes[2])) {
        unknown4(c);
        return true;
    }
    tfc_conv_geom g;
    if (!tfc_conv_geom_init(c->op->name, TFC_CONV_POOL, c->attrs, c->in_shapes[0].dims, NULL, &g, st)) return false;
    tfc_shape out = {.rank = 4};
    tfc_conv_dims(g.nchw, g.batch, g.out_h, g.out_w, g.out_c, out.dims);
    if (!expect_shape(c, 1, "orig_output", &out, st) ||
        !expect_shape(c, 2, "grad", gradgrad ? &c->in_shapes[0] : &out, st))
        return false;
    tfc_set_out(c, 0, gradgrad ? &out : &c->in_shapes[0]);
    return true;
}

/* AvgPoolGrad (orig_input_shape, grad) -> orig_input_shape. */
static bool avg_pool_grad_shape(tfc_shape_ctx *c, tfc_status *st) {
    if (!tfc_check_rank(c, 1, 4, "grad", st)) return false;
    int64_t in[4];
    int n = read_sizes(c, 0, "orig_input_shape", false, in, st);
    if (n < 0) return false;
    if (n == 0 || !known4(&c->in_shapes[1])) {
        unknown4(c);
        return true;
    }
    tfc_conv_geom g;
    if (!tfc_conv_geom_init(c->op->name, TFC_CONV_POOL, c->attrs, in, NULL, &g, st)) return false;
    tfc_shape out = {.rank = 4}, s = {.rank = 4};
    tfc_conv_dims(g.nchw, g.batch, g.out_h, g.out_w, g.out_c, out.dims);
    if (!expect_shape(c, 1, "grad", &out, st)) return false;
    memcpy(s.dims, in, sizeof in);
    if (!tfc_check_out_shape(c, &s, st)) return false;
    tfc_set_out(c, 0, &s);
    return true;
}

/* ---- gradients (nn_grad.py) ----------------------------------------------------------------------- */

/* Copies the attrs `names` (those present) of the op being differentiated, to pass them on. */
static int pass_attrs(const tfc_grad_ctx *g, const char *const *names, tfc_attr *out) {
    int n = 0;
    for (; *names; names++) {
        const tfc_attr *a = tfc_attrs_find(g->attrs, *names);
        if (a) out[n++] = *a;
    }
    return n;
}

static const char *const conv_attrs[] = {"strides", "padding", "explicit_paddings", "data_format", "dilations",
                                         "use_cudnn_on_gpu", NULL};
static const char *const pool_attrs[] = {"ksize", "strides", "padding", "explicit_paddings", "data_format", NULL};
static const char *const pool_attrs_noexplicit[] = {"ksize", "strides", "padding", "data_format", NULL};

/* array_ops.shape(t) as int32: a constant when the shape is known (eager), else a Shape op (graphs).
 * *owned receives the tensor to release when it was created here. */
static tfc_tensor *shape_of(tfc_grad_ctx *g, tfc_tensor *t, tfc_tensor **owned, tfc_status *st) {
    *owned = NULL;
    if (tfc_shape_is_fully_defined(&t->shape)) {
        int32_t d[TFC_MAX_RANK];
        for (int i = 0; i < t->shape.rank; i++) {
            if (t->shape.dims[i] > INT32_MAX) {
                tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s gradient: dimension %lld does not fit int32", g->op->name,
                               (long long)t->shape.dims[i]);
                return NULL;
            }
            d[i] = (int32_t)t->shape.dims[i];
        }
        return *owned = tfc_vec_i32(d, t->shape.rank, st);
    }
    tfc_attr a = TFC_ATTR_T("out_type", TFC_INT32);
    return tfc_emit(g->ctx, "Shape", &t, 1, &a, 1, st);
}

/* out = op(a, shape(sz), b) where the middle input is the shape of `sz`; or op(shape(sz), a, b) when first. */
static tfc_tensor *emit_with_shape(tfc_grad_ctx *g, const char *op, bool shape_first, tfc_tensor *sz, tfc_tensor *a,
                                   tfc_tensor *b, const char *const *names, tfc_status *st) {
    tfc_tensor *owned, *shp = shape_of(g, sz, &owned, st);
    if (!shp) return NULL;
    tfc_attr attrs[TFC_MAX_ATTRS];
    int na = pass_attrs(g, names, attrs);
    tfc_tensor *in[3] = {shape_first ? shp : a, shape_first ? a : shp, b};
    tfc_tensor *r = tfc_emit(g->ctx, op, in, 3, attrs, na, st);
    tfc_tensor_unref(owned);
    return r;
}

static tfc_tensor *emit2(tfc_grad_ctx *g, const char *op, tfc_tensor *a, tfc_tensor *b, const char *const *names,
                         tfc_status *st) {
    tfc_attr attrs[TFC_MAX_ATTRS];
    int na = pass_attrs(g, names, attrs);
    return tfc_emit(g->ctx, op, (tfc_tensor *[]){a, b}, 2, attrs, na, st);
}

static tfc_tensor *emit3(tfc_grad_ctx *g, const char *op, tfc_tensor *a, tfc_tensor *b, tfc_tensor *c,
                         const char *const *names, tfc_status *st) {
    tfc_attr attrs[TFC_MAX_ATTRS];
    int na = pass_attrs(g, names, attrs);
    return tfc_emit(g->ctx, op, (tfc_tensor *[]){a, b, c}, 3, attrs, na, st);
}

typedef struct {
    const char *fwd, *bin, *bfil;
} conv_family;
static const conv_family conv2d_fam = {"Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter"};
static const conv_family depthwise_fam = {"DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropInput",
                                          "DepthwiseConv2dNativeBackpropFilter"};
static const conv_family *fam_of(const tfc_grad_ctx *g) {
    return !strncmp(g->op->name, "Depthwise", 9) ? &depthwise_fam : &conv2d_fam;
}

/* y = conv(x, f): dx = backprop_input(shape(x), f, dy), df = backprop_filter(x, shape(f), dy). */
static bool conv_grad(tfc_grad_ctx *g, tfc_status *st) {
    const conv_family *f = fam_of(g);
    tfc_tensor *x = g->in[0], *w = g->in[1], *dy = g->dy[0];
    /* The first layer's input needs no gradient: skipping its backprop-input saves a full convolution. */
    if (TFC_GRAD_NEEDS(g, 0) && !(g->dx[0] = emit_with_shape(g, f->bin, true, x, w, dy, conv_attrs, st))) return false;
    return !TFC_GRAD_NEEDS(g, 1) || (g->dx[1] = emit_with_shape(g, f->bfil, false, w, x, dy, conv_attrs, st));
}

/* dx = backprop_input(sizes, f, dy) is linear in f and dy:
 * d f = backprop_filter(grad, shape(f), dy), d dy = conv(grad, f). */
static bool conv_backprop_input_grad(tfc_grad_ctx *g, tfc_status *st) {
    const conv_family *f = fam_of(g);
    tfc_tensor *w = g->in[1], *dy = g->in[2], *grad = g->dy[0];
    return (g->dx[1] = emit_with_shape(g, f->bfil, false, w, grad, dy, conv_attrs, st)) &&
           (g->dx[2] = emit2(g, f->fwd, grad, w, conv_attrs, st));
}

/* df = backprop_filter(x, sizes, dy): d x = backprop_input(shape(x), grad, dy), d dy = conv(x, grad). */
static bool conv_backprop_filter_grad(tfc_grad_ctx *g, tfc_status *st) {
    const conv_family *f = fam_of(g);
    tfc_tensor *x = g->in[0], *dy = g->in[2], *grad = g->dy[0];
    return (g->dx[0] = emit_with_shape(g, f->bin, true, x, grad, dy, conv_attrs, st)) &&
           (g->dx[2] = emit2(g, f->fwd, x, grad, conv_attrs, st));
}

static bool max_pool_grad_fn(tfc_grad_ctx *g, tfc_status *st) {
    return (g->dx[0] = emit3(g, "MaxPoolGrad", g->in[0], g->out[0], g->dy[0], pool_attrs, st)) != NULL;
}

/* MaxPoolGrad is piecewise constant in orig_input/orig_output (zero gradient) and linear in grad. */
static bool max_pool_grad_grad_fn(tfc_grad_ctx *g, tfc_status *st) {
    bool gradgrad = !strcmp(g->op->name, "MaxPoolGradGrad");
    return (g->dx[0] = tfc_emit(g->ctx, "ZerosLike", &g->in[0], 1, NULL, 0, st)) &&
           (g->dx[1] = tfc_emit(g->ctx, "ZerosLike", &g->in[1], 1, NULL, 0, st)) &&
           (g->dx[2] = emit3(g, gradgrad ? "MaxPoolGrad" : "MaxPoolGradGrad", g->in[0], g->in[1], g->dy[0],
                             pool_attrs_noexplicit, st));
}

static bool avg_pool_grad_fn(tfc_grad_ctx *g, tfc_status *st) {
    tfc_tensor *owned, *shp = shape_of(g, g->in[0], &owned, st);
    if (!shp) return false;
    tfc_attr attrs[TFC_MAX_ATTRS];
    int na = pass_attrs(g, pool_attrs, attrs);
    g->dx[0] = tfc_emit(g->ctx, "AvgPoolGrad", (tfc_tensor *[]){shp, g->dy[0]}, 2, attrs, na, st);
    tfc_tensor_unref(owned);
    return g->dx[0] != NULL;
}

/* AvgPoolGrad is linear in grad: its gradient is AvgPool of the upstream gradient. */
static bool avg_pool_grad_grad_fn(tfc_grad_ctx *g, tfc_status *st) {
    tfc_attr attrs[TFC_MAX_ATTRS];
    int na = pass_attrs(g, pool_attrs, attrs);
    return (g->dx[1] = tfc_emit(g->ctx, "AvgPool", &g->dy[0], 1, attrs, na, st)) != NULL;
}

/* ---- op definitions ------------------------------------------------------------------------------- */

#define CONV_ATTRS                                                                                         \
    "strides: list(int), padding: {'SAME', 'VALID', 'EXPLICIT'}, explicit_paddings: list(int) = [], "   \
    "data_format: {'NHWC', 'NCHW'} = 'NHWC', dilations: list(int) = [1, 1, 1, 1]"

const tfc_op_def tfc_op_def_conv2d = {
    .name = "Conv2D", .inputs = "input: T, filter: T", .outputs = "output: T",
    .attrs = "T: {half, bfloat16, float, double, int32}, use_cudnn_on_gpu: bool = true, " CONV_ATTRS,
    .shape = conv_shape, .grad = conv_grad,
};
const tfc_op_def tfc_op_def_conv2d_backprop_input = {
    .name = "Conv2DBackpropInput", .inputs = "input_sizes: int32, filter: T, out_backprop: T", .outputs = "output: T",
    .attrs = "T: {half, bfloat16, float, double, int32}, use_cudnn_on_gpu: bool = true, " CONV_ATTRS,
    .shape = conv_backprop_input_shape, .grad = conv_backprop_input_grad,
};
const tfc_op_def tfc_op_def_conv2d_backprop_filter = {
    .name = "Conv2DBackpropFilter", .inputs = "input: T, filter_sizes: int32, out_backprop: T", .outputs = "output: T",
    .attrs = "T: {half, bfloat16, float, double}, use_cudnn_on_gpu: bool = true, " CONV_ATTRS,
    .shape = conv_backprop_filter_shape, .grad = conv_backprop_filter_grad,
};
const tfc_op_def tfc_op_def_depthwise_conv2d_native = {
    .name = "DepthwiseConv2dNative", .inputs = "input: T, filter: T", .outputs = "output: T",
    .attrs = "T: {half, bfloat16, float, double}, " CONV_ATTRS,
    .shape = conv_shape, .grad = conv_grad,
};
const tfc_op_def tfc_op_def_depthwise_conv2d_native_backprop_input = {
    .name = "DepthwiseConv2dNativeBackpropInput", .inputs = "input_sizes: int32, filter: T, out_backprop: T",
    .outputs = "output: T", .attrs = "T: {half, bfloat16, float, double}, " CONV_ATTRS,
    .shape = conv_backprop_input_shape, .grad = conv_backprop_input_grad,
};
const tfc_op_def tfc_op_def_depthwise_conv2d_native_backprop_filter = {
    .name = "DepthwiseConv2dNativeBackpropFilter", .inputs = "input: T, filter_sizes: int32, out_backprop: T",
    .outputs = "output: T", .attrs = "T: {half, bfloat16, float, double}, " CONV_ATTRS,
    .shape = conv_backprop_filter_shape, .grad = conv_backprop_filter_grad,
};

#define POOL_WINDOW "ksize: list(int) >= 4, strides: list(int) >= 4, "
/* TensorFlow also allows uint16/uint32/uint64/qint8 here; tfc has no such dtypes. */
#define POOL_REAL "float, double, int32, uint8, int16, int8, int64, bfloat16, half"

const tfc_op_def tfc_op_def_max_pool = {
    .name = "MaxPool", .inputs = "input: T", .outputs = "output: T",
    .attrs = "T: {half, bfloat16, float, double, int32, int64, uint8, int16, int8} = float, " POOL_WINDOW
             "padding: {'SAME', 'VALID', 'EXPLICIT'}, explicit_paddings: list(int) = [], "
             "data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'",
    .shape = pool_shape, .grad = max_pool_grad_fn,
};
const tfc_op_def tfc_op_def_max_pool_grad = {
    .name = "MaxPoolGrad", .inputs = "orig_input: T, orig_output: T, grad: T", .outputs = "output: T",
    .attrs = POOL_WINDOW "padding: {'SAME', 'VALID', 'EXPLICIT'}, explicit_paddings: list(int) = [], "
             "data_format: {'NHWC', 'NCHW'} = 'NHWC', T: {" POOL_REAL "} = float",
    .shape = max_pool_grad_shape, .grad = max_pool_grad_grad_fn,
};
const tfc_op_def tfc_op_def_max_pool_grad_grad = {
    .name = "MaxPoolGradGrad", .inputs = "orig_input: T, orig_output: T, grad: T", .outputs = "output: T",
    .attrs = POOL_WINDOW "padding: {'SAME', 'VALID'}, data_format: {'NHWC', 'NCHW'} = 'NHWC', T: {" POOL_REAL "}",
    .shape = max_pool_grad_shape, .grad = max_pool_grad_grad_fn,
};
const tfc_op_def tfc_op_def_avg_pool = {
    .name = "AvgPool", .inputs = "value: T", .outputs = "output: T",
    .attrs = POOL_WINDOW "padding: {'SAME', 'VALID'}, data_format: {'NHWC', 'NCHW'} = 'NHWC', "
             "T: {half, bfloat16, float, double}",
    .shape = pool_shape, .grad = avg_pool_grad_fn,
};
const tfc_op_def tfc_op_def_avg_pool_grad = {
    .name = "AvgPoolGrad", .inputs = "orig_input_shape: int32, grad: T", .outputs = "output: T",
    .attrs = POOL_WINDOW "padding: {'SAME', 'VALID'}, data_format: {'NHWC', 'NCHW'} = 'NHWC', "
             "T: {half, bfloat16, float, double}",
    .shape = avg_pool_grad_shape, .grad = avg_pool_grad_grad_fn,
};

const tfc_op_def *const tfc_ops_conv[] = {
    &tfc_op_def_conv2d,
    &tfc_op_def_conv2d_backprop_input,
    &tfc_op_def_conv2d_backprop_filter,
    &tfc_op_def_depthwise_conv2d_native,
    &tfc_op_def_depthwise_conv2d_native_backprop_input,
    &tfc_op_def_depthwise_conv2d_native_backprop_filter,
    &tfc_op_def_max_pool,
    &tfc_op_def_max_pool_grad,
    &tfc_op_def_max_pool_grad_grad,
    &tfc_op_def_avg_pool,
    &tfc_op_def_avg_pool_grad,
    NULL,
};
