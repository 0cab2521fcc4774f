/* allreduce_4MB / allreduce_64MB: tfc's all-reduce (tfc_collective_all_reduce over the strategy's MPI group:
 * header exchange, new result tensor, MPI_Iallreduce polled against the deadline) against a raw MPI_Allreduce
 * of the same float32 buffer, interleaved in one run. Run under mpirun with 2 processes (`make bench` does):
 *     mpirun -np 2 build/bench/bench_allreduce [repeats]
 * Rank 0 prints one row per size: medians in ms, bus bandwidth (2 (n-1)/n bytes / time) and tfc/raw ratio
 * (bandwidth; > 1: tfc faster; the target is >= 0.9). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tfc/tfc.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    int repeats = argc > 1 ? atoi(argv[1]) : 15;
    if (repeats < 1 || repeats > 1000) repeats = 15;
    tfc_status st = TFC_STATUS_INIT;
    tfc_ctx *ctx = tfc_ctx_new(&(tfc_ctx_opts){.intra_op_threads = 1}, &st);
    tfc_strategy *s = ctx ? tfc_multi_worker_mirrored_strategy_new(ctx, NULL, &st) : NULL;
    if (!s) return fprintf(stderr, "bench_allreduce: %s\n", st.msg), 1;
    tfc_collective *c = tfc_strategy_collective(s);
    if (!c) return fprintf(stderr, "bench_allreduce: run under mpirun with 2 or more processes\n"), 1;
    int rank = tfc_collective_rank(c), n = tfc_collective_size(c);
    const int64_t sizes[] = {4 << 20, 64 << 20};
    const char *names[] = {"allreduce_4MB", "allreduce_64MB"};
    for (int k = 0; k < 2; k++) {
        int64_t count = sizes[k] / 4;
        tfc_tensor *t = tfc_tensor_new(TFC_FLOAT, &count, 1, &st);
        float *raw_in = malloc((size_t)sizes[k]), *raw_out = malloc((size_t)sizes[k]);
        if (!t || !raw_in || !raw_out) return fprintf(stderr, "bench_allreduce: out of memory\n"), 1;
        float *d = tfc_tensor_mutable_data(t);
        for (int64_t i = 0; i < count; i++) d[i] = raw_in[i] = (float)(i % 1000) * 0.001f + (float)rank;
        double *ttfc = malloc(sizeof(double) * (size_t)repeats), *traw = malloc(sizeof(double) * (size_t)repeats);
        for (int r = -1; r < repeats; r++) { /* r = -1: warm-up */
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = now();
            tfc_tensor *out = tfc_collective_all_reduce(c, t, TFC_REDUCE_SUM, &st);
            double t1 = now();
            if (!out) return fprintf(stderr, "bench_allreduce: %s\n", st.msg), 1;
            tfc_tensor_unref(out);
            MPI_Barrier(MPI_COMM_WORLD);
            double t2 = now();
            MPI_Allreduce(raw_in, raw_out, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            double t3 = now();
            if (r >= 0) ttfc[r] = t1 - t0, traw[r] = t3 - t2;
        }
        /* the slowest rank decides a collective's time */
        MPI_Allreduce(MPI_IN_PLACE, ttfc, repeats, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        MPI_Allreduce(MPI_IN_PLACE, traw, repeats, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        qsort(ttfc, (size_t)repeats, sizeof *ttfc, cmp);
        qsort(traw, (size_t)repeats, sizeof *traw, cmp);
        double mt = ttfc[repeats / 2], mr = traw[repeats / 2], bus = 2.0 * (n - 1) / n * (double)sizes[k] / 1e9;
        if (rank == 0)
            printf("%-16s %d procs  tfc %8.3f ms (%6.2f GB/s)  raw MPI_Allreduce %8.3f ms (%6.2f GB/s)  ratio %.2f  "
                   "target >= 0.9 %s\n", names[k], n, mt * 1e3, bus / mt, mr * 1e3, bus / mr, mr / mt,
                   mr / mt >= 0.9 ? "ok" : "MISS");
        free(ttfc);
        free(traw);
        free(raw_in);
        free(raw_out);
        tfc_tensor_unref(t);
    }
    tfc_strategy_free(s);
    tfc_ctx_free(ctx);
    return 0;
}
