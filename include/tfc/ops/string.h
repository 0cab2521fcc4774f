/* tfc — typed wrappers for the string ops: splitting and joining, lengths and substrings, and the
 * string <-> number conversions of text and CSV pipelines (TensorFlow's StringSplitV2, StringJoin,
 * StringLength, Substr, StringToNumber, AsString, DecodeCSV: tf.strings.split, join, length, substr,
 * to_number, as_string and tf.io.decode_csv).
 *
 * Common contract:
 *   - String tensors hold byte strings (TFC_STRING); UTF-8 is only interpreted where a function says so.
 *   - Returns new tensors owned by the caller (or by the current scope), or NULL / false with st set:
 *       INVALID_ARGUMENT   bad shapes or attrs, unparsable numbers ("StringToNumberOp could not correctly
 *                          convert string: x"), out-of-range positions, malformed CSV records (TensorFlow's
 *                          messages, prefixed with the op name)
 *       RESOURCE_EXHAUSTED out of memory
 *   - Inputs are borrowed. None of these ops is differentiable. */
#ifndef TFC_OPS_STRING_H
#define TFC_OPS_STRING_H

#include "tfc/eager.h"

#ifdef __cplusplus
extern "C" {
#endif

/* tf.strings.split on a 1-D tensor (StringSplitV2): sep NULL or "" splits on runs of ASCII whitespace,
 * otherwise on each occurrence of sep (empty tokens kept); maxsplit < 0: no limit. The result is a
 * SparseTensor: *indices int64 [n, 2] (row, position), *values string [n], *dense_shape int64 [2]
 * (rows, longest row). All three are set on success. */
TFC_API bool tfc_string_split(tfc_ctx *ctx, const tfc_tensor *input, const char *sep, int64_t maxsplit,
                              tfc_tensor **indices, tfc_tensor **values, tfc_tensor **dense_shape, tfc_status *st);

/* tf.strings.join (StringJoin): elementwise concatenation of n string tensors with separator (NULL = "");
 * scalars broadcast, other inputs must share one shape. n = 0 gives "". */
TFC_API tfc_tensor *tfc_string_join(tfc_ctx *ctx, const tfc_tensor *const *inputs, int n, const char *separator,
                                    tfc_status *st);

/* tf.strings.length (StringLength): int32 lengths in bytes, or in UTF-8 characters when utf8. */
TFC_API tfc_tensor *tfc_string_length(tfc_ctx *ctx, const tfc_tensor *input, bool utf8, tfc_status *st);

/* tf.strings.substr (Substr) with one position and length for every element: pos < 0 counts from the end;
 * len < 0 means to the end (bytes); utf8 counts characters. INVALID_ARGUMENT when |pos| exceeds a string. */
TFC_API tfc_tensor *tfc_substr(tfc_ctx *ctx, const tfc_tensor *input, int64_t pos, int64_t len, bool utf8,
                               tfc_status *st);

/* tf.strings.to_number (StringToNumber): out_type TFC_FLOAT (0), TFC_DOUBLE, TFC_INT32 or TFC_INT64.
 * Surrounding whitespace is ignored; floats accept inf/nan and hex; integers are decimal and must fit. */
TFC_API tfc_tensor *tfc_string_to_number(tfc_ctx *ctx, const tfc_tensor *input, tfc_dtype out_type, tfc_status *st);

/* tf.strings.as_string (AsString) of a numeric, bool or string tensor. precision < 0: printf's default;
 * width < 0: no padding; fill: NULL/"" or one of " ", "0", "-", "+", "#" (a printf flag, as TensorFlow).
 * scientific (%e) and shortest (%g) apply to floating dtypes only, not both. */
TFC_API tfc_tensor *tfc_as_string(tfc_ctx *ctx, const tfc_tensor *input, int precision, bool scientific, bool shortest,
                                  int width, const char *fill, tfc_status *st);

/* DecodeCSV's attributes; a zeroed struct (or NULL) means TensorFlow's defaults. */
typedef struct tfc_decode_csv_attrs {
    const char *field_delim;   /* one character; NULL = "," */
    bool no_quote_delim;       /* use_quote_delim = false: quotes are ordinary characters */
    const char *na_value;      /* fields equal to it count as missing; NULL = "" */
    const int64_t *select_cols; /* strictly increasing column indices to keep; NULL = all */
    int n_select_cols;
} tfc_decode_csv_attrs;

/* tf.io.decode_csv (DecodeCSV): records is a string tensor of any shape; record_defaults[i] is a scalar or
 * a 1-element vector of column i's dtype (float32, float64, int32, int64 or string), or an empty vector when
 * the column is required. outputs[0..n) receive one tensor per column, of the records' shape. */
TFC_API bool tfc_decode_csv(tfc_ctx *ctx, const tfc_tensor *records, const tfc_tensor *const *record_defaults, int n,
                            const tfc_decode_csv_attrs *attrs, tfc_tensor **outputs, tfc_status *st);

#ifdef __cplusplus
}
#endif
#endif
