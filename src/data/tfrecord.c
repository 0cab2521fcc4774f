/* TFRecord files (specs/tfrecord.md): CRC32C, record framing, the reader and writer, TFRecordDataset. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#include "data/data_more_internal.h"

static uint32_t get_le32(const uint8_t *p) { return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t get_le64(const uint8_t *p) { return get_le32(p) | (uint64_t)get_le32(p + 4) << 32; }
static void put_le32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void put_le64(uint8_t *p, uint64_t v) {
    put_le32(p, (uint32_t)v);
    put_le32(p + 4, (uint32_t)(v >> 32));
}

/* ---- framing ------------------------------------------------------------------------------------------------- */
bool data_record_frame(data_bytes *b, const void *data, size_t n, tfc_status *st) {
    uint8_t h[12], t[4];
    put_le64(h, n);
    put_le32(h + 8, tfc_crc32c_mask(tfc_crc32c(h, 8)));
    put_le32(t, tfc_crc32c_mask(tfc_crc32c(data, n)));
    return data_bytes_put(b, h, 12, st) && data_bytes_put(b, data, n, st) && data_bytes_put(b, t, 4, st);
}

bool data_record_reader_open(data_record_reader *r, const char *path, const char *compression_type,
                             int64_t buffer_size, tfc_status *st) {
    memset(r, 0, sizeof *r);
    if (!(r->path = tfc_strdup(path))) return tfc_status_oom(st, "TFRecord reader", strlen(path));
    if (!(r->s = data_stream_open(path, compression_type, buffer_size, st))) {
        tfc_free(r->path);
        r->path = NULL;
        return false;
    }
    return true;
}

void data_record_reader_close(data_record_reader *r) {
    data_stream_close(r->s);
    tfc_free(r->path);
    tfc_free(r->buf);
    memset(r, 0, sizeof *r);
}

static bool lost(data_record_reader *r, tfc_status *st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool lost(data_record_reader *r, tfc_status *st, const char *fmt, ...) {
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    r->dead = true;
    return tfc_status_set(st, TFC_DATA_LOSS, "TFRecord %s: record %lld: %s", r->path, (long long)r->index, msg);
}

/* Reads exactly n bytes into r->buf + off, growing the buffer as bytes arrive so that a corrupt length cannot
 * make us allocate more than the data that is really there (plus one step). */
static bool read_body(data_record_reader *r, size_t off, size_t n, size_t *got, tfc_status *st) {
    *got = 0;
    while (*got < n) {
        size_t step = n - *got;
        if (step > ((size_t)64 << 20)) step = (size_t)64 << 20;
        size_t need = off + *got + step;
        if (need > r->cap) {
            size_t cap = r->cap ? r->cap : 256;
            while (cap < need) cap *= 2;
            uint8_t *b = tfc_realloc(r->buf, cap);
            if (!b) return tfc_status_oom(st, "TFRecord record", cap);
            r->buf = b;
            r->cap = cap;
        }
        size_t g = 0;
        if (!data_stream_read(r->s, r->buf + off + *got, step, &g, st)) return false;
        *got += g;
        if (g < step) break;
    }
    return true;
}

bool data_record_reader_next(data_record_reader *r, size_t *len, bool *end, tfc_status *st) {
    *end = false;
    *len = 0;
    if (r->dead) {
        *end = true;
        return true;
    }
    uint8_t h[12];
    size_t got = 0;
    tfc_status io = TFC_STATUS_INIT;
    if (!data_stream_read(r->s, h, 12, &got, &io)) return lost(r, st, "%s", io.msg);
    if (got == 0) {
        *end = true;
        return true;
    }
    if (got < 12) return lost(r, st, "truncated record header (%zu of 12 bytes)", got);
    if (tfc_crc32c_unmask(get_le32(h + 8)) != tfc_crc32c(h, 8))
        return lost(r, st, "corrupted record (length CRC mismatch)");
    uint64_t n = get_le64(h);
    int64_t left = data_stream_remaining(r->s);
    if (n > ((uint64_t)1 << 62) || (left >= 0 && n + 4 > (uint64_t)left))
        return lost(r, st, "truncated record (%llu data bytes expected, %lld left in the file)",
                    (unsigned long long)n, (long long)(left > 4 ? left - 4 : 0));
    if (!read_body(r, 0, (size_t)n + 4, &got, &io)) {
        r->dead = true;
        return tfc_status_set(st, io.code == TFC_RESOURCE_EXHAUSTED ? io.code : TFC_DATA_LOSS,
                              "TFRecord %s: record %lld: %s", r->path, (long long)r->index, io.msg);
    }
    if (got < n + 4)
        return lost(r, st, "truncated record (%llu data bytes expected, %zu present)", (unsigned long long)n,
                    got > n ? (size_t)n : got);
    uint32_t want = tfc_crc32c_unmask(get_le32(r->buf + n));
    int64_t idx = r->index++;
    if (want != tfc_crc32c(r->buf, (size_t)n))
        return tfc_status_set(st, TFC_DATA_LOSS, "TFRecord %s: record %lld: data CRC mismatch", r->path, (long long)idx);
    *len = (size_t)n;
    return true;
}

/* ---- public reader --------------------------------------------------------------------------------------------- */
struct tfc_tfrecord_reader {
    data_record_reader r;
};

tfc_tfrecord_reader *tfc_tfrecord_reader_new(const char *path, const char *compression_type, int64_t buffer_size,
                                             tfc_status *st) {
    if (!path) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "tfrecord_reader: NULL path");
        return NULL;
    }
    tfc_tfrecord_reader *rd = tfc_calloc(1, sizeof *rd);
    if (!rd) {
        tfc_status_oom(st, "TFRecord reader", sizeof *rd);
        return NULL;
    }
    if (!data_record_reader_open(&rd->r, path, compression_type, buffer_size, st)) {
        tfc_free(rd);
        return NULL;
    }
    tfc_status_clear(st);
    return rd;
}

bool tfc_tfrecord_reader_next(tfc_tfrecord_reader *rd, const char **data, size_t *len, tfc_status *st) {
    bool end = false;
    *data = NULL;
    *len = 0;
    if (!data_record_reader_next(&rd->r, len, &end, st)) return false;
    if (end) return tfc_status_set(st, TFC_OUT_OF_RANGE, "End of file");
    *data = (const char *)(rd->r.buf ? rd->r.buf : (const uint8_t *)"");
    tfc_status_clear(st);
    return true;
}

void tfc_tfrecord_reader_free(tfc_tfrecord_reader *rd) {
    if (!rd) return;
    data_record_reader_close(&rd->r);
    tfc_free(rd);
}

/* ---- writer ------------------------------------------------------------------------------------------------------ */
struct tfc_tfrecord_writer {
    FILE *f;
    char *path;
    bool z_on;
    z_stream z;
    uint8_t zbuf[64 * 1024];
    bool failed;
};

static bool wio_error(tfc_tfrecord_writer *w, tfc_status *st, const char *what) {
    int e = errno;
    w->failed = true;
    return tfc_status_set(st, e == ENOENT ? TFC_NOT_FOUND : e == EACCES ? TFC_PERMISSION_DENIED : TFC_UNKNOWN,
                          "TFRecordWriter %s: %s: %s", w->path, what, strerror(e));
}

tfc_tfrecord_writer *tfc_tfrecord_writer_new(const char *path, const char *compression_type, int compression_level,
                                             tfc_status *st) {
    if (!path) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "TFRecordWriter: NULL path");
        return NULL;
    }
    if (!data_check_compression(compression_type, st)) return NULL;
    if (compression_level < -1 || compression_level > 9) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "TFRecordWriter: compression_level must be -1..9, got %d",
                       compression_level);
        return NULL;
    }
    tfc_tfrecord_writer *w = tfc_calloc(1, sizeof *w);
    if (!w || !(w->path = tfc_strdup(path))) {
        tfc_free(w);
        tfc_status_oom(st, "TFRecordWriter", sizeof *w);
        return NULL;
    }
    if (!(w->f = fopen(path, "wb"))) {
        wio_error(w, st, "cannot create");
        tfc_free(w->path);
        tfc_free(w);
        return NULL;
    }
    if (compression_type && *compression_type) {
        bool gz = !strcmp(compression_type, "GZIP");
        if (deflateInit2(&w->z, compression_level, Z_DEFLATED, gz ? 16 + MAX_WBITS : MAX_WBITS, 8,
                         Z_DEFAULT_STRATEGY) != Z_OK) {
            fclose(w->f);
            tfc_free(w->path);
            tfc_free(w);
            tfc_status_oom(st, "zlib stream", 0);
            return NULL;
        }
        w->z_on = true;
    }
    tfc_status_clear(st);
    return w;
}

/* Feeds bytes through deflate (or straight to the file). */
static bool wbytes(tfc_tfrecord_writer *w, const void *p, size_t n, int flush, tfc_status *st) {
    if (!w->z_on) {
        if (n && fwrite(p, 1, n, w->f) != n) return wio_error(w, st, "write");
        return true;
    }
    w->z.next_in = (Bytef *)(uintptr_t)p;
    w->z.avail_in = (uInt)n;
    for (;;) {
        w->z.next_out = w->zbuf;
        w->z.avail_out = sizeof w->zbuf;
        int r = deflate(&w->z, flush);
        size_t out = sizeof w->zbuf - w->z.avail_out;
        if (out && fwrite(w->zbuf, 1, out, w->f) != out) return wio_error(w, st, "write");
        if (r == Z_STREAM_END) return true;
        if (r != Z_OK && r != Z_BUF_ERROR) {
            w->failed = true;
            return tfc_status_set(st, TFC_INTERNAL, "TFRecordWriter %s: deflate failed (%d)", w->path, r);
        }
        if (w->z.avail_in == 0 && w->z.avail_out != 0) return true;
    }
}

bool tfc_tfrecord_writer_write(tfc_tfrecord_writer *w, const void *data, size_t n, tfc_status *st) {
    if (!w) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "TFRecordWriter: NULL writer");
    if (w->failed) return tfc_status_set(st, TFC_FAILED_PRECONDITION, "TFRecordWriter %s: an earlier write failed",
                                         w->path);
    uint8_t h[12], t[4];
    put_le64(h, n);
    put_le32(h + 8, tfc_crc32c_mask(tfc_crc32c(h, 8)));
    put_le32(t, tfc_crc32c_mask(tfc_crc32c(data, n)));
    /* big payloads go through in pieces: deflate counts in uInt */
    if (!wbytes(w, h, 12, Z_NO_FLUSH, st)) return false;
    for (size_t off = 0; off < n;) {
        size_t k = n - off > (1u << 30) ? (1u << 30) : n - off;
        if (!wbytes(w, (const char *)data + off, k, Z_NO_FLUSH, st)) return false;
        off += k;
    }
    if (!wbytes(w, t, 4, Z_NO_FLUSH, st)) return false;
    tfc_status_clear(st);
    return true;
}

bool tfc_tfrecord_writer_flush(tfc_tfrecord_writer *w, tfc_status *st) {
    if (!w) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "TFRecordWriter: NULL writer");
    if (w->z_on && !wbytes(w, NULL, 0, Z_SYNC_FLUSH, st)) return false;
    if (fflush(w->f) != 0) return wio_error(w, st, "flush");
    tfc_status_clear(st);
    return true;
}

bool tfc_tfrecord_writer_close(tfc_tfrecord_writer *w, tfc_status *st) {
    if (!w) return true;
    bool ok = !w->failed || tfc_status_set(st, TFC_DATA_LOSS, "TFRecordWriter %s: an earlier write failed", w->path);
    if (ok && w->z_on) ok = wbytes(w, NULL, 0, Z_FINISH, st);
    if (w->z_on) deflateEnd(&w->z);
    if (fclose(w->f) != 0 && ok) {
        ok = wio_error(w, st, "close");
    }
    tfc_free(w->path);
    tfc_free(w);
    if (ok) tfc_status_clear(st);
    return ok;
}

/* ---- TFRecordDataset ------------------------------------------------------------------------------------------ */
typedef struct tfrecord_iter {
    data_iter base;
    data_iter *files;
    data_record_reader rr;
    bool open;
} tfrecord_iter;

const char *data_filename(const tfc_tensor *t, const char *what, size_t *len, tfc_status *st) {
    const char *s = t->dtype == TFC_STRING && t->shape.rank == 0 ? tfc_tensor_string(t, 0, len) : NULL;
    if (!s) {
        char sh[TFC_SHAPE_STR];
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: filenames must be string scalars, got %s %s", what,
                       tfc_dtype_name(t->dtype), tfc_shape_str(&t->shape, sh, sizeof sh));
    }
    return s;
}

static bool tfrecord_next(data_iter *it_, tfc_tensor **out, bool *end, tfc_status *st) {
    tfrecord_iter *it = (tfrecord_iter *)it_;
    data_file_params *p = it_->ds->p;
    for (;;) {
        if (!it->open) {
            tfc_tensor *fn = NULL;
            if (!data_iter_next(it->files, &fn, end, st) || *end) return *end;
            size_t len = 0;
            const char *name = data_filename(fn, "TFRecordDataset", &len, st);
            char *path = name ? tfc_malloc(len + 1) : NULL;
            if (path) {
                memcpy(path, name, len);
                path[len] = 0;
            }
            tfc_tensor_unref(fn);
            if (!name) return false;
            if (!path) return tfc_status_oom(st, "TFRecordDataset", len + 1);
            bool ok = data_record_reader_open(&it->rr, path, p->compression, p->buffer_size, st);
            tfc_free(path);
            if (!ok) return false; /* the next call goes on with the next file */
            it->open = true;
        }
        size_t len = 0;
        bool e = false;
        if (!data_record_reader_next(&it->rr, &len, &e, st)) return false;
        if (!e) {
            const char *data = (const char *)(it->rr.buf ? it->rr.buf : (const uint8_t *)"");
            return (out[0] = tfc_tensor_from_strings(&data, &len, NULL, 0, st)) != NULL;
        }
        data_record_reader_close(&it->rr);
        it->open = false;
    }
}

static void tfrecord_iter_free(data_iter *it_) {
    tfrecord_iter *it = (tfrecord_iter *)it_;
    if (it->open) data_record_reader_close(&it->rr);
    data_iter_free(it->files);
}

static const data_iter_vt tfrecord_vt = {tfrecord_next, tfrecord_iter_free};

static data_iter *tfrecord_make_iter(tfc_dataset *ds, const data_ictx *ictx, tfc_status *st) {
    tfrecord_iter *it = data_iter_alloc(sizeof *it, &tfrecord_vt, ds, ictx, st);
    if (it && !(it->files = data_iter_make(ds->inputs[0], ictx, st))) {
        data_iter_free(&it->base);
        return NULL;
    }
    return it ? &it->base : NULL;
}

void data_file_free(tfc_dataset *ds) { tfc_free(((data_file_params *)ds->p)->compression); }

void data_file_describe(const tfc_dataset *ds, data_strbuf *b) {
    data_file_params *p = ds->p;
    data_strbuf_printf(b, "compression_type=\"%s\", buffer_size=%lld", p->compression ? p->compression : "",
                       (long long)p->buffer_size);
}

static const data_kind tfrecord_kind = {"TFRecordDataset", tfrecord_make_iter, NULL, data_file_free,
                                        data_file_describe};

/* Validates the options and the filenames dataset (string scalars). */
bool data_check_reader(tfc_dataset *files, const tfc_reader_opts *o, const char *what, tfc_status *st) {
    if (!data_check_compression(o->compression_type, st)) return false;
    if (o->buffer_size < 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: buffer_size must be >= 0, got %lld", what,
                              (long long)o->buffer_size);
    if (o->num_parallel_reads < 0 && o->num_parallel_reads != TFC_AUTOTUNE)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: num_parallel_reads must be positive or AUTOTUNE, got %lld",
                              what, (long long)o->num_parallel_reads);
    const tfc_tensor_spec *s = files->spec.comps;
    if (files->spec.n != 1 || (s->dtype && s->dtype != TFC_STRING) || s->shape.rank > 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: filenames must be a dataset of string scalars, got %s",
                              what, files->spec.structure);
    return true;
}

tfc_dataset *data_file_source_single(const data_kind *k, tfc_dataset *files, const tfc_reader_opts *o,
                                    tfc_status *st) {
    tfc_dataset *ds = data_ds_new(k, sizeof(data_file_params), &files, 1, st);
    if (!ds) return NULL;
    data_file_params *p = ds->p;
    tfc_tensor_spec s = {TFC_STRING, {0, {0}}};
    if (!data_spec_init(&ds->spec, ".", 1, &s, st)) return data_ds_fail(ds);
    p->buffer_size = o->buffer_size;
    if (o->compression_type && *o->compression_type && !(p->compression = tfc_strdup(o->compression_type))) {
        tfc_status_oom(st, k->name, 0);
        return data_ds_fail(ds);
    }
    tfc_status_clear(st);
    return ds;
}

/* num_parallel_reads: TensorFlow interleaves the single-file datasets (cycle_length = block... = 1 record). */
typedef struct per_file {
    const data_kind *kind;
    tfc_reader_opts o;
    char *compression;
} per_file;

static tfc_dataset *per_file_fn(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, tfc_status *st) {
    per_file *pf = user;
    tfc_dataset *files = tfc_dataset_from_tensors(in, 1, NULL, st);
    if (!files) return NULL;
    tfc_reader_opts o = pf->o;
    o.compression_type = pf->compression;
    o.num_parallel_reads = 0;
    return data_file_source_single(pf->kind, files, &o, st);
}

static void per_file_free(void *user) {
    per_file *pf = user;
    tfc_free(pf->compression);
    tfc_free(pf);
}

tfc_dataset *data_file_source(const data_kind *k, tfc_dataset *files, const tfc_reader_opts *opts, tfc_status *st) {
    tfc_reader_opts o = opts ? *opts : (tfc_reader_opts){0};
    if (!data_check_input(files, st)) return NULL;
    if (!data_check_reader(files, &o, k->name, st)) {
        tfc_dataset_unref(files);
        return NULL;
    }
    if (o.num_parallel_reads == 0) return data_file_source_single(k, files, &o, st);
    per_file *pf = tfc_calloc(1, sizeof *pf);
    if (!pf || (o.compression_type && *o.compression_type && !(pf->compression = tfc_strdup(o.compression_type)))) {
        tfc_free(pf);
        tfc_dataset_unref(files);
        tfc_status_oom(st, k->name, sizeof *pf);
        return NULL;
    }
    pf->kind = k;
    pf->o = o;
    int64_t n = o.num_parallel_reads;
    data_interleave_params ip = {.fn = per_file_fn, .user = pf, .user_free = per_file_free, .cycle_length = n,
                                 .block_length = 1, .num_parallel_calls = n};
    tfc_tensor_spec s = {TFC_STRING, {0, {0}}};
    return data_interleave_new(files, &ip, ".", &s, st);
}

tfc_dataset *tfc_dataset_tfrecord(tfc_dataset *filenames, const tfc_reader_opts *opts, tfc_status *st) {
    return data_file_source(&tfrecord_kind, filenames, opts, st);
}
