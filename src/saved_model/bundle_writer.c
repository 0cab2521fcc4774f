/* Tensor bundle writer (bundle.h), as TensorFlow's BundleWriter lays files out: one shard, tensors in the
 * order added, the index table sorted by key with the header under "". Bytes stream into a temporary shard;
 * finish builds the index, removes an older bundle's index at the same prefix, renames the shard into place and
 * then writes the index atomically, so a reader never sees an index whose shard is incomplete or another's. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "platform/file_io.h"
#include "platform/files.h"
#include "proto/proto_internal.h"
#include "proto/tensor_bundle.pb-c.h"
#include "saved_model/bundle.h"
#include "saved_model/table.h"

typedef struct {
    char *key;
    uint8_t *entry; /* packed BundleEntryProto */
    size_t entry_len;
} pending;

struct tfc_bundle_writer {
    char *prefix, *data_path, *tmp_path;
    FILE *f;
    int64_t offset;
    pending *items;
    size_t n, cap;
    bool failed;
};

tfc_bundle_writer *tfc_bundle_writer_new(const char *prefix, tfc_status *st) {
    tfc_bundle_writer *w = tfc_calloc(1, sizeof *w);
    size_t n = strlen(prefix) + 64;
    if (!w || !(w->prefix = tfc_malloc(n)) || !(w->data_path = tfc_malloc(n)) || !(w->tmp_path = tfc_malloc(n))) {
        tfc_status_oom(st, prefix, n);
        tfc_bundle_writer_free(w);
        return NULL;
    }
    snprintf(w->prefix, n, "%s", prefix);
    tfc_bundle_shard_name(prefix, 0, 1, w->data_path, n);
    snprintf(w->tmp_path, n, "%s.tempstate%ld", w->data_path, (long)getpid());
    char *slash = strrchr(w->prefix, '/');
    if (slash && slash != w->prefix) {
        *slash = 0;
        bool ok = tfc_make_dirs(w->prefix, "checkpoint directory", st);
        *slash = '/';
        if (!ok) {
            tfc_bundle_writer_free(w);
            return NULL;
        }
    }
    if (!(w->f = fopen(w->tmp_path, "wb"))) {
        tfc_status_set(st, tfc_errno_code(errno), "%s: cannot create: %s", w->tmp_path, strerror(errno));
        tfc_bundle_writer_free(w);
        return NULL;
    }
    tfc_status_clear(st);
    return w;
}

/* Writes a string tensor's bytes (the layout decode_strings in bundle.c reads) and returns its CRC. */
static bool write_strings(tfc_bundle_writer *w, const tfc_tensor *t, int64_t *size, uint32_t *crc, tfc_status *st) {
    int64_t n = tfc_tensor_num_elements(t);
    tfc_bytes head = {0};
    uint32_t lcrc = 0;
    for (int64_t i = 0; i < n; i++) {
        size_t len;
        tfc_tensor_string(t, i, &len);
        uint8_t v[8];
        size_t k = (uint64_t)len > UINT32_MAX ? 8 : 4;
        for (size_t j = 0; j < k; j++) v[j] = (uint8_t)((uint64_t)len >> (8 * j));
        lcrc = tfc_crc32c_extend(lcrc, v, k);
        if (!tfc_bytes_varint(&head, len, st)) goto fail;
    }
    size_t nvar = head.size;
    if (!tfc_bytes_fixed32(&head, tfc_crc32c_mask(lcrc), st)) goto fail;
    uint32_t c = tfc_crc32c_extend(lcrc, head.data + nvar, 4);
    if (fwrite(head.data, 1, head.size, w->f) != head.size) goto io;
    *size = (int64_t)head.size;
    for (int64_t i = 0; i < n; i++) {
        size_t len;
        const char *s = tfc_tensor_string(t, i, &len);
        if (len && fwrite(s, 1, len, w->f) != len) goto io;
        c = tfc_crc32c_extend(c, s, len);
        *size += (int64_t)len;
    }
    *crc = c;
    tfc_bytes_free(&head);
    return true;
io:
    tfc_status_set(st, tfc_errno_code(errno), "%s: write failed: %s", w->tmp_path, strerror(errno));
fail:
    tfc_bytes_free(&head);
    return false;
}

bool tfc_bundle_writer_add(tfc_bundle_writer *w, const char *key, const tfc_tensor *t, tfc_status *st) {
    if (w->failed) return tfc_status_set(st, TFC_FAILED_PRECONDITION, "%s: an earlier write failed", w->prefix);
    if (!key[0]) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: a tensor needs a non-empty key", w->prefix);
    for (size_t i = 0; i < w->n; i++)
        if (strcmp(w->items[i].key, key) == 0)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: Adding duplicate key: %s", w->prefix, key);
    tfc_dtype dt = tfc_tensor_dtype(t);
    if (tfc_tensor_is_symbolic(t) || !tfc_pb_dtype_is_data((int)dt))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: '%s': cannot save a %s tensor", w->prefix, key,
                              tfc_tensor_is_symbolic(t) ? "symbolic" : tfc_dtype_name(dt));
    if (w->n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 16;
        pending *p = tfc_realloc(w->items, cap * sizeof *p);
        if (!p) return tfc_status_oom(st, "bundle entries", cap * sizeof *p);
        w->items = p;
        w->cap = cap;
    }
    int64_t size;
    uint32_t crc;
    w->failed = true; /* until the bytes are all out */
    if (dt == TFC_STRING) {
        if (!write_strings(w, t, &size, &crc, st)) return false;
    } else {
        size = (int64_t)tfc_tensor_byte_size(t);
        crc = tfc_crc32c(tfc_tensor_data(t), (size_t)size);
        if (size && fwrite(tfc_tensor_data(t), 1, (size_t)size, w->f) != (size_t)size)
            return tfc_status_set(st, tfc_errno_code(errno), "%s: write failed: %s", w->tmp_path, strerror(errno));
    }
    Tensorflow__BundleEntryProto e = TENSORFLOW__BUNDLE_ENTRY_PROTO__INIT;
    e.dtype = (Tensorflow__DataType)dt;
    e.shape = tfc_pb_shape_to_proto(tfc_tensor_shape(t), st);
    e.offset = w->offset;
    e.size = size;
    e.crc32c = tfc_crc32c_mask(crc);
    pending *p = &w->items[w->n];
    size_t klen = strlen(key) + 1;
    bool ok = e.shape && (p->key = tfc_malloc(klen)) && tfc_pb_pack(&e.base, &p->entry, &p->entry_len, key, st);
    tfc_pb_free(e.shape);
    if (!ok) {
        tfc_free(p->key);
        if (st->code == TFC_OK) tfc_status_oom(st, key, klen);
        return false;
    }
    memcpy(p->key, key, klen);
    w->n++;
    w->offset += size;
    w->failed = false;
    tfc_status_clear(st);
    return true;
}

static int cmp_pending(const void *a, const void *b) {
    return strcmp(((const pending *)a)->key, ((const pending *)b)->key);
}

bool tfc_bundle_writer_finish(tfc_bundle_writer *w, tfc_status *st) {
    if (w->failed || !w->f) return tfc_status_set(st, TFC_FAILED_PRECONDITION, "%s: the bundle cannot be finished", w->prefix);
    FILE *f = w->f;
    w->f = NULL;
    bool ok = fflush(f) == 0 && fsync(fileno(f)) == 0;
    ok = fclose(f) == 0 && ok;
    if (!ok) {
        w->failed = true;
        return tfc_status_set(st, tfc_errno_code(errno), "%s: cannot write: %s", w->tmp_path, strerror(errno));
    }
    qsort(w->items, w->n, sizeof *w->items, cmp_pending);
    Tensorflow__VersionDef v = TENSORFLOW__VERSION_DEF__INIT;
    v.producer = 1;
    Tensorflow__BundleHeaderProto h = TENSORFLOW__BUNDLE_HEADER_PROTO__INIT;
    h.num_shards = 1;
    h.version = &v;
    uint8_t *hb = NULL, *file = NULL;
    size_t hlen, flen;
    tfc_table_builder *tb = tfc_table_builder_new(0, st);
    ok = tb && tfc_pb_pack(&h.base, &hb, &hlen, "BundleHeaderProto", st) && tfc_table_builder_add(tb, "", 0, hb, hlen, st);
    for (size_t i = 0; ok && i < w->n; i++)
        ok = tfc_table_builder_add(tb, w->items[i].key, strlen(w->items[i].key), w->items[i].entry, w->items[i].entry_len,
                                   st);
    ok = ok && tfc_table_builder_finish(tb, &file, &flen, st);
    if (ok) {
        size_t n = strlen(w->prefix) + 8;
        char *index = tfc_malloc(n);
        if (!index) ok = tfc_status_oom(st, w->prefix, n);
        else {
            snprintf(index, n, "%s.index", w->prefix);
            /* Replacing a bundle: its old index goes first, so an interruption between the two renames leaves
             * no index (no checkpoint) rather than an old index over new data. */
            if ((remove(index) != 0 && errno != ENOENT) || rename(w->tmp_path, w->data_path) != 0)
                ok = tfc_status_set(st, tfc_errno_code(errno), "%s: cannot write: %s", w->data_path, strerror(errno));
            ok = ok && tfc_file_write_atomic(index, file, flen, st);
            tfc_free(index);
        }
    }
    tfc_free(hb);
    tfc_free(file);
    tfc_table_builder_free(tb);
    if (ok) tfc_status_clear(st);
    else w->failed = true;
    return ok;
}

void tfc_bundle_writer_free(tfc_bundle_writer *w) {
    if (!w) return;
    if (w->f) {
        fclose(w->f);
        remove(w->tmp_path);
    }
    for (size_t i = 0; i < w->n; i++) {
        tfc_free(w->items[i].key);
        tfc_free(w->items[i].entry);
    }
    tfc_free(w->items);
    tfc_free(w->prefix);
    tfc_free(w->data_path);
    tfc_free(w->tmp_path);
    tfc_free(w);
}
