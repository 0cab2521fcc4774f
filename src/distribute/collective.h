/* Internal: the collective backend vtable. A backend moves bytes and sums the four native dtypes; the
 * dtype/shape checks, float16/bfloat16 widening, MEAN, packing and tensors live in collective.c, so a new
 * backend (NCCL) implements only these entry points. Every entry point is collective: all members of the
 * group call it in the same order; it returns false with st set (UNAVAILABLE on a timeout, naming the task). */
#ifndef TFC_DISTRIBUTE_COLLECTIVE_H
#define TFC_DISTRIBUTE_COLLECTIVE_H

#include "tfc/distribute.h"

typedef struct tfc_coll_vt {
    const char *name;
    /* recv receives the element-wise sum over the group of every member's send (count elements of dt: float32,
     * float64, int32 or int64), identical on every member. send == recv: in place. */
    bool (*all_reduce_sum)(tfc_collective *c, const void *send, void *recv, int64_t count, tfc_dtype dt,
                           tfc_status *st);
    /* buf (bytes) becomes root's bytes on every member. */
    bool (*broadcast)(tfc_collective *c, void *buf, int64_t bytes, int root, tfc_status *st);
    /* recv receives each member's send (bytes_of[r] bytes from rank r) in rank order. */
    bool (*all_gather_v)(tfc_collective *c, const void *send, int64_t bytes, void *recv, const int64_t *bytes_of,
                         tfc_status *st);
    void (*destroy)(tfc_collective *c);
} tfc_coll_vt;

struct tfc_collective {
    const tfc_coll_vt *vt;
    int rank, size;
    double timeout;          /* seconds */
    int64_t seq;             /* collectives issued so far (named in errors) */
    bool broken;             /* a collective timed out: the group is unusable */
    double busy;             /* seconds spent in collectives (tfc_collective_stats) */
    char task[64];           /* this member's name in messages ("/job:worker/replica:0/task:1", "replica 1") */
    char member_fmt[48];     /* printf format naming member r ("/job:worker/replica:0/task:%d", "replica %d") */
    void *impl;
};

/* Fills the common fields (timeout 0 -> the 300 s default). */
void tfc_coll_init(tfc_collective *c, const tfc_coll_vt *vt, int rank, int size, double timeout, const char *task,
                   const char *member_fmt);
/* Sets UNAVAILABLE for a collective that did not complete in time and marks the group broken. */
bool tfc_coll_timeout(tfc_collective *c, const char *what, tfc_status *st);
/* Breaks a local group (no-op for other backends) so that members blocked in, or entering, a collective fail
 * at once: strategy.run calls it when a replica fails. */
void tfc_coll_local_abort(tfc_collective *c);
/* Monotonic seconds. */
double tfc_coll_now(void);

#endif
