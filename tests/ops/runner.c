/* Registry-driven op test runner (see op_test.h). Usage: test_ops kernels|gradients|bad_input [OpName]
 * Random inputs are fresh each run; the seed is printed (set TFC_TEST_SEED to replay). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "case_list.h"
#include "op_test.h"

#define OP_CASE_FAMILY(f) extern const op_case op_cases_##f[]; extern const bad_case bad_cases_##f[];
OP_CASE_FAMILIES
#undef OP_CASE_FAMILY

static const op_case *const case_tables[] = {
#define OP_CASE_FAMILY(f) op_cases_##f,
    OP_CASE_FAMILIES
#undef OP_CASE_FAMILY
};
static const bad_case *const bad_tables[] = {
#define OP_CASE_FAMILY(f) bad_cases_##f,
    OP_CASE_FAMILIES
#undef OP_CASE_FAMILY
};
#define N_TABLES ((int)(sizeof case_tables / sizeof case_tables[0]))

static tfc_ctx *ctx;
static int passed, failed;
static uint64_t rng_state;

static double urand(void) { /* splitmix64 → [0,1) */
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

static void fail(const char *op, const char *label, tfc_dtype dt, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void fail(const char *op, const char *label, tfc_dtype dt, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "FAIL %s [%s] %s: %s\n", op, label ? label : "", dt ? tfc_dtype_name(dt) : "", msg);
    failed++;
}

static bool is_int_dtype(tfc_dtype dt) { return tfc_dtype_is_integer(dt) || dt == TFC_BOOL; }

/* Random values for one input, already rounded to what dtype `dt` can hold. */
static int64_t draw_values(const op_input *in, tfc_dtype dt, double *v, int64_t max) {
    int64_t n = 1;
    for (int i = 0; i < in->rank; i++) n *= in->dims[i];
    if (n > max) n = max;
    double lo = in->lo, hi = in->hi;
    if (lo == 0 && hi == 0) {
        lo = -1;
        hi = 1;
        if (is_int_dtype(dt)) { lo = -9; hi = 9; }
    }
    if (dt == TFC_UINT8 && lo < 0) { lo = 0; if (hi < 1) hi = 9; }
    for (int64_t i = 0; i < n; i++) {
        double x = in->n_vals > 0 ? in->vals[i % in->n_vals] : lo + (hi - lo) * urand();
        if (dt == TFC_BOOL) x = in->n_vals > 0 ? (x != 0) : (x > (lo + hi) / 2);
        else if ((in->integer || is_int_dtype(dt)) && in->n_vals == 0) x = floor(x + 0.5);
        unsigned char buf[8];
        tfc_dtype_set_f64(dt, buf, 0, x); /* round to the dtype */
        v[i] = tfc_dtype_get_f64(dt, buf, 0);
    }
    return n;
}

static tfc_tensor *make_strings(const op_input *in, int64_t n, tfc_status *st) {
    const char **s = malloc((size_t)(n ? n : 1) * sizeof *s);
    size_t *l = malloc((size_t)(n ? n : 1) * sizeof *l);
    tfc_tensor *t = NULL;
    if (s && l) {
        for (int64_t i = 0; i < n; i++) {
            int k = in->n_vals > 0 ? (int)(i % in->n_vals) : -1;
            s[i] = k >= 0 ? in->strs[k] : "";
            l[i] = k >= 0 && in->str_lens ? in->str_lens[k] : strlen(s[i]);
        }
        t = tfc_tensor_from_strings(s, l, in->dims, in->rank, st);
    }
    free(s);
    free(l);
    return t;
}

static tfc_tensor *make_tensor(const op_input *in, tfc_dtype dt, const double *v, int64_t n, tfc_status *st) {
    if (dt == TFC_STRING && in->strs) return make_strings(in, n, st);
    tfc_tensor *t = tfc_tensor_new(dt, in->dims, in->rank, st);
    if (!t) return NULL;
    if (tfc_tensor_num_elements(t) != n) {
        tfc_tensor_unref(t);
        tfc_status_set(st, TFC_INTERNAL, "test input too large");
        return NULL;
    }
    void *d = tfc_tensor_mutable_data(t);
    for (int64_t i = 0; i < n; i++) tfc_dtype_set_f64(dt, d, i, v[i]);
    return t;
}

#define MAX_VALS (1 << 16)
typedef struct {
    int n_in;
    double *vals[8];
    int64_t nv[8];
} drawn;

static bool allowed(const tfc_op *op, tfc_dtype dt) {
    tfc_dtype d[32];
    int n = tfc_op_dtypes(op, d, 32);
    for (int i = 0; i < n; i++)
        if (d[i] == dt) return true;
    return false;
}

static void set_dtype_attr(const op_case *c, tfc_attr *attrs, int *n_attrs, tfc_dtype dt) {
    memcpy(attrs, c->attrs, sizeof c->attrs);
    *n_attrs = c->n_attrs;
    if (c->dtype_attr) attrs[(*n_attrs)++] = TFC_ATTR_T(c->dtype_attr, dt);
}

static int run_case_dtype(const op_case *c, const drawn *dv, tfc_dtype dt, tfc_tensor **out, tfc_status *st) {
    tfc_tensor *in[8] = {0};
    tfc_attr attrs[9];
    int n_attrs;
    set_dtype_attr(c, attrs, &n_attrs, dt);
    int n = -1;
    for (int i = 0; i < c->n_in; i++) {
        tfc_dtype idt = c->in[i].dtype ? c->in[i].dtype : dt;
        if (!(in[i] = make_tensor(&c->in[i], idt, dv->vals[i], dv->nv[i], st))) goto done;
    }
    n = tfc_execute(ctx, c->op, in, c->n_in, attrs, n_attrs, out, 16, st);
done:
    for (int i = 0; i < c->n_in; i++) tfc_tensor_unref(in[i]);
    return n;
}

static double tolerance(tfc_dtype dt, const op_case *c) {
    double t = dt == TFC_FLOAT ? 2e-5 : dt == TFC_HALF ? 1e-2 : dt == TFC_BFLOAT16 ? 5e-2 : dt == TFC_DOUBLE ? 1e-12 : 0;
    return t * (c->tol > 0 ? c->tol : 1);
}

static void test_kernels_case(const op_case *c, const tfc_op *op) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_dtype dts[32];
    int nd = 0;
    if (c->dtypes) {
        for (const tfc_dtype *d = c->dtypes; *d && nd < 32; d++) dts[nd++] = *d;
    } else {
        nd = tfc_op_dtypes(op, dts, 32);
    }
    bool has_ref = !c->no_reference && allowed(op, TFC_DOUBLE);
    for (int k = 0; k < nd; k++) {
        tfc_dtype dt = dts[k];
        if (dt == TFC_STRING || dt == TFC_RESOURCE) continue;
        drawn dv = {.n_in = c->n_in};
        for (int i = 0; i < c->n_in; i++) {
            dv.vals[i] = malloc(MAX_VALS * sizeof(double));
            dv.nv[i] = draw_values(&c->in[i], c->in[i].dtype ? c->in[i].dtype : dt, dv.vals[i], MAX_VALS);
        }
        tfc_tensor *out[16] = {0}, *ref[16] = {0};
        int n = run_case_dtype(c, &dv, dt, out, &st);
        if (n < 0) {
            fail(c->op, c->label, dt, "%s: %s", tfc_code_name(st.code), st.msg);
        } else if (has_ref && dt != TFC_DOUBLE) {
            int nr = run_case_dtype(c, &dv, TFC_DOUBLE, ref, &st);
            if (nr != n) {
                fail(c->op, c->label, dt, "reference run failed: %s", st.msg);
            } else {
                bool ok = true;
                for (int o = 0; o < n && ok; o++) {
                    if (!tfc_shape_equal(tfc_tensor_shape(out[o]), tfc_tensor_shape(ref[o]))) {
                        char a[TFC_SHAPE_STR], b[TFC_SHAPE_STR];
                        fail(c->op, c->label, dt, "output %d shape %s, reference %s", o,
                             tfc_shape_str(tfc_tensor_shape(out[o]), a, sizeof a),
                             tfc_shape_str(tfc_tensor_shape(ref[o]), b, sizeof b));
                        ok = false;
                        break;
                    }
                    tfc_dtype odt = tfc_tensor_dtype(out[o]);
                    double tol = tolerance(odt, c);
                    for (int64_t i = 0; i < tfc_tensor_num_elements(out[o]); i++) {
                        double a = tfc_tensor_get_f64(out[o], i), b = tfc_tensor_get_f64(ref[o], i);
                        if (!tfc_dtype_is_floating(odt)) {
                            unsigned char buf[8];
                            tfc_dtype_set_f64(odt, buf, 0, b);
                            b = tfc_dtype_get_f64(odt, buf, 0);
                        }
                        bool same = (isnan(a) && isnan(b)) || a == b || fabs(a - b) <= tol * (1 + fabs(b));
                        if (!same) {
                            fail(c->op, c->label, dt, "output %d element %lld = %.9g, reference %.9g", o, (long long)i, a, b);
                            ok = false;
                            break;
                        }
                    }
                }
                if (ok) passed++;
            }
            for (int o = 0; o < nr; o++) tfc_tensor_unref(ref[o]);
        } else {
            passed++;
        }
        for (int o = 0; o < (n > 0 ? n : 0); o++) tfc_tensor_unref(out[o]);
        for (int i = 0; i < c->n_in; i++) free(dv.vals[i]);
    }
}

/* sum_j w_j . out_j with the op run on float64 inputs v. */
static bool objective(const op_case *c, const drawn *dv, double *const *w, double *f, tfc_status *st) {
    tfc_tensor *out[16];
    /* Called inside the gradient case's scope: give the outputs their own scope instead of unref'ing them
     * (the enclosing scope would release them a second time). */
    if (!tfc_scope_begin(ctx, st)) return false;
    int n = run_case_dtype(c, dv, TFC_DOUBLE, out, st);
    double s = 0;
    for (int o = 0; o < n; o++)
        if (tfc_tensor_dtype(out[o]) == TFC_DOUBLE && w[o]) {
            const double *d = tfc_tensor_data(out[o]);
            for (int64_t i = 0; i < tfc_tensor_num_elements(out[o]); i++) s += w[o][i] * d[i];
        } else if (tfc_tensor_dtype(out[o]) == TFC_FLOAT && w[o]) { /* ops with float32 outputs (ResizeBilinear) */
            const float *d = tfc_tensor_data(out[o]);
            for (int64_t i = 0; i < tfc_tensor_num_elements(out[o]); i++) s += w[o][i] * d[i];
        }
    tfc_scope_end(ctx);
    *f = s;
    return n >= 0;
}

static void test_gradient_case(const op_case *c, const tfc_op *op) {
    tfc_status st = TFC_STATUS_INIT;
    if (!allowed(op, TFC_DOUBLE)) {
        fail(c->op, c->label, TFC_DOUBLE, "gradient check needs float64 support");
        return;
    }
    drawn dv = {.n_in = c->n_in};
    for (int i = 0; i < c->n_in; i++) {
        dv.vals[i] = malloc(MAX_VALS * sizeof(double));
        dv.nv[i] = draw_values(&c->in[i], c->in[i].dtype ? c->in[i].dtype : TFC_DOUBLE, dv.vals[i], MAX_VALS);
    }
    double *w[16] = {0};
    tfc_tensor *in[8] = {0}, *out[16] = {0}, *wt[16] = {0}, *grads[8] = {0}, *src[8];
    int n_src = 0, src_idx[8];
    tfc_attr attrs[9];
    int n_attrs, n = -1;
    set_dtype_attr(c, attrs, &n_attrs, TFC_DOUBLE);
    tfc_tape *tape = NULL;
    if (!tfc_scope_begin(ctx, &st)) goto done;
    for (int i = 0; i < c->n_in; i++) {
        tfc_dtype idt = c->in[i].dtype ? c->in[i].dtype : TFC_DOUBLE;
        if (!(in[i] = make_tensor(&c->in[i], idt, dv.vals[i], dv.nv[i], &st))) goto fail_st;
        if (idt == TFC_DOUBLE && !c->in[i].no_grad) {
            src_idx[n_src] = i;
            src[n_src++] = in[i];
        }
    }
    tape = tfc_tape_new(ctx, false, true, &st);
    if (!tape) goto fail_st;
    for (int i = 0; i < n_src; i++) tfc_tape_watch(tape, src[i]);
    n = tfc_execute(ctx, c->op, in, c->n_in, attrs, n_attrs, out, 16, &st);
    if (n < 0) goto fail_st;
    for (int o = 0; o < n; o++) {
        tfc_dtype odt = tfc_tensor_dtype(out[o]);
        if (odt != TFC_DOUBLE && odt != TFC_FLOAT) continue;
        int64_t m = tfc_tensor_num_elements(out[o]);
        w[o] = malloc((size_t)(m ? m : 1) * sizeof(double));
        for (int64_t i = 0; i < m; i++) w[o][i] = odt == TFC_FLOAT ? (float)(urand() * 2 - 1) : urand() * 2 - 1;
        const tfc_shape *s = tfc_tensor_shape(out[o]);
        if (!(wt[o] = tfc_tensor_new(odt, s->dims, s->rank, &st))) goto fail_st;
        for (int64_t i = 0; i < m; i++) tfc_dtype_set_f64(odt, tfc_tensor_mutable_data(wt[o]), i, w[o][i]);
    }
    {
        tfc_tensor *targets[16];
        tfc_tensor *ogr[16];
        int nt = 0;
        for (int o = 0; o < n; o++)
            if (wt[o]) {
                targets[nt] = out[o];
                ogr[nt++] = wt[o];
            }
        if (!tfc_tape_gradient_n(tape, targets, nt, ogr, src, n_src, NULL, 0, TFC_UNCONNECTED_ZERO, grads, &st))
            goto fail_st;
    }
    bool ok = true;
    for (int s = 0; s < n_src && ok; s++) {
        int i = src_idx[s];
        if (!grads[s]) {
            fail(c->op, c->label, TFC_DOUBLE, "no gradient for input %d", i);
            ok = false;
            break;
        }
        if (tfc_tensor_num_elements(grads[s]) != dv.nv[i]) {
            fail(c->op, c->label, TFC_DOUBLE, "gradient of input %d has %lld elements, input has %lld", i,
                 (long long)tfc_tensor_num_elements(grads[s]), (long long)dv.nv[i]);
            ok = false;
            break;
        }
        const double *g = tfc_tensor_data(grads[s]);
        int64_t checks = dv.nv[i] < 48 ? dv.nv[i] : 48;
        for (int64_t k = 0; k < checks && ok; k++) {
            int64_t e = dv.nv[i] <= 48 ? k : (int64_t)(urand() * (double)dv.nv[i]);
            double x0 = dv.vals[i][e], h = 1e-5 * (1 + fabs(x0)), fp, fm;
            dv.vals[i][e] = x0 + h;
            bool r1 = objective(c, &dv, w, &fp, &st);
            dv.vals[i][e] = x0 - h;
            bool r2 = r1 && objective(c, &dv, w, &fm, &st);
            dv.vals[i][e] = x0;
            double f0;
            if (!r2 || !objective(c, &dv, w, &f0, &st)) goto fail_st;
            /* A point within the step of a kink or jump (Relu at 0, Round at .5, TopK ties) has one-sided
             * differences that disagree by far more than the h * f'' of a smooth function: the central
             * difference means nothing there, so the element is skipped. A smooth function's one-sided
             * differences differ by h * f'' (~1e-5 relative); a kink crossed at a fraction of the step, or
             * between two nearly equal output weights (two TopK values swapping places), by far more than
             * 1e-2, yet enough to move the central difference past the tolerance. */
            double dplus = (fp - f0) / h, dminus = (f0 - fm) / h;
            if (fabs(dplus - dminus) > 1e-2 * (1 + fabs(dplus) + fabs(dminus))) continue;
            double num = (fp - fm) / (2 * h);
            double tol = 1e-5 * (c->tol > 0 ? c->tol : 1);
            /* A kink crossed on one side only leaves that side's difference smooth: the tape's derivative at
             * x0 is then that one-sided slope (within its h * f'' / 2), while the central difference is off
             * by half the sides' disagreement. Such an element is skipped when the sides disagree by more
             * than the tolerance and the tape matches one of them. */
            bool one_side = fabs(dplus - dminus) > 2 * tol * (1 + fabs(num)) &&
                            (fabs(dplus - g[e]) <= tol * (1 + fabs(dplus)) ||
                             fabs(dminus - g[e]) <= tol * (1 + fabs(dminus)));
            if (!(fabs(num - g[e]) <= tol * (1 + fabs(num))) && !one_side) {
                fail(c->op, c->label, TFC_DOUBLE, "d/d input %d [%lld]: tape %.10g, finite difference %.10g", i,
                     (long long)e, g[e], num);
                ok = false;
            }
        }
    }
    if (ok) passed++;
    goto done;
fail_st:
    fail(c->op, c->label, TFC_DOUBLE, "%s: %s", tfc_code_name(st.code), st.msg);
done:
    tfc_tape_free(tape);
    for (int s = 0; s < n_src; s++) (void)grads[s];
    for (int i = 0; i < c->n_in; i++) tfc_tensor_unref(in[i]);
    for (int o = 0; o < 16; o++) tfc_tensor_unref(wt[o]), free(w[o]);
    if (ctx) tfc_scope_end(ctx);
    for (int i = 0; i < c->n_in; i++) free(dv.vals[i]);
}

static void test_bad_case(const bad_case *b) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *in[8] = {0}, *out[64] = {0};
    tfc_dtype dt = b->dtype ? b->dtype : TFC_FLOAT;
    double *vals = malloc(MAX_VALS * sizeof(double));
    bool built = true;
    for (int i = 0; i < b->n_in && built; i++) {
        tfc_dtype idt = b->in[i].dtype ? b->in[i].dtype : dt;
        int64_t nv = draw_values(&b->in[i], idt, vals, MAX_VALS);
        in[i] = make_tensor(&b->in[i], idt, vals, nv, &st);
        built = in[i] != NULL;
    }
    free(vals);
    if (!built) {
        fail(b->op, b->label, dt, "could not build inputs: %s", st.msg);
    } else {
        int n = tfc_execute(ctx, b->op, in, b->n_in, b->attrs, b->n_attrs, out, 64, &st);
        if (n >= 0) {
            fail(b->op, b->label, dt, "expected %s, but the op succeeded", tfc_code_name(b->code));
            for (int o = 0; o < n; o++) tfc_tensor_unref(out[o]);
        } else if (st.code != b->code) {
            fail(b->op, b->label, dt, "expected %s, got %s: %s", tfc_code_name(b->code), tfc_code_name(st.code), st.msg);
        } else {
            bool ok = true;
            for (int k = 0; k < 4 && b->expect[k]; k++)
                if (!strstr(st.msg, b->expect[k])) {
                    fail(b->op, b->label, dt, "message \"%s\" lacks \"%s\"", st.msg, b->expect[k]);
                    ok = false;
                    break;
                }
            if (ok) passed++;
        }
    }
    for (int i = 0; i < b->n_in; i++) tfc_tensor_unref(in[i]);
}

static bool uses_resource(const tfc_op *op) {
    const tfc_op_def *d = tfc_op_get_def(op);
    return (d->inputs && strstr(d->inputs, "resource")) || (d->outputs && strstr(d->outputs, "resource"));
}

/* Graph-structural ops (Const, Placeholder, NoOp) and ops that call library functions take no random tensor
 * inputs: tests/unit/test_graph_*.c cover them. */
static bool graph_only(const tfc_op *op) {
    const tfc_op_def *d = tfc_op_get_def(op);
    return (d->attrs && strstr(d->attrs, "func")) || !strcmp(d->name, "Const") || !strcmp(d->name, "Placeholder") ||
           !strcmp(d->name, "NoOp");
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "kernels";
    const char *only = argc > 2 ? argv[2] : NULL;
    const char *seed_env = getenv("TFC_TEST_SEED");
    rng_state = seed_env ? strtoull(seed_env, NULL, 10) : (uint64_t)time(NULL) ^ (uint64_t)clock();
    printf("test_ops %s: TFC_TEST_SEED=%llu\n", mode, (unsigned long long)rng_state);
    tfc_status st = TFC_STATUS_INIT;
    ctx = tfc_ctx_new(NULL, &st);
    if (!ctx) {
        fprintf(stderr, "context: %s\n", st.msg);
        return 1;
    }
    if (!strcmp(mode, "kernels") || !strcmp(mode, "gradients")) {
        bool grads = !strcmp(mode, "gradients");
        for (int t = 0; t < N_TABLES; t++)
            for (const op_case *c = case_tables[t]; c->op; c++) {
                if (only && strcmp(only, c->op)) continue;
                const tfc_op *op = tfc_op_lookup(c->op);
                if (!op) {
                    fail(c->op, c->label, 0, "op is not registered");
                    continue;
                }
                if (grads && c->grad) test_gradient_case(c, op);
                if (!grads) test_kernels_case(c, op);
            }
        /* Coverage: every registered op has a kernel case, every op with a gradient has a gradient case. */
        for (int i = 0; i < tfc_op_count(); i++) {
            const tfc_op *op = tfc_op_at(i);
            const char *name = tfc_op_get_def(op)->name;
            if ((only && strcmp(only, name)) || uses_resource(op) || graph_only(op)) continue;
            bool has_case = false, has_grad_case = false;
            for (int t = 0; t < N_TABLES; t++)
                for (const op_case *c = case_tables[t]; c->op; c++)
                    if (!strcmp(c->op, name)) {
                        has_case = true;
                        has_grad_case |= c->grad;
                    }
            if (!has_case) fail(name, "coverage", 0, "no test case");
            else if (grads && tfc_op_has_gradient(op) && !has_grad_case) fail(name, "coverage", 0, "gradient never checked");
        }
    } else if (!strcmp(mode, "bad_input")) {
        for (int t = 0; t < N_TABLES; t++)
            for (const bad_case *b = bad_tables[t]; b->op; b++)
                if (!only || !strcmp(only, b->op)) test_bad_case(b);
    } else {
        fprintf(stderr, "usage: test_ops kernels|gradients|bad_input [OpName]\n");
        return 2;
    }
    tfc_ctx_free(ctx);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
