/* Shared by the tests of Keras files (test_keras_saving_hdf5.c, test_keras_files.c): a temporary folder for the
 * files a test writes, and bit-exact comparison of two models' weights. */
#ifndef TFC_TEST_KERAS_FILES_UTIL_H
#define TFC_TEST_KERAS_FILES_UTIL_H

#include <stdio.h>
#include <string.h>

#include "tfc/keras.h"

static char tmpdir[64];

/* tmpdir/name, in one of four rotating buffers. */
static char *tmp_path(const char *name) {
    static char buf[4][256];
    static int k;
    char *p = buf[k++ % 4];
    snprintf(p, 256, "%s/%s", tmpdir, name);
    return p;
}

/* True when both models hold bit-identical weights (at most 16). */
static bool same_weights(tfc_model *a, tfc_model *b) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *wa[16], *wb[16];
    int na = tfc_model_get_weights(a, wa, 16, &st), nb = tfc_model_get_weights(b, wb, 16, &st);
    bool same = na == nb && na > 0;
    for (int i = 0; same && i < na; i++)
        same = tfc_shape_equal(tfc_tensor_shape(wa[i]), tfc_tensor_shape(wb[i])) &&
               !memcmp(tfc_tensor_data(wa[i]), tfc_tensor_data(wb[i]), tfc_tensor_byte_size(wa[i]));
    for (int i = 0; i < na && i < 16; i++) tfc_tensor_unref(wa[i]);
    for (int i = 0; i < nb && i < 16; i++) tfc_tensor_unref(wb[i]);
    return same;
}

#endif
