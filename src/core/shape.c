#include <stdio.h>
#include <string.h>

#include "tfc/shape.h"

bool tfc_mul_overflow_i64(int64_t a, int64_t b, int64_t *out) {
    if (a < 0 || b < 0) return false;
    return !__builtin_mul_overflow(a, b, out);
}

bool tfc_shape_make(tfc_shape *out, const int64_t *dims, int rank, tfc_status *st) {
    if (rank < 0 || rank > TFC_MAX_RANK)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "rank %d is outside [0, %d]", rank, TFC_MAX_RANK);
    out->rank = rank;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < -1)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "dimension %d has negative size %lld", i,
                                  (long long)dims[i]);
        out->dims[i] = dims[i];
    }
    for (int i = rank; i < TFC_MAX_RANK; i++) out->dims[i] = 0;
    return true;
}

bool tfc_shape_num_elements(const tfc_shape *s, int64_t *out, const char *what, tfc_status *st) {
    char buf[TFC_SHAPE_STR];
    if (s->rank < 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s%sshape has unknown rank", what ? what : "",
                              what ? ": " : "");
    int64_t n = 1;
    for (int i = 0; i < s->rank; i++) {
        if (s->dims[i] < 0)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s%sshape %s has a negative or unknown dimension",
                                  what ? what : "", what ? ": " : "", tfc_shape_str(s, buf, sizeof buf));
        if (!tfc_mul_overflow_i64(n, s->dims[i], &n))
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s%sshape %s has too many elements (overflows int64)",
                                  what ? what : "", what ? ": " : "", tfc_shape_str(s, buf, sizeof buf));
    }
    *out = n;
    return true;
}

bool tfc_shape_equal(const tfc_shape *a, const tfc_shape *b) {
    if (a->rank != b->rank) return false;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return false;
    return true;
}

bool tfc_shape_is_fully_defined(const tfc_shape *s) {
    if (s->rank < 0) return false;
    for (int i = 0; i < s->rank; i++)
        if (s->dims[i] < 0) return false;
    return true;
}

char *tfc_shape_str(const tfc_shape *s, char *buf, size_t size) {
    if (!size) return buf;
    if (s->rank < 0) {
        snprintf(buf, size, "<unknown>");
        return buf;
    }
    size_t k = 0;
    k += (size_t)snprintf(buf + k, size - k, "[");
    for (int i = 0; i < s->rank && k < size; i++) {
        if (s->dims[i] < 0)
            k += (size_t)snprintf(buf + k, size - k, "%s?", i ? "," : "");
        else
            k += (size_t)snprintf(buf + k, size - k, "%s%lld", i ? "," : "", (long long)s->dims[i]);
    }
    if (k < size) snprintf(buf + k, size - k, "]");
    return buf;
}
