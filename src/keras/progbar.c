/* Keras's progress output: tf-keras's Progbar (utils/generic_utils.py) driven by its ProgbarLogger callback.
 *   verbose 1: "Epoch 1/5" then a bar redrawn in place ("\b" and "\r", at most every 0.05 s) with an ETA;
 *              at the epoch end "422/422 [==============================] - 12s 28ms/step - loss: 0.5432 - ..."
 *   verbose 2: one line per epoch "422/422 - 12s - loss: 0.5432 - ... - 12s/epoch - 28ms/step"
 * Values print with 4 decimals ("%.4e" below 1e-3). Validation inside fit is silent, as Keras. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "keras/model_internal.h"

#define BAR_WIDTH 30
#define INTERVAL 0.05

struct tfc_progbar {
    FILE *out;
    int verbose, epochs;
    int64_t target;
    bool called_in_fit;
    /* the bar of the current epoch / evaluation */
    bool active;
    double start, last_update, after_first_step, epoch_start, epoch_end;
    int64_t seen;
    size_t total_width;
    int n_keys;
    char keys[TFC_LOGS_MAX * 2][96];
    double values[TFC_LOGS_MAX * 2];
};

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int tfc_verbose_resolve(tfc_verbose v, FILE *out) {
    if (v == TFC_VERBOSE_SILENT) return 0;
    if (v == TFC_VERBOSE_AUTO) return isatty(fileno(out ? out : stdout)) ? 1 : 2;
    return v == TFC_VERBOSE_EPOCH ? 2 : 1;
}

static void bar_reset(struct tfc_progbar *p) {
    p->active = true;
    p->start = now_s();
    p->last_update = 0;
    p->after_first_step = -1;
    p->epoch_start = p->start;
    p->epoch_end = -1;
    p->seen = 0;
    p->total_width = 0;
    p->n_keys = 0;
}

/* _format_time: " 28ms/step", " 2s/epoch", " 950us/step" */
static void format_time(double t, const char *unit, char *buf, size_t size) {
    if (t >= 1 || t == 0) snprintf(buf, size, " %.0fs/%s", t, unit);
    else if (t >= 1e-3) snprintf(buf, size, " %.0fms/%s", t * 1000.0, unit);
    else snprintf(buf, size, " %.0fus/%s", t * 1000000.0, unit);
}

static double step_duration(struct tfc_progbar *p, int64_t current, double now) {
    if (!current) return 0;
    double t = p->after_first_step >= 0 && current > 1 ? (now - p->after_first_step) / (double)(current - 1)
                                                        : (now - p->start) / (double)current;
    if (current == 1) p->after_first_step = now;
    return t;
}

static int num_digits(int64_t target) { return target > 0 ? (int)floor(log10((double)target)) + 1 : 1; }

static void append(char *buf, size_t size, size_t *k, const char *fmt, double v) {
    if (*k < size) *k += (size_t)snprintf(buf + *k, size - *k, fmt, v);
}

static void bar_update(struct tfc_progbar *p, int64_t current, const tfc_logs *logs, bool finalize) {
    for (int i = 0; logs && i < logs->n; i++) {
        int k = 0;
        while (k < p->n_keys && strcmp(p->keys[k], logs->keys[i]) != 0) k++;
        if (k == p->n_keys) {
            if (p->n_keys == TFC_LOGS_MAX * 2) continue;
            snprintf(p->keys[k], sizeof p->keys[k], "%s", logs->keys[i]);
            p->n_keys++;
        }
        /* Keras shows the model's metrics as they are, and averages the others over the steps since they were
         * first given; every key here is given once per update, so both show the latest value. */
        p->values[k] = logs->values[i];
    }
    p->seen = current;
    double now = now_s();
    char info[2048];
    size_t k = 0;
    append(info, sizeof info, &k, " - %.0fs", now - p->start);
    if (current == p->target) p->epoch_end = now;
    if (p->verbose == 1) {
        if (now - p->last_update < INTERVAL && !finalize) return;
        size_t prev = p->total_width;
        char bar[128];
        int nd = num_digits(p->target);
        size_t b = (size_t)snprintf(bar, sizeof bar, "%*lld/%lld [", nd, (long long)current, (long long)p->target);
        double prog = p->target > 0 ? (double)current / (double)p->target : 1.0;
        int width = (int)(BAR_WIDTH * prog);
        if (width > BAR_WIDTH) width = BAR_WIDTH;
        for (int i = 0; i < width - 1 && b < sizeof bar - 2; i++) bar[b++] = '=';
        if (width > 0 && b < sizeof bar - 2) bar[b++] = current < p->target ? '>' : '=';
        for (int i = width; i < BAR_WIDTH && b < sizeof bar - 2; i++) bar[b++] = '.';
        bar[b++] = ']';
        bar[b] = 0;
        p->total_width = b;
        double tpu = step_duration(p, current, now);
        if (finalize) {
            char t[64];
            format_time(tpu, "step", t, sizeof t);
            size_t tl = strlen(t);
            if (k + tl < sizeof info) memcpy(info + k, t, tl + 1), k += tl;
        } else {
            double eta = tpu * (double)(p->target - current);
            char e[64];
            if (eta > 3600)
                snprintf(e, sizeof e, "%d:%02d:%02d", (int)(eta / 3600), (int)(fmod(eta, 3600) / 60), (int)fmod(eta, 60));
            else if (eta > 60)
                snprintf(e, sizeof e, "%d:%02d", (int)(eta / 60), (int)fmod(eta, 60));
            else
                snprintf(e, sizeof e, "%ds", (int)eta);
            k = (size_t)snprintf(info, sizeof info, " - ETA: %s", e);
        }
        for (int i = 0; i < p->n_keys; i++) {
            if (k < sizeof info) k += (size_t)snprintf(info + k, sizeof info - k, " - %s:", p->keys[i]);
            append(info, sizeof info, &k, fabs(p->values[i]) > 1e-3 ? " %.4f" : " %.4e", p->values[i]);
        }
        if (k > sizeof info - 1) k = sizeof info - 1;
        p->total_width += k;
        for (size_t i = 0; i < prev; i++) fputc('\b', p->out);
        fputc('\r', p->out);
        fputs(bar, p->out);
        fputs(info, p->out);
        for (size_t i = p->total_width; i < prev; i++) fputc(' ', p->out);
        if (finalize) fputc('\n', p->out);
        fflush(p->out);
    } else if (p->verbose == 2 && finalize) {
        char line[2560];
        size_t n = (size_t)snprintf(line, sizeof line, "%*lld/%lld%s", num_digits(p->target), (long long)current,
                                    (long long)p->target, info);
        for (int i = 0; i < p->n_keys && n < sizeof line; i++) {
            n += (size_t)snprintf(line + n, sizeof line - n, " - %s:", p->keys[i]);
            if (n < sizeof line)
                n += (size_t)snprintf(line + n, sizeof line - n, p->values[i] > 1e-3 ? " %.4f" : " %.4e", p->values[i]);
        }
        if (p->epoch_end >= 0 && n < sizeof line) {
            double per_epoch = p->epoch_end - p->epoch_start, per_step = per_epoch / (double)(p->target ? p->target : 1);
            char a[64], b2[64];
            p->epoch_start = now;
            p->epoch_end = -1;
            format_time(per_epoch, "epoch", a, sizeof a);
            format_time(per_step, "step", b2, sizeof b2);
            n += (size_t)snprintf(line + n, sizeof line - n, " -%s -%s\n", a, b2);
        }
        fputs(line, p->out);
        fflush(p->out);
    }
    p->last_update = now;
}

/* ---- the ProgbarLogger callback ---- */

static bool pb_train_begin(tfc_callback *cb, tfc_model *m, const tfc_logs *logs, tfc_status *st) {
    struct tfc_progbar *p = tfc_callback_user(cb);
    p->called_in_fit = true;
    return true;
}

static bool pb_epoch_begin(tfc_callback *cb, tfc_model *m, int epoch, const tfc_logs *logs, tfc_status *st) {
    struct tfc_progbar *p = tfc_callback_user(cb);
    bar_reset(p);
    if (p->verbose && p->epochs > 1) {
        fprintf(p->out, "Epoch %d/%d\n", epoch + 1, p->epochs);
        fflush(p->out);
    }
    return true;
}

static bool pb_batch_end(tfc_callback *cb, tfc_model *m, int64_t batch, const tfc_logs *logs, tfc_status *st) {
    struct tfc_progbar *p = tfc_callback_user(cb);
    if (p->verbose == 1) bar_update(p, batch + 1, logs, false);
    return true;
}

static bool pb_epoch_end(tfc_callback *cb, tfc_model *m, int epoch, tfc_logs *logs, tfc_status *st) {
    struct tfc_progbar *p = tfc_callback_user(cb);
    bar_update(p, p->target, logs, true);
    return true;
}

static bool pb_test_begin(tfc_callback *cb, tfc_model *m, const tfc_logs *logs, tfc_status *st) {
    struct tfc_progbar *p = tfc_callback_user(cb);
    if (!p->called_in_fit) bar_reset(p);
    return true;
}

void tfc_progbar_test_batch(tfc_callback *cb, int64_t batch, const tfc_logs *logs) {
    struct tfc_progbar *p = tfc_callback_user(cb);
    if (!p->called_in_fit && p->verbose == 1) bar_update(p, batch + 1, logs, false);
}

void tfc_progbar_test_end(tfc_callback *cb, const tfc_logs *logs) {
    struct tfc_progbar *p = tfc_callback_user(cb);
    if (!p->called_in_fit) bar_update(p, p->target, logs, true);
}

static bool pb_test_end(tfc_callback *cb, tfc_model *m, const tfc_logs *logs, tfc_status *st) {
    tfc_progbar_test_end(cb, logs);
    return true;
}

static void pb_destroy(tfc_callback *cb) { tfc_free(tfc_callback_user(cb)); }

static const tfc_callback_fns pb_fns = {
    .on_train_begin = pb_train_begin,
    .on_epoch_begin = pb_epoch_begin,
    .on_train_batch_end = pb_batch_end,
    .on_epoch_end = pb_epoch_end,
    .on_test_begin = pb_test_begin,
    .on_test_end = pb_test_end,
    .destroy = pb_destroy,
};

tfc_callback *tfc_progbar_new(FILE *out, int verbose, int epochs, int64_t steps, bool in_fit) {
    struct tfc_progbar *p = tfc_calloc(1, sizeof *p);
    if (!p) return NULL;
    p->out = out ? out : stdout;
    p->verbose = verbose;
    p->epochs = epochs;
    p->target = steps;
    bar_reset(p);
    p->active = false;
    (void)in_fit;
    tfc_callback *cb = tfc_callback_new(&pb_fns, p);
    if (!cb) tfc_free(p);
    return cb;
}
