/* Whole-file reads and atomic writes for the readers and writers of file formats. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "platform/file_io.h"

bool tfc_file_read_all(const char *path, size_t max_bytes, void **data, size_t *size, tfc_status *st) {
    FILE *f = fopen(path, "rb");
    if (!f) return tfc_status_set(st, TFC_NOT_FOUND, "%s: %s", path, strerror(errno));
    long len = -1;
    if (fseek(f, 0, SEEK_END) == 0) len = ftell(f);
    if (len < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: cannot determine the file size", path);
    }
    if (max_bytes && (unsigned long)len > max_bytes) {
        fclose(f);
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: %ld bytes exceed the limit of %zu bytes", path, len,
                              max_bytes);
    }
    char *buf = tfc_malloc((size_t)len + 1);
    if (!buf) {
        fclose(f);
        return tfc_status_oom(st, path, (size_t)len + 1);
    }
    size_t got = fread(buf, 1, (size_t)len, f);
    fclose(f);
    if (got != (size_t)len) {
        tfc_free(buf);
        return tfc_status_set(st, TFC_DATA_LOSS, "%s: read %zu of %ld bytes", path, got, len);
    }
    buf[got] = 0;
    *data = buf;
    *size = got;
    tfc_status_clear(st);
    return true;
}

bool tfc_file_write_atomic(const char *path, const void *data, size_t size, tfc_status *st) {
    size_t plen = strlen(path);
    char *tmp = tfc_malloc(plen + 32);
    if (!tmp) return tfc_status_oom(st, path, plen + 32);
    snprintf(tmp, plen + 32, "%s.tmp%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    int err = f ? 0 : errno;
    bool ok = f && (size == 0 || fwrite(data, 1, size, f) == size);
    if (f && fflush(f) != 0) ok = false;
    if (f && fsync(fileno(f)) != 0) ok = false;
    if (f && fclose(f) != 0) ok = false;
    if (!ok && !err) err = errno;
    if (ok && rename(tmp, path) != 0) {
        ok = false;
        err = errno;
    }
    if (!ok) {
        tfc_status_set(st, TFC_UNAVAILABLE, "%s: cannot write: %s", path, strerror(err));
        remove(tmp);
    } else {
        tfc_status_clear(st);
    }
    tfc_free(tmp);
    return ok;
}
