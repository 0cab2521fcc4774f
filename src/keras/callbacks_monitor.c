/* Callbacks that watch a logged quantity: ModelCheckpoint, EarlyStopping and ReduceLROnPlateau, ported from
 * tf-keras's callbacks.py (messages, defaults and the "auto" mode rules included). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "platform/files.h"
#include "keras/model_internal.h"
#include "tfc/distribute.h"
#include "tfc/keras/saving.h"

/* Under a multi-worker strategy only the chief keeps its checkpoint: the other workers write theirs to a
 * temporary name beside it and remove it (Keras's rule for multi-worker ModelCheckpoint). save_weights_only
 * false saves the whole model (model.save: .keras or .h5 by the suffix). */
static bool save_weights(tfc_model *m, const char *path, bool weights_only, tfc_status *st) {
    bool (*save)(tfc_model *, const char *, tfc_status *) = weights_only ? tfc_model_save_weights : tfc_model_save;
    tfc_strategy *s = TFC_IMPL(m)->strategy;
    if (!s || tfc_strategy_is_chief(s)) return save(m, path, st);
    char tmp[4200];
    /* the suffix stays last, as model.save picks the format by it */
    const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
    if (!dot || (slash && dot < slash)) dot = path + strlen(path);
    snprintf(tmp, sizeof tmp, "%.*s.workertemp_%d%s", (int)(dot - path), path, tfc_strategy_worker_id(s), dot);
    bool ok = save(m, tmp, st);
    remove(tmp);
    return ok;
}

static bool logs_find(const tfc_logs *logs, const char *key, double *v) {
    for (int i = 0; logs && i < logs->n; i++)
        if (!strcmp(logs->keys[i], key)) {
            *v = logs->values[i];
            return true;
        }
    return false;
}

static void warn_missing(const char *what, const char *monitor, const tfc_logs *logs) {
    char avail[512] = "";
    size_t k = 0;
    for (int i = 0; logs && i < logs->n && k < sizeof avail; i++)
        k += (size_t)snprintf(avail + k, sizeof avail - k, "%s%s", i ? "," : "", logs->keys[i]);
    tfc_log(TFC_LOG_WARNING, "%s conditioned on metric `%s` which is not available. Available metrics are: %s", what,
            monitor, avail);
}

static bool mode_valid(const char *mode) {
    return !mode || !strcmp(mode, "auto") || !strcmp(mode, "min") || !strcmp(mode, "max");
}

static bool ends_with(const char *s, const char *suffix) {
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

/* ---- ModelCheckpoint ----------------------------------------------------------------------------------- */

typedef struct {
    char *filepath, *monitor;
    bool save_best_only, save_weights_only;
    bool greater; /* monitor_op is np.greater */
    double best;
    int verbose;
} checkpoint;

/* Python's str.format on the path with epoch (1-based) and the logs: "{epoch:02d}", "{val_loss:.2f}", "{{". */
static bool format_path(const checkpoint *c, int epoch, const tfc_logs *logs, char *out, size_t size, tfc_status *st) {
    size_t k = 0;
    const char *p = c->filepath;
    while (*p) {
        if (k + 1 >= size) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "ModelCheckpoint: filepath too long");
        if ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}')) {
            out[k++] = p[0];
            p += 2;
            continue;
        }
        if (*p != '{') {
            out[k++] = *p++;
            continue;
        }
        const char *end = strchr(p, '}');
        if (!end)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                  "Failed to format this callback filepath: \"%s\". Reason: unmatched '{'", c->filepath);
        char field[128], name[128], spec[32] = "";
        size_t len = (size_t)(end - p - 1);
        if (len >= sizeof field) len = sizeof field - 1;
        memcpy(field, p + 1, len);
        field[len] = 0;
        char *colon = strchr(field, ':');
        snprintf(name, sizeof name, "%.*s", colon ? (int)(colon - field) : (int)len, field);
        if (colon) snprintf(spec, sizeof spec, "%s", colon + 1);
        for (const char *s = spec; *s; s++)
            if (!strchr("0123456789.+- dfFeEgG", *s))
                return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                      "Failed to format this callback filepath: \"%s\". Reason: unsupported format "
                                      "spec '%s'",
                                      c->filepath, spec);
        char type = *spec ? spec[strlen(spec) - 1] : 0;
        bool is_epoch = !strcmp(name, "epoch");
        double v = 0;
        if (!is_epoch && !logs_find(logs, name, &v))
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Failed to format this callback filepath: \"%s\". Reason: '%s'",
                                  c->filepath, name);
        char fmt[48], piece[128];
        if (is_epoch) {
            if (type && type != 'd') {
                snprintf(fmt, sizeof fmt, "%%%s", spec);
                snprintf(piece, sizeof piece, fmt, (double)(epoch + 1));
            } else {
                snprintf(fmt, sizeof fmt, "%%%.*slld", type ? (int)strlen(spec) - 1 : (int)strlen(spec), spec);
                snprintf(piece, sizeof piece, fmt, (long long)(epoch + 1));
            }
        } else if (!*spec) {
            tfc_py_repr_f64(v, piece, sizeof piece);
        } else if (type == 'd') {
            return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                  "Failed to format this callback filepath: \"%s\". Reason: Unknown format code 'd' "
                                  "for object of type 'float'",
                                  c->filepath);
        } else {
            snprintf(fmt, sizeof fmt, strchr("fFeEgG", type) ? "%%%s" : "%%%sg", spec);
            snprintf(piece, sizeof piece, fmt, v);
        }
        size_t pl = strlen(piece);
        if (k + pl >= size) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "ModelCheckpoint: filepath too long");
        memcpy(out + k, piece, pl);
        k += pl;
        p = end + 1;
    }
    out[k] = 0;
    return true;
}

/* os.makedirs(dirname(path)) */
static bool make_parent_dirs(const char *path, tfc_status *st) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir) return true;
    *slash = 0;
    return tfc_make_dirs(dir, "ModelCheckpoint", st);
}

static bool ckpt_epoch_end(tfc_callback *cb, tfc_model *m, int epoch, tfc_logs *logs, tfc_status *st) {
    checkpoint *c = tfc_callback_user(cb);
    char path[4096];
    if (!format_path(c, epoch, logs, path, sizeof path, st) || !make_parent_dirs(path, st)) return false;
    FILE *out = tfc_model_fit_out(m);
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "Please specify a non-directory filepath for ModelCheckpoint. Filepath used is an "
                              "existing directory: %s",
                              path);
    if (c->save_best_only) {
        double current;
        if (!logs_find(logs, c->monitor, &current)) {
            tfc_log(TFC_LOG_WARNING, "Can save best model only with %s available, skipping.", c->monitor);
            return true;
        }
        if (c->greater ? current > c->best : current < c->best) {
            if (c->verbose > 0) {
                fprintf(out, "\nEpoch %d: %s improved from %.5f to %.5f, saving model to %s\n", epoch + 1, c->monitor,
                        c->best, current, path);
                fflush(out);
            }
            c->best = current;
            return save_weights(m, path, c->save_weights_only, st);
        }
        if (c->verbose > 0) {
            fprintf(out, "\nEpoch %d: %s did not improve from %.5f\n", epoch + 1, c->monitor, c->best);
            fflush(out);
        }
        return true;
    }
    if (c->verbose > 0) {
        fprintf(out, "\nEpoch %d: saving model to %s\n", epoch + 1, path);
        fflush(out);
    }
    return save_weights(m, path, c->save_weights_only, st);
}

static void ckpt_free(checkpoint *c) {
    tfc_free(c->filepath);
    tfc_free(c->monitor);
    tfc_free(c);
}

static void ckpt_destroy(tfc_callback *cb) { ckpt_free(tfc_callback_user(cb)); }

static const tfc_callback_fns ckpt_fns = {.on_epoch_end = ckpt_epoch_end, .destroy = ckpt_destroy};

tfc_callback *tfc_callbacks_model_checkpoint_new(const tfc_model_checkpoint_opts *o) {
    if (!o || !o->filepath) return NULL;
    checkpoint *c = tfc_calloc(1, sizeof *c);
    if (!c) return NULL;
    c->filepath = tfc_strdup(o->filepath);
    c->monitor = tfc_strdup(o->monitor && *o->monitor ? o->monitor : "val_loss");
    if (!c->filepath || !c->monitor) {
        ckpt_free(c);
        return NULL;
    }
    c->save_best_only = o->save_best_only;
    c->save_weights_only = o->save_weights_only;
    c->verbose = o->verbose > 0 ? (int)o->verbose : 0;
    const char *mode = o->mode;
    if (!mode_valid(mode)) {
        tfc_log(TFC_LOG_WARNING, "ModelCheckpoint mode %s is unknown, fallback to auto mode.", mode);
        mode = "auto";
    }
    if (mode && !strcmp(mode, "min")) c->greater = false;
    else if (mode && !strcmp(mode, "max")) c->greater = true;
    else c->greater = strstr(c->monitor, "acc") || !strncmp(c->monitor, "fmeasure", 8);
    c->best = c->greater ? -INFINITY : INFINITY;
    tfc_callback *cb = tfc_callback_new(&ckpt_fns, c);
    if (!cb) ckpt_free(c);
    return cb;
}

/* ---- EarlyStopping ------------------------------------------------------------------------------------- */

typedef struct {
    char *monitor;
    double min_delta, baseline;
    bool has_baseline, greater, restore_best_weights;
    int patience, verbose;
    int wait, stopped_epoch, best_epoch;
    double best;
    tfc_tensor **best_weights;
    int n_best;
} early_stopping;

static void free_best(early_stopping *e) {
    for (int i = 0; i < e->n_best; i++) tfc_tensor_unref(e->best_weights[i]);
    tfc_free(e->best_weights);
    e->best_weights = NULL;
    e->n_best = 0;
}

static bool grab_weights(early_stopping *e, tfc_model *m, tfc_status *st) {
    free_best(e);
    int n = tfc_model_get_weights(m, NULL, 0, st);
    if (n < 0) return false;
    e->best_weights = tfc_calloc((size_t)(n ? n : 1), sizeof *e->best_weights);
    if (!e->best_weights) return tfc_status_oom(st, "EarlyStopping", 0);
    if (tfc_model_get_weights(m, e->best_weights, n, st) < 0) {
        tfc_free(e->best_weights);
        e->best_weights = NULL;
        return false;
    }
    e->n_best = n;
    return true;
}

static bool es_improved(const early_stopping *e, double value, double reference) {
    double v = value - e->min_delta;
    return e->greater ? v > reference : v < reference;
}

static bool es_train_begin(tfc_callback *cb, tfc_model *m, const tfc_logs *logs, tfc_status *st) {
    early_stopping *e = tfc_callback_user(cb);
    e->wait = 0;
    e->stopped_epoch = 0;
    e->best = e->greater ? -INFINITY : INFINITY;
    free_best(e);
    e->best_epoch = 0;
    return true;
}

static bool es_epoch_end(tfc_callback *cb, tfc_model *m, int epoch, tfc_logs *logs, tfc_status *st) {
    early_stopping *e = tfc_callback_user(cb);
    double current;
    if (!logs_find(logs, e->monitor, &current)) {
        warn_missing("Early stopping", e->monitor, logs);
        return true;
    }
    if (e->restore_best_weights && !e->best_weights) {
        if (!grab_weights(e, m, st)) return false;
        e->best_epoch = epoch;
    }
    e->wait++;
    if (es_improved(e, current, e->best)) {
        e->best = current;
        e->best_epoch = epoch;
        if (e->restore_best_weights && !grab_weights(e, m, st)) return false;
        /* Only restart wait if we beat both the baseline and our previous best. */
        if (!e->has_baseline || es_improved(e, current, e->baseline)) e->wait = 0;
        return true;
    }
    if (e->wait >= e->patience && epoch > 0) {
        e->stopped_epoch = epoch;
        tfc_model_stop_training(m);
    }
    return true;
}

static bool es_train_end(tfc_callback *cb, tfc_model *m, const tfc_logs *logs, tfc_status *st) {
    early_stopping *e = tfc_callback_user(cb);
    FILE *out = tfc_model_fit_out(m);
    if (e->stopped_epoch > 0 && e->verbose > 0) fprintf(out, "Epoch %d: early stopping\n", e->stopped_epoch + 1);
    bool ok = true;
    if (e->restore_best_weights && e->best_weights) {
        if (e->verbose > 0)
            fprintf(out, "Restoring model weights from the end of the best epoch: %d.\n", e->best_epoch + 1);
        ok = tfc_model_set_weights(m, e->best_weights, e->n_best, st);
    }
    fflush(out);
    free_best(e);
    return ok;
}

static void es_free(early_stopping *e) {
    free_best(e);
    tfc_free(e->monitor);
    tfc_free(e);
}

static void es_destroy(tfc_callback *cb) { es_free(tfc_callback_user(cb)); }

static const tfc_callback_fns es_fns = {
    .on_train_begin = es_train_begin, .on_epoch_end = es_epoch_end, .on_train_end = es_train_end, .destroy = es_destroy};

tfc_callback *tfc_callbacks_early_stopping_new(const tfc_early_stopping_opts *o) {
    tfc_early_stopping_opts d = {0};
    if (!o) o = &d;
    early_stopping *e = tfc_calloc(1, sizeof *e);
    if (!e) return NULL;
    if (!(e->monitor = tfc_strdup(o->monitor && *o->monitor ? o->monitor : "val_loss"))) {
        tfc_free(e);
        return NULL;
    }
    e->patience = o->patience;
    e->verbose = o->verbose > 0 ? (int)o->verbose : 0;
    e->baseline = o->baseline;
    e->has_baseline = o->has_baseline;
    e->restore_best_weights = o->restore_best_weights;
    const char *mode = o->mode;
    if (!mode_valid(mode)) {
        tfc_log(TFC_LOG_WARNING, "EarlyStopping mode %s is unknown, fallback to auto mode.", mode);
        mode = "auto";
    }
    if (mode && !strcmp(mode, "min")) e->greater = false;
    else if (mode && !strcmp(mode, "max")) e->greater = true;
    else
        e->greater = ends_with(e->monitor, "acc") || ends_with(e->monitor, "accuracy") || ends_with(e->monitor, "auc");
    e->min_delta = fabs(o->min_delta) * (e->greater ? 1 : -1);
    tfc_callback *cb = tfc_callback_new(&es_fns, e);
    if (!cb) es_free(e);
    return cb;
}

/* ---- ReduceLROnPlateau --------------------------------------------------------------------------------- */

typedef struct {
    char *monitor;
    double factor, min_delta, min_lr;
    int patience, cooldown, verbose;
    bool greater;
    int cooldown_counter, wait;
    double best;
} reduce_lr;

static bool rl_train_begin(tfc_callback *cb, tfc_model *m, const tfc_logs *logs, tfc_status *st) {
    reduce_lr *r = tfc_callback_user(cb);
    r->best = r->greater ? -INFINITY : INFINITY;
    r->cooldown_counter = 0;
    r->wait = 0;
    return true;
}

static bool rl_epoch_end(tfc_callback *cb, tfc_model *m, int epoch, tfc_logs *logs, tfc_status *st) {
    reduce_lr *r = tfc_callback_user(cb);
    tfc_optimizer *o = tfc_model_optimizer(m);
    if (!o) return tfc_status_set(st, TFC_FAILED_PRECONDITION, "ReduceLROnPlateau: the model has no optimizer");
    if (logs) tfc_logs_set(logs, "lr", (double)(float)tfc_optimizer_learning_rate(o));
    double current;
    if (!logs_find(logs, r->monitor, &current)) {
        warn_missing("Learning rate reduction is", r->monitor, logs);
        return true;
    }
    if (r->cooldown_counter > 0) {
        r->cooldown_counter--;
        r->wait = 0;
    }
    bool better = r->greater ? current > r->best + r->min_delta : current < r->best - r->min_delta;
    if (better) {
        r->best = current;
        r->wait = 0;
    } else if (r->cooldown_counter <= 0) {
        r->wait++;
        if (r->wait >= r->patience) {
            float old_lr = (float)tfc_optimizer_learning_rate(o);
            if (old_lr > (float)r->min_lr) {
                /* float32 arithmetic, as Keras on the float32 variable */
                float new_lr = old_lr * (float)r->factor;
                if (new_lr < (float)r->min_lr) new_lr = (float)r->min_lr;
                tfc_optimizer_set_learning_rate(o, new_lr);
                if (r->verbose > 0) {
                    char num[48];
                    FILE *out = tfc_model_fit_out(m);
                    fprintf(out, "\nEpoch %d: ReduceLROnPlateau reducing learning rate to %s.\n", epoch + 1,
                            tfc_py_repr_f32(new_lr, num, sizeof num));
                    fflush(out);
                }
                r->cooldown_counter = r->cooldown;
                r->wait = 0;
            }
        }
    }
    return true;
}

static void rl_free(reduce_lr *r) {
    tfc_free(r->monitor);
    tfc_free(r);
}

static void rl_destroy(tfc_callback *cb) { rl_free(tfc_callback_user(cb)); }

static const tfc_callback_fns rl_fns = {.on_train_begin = rl_train_begin, .on_epoch_end = rl_epoch_end, .destroy = rl_destroy};

tfc_callback *tfc_callbacks_reduce_lr_on_plateau_new(const tfc_reduce_lr_on_plateau_opts *o) {
    tfc_reduce_lr_on_plateau_opts d = {0};
    if (!o) o = &d;
    if (o->factor >= 1.0) {
        tfc_log(TFC_LOG_ERROR, "ReduceLROnPlateau does not support a factor >= 1.0. Got %g", o->factor);
        return NULL;
    }
    reduce_lr *r = tfc_calloc(1, sizeof *r);
    if (!r) return NULL;
    if (!(r->monitor = tfc_strdup(o->monitor && *o->monitor ? o->monitor : "val_loss"))) {
        tfc_free(r);
        return NULL;
    }
    r->factor = o->factor > 0 ? o->factor : 0.1;
    r->min_delta = o->min_delta != 0 ? o->min_delta : 1e-4;
    r->min_lr = o->min_lr;
    r->patience = o->has_patience || o->patience ? o->patience : 10;
    r->cooldown = o->cooldown;
    r->verbose = o->verbose > 0 ? (int)o->verbose : 0;
    const char *mode = o->mode;
    if (!mode_valid(mode)) {
        tfc_log(TFC_LOG_WARNING, "Learning rate reduction mode %s is unknown, fallback to auto mode.", mode);
        mode = "auto";
    }
    r->greater = !(mode && !strcmp(mode, "min")) && !((!mode || !strcmp(mode, "auto")) && !strstr(r->monitor, "acc"));
    r->best = r->greater ? -INFINITY : INFINITY;
    tfc_callback *cb = tfc_callback_new(&rl_fns, r);
    if (!cb) rl_free(r);
    return cb;
}
