/* Helpers shared by the tf.data tests (test_data_*.c). */
#ifndef TFC_DATA_TEST_UTIL_H
#define TFC_DATA_TEST_UTIL_H

#include "core/tensor_internal.h"
#include "tfc/data.h"
#include "tfc_test.h"

/* Iterates ds to the end (at most max elements), writing component `comp` of each element (a scalar) as int64
 * into vals. Returns the count, or -1 when an element failed (st holds the error). */
static inline int64_t drain_i64(tfc_dataset *ds, int comp, int64_t *vals, int64_t max, tfc_status *st) {
    tfc_iterator *it = tfc_iterator_new(ds, st);
    if (!it) return -1;
    int n = tfc_dataset_num_components(ds);
    tfc_tensor *out[16] = {0};
    int64_t k = 0;
    for (;;) {
        if (!tfc_iterator_next(it, out, 16, st)) break;
        if (k < max) vals[k] = (int64_t)tfc_tensor_get_f64(out[comp], 0);
        k++;
        for (int i = 0; i < n; i++) tfc_tensor_unref(out[i]);
    }
    tfc_iterator_free(it);
    if (st->code != TFC_OUT_OF_RANGE) return -1;
    tfc_status_clear(st);
    return k;
}

static inline bool same_i64(const int64_t *a, const int64_t *b, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        if (a[i] != b[i]) return false;
    return true;
}

/* An int64 vector tensor holding v[0..n). */
static inline tfc_tensor *vec64(const int64_t *v, int64_t n) {
    tfc_status st = TFC_STATUS_INIT;
    return tfc_tensor_from_data(TFC_INT64, &n, 1, v, (size_t)n * 8, &st);
}

#endif
