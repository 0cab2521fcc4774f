/* tfc_bench dispatch: per-call overhead of small Conv2D and MatMul calls, eager (tfc_execute: attrs resolved,
 * the kernel instance found in the context's cache) and inside a graph function (tfc_function_call of a function
 * of 20 chained ops: instances made once when the function is instantiated). The tensors are tiny (a 1x4x4x2
 * image, a 3x3x2x2 filter; 4x4 matrices), so the time is the framework's, not the arithmetic's; it is the calling
 * thread's CPU time (the context has one intra-op thread, so every op runs on it). Prints one line
 * per case to `out`: "<case> <microseconds per op>". Built into tfc_bench, or alone with -DBENCH_DISPATCH_MAIN against
 * any libtfc (to compare two builds): `bench_dispatch [calls [case]]`, case conv2d_1x4x4x2 or matmul_4x4. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tfc/tfc.h"

#define CHAIN 20

/* CPU seconds of the calling thread: the context runs with one intra-op thread, so every op runs here, and time
 * the machine's other processes take is not counted (a shared machine's wall time varies by 2x run to run) */
static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const int64_t strides[4] = {1, 1, 1, 1};

static tfc_tensor *conv(tfc_ctx *ctx, tfc_tensor *x, tfc_tensor *f, tfc_status *st) {
    tfc_tensor *in[2] = {x, f}, *out[1];
    const tfc_attr a[] = {TFC_ATTR_INTS("strides", strides, 4), TFC_ATTR_S("padding", "SAME")};
    return tfc_execute(ctx, "Conv2D", in, 2, a, 2, out, 1, st) == 1 ? out[0] : NULL;
}

static tfc_tensor *matmul(tfc_ctx *ctx, tfc_tensor *x, tfc_tensor *w, tfc_status *st) {
    tfc_tensor *in[2] = {x, w}, *out[1];
    const tfc_attr a[] = {TFC_ATTR_B("transpose_b", true)};
    return tfc_execute(ctx, "MatMul", in, 2, a, 1, out, 1, st) == 1 ? out[0] : NULL;
}

typedef tfc_tensor *(*op_fn)(tfc_ctx *, tfc_tensor *, tfc_tensor *, tfc_status *);

/* the traced function: CHAIN ops, each on the previous result */
static int chain(tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int max_out, void *user,
                 tfc_status *st) {
    (void)n_in, (void)max_out;
    op_fn op = (op_fn)user;
    tfc_tensor *y = in[0];
    for (int i = 0; i < CHAIN && y; i++) y = op(ctx, y, in[1], st);
    if (!y) return -1;
    out[0] = y;
    return 1;
}

static tfc_tensor *filled(const int64_t *dims, int rank, tfc_status *st) {
    tfc_tensor *t = tfc_tensor_new(TFC_FLOAT, dims, rank, st);
    if (!t) return NULL;
    float *p = tfc_tensor_mutable_data(t);
    for (int64_t i = 0; i < tfc_tensor_num_elements(t); i++) p[i] = 0.01f * (float)(i % 7);
    return t;
}

/* The timed loops, kept out of line so that an instruction counter can be pointed at them (valgrind
 * --tool=callgrind --toggle-collect=eager_loop: instructions per call without the machine's noise). */
__attribute__((noinline)) static bool eager_loop(tfc_ctx *ctx, op_fn op, tfc_tensor *x, tfc_tensor *w, int calls,
                                                 tfc_status *st) {
    for (int i = 0; i < calls; i++) {
        if (!tfc_scope_begin(ctx, st)) return false;
        tfc_tensor *y = op(ctx, x, w, st);
        tfc_scope_end(ctx);
        if (!y) return false;
    }
    return true;
}

__attribute__((noinline)) static bool graph_loop(tfc_function *f, tfc_tensor **in, int calls, tfc_status *st) {
    tfc_tensor *out[1];
    for (int i = 0; i < calls; i++) {
        if (tfc_function_call(f, in, 2, out, 1, st) != 1) return false;
        tfc_tensor_unref(out[0]);
    }
    return true;
}

static const char *only_case; /* the standalone program's second argument: run only this case */

/* Microseconds per op of `calls` eager calls, and of graph calls of the CHAIN-op function (per op). */
static bool run_case(tfc_ctx *ctx, FILE *out_f, const char *name, op_fn op, tfc_tensor *x, tfc_tensor *w,
                     int calls, tfc_status *st) {
    if (only_case && strcmp(only_case, name)) return true;
    if (!tfc_scope_begin(ctx, st)) return false;
    for (int i = 0; i < 100; i++) /* warm up: the instance cache, free lists */
        if (!op(ctx, x, w, st)) return tfc_scope_end(ctx), false;
    tfc_scope_end(ctx);
    double t0 = now_s();
    if (!eager_loop(ctx, op, x, w, calls, st)) return false;
    const double eager = (now_s() - t0) / calls * 1e6;

    tfc_function *f = tfc_function_new(ctx, chain, (void *)op, &(tfc_function_opts){.name = name}, st);
    if (!f) return false;
    tfc_tensor *in[2] = {x, w}, *out[1];
    bool ok = true;
    for (int i = 0; i < 10 && ok; i++) /* trace, instantiate, warm up */
        if ((ok = tfc_function_call(f, in, 2, out, 1, st) == 1)) tfc_tensor_unref(out[0]);
    const int gcalls = calls / CHAIN > 10 ? calls / CHAIN : 10;
    t0 = now_s();
    ok = ok && graph_loop(f, in, gcalls, st);
    const double graph = (now_s() - t0) / gcalls / CHAIN * 1e6;
    tfc_function_free(f);
    if (ok) fprintf(out_f, "%s_eager_us %.3f\n%s_graph_us_per_op %.3f\n", name, eager, name, graph);
    return ok;
}

int bench_dispatch(tfc_ctx *ctx, int calls, FILE *out, tfc_status *st) {
    const int64_t xd[4] = {1, 4, 4, 2}, fd[4] = {3, 3, 2, 2}, md[2] = {4, 4};
    tfc_tensor *x = filled(xd, 4, st), *f = x ? filled(fd, 4, st) : NULL, *a = f ? filled(md, 2, st) : NULL,
               *b = a ? filled(md, 2, st) : NULL;
    bool ok = b && run_case(ctx, out, "conv2d_1x4x4x2", conv, x, f, calls, st) &&
              run_case(ctx, out, "matmul_4x4", matmul, a, b, calls, st);
    tfc_tensor_unref(x);
    tfc_tensor_unref(f);
    tfc_tensor_unref(a);
    tfc_tensor_unref(b);
    return ok ? 0 : 1;
}

#ifdef BENCH_DISPATCH_MAIN
int main(int argc, char **argv) {
    tfc_status st = TFC_STATUS_INIT;
    only_case = argc > 2 ? argv[2] : NULL;
    tfc_ctx *ctx = tfc_ctx_new(&(tfc_ctx_opts){.intra_op_threads = 1}, &st);
    int rc = ctx ? bench_dispatch(ctx, argc > 1 ? atoi(argv[1]) : 20000, stdout, &st) : 1;
    if (rc) fprintf(stderr, "bench_dispatch: %s\n", st.msg);
    tfc_ctx_free(ctx);
    return rc;
}
#endif
