/* Keras HDF5 weights files (model.save_weights in the Keras 2 layout) through tfc_model_load_weights into a
 * small model (Dense, Dropout, BatchNormalization, Dense), via a temporary file. */
#include "fuzz_util.h"
#include "tfc/keras.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    tfc_ctx *ctx = fuzz_ctx();
    static tfc_model *m;
    tfc_status st = TFC_STATUS_INIT;
    if (!m) {
        m = tfc_sequential(ctx, (tfc_layer *[]){tfc_layers_dense(.units = 3, .activation = "relu", .input_shape = {4}),
                                                 tfc_layers_dropout(.rate = 0.5), tfc_layers_batch_normalization(),
                                                 tfc_layers_dense(.units = 2), NULL});
        tfc_shape in = {.rank = 2, .dims = {-1, 4}};
        if (!m || !tfc_model_build(m, &in, &st)) abort();
    }
    char path[300];
    if (!fuzz_temp_file(data, size, ".h5", path, sizeof path)) return 0;
    if (!tfc_model_load_weights(m, path, &st) && st.code == TFC_OK) abort();
    return 0;
}
