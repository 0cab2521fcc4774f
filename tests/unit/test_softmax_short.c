/* Softmax and SparseSoftmaxCrossEntropyWithLogits on short float32 rows (src/kernels/cpu/nn_softmax.c: rows of
 * up to 32 classes run a block path, one exponential pass over many rows): against a float64 reference and
 * against the per-row SIMD kernel (same exponentials; the sum may differ in the last place), rows counts
 * around the block size (64), class counts around the vector widths and the block path's limit (32), one and
 * two threads, and rows with NaN / infinities. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/nn_internal.h"
#include "tfc/eager.h"
#include "tfc_test.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static float urand(float lo, float hi) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return lo + (hi - lo) * (float)((rng >> 40) * (1.0 / 16777216.0));
}

static tfc_tensor *f32(const float *v, int64_t rows, int64_t n) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *t = tfc_tensor_new(TFC_FLOAT, (int64_t[]){rows, n}, 2, &st);
    REQUIRE(t);
    memcpy(tfc_tensor_mutable_data(t), v, (size_t)(rows * n) * sizeof(float));
    return t;
}

/* True when a and b agree to rel, or both NaN. With rel > 0, also within 1e-9 absolutely: probabilities far
 * below the row's largest carry the rounding of x - max in float32 (e.g. 4e-5 relative at e^-70). */
static bool close_to(double a, double b, double rel) {
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    return fabs(a - b) <= rel * fabs(b) + (rel > 0 ? 1e-9 : 0);
}

static void check_shape(tfc_ctx *ctx, int64_t rows, int64_t n, float scale, bool specials) {
    tfc_status st = TFC_STATUS_INIT;
    const int64_t total = rows * n;
    float *x = malloc((size_t)total * sizeof(float)), *row = malloc((size_t)n * sizeof(float));
    int64_t *lab = malloc((size_t)rows * sizeof(int64_t));
    REQUIRE(x && row && lab);
    for (int64_t i = 0; i < total; i++) x[i] = urand(-scale, scale);
    for (int64_t r = 0; r < rows; r++) lab[r] = (int64_t)urand(0, (float)n) % n;
    if (specials && rows >= 4) {
        x[0 * n + n / 2] = NAN;       /* row 0: NaN -> all NaN */
        x[1 * n + 0] = INFINITY;      /* row 1: +inf -> NaN where x is inf, the rest exp(-inf) = 0 / NaN sum */
        for (int64_t c = 0; c < n; c++) x[2 * n + c] = c % 2 ? -INFINITY : 1e4f; /* row 2: -inf classes get 0 */
    }
    tfc_tensor *xt = f32(x, rows, n);
    tfc_tensor *lt = tfc_tensor_new(TFC_INT64, (int64_t[]){rows}, 1, &st);
    REQUIRE(lt);
    memcpy(tfc_tensor_mutable_data(lt), lab, (size_t)rows * sizeof(int64_t));
    tfc_tensor *y = tfc_emit(ctx, "Softmax", &xt, 1, NULL, 0, &st);
    CHECK_OK(&st);
    tfc_tensor *out[2] = {0};
    CHECK(tfc_execute(ctx, "SparseSoftmaxCrossEntropyWithLogits", (tfc_tensor *[]){xt, lt}, 2, NULL, 0, out, 2, &st) ==
          2);
    CHECK_OK(&st);
    REQUIRE(y && out[0] && out[1]);
    const float *yv = tfc_tensor_data(y), *loss = tfc_tensor_data(out[0]), *back = tfc_tensor_data(out[1]);
    const tfc_nn_simd *simd = tfc_nn_simd_get();
    int64_t bad_ref = 0, bad_row = 0, bad_back = 0, bad_loss = 0;
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * n;
        /* float64 reference */
        double m = -INFINITY, s = 0;
        for (int64_t c = 0; c < n; c++) m = xr[c] > m ? xr[c] : m;
        for (int64_t c = 0; c < n; c++) s += exp((double)xr[c] - m);
        bool finite_row = true;
        for (int64_t c = 0; c < n; c++) finite_row = finite_row && !isnan(xr[c]) && xr[c] != INFINITY;
        for (int64_t c = 0; c < n; c++) {
            double ref = exp((double)xr[c] - m) / s;
            if (!finite_row) ref = NAN;
            if (finite_row ? !close_to(yv[r * n + c], ref, 2e-6) : !isnan(yv[r * n + c])) {
                if (!bad_ref) fprintf(stderr, "row %lld class %lld: %.9g vs %.9g\n", (long long)r, (long long)c, yv[r * n + c], ref);
                bad_ref++;
            }
            /* SparseSoftmaxCrossEntropyWithLogits' backprop is softmax - onehot from the same arithmetic */
            float want = yv[r * n + c] - (c == lab[r] ? 1.0f : 0.0f);
            if (!close_to(back[r * n + c], want, 0) && !(isnan(want) && isnan(back[r * n + c]))) bad_back++;
        }
        double lref = finite_row ? log(s) - ((double)xr[lab[r]] - m) : NAN;
        if (finite_row ? !close_to(loss[r], lref, 2e-6) && fabs(loss[r] - lref) > 2e-6 : !isnan(loss[r])) bad_loss++;
        /* the per-row SIMD kernel: the same exponentials, sums that may differ in the last place */
        simd->softmax_row(xr, row, n, false);
        for (int64_t c = 0; c < n; c++)
            if (!close_to(yv[r * n + c], row[c], 1e-6)) bad_row++;
    }
    if (bad_ref || bad_row || bad_back || bad_loss)
        fprintf(stderr, "rows %lld classes %lld scale %g: %lld vs float64, %lld vs row kernel, %lld backprop, %lld loss\n",
                (long long)rows, (long long)n, scale, (long long)bad_ref, (long long)bad_row, (long long)bad_back,
                (long long)bad_loss);
    CHECK(bad_ref == 0);
    CHECK(bad_row == 0);
    CHECK(bad_back == 0);
    CHECK(bad_loss == 0);
    tfc_tensor_unref(xt);
    tfc_tensor_unref(lt);
    tfc_tensor_unref(y);
    tfc_tensor_unref(out[0]);
    tfc_tensor_unref(out[1]);
    free(x);
    free(row);
    free(lab);
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    const int threads[2] = {1, 2};
    const int64_t rows[] = {1, 3, 5, 63, 64, 65, 130, 257};
    const int64_t classes[] = {1, 2, 3, 4, 7, 8, 9, 10, 15, 16, 17, 31, 32, 33, 40};
    for (int t = 0; t < 2; t++) {
        tfc_ctx *ctx = tfc_ctx_new(&(tfc_ctx_opts){.intra_op_threads = threads[t]}, &st);
        REQUIRE(ctx);
        for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
            for (size_t k = 0; k < sizeof classes / sizeof classes[0]; k++) {
                check_shape(ctx, rows[i], classes[k], 5.0f, false);
                check_shape(ctx, rows[i], classes[k], 60.0f, true);
            }
        tfc_ctx_free(ctx);
    }
    TEST_MAIN_END();
}
