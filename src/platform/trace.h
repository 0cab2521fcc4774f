/* Internal: the profiler's event recorder (TensorFlow's TraceMe), low enough that every layer can record.
 * tfc_trace_level is 0 while no profiler runs: a recording site costs one predictable branch on it. While on,
 * each thread appends complete events to its own buffer (no locks); src/profiler collects them at stop. */
#ifndef TFC_PLATFORM_TRACE_H
#define TFC_PLATFORM_TRACE_H

#include <stdbool.h>
#include <stdint.h>

/* 0 off; else the host tracer level (1 user scopes and steps, 2 + ops, 3 + op details). */
extern int tfc_trace_level;

#define TFC_TRACE_NAME 48
#define TFC_TRACE_DETAIL 112

typedef struct {
    char name[TFC_TRACE_NAME];     /* op type, scope or step name */
    char detail[TFC_TRACE_DETAIL]; /* op input shapes "float[2,3];int32[]", iterator info, ... */
    const char *category;          /* static: "op", "step", "scope", "data" */
    uint64_t start_ns, end_ns;     /* tfc_trace_now() */
    int64_t step;                  /* step_num, -1 for none */
} tfc_trace_event;

/* Monotonic nanoseconds. */
uint64_t tfc_trace_now(void);
/* Records a finished event on the calling thread (nothing when the level is below min_level). */
void tfc_trace_record(int min_level, const char *category, const char *name, const char *detail, uint64_t start_ns,
                      uint64_t end_ns, int64_t step);

/* Collection (src/profiler): start a session (clears what earlier ones left; sets the level last), stop it
 * (level 0 first), then walk every thread's events. */
void tfc_trace_session_begin(int level);
void tfc_trace_session_end(void);
typedef void (*tfc_trace_visit_fn)(void *user, int64_t tid, const char *thread_name, const tfc_trace_event *ev);
/* Visits the events of the last session, thread by thread in registration order, each thread's in order. */
void tfc_trace_visit(tfc_trace_visit_fn fn, void *user);
/* Names the calling thread in traces (copied; "tfc_pool_3", "main"). */
void tfc_trace_set_thread_name(const char *name);

#endif
