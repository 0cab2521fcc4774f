/* Iterator checkpoint states (tfc/data_checkpoint.h) through tfc_iterator_restore_state into an iterator over
 * range(0, 50).shuffle(8, seed=1).batch(4), then a few elements. An odd first byte makes the fuzzer's bytes carry
 * a valid CRC-32C (so mutations reach the fields behind the checksum). */
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_ctx();
    if (size < 1) return 0;
    bool fix_crc = data[0] & 1;
    size_t n = size - 1;
    char *bytes = malloc(n + 1);
    if (!bytes) return 0;
    memcpy(bytes, data + 1, n);
    if (fix_crc && n >= 4) {
        uint32_t crc = tfc_crc32c_mask(tfc_crc32c(bytes, n - 4));
        memcpy(bytes + n - 4, &crc, 4);
    }
    tfc_status st = TFC_STATUS_INIT;
    const char *p = bytes;
    tfc_tensor *state = tfc_tensor_from_strings(&p, &n, NULL, 0, &st);
    tfc_dataset *ds = tfc_dataset_batch(
        tfc_dataset_shuffle(tfc_dataset_range(0, 50, 1, TFC_INT64, &st), 8,
                            &(tfc_shuffle_opts){.seed = 1, .has_seed = true}, &st),
        4, NULL, &st);
    tfc_iterator *it = ds ? tfc_iterator_new(ds, &st) : NULL;
    if (it && state) {
        tfc_status rst = TFC_STATUS_INIT;
        tfc_iterator_restore_state(it, state, &rst);
        for (int i = 0; i < 20; i++) {
            tfc_tensor *out[1] = {0};
            tfc_status e = TFC_STATUS_INIT;
            if (!tfc_iterator_next(it, out, 1, &e)) break;
            tfc_tensor_unref(out[0]);
        }
    }
    tfc_iterator_free(it);
    tfc_dataset_unref(ds);
    tfc_tensor_unref(state);
    free(bytes);
    return 0;
}
