/* The memory planner: buffers for a function's values by liveness, in the sequential run order.
 *
 * Walking the nodes in run order, each output of a kernel node with a static size gets a buffer: its input's
 * buffer when the op computes element by element (IN_PLACE below), the output has that input's dtype and shape,
 * and the input dies at this node (this node is its last reader, it reads it once, and no other live value
 * shares the buffer); the input's buffer also for ops that forward it (Identity, Reshape, ...); otherwise
 * the smallest dead buffer that holds it (best fit), or a new one. A buffer dies after the last reader of the
 * last value in it. Outputs are placed before the node's dying inputs are freed: both exist while the kernel
 * runs. The report gives the most bytes live at once (peak_bytes), the buffers' sizes added up, and the
 * count of buffers.
 *
 * At run time the runtime allocator does the reuse (a value's memory is released at its last reader, as
 * planned) and the in-place decisions are applied: a node planned in place writes into its input's buffer when
 * the run holds the only reference to it (exec.c can_take_input), which also covers values a kernel kept a
 * view of. Arguments, constants and variables are not planned (they live outside the call); call and
 * control-flow nodes' outputs are counted (they are new tensors) but never in place. */
#include <string.h>

#include "core/size_check.h"
#include "graph/exec_internal.h"

/* Ops whose kernels compute output element i from input element i only (alias-safe when the output takes
 * an input's buffer of the same shape): binary arithmetic, activations and their gradients, unary math. */
static const char *const IN_PLACE[] = {
    "AddV2", "Sub", "Mul", "RealDiv", "Maximum", "Minimum", "SquaredDifference", "DivNoNan",
    "Relu", "ReluGrad", "Relu6", "Relu6Grad", "LeakyRelu", "LeakyReluGrad", "TanhGrad", "SigmoidGrad",
    "SqrtGrad", "RsqrtGrad", "Neg", "Abs", "Square", "Sqrt", "Rsqrt", "Exp", "Log", "Tanh", "Sigmoid",
    NULL};
/* Ops whose output shares input 0's buffer (kernels that forward it). */
static const char *const FORWARDS[] = {"Identity", "StopGradient", "Reshape", "ExpandDims", "Squeeze", NULL};

static bool listed(const char *const *list, const char *op) {
    for (int i = 0; list[i]; i++)
        if (!strcmp(list[i], op)) return true;
    return false;
}

/* Bytes of a value, or -1 when only the run knows (unknown dims, strings, resources, variants). */
static int64_t value_bytes(tfc_dtype dt, const tfc_shape *s) {
    if (dt == TFC_STRING || dt == TFC_RESOURCE || !tfc_shape_is_fully_defined(s)) return -1;
    int64_t n = 1;
    for (int i = 0; i < s->rank; i++)
        if (!tfc_size_mul(n, s->dims[i], &n)) return -1;
    int64_t b;
    return tfc_size_mul(n, (int64_t)tfc_dtype_size(dt), &b) ? b : -1;
}

#define FIT_WINDOW 512

typedef struct {
    int64_t size;
    int live; /* values using it that are still alive */
} pbuf;

bool tfc_planner_plan(tfc_exec *x, tfc_status *st) {
    const tfc_graph *g = x->og.g;
    const int n = x->n_nodes;
    int *buf_of = tfc_malloc((size_t)x->n_slots * sizeof *buf_of + 1);   /* slot -> buffer (-1: none) */
    pbuf *bufs = tfc_malloc((size_t)x->n_slots * sizeof *bufs + 1);
    if (!buf_of || !bufs) {
        tfc_free(buf_of), tfc_free(bufs);
        return tfc_status_oom(st, "memory planner", 0);
    }
    for (int s = 0; s < x->n_slots; s++) buf_of[s] = -1;
    tfc_memory_plan m = {0};
    int n_bufs = 0;
    int64_t live = 0;
    for (int k = 0; k < n; k++) {
        xnode *xn = &x->nodes[k];
        const tfc_gnode *d = xn->n;
        xn->inplace_in = -1;
        const char *op = d->op->def->name;
        if (xn->kind != X_KERNEL || !strcmp(op, "ReadVariableOp")) continue; /* outside the call's memory */
        for (int o = 0; o < d->n_out; o++) {
            const int s = xn->out_base + o;
            const int64_t bytes = value_bytes(d->out_dtypes[o], &d->out_shapes[o]);
            if (!xn->calls && o == 0 && d->n_in && listed(FORWARDS, op)) {
                const int b = buf_of[x->in_slots[xn->in_off]];
                if ((buf_of[s] = b) >= 0) bufs[b].live++;
                continue;
            }
            if (bytes < 0) {
                if (d->out_dtypes[o] != TFC_RESOURCE) m.n_unknown++;
                continue;
            }
            m.n_values++;
            if (!xn->calls && o == 0 && listed(IN_PLACE, op)) {
                for (int i = 0; i < d->n_in && xn->inplace_in < 0; i++) {
                    const int is = x->in_slots[xn->in_off + i], b = buf_of[is];
                    const tfc_gnode *p = g->nodes[d->in[i].node];
                    int reads = 0;
                    for (int j = 0; j < d->n_in; j++) reads += x->in_slots[xn->in_off + j] == is;
                    if (b >= 0 && x->last_use[is] == k && reads == 1 && bufs[b].live == 1 &&
                        p->out_dtypes[d->in[i].index] == d->out_dtypes[0] &&
                        tfc_shape_equal(&p->out_shapes[d->in[i].index], &d->out_shapes[0])) {
                        xn->inplace_in = (int8_t)i;
                        buf_of[s] = b;
                        bufs[b].live++;
                        m.n_inplace++;
                    }
                }
                if (xn->inplace_in >= 0) continue;
            }
            /* best fit among the most recently made buffers (bounded: a graph of 10^6 values stays linear) */
            int best = -1;
            for (int b = n_bufs - 1; b >= 0 && b >= n_bufs - FIT_WINDOW; b--)
                if (!bufs[b].live && bufs[b].size >= bytes && (best < 0 || bufs[b].size < bufs[best].size)) best = b;
            if (best < 0) {
                best = n_bufs++;
                bufs[best].size = bytes;
                m.buffer_bytes += bytes;
            }
            bufs[best].live = 1;
            buf_of[s] = best;
            live += bufs[best].size;
        }
        if (live > m.peak_bytes) m.peak_bytes = live;
        for (int r = 0; r < xn->n_rel; r++) { /* the values whose last reader this node is */
            const int b = buf_of[x->rel_slots[xn->rel_off + r]];
            if (b >= 0 && --bufs[b].live == 0) live -= bufs[b].size;
        }
    }
    m.n_buffers = n_bufs;
    x->mem = m;
    tfc_free(buf_of), tfc_free(bufs);
    return true;
}
