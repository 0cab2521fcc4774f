/* Prometheus counters and histograms for the server (metrics.h). One mutex; rows found by linear search (the
 * table is small and bounded). */
#include "serving/metrics.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "tfc/platform.h"

/* Latency buckets in microseconds (upper bounds) and batch-size buckets. */
static const double lat_bounds[] = {100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000,
                                    1000000, 2500000, 5000000, 10000000};
#define N_LAT (sizeof lat_bounds / sizeof lat_bounds[0])
static const double batch_bounds[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
#define N_BATCH (sizeof batch_bounds / sizeof batch_bounds[0])

typedef struct row {
    char model[128];
    char api[16];
    tfc_code code;
    int kind;               /* 0: request row, 1: batch row */
    uint64_t count;
    double sum;
    uint64_t buckets[N_LAT]; /* also used for batch sizes (first N_BATCH) */
} row;

struct srv_metrics {
    pthread_mutex_t mu;
    row rows[SRV_METRICS_MAX_ROWS + 1]; /* the last one is "__other__" */
    int n;
};

srv_metrics *srv_metrics_new(void) {
    srv_metrics *m = tfc_calloc(1, sizeof *m);
    if (!m) return NULL;
    pthread_mutex_init(&m->mu, NULL);
    snprintf(m->rows[SRV_METRICS_MAX_ROWS].model, sizeof m->rows[0].model, "__other__");
    return m;
}

void srv_metrics_free(srv_metrics *m) {
    if (!m) return;
    pthread_mutex_destroy(&m->mu);
    tfc_free(m);
}

/* The row of (kind, model, api, code), created when there is room; mu held. */
static row *find(srv_metrics *m, int kind, const char *model, const char *api, tfc_code code) {
    for (int i = 0; i < m->n; i++) {
        row *r = &m->rows[i];
        if (r->kind == kind && r->code == code && !strcmp(r->model, model) && !strcmp(r->api, api)) return r;
    }
    if (m->n < SRV_METRICS_MAX_ROWS) {
        row *r = &m->rows[m->n++];
        r->kind = kind;
        r->code = code;
        snprintf(r->model, sizeof r->model, "%s", model);
        snprintf(r->api, sizeof r->api, "%s", api);
        return r;
    }
    return &m->rows[SRV_METRICS_MAX_ROWS];
}

/* One observation v into r's histogram (bounds[0..n)). */
static void observe(row *r, double v, const double *bounds, size_t n) {
    r->count++;
    r->sum += v;
    for (size_t i = 0; i < n; i++)
        if (v <= bounds[i]) r->buckets[i]++;
}

void srv_metrics_request(srv_metrics *m, const char *model, const char *api, tfc_code code, double seconds) {
    if (!m) return;
    const double us = seconds * 1e6;
    pthread_mutex_lock(&m->mu);
    observe(find(m, 0, model ? model : "", api ? api : "", code), us, lat_bounds, N_LAT);
    pthread_mutex_unlock(&m->mu);
}

void srv_metrics_batch(srv_metrics *m, const char *model, int64_t size, int64_t padded) {
    if (!m) return;
    pthread_mutex_lock(&m->mu);
    observe(find(m, 1, model ? model : "", "", TFC_OK), (double)size, batch_bounds, N_BATCH);
    observe(find(m, 2, model ? model : "", "", TFC_OK), (double)padded, batch_bounds, N_BATCH);
    pthread_mutex_unlock(&m->mu);
}

/* A label value: backslash, quote and newline escaped. */
static void label(srv_buf *b, const char *s) {
    for (; *s; s++) {
        if (*s == '\\' || *s == '"') srv_buf_put(b, "\\", 1);
        if (*s == '\n') srv_buf_puts(b, "\\n");
        else srv_buf_put(b, s, 1);
    }
}

static void histogram(srv_buf *b, const char *name, const row *r, const char *labels_open, const double *bounds,
                      size_t n) {
    for (size_t i = 0; i < n; i++) {
        srv_buf_printf(b, "%s_bucket{%s", name, labels_open);
        srv_buf_printf(b, "le=\"%g\"} %llu\n", bounds[i], (unsigned long long)r->buckets[i]);
    }
    srv_buf_printf(b, "%s_bucket{%sle=\"+Inf\"} %llu\n", name, labels_open, (unsigned long long)r->count);
    srv_buf_printf(b, "%s_sum{%s", name, labels_open);
    if (b->len >= 1 && b->p[b->len - 1] == ',') b->len--;
    srv_buf_printf(b, "} %.17g\n", r->sum);
    srv_buf_printf(b, "%s_count{%s", name, labels_open);
    if (b->len >= 1 && b->p[b->len - 1] == ',') b->len--;
    srv_buf_printf(b, "} %llu\n", (unsigned long long)r->count);
}

void srv_metrics_prometheus(srv_metrics *m, srv_buf *b) {
    if (!m) return;
    pthread_mutex_lock(&m->mu);
    const int n = m->n;
    srv_buf_puts(b, "# TYPE :tensorflow:serving:request_count counter\n");
    for (int i = 0; i <= SRV_METRICS_MAX_ROWS; i++) {
        const row *r = &m->rows[i];
        if ((i >= n && i != SRV_METRICS_MAX_ROWS) || r->kind != 0 || !r->count) continue;
        srv_buf_puts(b, ":tensorflow:serving:request_count{entrypoint=\"REST\",model_name=\"");
        label(b, r->model);
        srv_buf_puts(b, "\",API=\"");
        label(b, r->api);
        srv_buf_printf(b, "\",status=\"%s\"} %llu\n", tfc_code_name(r->code), (unsigned long long)r->count);
    }
    /* latency histograms per (model, api): rows of all codes summed */
    srv_buf_puts(b, "# TYPE :tensorflow:serving:request_latency histogram\n");
    for (int i = 0; i < n; i++) {
        const row *r = &m->rows[i];
        if (r->kind != 0) continue;
        bool first = true;
        for (int j = 0; j < i && first; j++)
            first = !(m->rows[j].kind == 0 && !strcmp(m->rows[j].model, r->model) && !strcmp(m->rows[j].api, r->api));
        if (!first) continue;
        row sum = *r;
        for (int j = i + 1; j < n; j++) {
            const row *o = &m->rows[j];
            if (o->kind != 0 || strcmp(o->model, r->model) || strcmp(o->api, r->api)) continue;
            sum.count += o->count;
            sum.sum += o->sum;
            for (size_t k = 0; k < N_LAT; k++) sum.buckets[k] += o->buckets[k];
        }
        srv_buf lab = {0};
        srv_buf_puts(&lab, "entrypoint=\"REST\",model_name=\"");
        label(&lab, r->model);
        srv_buf_puts(&lab, "\",API=\"");
        label(&lab, r->api);
        srv_buf_puts(&lab, "\",");
        if (!lab.oom) histogram(b, ":tensorflow:serving:request_latency", &sum, lab.p, lat_bounds, N_LAT);
        srv_buf_free(&lab);
    }
    for (int kind = 1; kind <= 2; kind++) {
        const char *name = kind == 1 ? ":tensorflow:serving:batching_session:processed_batch_size"
                                     : ":tensorflow:serving:batching_session:padded_batch_size";
        srv_buf_printf(b, "# TYPE %s histogram\n", name);
        for (int i = 0; i < n; i++) {
            const row *r = &m->rows[i];
            if (r->kind != kind) continue;
            srv_buf lab = {0};
            srv_buf_puts(&lab, "model_name=\"");
            label(&lab, r->model);
            srv_buf_puts(&lab, "\",");
            if (!lab.oom) histogram(b, name, r, lab.p, batch_bounds, N_BATCH);
            srv_buf_free(&lab);
        }
    }
    pthread_mutex_unlock(&m->mu);
}
