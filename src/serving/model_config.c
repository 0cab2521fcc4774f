/* The --model_config_file text proto (tensorflow_serving/config/model_server_config.proto, protobuf TextFormat):
 *   model_config_list { config { name: "a" base_path: "/m/a" model_platform: "tensorflow"
 *                                model_version_policy { specific { versions: 1 versions: 2 } }
 *                                version_labels { key: "stable" value: 1 } } ... }
 * A small recursive-descent reader over the fields tfc serves; nesting is bounded by the grammar itself (the
 * deepest message is 4 levels), so hostile input cannot recurse deeply. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serving/servable.h"
#include "tfc/platform.h"

typedef struct reader {
    const char *p, *end, *start;
    tfc_status *st;
} reader;

static bool fail(reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool fail(reader *r, const char *fmt, ...) {
    int line = 1, col = 1;
    for (const char *q = r->start; q < r->p && q < r->end; q++) {
        if (*q == '\n') line++, col = 1;
        else col++;
    }
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tfc_status_set(r->st, TFC_INVALID_ARGUMENT, "model config: line %d column %d: %s", line, col, msg);
}

static void skip(reader *r) {
    while (r->p < r->end) {
        if (isspace((unsigned char)*r->p)) r->p++;
        else if (*r->p == '#')
            while (r->p < r->end && *r->p != '\n') r->p++;
        else break;
    }
}

static bool peek(reader *r, char c) {
    skip(r);
    return r->p < r->end && *r->p == c;
}

/* A field name into buf. */
static bool ident(reader *r, char *buf, size_t size) {
    skip(r);
    size_t n = 0;
    while (r->p < r->end && (isalnum((unsigned char)*r->p) || *r->p == '_')) {
        if (n + 1 >= size) return fail(r, "field name too long");
        buf[n++] = *r->p++;
    }
    buf[n] = 0;
    return n ? true : fail(r, "expected a field name");
}

/* After a field name: ':' then a scalar, or an optional ':' then '{' / '<'. Returns the closing char for a
 * message ('}' or '>'), or 0 for a scalar (r->p at the value). */
static bool open_field(reader *r, bool message, char *close) {
    bool colon = peek(r, ':');
    if (colon) r->p++;
    skip(r);
    if (!message) {
        *close = 0;
        return colon ? true : fail(r, "expected ':'");
    }
    if (r->p < r->end && (*r->p == '{' || *r->p == '<')) {
        *close = *r->p++ == '{' ? '}' : '>';
        return true;
    }
    return fail(r, "expected '{'");
}

static void separator(reader *r) {
    if (peek(r, ';') || peek(r, ',')) r->p++;
}

/* A quoted string (C escapes, adjacent strings concatenated); new string in *out. */
static bool string_value(reader *r, char **out) {
    size_t cap = 32, n = 0;
    char *s = tfc_malloc(cap);
    if (!s) return tfc_status_oom(r->st, "model config", cap);
    skip(r);
    if (r->p >= r->end || (*r->p != '"' && *r->p != '\'')) {
        tfc_free(s);
        return fail(r, "expected a string");
    }
    while (r->p < r->end && (*r->p == '"' || *r->p == '\'')) {
        char q = *r->p++;
        while (r->p < r->end && *r->p != q && *r->p != '\n') {
            char c = *r->p++;
            if (c == '\\' && r->p < r->end) {
                c = *r->p++;
                switch (c) {
                case 'n': c = '\n'; break;
                case 't': c = '\t'; break;
                case 'r': c = '\r'; break;
                case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': {
                    int v = c - '0';
                    for (int k = 0; k < 2 && r->p < r->end && *r->p >= '0' && *r->p <= '7'; k++) v = v * 8 + *r->p++ - '0';
                    c = (char)v;
                    break;
                }
                default: break; /* \" \' \\ and the rest stand for themselves */
                }
            }
            if (n + 2 > cap) {
                char *g = tfc_realloc(s, cap *= 2);
                if (!g) {
                    tfc_free(s);
                    return tfc_status_oom(r->st, "model config", cap);
                }
                s = g;
            }
            s[n++] = c;
        }
        if (r->p >= r->end || *r->p != q) {
            tfc_free(s);
            return fail(r, "unterminated string");
        }
        r->p++;
        skip(r);
    }
    s[n] = 0;
    if (strlen(s) != n) {
        tfc_free(s);
        return fail(r, "string holds a NUL byte");
    }
    *out = s;
    return true;
}

static bool int_value(reader *r, int64_t *out) {
    skip(r);
    const char *b = r->p;
    if (r->p < r->end && (*r->p == '-' || *r->p == '+')) r->p++;
    while (r->p < r->end && isdigit((unsigned char)*r->p)) r->p++;
    char buf[32];
    size_t n = (size_t)(r->p - b);
    if (!n || n >= sizeof buf || !isdigit((unsigned char)b[n - 1])) return fail(r, "expected an integer");
    memcpy(buf, b, n);
    buf[n] = 0;
    errno = 0;
    long long v = strtoll(buf, NULL, 10);
    if (errno) return fail(r, "integer %s out of range", buf);
    *out = v;
    return true;
}

/* Skips the rest of a message we read but do not use (logging_config, ...), bounded in depth. */
static bool skip_message(reader *r, char close) {
    int depth = 1;
    while (r->p < r->end && depth > 0) {
        char c = *r->p;
        if (c == '"' || c == '\'') {
            char *s = NULL;
            if (!string_value(r, &s)) return false;
            tfc_free(s);
            continue;
        }
        if (c == '#') {
            skip(r);
            continue;
        }
        if (c == '{' || c == '<') depth++;
        if (c == '}' || c == '>') depth--;
        r->p++;
    }
    (void)close;
    return depth == 0 ? true : fail(r, "unterminated message");
}

static bool add_i64(int64_t **a, int *n, int64_t v, tfc_status *st) {
    int64_t *g = tfc_realloc(*a, ((size_t)*n + 1) * sizeof *g);
    if (!g) return tfc_status_oom(st, "model config", 8);
    g[(*n)++] = v;
    *a = g;
    return true;
}

static bool policy(reader *r, tfc_srv_model_config *c, char close) {
    char name[64], cl;
    while (!peek(r, close)) {
        if (!ident(r, name, sizeof name) || !open_field(r, true, &cl)) return false;
        if (!strcmp(name, "latest")) {
            c->policy = TFC_SRV_POLICY_LATEST;
            while (!peek(r, cl)) {
                char f[64];
                int64_t v;
                char x;
                if (!ident(r, f, sizeof f)) return false;
                if (strcmp(f, "num_versions")) return fail(r, "unknown field '%s' in latest", f);
                if (!open_field(r, false, &x) || !int_value(r, &v)) return false;
                if (v < 1 || v > 1000000) return fail(r, "latest.num_versions %lld must be in [1, 1000000]", (long long)v);
                c->num_versions = v;
                separator(r);
            }
        } else if (!strcmp(name, "all")) {
            c->policy = TFC_SRV_POLICY_ALL;
            if (!peek(r, cl)) return fail(r, "'all' takes no fields");
        } else if (!strcmp(name, "specific")) {
            c->policy = TFC_SRV_POLICY_SPECIFIC;
            while (!peek(r, cl)) {
                char f[64], x;
                int64_t v;
                if (!ident(r, f, sizeof f)) return false;
                if (strcmp(f, "versions")) return fail(r, "unknown field '%s' in specific", f);
                if (!open_field(r, false, &x)) return false;
                if (peek(r, '[')) { /* versions: [1, 2] */
                    r->p++;
                    while (!peek(r, ']')) {
                        if (!int_value(r, &v) || !add_i64(&c->versions, &c->n_versions, v, r->st)) return false;
                        if (peek(r, ',')) r->p++;
                        else if (!peek(r, ']')) return fail(r, "expected ',' or ']'");
                    }
                    r->p++;
                } else if (!int_value(r, &v) || !add_i64(&c->versions, &c->n_versions, v, r->st)) {
                    return false;
                }
                separator(r);
            }
            if (!c->n_versions) return fail(r, "model '%s': specific policy lists no version", c->name ? c->name : "");
        } else {
            return fail(r, "unknown field '%s' in model_version_policy", name);
        }
        r->p++; /* cl */
        separator(r);
    }
    return true;
}

static bool label_entry(reader *r, tfc_srv_model_config *c, char close) {
    char *key = NULL, f[64], x;
    int64_t value = -1;
    bool has_value = false;
    while (!peek(r, close)) {
        if (!ident(r, f, sizeof f) || !open_field(r, false, &x)) goto fail;
        if (!strcmp(f, "key")) {
            tfc_free(key);
            key = NULL;
            if (!string_value(r, &key)) goto fail;
        } else if (!strcmp(f, "value")) {
            if (!int_value(r, &value)) goto fail;
            has_value = true;
        } else {
            fail(r, "unknown field '%s' in version_labels", f);
            goto fail;
        }
        separator(r);
    }
    if (!key || !*key || !has_value || value < 0) {
        fail(r, "version_labels needs a non-empty key and a version >= 0");
        goto fail;
    }
    for (int i = 0; i < c->n_labels; i++)
        if (!strcmp(c->labels[i].label, key)) {
            fail(r, "model '%s': label '%s' given twice", c->name ? c->name : "", key);
            goto fail;
        }
    tfc_srv_label *g = tfc_realloc(c->labels, ((size_t)c->n_labels + 1) * sizeof *g);
    if (!g) {
        tfc_status_oom(r->st, "model config", 16);
        goto fail;
    }
    c->labels = g;
    g[c->n_labels++] = (tfc_srv_label){key, value};
    return true;
fail:
    tfc_free(key);
    return false;
}

static bool model_config(reader *r, tfc_srv_config *out, char close) {
    tfc_srv_model_config *g = tfc_realloc(out->models, ((size_t)out->n_models + 1) * sizeof *g);
    if (!g) return tfc_status_oom(r->st, "model config", sizeof *g);
    out->models = g;
    tfc_srv_model_config *c = &g[out->n_models++];
    *c = (tfc_srv_model_config){.num_versions = 1};
    char f[64], cl;
    while (!peek(r, close)) {
        if (!ident(r, f, sizeof f)) return false;
        char **str = !strcmp(f, "name") ? &c->name : !strcmp(f, "base_path") ? &c->base_path
                   : !strcmp(f, "model_platform") ? &c->platform : NULL;
        if (str) {
            tfc_free(*str);
            *str = NULL;
            if (!open_field(r, false, &cl) || !string_value(r, str)) return false;
        } else if (!strcmp(f, "model_version_policy")) {
            if (!open_field(r, true, &cl) || !policy(r, c, cl)) return false;
            r->p++;
        } else if (!strcmp(f, "version_labels")) {
            if (!open_field(r, true, &cl) || !label_entry(r, c, cl)) return false;
            r->p++;
        } else if (!strcmp(f, "logging_config")) {
            if (!open_field(r, true, &cl) || !skip_message(r, cl)) return false;
        } else if (!strcmp(f, "model_type")) {
            if (!open_field(r, false, &cl) || !ident(r, f, sizeof f)) return false;
        } else if (!strcmp(f, "custom_model_config")) {
            return tfc_status_set(r->st, TFC_UNIMPLEMENTED, "model config: custom_model_config is not supported");
        } else {
            return fail(r, "unknown field '%s' in config", f);
        }
        separator(r);
    }
    r->p++;
    if (!c->name || !*c->name) return fail(r, "a config has no name");
    if (!c->base_path || !*c->base_path) return fail(r, "model '%s' has no base_path", c->name);
    for (int i = 0; i + 1 < out->n_models; i++)
        if (!strcmp(out->models[i].name, c->name)) return fail(r, "model name '%s' appears twice", c->name);
    return true;
}

bool tfc_srv_config_parse(const char *text, size_t len, tfc_srv_config *out, tfc_status *st) {
    memset(out, 0, sizeof *out);
    reader r = {text, text + len, text, st};
    char f[64], cl;
    bool ok = true;
    bool seen_list = false;
    while (ok && (skip(&r), r.p < r.end)) {
        if (!ident(&r, f, sizeof f)) ok = false;
        else if (!strcmp(f, "model_config_list")) {
            if (seen_list) {
                ok = fail(&r, "model_config_list given twice");
                break;
            }
            seen_list = true;
            if (!open_field(&r, true, &cl)) ok = false;
            while (ok && !peek(&r, cl)) {
                char g[64], c2;
                if (r.p >= r.end) ok = fail(&r, "unterminated model_config_list");
                else if (!ident(&r, g, sizeof g)) ok = false;
                else if (strcmp(g, "config")) ok = fail(&r, "unknown field '%s' in model_config_list", g);
                else ok = open_field(&r, true, &c2) && model_config(&r, out, c2);
                if (ok) separator(&r);
            }
            if (ok) r.p++;
        } else if (!strcmp(f, "custom_model_config")) {
            ok = tfc_status_set(st, TFC_UNIMPLEMENTED, "model config: custom_model_config is not supported");
        } else {
            ok = fail(&r, "unknown field '%s' in ModelServerConfig", f);
        }
        if (ok) separator(&r);
    }
    if (ok && !out->n_models) ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "model config: no model is configured");
    if (!ok) {
        tfc_srv_config_clear(out);
        return false;
    }
    tfc_status_clear(st);
    return true;
}

static bool bool_value(reader *r, bool *out) {
    char w[16];
    if (!ident(r, w, sizeof w)) return false;
    if (!strcmp(w, "true") || !strcmp(w, "True") || !strcmp(w, "t") || !strcmp(w, "1")) *out = true;
    else if (!strcmp(w, "false") || !strcmp(w, "False") || !strcmp(w, "f") || !strcmp(w, "0")) *out = false;
    else return fail(r, "expected true or false, got '%s'", w);
    return true;
}

bool tfc_srv_monitoring_parse(const char *text, size_t len, bool *enable, char *path, size_t path_size,
                              tfc_status *st) {
    reader r = {text, text + len, text, st};
    *enable = false;
    snprintf(path, path_size, "/monitoring/prometheus/metrics");
    char f[64], cl;
    while (skip(&r), r.p < r.end) {
        if (!ident(&r, f, sizeof f)) return false;
        if (strcmp(f, "prometheus_config")) return fail(&r, "unknown field '%s' in MonitoringConfig", f);
        if (!open_field(&r, true, &cl)) return false;
        while (!peek(&r, cl)) {
            char g[64], x;
            if (!ident(&r, g, sizeof g) || !open_field(&r, false, &x)) return false;
            if (!strcmp(g, "enable")) {
                if (!bool_value(&r, enable)) return false;
            } else if (!strcmp(g, "path")) {
                char *s = NULL;
                if (!string_value(&r, &s)) return false;
                bool ok = s[0] == '/' && strlen(s) < path_size;
                if (ok) snprintf(path, path_size, "%s", s);
                tfc_free(s);
                if (!ok) return fail(&r, "prometheus_config.path must start with '/' (and be short)");
            } else {
                return fail(&r, "unknown field '%s' in prometheus_config", g);
            }
            separator(&r);
        }
        r.p++;
        separator(&r);
    }
    tfc_status_clear(st);
    return true;
}

/* `name { value: N }` (a google.protobuf wrapper) or `name: N`. */
static bool wrapped_int(reader *r, int64_t *out) {
    skip(r);
    if (r->p < r->end && *r->p == ':') r->p++;
    skip(r);
    if (r->p < r->end && (*r->p == '{' || *r->p == '<')) {
        char close = *r->p++ == '{' ? '}' : '>', f[16], x;
        if (!ident(r, f, sizeof f) || strcmp(f, "value")) return fail(r, "expected 'value'");
        if (!open_field(r, false, &x) || !int_value(r, out)) return false;
        separator(r);
        if (!peek(r, close)) return fail(r, "expected '%c'", close);
        r->p++;
        return true;
    }
    return int_value(r, out);
}

bool tfc_srv_batching_parse(const char *text, size_t len, tfc_srv_batching_opts *out, tfc_status *st) {
    memset(out, 0, sizeof *out);
    reader r = {text, text + len, text, st};
    char f[64];
    while (skip(&r), r.p < r.end) {
        int64_t v = 0;
        if (!ident(&r, f, sizeof f)) return false;
        if (!strcmp(f, "thread_pool_name")) {
            char *s = NULL, x;
            if (!open_field(&r, false, &x) || !string_value(&r, &s)) return false;
            tfc_free(s);
        } else if (!strcmp(f, "pad_variable_length_inputs")) {
            skip(&r);
            if (r.p < r.end && *r.p == ':') r.p++;
            bool b;
            if (!bool_value(&r, &b)) return false;
        } else {
            if (!wrapped_int(&r, &v)) return false;
            if (v < 0 || v > (INT64_C(1) << 40)) return fail(&r, "%s: %lld out of range", f, (long long)v);
            if (!strcmp(f, "max_batch_size")) out->max_batch_size = v;
            else if (!strcmp(f, "batch_timeout_micros")) out->batch_timeout_micros = v;
            else if (!strcmp(f, "max_enqueued_batches")) out->max_enqueued_batches = v;
            else if (!strcmp(f, "num_batch_threads")) {
                if (v > 1024) return fail(&r, "num_batch_threads %lld is more than 1024", (long long)v);
                out->num_batch_threads = (int)v;
            } else if (!strcmp(f, "allowed_batch_sizes")) {
                if (out->n_allowed == 64) return fail(&r, "more than 64 allowed_batch_sizes");
                if (v < 1 || (out->n_allowed && v <= out->allowed_batch_sizes[out->n_allowed - 1]))
                    return fail(&r, "allowed_batch_sizes must be positive and increasing (%lld)", (long long)v);
                out->allowed_batch_sizes[out->n_allowed++] = v;
            } else {
                return fail(&r, "unknown field '%s' in BatchingParameters", f);
            }
        }
        separator(&r);
    }
    const int64_t max = out->max_batch_size ? out->max_batch_size : 1000;
    if (out->max_batch_size > 1000000)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "batching parameters: max_batch_size %lld is more than "
                              "1000000", (long long)out->max_batch_size);
    if (out->n_allowed && out->allowed_batch_sizes[out->n_allowed - 1] != max)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "batching parameters: the last entry in allowed_batch_sizes "
                              "(%lld) must equal max_batch_size (%lld)",
                              (long long)out->allowed_batch_sizes[out->n_allowed - 1], (long long)max);
    tfc_status_clear(st);
    return true;
}
