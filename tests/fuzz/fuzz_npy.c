/* .npy bytes through tfc_npy_parse (data capped at 1 MiB), and a parsed tensor written back and re-read. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tfc/tfc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *t = tfc_npy_parse(data, size, 1 << 20, &st);
    if (!t && st.code == TFC_OK) abort(); /* a failure must say why */
    if (t) {
        void *out;
        size_t n;
        if (tfc_npy_serialize(t, &out, &n, &st)) {
            tfc_tensor *u = tfc_npy_parse(out, n, 0, &st);
            if (!u || tfc_tensor_num_elements(u) != tfc_tensor_num_elements(t)) abort();
            if (tfc_tensor_dtype(t) != TFC_STRING &&
                memcmp(tfc_tensor_data(u), tfc_tensor_data(t), tfc_tensor_byte_size(t)))
                abort();
            tfc_tensor_unref(u);
            tfc_free(out);
        }
        tfc_tensor_unref(t);
    }
    return 0;
}
