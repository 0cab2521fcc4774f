/* Internal tensor layout, shared by core, kernels and eager. Not a public header. */
#ifndef TFC_CORE_TENSOR_INTERNAL_H
#define TFC_CORE_TENSOR_INTERNAL_H

#include <stdatomic.h>

#include "tfc/tensor.h"

typedef struct tfc_buffer {
    atomic_int refcount;
    void *data;
    size_t size;
    void (*dealloc)(void *data, size_t size, void *arg); /* NULL with owned: tfc_aligned_free */
    void *arg;
    bool owned;
    bool strings; /* holds tfc_tstring elements to release */
    int64_t n_strings;
    /* Identity and generation of the contents, for caches of values derived from them (a kernel instance's
     * transformed filter): uid is unique in the process (never reused, unlike the address); version starts
     * at 0 and every in-place writer bumps it (tfc_buffer_written) before writing. (uid, version) names one
     * content for as long as the buffer lives. */
    uint64_t uid;
    _Atomic uint64_t version;
} tfc_buffer;

struct tfc_tensor {
    atomic_int refcount;
    tfc_dtype dtype;
    tfc_shape shape;
    int64_t num_elements;
    tfc_buffer *buf;   /* NULL for symbolic tensors */
    void *data;        /* buf->data (or NULL) */
    uint64_t id;       /* unique per process; tapes track tensors by id */
    void *resource;    /* TFC_RESOURCE scalars: the referenced resource (refcounted by its owner) */
    void (*resource_release)(void *resource);
    void *node;        /* graph tracing: producing node (symbolic tensors) */
    int node_output;
    const struct tfc_device *device; /* the device holding data (tfc_tensor_device); NULL: the host CPU */
};

/* New tensor with uninitialised data (zeroed for strings). dims must be validated non-negative. */
tfc_tensor *tfc_tensor_alloc(tfc_dtype dt, const tfc_shape *shape, tfc_status *st);
/* New symbolic tensor (no buffer; shape may be partially known; num_elements -1 when unknown). The tracer
 * sets node / node_output. */
tfc_tensor *tfc_tensor_symbolic(tfc_dtype dt, const tfc_shape *shape, tfc_status *st);
/* New tensor sharing buf (ref taken). */
tfc_tensor *tfc_tensor_share(tfc_tensor *src, const tfc_shape *shape, tfc_status *st);
uint64_t tfc_tensor_next_id(void);
/* A reference to a tensor's buffer alone (not counted as a live tensor): while it is held, in-place writers
 * (which check for sole ownership of the buffer) copy instead, so the data stays as it is. */
void tfc_buffer_ref(tfc_buffer *b);
void tfc_buffer_unref(tfc_buffer *b); /* NULL-safe */
/* Marks b's contents as changed in place (variable updates, optimizers, a graph op writing into a dying
 * input, tfc_tensor_mutable_data): bumps b->version so caches keyed by (uid, version) miss. NULL-safe. */
static inline void tfc_buffer_written(tfc_buffer *b) {
    if (b) atomic_fetch_add_explicit(&b->version, 1, memory_order_release);
}
/* Bytes of tensor data allocated by tfc now, and the most at any time since the process started (or since
 * tfc_tensor_bytes_reset_peak): the host allocator's counters behind tfc_device_memory_stats. */
int64_t tfc_tensor_bytes_in_use(void);
int64_t tfc_tensor_bytes_peak(void);
int64_t tfc_tensor_alloc_count(void);
void tfc_tensor_bytes_reset_peak(void);
/* Tensors currently alive in the process (all threads): tests check scopes and error paths with it. */
int64_t tfc_tensor_live_count(void);
/* Resource scalar referring to `res`; release(res) runs when the tensor is freed. */
tfc_tensor *tfc_tensor_resource(void *res, void (*acquire)(void *), void (*release)(void *), tfc_status *st);

static inline void *tfc_tdata(const tfc_tensor *t) { return t->data; }
#define TFC_DATA(T, t) ((T *)(t)->data)

#endif
