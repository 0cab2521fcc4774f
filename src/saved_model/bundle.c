/* Tensor bundle reader (bundle.h): the whole index is decoded and checked when the bundle opens, so that
 * listing a checkpoint never meets a corrupt entry later; tensor bytes are read on demand and checked against
 * their entry's size and CRC32C. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "core/size_check.h"
#include "platform/file_io.h"
#include "proto/proto_internal.h"
#include "proto/tensor_bundle.pb-c.h"
#include "saved_model/bundle.h"
#include "saved_model/table.h"

#define MAX_INDEX_BYTES ((size_t)1 << 30)
#define MAX_SHARDS 100000 /* TensorFlow names shards with five digits */
#define DT_LAST 31        /* the highest DataType number TensorFlow defines (excluding _REF types) */

struct tfc_bundle_reader {
    char *prefix, *index_path, *shard0_path;
    tfc_table table;
    tfc_bundle_entry *entries;
    size_t n;
    tfc_bundle_entry *slices; /* entries of partitioned variables' slices (binary keys), in table order */
    size_t n_slices;
    int num_shards;
    bool big_endian;
    FILE **shards; /* num_shards, opened on first use */
};

void tfc_bundle_shard_name(const char *prefix, int shard, int num_shards, char *buf, size_t size) {
    snprintf(buf, size, "%s.data-%05d-of-%05d", prefix, shard, num_shards);
}

static char *dup_str(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = tfc_malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

static bool parse_header(tfc_bundle_reader *r, tfc_status *st) {
    const tfc_table_entry *h = tfc_table_find(&r->table, "", 0);
    if (!h) return tfc_status_set(st, TFC_DATA_LOSS, "%s: no bundle header (the empty key) in the index", r->index_path);
    char what[512];
    snprintf(what, sizeof what, "%s: BundleHeaderProto", r->index_path);
    Tensorflow__BundleHeaderProto *p =
        (Tensorflow__BundleHeaderProto *)tfc_pb_unpack(&tensorflow__bundle_header_proto__descriptor, h->value,
                                                       h->value_len, 0, what, st);
    if (!p) return false;
    bool ok = true;
    if (p->num_shards < 1 || p->num_shards > MAX_SHARDS)
        ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: num_shards %d is out of range [1, %d]", what, p->num_shards,
                            MAX_SHARDS);
    else if (p->endianness != TENSORFLOW__BUNDLE_HEADER_PROTO__ENDIANNESS__LITTLE &&
             p->endianness != TENSORFLOW__BUNDLE_HEADER_PROTO__ENDIANNESS__BIG)
        ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: unknown endianness %d", what, (int)p->endianness);
    else if (p->version && p->version->min_consumer > 1)
        ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: version min_consumer %d is newer than this reader (1)", what,
                            p->version->min_consumer);
    r->num_shards = p->num_shards;
    r->big_endian = p->endianness == TENSORFLOW__BUNDLE_HEADER_PROTO__ENDIANNESS__BIG;
    tfc_pb_free(p);
    return ok;
}

static bool parse_entry(tfc_bundle_reader *r, const tfc_table_entry *te, tfc_bundle_entry *e, tfc_status *st) {
    char what[512];
    if (te->key[0]) snprintf(what, sizeof what, "%s: BundleEntryProto of '%s'", r->index_path, te->key);
    else snprintf(what, sizeof what, "%s: BundleEntryProto of a slice (key of %zu bytes)", r->index_path, te->key_len);
    Tensorflow__BundleEntryProto *p = (Tensorflow__BundleEntryProto *)tfc_pb_unpack(
        &tensorflow__bundle_entry_proto__descriptor, te->value, te->value_len, 0, what, st);
    if (!p) return false;
    bool ok = false;
    e->key = te->key;
    e->key_len = te->key_len;
    e->dtype = (int)p->dtype;
    e->shard_id = p->shard_id;
    e->offset = p->offset;
    e->size = p->size;
    e->crc32c = p->crc32c;
    e->sliced = p->n_slices > 0;
    int64_t n;
    if (e->dtype < 1 || e->dtype > DT_LAST) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: field dtype: unknown DataType %d", what, e->dtype);
    } else if (!tfc_pb_shape_from_proto(p->shape, &e->shape, what, st)) {
    } else if (e->shape.rank < 0 || !tfc_shape_is_fully_defined(&e->shape)) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: field shape is not fully defined", what);
    } else if (!tfc_shape_num_elements(&e->shape, &n, what, st)) {
    } else if (e->shard_id < 0 || e->shard_id >= r->num_shards) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: field shard_id %d is out of range [0, %d)", what, e->shard_id,
                       r->num_shards);
    } else if (e->offset < 0 || e->size < 0) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: negative field offset %lld or size %lld", what,
                       (long long)e->offset, (long long)e->size);
    } else {
        size_t bytes;
        ok = true;
        if (!e->sliced && tfc_pb_dtype_is_data(e->dtype) && e->dtype != TFC_STRING &&
            (!tfc_size_bytes(n, tfc_dtype_size((tfc_dtype)e->dtype), &bytes) || (uint64_t)e->size != bytes))
            ok = tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                "%s: field size %lld does not match %lld elements of %s", what, (long long)e->size,
                                (long long)n, tfc_dtype_name((tfc_dtype)e->dtype));
    }
    tfc_pb_free(p);
    return ok;
}

tfc_bundle_reader *tfc_bundle_open_at(const char *name, const char *index_path, const char *shard0_path,
                                      tfc_status *st) {
    tfc_bundle_reader *r = tfc_calloc(1, sizeof *r);
    if (!r) {
        tfc_status_oom(st, "bundle reader", sizeof *r);
        return NULL;
    }
    r->prefix = dup_str(name);
    r->index_path = dup_str(index_path);
    r->shard0_path = shard0_path ? dup_str(shard0_path) : NULL;
    void *data = NULL;
    size_t size = 0;
    if (!r->prefix || !r->index_path || (shard0_path && !r->shard0_path)) {
        tfc_status_oom(st, index_path, strlen(index_path));
        goto fail;
    }
    if (!tfc_file_read_all(index_path, MAX_INDEX_BYTES, &data, &size, st)) {
        if (st->code == TFC_NOT_FOUND)
            tfc_status_set(st, TFC_NOT_FOUND, "Unsuccessful TensorSliceReader constructor: Failed to find any matching "
                                              "files for %s (no %s)", name, index_path);
        goto fail;
    }
    bool ok = tfc_table_parse(data, size, index_path, &r->table, st);
    tfc_free(data);
    if (!ok || !parse_header(r, st)) goto fail;
    r->entries = tfc_calloc(r->table.n ? r->table.n : 1, sizeof *r->entries);
    r->slices = tfc_calloc(r->table.n ? r->table.n : 1, sizeof *r->slices);
    r->shards = tfc_calloc((size_t)r->num_shards, sizeof *r->shards);
    if (!r->entries || !r->slices || !r->shards) {
        tfc_status_oom(st, index_path, r->table.n * sizeof *r->entries);
        goto fail;
    }
    for (size_t i = 0; i < r->table.n; i++) {
        const tfc_table_entry *te = &r->table.entries[i];
        if (te->key_len == 0) continue;
        if (te->key[0] == 0) { /* a slice: EncodeTensorNameSlice keys start with OrderedCode's 0 */
            if (!parse_entry(r, te, &r->slices[r->n_slices], st)) goto fail;
            r->slices[r->n_slices++].table_index = i;
            continue;
        }
        if (strlen(te->key) != te->key_len) {
            tfc_status_set(st, TFC_DATA_LOSS, "%s: entry %zu: key holds a NUL byte", index_path, i);
            goto fail;
        }
        if (!parse_entry(r, te, &r->entries[r->n], st)) goto fail;
        r->entries[r->n++].table_index = i;
    }
    tfc_status_clear(st);
    return r;
fail:
    tfc_bundle_close(r);
    return NULL;
}

tfc_bundle_reader *tfc_bundle_open(const char *prefix, tfc_status *st) {
    size_t n = strlen(prefix) + 8;
    char *index = tfc_malloc(n);
    if (!index) {
        tfc_status_oom(st, prefix, n);
        return NULL;
    }
    snprintf(index, n, "%s.index", prefix);
    tfc_bundle_reader *r = tfc_bundle_open_at(prefix, index, NULL, st);
    tfc_free(index);
    return r;
}

void tfc_bundle_close(tfc_bundle_reader *r) {
    if (!r) return;
    for (int i = 0; r->shards && i < r->num_shards; i++)
        if (r->shards[i]) fclose(r->shards[i]);
    tfc_free(r->shards);
    tfc_free(r->entries);
    tfc_free(r->slices);
    tfc_table_free(&r->table);
    tfc_free(r->prefix);
    tfc_free(r->index_path);
    tfc_free(r->shard0_path);
    tfc_free(r);
}

size_t tfc_bundle_num_entries(const tfc_bundle_reader *r) { return r->n; }
const tfc_bundle_entry *tfc_bundle_entry_at(const tfc_bundle_reader *r, size_t i) {
    return i < r->n ? &r->entries[i] : NULL;
}
const char *tfc_bundle_prefix(const tfc_bundle_reader *r) { return r->prefix; }

const tfc_bundle_entry *tfc_bundle_find(const tfc_bundle_reader *r, const char *key) {
    size_t lo = 0, hi = r->n;
    while (lo < hi) { /* entries are in the table's bytewise order */
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(r->entries[mid].key, key);
        if (c == 0) return &r->entries[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

/* Reads e's bytes from its shard into a new buffer, after checking they lie inside the file. */
static uint8_t *read_bytes(tfc_bundle_reader *r, const tfc_bundle_entry *e, tfc_status *st) {
    char path[4096];
    if (e->shard_id == 0 && r->shard0_path) snprintf(path, sizeof path, "%s", r->shard0_path);
    else tfc_bundle_shard_name(r->prefix, e->shard_id, r->num_shards, path, sizeof path);
    FILE *f = r->shards[e->shard_id];
    if (!f && !(f = r->shards[e->shard_id] = fopen(path, "rb"))) {
        tfc_status_set(st, TFC_DATA_LOSS, "%s: cannot open data shard for '%s': %s", path, e->key, strerror(errno));
        return NULL;
    }
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || e->offset > (int64_t)sb.st_size || e->size > (int64_t)sb.st_size - e->offset) {
        tfc_status_set(st, TFC_DATA_LOSS, "%s: '%s': offset %lld + size %lld runs past the end of the shard (%lld bytes)",
                       path, e->key, (long long)e->offset, (long long)e->size, (long long)sb.st_size);
        return NULL;
    }
    uint8_t *buf = tfc_malloc(e->size ? (size_t)e->size : 1);
    if (!buf) {
        tfc_status_oom(st, e->key, (size_t)e->size);
        return NULL;
    }
    if (fseeko(f, (off_t)e->offset, SEEK_SET) != 0 || fread(buf, 1, (size_t)e->size, f) != (size_t)e->size) {
        tfc_free(buf);
        tfc_status_set(st, TFC_DATA_LOSS, "%s: '%s': short read of %lld bytes at offset %lld", path, e->key,
                       (long long)e->size, (long long)e->offset);
        return NULL;
    }
    return buf;
}

static bool crc_mismatch(const tfc_bundle_reader *r, const tfc_bundle_entry *e, uint32_t got, tfc_status *st) {
    return tfc_status_set(st, TFC_DATA_LOSS,
                          "%s: '%s': checksum does not match: stored %08x vs. calculated on the restored bytes %08x",
                          r->prefix, e->key, tfc_crc32c_unmask(e->crc32c), got);
}

/* DT_STRING layout: varint64 lengths, a masked CRC32C of the lengths (each as a 4-byte or, when larger than
 * 2^32-1, 8-byte little-endian integer), then the bytes. The entry's CRC covers those fixed-width lengths, the
 * stored checksum and the bytes. */
static tfc_tensor *decode_strings(const tfc_bundle_reader *r, const tfc_bundle_entry *e, const uint8_t *b,
                                  tfc_status *st) {
    int64_t n = tfc_shape_product(&e->shape);
    size_t size = (size_t)e->size, pos = 0;
    if (n > e->size) { /* each length takes at least one byte */
        tfc_status_set(st, TFC_DATA_LOSS, "%s: '%s': %lld strings cannot fit in %lld bytes", r->prefix, e->key,
                       (long long)n, (long long)e->size);
        return NULL;
    }
    size_t *lens = tfc_malloc(sizeof *lens * (size_t)(n ? n : 1));
    const char **strs = tfc_malloc(sizeof *strs * (size_t)(n ? n : 1));
    tfc_tensor *t = NULL;
    if (!lens || !strs) {
        tfc_status_oom(st, e->key, sizeof *lens * (size_t)n);
        goto done;
    }
    uint32_t lcrc = 0;
    uint64_t total = 0;
    for (int64_t i = 0; i < n; i++) {
        uint64_t len;
        if (!tfc_varint_read(b, &pos, size, &len)) {
            tfc_status_set(st, TFC_DATA_LOSS, "%s: '%s': corrupt length of string %lld", r->prefix, e->key, (long long)i);
            goto done;
        }
        uint8_t w[8];
        size_t k = len > UINT32_MAX ? 8 : 4;
        for (size_t j = 0; j < k; j++) w[j] = (uint8_t)(len >> (8 * j));
        lcrc = tfc_crc32c_extend(lcrc, w, k);
        lens[i] = len > size ? size + 1 : (size_t)len;
        total += lens[i];
    }
    if (size - pos < 4 || total != size - pos - 4) {
        tfc_status_set(st, TFC_DATA_LOSS, "%s: '%s': string lengths (%llu bytes) do not match the entry size %lld",
                       r->prefix, e->key, (unsigned long long)total, (long long)e->size);
        goto done;
    }
    uint32_t stored = (uint32_t)b[pos] | (uint32_t)b[pos + 1] << 8 | (uint32_t)b[pos + 2] << 16 | (uint32_t)b[pos + 3] << 24;
    if (tfc_crc32c_unmask(stored) != lcrc) {
        tfc_status_set(st, TFC_DATA_LOSS, "%s: '%s': checksum of the string lengths does not match", r->prefix, e->key);
        goto done;
    }
    uint32_t crc = tfc_crc32c_extend(lcrc, b + pos, size - pos);
    if (crc != tfc_crc32c_unmask(e->crc32c)) {
        crc_mismatch(r, e, crc, st);
        goto done;
    }
    pos += 4;
    for (int64_t i = 0; i < n; i++) {
        strs[i] = (const char *)b + pos;
        pos += lens[i];
    }
    t = tfc_tensor_from_strings(strs, lens, e->shape.dims, e->shape.rank, st);
done:
    tfc_free(lens);
    tfc_free(strs);
    return t;
}

static void byte_swap(uint8_t *p, size_t n, size_t w) {
    for (size_t i = 0; i + w <= n; i += w)
        for (size_t a = 0, b = w - 1; a < b; a++, b--) {
            uint8_t t = p[i + a];
            p[i + a] = p[i + b];
            p[i + b] = t;
        }
}

/* The value of a plain (unsliced) entry. */
static tfc_tensor *read_entry(tfc_bundle_reader *r, const tfc_bundle_entry *e, const char *name, tfc_status *st) {
    char db[32];
    if (!tfc_pb_dtype_is_data(e->dtype)) {
        tfc_status_set(st, TFC_UNIMPLEMENTED, "%s: '%s': %s", r->prefix, name, tfc_pb_dtype_str(e->dtype, db, sizeof db));
        return NULL;
    }
    uint8_t *b = read_bytes(r, e, st);
    if (!b) return NULL;
    tfc_tensor *t = NULL;
    if (e->dtype == TFC_STRING) {
        t = decode_strings(r, e, b, st);
    } else {
        uint32_t crc = tfc_crc32c(b, (size_t)e->size);
        if (crc != tfc_crc32c_unmask(e->crc32c)) {
            crc_mismatch(r, e, crc, st);
        } else {
            if (r->big_endian) byte_swap(b, (size_t)e->size, tfc_dtype_size((tfc_dtype)e->dtype));
            t = tfc_tensor_from_data((tfc_dtype)e->dtype, e->shape.dims, e->shape.rank, b, (size_t)e->size, st);
        }
    }
    tfc_free(b);
    return t;
}

/* OrderedCode (TensorFlow's strings::OrderedCode), the byte-order-preserving encoding of slice keys. */
static size_t oc_num(uint8_t *o, uint64_t v) { /* WriteNumIncreasing: a length byte, then big-endian bytes */
    int n = 0;
    for (uint64_t x = v; x; x >>= 8) n++;
    o[0] = (uint8_t)n;
    for (int i = 0; i < n; i++) o[1 + i] = (uint8_t)(v >> (8 * (n - 1 - i)));
    return (size_t)n + 1;
}

static size_t oc_signed(uint8_t *o, int64_t v) {
    /* WriteSignedNumIncreasing: L bytes hold the value sign-extended, its first L bits flipped as a length header
     * (7L - 1 value bits; L = 10 for the widest) */
    const uint64_t x = v < 0 ? ~(uint64_t)v : (uint64_t)v;
    int len = 1;
    while (len < 10 && (len * 7 - 1 >= 64 ? false : x >= (uint64_t)1 << (len * 7 - 1))) len++;
    uint8_t buf[10];
    for (int i = 0; i < 10; i++) buf[i] = i < 2 ? (v < 0 ? 0xff : 0) : (uint8_t)((uint64_t)v >> (8 * (9 - i)));
    uint8_t *b = buf + 10 - len;
    for (int bit = 0; bit < len; bit++) b[bit / 8] ^= (uint8_t)(0x80 >> (bit % 8));
    memcpy(o, b, (size_t)len);
    return (size_t)len;
}

/* checkpoint::EncodeTensorNameSlice: 0, the name (0x00 -> 00 ff, 0xff -> ff 00, ended by 00 01), the rank, then
 * each dim's start and length (-1: the whole dim). Returns the key's length, 0 when it would not fit. */
static size_t slice_key(uint8_t *o, size_t cap, const char *name, const Tensorflow__TensorSliceProto *sp) {
    size_t n = 0, len = strlen(name);
    if (cap < 2 * len + 16 + sp->n_extent * 20) return 0;
    n += oc_num(o + n, 0);
    for (size_t i = 0; i < len; i++) {
        uint8_t c = (uint8_t)name[i];
        o[n++] = c;
        if (c == 0xff) o[n++] = 0;
    }
    o[n++] = 0, o[n++] = 1;
    n += oc_num(o + n, sp->n_extent);
    for (size_t d = 0; d < sp->n_extent; d++) {
        const Tensorflow__TensorSliceProto__Extent *x = sp->extent[d];
        n += oc_signed(o + n, x->start);
        n += oc_signed(o + n, x->has_length_case == TENSORFLOW__TENSOR_SLICE_PROTO__EXTENT__HAS_LENGTH_LENGTH ? x->length : -1);
    }
    return n;
}

/* The slice entry of the index table's entry table_index, or NULL (slices are in table order). */
static const tfc_bundle_entry *slice_at(const tfc_bundle_reader *r, size_t table_index) {
    size_t lo = 0, hi = r->n_slices;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->slices[mid].table_index == table_index) return &r->slices[mid];
        if (r->slices[mid].table_index < table_index) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

/* A partitioned variable: the full entry lists its slices; each slice's values sit under its own key. */
static tfc_tensor *read_sliced(tfc_bundle_reader *r, const tfc_bundle_entry *e, tfc_status *st) {
    const tfc_table_entry *te = &r->table.entries[e->table_index];
    char what[512];
    snprintf(what, sizeof what, "%s: partitioned variable '%s'", r->prefix, e->key);
    if (e->dtype == TFC_STRING || !tfc_pb_dtype_is_data(e->dtype)) {
        char db[32];
        tfc_status_set(st, TFC_UNIMPLEMENTED, "%s: slices of %s are not supported", what,
                       tfc_pb_dtype_str(e->dtype, db, sizeof db));
        return NULL;
    }
    Tensorflow__BundleEntryProto *p = (Tensorflow__BundleEntryProto *)tfc_pb_unpack(
        &tensorflow__bundle_entry_proto__descriptor, te->value, te->value_len, 0, what, st);
    if (!p) return NULL;
    const tfc_shape *full = &e->shape;
    const size_t es = tfc_dtype_size((tfc_dtype)e->dtype);
    tfc_tensor *t = tfc_tensor_new((tfc_dtype)e->dtype, full->dims, full->rank, st), *part = NULL;
    uint8_t *key = NULL;
    size_t cap = 2 * strlen(e->key) + 16 + (size_t)(full->rank > 0 ? full->rank : 1) * 20 + 64;
    int64_t covered = 0;
    bool ok = t && (key = tfc_malloc(cap)) != NULL;
    if (t && !key) tfc_status_oom(st, what, cap);
    if (ok) memset(tfc_tensor_mutable_data(t), 0, tfc_tensor_byte_size(t));
    for (size_t s = 0; ok && s < p->n_slices; s++) {
        const Tensorflow__TensorSliceProto *sp = p->slices[s];
        int64_t start[TFC_MAX_RANK], len[TFC_MAX_RANK], n = 1;
        if (sp->n_extent > (size_t)full->rank) {
            ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: slice %zu has %zu dims, the variable %d", what, s,
                                sp->n_extent, full->rank);
            break;
        }
        for (int d = 0; ok && d < full->rank; d++) {
            const Tensorflow__TensorSliceProto__Extent *x = (size_t)d < sp->n_extent ? sp->extent[d] : NULL;
            bool has = x && x->has_length_case == TENSORFLOW__TENSOR_SLICE_PROTO__EXTENT__HAS_LENGTH_LENGTH;
            start[d] = x ? x->start : 0;
            len[d] = has ? x->length : full->dims[d] - start[d];
            if (start[d] < 0 || len[d] < 0 || start[d] > full->dims[d] || len[d] > full->dims[d] - start[d])
                ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: slice %zu dim %d [%lld, +%lld) is outside [0, %lld)",
                                    what, s, d, (long long)start[d], (long long)len[d], (long long)full->dims[d]);
            else
                n *= len[d]; /* bounded by the variable's element count */
        }
        if (!ok) break;
        size_t kl = slice_key(key, cap, e->key, sp);
        const tfc_table_entry *ste = kl ? tfc_table_find(&r->table, (const char *)key, kl) : NULL;
        const tfc_bundle_entry *se = ste ? slice_at(r, (size_t)(ste - r->table.entries)) : NULL;
        if (!se) {
            ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: slice %zu is missing from the checkpoint", what, s);
            break;
        }
        if (se->dtype != e->dtype || tfc_shape_product(&se->shape) != n) {
            ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: slice %zu holds %lld values of dtype %d, expected %lld "
                                "of dtype %d", what, s, (long long)tfc_shape_product(&se->shape), se->dtype,
                                (long long)n, e->dtype);
            break;
        }
        if (!(part = read_entry(r, se, e->key, st))) {
            char pre[600];
            snprintf(pre, sizeof pre, "partitioned variable '%.400s', slice %zu: ", e->key, s);
            tfc_pb_status_prefix(st, pre);
            ok = false;
            break;
        }
        /* copy the slice's rows: the innermost dim's run is contiguous in both */
        const uint8_t *src = tfc_tensor_data(part);
        uint8_t *dst = tfc_tensor_mutable_data(t);
        const int rk = full->rank;
        int64_t idx[TFC_MAX_RANK] = {0}, run = rk ? len[rk - 1] : 1;
        for (int64_t done = 0; done < n && run > 0; done += run) {
            int64_t off = 0;
            for (int d = 0; d < rk; d++) off = off * full->dims[d] + start[d] + (d < rk - 1 ? idx[d] : 0);
            memcpy(dst + (size_t)off * es, src + (size_t)done * es, (size_t)run * es);
            for (int d = rk - 2; d >= 0; d--) { /* next outer index */
                if (++idx[d] < len[d]) break;
                idx[d] = 0;
            }
        }
        covered += n;
        tfc_tensor_unref(part);
        part = NULL;
    }
    if (ok && covered != tfc_shape_product(full))
        ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: its %zu slices hold %lld of its %lld values", what,
                            p->n_slices, (long long)covered, (long long)tfc_shape_product(full));
    tfc_free(key);
    tfc_pb_free(p);
    if (!ok) {
        tfc_tensor_unref(t);
        return NULL;
    }
    return t;
}

tfc_tensor *tfc_bundle_read(tfc_bundle_reader *r, const char *key, tfc_status *st) {
    const tfc_bundle_entry *e = tfc_bundle_find(r, key);
    if (!e) {
        tfc_status_set(st, TFC_NOT_FOUND, "Key %s not found in checkpoint %s", key, r->prefix);
        return NULL;
    }
    tfc_tensor *t = e->sliced ? read_sliced(r, e, st) : read_entry(r, e, key, st);
    if (t) tfc_status_clear(st);
    return t;
}
