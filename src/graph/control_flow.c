/* tf.cond / tf.switch_case / tf.while_loop with C callbacks (tfc/control_flow.h): run eagerly, or traced into
 * branch / cond / body functions under an If, Case or While node. */
#include <stdio.h>
#include <string.h>

#include "graph/functional.h"
#include "graph/trace.h"
#include "tfc/control_flow.h"

bool tfc_tensor_truth(const tfc_tensor *t, const char *op, bool *out, tfc_status *st);

/* ---- shared ---- */

/* Python's tuple form of a shape, as TensorFlow's messages print it: "(2, 3)", "(2,)", "()", "<unknown>". */
static const char *py_shape(const tfc_shape *s, char *buf, size_t size) {
    if (s->rank < 0) return snprintf(buf, size, "<unknown>"), buf;
    size_t w = (size_t)snprintf(buf, size, "(");
    for (int i = 0; i < s->rank && w < size; i++) {
        if (s->dims[i] < 0) w += (size_t)snprintf(buf + w, size - w, "%sNone", i ? ", " : "");
        else w += (size_t)snprintf(buf + w, size - w, "%s%lld", i ? ", " : "", (long long)s->dims[i]);
    }
    if (w < size) snprintf(buf + w, size - w, s->rank == 1 ? ",)" : ")");
    return buf;
}

bool tfc_shape_fits_invariant(const tfc_shape *inv, const tfc_shape *s) {
    if (inv->rank < 0) return true;
    if (inv->rank != s->rank) return false;
    for (int i = 0; i < s->rank; i++)
        if (inv->dims[i] >= 0 && inv->dims[i] != s->dims[i]) return false;
    return true;
}

static tfc_shape merge_shapes(const tfc_shape *a, const tfc_shape *b) {
    tfc_shape m = *a;
    if (a->rank != b->rank) return (tfc_shape){.rank = -1};
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) m.dims[i] = -1;
    return m;
}

/* Results of a branch or body become fresh tensors in the enclosing scope (Identity), so that what a callback
 * returns (an input, an outer tensor) is owned as op results are. Ends the scope the caller opened. */
static bool fresh_results(tfc_ctx *ctx, tfc_tensor **out, int n, tfc_status *st) {
    bool ok = true;
    for (int i = 0; i < n && ok; i++) ok = (out[i] = tfc_emit(ctx, "Identity", &out[i], 1, NULL, 0, st)) != NULL;
    if (ok) return tfc_scope_end_keep(ctx, out, n, st);
    tfc_scope_end(ctx);
    return false;
}

/* Moves the n arguments just appended to fn (the last n of arg_nodes) to position pos. */
static void move_args(tfc_gfunc *fn, int pos, int n) {
    int tmp[TFC_MAX_IO];
    const int end = fn->n_args;
    memcpy(tmp, &fn->arg_nodes[end - n], (size_t)n * sizeof *tmp);
    memmove(&fn->arg_nodes[pos + n], &fn->arg_nodes[pos], (size_t)(end - n - pos) * sizeof *tmp);
    memcpy(&fn->arg_nodes[pos], tmp, (size_t)n * sizeof *tmp);
}

/* Adds arguments nothing reads for the tensors srcs[0..n) at argument position pos (another branch's captures). */
static bool add_unused_args(tfc_gfunc *fn, int pos, tfc_tensor *const *srcs, int n, tfc_status *st) {
    for (int i = 0; i < n; i++)
        if (tfc_gfunc_add_arg(fn, NULL, srcs[i]->dtype, &srcs[i]->shape, st) < 0) return false;
    move_args(fn, pos, n);
    return true;
}

static bool fresh_fn_name(tfc_ctx *ctx, const char *prefix, char *buf, size_t size, tfc_status *st) {
    tfc_flib *lib = tfc_ctx_flib(ctx, st);
    if (!lib) return false;
    return tfc_flib_fresh_name(lib, prefix, buf, size) ||
           tfc_status_set(st, TFC_INTERNAL, "no function name for %s", prefix);
}

/* After adding a control-flow node in a trace, its results take the shapes the branches agree on. */
static void set_result_shapes(tfc_tensor **out, int n, const tfc_shape *shapes) {
    for (int i = 0; i < n; i++) {
        tfc_gnode *node = out[i]->node;
        node->out_shapes[out[i]->node_output] = shapes[i];
        out[i]->shape = shapes[i];
        int64_t ne = 1;
        for (int d = 0; d < shapes[i].rank && ne >= 0; d++) ne = shapes[i].dims[d] < 0 ? -1 : ne * shapes[i].dims[d];
        out[i]->num_elements = shapes[i].rank < 0 ? -1 : ne;
    }
}

/* ---- cond / case ---- */

/* Traces the n_br branches with in's specs, gives them one argument list [in, caps of branch 0, caps of branch
 * 1, ...], and emits the op (If / Case and their stateless forms) with `sel` (pred or index) first. */
static int trace_branches(tfc_ctx *ctx, const char *what, tfc_tensor *sel, const tfc_function_fn *fns, int n_br,
                          void *user, tfc_tensor *const *in, int n_in, tfc_tensor **out, int max_out,
                          tfc_status *st) {
    tfc_dtype dts[TFC_MAX_IO];
    tfc_shape shapes[TFC_MAX_IO];
    for (int i = 0; i < n_in; i++) {
        dts[i] = in[i]->dtype;
        shapes[i] = in[i]->shape;
    }
    tfc_gfunc *g[TFC_MAX_IO] = {0};
    tfc_tensor **caps[TFC_MAX_IO] = {0};
    int n_caps[TFC_MAX_IO] = {0}, rc = -1, total = n_in;
    bool stateful = false;
    for (int b = 0; b < n_br; b++) {
        char prefix[64], name[96];
        snprintf(prefix, sizeof prefix, "%s_%s", what, n_br == 2 && !strcmp(what, "cond") ? (b ? "false" : "true") : "branch");
        if (!fresh_fn_name(ctx, prefix, name, sizeof name, st) ||
            !(g[b] = tfc_trace_callback(ctx, name, fns[b], user, dts, shapes, n_in, NULL, &caps[b], &n_caps[b], st)))
            goto done;
        stateful |= g[b]->stateful;
        total += n_caps[b];
    }
    for (int b = 1; b < n_br; b++) {
        bool same = g[b]->n_rets == g[0]->n_rets;
        tfc_dtype d0[TFC_MAX_IO], db[TFC_MAX_IO];
        tfc_gfunc_ret_dtypes(g[0], d0);
        tfc_gfunc_ret_dtypes(g[b], db);
        for (int i = 0; same && i < g[0]->n_rets; i++) same = d0[i] == db[i];
        if (!same) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT,
                           "%s: all branches must return the same number, type, and overall structure of return values "
                           "(branch 0 returns %d values, branch %d returns %d)", what, g[0]->n_rets, b, g[b]->n_rets);
            goto done;
        }
    }
    if (total + 1 > TFC_MAX_IO) {
        tfc_status_set(st, TFC_UNIMPLEMENTED, "%s: %d inputs and captures is more than %d", what, total, TFC_MAX_IO - 1);
        goto done;
    }
    /* one argument list for all branches */
    for (int b = 0; b < n_br; b++) {
        int before = n_in;
        for (int o = 0; o < b; o++) {
            if (!add_unused_args(g[b], before, caps[o], n_caps[o], st)) goto done;
            before += n_caps[o];
        }
        for (int o = b + 1; o < n_br; o++)
            if (!add_unused_args(g[b], g[b]->n_args, caps[o], n_caps[o], st)) goto done;
    }
    tfc_tensor *args[TFC_MAX_IO];
    int n = 0;
    args[n++] = sel;
    for (int i = 0; i < n_in; i++) args[n++] = in[i];
    for (int b = 0; b < n_br; b++)
        for (int i = 0; i < n_caps[b]; i++) args[n++] = caps[b][i];
    const int n_out = g[0]->n_rets;
    if (n_out > max_out) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s produces %d outputs but room was given for %d", what, n_out, max_out);
        goto done;
    }
    tfc_dtype tout[TFC_MAX_IO];
    tfc_shape oshapes[TFC_MAX_IO];
    tfc_gfunc_ret_dtypes(g[0], tout);
    for (int i = 0; i < n_out; i++) {
        const tfc_gport p0 = g[0]->rets[i];
        oshapes[i] = g[0]->body->nodes[p0.node]->out_shapes[p0.index];
        for (int b = 1; b < n_br; b++) {
            const tfc_gport pb = g[b]->rets[i];
            oshapes[i] = merge_shapes(&oshapes[i], &g[b]->body->nodes[pb.node]->out_shapes[pb.index]);
        }
    }
    const char *names[TFC_MAX_IO];
    for (int b = 0; b < n_br; b++) names[b] = g[b]->name;
    const tfc_attr tout_a = {.name = "Tout", .kind = TFC_ATTR_LIST_TYPE, .n = n_out, .v.types = tout};
    const tfc_attr shapes_a = {.name = "output_shapes", .kind = TFC_ATTR_LIST_SHAPE, .n = n_out, .v.shapes = oshapes};
    if (!strcmp(what, "cond")) {
        tfc_attr a[4] = {tout_a, TFC_ATTR_FN("then_branch", names[0]), TFC_ATTR_FN("else_branch", names[1]), shapes_a};
        rc = tfc_execute(ctx, stateful ? "If" : "StatelessIf", args, n, a, 4, out, max_out, st);
    } else {
        tfc_attr a[3] = {tout_a, {.name = "branches", .kind = TFC_ATTR_LIST_FUNC, .n = n_br, .v.strs = names}, shapes_a};
        rc = tfc_execute(ctx, stateful ? "Case" : "StatelessCase", args, n, a, 3, out, max_out, st);
    }
    if (rc >= 0) set_result_shapes(out, rc, oshapes);
done:
    for (int b = 0; b < n_br; b++) {
        tfc_captures_free(caps[b], n_caps[b]);
        if (rc < 0 && g[b]) tfc_flib_remove(ctx->flib, g[b]);
    }
    return rc;
}

static int run_branch(tfc_ctx *ctx, tfc_function_fn fn, void *user, tfc_tensor *const *in, int n_in, tfc_tensor **out,
                      int max_out, tfc_status *st) {
    if (!tfc_scope_begin(ctx, st)) return -1;
    int n = fn(ctx, in, n_in, out, max_out, user, st);
    if (n < 0 || n > max_out) {
        if (n > max_out) tfc_status_set(st, TFC_INVALID_ARGUMENT, "branch returned %d results, room for %d", n, max_out);
        tfc_scope_end(ctx);
        return -1;
    }
    return fresh_results(ctx, out, n, st) ? n : -1;
}

int tfc_cond(tfc_ctx *ctx, tfc_tensor *pred, tfc_function_fn true_fn, tfc_function_fn false_fn, void *user,
             tfc_tensor *const *in, int n_in, tfc_tensor **out, int max_out, tfc_status *st) {
    if (!pred || !true_fn || !false_fn || n_in < 0 || n_in > TFC_MAX_IO || (n_in && !in))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "cond: pred, true_fn and false_fn are required"), -1;
    for (int i = 0; i < n_in; i++)
        if (!in[i]) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "cond: input %d is NULL", i), -1;
    if (ctx->trace || pred->node) {
        if (pred->shape.rank > 0)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "cond: pred must be a scalar, got shape %s",
                                  tfc_shape_str(&pred->shape, (char[TFC_SHAPE_STR]){0}, TFC_SHAPE_STR)), -1;
        tfc_function_fn fns[2] = {true_fn, false_fn};
        return trace_branches(ctx, "cond", pred, fns, 2, user, in, n_in, out, max_out, st);
    }
    bool b = false;
    if (pred->shape.rank != 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "cond: pred must be a scalar, got shape %s",
                              tfc_shape_str(&pred->shape, (char[TFC_SHAPE_STR]){0}, TFC_SHAPE_STR)), -1;
    if (!tfc_tensor_truth(pred, "cond", &b, st)) return -1;
    return run_branch(ctx, b ? true_fn : false_fn, user, in, n_in, out, max_out, st);
}

int tfc_case(tfc_ctx *ctx, tfc_tensor *index, const tfc_function_fn *branches, int n_branches, void *user,
             tfc_tensor *const *in, int n_in, tfc_tensor **out, int max_out, tfc_status *st) {
    if (!index || !branches || n_branches < 1 || n_branches > TFC_MAX_IO || n_in < 0 || n_in > TFC_MAX_IO)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "switch_case: branch_index and 1 to %d branches are required",
                              TFC_MAX_IO), -1;
    for (int b = 0; b < n_branches; b++)
        if (!branches[b]) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "switch_case: branch %d is NULL", b), -1;
    if (index->dtype != TFC_INT32 || index->shape.rank > 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "switch_case: branch_index must be an int32 scalar, got %s %s",
                              tfc_dtype_name(index->dtype),
                              tfc_shape_str(&index->shape, (char[TFC_SHAPE_STR]){0}, TFC_SHAPE_STR)), -1;
    if (ctx->trace || index->node)
        return trace_branches(ctx, "switch_case", index, branches, n_branches, user, in, n_in, out, max_out, st);
    if (index->shape.rank != 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "switch_case: branch_index must be a scalar"), -1;
    int32_t i = *(const int32_t *)index->data;
    if (i < 0 || i >= n_branches) i = n_branches - 1;
    return run_branch(ctx, branches[i], user, in, n_in, out, max_out, st);
}

/* ---- while_loop ---- */

static const char *var_name(const tfc_while_opts *o, int i, char *buf, size_t size) {
    if (o && o->names && o->names[i]) return o->names[i];
    snprintf(buf, size, "loop_var_%d", i);
    return buf;
}

/* TensorFlow's errors for a body that changes a loop variable's dtype or leaves its shape invariant. */
static bool check_var(const tfc_while_opts *o, int i, tfc_dtype dt0, const tfc_shape *inv, const tfc_tensor *v,
                      tfc_status *st) {
    char nb[32], a[96], b[96];
    if (v->dtype != dt0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "Loop var %s enters the loop with type <dtype: '%s'>, but has type <dtype: '%s'> after 1 "
                              "iteration. All loop vars must have the same dtype on every iteration.",
                              var_name(o, i, nb, sizeof nb), tfc_dtype_name(dt0), tfc_dtype_name(v->dtype));
    if (!tfc_shape_fits_invariant(inv, &v->shape))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "Input tensor '%s' enters the loop with shape %s, but has shape %s after one iteration. To "
                              "allow the shape to vary across iterations, use the `shape_invariants` argument of "
                              "tf.while_loop to specify a less-specific shape.",
                              var_name(o, i, nb, sizeof nb), py_shape(inv, a, sizeof a), py_shape(&v->shape, b, sizeof b));
    return true;
}

static int while_eager(tfc_ctx *ctx, tfc_function_fn cond, tfc_function_fn body, void *user, tfc_tensor *const *vars0,
                       int n, tfc_tensor **out, const tfc_while_opts *o, const tfc_shape *inv, tfc_status *st) {
    tfc_tensor *vars[TFC_MAX_IO], *next[TFC_MAX_IO], *c[2];
    if (!tfc_scope_begin(ctx, st)) return -1;
    for (int i = 0; i < n; i++)
        if (!(vars[i] = tfc_emit(ctx, "Identity", (tfc_tensor *const *)&vars0[i], 1, NULL, 0, st))) goto fail;
    for (int64_t it = 0; !o || !o->has_maximum_iterations || it < o->maximum_iterations; it++) {
        bool go = false;
        if (!tfc_scope_begin(ctx, st)) goto fail;
        int k = cond(ctx, vars, n, c, 2, user, st);
        if (k != 1) {
            if (k >= 0) tfc_status_set(st, TFC_INVALID_ARGUMENT, "while_loop: cond must return one value, returned %d", k);
            tfc_scope_end(ctx);
            goto fail;
        }
        if (!tfc_tensor_truth(c[0], "while_loop cond", &go, st)) {
            tfc_scope_end(ctx);
            goto fail;
        }
        if (!go) {
            tfc_scope_end(ctx);
            break;
        }
        k = body(ctx, vars, n, next, n, user, st);
        if (k != n) {
            if (k >= 0)
                tfc_status_set(st, TFC_INVALID_ARGUMENT, "while_loop: body returned %d values for %d loop variables", k, n);
            tfc_scope_end(ctx);
            goto fail;
        }
        for (int i = 0; i < n; i++)
            if (!check_var(o, i, vars0[i]->dtype, &inv[i], next[i], st)) {
                tfc_scope_end(ctx);
                goto fail;
            }
        if (!fresh_results(ctx, next, n, st)) goto fail; /* into the loop's scope */
        for (int i = 0; i < n; i++) tfc_tensor_unref(tfc_keep(ctx, vars[i]));
        memcpy(vars, next, (size_t)n * sizeof *vars);
    }
    if (!tfc_scope_end_keep(ctx, vars, n, st)) return -1;
    memcpy(out, vars, (size_t)n * sizeof *vars);
    return n;
fail:
    tfc_scope_end(ctx);
    return -1;
}

/* maximum_iterations in a graph: a counter and the limit lead the loop variables (TensorFlow's form). */
typedef struct {
    tfc_function_fn cond, body;
    void *user;
} counted;

static int counted_cond(tfc_ctx *ctx, tfc_tensor *const *in, int n, tfc_tensor **out, int max_out, void *u,
                        tfc_status *st) {
    counted *k = u;
    tfc_tensor *c[2], *lt = tfc_emit(ctx, "Less", (tfc_tensor *[]){in[0], in[1]}, 2, NULL, 0, st);
    if (!lt) return -1;
    int r = k->cond(ctx, in + 2, n - 2, c, 2, k->user, st);
    if (r != 1) return r < 0 ? -1 : (tfc_status_set(st, TFC_INVALID_ARGUMENT, "while_loop: cond must return one value"), -1);
    out[0] = tfc_emit(ctx, "LogicalAnd", (tfc_tensor *[]){lt, c[0]}, 2, NULL, 0, st);
    return out[0] ? 1 : -1;
}

static int counted_body(tfc_ctx *ctx, tfc_tensor *const *in, int n, tfc_tensor **out, int max_out, void *u,
                        tfc_status *st) {
    counted *k = u;
    tfc_tensor *one = tfc_scalar_i32(1, st);
    if (!one || !tfc_scope_track(ctx, one, st)) return -1;
    if (!(out[0] = tfc_emit(ctx, "AddV2", (tfc_tensor *[]){in[0], one}, 2, NULL, 0, st))) return -1;
    out[1] = in[1];
    int r = k->body(ctx, in + 2, n - 2, out + 2, max_out - 2, k->user, st);
    return r < 0 ? -1 : r + 2;
}

static int while_traced(tfc_ctx *ctx, tfc_function_fn cond, tfc_function_fn body, void *user,
                        tfc_tensor *const *vars, int n, tfc_tensor **out, const tfc_while_opts *o,
                        const tfc_shape *inv, tfc_status *st) {
    tfc_dtype dts[TFC_MAX_IO];
    for (int i = 0; i < n; i++) dts[i] = vars[i]->dtype;
    tfc_gfunc *gc = NULL, *gb = NULL;
    tfc_tensor **cc = NULL, **cb = NULL;
    int ncc = 0, ncb = 0, rc = -1;
    char name[96];
    if (!fresh_fn_name(ctx, "while_cond", name, sizeof name, st) ||
        !(gc = tfc_trace_callback(ctx, name, cond, user, dts, inv, n, NULL, &cc, &ncc, st)))
        goto done;
    if (!fresh_fn_name(ctx, "while_body", name, sizeof name, st) ||
        !(gb = tfc_trace_callback(ctx, name, body, user, dts, inv, n, NULL, &cb, &ncb, st)))
        goto done;
    if (gc->n_rets != 1) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "while_loop: cond must return one value, returned %d", gc->n_rets);
        goto done;
    }
    if (gb->n_rets != n) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "while_loop: body returned %d values for %d loop variables",
                       gb->n_rets, n);
        goto done;
    }
    for (int i = 0; i < n; i++) {
        const tfc_gnode *r = gb->body->nodes[gb->rets[i].node];
        tfc_tensor probe = {.dtype = r->out_dtypes[gb->rets[i].index], .shape = r->out_shapes[gb->rets[i].index]};
        if (!check_var(o, i, dts[i], &inv[i], &probe, st)) goto done;
    }
    const int total = n + ncc + ncb;
    if (total > TFC_MAX_IO) {
        tfc_status_set(st, TFC_UNIMPLEMENTED, "while_loop: %d loop variables and captures is more than %d", total,
                       TFC_MAX_IO);
        goto done;
    }
    /* loop variables [vars, cond's captures, body's captures]; the body passes the captures through */
    if (!add_unused_args(gc, gc->n_args, cb, ncb, st) || !add_unused_args(gb, n, cc, ncc, st)) goto done;
    tfc_gport rets[TFC_MAX_IO];
    memcpy(rets, gb->rets, (size_t)n * sizeof *rets);
    for (int i = n; i < total; i++) rets[i] = (tfc_gport){gb->arg_nodes[i], 0};
    if (!tfc_gfunc_set_rets(gb, rets, NULL, total, st)) goto done;
    tfc_tensor *args[TFC_MAX_IO], *res[TFC_MAX_IO];
    tfc_shape shapes[TFC_MAX_IO];
    for (int i = 0; i < n; i++) {
        args[i] = vars[i];
        shapes[i] = inv[i];
    }
    for (int i = 0; i < ncc; i++) args[n + i] = cc[i], shapes[n + i] = cc[i]->shape;
    for (int i = 0; i < ncb; i++) args[n + ncc + i] = cb[i], shapes[n + ncc + i] = cb[i]->shape;
    tfc_attr a[4] = {TFC_ATTR_FN("cond", gc->name), TFC_ATTR_FN("body", gb->name),
                     {.name = "output_shapes", .kind = TFC_ATTR_LIST_SHAPE, .n = total, .v.shapes = shapes},
                     TFC_ATTR_I("parallel_iterations", o && o->parallel_iterations > 0 ? o->parallel_iterations : 10)};
    rc = tfc_execute(ctx, gc->stateful || gb->stateful ? "While" : "StatelessWhile", args, total, a, 4, res, TFC_MAX_IO, st);
    if (rc >= 0) {
        set_result_shapes(res, total, shapes);
        memcpy(out, res, (size_t)n * sizeof *out); /* the pass-through captures stay in the trace's scope */
        rc = n;
    }
done:
    tfc_captures_free(cc, ncc);
    tfc_captures_free(cb, ncb);
    if (rc < 0) {
        if (gc) tfc_flib_remove(ctx->flib, gc);
        if (gb) tfc_flib_remove(ctx->flib, gb);
    }
    return rc;
}

int tfc_while_loop(tfc_ctx *ctx, tfc_function_fn cond, tfc_function_fn body, void *user, tfc_tensor *const *loop_vars,
                   int n, tfc_tensor **out, const tfc_while_opts *o, tfc_status *st) {
    if (!cond || !body || n < 1 || n > TFC_MAX_IO - 2 || !loop_vars || !out)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "while_loop: cond, body and 1 to %d loop_vars are required",
                              TFC_MAX_IO - 2), -1;
    bool symbolic = ctx->trace != NULL;
    tfc_shape inv[TFC_MAX_IO];
    for (int i = 0; i < n; i++) {
        if (!loop_vars[i]) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "while_loop: loop_vars[%d] is NULL", i), -1;
        symbolic |= loop_vars[i]->node != NULL;
        inv[i] = o && o->shape_invariants ? o->shape_invariants[i] : loop_vars[i]->shape;
        char nb[32], a[96], b[96];
        if (!tfc_shape_fits_invariant(&inv[i], &loop_vars[i]->shape))
            return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                  "The shape invariant specified for %s is not compatible with the initial shape of the "
                                  "loop variable. It enters the loop with shape %s, but the specified shape invariant "
                                  "is %s.", var_name(o, i, nb, sizeof nb), py_shape(&loop_vars[i]->shape, a, sizeof a),
                                  py_shape(&inv[i], b, sizeof b)), -1;
    }
    if (!symbolic) return while_eager(ctx, cond, body, user, loop_vars, n, out, o, inv, st);
    if (!o || !o->has_maximum_iterations) return while_traced(ctx, cond, body, user, loop_vars, n, out, o, inv, st);
    /* with a counter and the limit in front */
    counted k = {cond, body, user};
    tfc_tensor *v[TFC_MAX_IO], *res[TFC_MAX_IO];
    tfc_shape inv2[TFC_MAX_IO];
    if (o->maximum_iterations > INT32_MAX)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "while_loop: maximum_iterations %lld is too large",
                              (long long)o->maximum_iterations), -1;
    tfc_tensor *i0 = tfc_scalar_i32(0, st), *mx = tfc_scalar_i32((int32_t)o->maximum_iterations, st);
    bool ok = i0 && mx && tfc_scope_track(ctx, i0, st) && tfc_scope_track(ctx, mx, st);
    if (!ok) return -1;
    v[0] = i0;
    v[1] = mx;
    inv2[0] = inv2[1] = i0->shape;
    for (int i = 0; i < n; i++) v[i + 2] = loop_vars[i], inv2[i + 2] = inv[i];
    tfc_while_opts o2 = *o;
    const char *names[TFC_MAX_IO];
    if (o->names) {
        names[0] = "iteration";
        names[1] = "maximum_iterations";
        for (int i = 0; i < n; i++) names[i + 2] = o->names[i];
        o2.names = names;
    }
    o2.has_maximum_iterations = false;
    o2.shape_invariants = inv2;
    int r = while_traced(ctx, counted_cond, counted_body, &k, v, n + 2, res, &o2, inv2, st);
    if (r < 0) return -1;
    memcpy(out, res + 2, (size_t)n * sizeof *out);
    return n;
}
