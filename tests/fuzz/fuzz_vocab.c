/* InitializeTableFromTextFileV2 (a vocabulary file read into a lookup table) over the input as a file. The first
 * byte picks the key and value columns (whole line, line number, field 0..2), their dtypes, vocab_size and the
 * delimiter; a lookup of a few keys follows a successful read. */
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    tfc_ctx *ctx = fuzz_ctx();
    if (size < 1) return 0;
    const uint8_t k = data[0];
    char path[64];
    int fd = fuzz_file(data + 1, size - 1, path, sizeof path);
    if (fd < 0) return 0;
    static const int64_t index[] = {-2, -1, 0, 1, 2, 0, 1, -2};
    static const tfc_dtype types[] = {TFC_STRING, TFC_INT64, TFC_INT32, TFC_FLOAT};
    const int64_t ki = index[k & 7], vi = index[(k >> 3) & 7];
    const tfc_dtype kd = ki == -2 ? TFC_STRING : ki == -1 ? TFC_INT64 : types[(k >> 6) % 3];
    const tfc_dtype vd = vi == -2 ? TFC_STRING : vi == -1 ? TFC_INT64 : types[(k >> 5) & 3];
    tfc_status st = TFC_STATUS_INIT;
    tfc_attr ta[] = {TFC_ATTR_T("key_dtype", kd), TFC_ATTR_T("value_dtype", vd)};
    tfc_tensor *h = tfc_emit(ctx, (k & 4) ? "MutableHashTableV2" : "HashTableV2", NULL, 0, ta, 2, &st);
    const char *p = path;
    tfc_tensor *fn = h ? tfc_tensor_from_strings(&p, NULL, NULL, 0, &st) : NULL;
    tfc_attr a[] = {TFC_ATTR_I("key_index", ki), TFC_ATTR_I("value_index", vi),
                    TFC_ATTR_I("vocab_size", (k & 16) ? 3 : -1), TFC_ATTR_S("delimiter", (k & 2) ? "," : "\t")};
    bool ok = fn && tfc_execute(ctx, "InitializeTableFromTextFileV2", (tfc_tensor *[]){h, fn}, 2, a, 4, NULL, 0, &st) >= 0;
    if (!ok && st.code == TFC_OK) abort(); /* a failure must say why */
    if (ok) {
        tfc_tensor *keys = NULL, *dflt = NULL;
        const char *ks[] = {"a", "", "0"};
        if (kd == TFC_STRING) keys = tfc_tensor_from_strings(ks, NULL, (int64_t[]){3}, 1, &st);
        else keys = tfc_tensor_new(kd, (int64_t[]){3}, 1, &st);
        if (vd == TFC_STRING) dflt = tfc_tensor_from_strings(ks, NULL, NULL, 0, &st);
        else dflt = tfc_tensor_new(vd, NULL, 0, &st);
        tfc_tensor *r = keys && dflt ? tfc_emit(ctx, "LookupTableFindV2", (tfc_tensor *[]){h, keys, dflt}, 3, NULL, 0, &st)
                                     : NULL;
        tfc_tensor_unref(r);
        tfc_tensor_unref(keys);
        tfc_tensor_unref(dflt);
    }
    tfc_tensor_unref(fn);
    tfc_tensor_unref(h);
    close(fd);
    return 0;
}
