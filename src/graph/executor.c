/* The parallel run of an instantiated function (TensorFlow's executor with inter-op parallelism).
 *
 * Instantiation counts each node's incoming edges (data and control) and lists its successors, and estimates
 * each node's work from its static shapes (about one unit per element read or written, m*k*n for products,
 * out*kh*kw*cin for convolutions). A run is spread over threads only when that pays: the nodes of at least
 * HEAVY units (~10 us or more) add up to at least PAR_GAIN times the heaviest chain through them, by at least
 * MIN_SPARE units — so a chain of small ops (graph_dispatch) or a mostly serial training step keeps the
 * sequential run, whose kernels split their own work over the pool (intra-op). In a parallel run each thread
 * runs whole nodes and a kernel's own parallel_for runs inline on it (the pool takes one job at a time).
 *
 * The run: one loop per thread (the caller and pool workers, through one tfc_parallel_for job of `threads`
 * indexes). A finished node decrements its successors' pending counts; a successor that becomes ready is run
 * next by the same thread when it is light or the first heavy one, and queued for other threads otherwise, so
 * small nodes are never handed across threads. Nodes that touch the context or resources (function calls,
 * control flow, stateful ops) run only on the calling thread, in the order they become ready; automatic control
 * dependencies already order stateful ops among themselves. A value is released when its last reader finished
 * (an atomic count of remaining readers). The first error stops the run: no new node starts, nodes already
 * running finish, and that error is returned. Each node computes the same thing on any thread, so results
 * equal the sequential run's for kernels whose result does not depend on how many threads split them. */
#include <pthread.h>
#include <string.h>

#include "graph/exec_internal.h"

#define HEAVY 20000.0
#define PAR_GAIN 1.5
#define MIN_SPARE 200000.0

static _Thread_local const void *tl_run; /* the run this thread is inside (NULL: none) */

bool tfc_executor_in_parallel(void) { return tl_run != NULL; }

static double elems(const tfc_shape *s) {
    if (!tfc_shape_is_fully_defined(s)) return -1;
    double e = 1;
    for (int i = 0; i < s->rank; i++) e *= (double)s->dims[i];
    return e;
}

/* Rough work of a node from its static shapes; unknown shapes count as heavy (they may be large). */
static double node_cost(const tfc_graph *g, const xnode *xn) {
    const tfc_gnode *d = xn->n;
    if (xn->kind != X_KERNEL) return 0;
    if (xn->calls) return HEAVY;
    double c = 0;
    for (int o = 0; o < d->n_out; o++) {
        double e = elems(&d->out_shapes[o]);
        if (e < 0) return HEAVY;
        c += e;
    }
    const tfc_shape *in0 = d->n_in ? &g->nodes[d->in[0].node]->out_shapes[d->in[0].index] : NULL;
    const tfc_shape *in1 = d->n_in > 1 ? &g->nodes[d->in[1].node]->out_shapes[d->in[1].index] : NULL;
    for (int i = 0; i < d->n_in; i++) {
        double e = elems(&g->nodes[d->in[i].node]->out_shapes[d->in[i].index]);
        c += e > 0 ? e : 0;
    }
    const char *op = d->op->def->name;
    const double out = d->n_out ? elems(&d->out_shapes[0]) : 0;
    if ((!strncmp(op, "MatMul", 6) || !strcmp(op, "_FusedMatMul") || !strncmp(op, "BatchMatMul", 11)) && in0 &&
        in0->rank >= 2 && in0->dims[in0->rank - 1] > 0 && in0->dims[in0->rank - 2] > 0) {
        /* out = m x n per batch; k is the input dim that is neither (either of a's last two) */
        const tfc_shape *os = &d->out_shapes[0];
        double m_or_n = os->rank >= 2 ? (double)os->dims[os->rank - 2] : 1;
        double a0 = (double)in0->dims[in0->rank - 2], a1 = (double)in0->dims[in0->rank - 1];
        c += out * (a0 == m_or_n ? a1 : a0);
    } else if ((strstr(op, "Conv2D") || strstr(op, "Conv3D")) && in1 && in1->rank >= 3) {
        double f = elems(in1), co = (double)in1->dims[in1->rank - 1];
        if (f > 0 && co > 0) c += (out > 0 ? out : 0) * (f / co);
    }
    return c;
}

bool tfc_executor_prepare(tfc_exec *x, const int *pos, tfc_status *st) {
    const tfc_graph *g = x->og.g;
    const int n = x->n_nodes;
    double *path = tfc_calloc((size_t)n + 1, sizeof *path);
    int64_t n_edges = 0;
    if (!path) goto oom;
    for (int k = 0; k < n; k++) n_edges += x->nodes[k].n->n_in + x->nodes[k].n->n_ctrl;
    x->succ = tfc_malloc((size_t)n_edges * sizeof *x->succ + 1);
    x->uses = tfc_calloc((size_t)x->n_slots + 1, sizeof *x->uses);
    if (!x->succ || !x->uses) goto oom;
    /* successor lists by counting: edges out of each node, then fill */
    for (int k = 0; k < n; k++) {
        const tfc_gnode *d = x->nodes[k].n;
        x->nodes[k].n_pred = d->n_in + d->n_ctrl;
        for (int i = 0; i < d->n_in; i++) {
            x->nodes[pos[d->in[i].node]].n_succ++;
            x->uses[x->in_slots[x->nodes[k].in_off + i]]++;
        }
        for (int i = 0; i < d->n_ctrl; i++) x->nodes[pos[d->ctrl[i]]].n_succ++;
    }
    for (int r = 0; r < x->og.n_rets; r++) x->uses[x->ret_slots[r]]++;
    int acc = 0;
    for (int k = 0; k < n; k++) {
        x->nodes[k].succ_off = acc;
        acc += x->nodes[k].n_succ;
        x->nodes[k].n_succ = 0;
    }
    for (int k = 0; k < n; k++) {
        const tfc_gnode *d = x->nodes[k].n;
        for (int i = 0; i < d->n_in; i++) {
            xnode *p = &x->nodes[pos[d->in[i].node]];
            x->succ[p->succ_off + p->n_succ++] = k;
        }
        for (int i = 0; i < d->n_ctrl; i++) {
            xnode *p = &x->nodes[pos[d->ctrl[i]]];
            x->succ[p->succ_off + p->n_succ++] = k;
        }
    }
    /* the heaviest chain of heavy nodes vs all heavy work (run order is topological) */
    double total = 0, longest = 0;
    for (int k = 0; k < n; k++) {
        xnode *xn = &x->nodes[k];
        xn->cost = node_cost(g, xn);
        const double w = xn->cost >= HEAVY ? xn->cost : 0;
        double best = 0;
        const tfc_gnode *d = xn->n;
        for (int i = 0; i < d->n_in; i++)
            if (path[pos[d->in[i].node]] > best) best = path[pos[d->in[i].node]];
        for (int i = 0; i < d->n_ctrl; i++)
            if (path[pos[d->ctrl[i]]] > best) best = path[pos[d->ctrl[i]]];
        path[k] = best + w;
        total += w;
        if (path[k] > longest) longest = path[k];
    }
    x->parallel = total >= PAR_GAIN * longest && total - longest >= MIN_SPARE;
    tfc_free(path);
    return true;
oom:
    tfc_free(path);
    return tfc_status_oom(st, "graph executor", 0);
}

/* ---- the run ---- */
typedef struct {
    tfc_ctx *ctx;
    const tfc_exec *x;
    tfc_tensor *const *in;
    tfc_tensor **vals;
    _Atomic int *pending;      /* per node: inputs not yet produced */
    _Atomic int *remaining;    /* per slot: readers not yet finished */
    _Atomic int done;          /* nodes finished */
    _Atomic bool failed;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int *queue, q_head, q_tail;    /* ready nodes any thread may run (a ring of n_nodes entries) */
    int *mainq, m_head, m_tail;    /* ready nodes for the calling thread */
    int waiting;                   /* threads asleep on cv */
    tfc_status *st;                /* the first error */
} prun;

static void push(prun *r, int *q, int *tail, int k) {
    pthread_mutex_lock(&r->mu);
    q[(*tail)++ % r->x->n_nodes] = k;
    if (r->waiting) pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

/* The next node for this thread from the shared queues; -1 when the run is over (finished or failed). */
static int pop(prun *r, bool main) {
    const int n = r->x->n_nodes;
    pthread_mutex_lock(&r->mu);
    int k = -1;
    for (;;) {
        if (atomic_load(&r->failed) || atomic_load(&r->done) == n) break;
        if (main && r->m_head != r->m_tail) {
            k = r->mainq[r->m_head++ % n];
            break;
        }
        if (r->q_head != r->q_tail) {
            k = r->queue[r->q_head++ % n];
            break;
        }
        r->waiting++;
        pthread_cond_wait(&r->cv, &r->mu);
        r->waiting--;
    }
    pthread_mutex_unlock(&r->mu);
    return k;
}

static void release(prun *r, int s) {
    if (atomic_fetch_sub_explicit(&r->remaining[s], 1, memory_order_acq_rel) == 1) {
        tfc_tensor_unref(r->vals[s]);
        r->vals[s] = NULL;
    }
}

#define LOCAL_MAX 64

/* A thread's own ready nodes: light ones and the first heavy one it made ready (a stack). */
typedef struct {
    int k[LOCAL_MAX];
    int n;
    int done; /* nodes finished and not yet added to the run's count */
} local_stack;

/* Runs node k, then hands out the successors it made ready: light ones and one heavy one stay with this
 * thread, other heavy ones go to the shared queue, context-bound ones to the calling thread. False when the
 * node failed (the run's error is set). */
static bool run_one(prun *r, int k, bool main, local_stack *ls, tfc_status *st) {
    const tfc_exec *x = r->x;
    const xnode *xn = &x->nodes[k];
    const tfc_gnode *d = xn->n;
    if (xn->kind != X_KERNEL) tfc_exec_run_trivial(x, xn, r->in, r->vals);
    else if (!tfc_exec_run_node(r->ctx, x, xn, r->vals, r->remaining, st)) {
        tfc_exec_note_node(xn, st);
        pthread_mutex_lock(&r->mu);
        if (!atomic_load(&r->failed)) { /* the first error wins */
            *r->st = *st;
            atomic_store(&r->failed, true);
        }
        pthread_cond_broadcast(&r->cv);
        pthread_mutex_unlock(&r->mu);
        return false;
    }
    for (int i = 0; i < d->n_in; i++) release(r, x->in_slots[xn->in_off + i]);
    for (int o = 0; o < d->n_out; o++)
        if (x->uses[xn->out_base + o] == 0) release(r, xn->out_base + o);
    bool kept_heavy = false;
    for (int j = 0; j < xn->n_succ; j++) {
        const int s = x->succ[xn->succ_off + j];
        if (atomic_fetch_sub_explicit(&r->pending[s], 1, memory_order_acq_rel) != 1) continue;
        const xnode *sn = &x->nodes[s];
        if (sn->main_only && !main) push(r, r->mainq, &r->m_tail, s);
        else if (ls->n < LOCAL_MAX && (sn->cost < HEAVY || !kept_heavy)) {
            kept_heavy |= sn->cost >= HEAVY;
            ls->k[ls->n++] = s;
        } else push(r, r->queue, &r->q_tail, s);
    }
    ls->done++;
    return true;
}

/* Adds the nodes this thread finished to the run's count (before it looks at the shared queues, where the
 * count decides whether the run is over: one shared update per batch of local nodes instead of per node) and
 * wakes the others when that completes the run. */
static void flush_done(prun *r, local_stack *ls) {
    if (!ls->done) return;
    if (atomic_fetch_add_explicit(&r->done, ls->done, memory_order_acq_rel) + ls->done == r->x->n_nodes) {
        pthread_mutex_lock(&r->mu);
        pthread_cond_broadcast(&r->cv);
        pthread_mutex_unlock(&r->mu);
    }
    ls->done = 0;
}

static void thread_loop(void *arg, int64_t begin, int64_t end) {
    prun *r = arg;
    const bool main = tl_run == r;
    const void *saved = tl_run;
    tl_run = r;
    tfc_status st = TFC_STATUS_INIT;
    local_stack ls = {.n = 0, .done = 0};
    for (int64_t i = begin; i < end; i++) {
        for (;;) {
            if (!ls.n) flush_done(r, &ls);
            const int k = ls.n ? ls.k[--ls.n] : pop(r, main);
            if (k < 0 || atomic_load_explicit(&r->failed, memory_order_relaxed)) break;
            if (!run_one(r, k, main, &ls, &st)) break;
        }
        ls.n = 0;
        flush_done(r, &ls);
    }
    tl_run = saved;
}

bool tfc_executor_run_parallel(tfc_ctx *ctx, const tfc_exec *x, tfc_tensor *const *in, tfc_tensor **vals, int threads,
                               tfc_status *st) {
    const int n = x->n_nodes;
    prun r = {.ctx = ctx, .x = x, .in = in, .vals = vals, .st = st};
    /* one block per run for the counts and both queues (all int-sized: no padding between them) */
    _Static_assert(sizeof(_Atomic int) == sizeof(int) && _Alignof(_Atomic int) == _Alignof(int), "int counters");
    void *block = tfc_malloc(((size_t)3 * (size_t)n + (size_t)x->n_slots) * sizeof(int) + 1);
    if (!block) return tfc_status_oom(st, "graph run", 0);
    r.pending = block;
    r.remaining = r.pending + n;
    r.queue = (int *)(r.remaining + x->n_slots);
    r.mainq = r.queue + n;
    atomic_init(&r.done, 0);
    atomic_init(&r.failed, false);
    for (int s = 0; s < x->n_slots; s++) atomic_init(&r.remaining[s], x->uses[s]);
    for (int k = 0; k < n; k++) {
        atomic_init(&r.pending[k], x->nodes[k].n_pred);
        if (x->nodes[k].n_pred == 0) {
            if (x->nodes[k].main_only) r.mainq[r.m_tail++] = k;
            else r.queue[r.q_tail++] = k;
        }
    }
    pthread_mutex_init(&r.mu, NULL);
    pthread_cond_init(&r.cv, NULL);
    /* The calling thread marks itself (main) before the job: pool workers see tl_run == NULL. */
    tl_run = &r;
    tfc_parallel_for(ctx->pool, threads, (int64_t)1 << 40, thread_loop, &r);
    tl_run = NULL;
    pthread_cond_destroy(&r.cv);
    pthread_mutex_destroy(&r.mu);
    bool ok = !atomic_load(&r.failed);
    if (ok && atomic_load(&r.done) != n) /* cannot happen for a valid plan; never return half a run */
        ok = tfc_status_set(st, TFC_INTERNAL, "function '%s': parallel run stopped after %d of %d nodes",
                            x->fn->name, atomic_load(&r.done), n);
    tfc_free(block);
    return ok;
}
