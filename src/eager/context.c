/* Eager context and scopes. */
#include <string.h>

#include "eager/context_internal.h"
#include "kernels/cpu/kernels.h"
#include "eager/kernel_cache.h"

tfc_ctx *tfc_ctx_new_with_config(const tfc_ctx_opts *opts, const tfc_runtime_config *config, tfc_status *st) {
    tfc_cpu_kernels_init();
    tfc_ctx *ctx = tfc_calloc(1, sizeof *ctx);
    if (!ctx) {
        tfc_status_oom(st, "context", sizeof *ctx);
        return NULL;
    }
    ctx->pool = tfc_threadpool_new(opts ? opts->intra_op_threads : 0);
    if (!ctx->pool) {
        tfc_free(ctx);
        tfc_status_oom(st, "context thread pool", 0);
        return NULL;
    }
    if (opts && opts->has_seed) tfc_ctx_set_seed(ctx, opts->seed);
    tfc_ctx_config_init(ctx, config);
    tfc_status_clear(st);
    return ctx;
}

tfc_ctx *tfc_ctx_new(const tfc_ctx_opts *opts, tfc_status *st) { return tfc_ctx_new_with_config(opts, NULL, st); }

void tfc_ctx_free(tfc_ctx *ctx) {
    if (!ctx) return;
    while (ctx->n_scopes > 0) tfc_scope_end(ctx);
    if (ctx->flib_free) ctx->flib_free(ctx->flib);
    tfc_kernel_cache_free(ctx);
    tfc_free(ctx->scopes);
    tfc_threadpool_free(ctx->pool);
    tfc_free(ctx);
}

tfc_threadpool *tfc_ctx_pool(tfc_ctx *ctx) { return ctx->pool; }

void tfc_ctx_set_seed(tfc_ctx *ctx, int64_t seed) {
    ctx->global_seed = seed;
    ctx->has_seed = true;
    ctx->op_seed_counter = 0;
    tfc_kernel_cache_clear(ctx); /* as TensorFlow clears its kernel cache: seeded streams restart */
}

tfc_ctx_seed_state tfc_ctx_seed_save(const tfc_ctx *ctx) {
    return (tfc_ctx_seed_state){.has_seed = ctx->has_seed, .seed = ctx->global_seed, .op_seed_counter = ctx->op_seed_counter};
}

/* (the kernel cache stays: streams already seeded continue, as fit's per-epoch reseeding has them) */
void tfc_ctx_seed_restore(tfc_ctx *ctx, const tfc_ctx_seed_state *s) {
    ctx->has_seed = s->has_seed;
    ctx->global_seed = s->seed;
    ctx->op_seed_counter = s->op_seed_counter;
}

bool tfc_scope_begin(tfc_ctx *ctx, tfc_status *st) {
    if (ctx->n_scopes == ctx->cap_scopes) {
        int cap = ctx->cap_scopes ? ctx->cap_scopes * 2 : 8;
        tfc_scope *s = tfc_realloc(ctx->scopes, (size_t)cap * sizeof *s);
        if (!s) return tfc_status_oom(st, "scope", (size_t)cap * sizeof *s);
        ctx->scopes = s;
        ctx->cap_scopes = cap;
    }
    memset(&ctx->scopes[ctx->n_scopes++], 0, sizeof(tfc_scope));
    return true;
}

static bool scope_reserve(tfc_scope *s, int64_t extra, tfc_status *st) {
    if (s->n + extra <= s->cap) return true;
    int64_t cap = s->cap ? s->cap : 64;
    while (cap < s->n + extra) cap *= 2;
    tfc_tensor **items = tfc_realloc(s->items, (size_t)cap * sizeof *items);
    if (!items) return tfc_status_oom(st, "scope", (size_t)cap * sizeof *items);
    s->items = items;
    s->cap = cap;
    return true;
}

bool tfc_scope_track(tfc_ctx *ctx, tfc_tensor *t, tfc_status *st) {
    if (ctx->n_scopes == 0) return true;
    tfc_scope *s = &ctx->scopes[ctx->n_scopes - 1];
    if (!scope_reserve(s, 1, st)) {
        tfc_tensor_unref(t);
        return false;
    }
    s->items[s->n++] = t;
    return true;
}

bool tfc_scope_end_keep(tfc_ctx *ctx, tfc_tensor *const *keep, int n, tfc_status *st) {
    if (ctx->n_scopes == 0) return true;
    /* Room in the enclosing scope first, so that moving the kept tensors cannot fail half-way. */
    bool ok = ctx->n_scopes < 2 || n <= 0 || scope_reserve(&ctx->scopes[ctx->n_scopes - 2], n, st);
    tfc_scope s = ctx->scopes[--ctx->n_scopes];
    for (int64_t i = 0; i < s.n; i++) {
        bool kept = false;
        for (int k = 0; k < n && ok && !kept; k++) kept = keep[k] == s.items[i];
        if (kept) tfc_scope_track(ctx, s.items[i], NULL); /* reserved: cannot fail */
        else tfc_tensor_unref(s.items[i]);
    }
    tfc_free(s.items);
    return ok;
}

int tfc_scope_depth(const tfc_ctx *ctx) { return ctx->n_scopes; }

void tfc_scope_end(tfc_ctx *ctx) { tfc_scope_end_keep(ctx, NULL, 0, NULL); }

tfc_tensor *tfc_keep(tfc_ctx *ctx, tfc_tensor *t) {
    if (!t) return NULL;
    for (int k = ctx->n_scopes - 1; k >= 0; k--) {
        tfc_scope *s = &ctx->scopes[k];
        for (int64_t i = s->n - 1; i >= 0; i--)
            if (s->items[i] == t) {
                s->items[i] = s->items[--s->n];
                return t; /* the scope's reference is now the caller's */
            }
    }
    return t;
}
