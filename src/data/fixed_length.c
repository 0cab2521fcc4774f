/* tf.data.FixedLengthRecordDataset, and the file helpers the sources of include/tfc/data_more.h share. */
#include <stdio.h>
#include <string.h>

#include "data/data_more_internal.h"
#include "tfc/data_more.h"

bool data_open_next_file(data_iter *files, const char *what, const char *compression, int64_t buffer_size,
                         char **path, data_stream **s, bool *end, tfc_status *st) {
    tfc_tensor *fn = NULL;
    *path = NULL;
    *s = NULL;
    if (!data_iter_next(files, &fn, end, st) || *end) return *end;
    size_t len = 0;
    const char *name = data_filename(fn, what, &len, st);
    char *p = name ? tfc_malloc(len + 1) : NULL;
    if (p) {
        memcpy(p, name, len);
        p[len] = 0;
    }
    tfc_tensor_unref(fn);
    if (!name) return false;
    if (!p) return tfc_status_oom(st, what, len + 1);
    if (!(*s = data_stream_open(p, compression, buffer_size, st))) {
        tfc_free(p);
        return false;
    }
    *path = p;
    return true;
}

/* ---- FixedLengthRecordDataset ----------------------------------------------------------------------------------
 * A window of record_bytes + footer_bytes bytes slides over the body: a record is emitted while a full window
 * follows it, so the footer is never returned, also for compressed streams whose size is unknown. */
typedef struct flr_params {
    char *compression;
    int64_t buffer_size, record, header, footer;
} flr_params;

typedef struct flr_iter {
    data_iter base;
    data_iter *files;
    data_stream *s;
    char *path;
    uint8_t *win;             /* up to record + footer bytes, grown as bytes arrive (record_bytes is a user number) */
    size_t have, win_cap;     /* bytes in win, bytes allocated */
    int64_t body;             /* body bytes seen (for the message) */
} flr_iter;

static void flr_close(flr_iter *it) {
    data_stream_close(it->s);
    it->s = NULL;
    tfc_free(it->path);
    it->path = NULL;
    it->have = 0;
    it->body = 0;
}

static bool flr_size_error(flr_iter *it, tfc_code code, int64_t body, tfc_status *st) {
    const flr_params *p = it->base.ds->p;
    tfc_status_set(st, code,
                   "FixedLengthRecordDataset: Excluding the header (%lld bytes) and footer (%lld bytes), input file "
                   "\"%s\" has body length %lld bytes, which is not an exact multiple of the record length (%lld "
                   "bytes).",
                   (long long)p->header, (long long)p->footer, it->path, (long long)body, (long long)p->record);
    flr_close(it);
    return false;
}

/* Reads until win holds want bytes or the data ends. */
static bool flr_fill(flr_iter *it, size_t want, tfc_status *st) {
    while (it->have < want) {
        if (it->have == it->win_cap) {
            size_t cap = it->win_cap ? it->win_cap * 2 : (size_t)64 << 10;
            if (cap > want || cap < it->win_cap) cap = want;
            uint8_t *w = tfc_realloc(it->win, cap);
            if (!w) {
                tfc_status_set(st, TFC_RESOURCE_EXHAUSTED, "FixedLengthRecordDataset %s: out of memory reading a "
                               "record of %zu bytes (%zu read)", it->path, want, it->have);
                flr_close(it);
                return false;
            }
            it->win = w;
            it->win_cap = cap;
        }
        size_t got = 0, lim = want < it->win_cap ? want : it->win_cap;
        tfc_status io = TFC_STATUS_INIT;
        if (!data_stream_read(it->s, it->win + it->have, lim - it->have, &got, &io)) {
            tfc_status_set(st, io.code, "FixedLengthRecordDataset %s: %s", it->path, io.msg);
            flr_close(it);
            return false;
        }
        if (!got) break;
        it->have += got;
    }
    return true;
}

/* Opens the next file and skips its header; checks a plain file's size at once. */
static bool flr_open(flr_iter *it, bool *end, tfc_status *st) {
    const flr_params *p = it->base.ds->p;
    if (!data_open_next_file(it->files, "FixedLengthRecordDataset", p->compression, p->buffer_size, &it->path,
                             &it->s, end, st) || *end)
        return *end;
    int64_t size = data_stream_remaining(it->s);
    if (size >= 0 && (size < p->header + p->footer || (size - p->header - p->footer) % p->record != 0))
        return flr_size_error(it, TFC_INVALID_ARGUMENT, size - p->header - p->footer, st);
    for (int64_t left = p->header; left > 0;) { /* skip the header through the window buffer */
        size_t chunk = (size_t)(left < p->record + p->footer ? left : p->record + p->footer);
        it->have = 0;
        if (!flr_fill(it, chunk, st)) return false;
        if (it->have < chunk) return flr_size_error(it, TFC_DATA_LOSS, -(int64_t)(left - (int64_t)it->have), st);
        left -= (int64_t)chunk;
    }
    it->have = 0;
    return true;
}

static bool flr_next(data_iter *it_, tfc_tensor **out, bool *end, tfc_status *st) {
    flr_iter *it = (flr_iter *)it_;
    const flr_params *p = it_->ds->p;
    size_t rec = (size_t)p->record, want = (size_t)(p->record + p->footer);
    for (;;) {
        if (!it->s && (!flr_open(it, end, st) || *end)) return *end;
        if (!flr_fill(it, want, st)) return false;
        if (it->have == want) {
            const char *r = (const char *)it->win;
            if (!(out[0] = tfc_tensor_from_strings(&r, &rec, NULL, 0, st))) return false;
            memmove(it->win, it->win + rec, it->have - rec);
            it->have -= rec;
            it->body += p->record;
            return true;
        }
        if (it->have != (size_t)p->footer) /* the stream ended inside a record */
            return flr_size_error(it, TFC_DATA_LOSS, it->body + (int64_t)it->have - p->footer, st);
        flr_close(it);
    }
}

static void flr_iter_free(data_iter *it_) {
    flr_iter *it = (flr_iter *)it_;
    flr_close(it);
    tfc_free(it->win);
    data_iter_free(it->files);
}

static const data_iter_vt flr_vt = {flr_next, flr_iter_free};

static data_iter *flr_make_iter(tfc_dataset *ds, const data_ictx *ictx, tfc_status *st) {
    flr_iter *it = data_iter_alloc(sizeof *it, &flr_vt, ds, ictx, st);
    if (!it) return NULL;
    if (!(it->files = data_iter_make(ds->inputs[0], ictx, st))) {
        data_iter_free(&it->base);
        return NULL;
    }
    return &it->base;
}

static void flr_free(tfc_dataset *ds) { tfc_free(((flr_params *)ds->p)->compression); }

static void flr_describe(const tfc_dataset *ds, data_strbuf *b) {
    const flr_params *p = ds->p;
    data_strbuf_printf(b, "header_bytes=%lld, record_bytes=%lld, footer_bytes=%lld, buffer_size=%lld, "
                          "compression_type=\"%s\"",
                       (long long)p->header, (long long)p->record, (long long)p->footer, (long long)p->buffer_size,
                       p->compression ? p->compression : "");
}

static const data_kind flr_kind = {"FixedLengthRecordDatasetV2", flr_make_iter, NULL, flr_free, flr_describe};

static tfc_dataset *flr_single(tfc_dataset *files, const flr_params *prm, tfc_status *st) {
    tfc_dataset *ds = data_ds_new(&flr_kind, sizeof(flr_params), &files, 1, st);
    if (!ds) return NULL;
    flr_params *p = ds->p;
    *p = *prm;
    p->compression = NULL;
    tfc_tensor_spec s = {TFC_STRING, {0, {0}}};
    if (!data_spec_init(&ds->spec, ".", 1, &s, st)) return data_ds_fail(ds);
    if (prm->compression && !(p->compression = tfc_strdup(prm->compression))) {
        tfc_status_oom(st, "FixedLengthRecordDataset", 0);
        return data_ds_fail(ds);
    }
    tfc_status_clear(st);
    return ds;
}

/* num_parallel_reads: one single-file dataset per file, interleaved one record each (as TensorFlow). */
static tfc_dataset *flr_per_file(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, tfc_status *st) {
    (void)ctx, (void)n_in;
    tfc_dataset *files = tfc_dataset_from_tensors(in, 1, NULL, st);
    return files ? flr_single(files, user, st) : NULL;
}

static void flr_params_free(void *u) {
    flr_params *p = u;
    tfc_free(p->compression);
    tfc_free(p);
}

tfc_dataset *tfc_dataset_fixed_length_record(tfc_dataset *files, int64_t record_bytes, int64_t header_bytes,
                                             int64_t footer_bytes, const tfc_reader_opts *opts, tfc_status *st) {
    tfc_reader_opts o = opts ? *opts : (tfc_reader_opts){0};
    if (!data_check_input(files, st)) return NULL;
    if (!data_check_reader(files, &o, "FixedLengthRecordDataset", st)) {
        tfc_dataset_unref(files);
        return NULL;
    }
    if (record_bytes < 1 || header_bytes < 0 || footer_bytes < 0 || record_bytes > (INT64_C(1) << 40) ||
        footer_bytes > (INT64_C(1) << 40)) {
        tfc_dataset_unref(files);
        tfc_status_set(st, TFC_INVALID_ARGUMENT,
                       "FixedLengthRecordDataset: record_bytes must be positive and header_bytes, footer_bytes "
                       "non-negative (got %lld, %lld, %lld)",
                       (long long)record_bytes, (long long)header_bytes, (long long)footer_bytes);
        return NULL;
    }
    flr_params prm = {(char *)(o.compression_type && *o.compression_type ? o.compression_type : NULL),
                      o.buffer_size, record_bytes, header_bytes, footer_bytes};
    if (o.num_parallel_reads == 0) return flr_single(files, &prm, st);
    flr_params *pf = tfc_malloc(sizeof *pf);
    if (pf) *pf = prm;
    if (!pf || (prm.compression && !(pf->compression = tfc_strdup(prm.compression)))) {
        tfc_free(pf);
        tfc_dataset_unref(files);
        return tfc_status_oom(st, "FixedLengthRecordDataset", sizeof *pf), NULL;
    }
    int64_t n = o.num_parallel_reads;
    data_interleave_params ip = {.fn = flr_per_file, .user = pf, .user_free = flr_params_free, .cycle_length = n,
                                 .block_length = 1, .num_parallel_calls = n};
    tfc_tensor_spec s = {TFC_STRING, {0, {0}}};
    return data_interleave_new(files, &ip, ".", &s, st);
}
