/* Internal to src/serving: the JSON reader and writer of the REST front end.
 *
 * The reader builds a tree in one arena (freed at once with srv_json_free) and accepts what TensorFlow Serving's
 * (RapidJSON with kParseNanAndInfFlag) does: standard JSON plus NaN, Infinity, -Infinity. It keeps each number's
 * text so integer dtypes can refuse a decimal and check ranges exactly, validates UTF-8, and bounds nesting
 * (SRV_JSON_MAX_DEPTH) so hostile input cannot exhaust the stack. Errors read as TensorFlow Serving's:
 * "JSON Parse error: <reason> at offset: <n>".
 *
 * The writer is a growable buffer with TensorFlow Serving's number formatting. */
#ifndef TFC_SERVING_JSON_H
#define TFC_SERVING_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tfc/status.h"

#define SRV_JSON_MAX_DEPTH 256

typedef enum { SRV_J_NULL, SRV_J_FALSE, SRV_J_TRUE, SRV_J_NUMBER, SRV_J_STRING, SRV_J_ARRAY, SRV_J_OBJECT } srv_jtype;

typedef struct srv_json srv_json;
struct srv_json {
    srv_jtype type;
    uint32_t n;            /* array items / object members */
    const char *s;         /* string: decoded bytes (NUL-terminated copy); number: its text in the source */
    size_t len;            /* length of s */
    bool is_int;           /* number without fraction or exponent (also false for NaN / Infinity) */
    srv_json **items;      /* array items or object member values */
    const char **keys;     /* object member names (decoded, NUL-terminated) */
    size_t *key_lens;
};

typedef struct srv_json_doc srv_json_doc;

/* Parses text (len bytes, need not be NUL-terminated). Returns the document (root in *root), or NULL with
 * INVALID_ARGUMENT "JSON Parse error: ... at offset: n" (RESOURCE_EXHAUSTED when out of memory). */
srv_json_doc *srv_json_parse(const char *text, size_t len, srv_json **root, tfc_status *st);
void srv_json_free(srv_json_doc *d); /* NULL-safe */

/* Object member `key`, or NULL. */
const srv_json *srv_json_get(const srv_json *obj, const char *key);
/* The number as double (NaN/Infinity included); false when it does not fit a double (overflow). */
bool srv_json_number_f64(const srv_json *v, double *out);
/* The number as an integer in [lo, hi] (uint64 through hi_u when non-zero): false when it has a fraction or
 * exponent, or is out of range. */
bool srv_json_number_i64(const srv_json *v, int64_t lo, int64_t hi, int64_t *out);
bool srv_json_number_u64(const srv_json *v, uint64_t hi, uint64_t *out);
/* TensorFlow Serving's (RapidJSON's) type name for messages: "Null", "False", "True", "Object", "Array",
 * "String", "Number". */
const char *srv_json_type_name(const srv_json *v);
/* True when v is a {"b64": ...} object (TensorFlow Serving's form of binary strings). */
bool srv_json_is_b64(const srv_json *v);
/* The decoded bytes of a {"b64": "..."} object v (srv_json_is_b64) in a new buffer (tfc_free) of *out_len bytes;
 * NULL when the member is not a base64 string. */
unsigned char *srv_json_b64_decode(const srv_json *v, size_t *out_len);

/* ---- writer ------------------------------------------------------------------------------------------- */

typedef struct srv_buf {
    char *p;
    size_t len, cap;
    bool oom;   /* an append failed; the content is then incomplete */
} srv_buf;

void srv_buf_put(srv_buf *b, const char *s, size_t n);
void srv_buf_puts(srv_buf *b, const char *s);
void srv_buf_printf(srv_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A JSON string literal of n bytes (escaped; bytes that are not valid UTF-8 are written as \u00XX of the byte). */
void srv_buf_json_string(srv_buf *b, const char *s, size_t n);
/* TensorFlow Serving's float formatting: %.6g if it round-trips, else %.9g (float) / %.17g (double); ".0"
 * appended when the text has neither '.' nor 'e'; NaN, Infinity, -Infinity bare. */
void srv_buf_float(srv_buf *b, float v);
void srv_buf_double(srv_buf *b, double v);
/* Standard base64 with padding. */
void srv_buf_base64(srv_buf *b, const unsigned char *s, size_t n);
void srv_buf_free(srv_buf *b);

/* Decodes base64 (standard alphabet; padding optional; no whitespace) into a new buffer (tfc_free) of *out_len
 * bytes; NULL when s is not base64. */
unsigned char *srv_base64_decode(const char *s, size_t n, size_t *out_len);

#endif
