/* BackupAndRestore: fault tolerance for fit. At each epoch end the model weights, the optimizer state
 * (tfc_optimizer_variables: iterations and slots), the epoch and fit's seed base are written to
 * <backup_dir>/backup.tfcb (a temporary file, fsync'ed, then renamed over the old one, so a crash leaves the
 * previous backup intact). A fit that starts with a backup present restores it and continues after that epoch;
 * because fit derives each epoch's shuffling and dropout from (seed base, epoch), the resumed run ends with
 * the weights of an uninterrupted one. The backup is deleted when training ends normally.
 *
 * Multi-worker training (a model compiled in a MultiWorkerMirroredStrategy scope): as Keras, backup_dir is on a
 * file system every worker sees; every worker restores from it, only the chief writes and deletes it (the
 * workers' states are identical after each synchronous step, so the chief's backup is everyone's).
 *
 * Mid-epoch (save_freq = N batches, fit fed from a dataset): every N batches the backup also records the
 * batches done in the running epoch and the dataset iterator's state (tfc/data_checkpoint.h); a resumed fit
 * restores the iterator and continues that epoch after those batches, with exactly the elements the
 * uninterrupted run would have seen. Epoch-end backups of a dataset fit carry the iterator state too (the
 * shuffle epochs, and the position of an iterator kept across epochs with steps_per_epoch).
 *
 * File layout (little-endian as written by this machine): "TFCBKUP1", u32 version, i64 epoch, u64 seed base,
 * u32 weights, u32 optimizer variables, then per tensor i32 dtype, i32 rank, i64 dims[rank], u64 bytes, data;
 * version 2 then has i64 step (batches done in `epoch`; -1: the epoch is complete) and u64 length + the
 * iterator state (length 0: none); u32 CRC-32 (zlib) of everything before it. Version 1 files are read. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "platform/files.h"
#include "keras/model_internal.h"
#include "tfc/data_checkpoint.h"
#include "tfc/distribute.h"

#define BACKUP_MAGIC "TFCBKUP1"
#define BACKUP_VERSION 2u
#define BACKUP_FILE "backup.tfcb"

typedef struct {
    char *dir, *path, *tmp;
    int64_t save_freq;     /* 0: epoch ends only; N: also every N batches */
    int64_t since_save;    /* batches since the last backup */
    int epoch;             /* the running epoch */
} backup;

/* ---- writing ---- */

typedef struct {
    FILE *f;
    uLong crc;
    bool ok;
} wr;

static void w_bytes(wr *w, const void *p, size_t n) {
    if (!w->ok || n == 0) return;
    w->crc = crc32(w->crc, p, (uInt)n);
    w->ok = fwrite(p, 1, n, w->f) == n;
}

static void w_tensor(wr *w, const tfc_tensor *t) {
    int32_t dt = (int32_t)tfc_tensor_dtype(t), rank = tfc_tensor_rank(t);
    uint64_t nbytes = tfc_tensor_byte_size(t);
    w_bytes(w, &dt, sizeof dt);
    w_bytes(w, &rank, sizeof rank);
    for (int i = 0; i < rank; i++) {
        int64_t d = tfc_tensor_dim(t, i);
        w_bytes(w, &d, sizeof d);
    }
    w_bytes(w, &nbytes, sizeof nbytes);
    /* The CRC is computed in chunks: zlib's length is 32-bit. */
    const unsigned char *p = tfc_tensor_data(t);
    for (uint64_t off = 0; off < nbytes && w->ok;) {
        size_t n = nbytes - off > (1u << 30) ? (1u << 30) : (size_t)(nbytes - off);
        w_bytes(w, p + off, n);
        off += n;
    }
}

static int collect_opt_vars(tfc_model *m, tfc_variable ***out, tfc_status *st) {
    *out = NULL;
    tfc_optimizer *o = tfc_model_optimizer(m);
    if (!o) return 0;
    int n = tfc_optimizer_variables(o, NULL, 0);
    if (n <= 0) return 0;
    tfc_variable **v = tfc_calloc((size_t)n, sizeof *v);
    if (!v) {
        tfc_status_oom(st, "BackupAndRestore", 0);
        return -1;
    }
    *out = v;
    return tfc_optimizer_variables(o, v, n);
}

/* step: batches done in `epoch` (-1: the epoch is complete). */
static bool backup_save(backup *b, tfc_model *m, int epoch, int64_t step, tfc_status *st) {
    if (!tfc_make_dirs(b->dir, "BackupAndRestore", st)) return false;
    tfc_fit_state *fs = TFC_IMPL(m)->fit;
    tfc_tensor *its = fs && fs->iter ? tfc_iterator_save_state(fs->iter, st) : NULL;
    if (fs && fs->iter && !its) return false;
    int nw = tfc_model_get_weights(m, NULL, 0, st);
    if (nw < 0) return false;
    tfc_tensor **w = tfc_calloc((size_t)(nw ? nw : 1), sizeof *w);
    if (!w) return tfc_status_oom(st, "BackupAndRestore", 0);
    tfc_variable **ov = NULL;
    int no = -1;
    bool ok = tfc_model_get_weights(m, w, nw, st) >= 0 && (no = collect_opt_vars(m, &ov, st)) >= 0;
    FILE *f = ok ? fopen(b->tmp, "wb") : NULL;
    if (ok && !f) ok = tfc_status_set(st, TFC_PERMISSION_DENIED, "BackupAndRestore: cannot write %s: %s", b->tmp, strerror(errno));
    if (ok) {
        wr wt = {.f = f, .crc = crc32(0, NULL, 0), .ok = true};
        uint32_t version = BACKUP_VERSION, n_w = (uint32_t)nw, n_o = (uint32_t)no;
        int64_t ep = epoch;
        uint64_t seed = tfc_model_fit_seed_base(m);
        w_bytes(&wt, BACKUP_MAGIC, 8);
        w_bytes(&wt, &version, sizeof version);
        w_bytes(&wt, &ep, sizeof ep);
        w_bytes(&wt, &seed, sizeof seed);
        w_bytes(&wt, &n_w, sizeof n_w);
        w_bytes(&wt, &n_o, sizeof n_o);
        for (int i = 0; i < nw; i++) w_tensor(&wt, w[i]);
        for (int i = 0; i < no; i++) w_tensor(&wt, tfc_variable_value(ov[i]));
        size_t slen = 0;
        const char *sb = its ? tfc_tensor_string(its, 0, &slen) : NULL;
        uint64_t state_len = slen;
        w_bytes(&wt, &step, sizeof step);
        w_bytes(&wt, &state_len, sizeof state_len);
        w_bytes(&wt, sb, slen);
        uint32_t crc = (uint32_t)wt.crc;
        if (wt.ok) wt.ok = fwrite(&crc, 1, sizeof crc, f) == sizeof crc;
        wt.ok = wt.ok && fflush(f) == 0 && fsync(fileno(f)) == 0;
        wt.ok = (fclose(f) == 0) && wt.ok;
        if (!wt.ok) {
            ok = tfc_status_set(st, TFC_DATA_LOSS, "BackupAndRestore: writing %s failed: %s", b->tmp, strerror(errno));
            remove(b->tmp);
        } else if (rename(b->tmp, b->path) != 0) {
            ok = tfc_status_set(st, TFC_DATA_LOSS, "BackupAndRestore: renaming %s to %s failed: %s", b->tmp, b->path,
                                strerror(errno));
            remove(b->tmp);
        }
    }
    for (int i = 0; i < nw; i++) tfc_tensor_unref(w[i]);
    tfc_free(w);
    tfc_free(ov);
    tfc_tensor_unref(its);
    return ok;
}

/* ---- reading ---- */

typedef struct {
    const unsigned char *p;
    size_t n, off;
    bool ok;
} rd;

static bool r_bytes(rd *r, void *dst, size_t n) {
    if (!r->ok || n > r->n - r->off) return r->ok = false;
    memcpy(dst, r->p + r->off, n);
    r->off += n;
    return true;
}

/* The next tensor as a new caller-owned tensor, or NULL (r->ok false) when the data are malformed. */
static tfc_tensor *r_tensor(rd *r, tfc_status *st) {
    int32_t dt = 0, rank = 0;
    int64_t dims[TFC_MAX_RANK];
    uint64_t nbytes = 0;
    if (!r_bytes(r, &dt, sizeof dt) || !r_bytes(r, &rank, sizeof rank) || rank < 0 || rank > TFC_MAX_RANK ||
        !tfc_dtype_is_valid((tfc_dtype)dt)) {
        r->ok = false;
        return NULL;
    }
    for (int i = 0; i < rank && i < TFC_MAX_RANK; i++) {
        int64_t d = -1;
        if (!r_bytes(r, &d, sizeof d) || d < 0) return NULL;
        dims[i] = d;
    }
    if (!r_bytes(r, &nbytes, sizeof nbytes) || nbytes > r->n - r->off) {
        r->ok = false;
        return NULL;
    }
    tfc_status tst = TFC_STATUS_INIT;
    tfc_tensor *t = tfc_tensor_from_data((tfc_dtype)dt, dims, rank, r->p + r->off, (size_t)nbytes, &tst);
    if (!t) {
        if (tst.code == TFC_RESOURCE_EXHAUSTED) *st = tst;
        r->ok = false;
        return NULL;
    }
    r->off += nbytes;
    return t;
}

static bool read_file(const char *path, unsigned char **data, size_t *n, tfc_status *st) {
    FILE *f = fopen(path, "rb");
    if (!f) return tfc_status_set(st, TFC_NOT_FOUND, "BackupAndRestore: cannot open %s: %s", path, strerror(errno));
    bool ok = fseek(f, 0, SEEK_END) == 0;
    long len = ok ? ftell(f) : -1;
    ok = ok && len >= 0 && fseek(f, 0, SEEK_SET) == 0;
    *data = ok ? tfc_malloc((size_t)len + 1) : NULL;
    ok = ok && *data && fread(*data, 1, (size_t)len, f) == (size_t)len;
    fclose(f);
    if (!ok) {
        tfc_free(*data);
        *data = NULL;
        return tfc_status_set(st, TFC_DATA_LOSS, "BackupAndRestore: reading %s failed", path);
    }
    *n = (size_t)len;
    return true;
}

static bool backup_restore(backup *b, tfc_model *m, tfc_status *st) {
    unsigned char *data = NULL;
    size_t n = 0;
    if (!read_file(b->path, &data, &n, st)) return false;
    rd r = {.p = data, .n = n, .ok = true};
    char magic[8];
    uint32_t version = 0, n_w = 0, n_o = 0, crc = 0;
    int64_t epoch = -1;
    uint64_t seed = 0;
    tfc_tensor **t = NULL;
    tfc_variable **ov = NULL;
    int loaded = 0;
    bool ok = n >= 8 + 4 && r_bytes(&r, magic, 8) && !memcmp(magic, BACKUP_MAGIC, 8);
    if (ok) {
        memcpy(&crc, data + n - 4, 4);
        ok = (uint32_t)crc32(crc32(0, NULL, 0), data, (uInt)(n - 4)) == crc;
        r.n = n - 4;
    }
    ok = ok && r_bytes(&r, &version, 4) && (version == 1 || version == BACKUP_VERSION) && r_bytes(&r, &epoch, 8) &&
         epoch >= 0 &&
         r_bytes(&r, &seed, 8) && r_bytes(&r, &n_w, 4) && r_bytes(&r, &n_o, 4) && n_w < (1u << 24) && n_o < (1u << 24);
    if (!ok) {
        tfc_free(data);
        return tfc_status_set(st, TFC_DATA_LOSS, "BackupAndRestore: %s is not a valid backup (bad header or checksum)",
                              b->path);
    }
    t = tfc_calloc((size_t)(n_w + n_o + 1), sizeof *t);
    if (!t) ok = tfc_status_oom(st, "BackupAndRestore", 0);
    for (uint32_t i = 0; ok && i < n_w + n_o; i++, loaded++)
        if (!(t[i] = r_tensor(&r, st))) {
            ok = false;
            if (st->code == TFC_OK)
                tfc_status_set(st, TFC_DATA_LOSS, "BackupAndRestore: %s: tensor %u is malformed", b->path, i);
        }
    int64_t step = -1;
    uint64_t state_len = 0;
    const char *state = NULL;
    if (ok && version >= 2) {
        if (!r_bytes(&r, &step, 8) || step < -1 || !r_bytes(&r, &state_len, 8) || state_len > r.n - r.off)
            ok = tfc_status_set(st, TFC_DATA_LOSS, "BackupAndRestore: %s: malformed position record", b->path);
        else state = (const char *)r.p + r.off, r.off += (size_t)state_len;
    }
    if (ok && r.off != r.n) ok = tfc_status_set(st, TFC_DATA_LOSS, "BackupAndRestore: %s: trailing data", b->path);
    tfc_fit_state *fs = TFC_IMPL(m)->fit;
    if (ok && (step >= 0 || state_len) && !(fs && fs->dataset))
        ok = tfc_status_set(st, TFC_INVALID_ARGUMENT,
                            "BackupAndRestore: %s was written by a fit fed from a dataset (it holds the iterator's "
                            "position); resume it with fit on the same dataset",
                            b->path);
    /* The optimizer's slots appear at its first update: create them, then overwrite everything. */
    int have_w = ok ? tfc_model_get_weights(m, NULL, 0, st) : 0;
    if (ok && have_w != (int)n_w)
        ok = tfc_status_set(st, TFC_INVALID_ARGUMENT,
                            "BackupAndRestore: %s holds %u weights but model \"%s\" has %d (a different model?)", b->path,
                            n_w, tfc_layer_name(tfc_model_as_layer(m)), have_w);
    if (ok && n_o > 0) ok = tfc_model_build_optimizer(m, st);
    int have_o = ok ? collect_opt_vars(m, &ov, st) : 0;
    if (ok && have_o != (int)n_o)
        ok = tfc_status_set(st, TFC_INVALID_ARGUMENT,
                            "BackupAndRestore: %s holds %u optimizer variables but the optimizer has %d", b->path, n_o,
                            have_o < 0 ? 0 : have_o);
    for (uint32_t i = 0; ok && i < n_o; i++) {
        tfc_variable *v = ov[i];
        if (!tfc_shape_equal(tfc_variable_shape(v), tfc_tensor_shape(t[n_w + i])) ||
            tfc_variable_dtype(v) != tfc_tensor_dtype(t[n_w + i]))
            ok = tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                "BackupAndRestore: optimizer variable %u (%s) is %s %s in the model but %s %s in %s", i,
                                tfc_variable_name(v), tfc_dtype_name(tfc_variable_dtype(v)),
                                TFC_KSHP(tfc_variable_shape(v)), tfc_dtype_name(tfc_tensor_dtype(t[n_w + i])),
                                TFC_KSHP(tfc_tensor_shape(t[n_w + i])), b->path);
    }
    if (ok) ok = tfc_model_set_weights(m, t, (int)n_w, st);
    for (uint32_t i = 0; ok && i < n_o; i++) ok = tfc_variable_assign(m->ctx, ov[i], t[n_w + i], st);
    if (ok && state_len) {
        size_t sl = (size_t)state_len;
        tfc_tensor_unref(fs->iter_state);
        ok = (fs->iter_state = tfc_tensor_from_strings(&state, &sl, NULL, 0, st)) != NULL;
    }
    if (ok) {
        tfc_model_fit_set_initial_epoch(m, step >= 0 ? (int)epoch : (int)epoch + 1);
        tfc_model_fit_set_seed_base(m, seed);
        if (fs) fs->initial_step = step;
    }
    for (int i = 0; i < loaded; i++) tfc_tensor_unref(t[i]);
    tfc_free(t);
    tfc_free(ov);
    tfc_free(data);
    return ok;
}

/* ---- hooks ---- */

static bool br_train_begin(tfc_callback *cb, tfc_model *m, const tfc_logs *logs, tfc_status *st) {
    backup *b = tfc_callback_user(cb);
    if (access(b->path, F_OK) != 0) return true;
    return backup_restore(b, m, st);
}

static bool is_chief(tfc_model *m) {
    tfc_strategy *s = TFC_IMPL(m)->strategy;
    return !s || tfc_strategy_is_chief(s);
}

static bool br_epoch_end(tfc_callback *cb, tfc_model *m, int epoch, tfc_logs *logs, tfc_status *st) {
    if (!is_chief(m)) return true;
    return backup_save(tfc_callback_user(cb), m, epoch, -1, st);
}

static bool br_epoch_begin(tfc_callback *cb, tfc_model *m, int epoch, const tfc_logs *logs, tfc_status *st) {
    ((backup *)tfc_callback_user(cb))->epoch = epoch;
    return true;
}

static bool br_batch_end(tfc_callback *cb, tfc_model *m, int64_t batch, const tfc_logs *logs, tfc_status *st) {
    backup *b = tfc_callback_user(cb);
    if (b->save_freq <= 0 || ++b->since_save < b->save_freq) return true;
    b->since_save = 0;
    tfc_fit_state *fs = TFC_IMPL(m)->fit;
    if (!fs || !fs->dataset || !fs->iter)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "BackupAndRestore: save_freq=%lld (backups within an epoch) needs fit fed from a dataset "
                              "(tfc_model_fit_dataset); fit on arrays backs up at epoch ends (save_freq 0)",
                              (long long)b->save_freq);
    if (!is_chief(m)) return true;
    return backup_save(b, m, b->epoch, batch + 1, st);
}

static bool br_train_end(tfc_callback *cb, tfc_model *m, const tfc_logs *logs, tfc_status *st) {
    backup *b = tfc_callback_user(cb);
    if (!is_chief(m)) return true;
    if (remove(b->path) != 0 && errno != ENOENT)
        return tfc_status_set(st, TFC_PERMISSION_DENIED, "BackupAndRestore: cannot delete %s: %s", b->path,
                              strerror(errno));
    rmdir(b->dir); /* only when empty */
    return true;
}

static void br_free(backup *b) {
    tfc_free(b->dir);
    tfc_free(b->path);
    tfc_free(b->tmp);
    tfc_free(b);
}

static void br_destroy(tfc_callback *cb) { br_free(tfc_callback_user(cb)); }

static const tfc_callback_fns br_fns = {.on_train_begin = br_train_begin,
                                        .on_epoch_begin = br_epoch_begin,
                                        .on_epoch_end = br_epoch_end,
                                        .on_train_batch_end = br_batch_end,
                                        .on_train_end = br_train_end,
                                        .destroy = br_destroy};

tfc_callback *tfc_callbacks_backup_and_restore(const char *backup_dir) {
    return tfc_callbacks_backup_and_restore_freq(backup_dir, 0);
}

tfc_callback *tfc_callbacks_backup_and_restore_freq(const char *backup_dir, int64_t save_freq) {
    if (!backup_dir || !*backup_dir || save_freq < 0) return NULL;
    backup *b = tfc_calloc(1, sizeof *b);
    if (!b) return NULL;
    size_t len = strlen(backup_dir) + sizeof BACKUP_FILE + 8;
    b->dir = tfc_strdup(backup_dir);
    b->path = tfc_malloc(len);
    b->tmp = tfc_malloc(len);
    tfc_callback *cb = NULL;
    if (b->dir && b->path && b->tmp) {
        snprintf(b->path, len, "%s/%s", backup_dir, BACKUP_FILE);
        snprintf(b->tmp, len, "%s/%s.tmp", backup_dir, BACKUP_FILE);
        b->save_freq = save_freq;
        cb = tfc_callback_new(&br_fns, b);
    }
    if (!cb) br_free(b);
    return cb;
}
