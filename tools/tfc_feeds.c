/* Inputs and outputs of the run commands, in saved_model_cli's syntax: --inputs 'key=file.npy;key2=file2.npy',
 * --input_exprs 'key=[[1.0, 2.0]];key2=3;key3=np.ones((2,3))' (numeric literals, nested lists, np.ones/np.zeros), and results written as
 * <outdir>/<output_key>.npy, refusing to replace a file without --overwrite. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "platform/files.h"
#include "tfc/npy.h"
#include "tfc_tools.h"

int tfc_tool_parse_pairs(char *s, tfc_tool_pair *out, int max, const char *prog, const char *flag) {
    int n = 0;
    for (char *p = s; p && *p;) {
        char *next = strchr(p, ';');
        if (next) *next++ = 0;
        if (*p) {
            char *eq = strchr(p, '=');
            if (!eq || eq == p || !eq[1]) {
                fprintf(stderr, "%s: %s entry '%s' is not <input_key>=<value>\n", prog, flag, p);
                return -1;
            }
            if (n == max) {
                fprintf(stderr, "%s: more than %d %s entries\n", prog, max, flag);
                return -1;
            }
            *eq = 0;
            out[n++] = (tfc_tool_pair){p, eq + 1};
        }
        p = next;
    }
    return n;
}

/* ---- literals: nested lists of numbers ---- */

typedef struct {
    const char *p;
    double *vals;
    int64_t n, cap;
    int64_t dims[TFC_MAX_RANK];
    int rank;      /* -1 until the first scalar fixes it */
    bool bad;
} lit;

static void skip_ws(lit *l) {
    while (isspace((unsigned char)*l->p)) l->p++;
}

static void parse_value(lit *l, int depth) {
    skip_ws(l);
    if (*l->p == '[' || *l->p == '(') {
        const char close = *l->p == '[' ? ']' : ')';
        l->p++;
        if (depth >= TFC_MAX_RANK) {
            l->bad = true;
            return;
        }
        int64_t count = 0;
        skip_ws(l);
        while (!l->bad && *l->p && *l->p != close) {
            parse_value(l, depth + 1);
            count++;
            skip_ws(l);
            if (*l->p == ',') l->p++, skip_ws(l);
        }
        if (*l->p != close) l->bad = true;
        else l->p++;
        if (l->rank < 0) l->rank = depth + 1; /* an empty list: rank stops here */
        if (depth < l->rank && l->dims[depth] < 0) l->dims[depth] = count;
        else if (depth >= l->rank || l->dims[depth] != count) l->bad = true; /* ragged */
        return;
    }
    char *end;
    errno = 0;
    double v = strtod(l->p, &end);
    if (end == l->p) {
        if (!strncmp(l->p, "True", 4)) v = 1, end = (char *)l->p + 4;
        else if (!strncmp(l->p, "False", 5)) v = 0, end = (char *)l->p + 5;
        else {
            l->bad = true;
            return;
        }
    }
    l->p = end;
    if (l->rank < 0) l->rank = depth;
    if (depth != l->rank) l->bad = true;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        double *nv = realloc(l->vals, (size_t)l->cap * sizeof *nv);
        if (!nv) {
            l->bad = true;
            return;
        }
        l->vals = nv;
    }
    l->vals[l->n++] = v;
}

/* np.ones(SHAPE) / np.zeros(SHAPE) (also numpy.), SHAPE an int or a tuple/list of ints: saved_model_cli's
 * documented --input_exprs forms besides literals. NULL (st untouched) when expr is not one. */
static tfc_tensor *numpy_fill(const char *expr, tfc_dtype dtype, tfc_status *st) {
    const char *p = expr;
    while (isspace((unsigned char)*p)) p++;
    if (!strncmp(p, "numpy.", 6)) p += 6;
    else if (!strncmp(p, "np.", 3)) p += 3;
    else return NULL;
    double v;
    if (!strncmp(p, "ones(", 5)) v = 1, p += 5;
    else if (!strncmp(p, "zeros(", 6)) v = 0, p += 6;
    else return NULL;
    int64_t dims[TFC_MAX_RANK];
    int rank = 0;
    while (isspace((unsigned char)*p)) p++;
    const bool seq = *p == '(' || *p == '[';
    if (seq) p++;
    for (;;) {
        while (isspace((unsigned char)*p) || (rank && *p == ',')) p++;
        if (*p == ')' || *p == ']') break;
        char *end;
        long long d = strtoll(p, &end, 10);
        if (end == p || d < 0 || rank == TFC_MAX_RANK) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "'%s': bad shape", expr), NULL;
        dims[rank++] = d;
        p = end;
        if (!seq) break;
    }
    if (seq) p++;
    while (isspace((unsigned char)*p)) p++;
    if (*p != ')' || p[1]) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "'%s': expected np.ones(shape) or np.zeros(shape)", expr), NULL;
    tfc_tensor *t = tfc_tensor_new(dtype, dims, rank, st);
    if (t && v != 0) {
        void *data = tfc_tensor_mutable_data(t);
        for (int64_t i = 0; i < tfc_tensor_num_elements(t); i++) tfc_dtype_set_f64(dtype, data, i, v);
    }
    return t;
}

tfc_tensor *tfc_tool_parse_literal(const char *expr, tfc_dtype dtype, tfc_status *st) {
    tfc_tensor *filled = numpy_fill(expr, dtype, st);
    if (filled || st->code != TFC_OK) return filled;
    lit l = {.p = expr, .rank = -1};
    for (int d = 0; d < TFC_MAX_RANK; d++) l.dims[d] = -1;
    parse_value(&l, 0);
    skip_ws(&l);
    tfc_tensor *t = NULL;
    if (l.bad || *l.p || l.rank < 0) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "'%s' is not a number or a (nested) list of numbers", expr);
    } else if ((t = tfc_tensor_new(dtype, l.dims, l.rank, st))) {
        void *data = tfc_tensor_mutable_data(t);
        for (int64_t i = 0; i < l.n; i++) tfc_dtype_set_f64(dtype, data, i, l.vals[i]);
    }
    free(l.vals);
    return t;
}

/* ---- outputs ---- */

bool tfc_tool_output_paths(const char *prog, const char *outdir, const char *const *keys, int n, bool overwrite,
                           char (*paths)[4096]) {
    for (int o = 0; o < n; o++) {
        if ((size_t)snprintf(paths[o], 4096, "%s/%s.npy", outdir, keys[o]) >= 4096) {
            fprintf(stderr, "%s: output path too long\n", prog);
            return false;
        }
        struct stat sb;
        if (!overwrite && stat(paths[o], &sb) == 0) {
            fprintf(stderr, "%s: Output file %s already exists. Add \"--overwrite\" to overwrite the existing output "
                    "files.\n", prog, paths[o]);
            return false;
        }
    }
    tfc_status st = TFC_STATUS_INIT;
    if (n && !tfc_make_dirs(outdir, "--outdir", &st)) {
        fprintf(stderr, "%s: %s\n", prog, st.msg);
        return false;
    }
    return true;
}
