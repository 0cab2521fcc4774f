#include <stdio.h>
#include <string.h>

#include "tfc/status.h"

bool tfc_status_set(tfc_status *st, tfc_code code, const char *fmt, ...) {
    if (!st) return false;
    st->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->msg, sizeof st->msg, fmt, ap);
    va_end(ap);
    return false;
}

void tfc_status_clear(tfc_status *st) {
    if (!st) return;
    st->code = TFC_OK;
    st->msg[0] = 0;
}

bool tfc_ok(const tfc_status *st) { return !st || st->code == TFC_OK; }

const char *tfc_code_name(tfc_code code) {
    static const char *const names[] = {
        "OK",          "CANCELLED",          "UNKNOWN",   "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
        "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
        "OUT_OF_RANGE", "UNIMPLEMENTED",      "INTERNAL",  "UNAVAILABLE",      "DATA_LOSS",         "UNAUTHENTICATED",
    };
    if ((int)code < 0 || (size_t)code >= sizeof names / sizeof names[0]) return "UNKNOWN_CODE";
    return names[code];
}

bool tfc_status_oom(tfc_status *st, const char *what, size_t bytes) {
    return tfc_status_set(st, TFC_RESOURCE_EXHAUSTED, "%s: out of memory (%zu bytes)", what ? what : "tfc", bytes);
}
