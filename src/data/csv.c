/* tf.data.experimental.CsvDataset: RFC 4180 records (quoted fields with "" escapes and line breaks, "\n", "\r\n"
 * or "\r" ending a record) parsed from a buffered stream, one tuple of scalars per record. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/data_more_internal.h"
#include "kernels/cpu/string_internal.h"
#include "tfc/data_more.h"

typedef struct csv_params {
    char *compression;
    int64_t buffer_size;
    bool header, quote;
    char delim;
    char *na;
    size_t na_len;
    int n;                    /* output columns */
    tfc_tensor **defaults;    /* n owned references */
    int64_t *select;          /* n sorted column indices, or NULL (all columns; then exclude may apply) */
    int64_t *exclude;
    int n_exclude;
} csv_params;

/* ---- the record reader ------------------------------------------------------------------------------------- */
typedef struct csv_iter {
    data_iter base;
    data_iter *files;
    data_stream *s;
    char *path;
    uint8_t *buf;
    size_t cap, len, pos;     /* unread bytes: buf[pos..len) */
    bool eof;
    int64_t record;           /* index in the file of the record being read */
    char *field;              /* the unescaped bytes of the record's fields, back to back */
    size_t fcap, flen;
    size_t *starts;           /* field k: field[starts[k] .. starts[k + 1]) */
    int64_t n_fields, cap_fields;
} csv_iter;

static void csv_close(csv_iter *it) {
    data_stream_close(it->s);
    it->s = NULL;
    tfc_free(it->path);
    it->path = NULL;
    it->len = it->pos = 0;
    it->eof = false;
    it->record = 0;
}

/* Next byte (-1 at the end of the data); false on a read error. */
static bool csv_getc(csv_iter *it, int *c, tfc_status *st) {
    if (it->pos == it->len && !it->eof) {
        size_t got = 0;
        tfc_status io = TFC_STATUS_INIT;
        if (!data_stream_read(it->s, it->buf, it->cap, &got, &io))
            return tfc_status_set(st, io.code, "CsvDataset %s: %s", it->path, io.msg);
        it->len = got;
        it->pos = 0;
        if (!got) it->eof = true;
    }
    *c = it->pos < it->len ? it->buf[it->pos++] : -1;
    return true;
}

static bool csv_peek(csv_iter *it, int *c, tfc_status *st) {
    if (!csv_getc(it, c, st)) return false;
    if (*c >= 0) it->pos--;
    return true;
}

static bool csv_put(csv_iter *it, char c, tfc_status *st) {
    if (it->flen == it->fcap) {
        size_t cap = it->fcap ? it->fcap * 2 : 256;
        char *f = tfc_realloc(it->field, cap);
        if (!f) return tfc_status_oom(st, "CsvDataset field", cap);
        it->field = f;
        it->fcap = cap;
    }
    it->field[it->flen++] = c;
    return true;
}

static bool csv_mark(csv_iter *it, tfc_status *st) { /* starts a field (or, last, ends the record) */
    if (it->n_fields + 1 >= it->cap_fields) {
        int64_t cap = it->cap_fields ? it->cap_fields * 2 : 16;
        size_t *s = tfc_realloc(it->starts, (size_t)cap * sizeof *s);
        if (!s) return tfc_status_oom(st, "CsvDataset", (size_t)cap * sizeof *s);
        it->starts = s;
        it->cap_fields = cap;
    }
    it->starts[it->n_fields++] = it->flen;
    return true;
}

/* Consumes the rest of a malformed record (to its line end) so that reading resumes at the next one. */
static void csv_skip_line(csv_iter *it) {
    tfc_status ig = TFC_STATUS_INIT;
    int c = 0;
    while (csv_getc(it, &c, &ig) && c >= 0 && c != '\n') {}
}

static bool csv_record_error(csv_iter *it, const char *msg, tfc_status *st) {
    tfc_status_set(st, TFC_INVALID_ARGUMENT, "CsvDataset %s: %s in record %lld", it->path, msg,
                   (long long)it->record);
    it->record++;
    return false;
}

/* Reads one record into field/starts (n_fields fields). *end at the end of the file (no record). */
static bool csv_read_record(csv_iter *it, bool *end, tfc_status *st) {
    const csv_params *p = it->base.ds->p;
    it->flen = 0;
    it->n_fields = 0;
    int c = 0;
    if (!csv_peek(it, &c, st)) return false;
    if (c < 0) {
        *end = true;
        return true;
    }
    for (;;) { /* one field per turn */
        if (!csv_mark(it, st) || !csv_getc(it, &c, st)) return false;
        if (p->quote && c == '"') {
            for (;;) {
                if (!csv_getc(it, &c, st)) return false;
                if (c < 0) return csv_record_error(it, "Reached end of file without closing quoted field", st);
                if (c == '"') {
                    if (!csv_peek(it, &c, st)) return false;
                    if (c != '"') break;
                    it->pos++;
                }
                if (!csv_put(it, (char)c, st)) return false;
            }
            if (!csv_getc(it, &c, st)) return false;
            if (c >= 0 && c != p->delim && c != '\n' && c != '\r') {
                csv_skip_line(it);
                return csv_record_error(it, "Quoted field has to end with quote followed by delim or end", st);
            }
        } else {
            while (c >= 0 && c != p->delim && c != '\n' && c != '\r') {
                if (p->quote && c == '"') {
                    csv_skip_line(it);
                    return csv_record_error(it, "Unquoted fields cannot have quotes inside", st);
                }
                if (!csv_put(it, (char)c, st) || !csv_getc(it, &c, st)) return false;
            }
        }
        if (c == p->delim) continue;
        if (c == '\r') {
            int d = 0;
            if (!csv_peek(it, &d, st)) return false;
            if (d == '\n') it->pos++;
        }
        break;
    }
    if (!csv_mark(it, st)) return false;
    it->n_fields--; /* the last mark only ends the last field */
    return true;
}

/* ---- fields to tensors -------------------------------------------------------------------------------------- */
static tfc_tensor *csv_value(csv_iter *it, int col, int64_t field, const char *s, size_t len, tfc_status *st) {
    const csv_params *p = it->base.ds->p;
    tfc_tensor *def = p->defaults[col];
    tfc_dtype dt = def->dtype;
    bool missing = len == 0 || (p->na && p->na_len == len && memcmp(p->na, s, len) == 0);
    if (missing) {
        if (tfc_tensor_num_elements(def) == 0) {
            char msg[96];
            snprintf(msg, sizeof msg, "Field %lld is required but missing", (long long)field);
            csv_record_error(it, msg, st);
            return NULL;
        }
        return def->shape.rank == 0 ? tfc_tensor_ref(def) : data_slice_row(def, 0, st); /* [1] -> scalar */
    }
    if (dt == TFC_STRING) return tfc_tensor_from_strings(&s, &len, NULL, 0, st);
    bool ok = false; /* the number parsers of tf.io.decode_csv / tf.strings.to_number */
    tfc_tensor *t = NULL;
    int64_t i64 = 0;
    int32_t i32 = 0;
    double f64 = 0;
    float f32 = 0;
    if (dt == TFC_INT64 && (ok = tfc_parse_i64(s, len, &i64))) t = tfc_scalar_i64(i64, st);
    else if (dt == TFC_INT32 && (ok = tfc_parse_i32(s, len, &i32))) t = tfc_scalar(dt, i32, st);
    else if (dt == TFC_FLOAT && (ok = tfc_parse_f32(s, len, &f32))) t = tfc_scalar(dt, f32, st);
    else if (dt == TFC_DOUBLE && (ok = tfc_parse_f64(s, len, &f64))) t = tfc_scalar(dt, f64, st);
    if (!ok) {
        char msg[160];
        snprintf(msg, sizeof msg, "Field %lld is not a valid %s: %.*s", (long long)field, tfc_dtype_name(dt),
                 (int)(len < 64 ? len : 64), s);
        csv_record_error(it, msg, st);
    }
    return t;
}

static bool csv_excluded(const csv_params *p, int64_t col) {
    for (int i = 0; i < p->n_exclude; i++)
        if (p->exclude[i] == col) return true;
    return false;
}

static bool csv_next(data_iter *it_, tfc_tensor **out, bool *end, tfc_status *st) {
    csv_iter *it = (csv_iter *)it_;
    const csv_params *p = it_->ds->p;
    for (;;) {
        if (!it->s) {
            if (!data_open_next_file(it->files, "CsvDataset", p->compression, p->buffer_size, &it->path, &it->s, end,
                                     st) || *end)
                return *end;
            it->record = 0;
        }
        bool eof = false;
        if (!csv_read_record(it, &eof, st)) return false;
        if (eof) {
            csv_close(it);
            continue;
        }
        if (p->header && it->record == 0) {
            it->record++;
            continue;
        }
        /* map the record's fields to the output columns */
        int64_t have = 0;
        int col = 0;
        bool fail = false;
        for (int64_t f = 0; f < it->n_fields && !fail; f++) {
            bool take = p->select ? (col < p->n && p->select[col] == f) : !csv_excluded(p, f);
            if (!take) continue;
            have++;
            if (col >= p->n) continue; /* too many fields: counted for the message */
            const char *s = it->field ? it->field + it->starts[f] : ""; /* NULL until a byte is stored */
            size_t len = it->starts[f + 1] - it->starts[f];
            if (!(out[col] = csv_value(it, col, f, s, len, st))) fail = true;
            col++;
        }
        if (!fail && have != p->n) {
            char msg[96];
            snprintf(msg, sizeof msg, "Expect %d fields but have %lld", p->n, (long long)have);
            csv_record_error(it, msg, st);
            fail = true;
        }
        if (fail) {
            data_unref_n(out, col);
            if (st->code == TFC_INVALID_ARGUMENT) return false;
            it->record++;
            return false;
        }
        it->record++;
        return true;
    }
}

static void csv_iter_free(data_iter *it_) {
    csv_iter *it = (csv_iter *)it_;
    csv_close(it);
    tfc_free(it->buf);
    tfc_free(it->field);
    tfc_free(it->starts);
    data_iter_free(it->files);
}

static const data_iter_vt csv_vt = {csv_next, csv_iter_free};

static data_iter *csv_make_iter(tfc_dataset *ds, const data_ictx *ictx, tfc_status *st) {
    csv_iter *it = data_iter_alloc(sizeof *it, &csv_vt, ds, ictx, st);
    if (!it) return NULL;
    it->cap = 64 * 1024;
    if (!(it->buf = tfc_malloc(it->cap))) {
        tfc_status_oom(st, "CsvDataset", it->cap);
        data_iter_free(&it->base);
        return NULL;
    }
    if (!(it->files = data_iter_make(ds->inputs[0], ictx, st))) {
        data_iter_free(&it->base);
        return NULL;
    }
    return &it->base;
}

static void csv_free(tfc_dataset *ds) {
    csv_params *p = ds->p;
    if (p->defaults) data_unref_n(p->defaults, p->n);
    tfc_free(p->defaults);
    tfc_free(p->select);
    tfc_free(p->exclude);
    tfc_free(p->compression);
    tfc_free(p->na);
}

static void csv_describe(const tfc_dataset *ds, data_strbuf *b) {
    const csv_params *p = ds->p;
    data_strbuf_printf(b, "compression_type=\"%s\", buffer_size=%lld, header=%d, field_delim=\"%c\", "
                          "use_quote_delim=%d, na_value=\"%s\", select_cols=[",
                       p->compression ? p->compression : "", (long long)p->buffer_size, (int)p->header, p->delim,
                       (int)p->quote, p->na ? p->na : "");
    for (int i = 0; p->select && i < p->n; i++) data_strbuf_printf(b, "%s%lld", i ? ", " : "", (long long)p->select[i]);
    data_strbuf_printf(b, "], exclude_cols=[");
    for (int i = 0; i < p->n_exclude; i++) data_strbuf_printf(b, "%s%lld", i ? ", " : "", (long long)p->exclude[i]);
    data_strbuf_printf(b, "]");
    for (int i = 0; i < p->n; i++)
        data_strbuf_printf(b, ", default%d=%s[%lld]", i, tfc_dtype_name(p->defaults[i]->dtype),
                           (long long)tfc_tensor_num_elements(p->defaults[i]));
}

static const data_kind csv_kind = {"CSVDatasetV2", csv_make_iter, NULL, csv_free, csv_describe};

/* Copies n sorted, distinct, non-negative column indices. */
static bool copy_cols(const int64_t *cols, int n, int64_t **dst, const char *name, tfc_status *st) {
    for (int i = 0; i < n; i++)
        if (cols[i] < 0 || (i && cols[i] <= cols[i - 1]))
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "CsvDataset: %s must be sorted in ascending order and "
                                  "non-negative, without duplicates (index %d is %lld)", name, i, (long long)cols[i]);
    if (!(*dst = tfc_malloc((size_t)(n ? n : 1) * sizeof **dst))) return tfc_status_oom(st, "CsvDataset", 0);
    if (n) memcpy(*dst, cols, (size_t)n * sizeof **dst);
    return true;
}

tfc_dataset *tfc_dataset_csv(tfc_dataset *files, tfc_tensor *const *record_defaults, int n, const tfc_csv_opts *opts,
                             tfc_status *st) {
    tfc_csv_opts o = opts ? *opts : (tfc_csv_opts){0};
    if (!data_check_input(files, st)) return NULL;
    tfc_reader_opts ro = {o.compression_type, o.buffer_size, 0};
    const char *err = NULL;
    if (!data_check_reader(files, &ro, "CsvDataset", st)) goto fail;
    if (n < 1 || n > TFC_DATA_MAX_COMPONENTS || !record_defaults) err = "record_defaults must have 1 to 1024 entries";
    else if (o.select_cols && o.exclude_cols) err = "select_cols and exclude_cols cannot both be given";
    else if (o.select_cols && o.n_select != n) err = "select_cols must have as many entries as record_defaults";
    else if (o.field_delim == '\n' || o.field_delim == '\r' || (o.field_delim == '"' && o.use_quote_delim != TFC_NO))
        err = "field_delim cannot be a line break or the quote";
    for (int i = 0; !err && i < n; i++) {
        tfc_tensor *d = record_defaults[i];
        tfc_dtype dt = d ? d->dtype : TFC_INVALID_DTYPE;
        if (!d || (dt != TFC_INT32 && dt != TFC_INT64 && dt != TFC_FLOAT && dt != TFC_DOUBLE && dt != TFC_STRING))
            err = "record_defaults must be int32, int64, float32, float64 or string tensors";
        else if (tfc_tensor_num_elements(d) > 1 || d->shape.rank > 1 || tfc_tensor_is_symbolic(d))
            err = "each record default must be a scalar or a vector of at most one element";
    }
    if (err) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "CsvDataset: %s", err);
        goto fail;
    }
    tfc_dataset *ds = data_ds_new(&csv_kind, sizeof(csv_params), &files, 1, st);
    if (!ds) return NULL;
    csv_params *p = ds->p;
    p->buffer_size = o.buffer_size;
    p->header = o.header;
    p->quote = o.use_quote_delim != TFC_NO;
    p->delim = o.field_delim ? o.field_delim : ',';
    p->n = n;
    tfc_tensor_spec specs[TFC_DATA_MAX_COMPONENTS];
    for (int i = 0; i < n; i++) specs[i] = (tfc_tensor_spec){record_defaults[i]->dtype, {0, {0}}};
    if (!data_spec_init(&ds->spec, n == 1 ? "(.,)" : NULL, n, specs, st)) return data_ds_fail(ds);
    if (!(p->defaults = tfc_calloc((size_t)n, sizeof *p->defaults)) ||
        (o.compression_type && *o.compression_type && !(p->compression = tfc_strdup(o.compression_type))) ||
        (o.na_value && *o.na_value && !(p->na = tfc_strdup(o.na_value)))) {
        tfc_status_oom(st, "CsvDataset", 0);
        return data_ds_fail(ds);
    }
    p->na_len = p->na ? strlen(p->na) : 0;
    data_ref_n(record_defaults, p->defaults, n);
    if ((o.select_cols && !copy_cols(o.select_cols, n, &p->select, "select_cols", st)) ||
        (o.exclude_cols && !copy_cols(o.exclude_cols, o.n_exclude, &p->exclude, "exclude_cols", st)))
        return data_ds_fail(ds);
    p->n_exclude = o.exclude_cols ? o.n_exclude : 0;
    tfc_status_clear(st);
    return ds;
fail:
    tfc_dataset_unref(files);
    return NULL;
}
