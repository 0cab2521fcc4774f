/* Softmax, LogSoftmax and the softmax cross-entropy losses over the last axis. Every row subtracts its
 * maximum before exponentiating, so logits of any magnitude give finite results (1e4 included); log-sums
 * are formed as (x - max) - log(sum), never by adding a large max back. Rows run in parallel; float32
 * rows run the SIMD kernels of nn_simd.inc; half/bfloat16 are widened to float32. */
#include <stdio.h>

#include "kernels/cpu/nn_internal.h"

/* ---- row kernels (y may alias x) ---- */

static void softmax_row_f64(const double *x, double *y, int64_t n, bool log_out) {
    if (n == 0) return;
    double m = -INFINITY, s = 0;
    for (int64_t i = 0; i < n; i++) m = x[i] > m ? x[i] : m;
    if (!log_out) {
        for (int64_t i = 0; i < n; i++) s += (y[i] = exp(x[i] - m));
        double inv = 1.0 / s;
        for (int64_t i = 0; i < n; i++) y[i] *= inv;
        return;
    }
    for (int64_t i = 0; i < n; i++) s += exp(x[i] - m);
    double ls = log(s);
    for (int64_t i = 0; i < n; i++) y[i] = (x[i] - m) - ls;
}

/* ---- short float32 rows ----
 * For rows of a few classes (a 10-way classifier's [batch, 10] logits), one kernel call per row spends more
 * in the call, the partial-vector tail and the horizontal sum than in the arithmetic. These work on a block
 * of rows instead: each row's maximum, t = x - max written to y, ONE exponential pass over the whole block
 * (the table's exp_sub_sum with m = 0, the same exp as the row kernels: t - 0 == t), then each row's sum
 * (in class order) and its scaling. The exponentials are bit-identical to the row kernels'; a sum may
 * differ from theirs in the last place (theirs adds vector lanes first). */
#define SHORT_ROW 32  /* classes up to which rows take the block path */
#define SHORT_BLOCK 64 /* rows per exponential pass: 64 x 32 floats stay in L1 */

static float row_max(const float *x, int64_t n) {
    float m = -INFINITY;
    for (int64_t c = 0; c < n; c++) m = x[c] > m ? x[c] : m; /* NaN ignored, as the row kernels */
    return m;
}

/* y[r] = exp(x[r] - max_r) for rows [0, rows) of n (y may alias x); maxima in m, sums in s. */
static void exp_rows_short(const tfc_nn_simd *simd, const float *x, float *y, int64_t rows, int64_t n, float *m,
                           float *s) {
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * n;
        float *yr = y + r * n, mr = row_max(xr, n);
        m[r] = mr;
        for (int64_t c = 0; c < n; c++) yr[c] = xr[c] - mr;
    }
    simd->exp_sub_sum(y, y, rows * n, 0.0f);
    for (int64_t r = 0; r < rows; r++) {
        const float *yr = y + r * n;
        float sr = 0;
        for (int64_t c = 0; c < n; c++) sr += yr[c];
        s[r] = sr;
    }
}

/* Softmax (not log-softmax: that needs x - max after the exponentials) of rows [begin, end). */
static void softmax_rows_short(const tfc_nn_simd *simd, const float *x, float *y, int64_t n, int64_t begin,
                               int64_t end) {
    float m[SHORT_BLOCK], s[SHORT_BLOCK];
    for (int64_t b = begin; b < end; b += SHORT_BLOCK) {
        int64_t rows = end - b < SHORT_BLOCK ? end - b : SHORT_BLOCK;
        float *yb = y + b * n;
        exp_rows_short(simd, x + b * n, yb, rows, n, m, s);
        for (int64_t r = 0; r < rows; r++) {
            float inv = 1.0f / s[r], *yr = yb + r * n;
            for (int64_t c = 0; c < n; c++) yr[c] *= inv;
        }
    }
}

/* Sparse cross-entropy of rows [begin, end): back = softmax(f) - onehot(label), loss = log(sum) - (f[label] -
 * max), as simd_sparse_xent_row. */
static void sxent_rows_short(const tfc_nn_simd *simd, const float *f, const int64_t *labels, float *loss,
                             float *back, int64_t n, int64_t begin, int64_t end) {
    float m[SHORT_BLOCK], s[SHORT_BLOCK];
    for (int64_t b = begin; b < end; b += SHORT_BLOCK) {
        int64_t rows = end - b < SHORT_BLOCK ? end - b : SHORT_BLOCK;
        float *yb = back + b * n;
        exp_rows_short(simd, f + b * n, yb, rows, n, m, s);
        for (int64_t r = 0; r < rows; r++) {
            float inv = 1.0f / s[r], *yr = yb + r * n;
            int64_t lab = labels[b + r];
            for (int64_t c = 0; c < n; c++) yr[c] *= inv;
            yr[lab] -= 1.0f;
            loss[b + r] = logf(s[r]) - (f[(b + r) * n + lab] - m[r]);
        }
    }
}

typedef struct {
    tfc_dtype dt;
    const tfc_nn_simd *simd;
    int64_t rows, n;
    const void *x;
    void *y;
    float *scratch; /* half/bfloat16: rows * n floats */
    bool log_out;
} softmax_job;

static void softmax_rows(void *arg, int64_t begin, int64_t end) {
    const softmax_job *j = arg;
    int64_t n = j->n;
    if (j->dt == TFC_FLOAT && !j->log_out && n <= SHORT_ROW) {
        softmax_rows_short(j->simd, j->x, j->y, n, begin, end);
        return;
    }
    for (int64_t r = begin; r < end; r++) {
        switch (j->dt) {
        case TFC_FLOAT: j->simd->softmax_row((const float *)j->x + r * n, (float *)j->y + r * n, n, j->log_out); break;
        case TFC_DOUBLE: softmax_row_f64((const double *)j->x + r * n, (double *)j->y + r * n, n, j->log_out); break;
        default: {
            float *buf = j->scratch + r * n;
            nn_widen(j->dt, (const uint16_t *)j->x + r * n, buf, n);
            j->simd->softmax_row(buf, buf, n, j->log_out);
            nn_narrow(j->dt, buf, (uint16_t *)j->y + r * n, n);
        }
        }
    }
}

static bool softmax_run(tfc_kernel_ctx *k, bool log_out, tfc_status *st) {
    const tfc_tensor *x = k->in[0];
    softmax_job j = {.dt = x->dtype, .simd = tfc_nn_simd_get(), .x = x->data, .y = k->out[0]->data, .log_out = log_out};
    if (j.dt != TFC_FLOAT && j.dt != TFC_DOUBLE && !nn_is_half(j.dt)) return tfc_kernel_unimplemented(k, j.dt, st);
    j.n = x->shape.dims[x->shape.rank - 1];
    if (x->num_elements == 0) return true;
    j.rows = x->num_elements / j.n;
    if (nn_is_half(j.dt) && !(j.scratch = tfc_nn_scratch(k, x->num_elements, st))) return false;
    tfc_parallel_for(k->pool, j.rows, j.n * 12, softmax_rows, &j);
    tfc_free(j.scratch);
    return true;
}

bool tfc_nn_softmax(tfc_kernel_ctx *k, tfc_status *st) { return softmax_run(k, false, st); }
bool tfc_nn_log_softmax(tfc_kernel_ctx *k, tfc_status *st) { return softmax_run(k, true, st); }

/* ---- SoftmaxCrossEntropyWithLogits ----
 * features and labels broadcast to [batch, classes]; each is addressed through (row, column) strides
 * that are 0 along broadcast dimensions. loss[b] = sum_c labels * (logsumexp - logits),
 * backprop = softmax(logits) - labels. */

typedef struct {
    const tfc_nn_simd *simd;
    int64_t batch, classes;
    int64_t fr, fc, lr, lc; /* element strides of features / labels per row and per class */
    const void *f, *l;
    void *loss, *back;
    tfc_dtype dt; /* of f, l, loss, back as given to the row loop (half/bfloat16 widened to float) */
} xent_job;

static void xent_rows_f32(const xent_job *j, int64_t begin, int64_t end) {
    int64_t C = j->classes;
    for (int64_t b = begin; b < end; b++) {
        const float *f = (const float *)j->f + b * j->fr, *l = (const float *)j->l + b * j->lr;
        float *y = (float *)j->back + b * C;
        float loss = 0;
        if (j->fc == 1 && j->lc == 1) {
            loss = j->simd->xent_row(f, l, y, C);
        } else {
            float m = -INFINITY, s = 0;
            for (int64_t c = 0; c < C; c++) m = f[c * j->fc] > m ? f[c * j->fc] : m;
            for (int64_t c = 0; c < C; c++) y[c] = f[c * j->fc];
            s = j->simd->exp_sub_sum(y, y, C, m);
            float ls = logf(s), inv = 1.0f / s;
            for (int64_t c = 0; c < C; c++) {
                float lv = l[c * j->lc];
                loss += lv * (ls - (f[c * j->fc] - m));
                y[c] = y[c] * inv - lv;
            }
        }
        ((float *)j->loss)[b] = loss;
    }
}

static void xent_rows_f64(const xent_job *j, int64_t begin, int64_t end) {
    int64_t C = j->classes;
    for (int64_t b = begin; b < end; b++) {
        const double *f = (const double *)j->f + b * j->fr, *l = (const double *)j->l + b * j->lr;
        double *y = (double *)j->back + b * C;
        double m = -INFINITY, s = 0, loss = 0;
        for (int64_t c = 0; c < C; c++) m = f[c * j->fc] > m ? f[c * j->fc] : m;
        for (int64_t c = 0; c < C; c++) s += (y[c] = exp(f[c * j->fc] - m));
        double ls = log(s), inv = 1.0 / s;
        for (int64_t c = 0; c < C; c++) {
            double lv = l[c * j->lc];
            loss += lv * (ls - (f[c * j->fc] - m));
            y[c] = y[c] * inv - lv;
        }
        ((double *)j->loss)[b] = loss;
    }
}

static void xent_rows(void *arg, int64_t begin, int64_t end) {
    const xent_job *j = arg;
    if (j->dt == TFC_DOUBLE) xent_rows_f64(j, begin, end);
    else xent_rows_f32(j, begin, end);
}

/* Row and class strides of a rank <= 2 input broadcast to [batch, classes]. */
static void xent_strides(const tfc_shape *s, int64_t *rs, int64_t *cs) {
    int64_t d0 = s->rank >= 2 ? s->dims[s->rank - 2] : 1, d1 = s->rank >= 1 ? s->dims[s->rank - 1] : 1;
    *rs = d0 == 1 ? 0 : d1;
    *cs = d1 == 1 ? 0 : 1;
}

bool tfc_nn_xent(tfc_kernel_ctx *k, tfc_status *st) {
    const tfc_tensor *f = k->in[0], *l = k->in[1];
    tfc_tensor *loss = k->out[0], *back = k->out[1];
    tfc_dtype dt = f->dtype;
    if (dt != TFC_FLOAT && dt != TFC_DOUBLE && !nn_is_half(dt)) return tfc_kernel_unimplemented(k, dt, st);
    xent_job j = {.simd = tfc_nn_simd_get(), .batch = back->shape.dims[0], .classes = back->shape.dims[1],
                  .f = f->data, .l = l->data, .loss = loss->data, .back = back->data, .dt = dt};
    xent_strides(&f->shape, &j.fr, &j.fc);
    xent_strides(&l->shape, &j.lr, &j.lc);
    if (j.batch == 0) return true;
    if (j.classes == 0) { /* no classes: zero loss, as TensorFlow */
        for (int64_t b = 0; b < j.batch; b++) tfc_dtype_set_f64(dt, loss->data, b, 0.0);
        return true;
    }
    float *fw = NULL, *lw = NULL, *outw = NULL;
    if (nn_is_half(dt)) {
        fw = tfc_nn_widen_alloc(k, f, st);
        lw = fw ? tfc_nn_widen_alloc(k, l, st) : NULL;
        outw = lw ? tfc_nn_scratch(k, j.batch * (j.classes + 1), st) : NULL;
        if (!outw) {
            tfc_free(fw);
            tfc_free(lw);
            return false;
        }
        j.f = fw;
        j.l = lw;
        j.loss = outw;
        j.back = outw + j.batch;
        j.dt = TFC_FLOAT;
    }
    tfc_parallel_for(k->pool, j.batch, j.classes * 16, xent_rows, &j);
    if (outw) {
        nn_narrow(dt, outw, loss->data, j.batch);
        nn_narrow(dt, outw + j.batch, back->data, j.batch * j.classes);
    }
    tfc_free(fw);
    tfc_free(lw);
    tfc_free(outw);
    return true;
}

/* ---- SparseSoftmaxCrossEntropyWithLogits ----
 * loss[b] = logsumexp(f[b]) - f[b, label[b]], backprop = softmax(f[b]) - onehot(label[b]). Labels are
 * validated first: one outside [0, classes) is INVALID_ARGUMENT as TensorFlow's CPU kernel. */

typedef struct {
    const tfc_nn_simd *simd;
    int64_t batch, classes;
    const void *f;
    const int64_t *labels;
    void *loss, *back;
    tfc_dtype dt;
} sxent_job;

static void sxent_rows(void *arg, int64_t begin, int64_t end) {
    const sxent_job *j = arg;
    int64_t C = j->classes;
    if (j->dt == TFC_FLOAT && C <= SHORT_ROW) {
        sxent_rows_short(j->simd, j->f, j->labels, j->loss, j->back, C, begin, end);
        return;
    }
    for (int64_t b = begin; b < end; b++) {
        int64_t lab = j->labels[b];
        if (j->dt == TFC_DOUBLE) {
            const double *f = (const double *)j->f + b * C;
            double *y = (double *)j->back + b * C;
            double m = -INFINITY, s = 0;
            for (int64_t c = 0; c < C; c++) m = f[c] > m ? f[c] : m;
            for (int64_t c = 0; c < C; c++) s += (y[c] = exp(f[c] - m));
            double inv = 1.0 / s;
            for (int64_t c = 0; c < C; c++) y[c] *= inv;
            y[lab] -= 1.0;
            ((double *)j->loss)[b] = log(s) - (f[lab] - m);
        } else {
            ((float *)j->loss)[b] =
                j->simd->sparse_xent_row((const float *)j->f + b * C, (float *)j->back + b * C, C, lab);
        }
    }
}

/* "Received a label value of 12 which is outside the valid range of [0, 10).  Label values: 1 12 3". */
static bool bad_label(tfc_kernel_ctx *k, const int64_t *labels, int64_t batch, int64_t bad, int64_t classes,
                      tfc_status *st) {
    char vals[160];
    size_t len = 0;
    vals[0] = 0;
    for (int64_t i = 0; i < batch; i++) {
        int w = snprintf(vals + len, sizeof vals - len, "%s%lld", i ? " " : "", (long long)labels[i]);
        if (w < 0 || (size_t)w >= sizeof vals - len - 4) {
            snprintf(vals + len, sizeof vals - len, " ...");
            break;
        }
        len += (size_t)w;
    }
    return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                          "%s: Received a label value of %lld which is outside the valid range of [0, %lld).  Label "
                          "values: %s",
                          k->op->name, (long long)bad, (long long)classes, vals);
}

bool tfc_nn_sparse_xent(tfc_kernel_ctx *k, tfc_status *st) {
    const tfc_tensor *f = k->in[0], *lt = k->in[1];
    tfc_tensor *loss = k->out[0], *back = k->out[1];
    tfc_dtype dt = f->dtype;
    if (dt != TFC_FLOAT && dt != TFC_DOUBLE && !nn_is_half(dt)) return tfc_kernel_unimplemented(k, dt, st);
    sxent_job j = {.simd = tfc_nn_simd_get(), .batch = f->shape.dims[0], .classes = f->shape.dims[1],
                   .f = f->data, .loss = loss->data, .back = back->data, .dt = dt};
    if (j.batch == 0) return true;
    int64_t *labels = tfc_malloc((size_t)j.batch * sizeof(int64_t));
    if (!labels) return tfc_status_oom(st, k->op->name, (size_t)j.batch * sizeof(int64_t));
    for (int64_t b = 0; b < j.batch; b++)
        labels[b] = lt->dtype == TFC_INT32 ? ((const int32_t *)lt->data)[b] : ((const int64_t *)lt->data)[b];
    for (int64_t b = 0; b < j.batch; b++)
        if (labels[b] < 0 || labels[b] >= j.classes) {
            bool r = bad_label(k, labels, j.batch, labels[b], j.classes, st);
            tfc_free(labels);
            return r;
        }
    j.labels = labels;
    float *fw = NULL, *outw = NULL;
    if (nn_is_half(dt)) {
        fw = tfc_nn_widen_alloc(k, f, st);
        outw = fw ? tfc_nn_scratch(k, j.batch * (j.classes + 1), st) : NULL;
        if (!outw) {
            tfc_free(fw);
            tfc_free(labels);
            return false;
        }
        j.f = fw;
        j.loss = outw;
        j.back = outw + j.batch;
        j.dt = TFC_FLOAT;
    }
    tfc_parallel_for(k->pool, j.batch, j.classes * 12, sxent_rows, &j);
    if (outw) {
        nn_narrow(dt, outw, loss->data, j.batch);
        nn_narrow(dt, outw + j.batch, back->data, j.batch * j.classes);
    }
    tfc_free(fw);
    tfc_free(outw);
    tfc_free(labels);
    return true;
}
