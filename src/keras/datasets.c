/* tf.keras.datasets.mnist / fashion_mnist: IDX files, gzip-compressed (as Keras downloads them and Debian's
 * dataset-fashion-mnist installs them) or raw. The files come from outside, so every header field is
 * validated and the data length must match the dims exactly. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "tfc/keras/datasets.h"

/* Larger than any IDX data set (EMNIST's biggest file is ~700 MB); a header claiming more is corrupt. */
#define IDX_MAX_BYTES ((int64_t)1 << 32)

static const char *const fashion_mnist_classes[] = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                                     "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};

const char *const *tfc_datasets_fashion_mnist_class_names(void) { return fashion_mnist_classes; }

static bool file_exists(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    fclose(f);
    return true;
}

/* Reads exactly n bytes; *got receives what arrived (short only at end of data or on error). */
static bool gz_read_all(gzFile gz, void *buf, size_t n, size_t *got) {
    *got = 0;
    while (*got < n) {
        size_t want = n - *got;
        if (want > (1u << 30)) want = 1u << 30; /* gzread counts in unsigned int */
        int r = gzread(gz, (char *)buf + *got, (unsigned)want);
        if (r <= 0) return false;
        *got += (size_t)r;
    }
    return true;
}

/* Why a short read happened: a zlib error (corrupt or truncated stream) or a plain end of file. */
static const char *gz_why(gzFile gz, const char *path, bool compressed) {
    int err = Z_OK;
    const char *msg = gzerror(gz, &err);
    if (err == Z_ERRNO) return strerror(errno);
    if (err != Z_OK && msg && *msg) {
        /* zlib prefixes "<path>: " to "unexpected end of file", "invalid block type", ... */
        size_t n = strlen(path);
        if (!strncmp(msg, path, n) && !strncmp(msg + n, ": ", 2)) msg += n + 2;
        static _Thread_local char buf[128];
        snprintf(buf, sizeof buf, "%s: %s", err == Z_BUF_ERROR ? "truncated gzip stream" : "corrupt gzip data", msg);
        return buf;
    }
    return compressed ? "gzip stream ends early" : "file ends early";
}

static void free_buf(void *data, size_t nbytes, void *arg) {
    (void)nbytes;
    (void)arg;
    tfc_free(data);
}

tfc_tensor *tfc_idx_read(const char *path, tfc_status *st) {
    if (!path) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "idx_read: NULL path");
        return NULL;
    }
    /* Peek at the first bytes to tell gzip (1f 8b) from raw IDX (00 00 08 0r): zlib would read both, but
     * the messages differ and a raw file's length is checked against the header before reading. */
    FILE *f = fopen(path, "rb");
    if (!f) {
        int e = errno;
        tfc_status_set(st, e == ENOENT ? TFC_NOT_FOUND : e == EACCES ? TFC_PERMISSION_DENIED : TFC_UNKNOWN,
                       "%s: %s", path, strerror(e));
        return NULL;
    }
    unsigned char peek[2] = {0, 0};
    size_t npeek = fread(peek, 1, 2, f);
    long raw_size = -1;
    if (fseek(f, 0, SEEK_END) == 0) raw_size = ftell(f);
    fclose(f);
    bool compressed = npeek == 2 && peek[0] == 0x1f && peek[1] == 0x8b;

    gzFile gz = gzopen(path, "rb");
    if (!gz) {
        tfc_status_set(st, TFC_UNKNOWN, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    gzbuffer(gz, 1u << 17);
    tfc_tensor *t = NULL;
    unsigned char *data = NULL;
    unsigned char hdr[4];
    size_t got;
    if (!gz_read_all(gz, hdr, 4, &got)) {
        tfc_status_set(st, TFC_DATA_LOSS, "IDX file %s: %s while reading the 4-byte magic (got %zu bytes)", path,
                       gz_why(gz, path, compressed), got);
        goto done;
    }
    if (hdr[0] != 0 || hdr[1] != 0) {
        tfc_status_set(st, TFC_DATA_LOSS, "IDX file %s: bad magic %02x %02x %02x %02x (expected 00 00 08 0<rank>)",
                       path, hdr[0], hdr[1], hdr[2], hdr[3]);
        goto done;
    }
    if (hdr[2] != 0x08) {
        tfc_status_set(st, TFC_DATA_LOSS, "IDX file %s: data type code 0x%02x is not 0x08 (unsigned byte)", path,
                       hdr[2]);
        goto done;
    }
    int rank = hdr[3];
    if (rank < 1 || rank > 4) {
        tfc_status_set(st, TFC_DATA_LOSS, "IDX file %s: rank %d is outside 1..4", path, rank);
        goto done;
    }
    unsigned char dbuf[16];
    if (!gz_read_all(gz, dbuf, (size_t)rank * 4, &got)) {
        tfc_status_set(st, TFC_DATA_LOSS, "IDX file %s: %s in the dims header (%zu of %d bytes)", path,
                       gz_why(gz, path, compressed), got, rank * 4);
        goto done;
    }
    int64_t dims[4], total = 1;
    for (int i = 0; i < rank; i++) {
        dims[i] = (int64_t)dbuf[4 * i] << 24 | (int64_t)dbuf[4 * i + 1] << 16 | (int64_t)dbuf[4 * i + 2] << 8 |
                  (int64_t)dbuf[4 * i + 3];
        if (!tfc_mul_overflow_i64(total, dims[i], &total) || total > IDX_MAX_BYTES) {
            char ds[96];
            int k = 0;
            for (int j = 0; j < rank; j++) {
                uint32_t d = (uint32_t)dbuf[4 * j] << 24 | (uint32_t)dbuf[4 * j + 1] << 16 |
                             (uint32_t)dbuf[4 * j + 2] << 8 | dbuf[4 * j + 3];
                k += snprintf(ds + k, sizeof ds - (size_t)k, "%s%u", j ? "," : "", d);
            }
            tfc_status_set(st, TFC_DATA_LOSS, "IDX file %s: dims [%s] give more than %lld bytes of data", path, ds,
                           (long long)IDX_MAX_BYTES);
            goto done;
        }
    }
    int64_t header = 4 + 4 * (int64_t)rank;
    /* A raw file must hold exactly header + data bytes; checking before reading avoids allocating what a
     * corrupt header claims. */
    if (!compressed && raw_size >= 0 && raw_size != header + total) {
        tfc_status_set(st, TFC_DATA_LOSS, "IDX file %s: %s: %lld bytes, expected %lld (%lld header + %lld data)",
                       path, raw_size < header + total ? "truncated" : "trailing bytes after the data",
                       (long long)raw_size, (long long)(header + total), (long long)header, (long long)total);
        goto done;
    }
    /* Compressed: the true length is known only after inflating, so the buffer grows with the data that
     * actually arrives instead of trusting the header up front. */
    size_t cap = (size_t)(total < (1 << 20) ? total : (1 << 20)), have = 0;
    data = tfc_malloc(cap ? cap : 1);
    if (!data) {
        tfc_status_oom(st, "IDX data", cap);
        goto done;
    }
    while (have < (size_t)total) {
        if (have == cap) {
            size_t ncap = cap * 2 > (size_t)total ? (size_t)total : cap * 2;
            unsigned char *nd = tfc_realloc(data, ncap);
            if (!nd) {
                tfc_status_oom(st, "IDX data", ncap);
                goto done;
            }
            data = nd, cap = ncap;
        }
        size_t n;
        if (!gz_read_all(gz, data + have, cap - have, &n)) {
            have += n;
            tfc_status_set(st, TFC_DATA_LOSS, "IDX file %s: %s: %lld of %lld data bytes", path,
                           gz_why(gz, path, compressed), (long long)have, (long long)total);
            goto done;
        }
        have += n;
    }
    unsigned char extra;
    int r = gzread(gz, &extra, 1), zerr = Z_OK;
    /* zlib reports a stream cut inside its trailer (CRC, length) as a short read with Z_BUF_ERROR. */
    gzerror(gz, &zerr);
    if (r != 0 || zerr != Z_OK) {
        if (r > 0)
            tfc_status_set(st, TFC_DATA_LOSS, "IDX file %s: trailing bytes after the %lld data bytes of dims", path,
                           (long long)total);
        else
            tfc_status_set(st, TFC_DATA_LOSS, "IDX file %s: %s after the data", path, gz_why(gz, path, compressed));
        goto done;
    }
    t = tfc_tensor_wrap(TFC_UINT8, dims, rank, data, (size_t)total, free_buf, NULL, st);
    if (t) data = NULL;
done:
    tfc_free(data);
    gzclose(gz);
    return t;
}

/* dir/name.gz if present, else dir/name (raw); NOT_FOUND naming both. Caller frees. */
static char *find_file(const char *dir, const char *name, tfc_status *st) {
    size_t n = strlen(dir) + strlen(name) + 8;
    char *p = tfc_malloc(n);
    if (!p) {
        tfc_status_oom(st, "path", n);
        return NULL;
    }
    snprintf(p, n, "%s/%s.gz", dir, name);
    if (file_exists(p)) return p;
    snprintf(p, n, "%s/%s", dir, name);
    if (file_exists(p)) return p;
    tfc_status_set(st, TFC_NOT_FOUND, "%s/%s.gz (or %s uncompressed): no such file", dir, name, name);
    tfc_free(p);
    return NULL;
}

static tfc_tensor *read_part(const char *dir, const char *name, int want_rank, tfc_status *st) {
    char *path = find_file(dir, name, st);
    if (!path) return NULL;
    tfc_tensor *t = tfc_idx_read(path, st);
    if (t && tfc_tensor_rank(t) != want_rank) {
        tfc_status_set(st, TFC_DATA_LOSS, "IDX file %s: rank %d, expected %d (%s)", path, tfc_tensor_rank(t),
                       want_rank, want_rank == 1 ? "labels" : "images");
        tfc_tensor_unref(t);
        t = NULL;
    }
    if (t && want_rank == 1) {
        /* Both data sets have ten classes; a larger label would only fail later, inside a loss. */
        const uint8_t *y = tfc_tensor_data(t);
        int64_t n = tfc_tensor_num_elements(t);
        for (int64_t i = 0; i < n; i++) {
            if (y[i] > 9) {
                tfc_status_set(st, TFC_DATA_LOSS, "IDX file %s: label %d at index %lld is outside [0, 10)", path,
                               y[i], (long long)i);
                tfc_tensor_unref(t);
                t = NULL;
                break;
            }
        }
    }
    tfc_free(path);
    return t;
}

static bool load(const char *dir, const char *subdir, tfc_dataset_arrays *out, tfc_status *st) {
    if (!out) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "datasets load: NULL output");
    *out = (tfc_dataset_arrays){0};
    char buf[4096];
    if (!dir) {
        const char *env = getenv("TFC_DATASETS_DIR");
        if (env && *env)
            snprintf(buf, sizeof buf, "%s/%s", env, subdir);
        else
            snprintf(buf, sizeof buf, "/usr/share/datasets/%s", subdir);
        dir = buf;
    }
    static const char *const names[4] = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                                         "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"};
    tfc_tensor **parts[4] = {&out->x_train, &out->y_train, &out->x_test, &out->y_test};
    for (int i = 0; i < 4; i++) {
        if (!(*parts[i] = read_part(dir, names[i], i % 2 ? 1 : 3, st))) {
            tfc_datasets_free(out);
            return false;
        }
    }
    for (int i = 0; i < 4; i += 2) {
        int64_t nx = tfc_tensor_dim(*parts[i], 0), ny = tfc_tensor_dim(*parts[i + 1], 0);
        if (nx != ny) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s/%s: %lld images but %s has %lld labels", dir, names[i],
                           (long long)nx, names[i + 1], (long long)ny);
            tfc_datasets_free(out);
            return false;
        }
    }
    tfc_status_clear(st);
    return true;
}

bool tfc_datasets_fashion_mnist_load(const char *dir, tfc_dataset_arrays *out, tfc_status *st) {
    return load(dir, "fashion-mnist", out, st);
}

bool tfc_datasets_mnist_load(const char *dir, tfc_dataset_arrays *out, tfc_status *st) {
    return load(dir, "mnist", out, st);
}

void tfc_datasets_free(tfc_dataset_arrays *d) {
    if (!d) return;
    tfc_tensor_unref(d->x_train);
    tfc_tensor_unref(d->y_train);
    tfc_tensor_unref(d->x_test);
    tfc_tensor_unref(d->y_test);
    *d = (tfc_dataset_arrays){0};
}
