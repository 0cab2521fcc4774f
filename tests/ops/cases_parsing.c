/* Op test cases: parsing. The runner cannot compare string or sparse outputs against a reference, so these
 * cases run the ops on a fixed Example (values are checked in tests/unit/test_parsing.c and against
 * TensorFlow in tests/conformance/test_parsing.py); bad cases cover configuration and data errors. */
#include "op_test.h"

#define S(r, dl, n, ...) {.dtype = TFC_STRING, .rank = (r), .dims = {dl}, .n_vals = (n), \
                          .strs = (const char *const[]){__VA_ARGS__}, .no_grad = true}
#define BYTES(r, dl, len, s) {.dtype = TFC_STRING, .rank = (r), .dims = {dl}, .n_vals = 1, \
                              .strs = (const char *const[]){s}, .str_lens = (const size_t[]){len}, .no_grad = true}
#define NONE S(1, 0, 0, "")
#define D2(a, b) a, b
#define F32(r, dl, n, ...) {.dtype = TFC_FLOAT, .rank = (r), .dims = {dl}, .n_vals = (n), .vals = {__VA_ARGS__}, .no_grad = true}
#define TYPES(nm, ...) {.name = (nm), .kind = TFC_ATTR_LIST_TYPE, .n = (int)(sizeof((const tfc_dtype[]){__VA_ARGS__}) / sizeof(tfc_dtype)), \
                        .v.types = (const tfc_dtype[]){__VA_ARGS__}}
#define NO_TYPES(nm) {.name = (nm), .kind = TFC_ATTR_LIST_TYPE, .n = 0, .v.types = NULL}
#define SHAPES1(r, d0) TFC_ATTR_SHAPES("dense_shapes", ((const tfc_shape[]){{.rank = (r), .dims = {d0}}}), 1)
#define NO_SHAPES TFC_ATTR_SHAPES("dense_shapes", NULL, 0)

/* {a: float [1.5, 2.5], b: int64 [3, -4, 5], c: bytes ["x", "yz"]} as tf.train.Example.SerializeToString. */
#define EX                                                                                                        \
    "\x0a\x3a\x0a\x11\x0a\x01\x61\x12\x0c\x12\x0a\x0a\x08\x00\x00\xc0\x3f\x00\x00\x20\x40\x0a\x0e\x0a\x01\x63\x12" \
    "\x09\x0a\x07\x0a\x01\x78\x0a\x02\x79\x7a\x0a\x15\x0a\x01\x62\x12\x10\x1a\x0e\x0a\x0c\x03\xfc\xff\xff\xff\xff" \
    "\xff\xff\xff\xff\x01\x05"
#define EX_LEN 60

static const tfc_dtype f32[] = {TFC_FLOAT, 0};

const op_case op_cases_parsing[] = {
    {"ParseExampleV2", "batch: sparse, dense, ragged", 6,
     {BYTES(1, 3, EX_LEN, EX), NONE, S(1, 1, 1, "b"), S(1, 1, 1, "a"), S(1, 1, 1, "c"), F32(1, 2, 2, 0, 0)}, 5,
     {TFC_ATTR_I("num_sparse", 1), TYPES("sparse_types", TFC_INT64), TYPES("ragged_value_types", TFC_STRING),
      TYPES("ragged_split_types", TFC_INT32), SHAPES1(1, 2)},
     .dtypes = f32},
    {"ParseExampleV2", "scalar, missing key with default", 6,
     {BYTES(0, 0, EX_LEN, EX), NONE, NONE, S(1, 1, 1, "zz"), NONE, F32(2, D2(1, 2), 2, 7, 8)}, 5,
     {TFC_ATTR_I("num_sparse", 0), NO_TYPES("sparse_types"), NO_TYPES("ragged_value_types"),
      NO_TYPES("ragged_split_types"), TFC_ATTR_SHAPES("dense_shapes", ((const tfc_shape[]){{.rank = 2, .dims = {1, 2}}}), 1)},
     .dtypes = f32},
    {"ParseExampleV2", "sequence feature, empty batch", 6,
     {S(1, 0, 0, ""), NONE, NONE, S(1, 1, 1, "a"), NONE, F32(0, 0, 1, -1)}, 5,
     {TFC_ATTR_I("num_sparse", 0), NO_TYPES("sparse_types"), NO_TYPES("ragged_value_types"),
      NO_TYPES("ragged_split_types"), SHAPES1(1, -1)},
     .dtypes = f32},
    {"ParseSingleExample", "sparse and dense", 2, {BYTES(0, 0, EX_LEN, EX), F32(1, 2, 2, 0, 0)}, 5,
     {TFC_ATTR_I("num_sparse", 1), {.name = "sparse_keys", .kind = TFC_ATTR_LIST_STRING, .n = 1, .v.strs = (const char *const[]){"c"}},
      {.name = "dense_keys", .kind = TFC_ATTR_LIST_STRING, .n = 1, .v.strs = (const char *const[]){"a"}},
      TYPES("sparse_types", TFC_STRING), SHAPES1(1, 2)},
     .dtypes = f32},
    {0},
};

#define CFG0 TFC_ATTR_I("num_sparse", 0), NO_TYPES("sparse_types"), NO_TYPES("ragged_value_types"), NO_TYPES("ragged_split_types")

const bad_case bad_cases_parsing[] = {
    {"ParseExampleV2", "matrix serialized", 6,
     {BYTES(2, D2(1, 1), EX_LEN, EX), NONE, NONE, S(1, 1, 1, "a"), NONE, F32(1, 2, 2, 0, 0)}, 5, {CFG0, SHAPES1(1, 2)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"ParseExampleV2", "Expected serialized to be a scalar or vector, got shape: [1,1]"}},
    {"ParseExampleV2", "names shape", 6,
     {BYTES(1, 2, EX_LEN, EX), S(1, 1, 1, "n"), NONE, S(1, 1, 1, "a"), NONE, F32(1, 2, 2, 0, 0)}, 5, {CFG0, SHAPES1(1, 2)},
     .code = TFC_INVALID_ARGUMENT,
     .expect = {"Expected names have the same shape as serialized: name.shape=[1], serialized.shape=[2]"}},
    {"ParseExampleV2", "default shape", 6,
     {BYTES(1, 1, EX_LEN, EX), NONE, NONE, S(1, 1, 1, "a"), NONE, F32(1, 2, 2, 0, 0)}, 5, {CFG0, SHAPES1(1, 3)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"def_value[0].shape() == [2] is not compatible with dense_shapes_[0] == [3]"}},
    {"ParseExampleV2", "padding of a sequence", 6,
     {BYTES(1, 1, EX_LEN, EX), NONE, NONE, S(1, 1, 1, "a"), NONE, F32(1, 2, 2, 0, 0)}, 5, {CFG0, SHAPES1(1, -1)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"dense_shape[0] is a variable length shape: [?]", "But its shape is: [2]"}},
    {"ParseExampleV2", "unknown inner dim", 6,
     {BYTES(1, 1, EX_LEN, EX), NONE, NONE, S(1, 1, 1, "a"), NONE, F32(0, 0, 1, 0)}, 5,
     {CFG0, TFC_ATTR_SHAPES("dense_shapes", ((const tfc_shape[]){{.rank = 2, .dims = {2, -1}}}), 1)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"dense_shapes[0] has unknown rank or unknown inner dimensions: [2,?]"}},
    {"ParseExampleV2", "shape count", 6,
     {BYTES(1, 1, EX_LEN, EX), NONE, NONE, S(1, 1, 1, "a"), NONE, F32(1, 2, 2, 0, 0)}, 5, {CFG0, NO_SHAPES},
     .code = TFC_INVALID_ARGUMENT, .expect = {"len(dense_keys) != len(dense_shapes)"}},
    {"ParseExampleV2", "sparse key count", 5, {BYTES(1, 1, EX_LEN, EX), NONE, NONE, NONE, NONE}, 5,
     {TFC_ATTR_I("num_sparse", 1), TYPES("sparse_types", TFC_FLOAT), NO_TYPES("ragged_value_types"),
      NO_TYPES("ragged_split_types"), NO_SHAPES},
     .code = TFC_INVALID_ARGUMENT, .expect = {"Expected len(sparse_keys) == num_sparse but got: 0 vs. 1"}},
    {"ParseExampleV2", "sparse types count", 5, {BYTES(1, 1, EX_LEN, EX), NONE, S(1, 1, 1, "b"), NONE, NONE}, 5,
     {TFC_ATTR_I("num_sparse", 1), NO_TYPES("sparse_types"), NO_TYPES("ragged_value_types"), NO_TYPES("ragged_split_types"),
      NO_SHAPES},
     .code = TFC_INVALID_ARGUMENT, .expect = {"len(sparse_keys) != len(sparse_types)"}},
    {"ParseExampleV2", "dense key count", 6,
     {BYTES(1, 1, EX_LEN, EX), NONE, NONE, S(1, 2, 2, "a", "b"), NONE, F32(1, 2, 2, 0, 0)}, 5, {CFG0, SHAPES1(1, 2)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"Expected len(dense_keys) == len(dense_types) but got: 2 vs. 1"}},
    {"ParseExampleV2", "ragged split types", 5, {BYTES(1, 1, EX_LEN, EX), NONE, NONE, NONE, S(1, 1, 1, "c")}, 5,
     {TFC_ATTR_I("num_sparse", 0), NO_TYPES("sparse_types"), TYPES("ragged_value_types", TFC_STRING),
      NO_TYPES("ragged_split_types"), NO_SHAPES},
     .code = TFC_INVALID_ARGUMENT, .expect = {"len(ragged_keys) != len(ragged_split_types)"}},
    {"ParseExampleV2", "bool sparse type", 5, {BYTES(1, 1, EX_LEN, EX), NONE, S(1, 1, 1, "b"), NONE, NONE}, 5,
     {TFC_ATTR_I("num_sparse", 1), TYPES("sparse_types", TFC_BOOL), NO_TYPES("ragged_value_types"),
      NO_TYPES("ragged_split_types"), NO_SHAPES},
     .code = TFC_INVALID_ARGUMENT, .expect = {"ParseExampleV2", "sparse_types", "bool"}},
    {"ParseExampleV2", "dense type mismatch", 6,
     {BYTES(1, 2, EX_LEN, EX), NONE, NONE, S(1, 1, 1, "b"), NONE, F32(1, 3, 3, 0, 0, 0)}, 5, {CFG0, SHAPES1(1, 3)},
     .code = TFC_INVALID_ARGUMENT,
     .expect = {"Name: <unknown>, Key: b, Index: 0.  Data types don't match. Data type: int64 but expected type: float"}},
    {"ParseExampleV2", "sparse type mismatch", 5, {BYTES(1, 1, EX_LEN, EX), NONE, S(1, 1, 1, "a"), NONE, NONE}, 5,
     {TFC_ATTR_I("num_sparse", 1), TYPES("sparse_types", TFC_STRING), NO_TYPES("ragged_value_types"),
      NO_TYPES("ragged_split_types"), NO_SHAPES},
     .code = TFC_INVALID_ARGUMENT, .expect = {"Key: a, Index: 0.  Data types don't match. Expected type: string, Actual type: float"}},
    {"ParseExampleV2", "wrong count", 6,
     {BYTES(1, 1, EX_LEN, EX), NONE, NONE, S(1, 1, 1, "a"), NONE, F32(1, 3, 3, 0, 0, 0)}, 5, {CFG0, SHAPES1(1, 3)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"Key: a, Index: 0.  Number of float values != expected.  Values size: 2 but output shape: [3]"}},
    {"ParseExampleV2", "required feature missing", 6,
     {BYTES(1, 2, EX_LEN, EX), NONE, NONE, S(1, 1, 1, "zz"), NONE, F32(1, 0, 0, 0)}, 5, {CFG0, SHAPES1(1, 2)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"Feature: zz (data type: float) is required but could not be found.", "Index: 0"}},
    {"ParseExampleV2", "stride", 6,
     {BYTES(1, 1, EX_LEN, EX), NONE, NONE, S(1, 1, 1, "a"), NONE, F32(0, 0, 1, 0)}, 5,
     {CFG0, TFC_ATTR_SHAPES("dense_shapes", ((const tfc_shape[]){{.rank = 2, .dims = {-1, 3}}}), 1)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"Number of float values is not a multiple of stride length. Saw 2 values but output shape is: [?,3]"}},
    {"ParseExampleV2", "malformed example", 5, {BYTES(1, 2, 5, "\x0a\x05" "abc"), NONE, NONE, NONE, NONE}, 5,
     {CFG0, NO_SHAPES},
     .code = TFC_INVALID_ARGUMENT, .expect = {"ParseExampleV2", "Index: 0.", "Could not parse example input"}},
    {"ParseExampleV2", "truncated varint", 5, {BYTES(1, 1, 2, "\x0a\xff"), NONE, NONE, NONE, NONE}, 5, {CFG0, NO_SHAPES},
     .code = TFC_INVALID_ARGUMENT, .expect = {"Could not parse example input"}},
    {"ParseExampleV2", "packed floats cut", 5,
     {BYTES(1, 1, 15, "\x0a\x0d\x0a\x0b\x0a\x01\x61\x12\x06\x12\x04\x0a\x03\x00\x00"), NONE, S(1, 1, 1, "a"), NONE, NONE}, 5,
     {TFC_ATTR_I("num_sparse", 1), TYPES("sparse_types", TFC_FLOAT), NO_TYPES("ragged_value_types"),
      NO_TYPES("ragged_split_types"), NO_SHAPES},
     .code = TFC_INVALID_ARGUMENT, .expect = {"Key: a, Index: 0.  Can't parse serialized Example."}},
    {"ParseSingleExample", "vector serialized", 2, {BYTES(1, 1, EX_LEN, EX), F32(1, 2, 2, 0, 0)}, 5,
     {TFC_ATTR_I("num_sparse", 0), {.name = "sparse_keys", .kind = TFC_ATTR_LIST_STRING, .n = 0},
      {.name = "dense_keys", .kind = TFC_ATTR_LIST_STRING, .n = 1, .v.strs = (const char *const[]){"a"}},
      NO_TYPES("sparse_types"), SHAPES1(1, 2)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"ParseSingleExample", "scalar"}},
    {"ParseSingleExample", "required", 2, {BYTES(0, 0, EX_LEN, EX), F32(1, 0, 0, 0)}, 5,
     {TFC_ATTR_I("num_sparse", 0), {.name = "sparse_keys", .kind = TFC_ATTR_LIST_STRING, .n = 0},
      {.name = "dense_keys", .kind = TFC_ATTR_LIST_STRING, .n = 1, .v.strs = (const char *const[]){"q"}},
      NO_TYPES("sparse_types"), SHAPES1(1, 2)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"Feature: q (data type: float) is required but could not be found."}},
    {0},
};
