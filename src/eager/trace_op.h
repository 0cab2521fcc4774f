/* Internal: the profiler's hook in the op entry point (tfc_execute_op): a scope variable whose cleanup records
 * the op (type, input shapes, thread, start/duration) when a profiler runs at host_tracer_level >= 2. Off, it
 * costs one predictable branch on tfc_trace_level and a zeroed word. */
#ifndef TFC_EAGER_TRACE_OP_H
#define TFC_EAGER_TRACE_OP_H

#include "platform/trace.h"
#include "tfc/tensor.h"

typedef struct {
    uint64_t t0;
    const char *name;
    tfc_tensor *const *in; /* shapes are read at the end, while the inputs are alive */
    int n_in;
} tfc_trace_op_scope;

void tfc_trace_op_record(tfc_trace_op_scope *s);
static inline void tfc_trace_op_end(tfc_trace_op_scope *s) {
    if (__builtin_expect(s->t0 != 0, 0)) tfc_trace_op_record(s);
}
#define TFC_TRACE_OP(name_, in_, n_in_)                                                                        \
    tfc_trace_op_scope tfc_op_scope_ __attribute__((cleanup(tfc_trace_op_end))) = {0};                         \
    if (__builtin_expect(tfc_trace_level >= 2, 0))                                                             \
    tfc_op_scope_ = (tfc_trace_op_scope){tfc_trace_now(), (name_), (in_), (n_in_)}

#endif
