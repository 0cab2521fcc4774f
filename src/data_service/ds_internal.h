/* Internal: pieces of the tf.data service shared between its files (and the fuzz target). */
#ifndef TFC_DS_INTERNAL_H
#define TFC_DS_INTERNAL_H

#include <time.h>

#include "data_service/ds_wire.h"
#include "tfc/data_service.h"

/* Monotonic seconds. */
double ds_now(void);
/* The CLOCK_REALTIME deadline ms milliseconds from now, for pthread_cond_timedwait. */
struct timespec ds_deadline(int ms);
/* Sleeps until *stop or *own becomes non-zero (the servers' join). */
void ds_wait_stop(volatile int *stop, volatile int *own);
/* "grpc://h:p" / "nng://h:p" / "h:p" -> "h:p" into buf; false (INVALID_ARGUMENT) when empty or too long. */
bool ds_address(const char *in, char *buf, size_t size, tfc_status *st);

/* A dispatcher's state without its listener (the fuzz target feeds messages to it directly). */
tfc_dispatch_server *ds_dispatcher_state_new(const tfc_dispatcher_config *config, tfc_status *st);
/* Answers one request (the listener's handler): a malloc'd reply, never fails. */
void ds_dispatcher_handle(void *d, const uint8_t *req, size_t n, uint8_t **rep, size_t *rn);

/* The worker's request handler, for the same purpose. */
void ds_worker_handle(void *w, const uint8_t *req, size_t n, uint8_t **rep, size_t *rn);
tfc_worker_server *ds_worker_state_new(const tfc_worker_config *config, tfc_status *st);

#endif
