/* Shared by the libFuzzer targets (tests/fuzz/fuzz_*.c): one eager context per process, quiet logging, a cap on
 * single allocations (a header may announce any size: the reader must refuse or fail cleanly, not swap), and
 * the input as a file for readers that take a path (an in-memory file, no disk). */
#ifndef TFC_FUZZ_UTIL_H
#define TFC_FUZZ_UTIL_H

#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tfc/tfc.h"

#define FUZZ_ALLOC_LIMIT ((size_t)256 << 20)

static inline tfc_ctx *fuzz_ctx(void) {
    static tfc_ctx *ctx;
    if (!ctx) {
        tfc_status st = TFC_STATUS_INIT;
        tfc_log_set_min_level((tfc_log_level)(TFC_LOG_ERROR + 1));
        ctx = tfc_ctx_new(&(tfc_ctx_opts){.intra_op_threads = 1}, &st);
        if (!ctx) {
            fprintf(stderr, "fuzz: no context: %s\n", st.msg);
            abort();
        }
        tfc_alloc_set_limit(FUZZ_ALLOC_LIMIT);
    }
    return ctx;
}

/* Writes data into an anonymous in-memory file; path gets a name that opens it. Returns the fd (close it
 * after use) or -1. */
static inline int fuzz_file(const uint8_t *data, size_t size, char *path, size_t path_size) {
    int fd = memfd_create("fuzz", 0);
    if (fd < 0) return -1;
    size_t done = 0;
    while (done < size) {
        ssize_t k = write(fd, data + done, size - done);
        if (k <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)k;
    }
    snprintf(path, path_size, "/proc/self/fd/%d", fd);
    return fd;
}

/* Writes data to a real file of this process under TMPDIR (HDF5 needs a path it can resolve, not /proc/self/fd),
 * overwritten by each input and removed at exit; path gets its name. False when it cannot be written. */
static char fuzz_temp_path[256];
static void fuzz_temp_remove(void) { unlink(fuzz_temp_path); }
static inline bool fuzz_temp_file(const uint8_t *data, size_t size, const char *suffix, char *path, size_t path_size) {
    if (!fuzz_temp_path[0]) {
        const char *d = getenv("TMPDIR");
        snprintf(fuzz_temp_path, sizeof fuzz_temp_path, "%s/tfc_fuzz_%d%s", d && *d ? d : "/tmp", (int)getpid(), suffix);
        atexit(fuzz_temp_remove);
    }
    FILE *f = fopen(fuzz_temp_path, "wb");
    if (!f) return false;
    bool ok = fwrite(data, 1, size, f) == size;
    ok = fclose(f) == 0 && ok;
    snprintf(path, path_size, "%s", fuzz_temp_path);
    return ok;
}

/* A scalar string tensor holding the bytes. */
static inline tfc_tensor *fuzz_string(const uint8_t *data, size_t size) {
    tfc_status st = TFC_STATUS_INIT;
    const char *s = (const char *)data;
    return tfc_tensor_from_strings(&s, &size, NULL, 0, &st);
}

#endif
