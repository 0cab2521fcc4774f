/* The functional control-flow ops (TensorFlow's If, StatelessIf, Case, StatelessCase, While, StatelessWhile):
 * definitions, CPU kernels that run their branch / cond / body functions with the graph executor, and the
 * gradients of If and Case (the same construct over the branches' gradient functions); While's is in
 * while_grad.c. */
#include <stdio.h>
#include <string.h>

#include "graph/functional.h"
#include "graph/trace.h"
#include "kernels/cpu/kernels.h"

static tfc_gfunc *fn_named(tfc_ctx *ctx, const char *name, const char *op, tfc_status *st) {
    tfc_gfunc *fn = tfc_flib_find(ctx->flib, name ? name : "");
    if (!fn) tfc_status_set(st, TFC_NOT_FOUND, "%s: function '%s' is not defined in the library", op, name ? name : "");
    return fn;
}

static tfc_gfunc *fn_attr(tfc_ctx *ctx, const tfc_attrs *a, const char *attr, const char *op, tfc_status *st) {
    const tfc_attr *x = tfc_attrs_find(a, attr);
    return fn_named(ctx, x && x->kind == TFC_ATTR_FUNC ? x->v.s : "", op, st);
}

bool tfc_tensor_truth(const tfc_tensor *t, const char *op, bool *out, tfc_status *st) {
    if (!t->data) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: the predicate has no value", op);
    if (t->shape.rank != 0) { /* TensorFlow's If: a non-scalar is true when it is non-empty */
        *out = t->num_elements > 0;
        return true;
    }
    if (t->dtype == TFC_STRING) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: a string predicate", op);
    *out = t->dtype == TFC_BOOL ? *(const bool *)t->data : tfc_tensor_get_f64(t, 0) != 0;
    return true;
}

/* Results of a control-flow op come from its output_shapes attr when set. */
static bool cf_shape(tfc_shape_ctx *c, tfc_status *st) {
    int n = 0;
    const tfc_shape *s = tfc_attrs_shapes(c->attrs, "output_shapes", &n);
    for (int i = 0; i < c->n_out; i++) c->out_shapes[i] = n == c->n_out ? s[i] : (tfc_shape){.rank = -1};
    return true;
}

static bool if_k(tfc_kernel_ctx *k, tfc_status *st) {
    bool b = false;
    if (!tfc_tensor_truth(k->in[0], k->op->name, &b, st)) return false;
    tfc_gfunc *fn = fn_attr(k->ctx, k->attrs, b ? "then_branch" : "else_branch", k->op->name, st);
    return fn && tfc_call_gfunc(k->ctx, fn, k->in + 1, k->n_in - 1, k->out, k->n_out, st);
}

static bool case_k(tfc_kernel_ctx *k, tfc_status *st) {
    const tfc_attr *br = tfc_attrs_find(k->attrs, "branches");
    if (k->in[0]->shape.rank != 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: branch_index must be a scalar", k->op->name);
    int32_t i = *(const int32_t *)k->in[0]->data;
    if (i < 0 || i >= br->n) i = br->n - 1; /* TensorFlow runs the last branch (the default) */
    tfc_gfunc *fn = fn_named(k->ctx, br->v.strs[i], k->op->name, st);
    return fn && tfc_call_gfunc(k->ctx, fn, k->in + 1, k->n_in - 1, k->out, k->n_out, st);
}

static bool while_k(tfc_kernel_ctx *k, tfc_status *st) {
    tfc_gfunc *cond = fn_attr(k->ctx, k->attrs, "cond", k->op->name, st);
    tfc_gfunc *body = cond ? fn_attr(k->ctx, k->attrs, "body", k->op->name, st) : NULL;
    if (!body) return false;
    const int n = k->n_in;
    tfc_tensor *vars[TFC_MAX_IO], *c[1] = {NULL};
    for (int i = 0; i < n; i++) vars[i] = tfc_tensor_ref(k->in[i]);
    bool ok = true;
    for (;;) {
        bool go = false;
        ok = tfc_call_gfunc(k->ctx, cond, vars, n, c, 1, st) && tfc_tensor_truth(c[0], k->op->name, &go, st);
        if (!ok || !go) break;
        tfc_tensor *next[TFC_MAX_IO] = {0};
        if (!(ok = tfc_call_gfunc(k->ctx, body, vars, n, next, n, st))) break;
        for (int i = 0; i < n; i++) {
            tfc_tensor_unref(vars[i]);
            vars[i] = next[i];
        }
    }
    tfc_tensor_unref(c[0]);
    for (int i = 0; i < n; i++) {
        if (ok) {
            tfc_tensor_unref(k->out[i]);
            k->out[i] = vars[i];
        } else {
            tfc_tensor_unref(vars[i]);
        }
    }
    return ok;
}

/* The dtype a branch reads its resource argument a with (ReadVariableOp / Assign*VariableOp's dtype), or none. */
tfc_dtype tfc_gfunc_resource_dtype(const tfc_gfunc *fn, int a) {
    const int id = fn->arg_nodes[a];
    for (int i = 0; i < fn->body->n_nodes; i++) {
        const tfc_gnode *n = fn->body->nodes[i];
        for (int k = 0; k < n->n_in; k++)
            if (n->in[k].node == id) {
                tfc_dtype dt = tfc_attrs_type(n->attrs, "dtype", TFC_INVALID_DTYPE);
                if (dt != TFC_INVALID_DTYPE) return dt;
            }
    }
    return TFC_INVALID_DTYPE;
}

/* Gradient of If / Case: the same op (on the same predicate or index) over the branches' gradient functions,
 * each made to return the same list of gradients (zeros where a branch does not use an input). */
static bool branches_grad(tfc_grad_ctx *g, tfc_gfunc **br, int n_br, tfc_status *st) {
    tfc_ctx *ctx = g->ctx;
    const int n_args = g->n_in - 1;
    tfc_dtype need[TFC_MAX_IO];
    for (int i = 0; i < n_args; i++) {
        tfc_dtype dt = g->in[i + 1]->dtype;
        need[i] = tfc_dtype_is_floating(dt) && TFC_GRAD_NEEDS(g, i + 1) ? dt : TFC_INVALID_DTYPE;
        for (int b = 0; dt == TFC_RESOURCE && b < n_br && need[i] == TFC_INVALID_DTYPE; b++)
            need[i] = tfc_gfunc_resource_dtype(br[b], i);
    }
    tfc_gfunc *gb[TFC_MAX_IO];
    const char *names[TFC_MAX_IO];
    for (int b = 0; b < n_br; b++) {
        char prefix[300], name[340];
        snprintf(prefix, sizeof prefix, "%s_grad", br[b]->name);
        if (!tfc_flib_fresh_name(ctx->flib, prefix, name, sizeof name) ||
            !(gb[b] = tfc_gfunc_grad_fn(ctx, br[b], name, need, st))) {
            for (int k = 0; k < b; k++) tfc_flib_remove(ctx->flib, gb[k]);
            return st->code != TFC_OK ? false : tfc_status_set(st, TFC_INTERNAL, "gradient function name too long");
        }
        names[b] = gb[b]->name;
    }
    tfc_tensor *in[TFC_MAX_IO], *res[TFC_MAX_IO];
    int n = 0;
    in[n++] = g->in[0];
    for (int i = 0; i < n_args; i++) in[n++] = g->in[i + 1];
    for (int i = 0; i < g->n_out; i++) {
        if (!tfc_dtype_is_floating(g->out[i]->dtype)) continue;
        if (n >= TFC_MAX_IO) return tfc_status_set(st, TFC_UNIMPLEMENTED, "%s gradient: too many inputs", g->op->name);
        in[n] = g->dy[i] ? g->dy[i] : tfc_emit(ctx, "ZerosLike", (tfc_tensor *const *)&g->out[i], 1, NULL, 0, st);
        if (!in[n++]) return false;
    }
    tfc_dtype tout[TFC_MAX_IO];
    tfc_gfunc_ret_dtypes(gb[0], tout);
    const bool stateful = !strncmp(g->op->name, "Stateless", 9) ? false : true;
    int rc;
    if (n_br == 2 && strstr(g->op->name, "If")) {
        tfc_attr a[3] = {{.name = "Tout", .kind = TFC_ATTR_LIST_TYPE, .n = gb[0]->n_rets, .v.types = tout},
                         TFC_ATTR_FN("then_branch", names[0]), TFC_ATTR_FN("else_branch", names[1])};
        rc = tfc_execute(ctx, stateful ? "If" : "StatelessIf", in, n, a, 3, res, TFC_MAX_IO, st);
    } else {
        tfc_attr a[2] = {{.name = "Tout", .kind = TFC_ATTR_LIST_TYPE, .n = gb[0]->n_rets, .v.types = tout},
                         {.name = "branches", .kind = TFC_ATTR_LIST_FUNC, .n = n_br, .v.strs = names}};
        rc = tfc_execute(ctx, stateful ? "Case" : "StatelessCase", in, n, a, 2, res, TFC_MAX_IO, st);
    }
    if (rc < 0) return false;
    for (int r = 0; r < gb[0]->n_rets; r++) {
        int a = -1;
        sscanf(gb[0]->ret_names[r], "dx_%d", &a);
        if (a >= 0 && a < n_args) g->dx[a + 1] = res[r];
    }
    return true;
}

static bool if_grad(tfc_grad_ctx *g, tfc_status *st) {
    tfc_gfunc *br[2] = {fn_attr(g->ctx, g->attrs, "then_branch", g->op->name, st), NULL};
    if (!br[0] || !(br[1] = fn_attr(g->ctx, g->attrs, "else_branch", g->op->name, st))) return false;
    return branches_grad(g, br, 2, st);
}

static bool case_grad(tfc_grad_ctx *g, tfc_status *st) {
    const tfc_attr *a = tfc_attrs_find(g->attrs, "branches");
    tfc_gfunc *br[TFC_MAX_IO];
    if (!a || a->n > TFC_MAX_IO) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: bad branches", g->op->name);
    for (int b = 0; b < a->n; b++)
        if (!(br[b] = fn_named(g->ctx, a->v.strs[b], g->op->name, st))) return false;
    return branches_grad(g, br, a->n, st);
}

#define IF_ATTRS "Tcond: type, Tin: list(type) >= 0, Tout: list(type) >= 0, then_branch: func, else_branch: func, " \
                 "output_shapes: list(shape) = []"
#define CASE_ATTRS "Tin: list(type) >= 0, Tout: list(type) >= 0, branches: list(func) >= 1, " \
                   "output_shapes: list(shape) = []"
#define WHILE_ATTRS "T: list(type) >= 0, cond: func, body: func, output_shapes: list(shape) = [], " \
                    "parallel_iterations: int = 10"
const tfc_op_def tfc_op_def_if = {
    .name = "If", .inputs = "cond: Tcond, input: Tin", .outputs = "output: Tout", .attrs = IF_ATTRS,
    .shape = cf_shape, .grad = if_grad, .stateful = true, .grad_null_dy = ~0u,
};
const tfc_op_def tfc_op_def_stateless_if = {
    .name = "StatelessIf", .inputs = "cond: Tcond, input: Tin", .outputs = "output: Tout", .attrs = IF_ATTRS,
    .shape = cf_shape, .grad = if_grad, .grad_null_dy = ~0u,
};
const tfc_op_def tfc_op_def_case = {
    .name = "Case", .inputs = "branch_index: int32, input: Tin", .outputs = "output: Tout", .attrs = CASE_ATTRS,
    .shape = cf_shape, .grad = case_grad, .stateful = true, .grad_null_dy = ~0u,
};
const tfc_op_def tfc_op_def_stateless_case = {
    .name = "StatelessCase", .inputs = "branch_index: int32, input: Tin", .outputs = "output: Tout",
    .attrs = CASE_ATTRS, .shape = cf_shape, .grad = case_grad, .grad_null_dy = ~0u,
};
/* While's gradient (while_grad.c): a backward While over the body's gradient function and recorded values. */
const tfc_op_def tfc_op_def_while = {
    .name = "While", .inputs = "input: T", .outputs = "output: T", .attrs = WHILE_ATTRS, .shape = cf_shape,
    .grad = tfc_while_grad, .stateful = true, .grad_null_dy = ~0u,
};
const tfc_op_def tfc_op_def_stateless_while = {
    .name = "StatelessWhile", .inputs = "input: T", .outputs = "output: T", .attrs = WHILE_ATTRS, .shape = cf_shape,
    .grad = tfc_while_grad, .grad_null_dy = ~0u,
};

const tfc_op_def *const tfc_ops_control_flow[] = {
    &tfc_op_def_if, &tfc_op_def_stateless_if, &tfc_op_def_case, &tfc_op_def_stateless_case, &tfc_op_def_while,
    &tfc_op_def_stateless_while, NULL,
};
const tfc_kernel_reg tfc_cpu_kernels_control_flow[] = {
    {"If", if_k}, {"StatelessIf", if_k}, {"Case", case_k}, {"StatelessCase", case_k}, {"While", while_k},
    {"StatelessWhile", while_k}, {NULL, NULL},
};
