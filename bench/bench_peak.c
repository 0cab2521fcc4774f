/* peak_fma: the machine's float32 multiply-add ceiling, measured in the same run as the kernels it rates.
 *
 * Each of `threads` threads (plain pthreads, not tfc's pool: this is the hardware's number, not the pool's)
 * runs a loop of independent FMAs on 24 vector registers (12 with AVX2's 16) that never touches memory: that
 * many chains exceed the FMA units' latency x throughput (Zen 5: 4 cycles x 2 per cycle), so the loop runs
 * at the units' rate.
 * The widest vectors the CPU has are used (AVX-512, else AVX2+FMA; elsewhere 4-float vectors of the build's
 * ISA, which may not contract to FMA). One iteration is PEAK_ITERS loop trips on every thread; units are
 * GFLOP (2 per lane per FMA), so the row's rate is GFLOP/s. bench.py prints each GEMM and training row also as
 * a fraction of this row at the same thread count. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"

#define PEAK_ACC 24
#define PEAK_ITERS 2000000L

typedef float (*peak_fn)(long trips);

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#define PEAK_BODY(VL, NACC)                                                                                    \
    typedef float v __attribute__((vector_size(VL * 4)));                                             \
    v acc[NACC];                                                                                       \
    _Pragma("GCC unroll 24") for (int i = 0; i < NACC; i++) acc[i] = (v){0} + (float)i * 1e-3f;     \
    const v x = (v){0} + 0.999999f, y = (v){0} + 1e-7f;                                                \
    for (long t = 0; t < trips; t++) {                                                                  \
        _Pragma("GCC unroll 24") for (int i = 0; i < NACC; i++) acc[i] = acc[i] * x + y;                \
        /* keeps the compiler from folding or vectorising across trips */                              \
        __asm__ volatile("" : "+v"(acc[0]), "+v"(acc[1]), "+v"(acc[2]), "+v"(acc[3]), "+v"(acc[4]),     \
                         "+v"(acc[5]), "+v"(acc[6]), "+v"(acc[7]));                                     \
    }                                                                                                   \
    v s = acc[0]; /* (loops unrolled: an array indexed in a loop would live in memory, in the FMA loop too) */ \
    _Pragma("GCC unroll 24") for (int i = 1; i < NACC; i++) s += acc[i];                                \
    float r = 0;                                                                                        \
    _Pragma("GCC unroll 16") for (int i = 0; i < VL; i++) r += s[i];                                    \
    return r;

__attribute__((target("avx512f,fma"), noinline)) static float peak_avx512(long trips) { PEAK_BODY(16, 24) }
__attribute__((target("avx2,fma"), noinline)) static float peak_avx2(long trips) { PEAK_BODY(8, 12) }
__attribute__((noinline)) static float peak_base(long trips) { PEAK_BODY(4, 12) }

/* Sets *fn; returns the multiply-adds of one loop trip (lanes x accumulators). */
static int pick(peak_fn *fn) {
    if (__builtin_cpu_supports("avx512f")) return *fn = peak_avx512, 16 * 24;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return *fn = peak_avx2, 8 * 12;
    return *fn = peak_base, 4 * 12;
}
#else
static float peak_base(long trips) {
    float acc[PEAK_ACC];
    for (int i = 0; i < PEAK_ACC; i++) acc[i] = (float)i * 1e-3f;
    for (long t = 0; t < trips; t++)
        for (int i = 0; i < PEAK_ACC; i++) acc[i] = acc[i] * 0.999999f + 1e-7f;
    float r = 0;
    for (int i = 0; i < PEAK_ACC; i++) r += acc[i];
    return r;
}
static int pick(peak_fn *fn) { return *fn = peak_base, PEAK_ACC; }
#endif

typedef struct {
    bench_case base;
    peak_fn fn;
    int threads;
    volatile float sink;
} peak_case;

typedef struct {
    peak_fn fn;
    long trips;
    float out;
} peak_arg;

static void *peak_thread(void *p) {
    peak_arg *a = p;
    a->out = a->fn(a->trips);
    return NULL;
}

static bool peak_run(bench_case *bc, int64_t iters, tfc_status *st) {
    peak_case *c = (peak_case *)bc;
    peak_arg args[64];
    pthread_t th[64];
    const int T = c->threads;
    for (int t = 0; t < T; t++) args[t] = (peak_arg){c->fn, PEAK_ITERS * (long)iters, 0};
    int started = 1;
    for (int t = 1; t < T; t++, started++)
        if (pthread_create(&th[t], NULL, peak_thread, &args[t]) != 0) break;
    peak_thread(&args[0]);
    for (int t = 1; t < started; t++) pthread_join(th[t], NULL);
    if (started < T) return tfc_status_set(st, TFC_INTERNAL, "peak_fma: cannot start %d threads", T), false;
    float s = 0;
    for (int t = 0; t < T; t++) s += args[t].out;
    c->sink = s;
    return true;
}

static void peak_free(bench_case *bc) { tfc_free(bc); }

bench_case *bench_prep_peak(tfc_ctx *ctx, const bench_cfg *cfg, const char *impl, const char *workload,
                            tfc_status *st) {
    (void)ctx;
    if (strcmp(workload, "peak_fma")) return NULL;
    if (strcmp(impl, "tfc")) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "peak_fma: unknown impl '%s'", impl), NULL;
    if (cfg->threads > 64) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "peak_fma: at most 64 threads"), NULL;
    peak_case *c = tfc_calloc(1, sizeof *c);
    if (!c) return tfc_status_oom(st, "peak_fma", sizeof *c), NULL;
    const int fmas = pick(&c->fn);
    c->threads = cfg->threads;
    /* GFLOP per iteration: trips x multiply-adds x 2 on every thread */
    const double units = (double)PEAK_ITERS * fmas * 2.0 * cfg->threads * 1e-9;
    c->base = (bench_case){peak_run, peak_free, units, NAN, -1.0};
    return &c->base;
}
