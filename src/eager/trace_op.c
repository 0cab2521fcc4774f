/* The op events of the profiler (eager/trace_op.h). */
#include <string.h>

#include "eager/trace_op.h"

/* appends s, or as much as fits, keeping room for the terminator */
static size_t put(char *buf, size_t off, size_t size, const char *s) {
    while (*s && off + 1 < size) buf[off++] = *s++;
    return off;
}

static size_t put_int(char *buf, size_t off, size_t size, long long v) {
    char tmp[24];
    int n = 0;
    unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
    do tmp[n++] = (char)('0' + u % 10); while (u /= 10);
    if (v < 0) tmp[n++] = '-';
    while (n && off + 1 < size) buf[off++] = tmp[--n];
    return off;
}

/* detail: the inputs' dtypes and shapes, "float32[2,3];int32[]" */
void tfc_trace_op_record(tfc_trace_op_scope *s) {
    uint64_t end = tfc_trace_now();
    char d[TFC_TRACE_DETAIL];
    size_t off = 0;
    for (int i = 0; i < s->n_in; i++) {
        const tfc_shape *sh = tfc_tensor_shape(s->in[i]);
        if (i) off = put(d, off, sizeof d, ";");
        off = put(d, off, sizeof d, tfc_dtype_name(tfc_tensor_dtype(s->in[i])));
        off = put(d, off, sizeof d, "[");
        for (int k = 0; k < sh->rank; k++) {
            if (k) off = put(d, off, sizeof d, ",");
            off = put_int(d, off, sizeof d, (long long)sh->dims[k]);
        }
        off = put(d, off, sizeof d, "]");
    }
    d[off] = 0;
    tfc_trace_record(2, "op", s->name, d, s->t0, end, -1);
}
