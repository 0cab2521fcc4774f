/* Keras JSON model configs (model.to_json()) through tfc_model_from_config, and single layer configs. */
#include <stdlib.h>

#include "fuzz_util.h"
#include "tfc/keras.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    tfc_ctx *ctx = fuzz_ctx();
    char *json = malloc(size + 1);
    if (!json) return 0;
    memcpy(json, data, size);
    json[size] = 0;
    tfc_status st = TFC_STATUS_INIT;
    tfc_model *m = tfc_model_from_config(ctx, json, &st);
    if (!m && st.code == TFC_OK) abort();
    tfc_model_free(m);
    static const char *const classes[] = {"Dense", "Conv2D", "Dropout", "BatchNormalization"};
    tfc_status_clear(&st);
    tfc_layer *l = tfc_layer_from_config(classes[size % 4], json, &st);
    tfc_layer_unref(l);
    free(json);
    return 0;
}
