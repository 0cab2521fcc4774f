/* Iterator checkpoints by replay (include/tfc/data_checkpoint.h): the record an iterator keeps (counts, a
 * fingerprint of its elements, the shuffle epochs it drew), its serialised form, and restore = rebuild + pull
 * the recorded number of elements again + check the fingerprint.
 *
 * State layout (little-endian as written): "TFCITER1", u32 version, u32 length + pipeline signature (the node
 * kinds in depth-first order, then " -> " and the element structure), i64 elements, i64 element errors, u8 ended,
 * u64 fingerprint, u32 shuffles + per shuffle (u32 node, i64 seed, i64 epoch counter), u32 log entries + per
 * entry (u32 node, i64 epoch), u32 masked CRC-32C of everything before it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/iterator_state.h"
#include "tfc/data_checkpoint.h"

#define STATE_MAGIC "TFCITER1"
#define STATE_VERSION 1u
#define MAX_LOG (1 << 24)

typedef struct log_ent {
    uint32_t node;
    int64_t epoch;
} log_ent;

typedef struct log_arr {
    log_ent *e;
    int n, cap;
} log_arr;

struct data_replay {
    tfc_dataset **nodes;      /* the iterated pipeline, depth-first, each node once (borrowed) */
    int n_nodes;
    char *signature;
    bool deterministic;       /* the pipeline options' deterministic */
    pthread_mutex_t mu;       /* guards log, pending, taken, taint (shuffles are made on pipeline threads) */
    log_arr log;              /* shuffle epochs drawn by this iterator */
    log_arr pending;          /* restore: epochs to hand out again, per node in order */
    bool *taken;
    char taint[320];          /* first reason the state cannot be captured; "" when none */
    int64_t n_next, n_err;    /* elements and element errors produced */
    bool ended;
    uint64_t hash;
};

/* ---- the record ---------------------------------------------------------------------------------------- */
static bool add_node(data_replay *r, tfc_dataset *ds, int *cap, tfc_status *st) {
    for (int i = 0; i < r->n_nodes; i++)
        if (r->nodes[i] == ds) return true;
    if (r->n_nodes == *cap) {
        int nc = *cap ? *cap * 2 : 16;
        tfc_dataset **a = tfc_realloc(r->nodes, (size_t)nc * sizeof *a);
        if (!a) return tfc_status_oom(st, "iterator record", (size_t)nc * sizeof *a);
        r->nodes = a;
        *cap = nc;
    }
    r->nodes[r->n_nodes++] = ds;
    for (int i = 0; i < ds->n_inputs; i++)
        if (!add_node(r, ds->inputs[i], cap, st)) return false;
    return true;
}

data_replay *data_replay_new(tfc_dataset *root, tfc_status *st) {
    data_replay *r = tfc_calloc(1, sizeof *r);
    if (!r) {
        tfc_status_oom(st, "iterator record", sizeof *r);
        return NULL;
    }
    pthread_mutex_init(&r->mu, NULL);
    r->deterministic = TFC_FLAG(root->opts.deterministic, true);
    int cap = 0;
    if (!add_node(r, root, &cap, st)) {
        data_replay_free(r);
        return NULL;
    }
    size_t len = strlen(root->spec.structure) + 8;
    for (int i = 0; i < r->n_nodes; i++) len += strlen(r->nodes[i]->kind->name) + 1;
    if (!(r->signature = tfc_malloc(len))) {
        tfc_status_oom(st, "iterator record", len);
        data_replay_free(r);
        return NULL;
    }
    size_t o = 0;
    for (int i = 0; i < r->n_nodes; i++)
        o += (size_t)snprintf(r->signature + o, len - o, "%s%s", i ? "," : "", r->nodes[i]->kind->name);
    snprintf(r->signature + o, len - o, " -> %s", root->spec.structure);
    return r;
}

void data_replay_free(data_replay *r) {
    if (!r) return;
    pthread_mutex_destroy(&r->mu);
    tfc_free(r->nodes);
    tfc_free(r->signature);
    tfc_free(r->log.e);
    tfc_free(r->pending.e);
    tfc_free(r->taken);
    tfc_free(r);
}

static int node_index(const data_replay *r, const tfc_dataset *ds) {
    for (int i = 0; i < r->n_nodes; i++)
        if (r->nodes[i] == ds) return i;
    return -1;
}

/* Why ds's state cannot be captured (a static string or buf), or NULL. */
static const char *refusal(const data_replay *r, const tfc_dataset *ds, char *buf, size_t size) {
    const char *name = ds->kind->name;
    if (!strcmp(name, "GeneratorDataset")) return "from_generator (GeneratorDataset): a generator's position is opaque";
    bool parallel = !strncmp(name, "Parallel", 8), directed = !strcmp(name, "DirectedInterleaveDataset");
    if (!parallel && !directed) return NULL;
    char d[1024];
    data_strbuf b = {d, sizeof d, 0};
    d[0] = 0;
    if (ds->kind->describe) ds->kind->describe(ds, &b);
    if (parallel) {
        const char *p = strstr(d, "deterministic=");
        int v = p ? atoi(p + 14) : 1;
        if (v == TFC_NO || (v == TFC_DEFAULT && !r->deterministic)) {
            snprintf(buf, size, "%s with deterministic=false: its output order depends on thread timing", name);
            return buf;
        }
        return NULL;
    }
    if (strstr(d, " w0=") && !strstr(d, "seed=")) return "sample_from_datasets without a seed";
    return NULL;
}

static void taint(data_replay *r, const char *why) {
    pthread_mutex_lock(&r->mu);
    if (!r->taint[0]) snprintf(r->taint, sizeof r->taint, "%s", why);
    pthread_mutex_unlock(&r->mu);
}

void data_replay_made(data_replay *r, tfc_dataset *ds) {
    if (!r) return;
    char buf[256];
    const char *why = refusal(r, ds, buf, sizeof buf);
    if (why) taint(r, why);
}

static void mix(uint64_t *h, const void *p, size_t n) {
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++) *h = (*h ^ b[i]) * 1099511628211ull;
}

void data_replay_note(data_replay *r, tfc_tensor *const *out, int n, tfc_code code, bool end) {
    if (!r) return;
    if (end) {
        r->ended = true;
        return;
    }
    r->n_next++;
    int32_t c = (int32_t)code;
    mix(&r->hash, &c, sizeof c);
    if (code != TFC_OK) {
        r->n_err++;
        return;
    }
    for (int i = 0; i < n; i++) {
        const tfc_tensor *t = out[i];
        int32_t dt = (int32_t)tfc_tensor_dtype(t), rank = tfc_tensor_rank(t);
        mix(&r->hash, &dt, sizeof dt);
        mix(&r->hash, &rank, sizeof rank);
        for (int d = 0; d < rank; d++) {
            int64_t v = tfc_tensor_dim(t, d);
            mix(&r->hash, &v, sizeof v);
        }
        size_t len = 0;
        const void *p = NULL;
        if (tfc_tensor_dtype(t) == TFC_STRING) {
            if (tfc_tensor_num_elements(t) > 0) p = tfc_tensor_string(t, 0, &len);
        } else {
            p = tfc_tensor_data(t);
            len = tfc_tensor_byte_size(t);
        }
        if (p) mix(&r->hash, p, len < 64 ? len : 64);
    }
}

static bool log_push(log_arr *a, uint32_t node, int64_t epoch) {
    if (a->n == a->cap) {
        int nc = a->cap ? a->cap * 2 : 16;
        if (nc > MAX_LOG) return false;
        log_ent *e = tfc_realloc(a->e, (size_t)nc * sizeof *e);
        if (!e) return false;
        a->e = e;
        a->cap = nc;
    }
    a->e[a->n++] = (log_ent){node, epoch};
    return true;
}

bool data_replay_shuffle_epoch(data_replay *r, tfc_dataset *ds, bool seeded, int64_t *epoch) {
    if (!r) return false;
    int idx = node_index(r, ds);
    if (idx < 0) {
        if (!seeded) taint(r, "a shuffle without a seed made by an interleave / flat_map function");
        return false;
    }
    bool found = false;
    pthread_mutex_lock(&r->mu);
    for (int i = 0; i < r->pending.n && !found; i++)
        if (!r->taken[i] && r->pending.e[i].node == (uint32_t)idx) {
            r->taken[i] = found = true;
            *epoch = r->pending.e[i].epoch;
            if (!log_push(&r->log, (uint32_t)idx, *epoch) && !r->taint[0])
                snprintf(r->taint, sizeof r->taint, "out of memory for the shuffle log");
        }
    pthread_mutex_unlock(&r->mu);
    return found;
}

void data_replay_shuffle_log(data_replay *r, tfc_dataset *ds, int64_t epoch) {
    if (!r) return;
    int idx = node_index(r, ds);
    if (idx < 0) return;
    pthread_mutex_lock(&r->mu);
    if (!log_push(&r->log, (uint32_t)idx, epoch) && !r->taint[0])
        snprintf(r->taint, sizeof r->taint, "out of memory for the shuffle log");
    pthread_mutex_unlock(&r->mu);
}

/* FAILED_PRECONDITION when the pipeline (or what this iterator made) cannot be captured. */
static bool check_capturable(data_replay *r, const char *what, tfc_status *st) {
    char buf[256];
    for (int i = 0; i < r->n_nodes; i++) {
        const char *why = refusal(r, r->nodes[i], buf, sizeof buf);
        if (why) taint(r, why);
    }
    pthread_mutex_lock(&r->mu);
    bool ok = !r->taint[0];
    if (!ok)
        tfc_status_set(st, TFC_FAILED_PRECONDITION,
                       "%s: the iterator's state cannot be checkpointed: the pipeline has %s (pipeline: %s)", what,
                       r->taint, r->signature);
    pthread_mutex_unlock(&r->mu);
    return ok;
}

/* ---- save ------------------------------------------------------------------------------------------------ */
static bool put_u32(data_bytes *b, uint32_t v, tfc_status *st) { return data_bytes_put(b, &v, sizeof v, st); }
static bool put_i64(data_bytes *b, int64_t v, tfc_status *st) { return data_bytes_put(b, &v, sizeof v, st); }

tfc_tensor *tfc_iterator_save_state(tfc_iterator *it, tfc_status *st) {
    if (!it) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "iterator save: NULL iterator");
        return NULL;
    }
    data_replay *r = data_iterator_replay(it);
    if (!check_capturable(r, "iterator save", st)) return NULL;
    data_bytes b = {0};
    uint32_t siglen = (uint32_t)strlen(r->signature), n_shuf = 0;
    uint8_t ended = r->ended;
    for (int i = 0; i < r->n_nodes; i++) {
        int64_t s, c;
        n_shuf += data_shuffle_get(r->nodes[i], &s, &c);
    }
    bool ok = data_bytes_put(&b, STATE_MAGIC, 8, st) && put_u32(&b, STATE_VERSION, st) && put_u32(&b, siglen, st) &&
              data_bytes_put(&b, r->signature, siglen, st) && put_i64(&b, r->n_next, st) && put_i64(&b, r->n_err, st) &&
              data_bytes_put(&b, &ended, 1, st) && data_bytes_put(&b, &r->hash, sizeof r->hash, st) &&
              put_u32(&b, n_shuf, st);
    for (int i = 0; ok && i < r->n_nodes; i++) {
        int64_t s, c;
        if (data_shuffle_get(r->nodes[i], &s, &c))
            ok = put_u32(&b, (uint32_t)i, st) && put_i64(&b, s, st) && put_i64(&b, c, st);
    }
    pthread_mutex_lock(&r->mu);
    ok = ok && put_u32(&b, (uint32_t)r->log.n, st);
    for (int i = 0; ok && i < r->log.n; i++) ok = put_u32(&b, r->log.e[i].node, st) && put_i64(&b, r->log.e[i].epoch, st);
    pthread_mutex_unlock(&r->mu);
    ok = ok && put_u32(&b, tfc_crc32c_mask(tfc_crc32c(b.p, b.len)), st);
    tfc_tensor *t = NULL;
    if (ok) {
        const char *s = (const char *)b.p;
        t = tfc_tensor_from_strings(&s, &b.len, NULL, 0, st);
    }
    tfc_free(b.p);
    return t;
}

/* ---- restore --------------------------------------------------------------------------------------------- */
typedef struct rd {
    const uint8_t *p;
    size_t n, off;
} rd;

static bool get(rd *r, void *dst, size_t n) {
    if (n > r->n - r->off) return false;
    memcpy(dst, r->p + r->off, n);
    r->off += n;
    return true;
}

typedef struct saved {
    int64_t n_next, n_err, n_shuf_nodes;
    uint8_t ended;
    uint64_t hash;
    uint32_t *shuf_node;
    int64_t *shuf_seed, *shuf_counter;
    uint32_t n_shuf;
    log_arr log;
} saved;

static void saved_free(saved *s) {
    tfc_free(s->shuf_node);
    tfc_free(s->shuf_seed);
    tfc_free(s->shuf_counter);
    tfc_free(s->log.e);
}

static bool bad_state(const char *why, tfc_status *st) {
    return tfc_status_set(st, TFC_INVALID_ARGUMENT, "iterator restore: not a tfc iterator state (%s)", why);
}

/* Parses and checks a state against r's pipeline. */
static bool parse_state(const data_replay *r, const uint8_t *p, size_t n, saved *s, tfc_status *st) {
    if (n < 8 + 4 + 4 || memcmp(p, STATE_MAGIC, 8)) return bad_state("bad magic", st);
    uint32_t crc;
    memcpy(&crc, p + n - 4, 4);
    if (tfc_crc32c_unmask(crc) != tfc_crc32c(p, n - 4)) return bad_state("checksum mismatch", st);
    rd in = {p, n - 4, 8};
    uint32_t version = 0, siglen = 0;
    if (!get(&in, &version, 4) || version != STATE_VERSION) return bad_state("unknown version", st);
    if (!get(&in, &siglen, 4) || siglen > in.n - in.off) return bad_state("truncated", st);
    const char *sig = (const char *)in.p + in.off;
    in.off += siglen;
    if (siglen != strlen(r->signature) || memcmp(sig, r->signature, siglen))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "iterator restore: the state is of another pipeline (saved: %.*s; this iterator: %s)",
                              (int)(siglen < 400 ? siglen : 400), sig, r->signature);
    if (!get(&in, &s->n_next, 8) || !get(&in, &s->n_err, 8) || !get(&in, &s->ended, 1) || !get(&in, &s->hash, 8) ||
        !get(&in, &s->n_shuf, 4))
        return bad_state("truncated", st);
    if (s->n_next < 0 || s->n_err < 0 || s->n_err > s->n_next || s->ended > 1 || s->n_shuf > (uint32_t)r->n_nodes)
        return bad_state("counts out of range", st);
    size_t ns = s->n_shuf ? s->n_shuf : 1;
    s->shuf_node = tfc_calloc(ns, sizeof *s->shuf_node);
    s->shuf_seed = tfc_calloc(ns, sizeof *s->shuf_seed);
    s->shuf_counter = tfc_calloc(ns, sizeof *s->shuf_counter);
    if (!s->shuf_node || !s->shuf_seed || !s->shuf_counter) return tfc_status_oom(st, "iterator restore", ns * 8);
    for (uint32_t i = 0; i < s->n_shuf; i++) {
        int64_t seed, counter;
        if (!get(&in, &s->shuf_node[i], 4) || !get(&in, &s->shuf_seed[i], 8) || !get(&in, &s->shuf_counter[i], 8))
            return bad_state("truncated", st);
        if (s->shuf_node[i] >= (uint32_t)r->n_nodes || !data_shuffle_get(r->nodes[s->shuf_node[i]], &seed, &counter) ||
            s->shuf_counter[i] < 0)
            return bad_state("a shuffle entry that names no shuffle of the pipeline", st);
    }
    uint32_t n_log = 0;
    if (!get(&in, &n_log, 4) || n_log > MAX_LOG || (size_t)n_log * 12 > in.n - in.off) return bad_state("truncated", st);
    for (uint32_t i = 0; i < n_log; i++) {
        log_ent e;
        if (!get(&in, &e.node, 4) || !get(&in, &e.epoch, 8)) return bad_state("truncated", st);
        int64_t seed, counter;
        if (e.node >= (uint32_t)r->n_nodes || !data_shuffle_get(r->nodes[e.node], &seed, &counter) || e.epoch < 0)
            return bad_state("a log entry that names no shuffle of the pipeline", st);
        if (!log_push(&s->log, e.node, e.epoch)) return tfc_status_oom(st, "iterator restore", (size_t)n_log * 12);
    }
    if (in.off != in.n) return bad_state("trailing bytes", st);
    return true;
}

/* Starts the record over (counts, fingerprint, log), with `pending` epochs to hand out again. */
static void record_restart(data_replay *r, log_arr *pending, bool *taken) {
    pthread_mutex_lock(&r->mu);
    tfc_free(r->pending.e);
    tfc_free(r->taken);
    r->pending = pending ? *pending : (log_arr){0};
    r->taken = taken;
    r->log.n = 0;
    r->taint[0] = 0;
    pthread_mutex_unlock(&r->mu);
    r->n_next = r->n_err = 0;
    r->ended = false;
    r->hash = 0;
}

bool tfc_iterator_restore_state(tfc_iterator *it, const tfc_tensor *state, tfc_status *st) {
    if (!it || !state) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "iterator restore: NULL iterator or state");
    if (tfc_tensor_dtype(state) != TFC_STRING || tfc_tensor_num_elements(state) != 1)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "iterator restore: the state must be a string scalar, got %s with %lld elements",
                              tfc_dtype_name(tfc_tensor_dtype(state)), (long long)tfc_tensor_num_elements(state));
    data_replay *r = data_iterator_replay(it);
    size_t len = 0;
    const uint8_t *p = (const uint8_t *)tfc_tensor_string(state, 0, &len);
    saved s = {0};
    if (!p || !parse_state(r, p, len, &s, st) || !check_capturable(r, "iterator restore", st)) {
        saved_free(&s);
        return false;
    }
    for (uint32_t i = 0; i < s.n_shuf; i++) data_shuffle_set(r->nodes[s.shuf_node[i]], s.shuf_seed[i], s.shuf_counter[i]);
    bool *taken = tfc_calloc((size_t)s.log.n + 1, sizeof *taken);
    if (!taken) {
        saved_free(&s);
        return tfc_status_oom(st, "iterator restore", (size_t)s.log.n);
    }
    record_restart(r, &s.log, taken);
    s.log = (log_arr){0};
    if (s.ended) { /* nothing is left to produce: only the shuffle epochs matter, no replay needed */
        data_iterator_end(it);
        r->n_next = s.n_next;
        r->n_err = s.n_err;
        r->hash = s.hash;
        r->ended = true;
        saved_free(&s);
        tfc_status_clear(st);
        return true;
    }
    int n = tfc_dataset_num_components(tfc_iterator_dataset(it));
    tfc_tensor **out = tfc_calloc((size_t)(n ? n : 1), sizeof *out);
    bool ok = out != NULL;
    if (!ok) tfc_status_oom(st, "iterator restore", (size_t)n * sizeof *out);
    ok = ok && data_iterator_reset(it, st);
    tfc_status est = TFC_STATUS_INIT;
    for (int64_t k = 0; ok && k < s.n_next; k++) {
        if (tfc_iterator_next(it, out, n, &est)) {
            data_unref_n(out, n);
        } else if (est.code == TFC_OUT_OF_RANGE) {
            ok = tfc_status_set(st, TFC_FAILED_PRECONDITION,
                                "iterator restore: the pipeline ended after %lld elements, before the saved position "
                                "%lld (changed input files?)",
                                (long long)k, (long long)s.n_next);
        }
    }
    if (ok && (r->hash != s.hash || r->n_err != s.n_err))
        ok = tfc_status_set(st, TFC_FAILED_PRECONDITION,
                            "iterator restore: replaying %lld elements gave other elements than the saved iterator "
                            "produced (%lld vs %lld element errors): the pipeline's functions are not deterministic or "
                            "its input changed",
                            (long long)s.n_next, (long long)r->n_err, (long long)s.n_err);
    if (ok) { /* a node made during the replay (inside an interleave function) may not be capturable */
        char why[sizeof r->taint];
        pthread_mutex_lock(&r->mu);
        memcpy(why, r->taint, sizeof why);
        pthread_mutex_unlock(&r->mu);
        if (why[0])
            ok = tfc_status_set(st, TFC_FAILED_PRECONDITION,
                                "iterator restore: the iterator's state cannot be checkpointed: the pipeline has %s "
                                "(pipeline: %s)",
                                why, r->signature);
    }
    if (!ok) {
        tfc_status keep = *st;
        record_restart(r, NULL, NULL);
        tfc_status ignore = TFC_STATUS_INIT;
        data_iterator_reset(it, &ignore);
        *st = keep;
    }
    tfc_free(out);
    saved_free(&s);
    if (ok) tfc_status_clear(st);
    return ok;
}

/* ---- tf.train.Checkpoint(iterator=it) ---------------------------------------------------------------------- */
static tfc_tensor *trackable_save(void *user, tfc_status *st) { return tfc_iterator_save_state(user, st); }
static bool trackable_restore(void *user, const tfc_tensor *value, tfc_status *st) {
    return tfc_iterator_restore_state(user, value, st);
}

tfc_trackable *tfc_iterator_trackable(tfc_iterator *it, tfc_status *st) {
    if (!it) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "iterator trackable: NULL iterator");
        return NULL;
    }
    tfc_trackable *t = tfc_trackable_new(st);
    if (t && !tfc_trackable_track_attribute(t, "ITERATOR", "_STATE", trackable_save, trackable_restore, it, st)) {
        tfc_trackable_unref(t);
        return NULL;
    }
    return t;
}
