/* GradientTape: records ops whose inputs are watched, then runs their gradient functions backwards.
 * Tensors are keyed by id (resource handles by their variable's id), so a tape keeps no tensor alive that
 * it did not record. Gradient functions emit ops through tfc_execute, so outer tapes record the gradient
 * computation of inner ones (higher-order gradients). */
#include <string.h>

#include "core/variable.h"
#include "eager/context_internal.h"

/* ---- an id set / id -> tensor map (open addressing) ---- */
typedef struct {
    uint64_t *keys; /* 0 = empty */
    tfc_tensor **vals;
    int64_t cap, n;
} idmap;

static bool idmap_grow(idmap *m) {
    int64_t cap = m->cap ? m->cap * 2 : 64;
    uint64_t *keys = tfc_calloc((size_t)cap, sizeof *keys);
    tfc_tensor **vals = tfc_calloc((size_t)cap, sizeof *vals);
    if (!keys || !vals) {
        tfc_free(keys);
        tfc_free(vals);
        return false;
    }
    for (int64_t i = 0; i < m->cap; i++) {
        if (!m->keys[i]) continue;
        int64_t h = (int64_t)((m->keys[i] * 0x9E3779B97F4A7C15ull) & (uint64_t)(cap - 1));
        while (keys[h]) h = (h + 1) & (cap - 1);
        keys[h] = m->keys[i];
        vals[h] = m->vals[i];
    }
    tfc_free(m->keys);
    tfc_free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
    return true;
}

static int64_t idmap_slot(const idmap *m, uint64_t key) {
    if (!m->cap) return -1;
    int64_t h = (int64_t)((key * 0x9E3779B97F4A7C15ull) & (uint64_t)(m->cap - 1));
    while (m->keys[h]) {
        if (m->keys[h] == key) return h;
        h = (h + 1) & (m->cap - 1);
    }
    return -1;
}

static bool idmap_has(const idmap *m, uint64_t key) { return idmap_slot(m, key) >= 0; }
static tfc_tensor *idmap_get(const idmap *m, uint64_t key) {
    int64_t s = idmap_slot(m, key);
    return s >= 0 ? m->vals[s] : NULL;
}

static bool idmap_put(idmap *m, uint64_t key, tfc_tensor *v) {
    int64_t s = idmap_slot(m, key);
    if (s >= 0) {
        m->vals[s] = v;
        return true;
    }
    if ((m->n + 1) * 2 > m->cap && !idmap_grow(m)) return false;
    int64_t h = (int64_t)((key * 0x9E3779B97F4A7C15ull) & (uint64_t)(m->cap - 1));
    while (m->keys[h]) h = (h + 1) & (m->cap - 1);
    m->keys[h] = key;
    m->vals[h] = v;
    m->n++;
    return true;
}

static void idmap_free(idmap *m) {
    tfc_free(m->keys);
    tfc_free(m->vals);
    memset(m, 0, sizeof *m);
}

/* ---- tape ---- */
typedef struct entry {
    const tfc_op *op; /* NULL for custom gradients */
    tfc_attrs *attrs;
    tfc_custom_grad_fn custom;
    void *user;
    int n_in, n_out;
    tfc_tensor **in, **out; /* referenced */
} entry;

struct tfc_tape {
    tfc_ctx *ctx;
    bool persistent, watch_accessed, recording, used, active;
    bool oom; /* a watch failed for lack of memory: gradients would be silently wrong, so they fail */
    idmap watched; /* ids of watched tensors/variables and of recorded outputs */
    entry *entries;
    int64_t n_entries, cap_entries;
};

static bool differentiable(const tfc_tensor *t) {
    return tfc_dtype_is_floating(t->dtype) || t->dtype == TFC_RESOURCE;
}

tfc_tape *tfc_tape_new(tfc_ctx *ctx, bool persistent, bool watch_accessed_variables, tfc_status *st) {
    if (ctx->n_tapes >= TFC_MAX_TAPES) {
        tfc_status_set(st, TFC_RESOURCE_EXHAUSTED, "GradientTape: more than %d nested tapes", TFC_MAX_TAPES);
        return NULL;
    }
    tfc_tape *t = tfc_calloc(1, sizeof *t);
    if (!t) {
        tfc_status_oom(st, "GradientTape", sizeof *t);
        return NULL;
    }
    t->ctx = ctx;
    t->persistent = persistent;
    t->watch_accessed = watch_accessed_variables;
    t->recording = true;
    t->active = true;
    ctx->tapes[ctx->n_tapes++] = t;
    return t;
}

static void deactivate(tfc_tape *t) {
    if (!t->active) return;
    tfc_ctx *ctx = t->ctx;
    for (int i = 0; i < ctx->n_tapes; i++)
        if (ctx->tapes[i] == t) {
            memmove(&ctx->tapes[i], &ctx->tapes[i + 1], (size_t)(ctx->n_tapes - i - 1) * sizeof(tfc_tape *));
            ctx->n_tapes--;
            break;
        }
    t->active = false;
}

static void free_entries(tfc_tape *t) {
    for (int64_t i = 0; i < t->n_entries; i++) {
        entry *e = &t->entries[i];
        for (int k = 0; k < e->n_in; k++) tfc_tensor_unref(e->in[k]);
        for (int k = 0; k < e->n_out; k++) tfc_tensor_unref(e->out[k]);
        tfc_free(e->in);
        tfc_attrs_free(e->attrs);
    }
    tfc_free(t->entries);
    t->entries = NULL;
    t->n_entries = t->cap_entries = 0;
}

void tfc_tape_free(tfc_tape *t) {
    if (!t) return;
    deactivate(t);
    free_entries(t);
    idmap_free(&t->watched);
    tfc_free(t);
}

void tfc_tape_watch(tfc_tape *t, tfc_tensor *x) {
    if (!x || !differentiable(x)) return;
    if (!idmap_put(&t->watched, tfc_tensor_key(x), NULL)) t->oom = true;
}

void tfc_tape_watch_variable(tfc_tape *t, tfc_variable *v) {
    if (v && !idmap_put(&t->watched, v->id, NULL)) t->oom = true;
}

void tfc_tape_stop_recording(tfc_tape *t) { t->recording = false; }
void tfc_tape_start_recording(tfc_tape *t) { t->recording = true; }
void tfc_ctx_stop_recording(tfc_ctx *ctx) {
    if (ctx) ctx->record_paused++;
}
void tfc_ctx_start_recording(tfc_ctx *ctx) {
    if (ctx && ctx->record_paused > 0) ctx->record_paused--;
}

void tfc_tape_variable_accessed(tfc_ctx *ctx, tfc_variable *v) {
    if (!v->trainable || ctx->record_paused) return;
    for (int i = 0; i < ctx->n_tapes; i++) {
        tfc_tape *t = ctx->tapes[i];
        if (t->recording && t->watch_accessed && tfc_dtype_is_floating(v->dtype) &&
            !idmap_put(&t->watched, v->id, NULL))
            t->oom = true;
    }
}

static bool tape_watches_any(const tfc_tape *t, tfc_tensor *const *in, int n_in) {
    if (!t->recording) return false;
    for (int i = 0; i < n_in; i++)
        if (differentiable(in[i]) && idmap_has(&t->watched, tfc_tensor_key(in[i]))) return true;
    return false;
}

bool tfc_tape_should_record(tfc_ctx *ctx, tfc_tensor *const *in, int n_in) {
    for (int i = 0; i < ctx->n_tapes; i++)
        if (tape_watches_any(ctx->tapes[i], in, n_in)) return true;
    return false;
}

bool tfc_tape_single_plain(const tfc_ctx *ctx) {
    return ctx->n_tapes == 1 && !ctx->record_paused && ctx->tapes[0]->recording && !ctx->tapes[0]->persistent;
}

static bool record(tfc_tape *t, const tfc_op *op, const tfc_attrs *attrs, tfc_custom_grad_fn custom, void *user,
                   tfc_tensor *const *in, int n_in, tfc_tensor *const *out, int n_out, tfc_status *st) {
    if (op && op->def->not_differentiable) return true;
    if (t->n_entries == t->cap_entries) {
        int64_t cap = t->cap_entries ? t->cap_entries * 2 : 64;
        entry *e = tfc_realloc(t->entries, (size_t)cap * sizeof *e);
        if (!e) return tfc_status_oom(st, "GradientTape", (size_t)cap * sizeof *e);
        t->entries = e;
        t->cap_entries = cap;
    }
    entry *e = &t->entries[t->n_entries];
    memset(e, 0, sizeof *e);
    e->in = tfc_malloc((size_t)(n_in + n_out + 1) * sizeof(tfc_tensor *));
    if (!e->in) return tfc_status_oom(st, "GradientTape", 0);
    if (attrs && !(e->attrs = tfc_attrs_clone(attrs))) {
        tfc_free(e->in);
        return tfc_status_oom(st, "GradientTape attrs", 0);
    }
    e->out = e->in + n_in;
    e->op = op;
    e->custom = custom;
    e->user = user;
    e->n_in = n_in;
    e->n_out = n_out;
    for (int i = 0; i < n_in; i++) e->in[i] = tfc_tensor_ref(in[i]);
    for (int i = 0; i < n_out; i++) e->out[i] = tfc_tensor_ref(out[i]);
    t->n_entries++; /* the tape owns the references now, also if watching an output fails below */
    for (int i = 0; i < n_out; i++)
        if (differentiable(out[i]) && !idmap_put(&t->watched, tfc_tensor_key(out[i]), NULL)) {
            t->oom = true;
            return tfc_status_oom(st, "GradientTape", 0);
        }
    return true;
}

bool tfc_tape_record_op(tfc_ctx *ctx, const tfc_op *op, const tfc_attrs *attrs, tfc_tensor *const *in, int n_in,
                        tfc_tensor *const *out, int n_out, tfc_status *st) {
    for (int i = 0; i < ctx->n_tapes; i++)
        if (tape_watches_any(ctx->tapes[i], in, n_in) &&
            !record(ctx->tapes[i], op, attrs, NULL, NULL, in, n_in, out, n_out, st))
            return false;
    return true;
}

/* ---- backward pass ---- */
static tfc_tensor *ones_like(tfc_ctx *ctx, tfc_tensor *t, tfc_status *st) {
    return tfc_emit(ctx, "OnesLike", &t, 1, NULL, 0, st);
}
static tfc_tensor *zeros_like(tfc_ctx *ctx, tfc_tensor *t, tfc_status *st) {
    return tfc_emit(ctx, "ZerosLike", &t, 1, NULL, 0, st);
}

/* grads[key] += g */
static bool accumulate(tfc_ctx *ctx, idmap *grads, uint64_t key, tfc_tensor *g, tfc_status *st) {
    tfc_tensor *old = idmap_get(grads, key);
    if (old) {
        tfc_tensor *in[2] = {old, g};
        if (!(g = tfc_emit(ctx, "AddV2", in, 2, NULL, 0, st))) return false;
    }
    return idmap_put(grads, key, g) || tfc_status_oom(st, "gradient", 0);
}

static bool run_entry(tfc_ctx *ctx, entry *e, idmap *grads, const idmap *reach, tfc_status *st) {
    tfc_tensor *dy[TFC_MAX_IO], *dx[TFC_MAX_IO];
    bool any = false;
    for (int i = 0; i < e->n_out; i++) {
        dy[i] = differentiable(e->out[i]) ? idmap_get(grads, tfc_tensor_key(e->out[i])) : NULL;
        any |= dy[i] != NULL;
    }
    if (!any) return true;
    /* outputs without a gradient get zeros, unless the op's gradient takes NULL for them (grad_null_dy) */
    const uint32_t null_ok = e->custom ? 0 : e->op->def->grad_null_dy;
    for (int i = 0; i < e->n_out; i++)
        if (!dy[i] && tfc_dtype_is_floating(e->out[i]->dtype) && !(i < 32 && (null_ok >> i & 1u)) &&
            !(dy[i] = zeros_like(ctx, e->out[i], st)))
            return false;
    for (int i = 0; i < e->n_in; i++) dx[i] = NULL;
    if (e->custom) {
        if (!e->custom(ctx, e->user, e->in, e->n_in, e->out, e->n_out, dy, dx, st)) return false;
    } else {
        if (!e->op->def->grad)
            return tfc_status_set(st, TFC_NOT_FOUND, "No gradient defined for operation '%s' (op type: %s)",
                                  e->op->def->name, e->op->def->name);
        bool need[TFC_MAX_IO];
        for (int i = 0; i < e->n_in; i++) need[i] = differentiable(e->in[i]) && idmap_has(reach, tfc_tensor_key(e->in[i]));
        tfc_grad_ctx g = {.ctx = ctx, .op = e->op->def, .attrs = e->attrs, .n_in = e->n_in, .in = e->in,
                          .n_out = e->n_out, .out = e->out, .dy = dy, .dx = dx, .need_dx = need};
        tfc_status_clear(st); /* gradient helpers stop at an error already in st (math_ops.c) */
        if (!e->op->def->grad(&g, st)) return false;
    }
    for (int i = 0; i < e->n_in; i++)
        if (dx[i] && differentiable(e->in[i]) && !accumulate(ctx, grads, tfc_tensor_key(e->in[i]), dx[i], st))
            return false;
    return true;
}

bool tfc_tape_gradient_n(tfc_tape *t, tfc_tensor *const *targets, int n_targets, tfc_tensor *const *output_gradients,
                         tfc_tensor *const *src_t, int n_t, tfc_variable *const *src_v, int n_v,
                         tfc_unconnected unconnected, tfc_tensor **out, tfc_status *st) {
    tfc_ctx *ctx = t->ctx;
    int n_src = n_t + n_v;
    for (int i = 0; i < n_src; i++) out[i] = NULL;
    if (t->used && !t->persistent)
        return tfc_status_set(st, TFC_FAILED_PRECONDITION,
                              "A non-persistent GradientTape can only be used to compute one set of gradients (or jacobians)");
    if (t->oom)
        return tfc_status_set(st, TFC_RESOURCE_EXHAUSTED,
                              "GradientTape: out of memory while recording; its gradients would be incomplete");
    uint64_t *src_keys = tfc_malloc((size_t)(n_src + 1) * sizeof *src_keys);
    if (!src_keys) return tfc_status_oom(st, "gradient", 0); /* the tape is unchanged: a retry may succeed */
    t->used = true;
    bool was_recording = t->recording;
    t->recording = false;
    for (int i = 0; i < n_t; i++) src_keys[i] = src_t[i] ? tfc_tensor_key(src_t[i]) : 0;
    for (int i = 0; i < n_v; i++) src_keys[n_t + i] = src_v[i] ? src_v[i]->id : 0;

    idmap reach = {0}, grads = {0};
    bool ok = tfc_scope_begin(ctx, st);
    if (!ok) goto done_noscope;
    /* Entries on a path from a source. */
    for (int i = 0; i < n_src; i++)
        if (src_keys[i] && !idmap_put(&reach, src_keys[i], NULL)) goto oom;
    char *relevant = tfc_calloc((size_t)t->n_entries + 1, 1);
    if (!relevant) goto oom;
    for (int64_t i = 0; i < t->n_entries; i++) {
        entry *e = &t->entries[i];
        for (int k = 0; k < e->n_in && !relevant[i]; k++) relevant[i] = idmap_has(&reach, tfc_tensor_key(e->in[k]));
        if (relevant[i])
            for (int k = 0; k < e->n_out; k++)
                if (differentiable(e->out[k]) && !idmap_put(&reach, tfc_tensor_key(e->out[k]), NULL)) {
                    tfc_free(relevant);
                    goto oom;
                }
    }
    for (int i = 0; i < n_targets && ok; i++) {
        if (!targets[i] || !differentiable(targets[i])) continue;
        tfc_tensor *g = output_gradients && output_gradients[i] ? output_gradients[i] : ones_like(ctx, targets[i], st);
        ok = g && accumulate(ctx, &grads, tfc_tensor_key(targets[i]), g, st);
    }
    for (int64_t i = t->n_entries - 1; i >= 0 && ok; i--)
        if (relevant[i]) ok = run_entry(ctx, &t->entries[i], &grads, &reach, st);
    tfc_free(relevant);
    if (ok) {
        for (int i = 0; i < n_src && ok; i++) {
            /* As TensorFlow: a source the tape never watched is unconnected, and integer sources get no
             * gradient (zeros of their dtype under TFC_UNCONNECTED_ZERO). */
            tfc_tensor *g = src_keys[i] && idmap_has(&t->watched, src_keys[i]) ? idmap_get(&grads, src_keys[i]) : NULL;
            bool is_int = i < n_t ? (src_t[i] && !differentiable(src_t[i]))
                                  : (src_v[i - n_t] && !tfc_dtype_is_floating(src_v[i - n_t]->dtype));
            if (is_int) g = NULL;
            if (!g && unconnected == TFC_UNCONNECTED_ZERO && (i < n_t ? src_t[i] != NULL : src_v[i - n_t] != NULL)) {
                if (i < n_t) g = zeros_like(ctx, src_t[i], st);
                else {
                    tfc_tensor *v = tfc_variable_read(ctx, src_v[i - n_t], st);
                    g = v ? zeros_like(ctx, v, st) : NULL;
                }
                ok = g != NULL;
            }
            out[i] = g;
        }
    }
    if (ok) {
        /* Each result gets its own reference so that the same tensor returned twice is freed twice safely, and
         * a result this gradient call did not create (an output_gradients tensor passed straight through, a
         * tensor the tape holds) becomes a fresh tensor the caller owns. */
        const tfc_scope *sc = &ctx->scopes[ctx->n_scopes - 1];
        for (int i = 0; i < n_src && ok; i++) {
            if (!out[i]) continue;
            bool fresh = false;
            for (int64_t k = 0; k < sc->n && !fresh; k++) fresh = sc->items[k] == out[i];
            for (int k = 0; k < i && fresh; k++) fresh = out[k] != out[i];
            if (!fresh) {
                tfc_tensor *in1 = out[i];
                out[i] = tfc_emit(ctx, "Identity", &in1, 1, NULL, 0, st);
                ok = out[i] != NULL;
            }
        }
    }
    if (ok) ok = tfc_scope_end_keep(ctx, out, n_src, st); /* on failure it released the results too */
    else tfc_scope_end(ctx);
    if (!ok)
        for (int i = 0; i < n_src; i++) out[i] = NULL;
    goto done_noscope;
oom:
    tfc_scope_end(ctx);
    tfc_status_oom(st, "gradient", 0);
    ok = false;
done_noscope:
    idmap_free(&reach);
    idmap_free(&grads);
    tfc_free(src_keys);
    t->recording = t->persistent ? was_recording : false;
    if (!t->persistent) {
        deactivate(t);
        free_entries(t);
    }
    if (ok) tfc_status_clear(st);
    return ok;
}

bool tfc_tape_gradient(tfc_tape *t, tfc_tensor *target, tfc_tensor *const *src_t, int n_t, tfc_variable *const *src_v,
                       int n_v, tfc_unconnected unconnected, tfc_tensor **grads, tfc_status *st) {
    return tfc_tape_gradient_n(t, &target, 1, NULL, src_t, n_t, src_v, n_v, unconnected, grads, st);
}

/* ---- custom gradients ---- */
bool tfc_custom_gradient(tfc_ctx *ctx, tfc_custom_fwd_fn fn, tfc_custom_grad_fn grad, void *user,
                         tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out, tfc_status *st) {
    if (n_out > TFC_MAX_IO || n_in > TFC_MAX_IO)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "custom_gradient: at most %d inputs and outputs", TFC_MAX_IO);
    ctx->record_paused++;
    bool ok = fn(ctx, user, in, n_in, out, n_out, st);
    ctx->record_paused--;
    if (!ok) return false;
    if (!tfc_tape_should_record(ctx, in, n_in)) return true;
    /* Outputs become fresh tensors so their only recorded producer is this entry. */
    for (int i = 0; i < n_out; i++) {
        tfc_tensor *o = out[i];
        tfc_shape s = o->shape;
        tfc_tensor *c = tfc_tensor_share(o, &s, st);
        if (!c) return false;
        if (ctx->n_scopes == 0) tfc_tensor_unref(o);
        else if (!tfc_scope_track(ctx, c, st)) return false;
        out[i] = c;
    }
    for (int i = 0; i < ctx->n_tapes; i++)
        if (tape_watches_any(ctx->tapes[i], in, n_in) &&
            !record(ctx->tapes[i], NULL, NULL, grad, user, in, n_in, out, n_out, st))
            return false;
    return true;
}
