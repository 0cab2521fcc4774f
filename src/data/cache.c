/* cache: in memory or in a file.
 *
 * The first epoch passes the input through and records it; only an epoch that reaches its end publishes the
 * record (memory: a shared element list; file: a temporary file renamed to <filename>.tfcache). Iterators that
 * start after that replay it. The file is a sequence of TFRecords: a header record ("tfc-cache 1" and the
 * element structure) and one record per element (data_encode_element), so corruption is caught by the CRCs.
 * Elements whose production failed pass their error through and are not recorded (as TensorFlow). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "data/data_internal.h"

#define CACHE_MAGIC "tfc-cache 1 "

typedef struct mem_cache {
    pthread_mutex_t mu;
    bool complete;
    tfc_tensor **elems;       /* count elements of n components, immutable once complete */
    int64_t count;
} mem_cache;

typedef struct cache_params {
    char *filename;           /* NULL: memory */
    char *final_path;         /* <filename>.tfcache */
    mem_cache *mc;
} cache_params;

enum { MODE_UNDECIDED, MODE_WRITE, MODE_READ_MEM, MODE_READ_FILE, MODE_PASS };

typedef struct cache_iter {
    data_iter base;
    int mode;
    data_iter *in;
    /* memory writing: the elements seen this epoch */
    tfc_tensor **acc;
    int64_t acc_n, acc_cap;
    /* memory reading */
    int64_t pos;
    /* file writing */
    FILE *f;
    char *tmp_path;
    data_bytes enc, frame;
    /* file reading */
    data_record_reader rr;
    bool rr_open;
} cache_iter;

static bool file_exists(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

static bool io_error(tfc_status *st, const char *path, const char *what) {
    int e = errno;
    return tfc_status_set(st, e == ENOENT ? TFC_NOT_FOUND : e == EACCES ? TFC_PERMISSION_DENIED : TFC_UNKNOWN,
                          "cache %s: %s: %s", path, what, strerror(e));
}

static bool write_record(cache_iter *it, const void *data, size_t n, tfc_status *st) {
    it->frame.len = 0;
    if (!data_record_frame(&it->frame, data, n, st)) return false;
    if (fwrite(it->frame.p, 1, it->frame.len, it->f) != it->frame.len) return io_error(st, it->tmp_path, "write");
    return true;
}

static void abandon_file(cache_iter *it) {
    if (it->f) fclose(it->f);
    it->f = NULL;
    if (it->tmp_path) unlink(it->tmp_path);
    tfc_free(it->tmp_path);
    it->tmp_path = NULL;
}

static bool open_writer(cache_iter *it, tfc_status *st) {
    static _Atomic unsigned counter;
    cache_params *p = it->base.ds->p;
    size_t len = strlen(p->final_path) + 64;
    it->tmp_path = tfc_malloc(len);
    if (!it->tmp_path) return tfc_status_oom(st, "cache", len);
    snprintf(it->tmp_path, len, "%s.tmp-%d-%u", p->final_path, (int)getpid(), atomic_fetch_add(&counter, 1));
    int fd = open(it->tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 || !(it->f = fdopen(fd, "wb"))) {
        bool r = io_error(st, it->tmp_path, "cannot create");
        if (fd >= 0) close(fd);
        tfc_free(it->tmp_path);
        it->tmp_path = NULL;
        return r;
    }
    const char *s = it->base.ds->spec.structure;
    data_bytes h = {0};
    bool ok = data_bytes_put(&h, CACHE_MAGIC, strlen(CACHE_MAGIC), st) && data_bytes_put(&h, s, strlen(s), st) &&
              write_record(it, h.p, h.len, st);
    tfc_free(h.p);
    if (!ok) abandon_file(it);
    return ok;
}

static bool open_reader(cache_iter *it, tfc_status *st) {
    cache_params *p = it->base.ds->p;
    if (!data_record_reader_open(&it->rr, p->final_path, NULL, 0, st)) return false;
    it->rr_open = true;
    size_t len = 0;
    bool end = false;
    if (!data_record_reader_next(&it->rr, &len, &end, st)) return false;
    const char *s = it->base.ds->spec.structure;
    size_t ml = strlen(CACHE_MAGIC);
    if (end || len != ml + strlen(s) || memcmp(it->rr.buf, CACHE_MAGIC, ml) || memcmp(it->rr.buf + ml, s, len - ml))
        return tfc_status_set(st, TFC_DATA_LOSS,
                              "cache %s: not a cache file of this pipeline (elements \"%s\")", p->final_path, s);
    return true;
}

static void decide_mode(cache_iter *it) {
    cache_params *p = it->base.ds->p;
    if (!p->filename) {
        pthread_mutex_lock(&p->mc->mu);
        it->mode = p->mc->complete ? MODE_READ_MEM : MODE_WRITE;
        pthread_mutex_unlock(&p->mc->mu);
    } else {
        it->mode = file_exists(p->final_path) ? MODE_READ_FILE : MODE_WRITE;
    }
}

/* The epoch reached its end: publish what was recorded. */
static bool finish_epoch(cache_iter *it, tfc_status *st) {
    cache_params *p = it->base.ds->p;
    int n = it->base.ds->spec.n;
    if (!p->filename) {
        pthread_mutex_lock(&p->mc->mu);
        if (!p->mc->complete) {
            p->mc->elems = it->acc;
            p->mc->count = it->acc_n;
            p->mc->complete = true;
            it->acc = NULL;
            it->acc_n = 0;
        }
        pthread_mutex_unlock(&p->mc->mu);
        for (int64_t k = 0; k < it->acc_n; k++) data_unref_n(it->acc + k * n, n);
        return true;
    }
    bool ok = fflush(it->f) == 0 && fsync(fileno(it->f)) == 0;
    if (fclose(it->f) != 0) ok = false;
    it->f = NULL;
    if (!ok || rename(it->tmp_path, p->final_path) != 0) {
        io_error(st, p->final_path, "cannot finalise");
        unlink(it->tmp_path);
        tfc_free(it->tmp_path);
        it->tmp_path = NULL;
        return false;
    }
    tfc_free(it->tmp_path);
    it->tmp_path = NULL;
    return true;
}

static bool record(cache_iter *it, tfc_tensor **out, tfc_status *st) {
    cache_params *p = it->base.ds->p;
    int n = it->base.ds->spec.n;
    if (!p->filename) {
        if (it->acc_n == it->acc_cap) {
            int64_t cap = it->acc_cap ? it->acc_cap * 2 : 64;
            tfc_tensor **a = tfc_realloc(it->acc, (size_t)cap * (size_t)(n ? n : 1) * sizeof *a);
            if (!a) return tfc_status_oom(st, "cache", (size_t)cap * (size_t)n * sizeof *a);
            it->acc = a;
            it->acc_cap = cap;
        }
        data_ref_n(out, it->acc + it->acc_n * n, n);
        it->acc_n++;
        return true;
    }
    it->enc.len = 0;
    if (!data_encode_element(&it->enc, out, n, st) || !write_record(it, it->enc.p, it->enc.len, st)) {
        abandon_file(it);
        return false;
    }
    return true;
}

static bool cache_next(data_iter *it_, tfc_tensor **out, bool *end, tfc_status *st) {
    cache_iter *it = (cache_iter *)it_;
    cache_params *p = it_->ds->p;
    int n = it_->ds->spec.n;
    if (it->mode == MODE_UNDECIDED) {
        decide_mode(it);
        if (it->mode == MODE_WRITE) {
            if (!(it->in = data_iter_make(it_->ds->inputs[0], it_->ictx, st))) {
                it->mode = MODE_UNDECIDED;
                return false;
            }
            if (p->filename && !open_writer(it, st)) {
                it->mode = MODE_PASS; /* an uncachable epoch still yields its elements */
                return false;
            }
        } else if (it->mode == MODE_READ_FILE && !open_reader(it, st)) {
            it->mode = MODE_PASS; /* no input: the epoch ends after this error */
            return false;
        }
    }
    switch (it->mode) {
    case MODE_READ_MEM:
        if (it->pos >= p->mc->count) {
            *end = true;
            return true;
        }
        data_ref_n(p->mc->elems + it->pos * n, out, n);
        it->pos++;
        return true;
    case MODE_READ_FILE: {
        size_t len = 0;
        if (!it->rr_open || !data_record_reader_next(&it->rr, &len, end, st)) return false;
        if (*end) return true;
        return data_decode_element(it->rr.buf, len, out, n, p->final_path, st);
    }
    case MODE_WRITE:
        if (!data_iter_next(it->in, out, end, st)) return false;
        if (*end) {
            it->mode = MODE_PASS;
            if (finish_epoch(it, st)) return true;
            *end = false;
            return false;
        }
        if (!record(it, out, st)) {
            /* a cache missing an element must not be published: the rest of the epoch passes through */
            data_unref_n(out, n);
            for (int64_t k = 0; k < it->acc_n; k++) data_unref_n(it->acc + k * n, n);
            it->acc_n = 0;
            it->mode = MODE_PASS;
            return false;
        }
        return true;
    default: /* MODE_PASS */
        if (!it->in) {
            *end = true;
            return true;
        }
        return data_iter_next(it->in, out, end, st);
    }
}

static void cache_iter_free(data_iter *it_) {
    cache_iter *it = (cache_iter *)it_;
    int n = it_->ds->spec.n;
    for (int64_t k = 0; k < it->acc_n; k++) data_unref_n(it->acc + k * n, n);
    tfc_free(it->acc);
    abandon_file(it); /* an epoch cut short leaves nothing behind */
    tfc_free(it->enc.p);
    tfc_free(it->frame.p);
    if (it->rr_open) data_record_reader_close(&it->rr);
    data_iter_free(it->in);
}

static const data_iter_vt cache_vt = {cache_next, cache_iter_free};

static data_iter *cache_make_iter(tfc_dataset *ds, const data_ictx *ictx, tfc_status *st) {
    return data_iter_alloc(sizeof(cache_iter), &cache_vt, ds, ictx, st);
}

static void cache_free(tfc_dataset *ds) {
    cache_params *p = ds->p;
    if (p->mc) {
        int n = ds->spec.n;
        for (int64_t k = 0; k < p->mc->count; k++) data_unref_n(p->mc->elems + k * n, n);
        tfc_free(p->mc->elems);
        pthread_mutex_destroy(&p->mc->mu);
        tfc_free(p->mc);
    }
    tfc_free(p->filename);
    tfc_free(p->final_path);
}

static void cache_describe(const tfc_dataset *ds, data_strbuf *b) {
    cache_params *p = ds->p;
    data_strbuf_printf(b, "filename=\"%s\"", p->filename ? p->filename : "");
}

static const data_kind cache_kind = {"CacheDatasetV2", cache_make_iter, data_card_input, cache_free, cache_describe};

tfc_dataset *tfc_dataset_cache(tfc_dataset *in, const char *filename, tfc_status *st) {
    if (!data_check_input(in, st)) return NULL;
    tfc_dataset *ds = data_ds_new(&cache_kind, sizeof(cache_params), &in, 1, st);
    if (!ds) return NULL;
    cache_params *p = ds->p;
    if (!data_spec_copy(&ds->spec, &in->spec, st)) return data_ds_fail(ds);
    if (filename && *filename) {
        size_t len = strlen(filename) + 16;
        p->filename = tfc_strdup(filename);
        p->final_path = tfc_malloc(len);
        if (!p->filename || !p->final_path) {
            tfc_status_oom(st, "cache", len);
            return data_ds_fail(ds);
        }
        snprintf(p->final_path, len, "%s.tfcache", filename);
    } else {
        p->mc = tfc_calloc(1, sizeof *p->mc);
        if (!p->mc) {
            tfc_status_oom(st, "cache", sizeof *p->mc);
            return data_ds_fail(ds);
        }
        pthread_mutex_init(&p->mc->mu, NULL);
    }
    tfc_status_clear(st);
    return ds;
}
