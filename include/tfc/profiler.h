/* tfc — the profiler (tf.profiler.experimental.start / stop / Trace).
 *
 * While a profiler runs, tfc records on every thread: each op run through tfc_execute_op (type, input dtypes and
 * shapes, thread, start and duration; host_tracer_level >= 2), Keras's training steps ("train" with step_num,
 * and the wait for each batch "Iterator::GetNext"), and the user's Trace scopes. With the profiler off a
 * recording site costs one predictable branch.
 *
 * tfc_profiler_stop(save) writes, as TensorFlow does, logdir/plugins/profile/<YYYY_MM_DD_HH_MM_SS>/:
 *   <host>.xplane.pb   an XSpace (tsl/profiler/protobuf/xplane.proto) with one plane "/host:CPU", one line per
 *                      thread, events with stats ("shapes" for ops, "step_num" and "_r" for steps): what
 *                      TensorBoard's profile plugin (xprof / tensorboard-plugin-profile) opens;
 *   <host>.trace.json  the same events in Chrome's trace-event JSON (complete "X" events in microseconds, one
 *                      tid per thread, thread_name metadata): what Perfetto and chrome://tracing open. */
#ifndef TFC_PROFILER_H
#define TFC_PROFILER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tfc/platform.h"
#include "tfc/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* tf.profiler.experimental.ProfilerOptions: host_tracer_level 1 (Trace scopes and Keras steps only), 2 (also
 * every op; the default, 0 = 2) or 3 (same as 2 here). */
typedef struct {
    int host_tracer_level;
} tfc_profiler_options;

/* tf.profiler.experimental.start(logdir, options): starts recording; logdir is created now (so a bad one fails
 * here, PERMISSION_DENIED / FAILED_PRECONDITION / NOT_FOUND naming it, and nothing starts). A second start while
 * one runs is ALREADY_EXISTS "Another profiler is running." (the running one goes on). opts may be NULL. */
TFC_API bool tfc_profiler_start(const char *logdir, const tfc_profiler_options *opts, tfc_status *st);
/* tf.profiler.experimental.stop(save): stops recording and, with save, writes the run folder above. Without a
 * running profiler: UNAVAILABLE "Cannot export profiling results. No profiler is running.". A write error is
 * returned (the profiler is stopped all the same). */
TFC_API bool tfc_profiler_stop(bool save, tfc_status *st);
/* True while a profiler runs. */
TFC_API bool tfc_profiler_active(void);
/* The run folder the last saving stop wrote (empty before); copied into buf. */
TFC_API void tfc_profiler_last_run_dir(char *buf, size_t size);

/* tf.profiler.experimental.Trace(name, step_num=...): a scope on the calling thread, recorded at its end when a
 * profiler runs (also when it started inside the scope: nothing then). name is copied (first 47 bytes);
 * step_num < 0: none. A Trace with a step_num is a step marker ("_r" 1), as Keras's "train" scope. Use:
 *   tfc_profiler_trace t; tfc_profiler_trace_begin(&t, "my_step", step); ...; tfc_profiler_trace_end(&t); */
typedef struct {
    uint64_t t0;
    const char *name;
    int64_t step_num;
} tfc_profiler_trace;
/* Opens the scope t (caller-owned storage; never fails). */
TFC_API void tfc_profiler_trace_begin(tfc_profiler_trace *t, const char *name, int64_t step_num);
/* Closes t, recording it when a profiler ran for the whole scope; call once per begin. */
TFC_API void tfc_profiler_trace_end(tfc_profiler_trace *t);

#ifdef __cplusplus
}
#endif
#endif
