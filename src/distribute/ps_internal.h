/* Internal: pieces shared by the parameter-server files (ps_server.c, ps_strategy.c, coordinator.c). */
#ifndef TFC_PS_INTERNAL_H
#define TFC_PS_INTERNAL_H

#include "distribute/ps_wire.h"
#include "distribute/transport.h"
#include "tfc/parameter_server.h"

/* One request and its decoded reply; a reply with a non-OK code becomes st (the reply's message). False
 * with UNAVAILABLE when the transport failed; *transport_failed (may be NULL) tells the two apart. */
bool ps_rpc(ps_transport *t, const ps_msg *req, ps_msg *rep, bool *transport_failed, tfc_status *st);

/* The registered function / dataset function called name, or NULL. */
tfc_remote_function ps_function_lookup(const char *name, void **user);
tfc_remote_dataset_fn ps_dataset_lookup(const char *name, void **user);

/* A worker's per-worker iterators (ps_datasets.c): makes iterator `id` from the dataset function `name` for
 * worker `worker` unless it exists (idempotent). */
bool ps_iterator_make(const char *name, uint64_t id, int worker, tfc_status *st);
void ps_iterators_clear(void); /* frees every per-worker iterator of this process */

/* The step a worker is running on this thread (0 outside a step) and a message id for the next
 * state-changing request: derived from the step and the request's order within it inside a step (the same on
 * a retry), unique per process otherwise. */
void ps_step_begin(uint64_t step);
void ps_step_end(void);
uint64_t ps_next_message_id(void);

#endif
