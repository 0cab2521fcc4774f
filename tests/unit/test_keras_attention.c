/* MultiHeadAttention: outputs and attention scores against a scalar reference of Keras's equations (with and
 * without the causal mask and an attention mask), weight layout, errors and ownership (ASan build for leaks). */
#include <math.h>
#include <string.h>

#include "tfc/keras.h"
#include "tfc_test.h"

static tfc_ctx *ctx;

enum { B = 2, TQ = 3, TK = 3, DQ = 4, DV = 2, H = 2, KD = 3, VD = 2 };

static float wq[DQ][H][KD], bq[H][KD], wk[DV][H][KD], bk[H][KD], wv[DV][H][VD], bv[H][VD], wo[H][VD][DQ], bo[DQ];
static float q_in[B][TQ][DQ], v_in[B][TK][DV];

static void fill(float *p, int n, double a, double b) {
    for (int i = 0; i < n; i++) p[i] = (float)(a * sin(b * i + 0.3 * b));
}

/* Keras's MultiHeadAttention for batch row bi; mask[i][j] (NULL: all) and causal. */
static void reference(int bi, const bool (*mask)[TK], bool causal, double out[TQ][DQ], double probs[H][TQ][TK]) {
    double q[TQ][H][KD], k[TK][H][KD], v[TK][H][VD], o[TQ][H][VD];
    for (int t = 0; t < TQ; t++)
        for (int h = 0; h < H; h++)
            for (int d = 0; d < KD; d++) {
                q[t][h][d] = bq[h][d];
                for (int c = 0; c < DQ; c++) q[t][h][d] += q_in[bi][t][c] * wq[c][h][d];
                q[t][h][d] /= sqrt((double)KD);
            }
    for (int t = 0; t < TK; t++)
        for (int h = 0; h < H; h++) {
            for (int d = 0; d < KD; d++) {
                k[t][h][d] = bk[h][d];
                for (int c = 0; c < DV; c++) k[t][h][d] += v_in[bi][t][c] * wk[c][h][d];
            }
            for (int d = 0; d < VD; d++) {
                v[t][h][d] = bv[h][d];
                for (int c = 0; c < DV; c++) v[t][h][d] += v_in[bi][t][c] * wv[c][h][d];
            }
        }
    for (int h = 0; h < H; h++)
        for (int i = 0; i < TQ; i++) {
            double s[TK], mx = -1e300, z = 0;
            for (int j = 0; j < TK; j++) {
                s[j] = 0;
                for (int d = 0; d < KD; d++) s[j] += q[i][h][d] * k[j][h][d];
                if ((mask && !mask[i][j]) || (causal && j > i)) s[j] -= 1e9;
                if (s[j] > mx) mx = s[j];
            }
            for (int j = 0; j < TK; j++) z += (s[j] = exp(s[j] - mx));
            for (int j = 0; j < TK; j++) probs[h][i][j] = s[j] / z;
            for (int d = 0; d < VD; d++) {
                o[i][h][d] = 0;
                for (int j = 0; j < TK; j++) o[i][h][d] += probs[h][i][j] * v[j][h][d];
            }
        }
    for (int i = 0; i < TQ; i++)
        for (int e = 0; e < DQ; e++) {
            out[i][e] = bo[e];
            for (int h = 0; h < H; h++)
                for (int d = 0; d < VD; d++) out[i][e] += o[i][h][d] * wo[h][d][e];
        }
}

static tfc_tensor *f32(const float *p, const int64_t *dims, int rank, size_t n) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *t = tfc_tensor_from_data(TFC_FLOAT, dims, rank, p, n * sizeof(float), &st);
    REQUIRE(t);
    return t;
}

static void run(bool causal, bool with_mask) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_layer *l = tfc_layers_multi_head_attention(.num_heads = H, .key_dim = KD, .value_dim = VD,
                                                   .use_causal_mask = causal, .return_attention_scores = true);
    REQUIRE(l);
    bool mask[B][TQ][TK];
    for (int b = 0; b < B; b++)
        for (int i = 0; i < TQ; i++)
            for (int j = 0; j < TK; j++) mask[b][i][j] = j == 0 || (b + i + j) % 3 != 0;
    tfc_tensor *q = f32(&q_in[0][0][0], (int64_t[]){B, TQ, DQ}, 3, B * TQ * DQ);
    tfc_tensor *v = f32(&v_in[0][0][0], (int64_t[]){B, TK, DV}, 3, B * TK * DV);
    tfc_tensor *m = tfc_tensor_from_data(TFC_BOOL, (int64_t[]){B, TQ, TK}, 3, mask, sizeof mask, &st);
    tfc_tensor *w[8] = {
        f32(&wq[0][0][0], (int64_t[]){DQ, H, KD}, 3, DQ * H * KD), f32(&bq[0][0], (int64_t[]){H, KD}, 2, H * KD),
        f32(&wk[0][0][0], (int64_t[]){DV, H, KD}, 3, DV * H * KD), f32(&bk[0][0], (int64_t[]){H, KD}, 2, H * KD),
        f32(&wv[0][0][0], (int64_t[]){DV, H, VD}, 3, DV * H * VD), f32(&bv[0][0], (int64_t[]){H, VD}, 2, H * VD),
        f32(&wo[0][0][0], (int64_t[]){H, VD, DQ}, 3, H * VD * DQ), f32(bo, (int64_t[]){DQ}, 1, DQ)};
    tfc_tensor *ins[4] = {q, v, v, m};
    int n_in = with_mask ? 4 : 2;
    tfc_shape shapes[4];
    for (int i = 0; i < n_in; i++) shapes[i] = *tfc_tensor_shape(ins[i]);
    CHECK(tfc_layer_build(l, ctx, shapes, n_in, &st));
    CHECK_OK(&st);
    CHECK(tfc_layer_set_weights(l, ctx, w, 8, &st));
    CHECK_OK(&st);
    tfc_tensor *out[2] = {NULL, NULL};
    CHECK(tfc_layer_call(l, ctx, ins, n_in, out, 2, false, &st));
    CHECK_OK(&st);
    REQUIRE(out[0] && out[1]);
    CHECK(tfc_tensor_rank(out[1]) == 4 && tfc_tensor_dim(out[1], 1) == H);
    const float *y = tfc_tensor_data(out[0]), *p = tfc_tensor_data(out[1]);
    for (int b = 0; b < B; b++) {
        double ro[TQ][DQ], rp[H][TQ][TK];
        reference(b, with_mask ? (const bool (*)[TK])mask[b] : NULL, causal, ro, rp);
        for (int i = 0; i < TQ * DQ; i++) CHECK_NEAR(y[b * TQ * DQ + i], (&ro[0][0])[i], 1e-5);
        for (int i = 0; i < H * TQ * TK; i++) CHECK_NEAR(p[b * H * TQ * TK + i], (&rp[0][0][0])[i], 1e-5);
    }
    for (int i = 0; i < 8; i++) tfc_tensor_unref(w[i]);
    tfc_tensor_unref(out[0]);
    tfc_tensor_unref(out[1]);
    tfc_tensor_unref(q);
    tfc_tensor_unref(v);
    tfc_tensor_unref(m);
    tfc_layer_unref(l);
}

static void test_errors(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_shape ok3[2] = {{.rank = 3, .dims = {2, 3, 4}}, {.rank = 3, .dims = {2, 5, 6}}};
    tfc_layer *l = tfc_layers_multi_head_attention(.num_heads = 0, .key_dim = 2);
    CHECK(!tfc_layer_build(l, ctx, ok3, 2, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_status_clear(&st);
    tfc_layer_unref(l);
    l = tfc_layers_multi_head_attention(.num_heads = 2, .key_dim = 2);
    tfc_shape bad[2] = {{.rank = 2, .dims = {2, 3}}, ok3[1]};
    CHECK(!tfc_layer_build(l, ctx, bad, 2, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_status_clear(&st);
    CHECK(!tfc_layer_build(l, ctx, ok3, 1, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_status_clear(&st);
    CHECK(tfc_layer_build(l, ctx, ok3, 2, &st));
    tfc_variable *v[8];
    CHECK(tfc_layer_weights(l, v, 8) == 8);
    CHECK(strcmp(tfc_variable_name(v[6]), "multi_head_attention_1/attention_output/kernel:0") == 0);
    const tfc_shape *s = tfc_variable_shape(v[6]);
    CHECK(s->rank == 3 && s->dims[0] == 2 && s->dims[1] == 2 && s->dims[2] == 4);
    tfc_layer_unref(l);
    CHECK(!tfc_layer_from_config("MultiHeadAttention", "{\"num_heads\": 2}", &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_status_clear(&st);
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    fill(&wq[0][0][0], DQ * H * KD, 0.5, 1.1);
    fill(&bq[0][0], H * KD, 0.2, 2.3);
    fill(&wk[0][0][0], DV * H * KD, 0.6, 0.7);
    fill(&bk[0][0], H * KD, 0.1, 1.9);
    fill(&wv[0][0][0], DV * H * VD, 0.7, 1.3);
    fill(&bv[0][0], H * VD, 0.3, 0.9);
    fill(&wo[0][0][0], H * VD * DQ, 0.4, 1.7);
    fill(bo, DQ, 0.2, 2.9);
    fill(&q_in[0][0][0], B * TQ * DQ, 1.0, 0.61);
    fill(&v_in[0][0][0], B * TK * DV, 1.0, 1.37);
    tfc_keras_clear_session();
    run(false, false);
    run(true, false);
    run(false, true);
    run(true, true);
    tfc_keras_clear_session();
    test_errors();
    tfc_ctx_free(ctx);
    tfc_keras_clear_session();
    TEST_MAIN_END();
}
