/* The `checkpoint` file: CheckpointState in protobuf text format, one `field: value` per line, strings quoted
 * with C escapes (what TensorFlow's text_format writes and tf.train.get_checkpoint_state parses), and
 * tf.train.latest_checkpoint on top of it. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "platform/file_io.h"
#include "saved_model/checkpoint_internal.h"
#include "saved_model/table.h"

#define MAX_STATE_BYTES ((size_t)64 << 20)

char *tfc_ckpt_strdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = tfc_malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

char *tfc_ckpt_join(const char *dir, const char *path) {
    if (path[0] == '/' || !dir[0]) return tfc_ckpt_strdup(path);
    size_t n = strlen(dir) + strlen(path) + 2;
    char *out = tfc_malloc(n);
    if (out) snprintf(out, n, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", path);
    return out;
}

bool tfc_ckpt_exists(const char *prefix) {
    char *index = tfc_malloc(strlen(prefix) + 8);
    if (!index) return false;
    sprintf(index, "%s.index", prefix);
    struct stat sb;
    bool ok = stat(index, &sb) == 0 && S_ISREG(sb.st_mode);
    tfc_free(index);
    return ok;
}

void tfc_ckpt_state_free(tfc_ckpt_state *s) {
    tfc_free(s->model_checkpoint_path);
    for (int i = 0; i < s->n_paths; i++) tfc_free(s->all_model_checkpoint_paths[i]);
    tfc_free(s->all_model_checkpoint_paths);
    tfc_free(s->all_model_checkpoint_timestamps);
    memset(s, 0, sizeof *s);
}

/* Parses a quoted text-format string at *p into a new string. */
static char *parse_quoted(const char **p) {
    const char *s = *p;
    char q = *s;
    if (q != '"' && q != '\'') return NULL;
    s++;
    char *out = tfc_malloc(strlen(s) + 1), *o = out;
    if (!out) return NULL;
    while (*s && *s != q) {
        char c = *s++;
        if (c == '\\') {
            c = *s++;
            switch (c) {
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case '\\': case '"': case '\'': break;
            default:
                if (c >= '0' && c <= '7') { /* octal, as text_format writes bytes it does not print */
                    int v = c - '0';
                    for (int k = 0; k < 2 && *s >= '0' && *s <= '7'; k++) v = v * 8 + (*s++ - '0');
                    c = (char)v;
                } else {
                    tfc_free(out);
                    return NULL;
                }
            }
        }
        *o++ = c;
    }
    if (*s != q) {
        tfc_free(out);
        return NULL;
    }
    *o = 0;
    *p = s + 1;
    return out;
}

static bool push_path(tfc_ckpt_state *s, char *v) {
    char **a = tfc_realloc(s->all_model_checkpoint_paths, (size_t)(s->n_paths + 1) * sizeof *a);
    if (!a) return false;
    s->all_model_checkpoint_paths = a;
    a[s->n_paths++] = v;
    return true;
}

static bool push_ts(tfc_ckpt_state *s, double v) {
    double *a = tfc_realloc(s->all_model_checkpoint_timestamps, (size_t)(s->n_timestamps + 1) * sizeof *a);
    if (!a) return false;
    s->all_model_checkpoint_timestamps = a;
    a[s->n_timestamps++] = v;
    return true;
}

bool tfc_ckpt_state_read(const char *dir, tfc_ckpt_state *out, tfc_status *st) {
    memset(out, 0, sizeof *out);
    char *path = tfc_ckpt_join(dir, "checkpoint");
    if (!path) return tfc_status_oom(st, dir, strlen(dir));
    char *text = NULL;
    size_t size;
    if (!tfc_file_read_all(path, MAX_STATE_BYTES, (void **)&text, &size, st)) {
        tfc_free(path);
        return false;
    }
    bool ok = true;
    int line = 1;
    for (char *p = text; ok && *p; line++) {
        char *end = strchr(p, '\n');
        if (end) *end = 0;
        char *q = p;
        while (*q == ' ' || *q == '\t' || *q == '\r') q++;
        if (*q && *q != '#') {
            char *colon = strchr(q, ':');
            if (!colon) {
                ok = tfc_status_set(st, TFC_DATA_LOSS, "%s: line %d: expected 'field: value'", path, line);
                break;
            }
            *colon = 0;
            const char *v = colon + 1;
            while (*v == ' ' || *v == '\t') v++;
            if (!strcmp(q, "model_checkpoint_path") || !strcmp(q, "all_model_checkpoint_paths")) {
                char *s = parse_quoted(&v);
                if (!s) {
                    ok = tfc_status_set(st, TFC_DATA_LOSS, "%s: line %d: field %s: malformed string", path, line, q);
                } else if (q[0] == 'm') {
                    tfc_free(out->model_checkpoint_path);
                    out->model_checkpoint_path = s;
                } else if (!push_path(out, s)) {
                    tfc_free(s);
                    ok = tfc_status_oom(st, path, 0);
                }
            } else if (!strcmp(q, "all_model_checkpoint_timestamps") || !strcmp(q, "last_preserved_timestamp")) {
                char *e;
                double d = strtod(v, &e);
                if (e == v) ok = tfc_status_set(st, TFC_DATA_LOSS, "%s: line %d: field %s: not a number", path, line, q);
                else if (q[0] == 'l') out->last_preserved_timestamp = d;
                else if (!push_ts(out, d)) ok = tfc_status_oom(st, path, 0);
            } else {
                ok = tfc_status_set(st, TFC_DATA_LOSS, "%s: line %d: unknown CheckpointState field '%s'", path, line, q);
            }
        }
        if (!end) break;
        p = end + 1;
    }
    tfc_free(text);
    tfc_free(path);
    if (!ok) tfc_ckpt_state_free(out);
    else tfc_status_clear(st);
    return ok;
}

static bool put_quoted(tfc_bytes *b, const char *field, const char *s, tfc_status *st) {
    char esc[8];
    if (!tfc_bytes_append(b, field, strlen(field), st) || !tfc_bytes_append(b, ": \"", 3, st)) return false;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        int n;
        if (*p == '"' || *p == '\\') n = snprintf(esc, sizeof esc, "\\%c", *p);
        else if (*p == '\n') n = snprintf(esc, sizeof esc, "\\n");
        else if (*p < 32 || *p >= 127) n = snprintf(esc, sizeof esc, "\\%03o", *p);
        else n = snprintf(esc, sizeof esc, "%c", *p);
        if (!tfc_bytes_append(b, esc, (size_t)n, st)) return false;
    }
    return tfc_bytes_append(b, "\"\n", 2, st);
}

static bool put_double(tfc_bytes *b, const char *field, double v, tfc_status *st) {
    char line[128];
    int n = snprintf(line, sizeof line, "%s: %.17g\n", field, v);
    return tfc_bytes_append(b, line, (size_t)n, st);
}

bool tfc_ckpt_state_write(const char *dir, const tfc_ckpt_state *s, tfc_status *st) {
    tfc_bytes b = {0};
    bool ok = put_quoted(&b, "model_checkpoint_path", s->model_checkpoint_path ? s->model_checkpoint_path : "", st);
    for (int i = 0; ok && i < s->n_paths; i++)
        ok = put_quoted(&b, "all_model_checkpoint_paths", s->all_model_checkpoint_paths[i], st);
    for (int i = 0; ok && i < s->n_timestamps; i++)
        ok = put_double(&b, "all_model_checkpoint_timestamps", s->all_model_checkpoint_timestamps[i], st);
    if (ok && s->last_preserved_timestamp != 0)
        ok = put_double(&b, "last_preserved_timestamp", s->last_preserved_timestamp, st);
    char *path = ok ? tfc_ckpt_join(dir, "checkpoint") : NULL;
    if (ok && !path) ok = tfc_status_oom(st, dir, strlen(dir));
    ok = ok && tfc_file_write_atomic(path, b.data ? (const char *)b.data : "", b.size, st);
    tfc_free(path);
    tfc_bytes_free(&b);
    return ok;
}

bool tfc_latest_checkpoint(const char *checkpoint_dir, char *out, size_t size, tfc_status *st) {
    tfc_ckpt_state s;
    if (!tfc_ckpt_state_read(checkpoint_dir, &s, st)) return false;
    bool ok = false;
    char *p = s.model_checkpoint_path && s.model_checkpoint_path[0] ? tfc_ckpt_join(checkpoint_dir, s.model_checkpoint_path)
                                                                   : NULL;
    if (!p) tfc_status_set(st, TFC_NOT_FOUND, "%s/checkpoint: no model_checkpoint_path", checkpoint_dir);
    else if (!tfc_ckpt_exists(p)) tfc_status_set(st, TFC_NOT_FOUND, "Couldn't match files for checkpoint %s", p);
    else if (strlen(p) >= size) tfc_status_set(st, TFC_OUT_OF_RANGE, "%s: path longer than %zu bytes", p, size);
    else {
        memcpy(out, p, strlen(p) + 1);
        ok = true;
        tfc_status_clear(st);
    }
    tfc_free(p);
    tfc_ckpt_state_free(&s);
    return ok;
}
