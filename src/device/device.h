/* Internal: devices, their kernel tables, kernel instances and the kernel context's layout.
 *
 * Every kernel call goes through tfc_device_kernel: (device, op) indexes a table of registrations, newest
 * first, and the first whose dtype constraint admits the call's type attr serves it. A plain kernel is
 * called directly; a kernel with a create function runs through an instance (tfc_kernel_inst) made once per
 * (op, attrs, device, input dtypes): eager keeps a bounded cache of them per context (eager/kernel_cache.h),
 * a graph plan makes one per node when a function is instantiated. */
#ifndef TFC_DEVICE_DEVICE_H
#define TFC_DEVICE_DEVICE_H

#include <stdatomic.h>

#include "ops/registry.h"
#include "tfc/device.h"

/* The kernel context's layout, for tfc's own kernels (public code uses the accessors of tfc/op.h). Fields
 * may be added at the end; designated initialisers leave them zero, which means the default (CPU, no state). */
struct tfc_kernel_ctx {
    tfc_ctx *ctx;
    const tfc_op_def *op;
    const tfc_attrs *attrs;
    int n_in;
    tfc_tensor *const *in;     /* NULL while an instance is created */
    int n_out;
    tfc_tensor **out;
    tfc_threadpool *pool;
    void *state;               /* the instance's state (NULL: plain kernel) */
    const tfc_device *device;  /* NULL: the CPU device */
    const tfc_dtype *in_dtypes; /* set while an instance is created (in is NULL then) */
    /* Eager calls: the instance of another op's kernel from the context's cache, found or created (a
     * reference the caller drops), so a fused kernel continues the state of the op it stands for
     * (_TfcDropout and RandomUniform share one generator). NULL in graphs: there a kernel keeps its own. */
    struct tfc_kernel_inst *(*instance_of)(tfc_ctx *ctx, const tfc_op *op, const tfc_attrs *attrs,
                                           const tfc_dtype *in_dtypes, int n_in, tfc_status *st);
};

/* A registration in a device's kernel table (never freed: registrations live as long as the process). */
typedef struct tfc_kernel_entry {
    tfc_kernel_fn compute;
    tfc_kernel_create_fn create;
    tfc_kernel_destroy_fn destroy;
    int type_attr;             /* attr index of the dtype constraint in the op, or -1 */
    int n_dtypes;
    tfc_dtype dtypes[TFC_KERNEL_MAX_DTYPES];
    const struct tfc_kernel_entry *next; /* older registrations of the same (device, op) */
} tfc_kernel_entry;

/* A device's allocator (the memory its tensors' data lives in): the host's is core's aligned allocation, with
 * the counters core keeps for every tensor buffer it allocates (core/tensor_internal.h). */
typedef struct tfc_allocator {
    const char *name;                  /* "cpu" */
    void *(*alloc)(size_t bytes);      /* aligned for any vector load; NULL when out of memory */
    void (*free)(void *p);             /* NULL-safe */
    int64_t (*bytes_in_use)(void);
    int64_t (*peak_bytes)(void);
    int64_t (*alloc_count)(void);
    void (*reset_peak)(void);
} tfc_allocator;

struct tfc_device {
    const char *type;          /* "CPU" */
    int index;
    const char *name;          /* "/job:localhost/replica:0/task:0/device:CPU:0" */
    const char *logical_name;  /* "/device:CPU:0" */
    const char *physical_name; /* "/physical_device:CPU:0" */
    const tfc_allocator *allocator;
    /* per op index: its registrations, newest first (a head changes only to a newer registration) */
    const tfc_kernel_entry *_Atomic kernels[TFC_MAX_OPS];
};

/* The host CPU device (device.c). */
extern tfc_device tfc_cpu_device;
static inline const tfc_device *tfc_device_cpu(void) { return &tfc_cpu_device; }

static inline bool tfc_kernel_entry_admits(const tfc_kernel_entry *e, tfc_dtype dt) {
    if (e->type_attr < 0 || dt == TFC_INVALID_DTYPE) return true;
    for (int i = 0; i < e->n_dtypes; i++)
        if (e->dtypes[i] == dt) return true;
    return false;
}

/* The kernel of (d, op) for a call with resolved attrs (NULL: the first registration regardless of dtype),
 * or NULL when there is none. Lock-free; inline, as every eager op call asks. */
static inline const tfc_kernel_entry *tfc_device_kernel(const tfc_device *d, const tfc_op *op,
                                                        const tfc_attrs *attrs) {
    const tfc_kernel_entry *e = atomic_load_explicit(&d->kernels[op->index], memory_order_acquire);
    for (; e; e = e->next) {
        if (e->type_attr < 0 || !attrs) return e;
        const tfc_attr *a = &attrs->a[e->type_attr];
        if (tfc_kernel_entry_admits(e, a->kind == TFC_ATTR_TYPE ? a->v.type : TFC_INVALID_DTYPE)) return e;
    }
    return NULL;
}

/* ---- kernel instances ---- */
typedef struct tfc_kernel_inst {
    atomic_int refs;
    const tfc_kernel_entry *ke;
    void *state;
} tfc_kernel_inst;

/* Creates an instance of ke for op with attrs and input dtypes in_dtypes[0..n_in) (runs ke->create when it
 * has one). NULL with st set when create fails or memory runs out. The caller holds one reference. */
tfc_kernel_inst *tfc_kernel_inst_new(tfc_ctx *ctx, const tfc_device *d, const tfc_kernel_entry *ke,
                                     const tfc_op *op, const tfc_attrs *attrs, const tfc_dtype *in_dtypes,
                                     int n_in, tfc_status *st);
static inline tfc_kernel_inst *tfc_kernel_inst_ref(tfc_kernel_inst *i) {
    atomic_fetch_add_explicit(&i->refs, 1, memory_order_relaxed);
    return i;
}
/* Drops a reference; the last one runs destroy(state). NULL-safe. */
void tfc_kernel_inst_unref(tfc_kernel_inst *i);

/* Instances alive in the process (all contexts and plans): tests check that caches free theirs. */
int64_t tfc_kernel_inst_live_count(void);

#endif
