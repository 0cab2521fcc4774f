/* LevelDB-format tables, read and written (see table.h; the layout is in specs/savedmodel.md §6.1). */
#include <stdio.h>
#include <string.h>

#include "saved_model/table.h"
#include "tfc/platform.h"

#define TABLE_MAGIC 0xdb4775248b80fb57ull
#define FOOTER_SIZE 48
#define TRAILER_SIZE 5
#define RESTART_INTERVAL 16
#define MAX_BLOCK_BYTES ((size_t)1 << 27) /* an uncompressed block; TensorFlow writes 256 KiB */

static uint32_t le32(const uint8_t *p) {
    return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* ---- bytes ---- */

bool tfc_bytes_append(tfc_bytes *b, const void *p, size_t n, tfc_status *st) {
    if (n > SIZE_MAX - b->size) return tfc_status_set(st, TFC_RESOURCE_EXHAUSTED, "buffer size overflows");
    if (b->size + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->size + n) cap = cap > SIZE_MAX / 2 ? b->size + n : cap * 2;
        uint8_t *d = tfc_realloc(b->data, cap);
        if (!d) return tfc_status_oom(st, "buffer", cap);
        b->data = d;
        b->cap = cap;
    }
    if (n) memcpy(b->data + b->size, p, n);
    b->size += n;
    return true;
}

bool tfc_bytes_varint(tfc_bytes *b, uint64_t v, tfc_status *st) {
    uint8_t t[10];
    size_t n = 0;
    do {
        t[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    return tfc_bytes_append(b, t, n, st);
}

bool tfc_bytes_fixed32(tfc_bytes *b, uint32_t v, tfc_status *st) {
    uint8_t t[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    return tfc_bytes_append(b, t, 4, st);
}

void tfc_bytes_free(tfc_bytes *b) {
    tfc_free(b->data);
    memset(b, 0, sizeof *b);
}

bool tfc_varint_read(const uint8_t *p, size_t *pos, size_t end, uint64_t *out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64 && *pos < end; shift += 7) {
        uint8_t c = p[(*pos)++];
        if (shift == 63 && c > 1) return false;
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false;
}

/* ---- reading ---- */

typedef struct {
    const uint8_t *file;
    size_t size;
    const char *what;
} table_src;

/* The contents of the block at handle (offset, n): CRC checked, decompressed when Snappy. *owned is set when
 * the contents were allocated (free it). */
static bool read_block(const table_src *s, uint64_t off, uint64_t n, const char *part, const uint8_t **out,
                       size_t *out_len, uint8_t **owned, tfc_status *st) {
    *owned = NULL;
    size_t limit = s->size - FOOTER_SIZE;
    if (off > limit || n > limit - off || TRAILER_SIZE > limit - off - n)
        return tfc_status_set(st, TFC_DATA_LOSS,
                              "%s: %s block at offset %llu size %llu runs past the end of the table (%zu bytes)",
                              s->what, part, (unsigned long long)off, (unsigned long long)n, s->size);
    const uint8_t *b = s->file + off, *t = b + n;
    uint32_t crc = tfc_crc32c_extend(tfc_crc32c(b, n), t, 1);
    if (tfc_crc32c_unmask(le32(t + 1)) != crc)
        return tfc_status_set(st, TFC_DATA_LOSS, "%s: %s block at offset %llu: block checksum mismatch", s->what,
                              part, (unsigned long long)off);
    if (t[0] == 0) {
        *out = b;
        *out_len = n;
        return true;
    }
    if (t[0] != 1)
        return tfc_status_set(st, TFC_DATA_LOSS, "%s: %s block at offset %llu: unknown compression type %u", s->what,
                              part, (unsigned long long)off, t[0]);
    if (!tfc_snappy_uncompress(b, n, MAX_BLOCK_BYTES, s->what, owned, out_len, st)) return false;
    *out = *owned;
    return true;
}

typedef bool (*entry_fn)(void *arg, const uint8_t *key, size_t klen, const uint8_t *val, size_t vlen,
                         tfc_status *st);

/* Walks the entries of one block's contents, rebuilding the prefix-compressed keys in *key. */
static bool walk_block(const table_src *s, const char *part, uint64_t off, const uint8_t *b, size_t n,
                       tfc_bytes *key, entry_fn fn, void *arg, tfc_status *st) {
    if (n < 4)
        return tfc_status_set(st, TFC_DATA_LOSS, "%s: %s block at offset %llu: %zu bytes is too short", s->what, part,
                              (unsigned long long)off, n);
    uint32_t nr = le32(b + n - 4);
    if (nr > (n - 4) / 4)
        return tfc_status_set(st, TFC_DATA_LOSS, "%s: %s block at offset %llu: %u restart points do not fit in %zu bytes",
                              s->what, part, (unsigned long long)off, nr, n);
    size_t end = n - 4 - 4 * (size_t)nr, pos = 0;
    key->size = 0;
    while (pos < end) {
        uint64_t shared, non_shared, vlen;
        size_t at = pos;
        if (!tfc_varint_read(b, &pos, end, &shared) || !tfc_varint_read(b, &pos, end, &non_shared) ||
            !tfc_varint_read(b, &pos, end, &vlen) || shared > key->size || non_shared > end - pos ||
            vlen > end - pos - non_shared)
            return tfc_status_set(st, TFC_DATA_LOSS, "%s: %s block at offset %llu: corrupt entry at byte %zu", s->what,
                                  part, (unsigned long long)off, at);
        key->size = (size_t)shared;
        if (!tfc_bytes_append(key, b + pos, (size_t)non_shared, st)) return false;
        pos += (size_t)non_shared;
        if (!fn(arg, key->data, key->size, b + pos, (size_t)vlen, st)) return false;
        pos += (size_t)vlen;
    }
    return true;
}

static int key_cmp(const uint8_t *a, size_t an, const uint8_t *b, size_t bn) {
    int c = an && bn ? memcmp(a, b, an < bn ? an : bn) : 0;
    return c ? c : an < bn ? -1 : an > bn;
}

typedef struct {
    const table_src *src;
    tfc_table *out;
    tfc_bytes key;
} index_walk;

static bool add_entry(void *arg, const uint8_t *key, size_t klen, const uint8_t *val, size_t vlen, tfc_status *st) {
    index_walk *w = arg;
    tfc_table *t = w->out;
    if (t->n) {
        const tfc_table_entry *last = &t->entries[t->n - 1];
        if (key_cmp((const uint8_t *)last->key, last->key_len, key, klen) >= 0)
            return tfc_status_set(st, TFC_DATA_LOSS, "%s: entry %zu: keys are not in increasing order", w->src->what,
                                  t->n);
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 16;
        tfc_table_entry *e = tfc_realloc(t->entries, cap * sizeof *e);
        if (!e) return tfc_status_oom(st, "table entries", cap * sizeof *e);
        t->entries = e;
        t->cap = cap;
    }
    char *m = tfc_malloc(klen + 1 + vlen + 1);
    if (!m) return tfc_status_oom(st, "table entry", klen + vlen + 2);
    if (klen) memcpy(m, key, klen);
    m[klen] = 0;
    if (vlen) memcpy(m + klen + 1, val, vlen);
    t->entries[t->n++] = (tfc_table_entry){m, klen, (const uint8_t *)m + klen + 1, vlen};
    return true;
}

static bool visit_data_block(void *arg, const uint8_t *key, size_t klen, const uint8_t *val, size_t vlen,
                             tfc_status *st) {
    (void)key, (void)klen;
    index_walk *w = arg;
    size_t pos = 0;
    uint64_t off, n;
    if (!tfc_varint_read(val, &pos, vlen, &off) || !tfc_varint_read(val, &pos, vlen, &n))
        return tfc_status_set(st, TFC_DATA_LOSS, "%s: index block: corrupt block handle", w->src->what);
    const uint8_t *b;
    size_t len;
    uint8_t *owned;
    if (!read_block(w->src, off, n, "data", &b, &len, &owned, st)) return false;
    bool ok = walk_block(w->src, "data", off, b, len, &w->key, add_entry, w, st);
    tfc_free(owned);
    return ok;
}

bool tfc_table_parse(const uint8_t *data, size_t size, const char *what, tfc_table *out, tfc_status *st) {
    memset(out, 0, sizeof *out);
    if (size < FOOTER_SIZE)
        return tfc_status_set(st, TFC_DATA_LOSS, "%s: %zu bytes is too short for a table (footer is %d bytes)", what,
                              size, FOOTER_SIZE);
    const uint8_t *f = data + size - FOOTER_SIZE;
    if ((le32(f + 40) | (uint64_t)le32(f + 44) << 32) != TABLE_MAGIC)
        return tfc_status_set(st, TFC_DATA_LOSS, "%s: not a table (bad magic number in the footer)", what);
    size_t pos = 0;
    uint64_t h[4];
    for (int i = 0; i < 4; i++)
        if (!tfc_varint_read(f, &pos, 40, &h[i]))
            return tfc_status_set(st, TFC_DATA_LOSS, "%s: footer: corrupt block handle", what);
    table_src s = {data, size, what};
    const uint8_t *b;
    size_t len;
    uint8_t *owned;
    /* the metaindex is empty in TensorFlow's files, but its CRC still says whether the file is intact */
    if (!read_block(&s, h[0], h[1], "metaindex", &b, &len, &owned, st)) return false;
    tfc_free(owned);
    if (!read_block(&s, h[2], h[3], "index", &b, &len, &owned, st)) return false;
    index_walk w = {&s, out, {0}};
    tfc_bytes ikey = {0};
    bool ok = walk_block(&s, "index", h[2], b, len, &ikey, visit_data_block, &w, st);
    tfc_free(owned);
    tfc_bytes_free(&ikey);
    tfc_bytes_free(&w.key);
    if (!ok) tfc_table_free(out);
    return ok;
}

void tfc_table_free(tfc_table *t) {
    if (!t) return;
    for (size_t i = 0; i < t->n; i++) tfc_free(t->entries[i].key);
    tfc_free(t->entries);
    memset(t, 0, sizeof *t);
}

const tfc_table_entry *tfc_table_find(const tfc_table *t, const char *key, size_t key_len) {
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const tfc_table_entry *e = &t->entries[mid];
        int c = key_cmp((const uint8_t *)e->key, e->key_len, (const uint8_t *)key, key_len);
        if (c == 0) return e;
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

/* ---- writing ---- */

typedef struct {
    tfc_bytes buf, last;
    tfc_bytes restarts; /* uint32 LE offsets */
    int interval, counter;
    size_t n;
} block_builder;

static void bb_reset(block_builder *bb) {
    bb->buf.size = bb->last.size = bb->restarts.size = 0;
    bb->counter = 0;
    bb->n = 0;
}

static bool bb_add(block_builder *bb, const uint8_t *key, size_t klen, const uint8_t *val, size_t vlen,
                   tfc_status *st) {
    size_t shared = 0;
    if (bb->n == 0 || bb->counter >= bb->interval) {
        if (!tfc_bytes_fixed32(&bb->restarts, (uint32_t)bb->buf.size, st)) return false;
        bb->counter = 0;
    } else {
        size_t m = klen < bb->last.size ? klen : bb->last.size;
        while (shared < m && bb->last.data[shared] == key[shared]) shared++;
    }
    if (!tfc_bytes_varint(&bb->buf, shared, st) || !tfc_bytes_varint(&bb->buf, klen - shared, st) ||
        !tfc_bytes_varint(&bb->buf, vlen, st) || !tfc_bytes_append(&bb->buf, key + shared, klen - shared, st) ||
        !tfc_bytes_append(&bb->buf, val, vlen, st))
        return false;
    bb->last.size = 0;
    if (!tfc_bytes_append(&bb->last, key, klen, st)) return false;
    bb->counter++;
    bb->n++;
    return true;
}

/* Appends the restart array (an empty block gets the single restart 0) and the count. */
static bool bb_finish(block_builder *bb, tfc_status *st) {
    if (bb->n == 0 && !tfc_bytes_fixed32(&bb->restarts, 0, st)) return false;
    return tfc_bytes_append(&bb->buf, bb->restarts.data, bb->restarts.size, st) &&
           tfc_bytes_fixed32(&bb->buf, (uint32_t)(bb->restarts.size / 4), st);
}

static void bb_free(block_builder *bb) {
    tfc_bytes_free(&bb->buf);
    tfc_bytes_free(&bb->last);
    tfc_bytes_free(&bb->restarts);
}

struct tfc_table_builder {
    size_t block_size;
    tfc_bytes file, last_key;
    block_builder data, index;
    bool any;
};

tfc_table_builder *tfc_table_builder_new(size_t block_size, tfc_status *st) {
    tfc_table_builder *b = tfc_calloc(1, sizeof *b);
    if (!b) {
        tfc_status_oom(st, "table builder", sizeof *b);
        return NULL;
    }
    b->block_size = block_size ? block_size : 256 * 1024;
    b->data.interval = RESTART_INTERVAL;
    b->index.interval = 1;
    return b;
}

/* Writes the finished block bb with its trailer; off and n get its handle. */
static bool emit_block(tfc_table_builder *b, block_builder *bb, uint64_t *off, uint64_t *n, tfc_status *st) {
    if (!bb_finish(bb, st)) return false;
    *off = b->file.size;
    *n = bb->buf.size;
    uint8_t type = 0;
    uint32_t crc = tfc_crc32c_mask(tfc_crc32c_extend(tfc_crc32c(bb->buf.data, bb->buf.size), &type, 1));
    return tfc_bytes_append(&b->file, bb->buf.data, bb->buf.size, st) && tfc_bytes_append(&b->file, &type, 1, st) &&
           tfc_bytes_fixed32(&b->file, crc, st);
}

static bool flush_data(tfc_table_builder *b, tfc_status *st) {
    if (b->data.n == 0) return true;
    uint64_t off, n;
    tfc_bytes h = {0};
    /* the index key is the block's last key: >= every key in it and < the next block's first */
    bool ok = emit_block(b, &b->data, &off, &n, st) && tfc_bytes_varint(&h, off, st) && tfc_bytes_varint(&h, n, st) &&
              bb_add(&b->index, b->last_key.data, b->last_key.size, h.data, h.size, st);
    tfc_bytes_free(&h);
    bb_reset(&b->data);
    return ok;
}

bool tfc_table_builder_add(tfc_table_builder *b, const void *key, size_t key_len, const void *value, size_t value_len,
                           tfc_status *st) {
    if (b->any && key_cmp(b->last_key.data, b->last_key.size, key, key_len) >= 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "table: key '%.*s' added out of order", (int)key_len,
                              (const char *)key);
    b->last_key.size = 0;
    if (!tfc_bytes_append(&b->last_key, key, key_len, st) ||
        !bb_add(&b->data, key, key_len, value, value_len, st))
        return false;
    b->any = true;
    if (b->data.buf.size + b->data.restarts.size + 4 >= b->block_size) return flush_data(b, st);
    return true;
}

bool tfc_table_builder_finish(tfc_table_builder *b, uint8_t **out, size_t *size, tfc_status *st) {
    block_builder meta = {.interval = RESTART_INTERVAL};
    uint64_t h[4];
    bool ok = flush_data(b, st) && emit_block(b, &meta, &h[0], &h[1], st) && emit_block(b, &b->index, &h[2], &h[3], st);
    bb_free(&meta);
    if (!ok) return false;
    tfc_bytes foot = {0};
    for (int i = 0; ok && i < 4; i++) ok = tfc_bytes_varint(&foot, h[i], st);
    uint8_t zero[40] = {0};
    ok = ok && tfc_bytes_append(&foot, zero, 40 - foot.size, st) && tfc_bytes_fixed32(&foot, (uint32_t)TABLE_MAGIC, st) &&
         tfc_bytes_fixed32(&foot, (uint32_t)(TABLE_MAGIC >> 32), st) &&
         tfc_bytes_append(&b->file, foot.data, foot.size, st);
    tfc_bytes_free(&foot);
    if (!ok) return false;
    *out = b->file.data;
    *size = b->file.size;
    memset(&b->file, 0, sizeof b->file);
    return true;
}

void tfc_table_builder_free(tfc_table_builder *b) {
    if (!b) return;
    tfc_bytes_free(&b->file);
    tfc_bytes_free(&b->last_key);
    bb_free(&b->data);
    bb_free(&b->index);
    tfc_free(b);
}
