/* Tensor bundles (checkpoint .index table + one data shard) through the bundle reader: the input's first two
 * bytes (little-endian) give the index length, the index bytes follow and the rest is the data shard. Every
 * entry is listed and read. */
#include "fuzz_util.h"
#include "core/size_check.h"
#include "saved_model/bundle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_ctx();
    if (size < 2) return 0;
    size_t n = (size_t)data[0] | (size_t)data[1] << 8;
    if (n > size - 2) n = size - 2;
    char ipath[64], dpath[64];
    int ifd = fuzz_file(data + 2, n, ipath, sizeof ipath);
    int dfd = fuzz_file(data + 2 + n, size - 2 - n, dpath, sizeof dpath);
    tfc_status st = TFC_STATUS_INIT;
    tfc_bundle_reader *r = ifd >= 0 && dfd >= 0 ? tfc_bundle_open_at("fuzz", ipath, dpath, &st) : NULL;
    for (size_t i = 0; r && i < tfc_bundle_num_entries(r); i++) {
        const tfc_bundle_entry *e = tfc_bundle_entry_at(r, i);
        tfc_tensor *t = tfc_bundle_read(r, e->key, &st);
        if (t && tfc_tensor_num_elements(t) != tfc_shape_product(&e->shape)) abort();
        tfc_tensor_unref(t);
    }
    tfc_bundle_close(r);
    if (ifd >= 0) close(ifd);
    if (dfd >= 0) close(dfd);
    return 0;
}
