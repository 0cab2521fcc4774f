/* Dataset.snapshot (include/tfc/data_save.h): the first complete pass writes a run of TensorFlow's snapshot
 * format under <path>/<fingerprint>/ and finalizes it; iterators that find a finalized run read it instead of
 * the input. */
#include <stdio.h>
#include <string.h>

#include "core/farmhash.h"
#include "data/snapshot_internal.h"

typedef struct snapshot_params {
    char *dir;                /* <path>/<fingerprint> */
    char hash[24];
    const char *compression;  /* "" or "GZIP" (static) */
    tfc_data_reader_fn reader_func;
    tfc_data_map_fn shard_func;
    void *user;
    void (*user_free)(void *);
} snapshot_params;

typedef struct snapshot_iter {
    data_iter base;
    bool decided, writing;
    data_iter *in;            /* the input (writing) or the reader (reading) */
    tfc_dataset *reader;      /* reading: the reader dataset, kept alive */
    snap_writers *w;          /* writing, until finished or failed */
    tfc_ctx *ctx;
    data_spec spec;           /* writing: the spec written (dtypes known) */
    char run_id[32], *run_dir;
    int64_t count;
} snapshot_iter;

static bool decide(snapshot_iter *it, tfc_status *st) {
    tfc_dataset *ds = it->base.ds;
    snapshot_params *p = ds->p;
    snap_meta m;
    bool exists = false;
    if (!snap_meta_read(p->dir, &m, &exists, st)) return false;
    if (exists && m.finalized) {
        data_spec sp = {0};
        bool ok = data_spec_copy(&sp, &ds->spec, st);
        for (int i = 0; ok && i < sp.n && i < m.n_dtypes; i++)
            if (sp.comps[i].dtype == TFC_INVALID_DTYPE) sp.comps[i].dtype = m.dtypes[i];
        ok = ok && snap_check_dtypes(&sp, &m, p->dir, st);
        if (ok) it->reader = snap_reader_dataset(p->dir, &m, &sp, p->compression, p->reader_func, p->user,
                                                 "snapshot", st);
        data_spec_free(&sp);
        snap_meta_free(&m);
        if (!it->reader) return false;
        it->in = data_iter_make(it->reader, it->base.ictx, st);
        return it->in != NULL;
    }
    snap_meta_free(&m);
    it->in = data_iter_make(ds->inputs[0], it->base.ictx, st);
    if (!it->in) return false;
    it->writing = true;
    snap_new_run_id(it->run_id, sizeof it->run_id);
    it->run_dir = snap_join(p->dir, it->run_id);
    if (!it->run_dir) return tfc_status_oom(st, "snapshot", strlen(p->dir));
    if (p->shard_func && !(it->ctx = data_ctx_new(it->base.ictx, true, st))) return false;
    return true;
}

/* Stops writing this run (its files are removed; the metadata stays unfinalized); the elements still pass. */
static void stop_writing(snapshot_iter *it) {
    snap_writers_abort(it->w);
    it->w = NULL;
    it->writing = false;
}

static bool write_element(snapshot_iter *it, tfc_tensor *const *out, tfc_status *st) {
    snapshot_params *p = it->base.ds->p;
    int n = it->base.ds->spec.n;
    if (!it->w) {
        /* Another iterator may have finalized a run meanwhile: keep it readable, and only pass elements. */
        snap_meta m;
        bool exists = false, done = snap_meta_read(p->dir, &m, &exists, st) && exists && m.finalized;
        snap_meta_free(&m);
        tfc_status_clear(st);
        if (done) {
            it->writing = false;
            return true;
        }
        if (!data_spec_copy(&it->spec, &it->base.ds->spec, st)) return false;
        for (int i = 0; i < n; i++)
            if (it->spec.comps[i].dtype == TFC_INVALID_DTYPE) {
                it->spec.comps[i].dtype = tfc_tensor_dtype(out[i]);
                it->spec.comps[i].shape.rank = -1;
            }
        if (!snap_meta_write(p->dir, it->run_id, p->hash, &it->spec, 0, false, st)) return false;
        if (!(it->w = snap_writers_new(it->run_dir, p->compression, st))) return false;
    }
    int64_t shard = 0;
    if (!snap_shard_index(it->ctx, p->shard_func, p->user, out, n, &shard, st) ||
        !snap_writers_write(it->w, shard, out, n, st))
        return false;
    it->count++;
    return true;
}

static bool finish(snapshot_iter *it, tfc_status *st) {
    snapshot_params *p = it->base.ds->p;
    it->writing = false;
    if (!it->w) return true; /* nothing was produced: nothing to keep */
    snap_writers *w = it->w;
    it->w = NULL;
    return snap_writers_finish(w, st) && snap_meta_write(p->dir, it->run_id, p->hash, &it->spec, it->count, true, st);
}

static bool snapshot_next(data_iter *it_, tfc_tensor **out, bool *end, tfc_status *st) {
    snapshot_iter *it = (snapshot_iter *)it_;
    if (!it->decided) {
        it->decided = true;
        if (!decide(it, st)) {
            stop_writing(it);
            data_iter_free(it->in);
            it->in = NULL;
            return false;
        }
    }
    if (!it->in) {
        *end = true;
        return true;
    }
    if (!data_iter_next(it->in, out, end, st)) return false; /* an element's error passes, unwritten */
    if (!it->writing) return true;
    if (*end) return finish(it, st);
    if (!write_element(it, out, st)) {
        stop_writing(it);
        data_unref_n(out, it_->ds->spec.n);
        return false;
    }
    return true;
}

static void snapshot_iter_free(data_iter *it_) {
    snapshot_iter *it = (snapshot_iter *)it_;
    snap_writers_abort(it->w);
    data_iter_free(it->in);
    tfc_dataset_unref(it->reader);
    data_ctx_free(it->ctx);
    data_spec_free(&it->spec);
    tfc_free(it->run_dir);
}

static const data_iter_vt snapshot_vt = {snapshot_next, snapshot_iter_free};

static data_iter *snapshot_make_iter(tfc_dataset *ds, const data_ictx *ictx, tfc_status *st) {
    return data_iter_alloc(sizeof(snapshot_iter), &snapshot_vt, ds, ictx, st);
}

static void snapshot_free(tfc_dataset *ds) {
    snapshot_params *p = ds->p;
    tfc_free(p->dir);
    if (p->user_free) p->user_free(p->user);
}

static void snapshot_describe(const tfc_dataset *ds, data_strbuf *b) {
    const snapshot_params *p = ds->p;
    data_strbuf_printf(b, "path=%s, compression=\"%s\"", p->dir, p->compression);
}

static const data_kind snapshot_kind = {"SnapshotDatasetV2", snapshot_make_iter, data_card_input, snapshot_free,
                                        snapshot_describe};

/* Fingerprint64 of the input's graph text without addresses ("0x..." tokens), its structure and dtypes. */
static uint64_t fingerprint(const tfc_dataset *in, tfc_status *st, bool *ok) {
    size_t size = (size_t)1 << 20;
    char *g = tfc_malloc(size);
    *ok = g != NULL;
    if (!g) {
        tfc_status_oom(st, "snapshot", size);
        return 0;
    }
    tfc_dataset_graph_str(in, g, size);
    size_t k = 0;
    for (size_t i = 0; g[i]; i++) {
        if (g[i] == '0' && g[i + 1] == 'x') {
            i += 2;
            while ((g[i] >= '0' && g[i] <= '9') || (g[i] >= 'a' && g[i] <= 'f') || (g[i] >= 'A' && g[i] <= 'F')) i++;
            g[k++] = '@';
            i--;
            continue;
        }
        g[k++] = g[i];
    }
    g[k] = 0;
    for (int i = 0; i < in->spec.n && k + 8 < size; i++)
        k += (size_t)snprintf(g + k, size - k, " %d", (int)in->spec.comps[i].dtype);
    uint64_t h = tfc_fingerprint64(g, k < size ? k : size - 1);
    tfc_free(g);
    return h;
}

tfc_dataset *tfc_dataset_snapshot(tfc_dataset *in, const char *path, const tfc_snapshot_opts *opts, tfc_status *st) {
    tfc_snapshot_opts o = opts ? *opts : (tfc_snapshot_opts){0};
    const char *comp;
    if (!data_check_input(in, st) || !path || !*path || !snap_compression(o.compression, true, "snapshot", &comp, st)) {
        if (in && (!path || !*path)) tfc_status_set(st, TFC_INVALID_ARGUMENT, "snapshot: empty path");
        tfc_dataset_unref(in);
        if (o.user_free) o.user_free(o.user);
        return NULL;
    }
    bool ok;
    uint64_t h = fingerprint(in, st, &ok);
    tfc_dataset *ds = ok ? data_ds_new(&snapshot_kind, sizeof(snapshot_params), &in, 1, st) : NULL;
    if (!ds) {
        if (!ok) tfc_dataset_unref(in);
        if (o.user_free) o.user_free(o.user);
        return NULL;
    }
    snapshot_params *p = ds->p;
    p->compression = comp;
    p->reader_func = o.reader_func;
    p->shard_func = o.shard_func;
    p->user = o.user;
    p->user_free = o.user_free;
    snprintf(p->hash, sizeof p->hash, "%llu", (unsigned long long)h);
    p->dir = snap_join(path, p->hash);
    if (!p->dir) {
        tfc_status_oom(st, "snapshot", strlen(path));
        return data_ds_fail(ds);
    }
    if (!data_spec_copy(&ds->spec, &in->spec, st)) return data_ds_fail(ds);
    return ds;
}
