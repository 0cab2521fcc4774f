/* The kernel context's accessors (tfc/op.h) and kernel instances (device.h). */
#include "device/device.h"

#include "core/tensor_internal.h"

int tfc_kernel_num_inputs(const tfc_kernel_ctx *k) { return k->n_in; }

tfc_tensor *tfc_kernel_input(const tfc_kernel_ctx *k, int i) {
    return k->in && i >= 0 && i < k->n_in ? k->in[i] : NULL;
}

tfc_dtype tfc_kernel_input_dtype(const tfc_kernel_ctx *k, int i) {
    if (i < 0 || i >= k->n_in) return TFC_INVALID_DTYPE;
    return k->in ? k->in[i]->dtype : k->in_dtypes ? k->in_dtypes[i] : TFC_INVALID_DTYPE;
}

int tfc_kernel_num_outputs(const tfc_kernel_ctx *k) { return k->n_out; }

tfc_tensor *tfc_kernel_output(const tfc_kernel_ctx *k, int i) {
    return k->out && i >= 0 && i < k->n_out ? k->out[i] : NULL;
}

const tfc_attrs *tfc_kernel_attrs(const tfc_kernel_ctx *k) { return k->attrs; }
const tfc_op_def *tfc_kernel_op(const tfc_kernel_ctx *k) { return k->op; }
tfc_threadpool *tfc_kernel_pool(const tfc_kernel_ctx *k) { return k->pool; }
tfc_ctx *tfc_kernel_context(const tfc_kernel_ctx *k) { return k->ctx; }
const tfc_device *tfc_kernel_device(const tfc_kernel_ctx *k) { return k->device ? k->device : tfc_device_cpu(); }
void *tfc_kernel_state(const tfc_kernel_ctx *k) { return k->state; }

/* ---- output helpers ---- */
tfc_tensor *tfc_kernel_alloc_output(tfc_kernel_ctx *k, int i, const int64_t *dims, int rank, tfc_status *st) {
    tfc_shape s;
    if (i < 0 || i >= k->n_out) {
        tfc_status_set(st, TFC_INTERNAL, "%s: output %d out of range", k->op->name, i);
        return NULL;
    }
    if (!tfc_shape_make(&s, dims, rank, st)) return NULL;
    tfc_dtype dt = k->out[i] ? k->out[i]->dtype : TFC_INVALID_DTYPE;
    if (!dt) {
        /* dtype comes from the op's output spec: recompute from the resolved attrs */
        const tfc_op *op = k->attrs->op;
        int n = 0;
        for (int a = 0; a < op->n_out_args && !dt; a++) {
            const tfc_arg_spec *sp = &op->out[a];
            int64_t cnt = sp->kind == TFC_ARG_N_TYPE ? k->attrs->a[sp->number_attr].v.i
                          : sp->kind == TFC_ARG_TYPE_LIST ? k->attrs->a[sp->type_attr].n : 1;
            if (i < n + cnt) {
                if (sp->kind == TFC_ARG_FIXED || (sp->kind == TFC_ARG_N_TYPE && sp->type_attr < 0)) dt = sp->fixed;
                else if (sp->kind == TFC_ARG_TYPE_LIST) dt = k->attrs->a[sp->type_attr].v.types[i - n];
                else dt = k->attrs->a[sp->type_attr].v.type;
            }
            n += (int)cnt;
        }
    }
    tfc_tensor_unref(k->out[i]);
    k->out[i] = tfc_tensor_alloc(dt, &s, st);
    return k->out[i];
}

bool tfc_kernel_forward_input(tfc_kernel_ctx *k, int j, int i, const tfc_shape *shape, tfc_status *st) {
    tfc_tensor *t = tfc_tensor_share(k->in[j], shape ? shape : &k->in[j]->shape, st);
    if (!t) return false;
    tfc_tensor_unref(k->out[i]);
    k->out[i] = t;
    return true;
}

/* ---- instances ---- */
static atomic_llong live_insts;

int64_t tfc_kernel_inst_live_count(void) { return atomic_load(&live_insts); }

tfc_kernel_inst *tfc_kernel_inst_new(tfc_ctx *ctx, const tfc_device *d, const tfc_kernel_entry *ke,
                                     const tfc_op *op, const tfc_attrs *attrs, const tfc_dtype *in_dtypes,
                                     int n_in, tfc_status *st) {
    tfc_kernel_inst *i = tfc_malloc(sizeof *i);
    if (!i) return tfc_status_oom(st, "kernel instance", sizeof *i), NULL;
    atomic_init(&i->refs, 1);
    i->ke = ke;
    i->state = NULL;
    if (ke->create) {
        tfc_kernel_ctx k = {.ctx = ctx, .op = op->def, .attrs = attrs, .n_in = n_in, .device = d,
                            .in_dtypes = in_dtypes};
        if (!ke->create(&k, &i->state, st)) {
            tfc_free(i);
            return NULL;
        }
    }
    atomic_fetch_add(&live_insts, 1);
    return i;
}

void tfc_kernel_inst_unref(tfc_kernel_inst *i) {
    if (!i || atomic_fetch_sub_explicit(&i->refs, 1, memory_order_acq_rel) != 1) return;
    if (i->ke->destroy) i->ke->destroy(i->state);
    atomic_fetch_sub(&live_insts, 1);
    tfc_free(i);
}
