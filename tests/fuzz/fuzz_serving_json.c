/* The REST front end's request reader: the input is a request body, parsed as JSON (nesting bounded, NaN and
 * Infinity accepted, UTF-8 checked), then converted to tensors of every dtype a signature input may have, both as
 * one columnar value and as a batch of `instances` rows, and written back as response JSON. */
#include "fuzz_util.h"
#include "serving/json_tensor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_ctx();
    tfc_status st = TFC_STATUS_INIT;
    srv_json *root = NULL;
    srv_json_doc *doc = srv_json_parse((const char *)data, size, &root, &st);
    if (!doc) {
        if (st.code == TFC_OK) abort();
        return 0;
    }
    static const tfc_dtype dts[] = {TFC_FLOAT, TFC_DOUBLE, TFC_INT32, TFC_INT64, TFC_UINT8, TFC_INT8, TFC_BOOL,
                                    TFC_STRING, TFC_HALF};
    for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++) {
        tfc_tensor *t = srv_json_tensor(root, dts[i], "x", &st);
        if (!t && st.code == TFC_OK) abort();
        if (t) {
            srv_buf b = {0};
            srv_tensor_json(&b, t, i % 2 ? "x_bytes" : "x");
            if (tfc_tensor_rank(t) > 0 && tfc_tensor_dim(t, 0) > 0) srv_tensor_row_json(&b, t, "y", 0);
            srv_buf_free(&b);
        }
        tfc_tensor_unref(t);
        if (root->type == SRV_J_ARRAY && root->n > 0) {
            t = srv_json_rows_tensor((const srv_json *const *)root->items, root->n, dts[i], "x", &st);
            if (!t && st.code == TFC_OK) abort();
            tfc_tensor_unref(t);
        }
    }
    srv_json_free(doc);
    return 0;
}
