/* Internal to src/serving: request JSON -> tensors and tensors -> response JSON for the REST front end
 * (TensorFlow Serving's util/json_tensor conventions; specs/serving_rest.md §4.3-4.4). */
#ifndef TFC_SERVING_JSON_TENSOR_H
#define TFC_SERVING_JSON_TENSOR_H

#include "serving/json.h"
#include "serving/servable.h"

/* A tensor of dtype dt from one JSON value: a scalar, a (nested) list, or {"b64": "..."} for DT_STRING; its shape
 * is the nesting shape (the columnar `inputs` format). `name` (the input alias) is used in messages. Errors:
 * INVALID_ARGUMENT for ragged lists ("Encountered list at unexpected size"), leaves of the wrong JSON type
 * ("JSON Value: ... Type: String is not of expected type: float"), integers out of range, bad base64, nesting
 * past rank 8; UNIMPLEMENTED for dtypes JSON does not carry (half, bfloat16, complex, ...). */
tfc_tensor *srv_json_tensor(const srv_json *v, tfc_dtype dt, const char *name, tfc_status *st);
/* The stack of n JSON values rows[0..n) (n >= 1), each of the same shape: shape [n] + the rows' shape (the row
 * `instances` format). Errors as srv_json_tensor's, and INVALID_ARGUMENT when the rows' shapes differ. */
tfc_tensor *srv_json_rows_tensor(const srv_json *const *rows, int64_t n, tfc_dtype dt, const char *name,
                                 tfc_status *st);

/* Appends t as a JSON value (nested lists; a scalar for rank 0). DT_STRING elements are JSON strings, or
 * {"b64": ...} objects when the output alias ends with "_bytes". */
void srv_tensor_json(srv_buf *b, const tfc_tensor *t, const char *alias);
/* Appends row `row` of t (rank >= 1) along dimension 0. */
void srv_tensor_row_json(srv_buf *b, const tfc_tensor *t, const char *alias, int64_t row);

#endif
