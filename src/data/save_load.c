/* Dataset.save and Dataset.load (include/tfc/data_save.h) over the snapshot format of snapshot_format.c. */
#include <string.h>
#include <sys/stat.h>

#include "data/snapshot_internal.h"
#include "platform/file_io.h"
#include "platform/files.h"

/* The spec written to the files: ds's, with dtypes it does not know taken from the first element. */
static bool save_spec(tfc_dataset *ds, tfc_tensor *const *first, data_spec *sp, tfc_status *st) {
    if (!data_spec_copy(sp, &ds->spec, st)) return false;
    for (int i = 0; i < sp->n; i++) {
        if (sp->comps[i].dtype != TFC_INVALID_DTYPE) continue;
        if (!first) {
            data_spec_free(sp);
            return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                  "save: the dtype of component %d is not known (give the pipeline an output spec)", i);
        }
        sp->comps[i].dtype = tfc_tensor_dtype(first[i]);
        sp->comps[i].shape.rank = -1;
    }
    return true;
}

static bool write_spec_file(const char *path, const data_spec *sp, tfc_status *st) {
    uint8_t *buf = NULL;
    size_t size = 0;
    char *file = snap_join(path, SNAP_SPEC_FILE);
    bool ok = file ? snap_spec_encode(sp, &buf, &size, st) && tfc_file_write_atomic(file, buf, size, st)
                   : tfc_status_oom(st, "save", strlen(path));
    tfc_free(buf);
    tfc_free(file);
    return ok;
}

bool tfc_dataset_save(tfc_dataset *ds, const char *path, const tfc_save_opts *opts, tfc_status *st) {
    tfc_save_opts o = opts ? *opts : (tfc_save_opts){0};
    const char *comp;
    if (!ds) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "save: NULL dataset");
    if (!path || !*path) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "save: empty path");
    if (!snap_compression(o.compression, false, "save", &comp, st)) return false;
    int n = ds->spec.n;
    tfc_tensor **el = tfc_calloc((size_t)n, sizeof *el);
    tfc_iterator *it = el ? tfc_iterator_new(ds, st) : NULL;
    if (!el) tfc_status_oom(st, "save", (size_t)n * sizeof *el);
    if (!it) {
        tfc_free(el);
        return false;
    }
    data_spec sp = {0};
    snap_writers *w = NULL;
    tfc_ctx *ctx = NULL;
    char run_id[32], *run_dir = NULL;
    bool ok = false, have = tfc_iterator_next(it, el, n, st);
    if (!have && st->code != TFC_OUT_OF_RANGE) goto done;
    tfc_status_clear(st);
    snap_new_run_id(run_id, sizeof run_id);
    data_ictx ictx = {.opts = ds->opts, .deterministic = true, .max_threads = 1};
    if (!save_spec(ds, have ? el : NULL, &sp, st) || !tfc_make_dirs(path, "save", st) ||
        !write_spec_file(path, &sp, st) || !snap_meta_write(path, run_id, "", &sp, 0, false, st))
        goto done;
    run_dir = snap_join(path, run_id);
    if (!run_dir) {
        tfc_status_oom(st, "save", strlen(path));
        goto done;
    }
    if (!(w = snap_writers_new(run_dir, comp, st))) goto done;
    if (o.shard_func && !(ctx = data_ctx_new(&ictx, true, st))) goto done;
    int64_t count = 0;
    while (have) {
        int64_t shard = 0;
        if (!data_spec_check(&sp, el, "save", st) ||
            !snap_shard_index(ctx, o.shard_func, o.user, el, n, &shard, st) ||
            !snap_writers_write(w, shard, el, n, st))
            goto done;
        count++;
        data_unref_n(el, n);
        have = tfc_iterator_next(it, el, n, st);
        if (!have && st->code != TFC_OUT_OF_RANGE) goto done;
    }
    tfc_status_clear(st);
    snap_writers *fin = w;
    w = NULL;
    ok = snap_writers_finish(fin, st) && snap_meta_write(path, run_id, "", &sp, count, true, st);
done:
    snap_writers_abort(w);
    data_unref_n(el, n);
    tfc_free(el);
    tfc_iterator_free(it);
    data_ctx_free(ctx);
    data_spec_free(&sp);
    tfc_free(run_dir);
    return ok;
}

/* The element_spec of a load: given (structure and specs, or dtypes from the metadata) or read from
 * dataset_spec.pb. */
static bool load_spec(const char *path, const tfc_load_opts *o, const snap_meta *m, data_spec *sp, tfc_status *st) {
    if (o->structure) {
        if (!data_spec_init(sp, o->structure, -1, NULL, st)) return false;
        for (int i = 0; i < sp->n; i++) {
            if (o->element_spec) {
                sp->comps[i] = o->element_spec[i];
            } else {
                sp->comps[i].dtype = i < m->n_dtypes ? m->dtypes[i] : TFC_INVALID_DTYPE;
                sp->comps[i].shape.rank = -1;
            }
        }
        return true;
    }
    char *file = snap_join(path, SNAP_SPEC_FILE);
    if (!file) return tfc_status_oom(st, "load", strlen(path));
    struct stat sb;
    bool ok = false;
    if (stat(file, &sb) != 0) {
        tfc_status_set(st, TFC_NOT_FOUND, "tf.data snapshot element_spec file not found: %s.", file);
    } else {
        void *data = NULL;
        size_t size = 0;
        ok = tfc_file_read_all(file, SNAP_MAX_FILE, &data, &size, st) && snap_spec_decode(data, size, file, sp, st);
        tfc_free(data);
    }
    tfc_free(file);
    return ok;
}

tfc_dataset *tfc_dataset_load(const char *path, const tfc_load_opts *opts, tfc_status *st) {
    tfc_load_opts o = opts ? *opts : (tfc_load_opts){0};
    const char *comp;
    if (!path || !*path) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "load: empty path");
        return NULL;
    }
    if (!snap_compression(o.compression, false, "load", &comp, st)) return NULL;
    snap_meta m;
    bool exists = false;
    if (!snap_meta_read(path, &m, &exists, st)) return NULL;
    if (!exists) {
        tfc_status_set(st, TFC_NOT_FOUND, "Could not find metadata file [%s]", path);
        return NULL;
    }
    tfc_dataset *ds = NULL;
    data_spec sp = {0};
    if (!m.finalized) {
        tfc_status_set(st, TFC_FAILED_PRECONDITION,
                       "load: %s/" SNAP_METADATA ": field finalized is false: the save of run %s did not complete",
                       path, m.run_id);
    } else if (load_spec(path, &o, &m, &sp, st) && snap_check_dtypes(&sp, &m, path, st)) {
        ds = snap_reader_dataset(path, &m, &sp, comp, o.reader_func, o.user, "load", st);
    }
    data_spec_free(&sp);
    snap_meta_free(&m);
    return ds;
}
