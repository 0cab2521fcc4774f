/* tf.data service message bytes through the validating decoder (src/data_service/ds_wire.h) and the dispatcher's
 * request handler: a message that decodes is encoded again and must give the same bytes; every request gets a
 * reply that decodes; element payloads are walked and decoded as one-component elements. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "data_service/ds_internal.h"
#include "tfc/tfc.h"

static tfc_dispatch_server *disp;
static int served;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    tfc_status st = TFC_STATUS_INIT;
    ds_msg m;
    if (ds_msg_decode(data, size, &m, &st)) {
        uint8_t *again = NULL;
        size_t n = 0;
        if (!ds_msg_encode(&m, &again, &n, &st)) abort();
        if (n != size || memcmp(again, data, size)) abort(); /* the encoding is canonical */
        free(again);
        uint32_t count;
        size_t pos;
        if (ds_elements_open(m.blob, m.blob_len, &count, &pos, &st))
            for (uint32_t i = 0; i < count; i++) {
                uint32_t code;
                const uint8_t *p;
                uint64_t len;
                if (!ds_elements_next(m.blob, m.blob_len, &pos, &code, &p, &len, &st)) break;
                tfc_tensor *t = NULL;
                if (code == 0 && data_decode_element(p, len, &t, 1, "fuzz", &st)) tfc_tensor_unref(t);
            }
    } else if (st.code != TFC_INVALID_ARGUMENT) {
        abort(); /* a failure must say why, as a bad-input error */
    }
    if (!disp || ++served % 1000 == 0) { /* the state grows with registered graphs: start afresh now and then */
        tfc_dispatch_server_free(disp);
        if (!(disp = ds_dispatcher_state_new(NULL, &st))) abort();
    }
    uint8_t *rep = NULL;
    size_t rn = 0;
    ds_dispatcher_handle(disp, data, size, &rep, &rn);
    ds_msg r;
    if (!rep || !ds_msg_decode(rep, rn, &r, &st)) abort(); /* every request is answered */
    free(rep);
    return 0;
}
