/* The Keras 3 archive (keras_formats.md §4): model.save('m.keras') and keras.saving.load_model('m.keras').
 * A ZIP (libzip) of stored members metadata.json, config.json (config_keras3.c) and model.weights.h5 (the
 * Keras 3 weights tree of saving_keras3.c, built in memory). Members are read with bounded sizes: a member
 * larger than its limit, or whose inflated size exceeds what deflate can produce from its compressed size (a
 * zip bomb), is INVALID_ARGUMENT naming the file and the member; a missing member or a corrupt archive is
 * DATA_LOSS. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zip.h>

#include "keras/hdf5_io.h"
#include "keras/saving_internal.h"
#include "platform/file_io.h"
#include "platform/files.h"

#define MAX_JSON_MEMBER ((zip_uint64_t)64 << 20)
#define MAX_WEIGHTS_MEMBER ((zip_uint64_t)16 << 30)
/* deflate's best ratio is about 1032:1; a claim beyond it is corrupt or hostile */
#define MAX_DEFLATE_RATIO 1100

/* ---- write ------------------------------------------------------------------------------------------------- */

static bool add_member(zip_t *z, const char *name, const void *data, size_t size, const char *path,
                       tfc_status *st) {
    zip_source_t *src = zip_source_buffer(z, data, size, 0);
    zip_int64_t idx = src ? zip_file_add(z, name, src, ZIP_FL_OVERWRITE | ZIP_FL_ENC_UTF_8) : -1;
    if (idx < 0) {
        if (src) zip_source_free(src);
        return tfc_status_set(st, TFC_INTERNAL, "save %s: cannot add %s: %s", path, name, zip_strerror(z));
    }
    if (zip_set_file_compression(z, (zip_uint64_t)idx, ZIP_CM_STORE, 0) < 0)
        return tfc_status_set(st, TFC_INTERNAL, "save %s: cannot store %s: %s", path, name, zip_strerror(z));
    return true;
}

static bool weights_image(tfc_model *m, const char *path, void **img, size_t *size, tfc_status *st) {
    tfc_h5_quiet q;
    tfc_h5_quiet_begin(&q);
    hid_t f = tfc_h5_mem_create("model.weights.h5", st);
    bool ok = f >= 0 && tfc_keras3_write(m, f, true, path, st) && tfc_h5_mem_image(f, img, size, path, st);
    tfc_h5_close(f);
    tfc_h5_quiet_end(&q);
    return ok;
}

bool tfc_keras_save_zip(tfc_model *m, const char *path, tfc_status *st) {
    char *config = NULL, meta[160], *tmp = NULL;
    void *weights = NULL;
    size_t wsize = 0;
    zip_t *z = NULL;
    bool ok = false, created = false;
    cJSON *cfg = tfc_keras3_model_config(m, st);
    if (!cfg) return false;
    config = cJSON_PrintUnformatted(cfg);
    cJSON_Delete(cfg);
    if (!config) return tfc_status_oom(st, "config.json", 0);
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    snprintf(meta, sizeof meta, "{\"keras_version\": \"%s\", \"date_saved\": \"%04d-%02d-%02d@%02d:%02d:%02d\"}",
             TFC_KERAS3_VERSION, tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    if (!weights_image(m, path, &weights, &wsize, st)) goto done;
    size_t tn = strlen(path) + 32;
    if (!(tmp = tfc_malloc(tn))) {
        tfc_status_oom(st, "path", tn);
        goto done;
    }
    snprintf(tmp, tn, "%s.tmp.%ld", path, (long)getpid());
    int err = 0;
    if (!(z = zip_open(tmp, ZIP_CREATE | ZIP_TRUNCATE, &err))) {
        zip_error_t ze;
        zip_error_init_with_code(&ze, err);
        tfc_status_set(st, TFC_UNKNOWN, "save %s: cannot create %s: %s", path, tmp, zip_error_strerror(&ze));
        zip_error_fini(&ze);
        goto done;
    }
    created = true;
    if (!add_member(z, "metadata.json", meta, strlen(meta), path, st) ||
        !add_member(z, "config.json", config, strlen(config), path, st) ||
        !add_member(z, "model.weights.h5", weights, wsize, path, st))
        goto done;
    if (zip_close(z) < 0) {
        tfc_status_set(st, TFC_UNKNOWN, "save %s: cannot write %s: %s", path, tmp, zip_strerror(z));
        goto done;
    }
    z = NULL;
    if (!tfc_h5_sync_file(tmp) || rename(tmp, path) != 0) {
        int e = errno;
        tfc_status_set(st, tfc_errno_code(e), "save %s: cannot replace it with %s: %s", path, tmp, strerror(e));
        goto done;
    }
    created = false;
    ok = true;
done:
    if (z) zip_discard(z);
    if (created) unlink(tmp);
    tfc_free(tmp);
    tfc_free(weights);
    cJSON_free(config);
    return ok;
}

/* ---- read -------------------------------------------------------------------------------------------------- */

/* One member, whole, into a new buffer with a NUL after it. */
static bool read_member(zip_t *z, const char *name, zip_uint64_t max, const char *path, void **data, size_t *size,
                        tfc_status *st) {
    *data = NULL;
    zip_int64_t idx = zip_name_locate(z, name, 0);
    if (idx < 0)
        return tfc_status_set(st, TFC_DATA_LOSS, "%s: the Keras archive has no %s member", path, name);
    zip_stat_t zs;
    zip_stat_init(&zs);
    if (zip_stat_index(z, (zip_uint64_t)idx, 0, &zs) < 0 || !(zs.valid & ZIP_STAT_SIZE))
        return tfc_status_set(st, TFC_DATA_LOSS, "%s: cannot read the entry of %s: %s", path, name, zip_strerror(z));
    if (zs.size > max)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: member %s is %llu bytes, more than the limit of %llu",
                              path, name, (unsigned long long)zs.size, (unsigned long long)max);
    if ((zs.valid & ZIP_STAT_COMP_SIZE) && (zs.valid & ZIP_STAT_COMP_METHOD) && zs.comp_method != ZIP_CM_STORE &&
        zs.size / MAX_DEFLATE_RATIO > zs.comp_size)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: member %s claims %llu bytes from %llu compressed "
                              "bytes (a zip bomb?)", path, name, (unsigned long long)zs.size,
                              (unsigned long long)zs.comp_size);
    char *buf = tfc_malloc((size_t)zs.size + 1);
    if (!buf) return tfc_status_oom(st, name, (size_t)zs.size + 1);
    zip_file_t *zf = zip_fopen_index(z, (zip_uint64_t)idx, 0);
    zip_int64_t got = zf ? zip_fread(zf, buf, zs.size) : -1;
    char extra;
    /* the stream must end where the entry says: more data is a lie about the size */
    zip_int64_t more = got == (zip_int64_t)zs.size ? zip_fread(zf, &extra, 1) : 0;
    if (!zf || got != (zip_int64_t)zs.size || more != 0) {
        tfc_status_set(st, TFC_DATA_LOSS, "%s: member %s is corrupt (%s)", path, name,
                       zf ? zip_file_strerror(zf) : zip_strerror(z));
        if (zf) zip_fclose(zf);
        tfc_free(buf);
        return false;
    }
    if (zip_fclose(zf) != 0) {
        tfc_free(buf);
        return tfc_status_set(st, TFC_DATA_LOSS, "%s: member %s is corrupt (CRC mismatch)", path, name);
    }
    buf[zs.size] = 0;
    *data = buf;
    *size = (size_t)zs.size;
    return true;
}

static cJSON *parse_member(zip_t *z, const char *name, const char *path, tfc_status *st) {
    void *data;
    size_t size;
    if (!read_member(z, name, MAX_JSON_MEMBER, path, &data, &size, st)) return NULL;
    cJSON *j = cJSON_ParseWithLength(data, size);
    tfc_free(data);
    if (!j || !cJSON_IsObject(j)) {
        cJSON_Delete(j);
        tfc_status_set(st, TFC_DATA_LOSS, "%s: %s is not a JSON object", path, name);
    }
    return cJSON_IsObject(j) ? j : NULL;
}

/* Loads from an open archive: the model from config.json, compiled from its compile_config, then the
 * weights (and the optimizer state) from model.weights.h5. */
static tfc_model *load_archive(tfc_ctx *ctx, zip_t *z, const char *path, tfc_status *st) {
    tfc_model *m = NULL;
    void *img = NULL;
    size_t isize = 0;
    cJSON *meta = parse_member(z, "metadata.json", path, st), *cfg = NULL;
    if (!meta) return NULL;
    cJSON_Delete(meta);
    if (!(cfg = parse_member(z, "config.json", path, st))) return NULL;
    cJSON *cc = cJSON_DetachItemFromObjectCaseSensitive(cfg, "compile_config");
    char *js = cJSON_PrintUnformatted(cfg);
    if (!js) {
        tfc_status_oom(st, "config.json", 0);
        goto fail;
    }
    m = tfc_model_from_config(ctx, js, st);
    cJSON_free(js);
    if (!m) {
        char msg[sizeof st->msg];
        snprintf(msg, sizeof msg, "%s", st->msg);
        tfc_status_set(st, st->code, "%s: config.json: %s", path, msg);
        goto fail;
    }
    if (cJSON_IsObject(cc) && cc->child && !tfc_keras_compile_from_config(m, cc, path, st)) goto fail;
    if (!read_member(z, "model.weights.h5", MAX_WEIGHTS_MEMBER, path, &img, &isize, st)) goto fail;
    char what[1100];
    snprintf(what, sizeof what, "%s/model.weights.h5", path);
    tfc_h5_quiet q;
    tfc_h5_quiet_begin(&q);
    hid_t f = tfc_h5_mem_open(img, isize, what, st);
    bool ok = f >= 0 && tfc_keras3_read(m, f, true, what, st);
    tfc_h5_close(f);
    tfc_h5_quiet_end(&q);
    if (!ok) goto fail;
    tfc_free(img);
    cJSON_Delete(cc);
    cJSON_Delete(cfg);
    return m;
fail:
    tfc_free(img);
    tfc_model_free(m);
    cJSON_Delete(cc);
    cJSON_Delete(cfg);
    return NULL;
}

/* Opens path, or (data != NULL) size bytes in memory named path. */
static zip_t *open_archive(const char *path, const void *data, size_t size, tfc_status *st) {
    int err = 0;
    zip_t *z = NULL;
    zip_error_t ze;
    zip_error_init(&ze);
    if (data) {
        zip_source_t *src = zip_source_buffer_create(data, size, 0, &ze);
        if (src && !(z = zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &ze))) zip_source_free(src);
        err = zip_error_code_zip(&ze);
    } else {
        z = zip_open(path, ZIP_RDONLY | ZIP_CHECKCONS, &err);
    }
    zip_error_fini(&ze);
    if (!z) {
        zip_error_init_with_code(&ze, err);
        tfc_status_set(st, err == ZIP_ER_NOENT ? TFC_NOT_FOUND : err == ZIP_ER_READ || err == ZIP_ER_OPEN
                                                                     ? TFC_UNKNOWN
                                                                     : TFC_DATA_LOSS,
                       "%s: not a readable Keras archive: %s", path, zip_error_strerror(&ze));
        zip_error_fini(&ze);
    }
    return z;
}

tfc_model *tfc_keras_load_zip(tfc_ctx *ctx, const char *path, const void *data, size_t size, tfc_status *st) {
    zip_t *z = open_archive(path, data, size, st);
    if (!z) return NULL;
    tfc_model *m = load_archive(ctx, z, path, st);
    zip_discard(z);
    return m;
}
