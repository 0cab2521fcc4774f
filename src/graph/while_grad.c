/* Gradient of While / StatelessWhile, with accumulators of the forward loop's per-iteration values.
 *
 * The gradient first runs a recording loop: the forward cond and body (called as functions) with an iteration
 * counter and one accumulator per non-resource loop variable, a [iterations + 1, ...] stack of the values the
 * body received (row 0 a placeholder; ConcatV2 appends a row per iteration). A second While then runs the body's
 * gradient function backwards that many iterations, reading row k + 1 for iteration k (GatherV2): the loop
 * variables' gradients flow through it, and a resource variable's gradient (a variable the body reads) is summed
 * over the iterations. Both loops are built with tfc_while_loop, so they run eagerly or become While nodes of
 * the function being traced. The forward values are recomputed by the recording loop (TensorFlow instead
 * rewrites the forward loop itself to push them onto TensorLists). */
#include <string.h>

#include "graph/functional.h"
#include "graph/trace.h"
#include "tfc/control_flow.h"

typedef struct {
    tfc_gfunc *cond, *body;
    int n;                    /* forward loop variables */
    const tfc_dtype *dts;     /* their dtypes */
    int acc_of[TFC_MAX_IO];   /* recording: the accumulator index of variable i, or -1 (a resource) */
    int n_acc;
    tfc_tensor *acc[TFC_MAX_IO]; /* backward: the recorded stacks */
    tfc_tensor *const *fwd_in;   /* backward: the forward inputs (resource handles) */
    int dv_of[TFC_MAX_IO];       /* backward: loop position of variable i's gradient, or -1 */
    bool is_res_acc[TFC_MAX_IO]; /* backward: variable i's gradient is a resource's summed gradient */
} wgrad;

static tfc_tensor *i32(tfc_ctx *ctx, int32_t v, tfc_status *st) {
    tfc_tensor *t = tfc_scalar_i32(v, st);
    return t && tfc_scope_track(ctx, t, st) ? t : NULL;
}

static int rec_cond(tfc_ctx *ctx, tfc_tensor *const *in, int n, tfc_tensor **out, int max_out, void *u,
                    tfc_status *st) {
    wgrad *w = u;
    out[0] = NULL;
    return tfc_call_emit(ctx, w->cond, in + 1, w->n, out, st) ? 1 : -1;
}

static int rec_body(tfc_ctx *ctx, tfc_tensor *const *in, int n, tfc_tensor **out, int max_out, void *u,
                    tfc_status *st) {
    wgrad *w = u;
    tfc_tensor *one = i32(ctx, 1, st), *zero = i32(ctx, 0, st);
    if (!one || !zero || !(out[0] = tfc_emit(ctx, "AddV2", (tfc_tensor *[]){in[0], one}, 2, NULL, 0, st))) return -1;
    for (int i = 0; i < w->n; i++) out[1 + i] = NULL;
    if (!tfc_call_emit(ctx, w->body, in + 1, w->n, out + 1, st)) return -1;
    for (int i = 0; i < w->n; i++) {
        const int j = w->acc_of[i];
        if (j < 0) continue;
        tfc_tensor *row = tfc_emit(ctx, "ExpandDims", (tfc_tensor *[]){in[1 + i], zero}, 2, NULL, 0, st);
        tfc_tensor *acc = in[1 + w->n + j];
        if (!row || !(out[1 + w->n + j] = tfc_emit(ctx, "ConcatV2", (tfc_tensor *[]){acc, row, zero}, 3, NULL, 0, st)))
            return -1;
    }
    return 1 + w->n + w->n_acc;
}

static int back_cond(tfc_ctx *ctx, tfc_tensor *const *in, int n, tfc_tensor **out, int max_out, void *u,
                     tfc_status *st) {
    tfc_tensor *zero = i32(ctx, 0, st);
    return zero && (out[0] = tfc_emit(ctx, "GreaterEqual", (tfc_tensor *[]){in[0], zero}, 2, NULL, 0, st)) ? 1 : -1;
}

static int back_body(tfc_ctx *ctx, tfc_tensor *const *in, int n, tfc_tensor **out, int max_out, void *u,
                     tfc_status *st) {
    wgrad *w = u;
    tfc_tensor *one = i32(ctx, 1, st), *zero = i32(ctx, 0, st);
    tfc_tensor *row = one ? tfc_emit(ctx, "AddV2", (tfc_tensor *[]){in[0], one}, 2, NULL, 0, st) : NULL;
    if (!row || !zero || !(out[0] = tfc_emit(ctx, "Sub", (tfc_tensor *[]){in[0], one}, 2, NULL, 0, st))) return -1;
    tfc_tensor *vals[TFC_MAX_IO], *dy[TFC_MAX_IO], *dx[TFC_MAX_IO];
    for (int i = 0; i < w->n; i++) {
        const int j = w->acc_of[i];
        vals[i] = j < 0 ? w->fwd_in[i]
                        : tfc_emit(ctx, "GatherV2", (tfc_tensor *[]){w->acc[j], row, zero}, 3, NULL, 0, st);
        if (!vals[i]) return -1;
        dy[i] = w->dv_of[i] >= 0 && !w->is_res_acc[i] ? in[w->dv_of[i]] : NULL;
        dx[i] = NULL;
    }
    if (!tfc_gfunc_gradient(ctx, w->body, vals, vals, dy, dx, st)) return -1;
    for (int i = 0; i < w->n; i++) {
        const int p = w->dv_of[i];
        if (p < 0) continue;
        if (w->is_res_acc[i])
            out[p] = dx[i] ? tfc_emit(ctx, "AddV2", (tfc_tensor *[]){in[p], dx[i]}, 2, NULL, 0, st) : in[p];
        else
            out[p] = dx[i] ? dx[i] : tfc_emit(ctx, "ZerosLike", &in[p], 1, NULL, 0, st);
        if (!out[p]) return -1;
    }
    return n;
}

bool tfc_while_grad(tfc_grad_ctx *g, tfc_status *st) {
    tfc_ctx *ctx = g->ctx;
    wgrad w = {.n = g->n_in};
    const tfc_attr *ca = tfc_attrs_find(g->attrs, "cond"), *ba = tfc_attrs_find(g->attrs, "body");
    w.cond = ca && ca->kind == TFC_ATTR_FUNC ? tfc_flib_find(ctx->flib, ca->v.s) : NULL;
    w.body = ba && ba->kind == TFC_ATTR_FUNC ? tfc_flib_find(ctx->flib, ba->v.s) : NULL;
    if (!w.cond || !w.body)
        return tfc_status_set(st, TFC_NOT_FOUND, "%s gradient: cond or body is not defined in the library", g->op->name);
    const int n = w.n;
    int ns = 0;
    const tfc_shape *os = tfc_attrs_shapes(g->attrs, "output_shapes", &ns);
    tfc_shape inv[TFC_MAX_IO];
    for (int i = 0; i < n; i++) {
        /* the recorded and backward values keep the forward loop's shapes only where the body's results have
         * them (a result the body passes through or a variable read may be less specific) */
        inv[i] = ns == n ? os[i] : (tfc_shape){.rank = -1};
        const tfc_gnode *r = w.body->body->nodes[w.body->rets[i].node];
        const tfc_shape *rs = &r->out_shapes[w.body->rets[i].index];
        if (!tfc_shape_fits_invariant(&inv[i], rs)) inv[i] = (tfc_shape){.rank = -1};
        w.acc_of[i] = g->in[i]->dtype == TFC_RESOURCE ? -1 : w.n_acc++;
    }
    if (1 + n + w.n_acc > TFC_MAX_IO - 2)
        return tfc_status_set(st, TFC_UNIMPLEMENTED, "%s gradient: %d loop variables are more than %d", g->op->name, n,
                              (TFC_MAX_IO - 3) / 2);
    /* the recording loop: [counter, vars, accumulators] */
    tfc_tensor *v[TFC_MAX_IO], *res[TFC_MAX_IO];
    tfc_shape rinv[TFC_MAX_IO];
    if (!(v[0] = i32(ctx, 0, st))) return false;
    rinv[0] = v[0]->shape;
    tfc_tensor *zero = i32(ctx, 0, st);
    if (!zero) return false;
    for (int i = 0; i < n; i++) {
        v[1 + i] = g->in[i];
        rinv[1 + i] = inv[i];
        const int j = w.acc_of[i];
        if (j < 0) continue;
        if (!(v[1 + n + j] = tfc_emit(ctx, "ExpandDims", (tfc_tensor *[]){g->in[i], zero}, 2, NULL, 0, st))) return false;
        tfc_shape s = {.rank = inv[i].rank < 0 ? -1 : inv[i].rank + 1};
        if (s.rank > TFC_MAX_RANK) s.rank = -1;
        if (s.rank > 0) {
            s.dims[0] = -1;
            memcpy(&s.dims[1], inv[i].dims, (size_t)inv[i].rank * sizeof s.dims[0]);
        }
        rinv[1 + n + j] = s;
    }
    const int nr = 1 + n + w.n_acc;
    tfc_while_opts ro = {.shape_invariants = rinv};
    if (tfc_while_loop(ctx, rec_cond, rec_body, &w, v, nr, res, &ro, st) != nr) return false;
    for (int j = 0; j < w.n_acc; j++) w.acc[j] = res[1 + n + j];
    w.fwd_in = g->in;
    /* the backward loop: [k = iterations - 1, gradients of floating variables, summed resource gradients] */
    tfc_tensor *one = i32(ctx, 1, st), *b[TFC_MAX_IO], *bres[TFC_MAX_IO];
    tfc_shape binv[TFC_MAX_IO];
    if (!one || !(b[0] = tfc_emit(ctx, "Sub", (tfc_tensor *[]){res[0], one}, 2, NULL, 0, st))) return false;
    binv[0] = one->shape;
    int nb = 1;
    for (int i = 0; i < n; i++) {
        const tfc_dtype dt = g->in[i]->dtype;
        w.dv_of[i] = -1;
        w.is_res_acc[i] = false;
        if (tfc_dtype_is_floating(dt)) {
            b[nb] = g->dy[i] ? g->dy[i] : tfc_emit(ctx, "ZerosLike", (tfc_tensor *const *)&g->out[i], 1, NULL, 0, st);
            binv[nb] = inv[i];
        } else if (dt == TFC_RESOURCE && TFC_GRAD_NEEDS(g, i)) {
            const tfc_dtype vt = tfc_gfunc_resource_dtype(w.body, i);
            if (vt == TFC_INVALID_DTYPE) continue;
            tfc_attr a = TFC_ATTR_T("dtype", vt);
            tfc_tensor *val = tfc_emit(ctx, "ReadVariableOp", (tfc_tensor *const *)&g->in[i], 1, &a, 1, st);
            b[nb] = val ? tfc_emit(ctx, "ZerosLike", &val, 1, NULL, 0, st) : NULL;
            binv[nb] = (tfc_shape){.rank = -1};
            w.is_res_acc[i] = true;
        } else {
            continue;
        }
        if (!b[nb]) return false;
        w.dv_of[i] = nb++;
    }
    tfc_while_opts bo = {.shape_invariants = binv};
    if (tfc_while_loop(ctx, back_cond, back_body, &w, b, nb, bres, &bo, st) != nb) return false;
    for (int i = 0; i < n; i++)
        if (w.dv_of[i] >= 0 && TFC_GRAD_NEEDS(g, i)) g->dx[i] = bres[w.dv_of[i]];
    return true;
}
