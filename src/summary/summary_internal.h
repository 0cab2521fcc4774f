/* Internal: the event-file writer's entry for the summary functions (src/summary). */
#ifndef TFC_SUMMARY_INTERNAL_H
#define TFC_SUMMARY_INTERNAL_H

#include "proto/event.pb-c.h"
#include "tfc/summary.h"

/* Seconds since the epoch, with microseconds (Event.wall_time). */
double summary_wall_time(void);
/* Queues ev (its wall_time is set here when 0) and writes the queue out when max_queue or flush_millis say so. */
bool summary_writer_add(tfc_summary_writer *w, Tensorflow__Event *ev, tfc_status *st);
/* The step a write uses: step itself, or the thread's default one (INVALID_ARGUMENT naming `what` if none). */
/* True when the default-writer functions write: a default writer and record_if(true) on this thread. */
bool summary_recording(void);
bool summary_resolve_step(int64_t step, const char *what, int64_t *out, tfc_status *st);

#endif
