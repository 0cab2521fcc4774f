/* tf.train.Example parsing (ParseExampleV2) with every feature kind: the input is one serialized Example, parsed
 * alone and as a batch of two (itself and its second half). */
#include "fuzz_util.h"
#include "tfc/ops/parsing.h"

#define N_FEATURES 6

static void parse(tfc_tensor *serialized, bool single, const tfc_feature_spec *f) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_parsed_feature out[N_FEATURES];
    memset(out, 0, sizeof out);
    bool ok = single ? tfc_parse_single_example(fuzz_ctx(), serialized, f, N_FEATURES, out, &st)
                     : tfc_parse_example(fuzz_ctx(), serialized, NULL, f, N_FEATURES, out, &st);
    if (!ok && st.code == TFC_OK) abort();
    for (int i = 0; ok && i < N_FEATURES; i++) {
        tfc_tensor_unref(out[i].values);
        tfc_tensor_unref(out[i].indices);
        tfc_tensor_unref(out[i].dense_shape);
        tfc_tensor_unref(out[i].row_splits);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_ctx();
    tfc_status st = TFC_STATUS_INIT;
    static tfc_tensor *dflt_f, *dflt_s;
    if (!dflt_f) {
        dflt_f = tfc_vec_f32((float[]){1, 2}, 2, &st);
        const char *s = "x";
        dflt_s = tfc_tensor_from_strings(&s, (size_t[]){1}, NULL, 0, &st);
    }
    const tfc_feature_spec f[N_FEATURES] = {
        {.key = "a", .kind = TFC_FIXED_LEN, .dtype = TFC_FLOAT, .rank = 1, .dims = {2}, .default_value = dflt_f},
        {.key = "b", .kind = TFC_FIXED_LEN, .dtype = TFC_STRING, .rank = 0, .default_value = dflt_s},
        {.key = "c", .kind = TFC_VAR_LEN, .dtype = TFC_INT64},
        {.key = "d", .kind = TFC_FIXED_LEN_SEQUENCE, .dtype = TFC_FLOAT, .rank = 1, .dims = {2}},
        {.key = "e", .kind = TFC_RAGGED, .dtype = TFC_STRING},
        {.key = "f", .kind = TFC_RAGGED, .dtype = TFC_INT64, .row_splits_dtype = TFC_INT32},
    };
    tfc_tensor *one = fuzz_string(data, size);
    if (one) parse(one, true, f);
    const char *s[2] = {(const char *)data, (const char *)data + size / 2};
    size_t len[2] = {size, size - size / 2};
    int64_t two = 2;
    tfc_tensor *batch = tfc_tensor_from_strings(s, len, &two, 1, &st);
    if (batch) parse(batch, false, f);
    tfc_tensor_unref(batch);
    tfc_tensor_unref(one);
    return 0;
}
