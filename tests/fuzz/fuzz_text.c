/* Text readers: TextLineDataset over the input as a file, and DecodeCSV (tf.io.decode_csv) of its lines with
 * float, int, string and required columns. The first byte picks the CSV attributes. */
#include "fuzz_util.h"
#include "tfc/ops/string.h"

static void decode_lines(tfc_tensor *lines, uint8_t k) {
    static tfc_tensor *defaults[5];
    tfc_status st = TFC_STATUS_INIT;
    if (!defaults[0]) {
        const char *s = "na";
        int64_t zero = 0;
        defaults[0] = tfc_scalar_f32(0.5f, &st);
        defaults[1] = tfc_scalar_i64(7, &st);
        defaults[2] = tfc_tensor_from_strings(&s, (size_t[]){2}, NULL, 0, &st);
        defaults[3] = tfc_tensor_new(TFC_INT32, &zero, 1, &st); /* required */
        defaults[4] = tfc_scalar_f64(1.0, &st);
    }
    int n = 1 + k % 5;
    static const int64_t cols[] = {0, 2, 3, 5, 6};
    tfc_decode_csv_attrs a = {.field_delim = (k & 8) ? ";" : NULL, .no_quote_delim = (k & 16) != 0,
                              .na_value = (k & 32) ? "NA" : NULL, .select_cols = (k & 64) ? cols : NULL,
                              .n_select_cols = (k & 64) ? n : 0};
    tfc_tensor *out[5] = {0};
    if (tfc_decode_csv(fuzz_ctx(), lines, (const tfc_tensor *const *)defaults, n, &a, out, &st))
        for (int i = 0; i < n; i++) tfc_tensor_unref(out[i]);
    else if (st.code == TFC_OK)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_ctx();
    if (size < 1) return 0;
    char path[64];
    int fd = fuzz_file(data + 1, size - 1, path, sizeof path);
    if (fd < 0) return 0;
    const char *p = path;
    tfc_status st = TFC_STATUS_INIT;
    tfc_dataset *names = tfc_dataset_from_strings(&p, 1, &st);
    tfc_dataset *ds = names ? tfc_dataset_text_line(names, NULL, &st) : NULL;
    tfc_iterator *it = ds ? tfc_iterator_new(ds, &st) : NULL;
    for (int i = 0; it && i < 1000; i++) {
        tfc_tensor *line[1] = {0};
        if (!tfc_iterator_next(it, line, 1, &st)) break;
        decode_lines(line[0], data[0]);
        tfc_tensor_unref(line[0]);
    }
    tfc_iterator_free(it);
    tfc_dataset_unref(ds);
    close(fd);
    return 0;
}
