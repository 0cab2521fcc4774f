/* tfc_bench: the tfc side (and the OpenBLAS-direct side) of `make bench`.
 *
 *   tfc_bench serve --threads N [--train-steps S] [--mlp-steps S] [--weights FILE] [--data-dir DIR] [--work-dir DIR]
 *       answers the driver's commands on stdin, one per line, with one line each on stdout:
 *         prep <impl> <workload> [0]
 *                                  sets the workload up, runs a warm-up iteration and a timed one (with 0:
 *                                  the warm-up only, timed): "ok <seconds of one iteration> <units per
 *                                  iteration> <checksum|nan>",
 *                                  "na <reason>" (not available in this build) or "err <message>";
 *                                  one workload at a time: prep while one is prepared is an error
 *         run <iters>              one sample: "ok <seconds>" or "err <message>" (training times only the
 *                                  second epoch of each fit call: see bench_keras.c)
 *         free                     releases the prepared workload: "ok"
 *         quit
 *   tfc_bench peak-mem --threads N [--workload train_cnn|data_pipeline] [--train-steps S] [--data-dir DIR]
 *                      [--work-dir DIR]
 *       runs one workload in this process and prints "ok <peak resident KiB>": train_cnn (the default) trains
 *       the demo CNN, data_pipeline runs a few epochs of the input pipeline (bench_data.c). The peak is this
 *       program's own (VmHWM; ru_maxrss also counts the RSS of the forked copy of the parent before exec).
 *
 * Everything libraries print goes to stderr: the protocol owns the original stdout. */
#include <cblas.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

double bench_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void bench_fill_uniform(float *p, int64_t n, uint64_t seed) {
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
    for (int64_t i = 0; i < n; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        p[i] = (float)((double)(s >> 11) * (2.0 / 9007199254740992.0) - 1.0);
    }
}

tfc_tensor *bench_random_tensor(const int64_t *dims, int rank, uint64_t seed, tfc_status *st) {
    tfc_tensor *t = tfc_tensor_new(TFC_FLOAT, dims, rank, st);
    if (t) bench_fill_uniform(tfc_tensor_mutable_data(t), tfc_tensor_num_elements(t), seed);
    return t;
}

static FILE *proto;

static void reply(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void reply(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vfprintf(proto, fmt, ap);
    va_end(ap);
    fputc('\n', proto);
    fflush(proto);
}

/* Messages travel on one line. */
static const char *one_line(tfc_status *st) {
    for (char *p = st->msg; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    return st->msg;
}

static bench_case *prep(tfc_ctx *ctx, const bench_cfg *cfg, const char *impl, const char *workload, tfc_status *st) {
    bench_case *(*const preps[])(tfc_ctx *, const bench_cfg *, const char *, const char *, tfc_status *) = {
        bench_prep_ops, bench_prep_peak, bench_prep_keras, bench_prep_data, bench_prep_saved_model};
    for (size_t i = 0; i < sizeof preps / sizeof preps[0]; i++) {
        bench_case *c = preps[i](ctx, cfg, impl, workload, st);
        if (c || !tfc_ok(st)) return c;
    }
    tfc_status_set(st, TFC_INVALID_ARGUMENT, "unknown workload '%s' for impl '%s'", workload, impl);
    return NULL;
}

/* Peak resident memory of this program in KiB: /proc/self/status's VmHWM, the high-water mark of the address
 * space made at exec. ru_maxrss is not used: Linux keeps in it the RSS of the address space exec replaced, the
 * copy of the parent (the Python driver) that fork made. */
static long peak_rss_kib(void) {
    FILE *f = fopen("/proc/self/status", "r");
    long kib = -1;
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld", &kib) == 1) break;
    if (f) fclose(f);
    if (kib < 0) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        kib = ru.ru_maxrss;
    }
    return kib;
}

static int serve(tfc_ctx *ctx, const bench_cfg *cfg) {
    char line[512];
    bench_case *cur = NULL;
    while (fgets(line, sizeof line, stdin)) {
        char cmd[32] = {0}, a[128] = {0}, b[256] = {0}, c[16] = {0};
        int n = sscanf(line, "%31s %127s %255s %15s", cmd, a, b, c);
        if (n < 1) continue;
        tfc_status st = TFC_STATUS_INIT;
        if (!strcmp(cmd, "quit")) break;
        if (!strcmp(cmd, "free")) {
            if (cur) cur->free(cur);
            cur = NULL;
            tfc_alloc_cache_clear();
            reply("ok");
        } else if (!strcmp(cmd, "prep") && (n == 3 || n == 4)) {
            if (cur) { /* one workload per process: a silent replacement would time the wrong case */
                reply("err prep: a workload is already prepared (free it first)");
                continue;
            }
            cur = prep(ctx, cfg, a, b, &st);
            if (!cur) {
                reply("%s %s", st.code == TFC_UNIMPLEMENTED ? "na" : "err", one_line(&st));
                continue;
            }
            bool calibrate = n == 3 || strcmp(c, "0");
            double t0 = bench_now();
            bool ok = cur->run(cur, 1, &st); /* warm-up: first-touch of buffers, caches, lazy setup */
            double t1 = bench_now();
            ok = ok && (!calibrate || cur->run(cur, 1, &st));
            double t2 = calibrate ? bench_now() : t1;
            if (!calibrate) t1 = t0;
            if (!ok) {
                reply("err %s", one_line(&st));
                cur->free(cur);
                cur = NULL;
                continue;
            }
            reply("ok %.9g %.9g %.12g", t2 - t1, cur->units, cur->check);
        } else if (!strcmp(cmd, "run") && n == 2 && cur) {
            int64_t iters = strtoll(a, NULL, 10);
            if (iters < 1) iters = 1;
            cur->measured = -1;
            double t0 = bench_now();
            bool ok = cur->run(cur, iters, &st);
            double t1 = bench_now();
            if (ok)
                reply("ok %.9g", cur->measured >= 0 ? cur->measured : t1 - t0);
            else
                reply("err %s", one_line(&st));
        } else {
            reply("err bad command: %s", cmd);
        }
    }
    if (cur) cur->free(cur);
    return 0;
}

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double cpu_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* roof mode: a GEMM workload against peak_fma in one process, `rounds` rounds of one peak_fma iteration then
 * one product. Prints the peak (median), the product's wall time and its process CPU time (all threads; on a
 * machine shared with other processes CPU time leaves out the time the threads waited for a core), min and
 * median, and each as a fraction of the peak at this thread count. */
static int roof(tfc_ctx *ctx, const bench_cfg *cfg, const char *workload, int rounds) {
    long m, k, n;
    int used = 0;
    if (sscanf(workload, "gemm_%ldx%ldx%ld%n", &m, &k, &n, &used) != 3 || workload[used]) {
        fprintf(stderr, "tfc_bench roof: a gemm_<m>x<k>x<n> workload\n");
        return 2;
    }
    tfc_status st = TFC_STATUS_INIT;
    bench_case *peak = bench_prep_peak(ctx, cfg, "tfc", "peak_fma", &st);
    bench_case *g = peak ? bench_prep_ops(ctx, cfg, "tfc", workload, &st) : NULL;
    if (!g || !g->run(g, 1, &st) || !peak->run(peak, 1, &st)) {
        fprintf(stderr, "tfc_bench roof: %s\n", st.msg);
        if (peak) peak->free(peak);
        if (g) g->free(g);
        return 1;
    }
    double *v = calloc((size_t)rounds * 4, sizeof *v), *pk = v, *wall = v + rounds, *cpu = v + 2 * rounds;
    double *pkc = v + 3 * rounds;
    for (int r = 0; v && r < rounds; r++) {
        double t0 = bench_now(), c0 = cpu_seconds();
        peak->run(peak, 1, &st);
        double t1 = bench_now(), c1 = cpu_seconds();
        pkc[r] = peak->units / (c1 - c0); /* per core */
        g->run(g, 1, &st);
        wall[r] = bench_now() - t1;
        cpu[r] = cpu_seconds() - c1;
        pk[r] = peak->units / (t1 - t0);
    }
    if (v) {
        qsort(pk, (size_t)rounds, sizeof *v, cmp_double);
        qsort(wall, (size_t)rounds, sizeof *v, cmp_double);
        qsort(cpu, (size_t)rounds, sizeof *v, cmp_double);
        qsort(pkc, (size_t)rounds, sizeof *v, cmp_double);
        const double gf = 2e-9 * (double)m * (double)k * (double)n, p = pk[rounds / 2], pc = pkc[rounds / 2];
        const int T = cfg->threads;
        fprintf(proto, "%s threads=%d rounds=%d: peak_fma %.1f GFLOP/s wall (max %.1f), %.1f per CPU second\n",
                workload, T, rounds, p, pk[rounds - 1], pc);
        fprintf(proto, "  wall: min %.3f ms = %.1f%% of peak, median %.3f ms = %.1f%%\n", wall[0] * 1e3,
               100 * gf / wall[0] / p, wall[rounds / 2] * 1e3, 100 * gf / wall[rounds / 2] / p);
        fprintf(proto, "  cpu (all threads): min %.3f ms = %.1f%% of peak per CPU second, median %.3f ms = %.1f%%\n",
                cpu[0] * 1e3, 100 * gf / cpu[0] / pc, cpu[rounds / 2] * 1e3, 100 * gf / cpu[rounds / 2] / pc);
    }
    free(v);
    peak->free(peak);
    g->free(g);
    return v ? 0 : 1;
}

static void usage(void) {
    fprintf(stderr, "usage: tfc_bench serve|peak-mem|roof|dispatch --threads N [--workload W] [--rounds R] [--train-steps S] "
                    "[--mlp-steps S] "
                    "[--weights FILE] [--data-dir DIR] [--work-dir DIR]\n");
    exit(2);
}

int main(int argc, char **argv) {
    if (argc < 2) usage();
    const char *mode = argv[1];
    bench_cfg cfg = {.threads = 1, .train_steps = 10, .mlp_steps = 100, .work_dir = "."};
    const char *workload = "train_cnn"; /* peak-mem */
    int rounds = 21;                    /* roof */
    for (int i = 2; i < argc; i++) {
        if (i + 1 >= argc) usage();
        if (!strcmp(argv[i], "--threads"))
            cfg.threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--train-steps"))
            cfg.train_steps = strtoll(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--mlp-steps"))
            cfg.mlp_steps = strtoll(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--weights"))
            cfg.weights = argv[++i];
        else if (!strcmp(argv[i], "--data-dir"))
            cfg.data_dir = argv[++i];
        else if (!strcmp(argv[i], "--work-dir"))
            cfg.work_dir = argv[++i];
        else if (!strcmp(argv[i], "--workload"))
            workload = argv[++i];
        else if (!strcmp(argv[i], "--rounds"))
            rounds = atoi(argv[++i]);
        else
            usage();
    }
    if (cfg.threads < 1 || cfg.train_steps < 1 || cfg.mlp_steps < 1) usage();
    const bool peak_data = !strcmp(workload, "data_pipeline");
    const bool is_roof = !strcmp(mode, "roof");
    if (is_roof ? rounds < 1 : !peak_data && strcmp(workload, "train_cnn")) usage();

    int fd = dup(STDOUT_FILENO);
    if (fd < 0 || !(proto = fdopen(fd, "w"))) return 1;
    dup2(STDERR_FILENO, STDOUT_FILENO);

    /* One thread count for both sides: tfc's pool (which also caps OpenBLAS inside tfc's MatMul) and OpenBLAS
     * when it is called directly. */
    openblas_set_num_threads(cfg.threads);
    tfc_status st = TFC_STATUS_INIT;
    if (!strcmp(mode, "peak-mem") && peak_data && !bench_data_ensure_file(&cfg, &st)) {
        reply("%s %s", st.code == TFC_UNIMPLEMENTED ? "na" : "err", one_line(&st));
        return st.code == TFC_UNIMPLEMENTED ? 0 : 1;
    }
    tfc_ctx *ctx = tfc_ctx_new(&(tfc_ctx_opts){.intra_op_threads = cfg.threads, .seed = 1, .has_seed = true}, &st);
    if (!ctx) {
        fprintf(stderr, "tfc_bench: %s\n", st.msg);
        return 1;
    }
    int rc = 0;
    if (!strcmp(mode, "serve")) {
        rc = serve(ctx, &cfg);
    } else if (is_roof) {
        rc = roof(ctx, &cfg, workload, rounds);
        fflush(proto);
    } else if (!strcmp(mode, "dispatch")) {
        rc = bench_dispatch(ctx, (int)(cfg.mlp_steps * 200), proto, &st);
        if (rc) fprintf(stderr, "tfc_bench dispatch: %s\n", st.msg);
    } else if (!strcmp(mode, "peak-mem")) {
        if (peak_data ? bench_peak_mem_data(ctx, &cfg, &st) : bench_peak_mem_train_cnn(ctx, &cfg, &st)) {
            reply("ok %ld", peak_rss_kib());
        } else {
            reply("%s %s", st.code == TFC_UNIMPLEMENTED ? "na" : "err", one_line(&st));
            rc = st.code == TFC_UNIMPLEMENTED ? 0 : 1;
        }
    } else {
        usage();
    }
    tfc_ctx_free(ctx);
    return rc;
}
