/* tfc — status: TensorFlow's error codes (tensorflow/core/protobuf/error_codes.proto numbers). */
#ifndef TFC_STATUS_H
#define TFC_STATUS_H

#include "tfc/platform.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    TFC_OK = 0,
    TFC_CANCELLED = 1,
    TFC_UNKNOWN = 2,
    TFC_INVALID_ARGUMENT = 3,
    TFC_DEADLINE_EXCEEDED = 4,
    TFC_NOT_FOUND = 5,
    TFC_ALREADY_EXISTS = 6,
    TFC_PERMISSION_DENIED = 7,
    TFC_RESOURCE_EXHAUSTED = 8,
    TFC_FAILED_PRECONDITION = 9,
    TFC_ABORTED = 10,
    TFC_OUT_OF_RANGE = 11,
    TFC_UNIMPLEMENTED = 12,
    TFC_INTERNAL = 13,
    TFC_UNAVAILABLE = 14,
    TFC_DATA_LOSS = 15,
    TFC_UNAUTHENTICATED = 16,
} tfc_code;

/* Caller-owned, no heap: it can report out-of-memory. Every function that can fail takes a status last,
 * sets code = TFC_OK on success and fills code and msg on failure. */
typedef struct tfc_status {
    tfc_code code;
    char msg[256];
} tfc_status;

#define TFC_STATUS_INIT {TFC_OK, {0}}

/* Sets code and a printf-formatted message (truncated to fit). Returns false so callers can
 * `return tfc_status_set(...)`. */
TFC_API bool tfc_status_set(tfc_status *st, tfc_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
TFC_API void tfc_status_clear(tfc_status *st);
TFC_API bool tfc_ok(const tfc_status *st);
/* "INVALID_ARGUMENT" etc.; "UNKNOWN_CODE" for numbers outside the enum. */
TFC_API const char *tfc_code_name(tfc_code code);
/* Sets RESOURCE_EXHAUSTED "<what>: out of memory (<bytes> bytes)" and returns false. */
TFC_API bool tfc_status_oom(tfc_status *st, const char *what, size_t bytes);

#ifdef __cplusplus
}
#endif
#endif
