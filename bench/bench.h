/* tfc benchmark worker (tfc_bench): shared declarations.
 *
 * The worker runs one side of a benchmark (tfc itself, or OpenBLAS called directly) and answers the driver
 * (bench/bench.py) over a line protocol, so that the driver can interleave tfc's samples with the peers'
 * samples (A B A B ...) while every process stays warm. See bench/README.md for the protocol. */
#ifndef TFC_BENCH_H
#define TFC_BENCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tfc/tfc.h"

/* Settings of one worker process (command-line flags). */
typedef struct bench_cfg {
    int threads;            /* tfc intra_op_threads and OpenBLAS threads */
    int64_t train_steps;    /* batches of 128 per train_cnn sample (one fit call) and in peak-mem mode */
    int64_t mlp_steps;      /* batches of 128 per train_mlp sample */
    const char *weights;    /* raw float32 weights of the demo CNN (bench.py writes them), or NULL */
    const char *data_dir;   /* Fashion-MNIST folder, NULL = tfc's default (TFC_DATASETS_DIR or Debian's) */
    const char *work_dir;   /* scratch folder for generated files (data_pipeline's TFRecord) */
} bench_cfg;

/* One prepared workload. run executes `iters` iterations; one iteration is `units` units of work (ops,
 * images, elements). check is a checksum of the result where sides can be compared (NAN otherwise). A run that
 * times only part of its work itself (training: the last epoch of each fit call) sets measured to those
 * seconds; it stays negative otherwise and the worker reports the run's wall time. */
typedef struct bench_case bench_case;
struct bench_case {
    bool (*run)(bench_case *c, int64_t iters, tfc_status *st);
    void (*free)(bench_case *c);
    double units;
    double check;
    double measured;
};

/* Each prep function returns a new case, or NULL with st set. TFC_UNIMPLEMENTED means "not available in this
 * build" (the API the workload needs is not in libtfc yet); the driver reports it as such. NULL with st OK
 * means the workload name is not one of this file's. */
bench_case *bench_prep_ops(tfc_ctx *ctx, const bench_cfg *cfg, const char *impl, const char *workload,
                           tfc_status *st);
bench_case *bench_prep_peak(tfc_ctx *ctx, const bench_cfg *cfg, const char *impl, const char *workload,
                            tfc_status *st); /* peak_fma (bench_peak.c) */
bench_case *bench_prep_keras(tfc_ctx *ctx, const bench_cfg *cfg, const char *impl, const char *workload,
                             tfc_status *st);
bench_case *bench_prep_data(tfc_ctx *ctx, const bench_cfg *cfg, const char *impl, const char *workload,
                            tfc_status *st);
bench_case *bench_prep_saved_model(tfc_ctx *ctx, const bench_cfg *cfg, const char *impl, const char *workload,
                                   tfc_status *st);

/* peak-mem mode: trains the demo CNN (full Fashion-MNIST, batch 128, steps batches) in this process. */
bool bench_peak_mem_train_cnn(tfc_ctx *ctx, const bench_cfg *cfg, tfc_status *st);
/* peak-mem mode, data_pipeline: a few epochs of the pipeline in this process (bench_data.c). The TFRecord file
 * must exist: bench_data_ensure_file writes it in a child process (call it before making threads). */
bool bench_data_ensure_file(const bench_cfg *cfg, tfc_status *st);
bool bench_peak_mem_data(tfc_ctx *ctx, const bench_cfg *cfg, tfc_status *st);
/* tfc_bench dispatch (bench_dispatch.c): per-call overhead of tiny Conv2D / MatMul calls, eager and in a graph
 * function, over `calls` calls; writes "<case> <microseconds>" lines to out. 0 on success. */
int bench_dispatch(tfc_ctx *ctx, int calls, FILE *out, tfc_status *st);

/* Helpers (tfc_bench.c). */
double bench_now(void);                               /* monotonic seconds */
void bench_fill_uniform(float *p, int64_t n, uint64_t seed); /* values in [-1, 1) */
tfc_tensor *bench_random_tensor(const int64_t *dims, int rank, uint64_t seed, tfc_status *st);

#endif
