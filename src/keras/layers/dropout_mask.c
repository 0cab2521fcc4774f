/* The dropout mask shared by the recurrent layers (dropout, recurrent_dropout) and MultiHeadAttention. */
#include "keras/layers/dropout_mask.h"

#include "tfc/ops/random.h"

tfc_tensor *tfc_keras_dropout_mask(tfc_ctx *ctx, tfc_dtype dt, const int64_t *dims, int rank, double rate,
                                   tfc_status *st) {
    tfc_tensor *u = tfc_random_uniform(ctx, dims, rank, dt, 0, 1, TFC_RANDOM_NO_SEED, st);
    tfc_tensor *rt = u ? tfc_scalar(dt, rate, st) : NULL, *sc = rt ? tfc_scalar(dt, 1.0 / (1.0 - rate), st) : NULL;
    tfc_attr ca = TFC_ATTR_T("DstT", dt);
    tfc_tensor *keep = sc ? tfc_emit(ctx, "GreaterEqual", (tfc_tensor *[]){u, rt}, 2, NULL, 0, st) : NULL;
    tfc_tensor *m = keep ? tfc_emit(ctx, "Cast", &keep, 1, &ca, 1, st) : NULL;
    tfc_tensor *out = m ? tfc_emit(ctx, "Mul", (tfc_tensor *[]){m, sc}, 2, NULL, 0, st) : NULL;
    tfc_tensor_unref(rt);
    tfc_tensor_unref(sc);
    return out;
}
