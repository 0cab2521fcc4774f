/* Keras 3 archives (.keras: a ZIP of metadata.json, config.json and model.weights.h5) through
 * tfc_keras_load_model, via a temporary file: the ZIP directory and members, their bounded sizes, the config
 * JSON, compile_config and the weights tree. Inputs that are not ZIP files are skipped (load_model would read
 * them as HDF5, which fuzz_hdf5 covers). */
#include "fuzz_util.h"
#include "tfc/keras.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    tfc_ctx *ctx = fuzz_ctx();
    if (size < 4 || memcmp(data, "PK\003\004", 4) != 0) return 0;
    char path[300];
    if (!fuzz_temp_file(data, size, ".keras", path, sizeof path)) return 0;
    tfc_status st = TFC_STATUS_INIT;
    tfc_model *m = tfc_keras_load_model(ctx, path, &st);
    if (!m && st.code == TFC_OK) abort();
    tfc_model_free(m);
    return 0;
}
