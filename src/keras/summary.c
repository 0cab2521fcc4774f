/* model.summary(): tf-keras's print_summary (layer_utils.py) character for character, without
 * expand_nested / show_trainable / layer_range. Sequential-like models (Sequential, subclassed, and
 * Functional chains without branches or shared layers) print 65-column tables; other Functional models
 * print 98 columns with "Connected to". */
#include <stdio.h>
#include <string.h>

#include "core/size_check.h"
#include "keras/model_internal.h"

#define MAX_COLS 4

/* A growable string. */
typedef struct {
    char *s;
    size_t n, cap;
    bool oom;
} sbuf;

static void sb_add(sbuf *b, const char *s, size_t n) {
    if (b->oom) return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 128;
        while (cap < b->n + n + 1) cap *= 2;
        char *p = tfc_realloc(b->s, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->s = p;
        b->cap = cap;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = 0;
}

static void sb_str(sbuf *b, const char *s) { sb_add(b, s, strlen(s)); }

static void sb_rep(sbuf *b, char c, long n) {
    for (long i = 0; i < n; i++) sb_add(b, &c, 1);
}

/* print_row: each column is cut to its width and continued on the next lines; a cut also happens after
 * "),", "},", "]," or "'," when one occurs in the part that fits. */
static void print_row(sbuf *out, const char *const *fields, int n, const int *positions) {
    const char *left[MAX_COLS];
    for (int i = 0; i < n; i++) left[i] = fields[i];
    for (;;) {
        bool any = false;
        for (int i = 0; i < n; i++) any = any || *left[i];
        if (!any) break;
        sbuf line = {0};
        for (int col = 0; col < n; col++) {
            int start = col > 0 ? positions[col - 1] : 0, end = positions[col];
            int space = col != n - 1 ? 2 : 0;
            long cutoff = end - start - space;
            if (col != n - 1) cutoff -= 1;
            size_t len = strlen(left[col]);
            size_t fit = cutoff < 0 ? 0 : ((size_t)cutoff < len ? (size_t)cutoff : len);
            static const char *const breaks[] = {"),", "},", "],", "',"};
            long best = -1;
            for (int k = 0; k < 4; k++) {
                const char *hit = NULL;
                for (size_t p = 0; p + 1 < fit && !hit; p++)
                    if (left[col][p] == breaks[k][0] && left[col][p + 1] == breaks[k][1]) hit = left[col] + p;
                if (hit) {
                    long c = (long)(hit - left[col]) + 2;
                    if (best < 0 || c < best) best = c;
                }
            }
            if (best >= 0) cutoff = best, fit = (size_t)best;
            if (col == 0) sb_str(&line, " ");
            sb_add(&line, left[col], fit);
            sb_rep(&line, ' ', space);
            /* left[col] = left[col][cutoff:] */
            left[col] += cutoff < 0 ? 0 : ((size_t)cutoff < len ? (size_t)cutoff : len);
            sb_rep(&line, ' ', (long)positions[col] - (long)line.n);
        }
        sb_str(&line, "\n");
        if (line.oom) out->oom = true;
        else sb_str(out, line.s);
        tfc_free(line.s);
    }
}

/* layer.output_shape as Keras prints it: the shape of its calls when they all agree ("multiple" otherwise or
 * when it was never called on Keras tensors); InputLayers and multi-output layers print a list. */
static void output_shape_str(const tfc_layer *l, char *buf, size_t size) {
    if (l->n_nodes == 0) {
        snprintf(buf, size, "multiple");
        return;
    }
    const tfc_knode *n0 = l->nodes[0];
    for (int i = 1; i < l->n_nodes; i++) {
        const tfc_knode *n = l->nodes[i];
        bool same = n->n_out == n0->n_out;
        for (int j = 0; j < n->n_out && same; j++) same = tfc_shape_equal(&n->out[j]->shape, &n0->out[j]->shape);
        if (!same) {
            snprintf(buf, size, "multiple");
            return;
        }
    }
    bool list = n0->n_out > 1 || n0->n_in == 0;
    size_t k = 0;
    if (list) k += (size_t)snprintf(buf + k, size - k, "[");
    for (int j = 0; j < n0->n_out && k < size; j++)
        k += (size_t)snprintf(buf + k, size - k, "%s%s", j ? ", " : "", TFC_KSHP(&n0->out[j]->shape));
    if (list && k < size) snprintf(buf + k, size - k, "]");
}

static bool node_in_model(const tfc_model *m, const tfc_knode *n) {
    for (int i = 0; i < m->n_order; i++)
        if (m->order[i] == n) return true;
    return false;
}

/* Keras treats a Functional model as sequential-like when every depth holds one node with at most one input
 * and no layer is called twice. */
static bool sequential_like(const tfc_model *m) {
    if (m->kind != TFC_MODEL_FUNCTIONAL) return true;
    const tfc_model_impl *impl = (const tfc_model_impl *)m;
    for (int i = 0; i < impl->n_plan; i++) {
        int count = 0;
        for (int j = 0; j < impl->n_plan; j++) count += impl->plan[j].depth == impl->plan[i].depth;
        if (count > 1 || impl->plan[i].node->n_in > 1) return false;
    }
    for (int i = 0; i < m->base.n_sublayers; i++) {
        const tfc_layer *l = m->base.sublayers[i];
        int in_model = 0;
        for (int j = 0; j < l->n_nodes; j++) in_model += node_in_model(m, l->nodes[j]);
        if (in_model > 1) return false;
    }
    return true;
}

/* Python's str() of the list of inbound tensors: ['dense[0][0]', 'b[0][0]'] */
static void connections_str(const tfc_model *m, const tfc_layer *l, sbuf *b) {
    sb_str(b, "[");
    bool first = true;
    for (int i = 0; i < l->n_nodes; i++) {
        const tfc_knode *n = l->nodes[i];
        if (!node_in_model(m, n)) continue;
        for (int j = 0; j < n->n_in; j++) {
            char e[300];
            snprintf(e, sizeof e, "%s'%s[%d][%d]'", first ? "" : ", ", n->in[j]->node->layer->name, n->in[j]->node->index,
                     n->in[j]->index);
            sb_str(b, e);
            first = false;
        }
    }
    sb_str(b, "]");
}

/* readable_memory_size: bytes in the largest unit below 1024 with two decimals ("212.54 KB"). */
static void memory_str(double bytes, char *buf, size_t size) {
    static const char *const units[] = {"Byte", "KB", "MB", "GB", "TB", "PB"};
    for (int i = 0; i < 6; i++) {
        if (bytes / 1024 < 1) {
            snprintf(buf, size, "%.2f %s", bytes, units[i]);
            return;
        }
        bytes /= 1024;
    }
    snprintf(buf, size, "%.2f %s", bytes, units[5]);
}

static void count_weights(tfc_variable **v, int n, int64_t *count, double *bytes) {
    *count = 0;
    *bytes = 0;
    for (int i = 0; i < n; i++) {
        const tfc_shape *s = tfc_variable_shape(v[i]);
        int64_t e = tfc_shape_product(s); /* a variable's value exists */
        *count += e;
        *bytes += (double)e * (double)tfc_dtype_size(tfc_variable_dtype(v[i]));
    }
}

static bool totals(const tfc_model *m, sbuf *out, int line_length, tfc_status *st) {
    int nt = tfc_layer_trainable_weights(&m->base, NULL, 0), nn = tfc_layer_non_trainable_weights(&m->base, NULL, 0);
    tfc_variable **v = tfc_malloc((size_t)(nt + nn + 1) * sizeof *v);
    if (!v) return tfc_status_oom(st, "summary", 0);
    int64_t ct, cn;
    double bt, bn;
    tfc_layer_trainable_weights(&m->base, v, nt);
    count_weights(v, nt, &ct, &bt);
    tfc_layer_non_trainable_weights(&m->base, v, nn);
    count_weights(v, nn, &cn, &bn);
    tfc_free(v);
    char mt[64], mtr[64], mn[64], line[160];
    memory_str(bt + bn, mt, sizeof mt);
    memory_str(bt, mtr, sizeof mtr);
    memory_str(bn, mn, sizeof mn);
    snprintf(line, sizeof line, "Total params: %lld (%s)\n", (long long)(ct + cn), mt);
    sb_str(out, line);
    snprintf(line, sizeof line, "Trainable params: %lld (%s)\n", (long long)ct, mtr);
    sb_str(out, line);
    snprintf(line, sizeof line, "Non-trainable params: %lld (%s)\n", (long long)cn, mn);
    sb_str(out, line);
    sb_rep(out, '_', line_length);
    sb_str(out, "\n");
    return true;
}

bool tfc_model_summary(tfc_model *m, FILE *outf, tfc_status *st) {
    if (!m) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "summary: NULL model");
    tfc_model_impl *impl = TFC_IMPL(m);
    if (impl->deferred.code != TFC_OK) return tfc_status_set(st, impl->deferred.code, "%s", impl->deferred.msg);
    bool built = m->kind == TFC_MODEL_SUBCLASSED ? m->base.built : impl->plan != NULL;
    if (!built)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "This model has not yet been built. Build the model first by calling `build()` or by "
                              "calling the model on a batch of data. (model \"%s\")",
                              m->base.name);
    bool seq = sequential_like(m);
    int line_length = seq ? 65 : 98, n_cols = seq ? 3 : 4;
    int positions[MAX_COLS];
    static const double seq_pos[] = {0.45, 0.85, 1.0}, func_pos[] = {0.3, 0.6, 0.70, 1.0};
    for (int i = 0; i < n_cols; i++) positions[i] = (int)(line_length * (seq ? seq_pos[i] : func_pos[i]));
    sbuf out = {0};
    char line[300];
    snprintf(line, sizeof line, "Model: \"%s\"\n", m->base.name);
    sb_str(&out, line);
    sb_rep(&out, '_', line_length);
    sb_str(&out, "\n");
    static const char *const header[] = {"Layer (type)", "Output Shape", "Param #", "Connected to"};
    print_row(&out, header, n_cols, positions);
    sb_rep(&out, '=', line_length);
    sb_str(&out, "\n");
    for (int i = 0; i < m->base.n_sublayers; i++) {
        const tfc_layer *l = m->base.sublayers[i];
        char name[300], shape[512], params[64];
        snprintf(name, sizeof name, "%s (%s)", l->name, l->cls->class_name);
        output_shape_str(l, shape, sizeof shape);
        if (seq && !l->built && !(l->is_model && ((const tfc_model_impl *)l)->plan))
            snprintf(params, sizeof params, "0 (unused)");
        else
            snprintf(params, sizeof params, "%lld", (long long)tfc_layer_count_params(l));
        sbuf conn = {0};
        if (!seq) connections_str(m, l, &conn);
        const char *fields[MAX_COLS] = {name, shape, params, conn.s ? conn.s : "[]"};
        print_row(&out, fields, n_cols, positions);
        tfc_free(conn.s);
        sb_rep(&out, ' ', line_length);
        sb_str(&out, "\n");
    }
    sb_rep(&out, '=', line_length);
    sb_str(&out, "\n");
    bool ok = totals(m, &out, line_length, st);
    if (ok && out.oom) ok = tfc_status_oom(st, "summary", out.cap);
    if (ok) {
        FILE *f = outf ? outf : stdout;
        fputs(out.s, f);
        fflush(f);
        tfc_status_clear(st);
    }
    tfc_free(out.s);
    return ok;
}
