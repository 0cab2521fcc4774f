/* CsvDataset (tf.data.experimental.CsvDataset) and FixedLengthRecordDataset over the input as a file. The first
 * byte picks the CSV options (quoting, delimiter, header, na_value, select_cols, GZIP) and the record layout. */
#include "fuzz_util.h"

static void drain(tfc_dataset *ds, int n) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_iterator *it = ds ? tfc_iterator_new(ds, &st) : NULL;
    for (int i = 0; it && i < 10000; i++) {
        tfc_tensor *out[5] = {0};
        tfc_status e = TFC_STATUS_INIT;
        if (!tfc_iterator_next(it, out, 5, &e)) {
            if (e.code == TFC_OUT_OF_RANGE) break;
            if (e.code == TFC_OK) abort(); /* a failure must say why */
            if (e.code != TFC_INVALID_ARGUMENT && e.code != TFC_DATA_LOSS) break;
            continue;
        }
        for (int c = 0; c < n; c++) tfc_tensor_unref(out[c]);
    }
    tfc_iterator_free(it);
    tfc_dataset_unref(ds);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_ctx();
    if (size < 1) return 0;
    static tfc_tensor *defaults[5];
    tfc_status st = TFC_STATUS_INIT;
    if (!defaults[0]) {
        const char *s = "na";
        int64_t zero = 0;
        defaults[0] = tfc_scalar_f32(0.5f, &st);
        defaults[1] = tfc_tensor_from_data(TFC_INT64, (int64_t[]){1}, 1, (int64_t[]){7}, 8, &st);
        defaults[2] = tfc_tensor_from_strings(&s, (size_t[]){2}, NULL, 0, &st);
        defaults[3] = tfc_tensor_new(TFC_INT32, &zero, 1, &st); /* required */
        defaults[4] = tfc_scalar_f64(1.0, &st);
    }
    uint8_t k = data[0];
    char path[64];
    int fd = fuzz_file(data + 1, size - 1, path, sizeof path);
    if (fd < 0) return 0;
    const char *p = path;
    int n = 1 + k % 5;
    static const int64_t cols[] = {0, 2, 3, 5, 6};
    tfc_csv_opts o = {.compression_type = (k & 128) ? "GZIP" : NULL, .header = (k & 4) != 0,
                      .field_delim = (k & 8) ? ';' : 0, .use_quote_delim = (k & 16) ? TFC_NO : TFC_DEFAULT,
                      .na_value = (k & 32) ? "NA" : NULL, .select_cols = (k & 64) ? cols : NULL,
                      .n_select = (k & 64) ? n : 0};
    drain(tfc_dataset_csv(tfc_dataset_from_strings(&p, 1, &st), defaults, n, &o, &st), n);
    tfc_reader_opts ro = {.compression_type = o.compression_type};
    drain(tfc_dataset_fixed_length_record(tfc_dataset_from_strings(&p, 1, &st), 1 + k % 7, k % 3, (k >> 3) % 3, &ro,
                                          &st),
          1);
    close(fd);
    return 0;
}
