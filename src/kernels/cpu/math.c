/* Math kernels. */
#include "kernels/cpu/broadcast.h"
#include "kernels/cpu/kernels.h"

typedef struct {
    tfc_bcast bc;
    const void *a, *b;
    void *out;
    int op; /* 0 add, 1 mul */
    tfc_dtype dt;
} binary_job;

#define BINARY_LOOP(T, EXPR)                                                                     \
    for (int64_t r = begin; r < end; r++) {                                                      \
        int64_t ao, bo;                                                                          \
        tfc_bcast_row(&j->bc, r, &ao, &bo);                                                      \
        const T *x = (const T *)j->a + ao, *y = (const T *)j->b + bo;                            \
        T *z = (T *)j->out + r * j->bc.inner;                                                    \
        int64_t sa = j->bc.a_inner, sb = j->bc.b_inner;                                          \
        for (int64_t i = 0; i < j->bc.inner; i++) z[i] = EXPR(x[i * sa], y[i * sb]);             \
    }

#define ADD(x, y) ((x) + (y))
#define MULT(x, y) ((x) * (y))

static void binary_rows(void *arg, int64_t begin, int64_t end) {
    binary_job *j = arg;
    switch (j->dt) {
    case TFC_FLOAT: if (j->op == 0) { BINARY_LOOP(float, ADD) } else { BINARY_LOOP(float, MULT) } break;
    case TFC_DOUBLE: if (j->op == 0) { BINARY_LOOP(double, ADD) } else { BINARY_LOOP(double, MULT) } break;
    default:
        for (int64_t r = begin; r < end; r++) {
            int64_t ao, bo;
            tfc_bcast_row(&j->bc, r, &ao, &bo);
            for (int64_t i = 0; i < j->bc.inner; i++) {
                double x = tfc_dtype_get_f64(j->dt, j->a, ao + i * j->bc.a_inner);
                double y = tfc_dtype_get_f64(j->dt, j->b, bo + i * j->bc.b_inner);
                tfc_dtype_set_f64(j->dt, j->out, r * j->bc.inner + i, j->op == 0 ? x + y : x * y);
            }
        }
    }
}

static bool binary(tfc_kernel_ctx *k, int op, tfc_status *st) {
    binary_job j;
    tfc_bcast_init(&j.bc, &k->in[0]->shape, &k->in[1]->shape, &k->out[0]->shape);
    j.a = k->in[0]->data;
    j.b = k->in[1]->data;
    j.out = k->out[0]->data;
    j.op = op;
    j.dt = k->in[0]->dtype;
    if (k->out[0]->num_elements == 0) return true;
    tfc_parallel_for(k->pool, j.bc.rows, j.bc.inner, binary_rows, &j);
    return true;
}

static bool add_v2(tfc_kernel_ctx *k, tfc_status *st) { return binary(k, 0, st); }
static bool mul(tfc_kernel_ctx *k, tfc_status *st) { return binary(k, 1, st); }

const tfc_kernel_reg tfc_cpu_kernels_math[] = {
    {"AddV2", add_v2}, {"Mul", mul}, {NULL, NULL},
};
