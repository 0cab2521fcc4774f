/* Keras's categorical encodings shared by CategoryEncoding, Hashing, Discretization and the lookups
 * (preprocessing_utils.encode_categorical_inputs): output-mode names, the encoded shape, and dense
 * one_hot / multi_hot / count / tf_idf vectors built from int64 ids. */
#include <string.h>

#include "core/size_check.h"
#include "keras/layers/preprocessing_internal.h"

static const char *const MODE_NAMES[] = {"int", "one_hot", "multi_hot", "count", "tf_idf"};

const char *tfc_prep_mode_name(tfc_prep_mode m) { return MODE_NAMES[m]; }

bool tfc_prep_mode_parse(const tfc_layer *l, const char *name, tfc_prep_mode dflt, unsigned allowed,
                         tfc_prep_mode *out, tfc_status *st) {
    if (!name) {
        *out = dflt;
        return true;
    }
    for (int m = 0; m < 5; m++)
        if ((allowed & (1u << m)) && (!strcmp(name, MODE_NAMES[m]) || (m == TFC_PREP_TF_IDF && !strcmp(name, "tf-idf")))) {
            *out = (tfc_prep_mode)m;
            return true;
        }
    char list[96] = "";
    for (int m = 0, k = 0; m < 5; m++)
        if (allowed & (1u << m)) k += snprintf(list + k, sizeof list - (size_t)k, "%s'%s'", k ? ", " : "", MODE_NAMES[m]);
    return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                          "Layer \"%s\": Unknown value for `output_mode`. Expected one of (%s). Received: "
                          "output_mode=%s",
                          l->name, list, name);
}

bool tfc_prep_encoded_shape(const tfc_layer *l, const tfc_shape *in, tfc_prep_mode mode, int64_t depth,
                            tfc_shape *out, tfc_status *st) {
    if (mode == TFC_PREP_INT) {
        *out = *in;
        return true;
    }
    tfc_shape s = *in;
    if (s.rank < 0) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": the input rank is unknown", l->name);
    if (s.rank == 0) s.dims[s.rank++] = 1;
    if (mode == TFC_PREP_ONE_HOT && s.dims[s.rank - 1] != 1) {
        if (s.rank >= TFC_MAX_RANK)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": input rank %d is too large", l->name, s.rank);
        s.dims[s.rank++] = 1;
    }
    if (s.rank > 2)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "Layer \"%s\": When output_mode is not `'int'`, maximum supported output rank is 2. "
                              "Received output_mode %s and input shape %s, which would result in output rank %d.",
                              l->name, MODE_NAMES[mode], TFC_KSHP(in), s.rank);
    /* bincount over the last axis: [n] -> [depth], [b, n] -> [b, depth] */
    s.dims[s.rank - 1] = depth;
    *out = s;
    return true;
}

tfc_tensor *tfc_prep_encode(const tfc_layer *l, const int64_t *ids, const tfc_shape *in, tfc_prep_mode mode,
                            int64_t depth, const float *idf, tfc_status *st) {
    tfc_shape os;
    if (!tfc_prep_encoded_shape(l, in, mode, depth, &os, st)) return NULL;
    tfc_tensor *t = tfc_tensor_new(TFC_FLOAT, os.dims, os.rank, st);
    if (!t) return NULL;
    float *o = tfc_tensor_mutable_data(t);
    int64_t rows = os.rank == 2 ? os.dims[0] : 1, n = tfc_shape_product(in), per = rows ? n / rows : 0;
    memset(o, 0, (size_t)tfc_tensor_num_elements(t) * sizeof(float));
    for (int64_t r = 0; r < rows; r++)
        for (int64_t k = 0; k < per; k++) {
            int64_t id = ids[r * per + k];
            if (id < 0 || id >= depth) continue; /* callers check the range */
            float *c = &o[r * depth + id];
            *c = mode == TFC_PREP_COUNT || mode == TFC_PREP_TF_IDF ? *c + 1 : 1;
        }
    if (mode == TFC_PREP_TF_IDF && idf)
        for (int64_t r = 0; r < rows; r++)
            for (int64_t d = 0; d < depth; d++) o[r * depth + d] *= idf[d];
    return t;
}

tfc_tensor *tfc_prep_ids_tensor(const int64_t *ids, const tfc_shape *in, tfc_status *st) {
    size_t bytes;
    if (!tfc_size_bytes(tfc_shape_product(in), sizeof(int64_t), &bytes)) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "ids tensor too large");
        return NULL;
    }
    return tfc_tensor_from_data(TFC_INT64, in->dims, in->rank, ids, bytes, st);
}

int64_t *tfc_prep_read_ints(const tfc_layer *l, const tfc_tensor *t, int64_t *n, tfc_status *st) {
    tfc_dtype dt = tfc_tensor_dtype(t);
    *n = tfc_tensor_num_elements(t);
    if (!tfc_dtype_is_integer(dt)) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": expected integer inputs, got %s", l->name,
                       tfc_dtype_name(dt));
        return NULL;
    }
    int64_t *v = tfc_malloc((size_t)(*n ? *n : 1) * sizeof *v);
    if (!v) {
        tfc_status_oom(st, l->name, (size_t)*n * sizeof *v);
        return NULL;
    }
    const void *d = tfc_tensor_data(t);
    for (int64_t i = 0; i < *n; i++) switch (dt) {
        case TFC_INT8: v[i] = ((const int8_t *)d)[i]; break;
        case TFC_INT16: v[i] = ((const int16_t *)d)[i]; break;
        case TFC_INT32: v[i] = ((const int32_t *)d)[i]; break;
        case TFC_UINT8: v[i] = ((const uint8_t *)d)[i]; break;
        case TFC_UINT16: v[i] = ((const uint16_t *)d)[i]; break;
        default: v[i] = ((const int64_t *)d)[i]; break;
        }
    return v;
}
