/* IDX files (the Keras MNIST / Fashion-MNIST format) through tfc_idx_read. */
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_ctx();
    char path[64];
    int fd = fuzz_file(data, size, path, sizeof path);
    if (fd < 0) return 0;
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *t = tfc_idx_read(path, &st);
    if (!t && st.code == TFC_OK) abort(); /* a failure must say why */
    tfc_tensor_unref(t);
    close(fd);
    return 0;
}
