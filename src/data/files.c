/* File-name and text sources: list_files (glob) and TextLineDataset. */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/data_more_internal.h"

/* ---- TextLineDataset ---------------------------------------------------------------------------------------------
 * Lines end at "\n" (a "\r" before it is dropped, as TensorFlow's InputBuffer::ReadLine); a last line without
 * "\n" counts when it is not empty. */
typedef struct text_iter {
    data_iter base;
    data_iter *files;
    data_stream *s;
    char *path;
    uint8_t *buf;
    size_t cap, len, pos;     /* unread bytes are buf[pos..len) */
    bool eof;
} text_iter;

static void close_file(text_iter *it) {
    data_stream_close(it->s);
    it->s = NULL;
    tfc_free(it->path);
    it->path = NULL;
    it->len = it->pos = 0;
    it->eof = false;
}

/* Reads more bytes, keeping the unread ones; grows the buffer when a line does not fit. */
static bool more(text_iter *it, tfc_status *st) {
    if (it->pos) {
        memmove(it->buf, it->buf + it->pos, it->len - it->pos);
        it->len -= it->pos;
        it->pos = 0;
    }
    if (it->len == it->cap) {
        size_t cap = it->cap ? it->cap * 2 : 64 * 1024;
        uint8_t *b = tfc_realloc(it->buf, cap);
        if (!b) return tfc_status_oom(st, "TextLineDataset line", cap);
        it->buf = b;
        it->cap = cap;
    }
    size_t got = 0;
    tfc_status io = TFC_STATUS_INIT;
    if (!data_stream_read(it->s, it->buf + it->len, it->cap - it->len, &got, &io))
        return tfc_status_set(st, io.code, "TextLineDataset %s: %s", it->path, io.msg);
    it->len += got;
    if (got == 0) it->eof = true;
    return true;
}

static bool text_next(data_iter *it_, tfc_tensor **out, bool *end, tfc_status *st) {
    text_iter *it = (text_iter *)it_;
    data_file_params *p = it_->ds->p;
    for (;;) {
        if (!it->s) {
            if (!data_open_next_file(it->files, "TextLineDataset", p->compression, p->buffer_size, &it->path, &it->s,
                                     end, st) || *end)
                return *end;
        }
        size_t scan = it->pos;
        for (;;) {
            uint8_t *nl = it->len > scan ? memchr(it->buf + scan, '\n', it->len - scan) : NULL;
            if (nl) {
                size_t n = (size_t)(nl - (it->buf + it->pos));
                const char *line = (const char *)it->buf + it->pos;
                it->pos += n + 1;
                if (n && line[n - 1] == '\r') n--;
                return (out[0] = tfc_tensor_from_strings(&line, &n, NULL, 0, st)) != NULL;
            }
            if (it->eof) break;
            scan = it->len - it->pos;
            if (!more(it, st)) {
                close_file(it);
                return false;
            }
            scan += it->pos;
        }
        if (it->len > it->pos) {
            const char *line = (const char *)it->buf + it->pos;
            size_t n = it->len - it->pos;
            it->pos = it->len;
            return (out[0] = tfc_tensor_from_strings(&line, &n, NULL, 0, st)) != NULL;
        }
        close_file(it);
    }
}

static void text_iter_free(data_iter *it_) {
    text_iter *it = (text_iter *)it_;
    close_file(it);
    tfc_free(it->buf);
    data_iter_free(it->files);
}

static const data_iter_vt text_vt = {text_next, text_iter_free};

static data_iter *text_make_iter(tfc_dataset *ds, const data_ictx *ictx, tfc_status *st) {
    text_iter *it = data_iter_alloc(sizeof *it, &text_vt, ds, ictx, st);
    if (it && !(it->files = data_iter_make(ds->inputs[0], ictx, st))) {
        data_iter_free(&it->base);
        return NULL;
    }
    return it ? &it->base : NULL;
}

static const data_kind text_kind = {"TextLineDataset", text_make_iter, NULL, data_file_free, data_file_describe};

tfc_dataset *tfc_dataset_text_line(tfc_dataset *filenames, const tfc_reader_opts *opts, tfc_status *st) {
    return data_file_source(&text_kind, filenames, opts, st);
}

/* ---- list_files ------------------------------------------------------------------------------------------------ */
static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

tfc_dataset *tfc_dataset_list_files(const char *const *patterns, int n, const tfc_list_files_opts *opts,
                                    tfc_status *st) {
    tfc_list_files_opts o = opts ? *opts : (tfc_list_files_opts){0};
    if (n <= 0 || !patterns) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "list_files: no file_pattern given");
        return NULL;
    }
    char **names = NULL;
    size_t count = 0, cap = 0;
    tfc_dataset *ds = NULL;
    for (int i = 0; i < n; i++) {
        if (!patterns[i]) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "list_files: file_pattern %d is NULL", i);
            goto done;
        }
        glob_t g;
        int r = glob(patterns[i], GLOB_NOSORT, NULL, &g);
        if (r == GLOB_NOSPACE) {
            tfc_status_oom(st, "list_files", 0);
            goto done;
        }
        for (size_t k = 0; r == 0 && k < g.gl_pathc; k++) {
            if (count == cap) {
                cap = cap ? cap * 2 : 64;
                char **nn = tfc_realloc(names, cap * sizeof *nn);
                if (!nn) {
                    globfree(&g);
                    tfc_status_oom(st, "list_files", cap * sizeof *nn);
                    goto done;
                }
                names = nn;
            }
            if (!(names[count] = tfc_strdup(g.gl_pathv[k]))) {
                globfree(&g);
                tfc_status_oom(st, "list_files", 0);
                goto done;
            }
            count++;
        }
        if (r == 0) globfree(&g);
    }
    if (count == 0) {
        char msg[200] = {0};
        for (int i = 0; i < n; i++) {
            size_t l = strlen(msg);
            snprintf(msg + l, sizeof msg - l, "%s%s", i ? ", " : "", patterns[i]);
        }
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "list_files: No files matched pattern: %s", msg);
        goto done;
    }
    qsort(names, count, sizeof *names, cmp_str);
    size_t u = 0;
    for (size_t k = 0; k < count; k++) {
        if (u && !strcmp(names[u - 1], names[k])) {
            tfc_free(names[k]);
            continue;
        }
        names[u++] = names[k];
    }
    count = u;
    if (count > (size_t)INT32_MAX) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "list_files: too many files (%zu)", count);
        goto done;
    }
    ds = tfc_dataset_from_strings((const char *const *)names, (int)count, st);
    if (ds && TFC_FLAG(o.shuffle, true)) {
        tfc_shuffle_opts so = {.seed = o.seed, .has_seed = o.has_seed};
        ds = tfc_dataset_shuffle(ds, (int64_t)count, &so, st);
    }
done:
    for (size_t k = 0; k < count; k++) tfc_free(names[k]);
    tfc_free(names);
    return ds;
}
