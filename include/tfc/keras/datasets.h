/* tfc — tf.keras.datasets: MNIST and Fashion-MNIST from IDX files (gzip-compressed or raw). */
#ifndef TFC_KERAS_DATASETS_H
#define TFC_KERAS_DATASETS_H

#include "tfc/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The four arrays of load_data(): x_train uint8 [60000, 28, 28], y_train uint8 [60000], x_test uint8
 * [10000, 28, 28], y_test uint8 [10000]. Caller owns each (tfc_datasets_free releases all four). */
typedef struct tfc_dataset_arrays {
    tfc_tensor *x_train, *y_train, *x_test, *y_test;
} tfc_dataset_arrays;

/* tf.keras.datasets.fashion_mnist.load_data(). dir: folder holding train-images-idx3-ubyte(.gz),
 * train-labels-idx1-ubyte(.gz), t10k-images-idx3-ubyte(.gz), t10k-labels-idx1-ubyte(.gz); NULL: the
 * environment variable TFC_DATASETS_DIR (joined with "fashion-mnist"), else Debian's dataset-fashion-mnist
 * location /usr/share/datasets/fashion-mnist.
 * Errors: NOT_FOUND (missing file, naming it), DATA_LOSS (bad magic, dims, truncated or corrupt data, naming
 * the file and what is wrong), INVALID_ARGUMENT (image and label counts differ). */
TFC_API bool tfc_datasets_fashion_mnist_load(const char *dir, tfc_dataset_arrays *out, tfc_status *st);
/* tf.keras.datasets.mnist.load_data() from the same file names; NULL dir: TFC_DATASETS_DIR/mnist, else
 * /usr/share/datasets/mnist. */
TFC_API bool tfc_datasets_mnist_load(const char *dir, tfc_dataset_arrays *out, tfc_status *st);
/* Reads one IDX file (magic 0x0000 08 <rank>, big-endian dims, uint8 data) into a uint8 tensor. */
TFC_API tfc_tensor *tfc_idx_read(const char *path, tfc_status *st);
TFC_API void tfc_datasets_free(tfc_dataset_arrays *d);

/* Class names of Fashion-MNIST in label order ("T-shirt/top", "Trouser", ...). */
TFC_API const char *const *tfc_datasets_fashion_mnist_class_names(void);

#ifdef __cplusplus
}
#endif
#endif
