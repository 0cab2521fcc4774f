/* Parameter-server message bytes through the validating decoder (src/distribute/ps_wire.h); a message that
 * decodes is encoded again and must decode to the same bytes. Ids, steps and names are opaque to the decoder. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "distribute/ps_wire.h"
#include "tfc/tfc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    tfc_status st = TFC_STATUS_INIT;
    ps_msg m;
    if (!ps_msg_decode(data, size, &m, &st)) {
        if (st.code != TFC_INVALID_ARGUMENT) abort(); /* a failure must say why, as a bad-input error */
        return 0;
    }
    uint8_t *again = NULL;
    size_t n = 0;
    if (!ps_msg_encode(&m, &again, &n, &st)) abort();
    if (n != size || memcmp(again, data, size)) abort(); /* the encoding is canonical */
    for (int i = 0; i < m.n_tensors; i++)
        if (tfc_tensor_byte_size(m.t[i]) && !tfc_tensor_data(m.t[i])) abort();
    ps_msg_clear(&m);
    free(again);
    return 0;
}
