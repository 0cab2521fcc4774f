/* TFRecord framing (lengths, masked CRC32C, compression) through the record reader and TFRecordDataset. The
 * first byte picks the compression: none, ZLIB or GZIP. */
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_ctx();
    if (size < 1) return 0;
    static const char *const comp[] = {"", "ZLIB", "GZIP"};
    const char *c = comp[data[0] % 3];
    char path[64];
    int fd = fuzz_file(data + 1, size - 1, path, sizeof path);
    if (fd < 0) return 0;
    tfc_status st = TFC_STATUS_INIT;
    tfc_tfrecord_reader *r = tfc_tfrecord_reader_new(path, c, 64, &st);
    const char *rec;
    size_t len;
    for (int i = 0; r && i < 10000 && tfc_tfrecord_reader_next(r, &rec, &len, &st); i++)
        if (len && (rec[0] == 1 || rec[len - 1] == 1)) st.code = TFC_OK; /* touch the bytes */
    tfc_tfrecord_reader_free(r);
    /* the dataset: a data CRC error goes on with the next record */
    const char *p = path;
    tfc_status ds_st = TFC_STATUS_INIT;
    tfc_dataset *names = tfc_dataset_from_strings(&p, 1, &ds_st);
    tfc_dataset *ds = names ? tfc_dataset_tfrecord(names, &(tfc_reader_opts){.compression_type = c}, &ds_st) : NULL;
    tfc_iterator *it = ds ? tfc_iterator_new(ds, &ds_st) : NULL;
    for (int i = 0; it && i < 10000; i++) {
        tfc_tensor *out[1] = {0};
        tfc_status e = TFC_STATUS_INIT;
        if (!tfc_iterator_next(it, out, 1, &e)) {
            if (e.code != TFC_DATA_LOSS) break; /* the end, or an error that ends the file */
            continue;
        }
        tfc_tensor_unref(out[0]);
    }
    tfc_iterator_free(it);
    tfc_dataset_unref(ds);
    close(fd);
    return 0;
}
