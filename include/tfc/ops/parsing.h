/* tfc — parsing tf.train.Example protos into tensors: tf.io.parse_example and tf.io.parse_single_example
 * (TensorFlow's ParseExampleV2 op), with the feature kinds of tf.io: FixedLenFeature, VarLenFeature,
 * FixedLenSequenceFeature and RaggedFeature (row splits only). Examples are built with tfc/example.h.
 *
 * Errors (INVALID_ARGUMENT, TensorFlow's messages prefixed with "ParseExampleV2: "): a malformed proto
 * ("Could not parse example input", naming the example index), a feature of another type than configured,
 * a FixedLen feature with the wrong number of values, or missing without a default ("Feature: x (data type:
 * float) is required but could not be found."), a bad configuration (keys, dtypes, shapes, defaults).
 * RESOURCE_EXHAUSTED when out of memory. Nothing is differentiable. */
#ifndef TFC_OPS_PARSING_H
#define TFC_OPS_PARSING_H

#include "tfc/eager.h"
#include "tfc/example.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    TFC_FIXED_LEN = 0,          /* tf.io.FixedLenFeature(shape, dtype, default_value) */
    TFC_VAR_LEN = 1,            /* tf.io.VarLenFeature(dtype): a SparseTensor */
    TFC_FIXED_LEN_SEQUENCE = 2, /* tf.io.FixedLenSequenceFeature(shape, dtype, allow_missing=True, default_value) */
    TFC_RAGGED = 3,             /* tf.io.RaggedFeature(dtype, row_splits_dtype) without partitions */
} tfc_feature_kind;

typedef struct tfc_feature_spec {
    const char *key;
    tfc_feature_kind kind;
    tfc_dtype dtype;        /* TFC_FLOAT, TFC_INT64 or TFC_STRING */
    int rank;               /* FixedLen: the value shape; FixedLenSequence: the shape of one row */
    int64_t dims[TFC_MAX_RANK - 1];
    /* FixedLen: a tensor of the value shape and dtype, or NULL when the feature is required.
     * FixedLenSequence: a scalar padding value, or NULL for 0 / "". Ignored by the other kinds. */
    const tfc_tensor *default_value;
    tfc_dtype row_splits_dtype; /* Ragged: TFC_INT64 (0) or TFC_INT32 */
} tfc_feature_spec;

/* One parsed feature; unused fields are NULL. Tensors are caller-owned (or scope-owned). */
typedef struct tfc_parsed_feature {
    tfc_tensor *values;      /* FixedLen: [batch...] + shape; FixedLenSequence: [batch...] + [rows] + shape, padded to
                              * the longest example; VarLen: the sparse values [n]; Ragged: the flat values [n] */
    tfc_tensor *indices;     /* VarLen: int64 [n, 2] (example, position), [n, 1] for a single example */
    tfc_tensor *dense_shape; /* VarLen: int64 [2] = (batch, longest), [1] for a single example */
    tfc_tensor *row_splits;  /* Ragged, batch input: [batch + 1] */
} tfc_parsed_feature;

/* tf.io.parse_example (ParseExampleV2): serialized is a 1-D string tensor of Examples (a scalar behaves as
 * tf.io.parse_single_example); names NULL or a string tensor of serialized's shape (used in messages).
 * Fills out[0..n) in the order of features. On failure nothing is left in out. */
TFC_API bool tfc_parse_example(tfc_ctx *ctx, const tfc_tensor *serialized, const tfc_tensor *names,
                               const tfc_feature_spec *features, int n, tfc_parsed_feature *out, tfc_status *st);
/* tf.io.parse_single_example: serialized is a scalar string tensor (one Example). */
TFC_API bool tfc_parse_single_example(tfc_ctx *ctx, const tfc_tensor *serialized, const tfc_feature_spec *features,
                                      int n, tfc_parsed_feature *out, tfc_status *st);

#ifdef __cplusplus
}
#endif
#endif
