/* The op events of the profiler (eager/trace_op.h). */
#include <stdio.h>

#include "eager/trace_op.h"

void tfc_trace_op_record(tfc_trace_op_scope *s) {
    uint64_t end = tfc_trace_now();
    char detail[TFC_TRACE_DETAIL];
    size_t off = 0;
    detail[0] = 0;
    for (int i = 0; i < s->n_in && off + 1 < sizeof detail; i++) {
        const tfc_shape *sh = tfc_tensor_shape(s->in[i]);
        int k = snprintf(detail + off, sizeof detail - off, "%s%s[", i ? ";" : "",
                         tfc_dtype_name(tfc_tensor_dtype(s->in[i])));
        off += k > 0 ? (size_t)k : 0;
        for (int d = 0; d < sh->rank && off + 1 < sizeof detail; d++) {
            k = snprintf(detail + off, sizeof detail - off, "%s%lld", d ? "," : "", (long long)sh->dims[d]);
            off += k > 0 ? (size_t)k : 0;
        }
        if (off + 1 < sizeof detail) {
            k = snprintf(detail + off, sizeof detail - off, "]");
            off += k > 0 ? (size_t)k : 0;
        }
    }
    tfc_trace_record(2, "op", s->name, detail, s->t0, end, -1);
}
