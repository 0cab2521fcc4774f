/* tfc — building tf.train.Example protos (tensorflow/core/example/example.proto): a feature map from string
 * keys to lists of floats, int64s or byte strings, serialized in the protobuf wire format TensorFlow reads
 * (specs/tfrecord.md §3). Feeds TFRecord files and tests of ParseExampleV2. */
#ifndef TFC_EXAMPLE_H
#define TFC_EXAMPLE_H

#include "tfc/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tfc_example tfc_example;

/* An empty Example; NULL with RESOURCE_EXHAUSTED when out of memory. Free with tfc_example_free. */
TFC_API tfc_example *tfc_example_new(tfc_status *st);
TFC_API void tfc_example_free(tfc_example *ex); /* NULL-safe */

/* Set feature `key` (any bytes up to the NUL) to a FloatList, Int64List or BytesList of n values,
 * replacing an earlier feature of that key (features keep their first insertion order). n may be 0 (an
 * empty list of that kind). Bytes values: lens may be NULL for NUL-terminated strings. False with
 * INVALID_ARGUMENT for a NULL key or values, RESOURCE_EXHAUSTED when out of memory. */
TFC_API bool tfc_example_set_floats(tfc_example *ex, const char *key, const float *values, int64_t n, tfc_status *st);
TFC_API bool tfc_example_set_int64s(tfc_example *ex, const char *key, const int64_t *values, int64_t n, tfc_status *st);
TFC_API bool tfc_example_set_bytes(tfc_example *ex, const char *key, const char *const *values, const size_t *lens,
                                   int64_t n, tfc_status *st);
/* A Feature with no list at all (parsers treat it as missing). */
TFC_API bool tfc_example_set_empty(tfc_example *ex, const char *key, tfc_status *st);
/* Removes feature `key`; false (st untouched) when there is none. */
TFC_API bool tfc_example_remove(tfc_example *ex, const char *key);
TFC_API int tfc_example_num_features(const tfc_example *ex);

/* The serialized Example in a new buffer (free with tfc_free) of *len bytes; packed float and int64 lists,
 * as TensorFlow writes them. */
TFC_API char *tfc_example_serialize(const tfc_example *ex, size_t *len, tfc_status *st);
/* The serialized Example as a new scalar string tensor (caller-owned), ready for tfc_parse_example. */
TFC_API tfc_tensor *tfc_example_to_tensor(const tfc_example *ex, tfc_status *st);

#ifdef __cplusplus
}
#endif
#endif
