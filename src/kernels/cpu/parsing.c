/* ParseExampleV2 / ParseSingleExample: decodes tf.train.Example protos (specs/tfrecord.md §3) with the
 * wire reader of parsing_wire.h, following TensorFlow's fast parser (example_proto_fast_parsing.cc):
 *   - only configured keys are decoded (other features may hold anything); the last of duplicate keys wins;
 *   - a Feature with no kind set counts as missing; FloatList/Int64List values may be packed or not;
 *   - FixedLen features need exactly prod(shape) values, or take their default when missing (no default:
 *     an error naming the key and example); FixedLenSequence (first dim unknown) pads to the longest
 *     example with the default; VarLen gives a SparseTensor; Ragged gives values and row splits.
 * Two passes over the batch, each parallel over examples: the first parses the structure, remembers each
 * configured feature and counts its values (validating every length); the second, once the output sizes
 * are known, decodes the values in place. Malformed input is INVALID_ARGUMENT naming the example. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "core/size_check.h"
#include "kernels/cpu/kernels.h"
#include "kernels/cpu/parsing_wire.h"
#include "ops/op_util.h"

enum { K_SPARSE, K_DENSE, K_RAGGED };
enum { F_NONE = 0, F_BYTES = 1, F_FLOAT = 2, F_INT64 = 3 }; /* Feature field numbers */

typedef struct {
    const char *key;
    size_t klen;
    int kind, idx, next; /* next: the next config with the same key (a key may serve several), -1 */
    int ftype;           /* the F_* kind the dtype needs */
    tfc_dtype dtype;
    /* dense */
    tfc_shape shape;
    bool varlen;
    int64_t stride; /* values per example (fixed) or per row (varlen) */
    const tfc_tensor *def;
} cfg;

typedef struct {
    const uint8_t *p; /* the Feature message; NULL when absent */
    size_t n;
} slice;

typedef struct {
    tfc_kernel_ctx *k;
    const char *op;
    cfg *c;
    int n_cfg, ns, nd, nr;
    int *table;
    uint32_t mask;
    bool scalar;
    int64_t batch;
    const tfc_tensor *ser, *names;
    slice *sl;      /* [batch][n_cfg] */
    int64_t *count; /* [batch][n_cfg] values per example */
    int64_t *off;   /* [batch][n_cfg] start of each example's values in sparse / ragged outputs */
    int64_t *rows;  /* [n_cfg] max rows of var-len dense features */
    atomic_llong first_bad;
    atomic_bool oom;
} plan;

static uint32_t hash(const char *s, size_t n) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 16777619u;
    return h;
}

static const char *type_name(tfc_dtype dt) { return dt == TFC_FLOAT ? "float" : dt == TFC_INT64 ? "int64" : "string"; }
static const char *ftype_dtype_name(int f) { return f == F_FLOAT ? "float" : f == F_INT64 ? "int64" : "string"; }
static const char *ftype_list_name(int f) { return f == F_FLOAT ? "float" : f == F_INT64 ? "int64" : "bytes"; }

/* ---- feature lists ---------------------------------------------------------------------------------- */

/* Counts (and validates) the values of one FloatList / Int64List / BytesList payload. -1 when malformed. */
static int64_t count_list(const uint8_t *d, size_t n, int f) {
    pb_reader r = pb_make(d, n);
    int64_t cnt = 0;
    while (!pb_done(&r)) {
        uint32_t field;
        int wire;
        if (!pb_tag(&r, &field, &wire)) return -1;
        if (field != 1) {
            if (!pb_skip(&r, wire)) return -1;
            continue;
        }
        const uint8_t *v;
        size_t vn;
        if (f == F_BYTES && wire == 2) {
            if (!pb_bytes(&r, &v, &vn)) return -1;
            cnt++;
        } else if (f == F_FLOAT && wire == 5) {
            if (!pb_skip(&r, 5)) return -1;
            cnt++;
        } else if (f == F_FLOAT && wire == 2) {
            if (!pb_bytes(&r, &v, &vn) || vn % 4) return -1;
            cnt += (int64_t)(vn / 4);
        } else if (f == F_INT64 && wire == 0) {
            uint64_t x;
            if (!pb_varint(&r, &x)) return -1;
            cnt++;
        } else if (f == F_INT64 && wire == 2) {
            if (!pb_bytes(&r, &v, &vn)) return -1;
            pb_reader pr = pb_make(v, vn);
            uint64_t x;
            while (!pb_done(&pr)) {
                if (!pb_varint(&pr, &x)) return -1;
                cnt++;
            }
        } else {
            return -1;
        }
    }
    return cnt;
}

/* The kind of a Feature and the number of its values. A oneof set again replaces the earlier value, so only
 * the last run of same-kind fields counts (repeated occurrences of one kind merge). *start: where that run
 * begins. False when malformed. */
static bool scan_feature(slice s, int *kind, int64_t *count, const uint8_t **start) {
    pb_reader r = pb_make(s.p, s.n);
    *kind = F_NONE;
    *count = 0;
    *start = s.p;
    while (!pb_done(&r)) {
        const uint8_t *at = r.p, *d;
        size_t n;
        uint32_t field;
        int wire;
        if (!pb_tag(&r, &field, &wire)) return false;
        if (field < 1 || field > 3 || wire != 2) {
            if (!pb_skip(&r, wire)) return false;
            continue;
        }
        if (!pb_bytes(&r, &d, &n)) return false;
        if ((int)field != *kind) {
            *kind = (int)field;
            *count = 0;
            *start = at;
        }
        int64_t c = count_list(d, n, (int)field);
        if (c < 0) return false;
        *count += c;
    }
    return true;
}

/* Decodes the values of a scanned feature (already validated by scan_feature; the checks here only keep a
 * logic error from reading out of bounds) into dst. */
static bool decode_feature(slice s, const uint8_t *start, int f, void *dst, tfc_status *st) {
    pb_reader r = {start, s.p + s.n};
    int64_t at = 0;
    while (!pb_done(&r)) {
        const uint8_t *d = NULL;
        size_t n = 0;
        uint32_t field = 0;
        int wire = 0;
        if (!pb_tag(&r, &field, &wire)) goto bad;
        if ((int)field != f || wire != 2) {
            if (!pb_skip(&r, wire)) goto bad;
            continue;
        }
        if (!pb_bytes(&r, &d, &n)) goto bad;
        pb_reader l = pb_make(d, n);
        while (!pb_done(&l)) {
            uint32_t lf = 0;
            int lw = 0;
            const uint8_t *v = NULL;
            size_t vn = 0;
            uint64_t x = 0;
            if (!pb_tag(&l, &lf, &lw)) goto bad;
            if (lf != 1) {
                if (!pb_skip(&l, lw)) goto bad;
            } else if (f == F_BYTES) {
                if (!pb_bytes(&l, &v, &vn)) goto bad;
                if (!tfc_tstring_copy((tfc_tstring *)dst + at++, (const char *)v, vn, st)) return false;
            } else if (f == F_FLOAT && lw == 5) {
                if (l.end - l.p < 4) goto bad;
                memcpy((float *)dst + at++, l.p, 4); /* little-endian hosts */
                l.p += 4;
            } else if (f == F_FLOAT) {
                if (!pb_bytes(&l, &v, &vn)) goto bad;
                memcpy((float *)dst + at, v, vn);
                at += (int64_t)(vn / 4);
            } else if (lw == 0) {
                if (!pb_varint(&l, &x)) goto bad;
                ((int64_t *)dst)[at++] = (int64_t)x;
            } else {
                if (!pb_bytes(&l, &v, &vn)) goto bad;
                pb_reader pr = pb_make(v, vn);
                while (!pb_done(&pr)) {
                    if (!pb_varint(&pr, &x)) goto bad;
                    ((int64_t *)dst)[at++] = (int64_t)x;
                }
            }
        }
    }
    return true;
bad:
    return tfc_status_set(st, TFC_INTERNAL, "Example feature changed between passes");
}

/* ---- pass 1: structure, slices, counts ------------------------------------------------------------- */

static void record(plan *pl, int64_t e, const uint8_t *key, size_t klen, const uint8_t *val, size_t vn) {
    for (int ci = pl->table[hash((const char *)key, klen) & pl->mask]; ci >= 0; ci = pl->c[ci].next)
        if (pl->c[ci].klen == klen && !memcmp(pl->c[ci].key, key, klen)) {
            for (; ci >= 0; ci = pl->c[ci].next)
                if (pl->c[ci].klen == klen && !memcmp(pl->c[ci].key, key, klen))
                    pl->sl[e * pl->n_cfg + ci] = (slice){val ? val : (const uint8_t *)"", vn};
            return;
        }
}

/* Example { Features features = 1 } (repeated occurrences merge), Features { map<string, Feature> feature = 1 }. */
static bool parse_structure(plan *pl, int64_t e, const uint8_t *d, size_t n) {
    pb_reader r = pb_make(d, n);
    while (!pb_done(&r)) {
        uint32_t field;
        int wire;
        if (!pb_tag(&r, &field, &wire)) return false;
        if (field != 1 || wire != 2) {
            if (!pb_skip(&r, wire)) return false;
            continue;
        }
        const uint8_t *fd;
        size_t fn;
        if (!pb_bytes(&r, &fd, &fn)) return false;
        pb_reader fr = pb_make(fd, fn);
        while (!pb_done(&fr)) {
            if (!pb_tag(&fr, &field, &wire)) return false;
            if (field != 1 || wire != 2) {
                if (!pb_skip(&fr, wire)) return false;
                continue;
            }
            const uint8_t *ed, *key = NULL, *val = NULL;
            size_t en, klen = 0, vn = 0;
            if (!pb_bytes(&fr, &ed, &en)) return false;
            pb_reader er = pb_make(ed, en);
            while (!pb_done(&er)) {
                if (!pb_tag(&er, &field, &wire)) return false;
                if (field == 1 && wire == 2) {
                    if (!pb_bytes(&er, &key, &klen)) return false;
                } else if (field == 2 && wire == 2) {
                    if (!pb_bytes(&er, &val, &vn)) return false;
                } else if (!pb_skip(&er, wire)) {
                    return false;
                }
            }
            record(pl, e, key ? key : (const uint8_t *)"", klen, val, vn);
        }
    }
    return true;
}

static const char *example_name(const plan *pl, int64_t e, size_t *n) {
    const char *s = pl->names && pl->names->num_elements > 0 ? tfc_tensor_string(pl->names, e, n) : NULL;
    if (!s) {
        *n = 9;
        return "<unknown>";
    }
    return s;
}

/* Validates example e and counts its features' values. With st, sets the error message (the first pass
 * runs without one and records failures; the failing example is then re-run to describe the problem). */
static bool pass1(plan *pl, int64_t e, tfc_status *st) {
    size_t n, nl;
    const uint8_t *d = (const uint8_t *)tfc_tensor_string(pl->ser, e, &n);
    const char *name = example_name(pl, e, &nl);
    const char *op = pl->op;
    slice *sl = pl->sl + e * pl->n_cfg;
    int64_t *cnt = pl->count + e * pl->n_cfg;
    memset(sl, 0, (size_t)pl->n_cfg * sizeof *sl);
    if (!parse_structure(pl, e, d, n)) {
        if (st) {
            char v[100];
            size_t k = 0;
            for (size_t i = 0; i < n && k + 5 < sizeof v && i < 24; i++)
                k += (size_t)snprintf(v + k, sizeof v - k, d[i] >= 32 && d[i] < 127 && d[i] != '\\' ? "%c" : "\\x%02x", d[i]);
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: Name: %.*s, Index: %lld.  Could not parse example input, value: '%s%s'",
                           op, (int)(nl > 48 ? 48 : nl), name, (long long)e, v, n > 24 ? "..." : "");
        }
        return false;
    }
    for (int ci = 0; ci < pl->n_cfg; ci++) {
        const cfg *c = &pl->c[ci];
        int kind = F_NONE;
        int64_t count = 0;
        const uint8_t *start;
        if (sl[ci].p && !scan_feature(sl[ci], &kind, &count, &start)) {
            if (st)
                tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: Name: %.*s, Key: %.*s, Index: %lld.  Can't parse serialized Example.",
                               op, (int)(nl > 48 ? 48 : nl), name, (int)(c->klen > 48 ? 48 : c->klen), c->key, (long long)e);
            return false;
        }
        if (kind == F_NONE) sl[ci].p = NULL; /* a feature of no kind is a missing one */
        if (kind != F_NONE && kind != c->ftype) {
            if (st && c->kind == K_DENSE)
                tfc_status_set(st, TFC_INVALID_ARGUMENT,
                               "%s: Name: %.*s, Key: %.*s, Index: %lld.  Data types don't match. Data type: %s but expected type: %s",
                               op, (int)(nl > 48 ? 48 : nl), name, (int)(c->klen > 48 ? 48 : c->klen), c->key, (long long)e,
                               ftype_dtype_name(kind), type_name(c->dtype));
            else if (st)
                tfc_status_set(st, TFC_INVALID_ARGUMENT,
                               "%s: Name: %.*s, Key: %.*s, Index: %lld.  Data types don't match. Expected type: %s, Actual type: %s",
                               op, (int)(nl > 48 ? 48 : nl), name, (int)(c->klen > 48 ? 48 : c->klen), c->key, (long long)e,
                               type_name(c->dtype), ftype_dtype_name(kind));
            return false;
        }
        if (c->kind == K_DENSE) {
            if (!sl[ci].p && !c->varlen && c->def->num_elements == 0) {
                if (st && pl->scalar)
                    tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: Feature: %.*s (data type: %s) is required but could not be found.",
                                   op, (int)(c->klen > 64 ? 64 : c->klen), c->key, type_name(c->dtype));
                else if (st)
                    tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                   "%s: Name: %.*s, Feature: %.*s (data type: %s) is required but could not be found. Index: %lld",
                                   op, (int)(nl > 48 ? 48 : nl), name, (int)(c->klen > 64 ? 64 : c->klen), c->key,
                                   type_name(c->dtype), (long long)e);
                return false;
            }
            if (sl[ci].p && !c->varlen && count != c->stride) {
                if (st)
                    tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                   "%s: Name: %.*s, Key: %.*s, Index: %lld.  Number of %s values != expected.  Values size: "
                                   "%lld but output shape: %s",
                                   op, (int)(nl > 48 ? 48 : nl), name, (int)(c->klen > 48 ? 48 : c->klen), c->key, (long long)e,
                                   ftype_list_name(kind), (long long)count, SHP(&c->shape));
                return false;
            }
            if (sl[ci].p && c->varlen && c->stride > 0 && count % c->stride) {
                if (st)
                    tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                   "%s: Name: %.*s, Key: %.*s, Index: %lld.  Number of %s values is not a multiple of stride "
                                   "length. Saw %lld values but output shape is: %s",
                                   op, (int)(nl > 48 ? 48 : nl), name, (int)(c->klen > 48 ? 48 : c->klen), c->key, (long long)e,
                                   ftype_list_name(kind), (long long)count, SHP(&c->shape));
                return false;
            }
        }
        cnt[ci] = sl[ci].p ? count : 0;
    }
    return true;
}

static void pass1_range(void *arg, int64_t b, int64_t e) {
    plan *pl = arg;
    for (int64_t i = b; i < e; i++)
        if (!pass1(pl, i, NULL)) {
            long long cur = atomic_load(&pl->first_bad);
            while (i < cur && !atomic_compare_exchange_weak(&pl->first_bad, &cur, i)) {
            }
            return;
        }
}

/* ---- pass 2: values -------------------------------------------------------------------------------- */

static bool fill_default(void *dst, const tfc_tensor *def, int64_t n, bool scalar_def, tfc_status *st) {
    const size_t es = tfc_dtype_size(def->dtype);
    for (int64_t i = 0; i < n; i++) {
        const int64_t j = scalar_def ? 0 : i;
        if (def->dtype == TFC_STRING) {
            if (!tfc_tstring_assign((tfc_tstring *)dst + i, (const tfc_tstring *)def->data + j, st)) return false;
        } else {
            memcpy((char *)dst + (size_t)i * es, (const char *)def->data + (size_t)j * es, es);
        }
    }
    return true;
}

static bool pass2(plan *pl, int64_t e, tfc_status *st) {
    tfc_kernel_ctx *k = pl->k;
    const slice *sl = pl->sl + e * pl->n_cfg;
    const int64_t *cnt = pl->count + e * pl->n_cfg, *off = pl->off + e * pl->n_cfg;
    for (int ci = 0; ci < pl->n_cfg; ci++) {
        const cfg *c = &pl->c[ci];
        const size_t es = tfc_dtype_size(c->dtype);
        int kind;
        int64_t count;
        const uint8_t *start = NULL;
        if (sl[ci].p) scan_feature(sl[ci], &kind, &count, &start);
        if (c->kind == K_SPARSE || c->kind == K_RAGGED) {
            const int out = c->kind == K_SPARSE ? pl->ns + c->idx : 3 * pl->ns + pl->nd + c->idx;
            char *vals = (char *)k->out[out]->data + (size_t)off[ci] * es;
            if (sl[ci].p && cnt[ci] && !decode_feature(sl[ci], start, c->ftype, vals, st)) return false;
            if (c->kind == K_SPARSE) {
                int64_t *idx = (int64_t *)k->out[c->idx]->data;
                for (int64_t j = 0; j < cnt[ci]; j++) {
                    if (pl->scalar) {
                        idx[off[ci] + j] = j;
                    } else {
                        idx[2 * (off[ci] + j)] = e;
                        idx[2 * (off[ci] + j) + 1] = j;
                    }
                }
            }
            continue;
        }
        char *dst = (char *)k->out[3 * pl->ns + c->idx]->data;
        if (!c->varlen) {
            dst += (size_t)(e * c->stride) * es;
            if (sl[ci].p) {
                if (!decode_feature(sl[ci], start, c->ftype, dst, st)) return false;
            } else if (!fill_default(dst, c->def, c->stride, false, st)) {
                return false;
            }
        } else {
            const int64_t per = pl->rows[ci] * c->stride;
            dst += (size_t)(e * per) * es;
            if (sl[ci].p && cnt[ci] && !decode_feature(sl[ci], start, c->ftype, dst, st)) return false;
            if (!fill_default(dst + (size_t)cnt[ci] * es, c->def, per - cnt[ci], true, st)) return false;
        }
    }
    return true;
}

static void pass2_range(void *arg, int64_t b, int64_t e) {
    plan *pl = arg;
    tfc_status st = TFC_STATUS_INIT;
    for (int64_t i = b; i < e && !atomic_load(&pl->oom); i++)
        if (!pass2(pl, i, &st)) atomic_store(&pl->oom, true);
}

/* ---- the kernel ------------------------------------------------------------------------------------ */

static int ftype_of(tfc_dtype dt) { return dt == TFC_FLOAT ? F_FLOAT : dt == TFC_INT64 ? F_INT64 : F_BYTES; }

static void add_cfg(plan *pl, int kind, int idx, const char *key, size_t klen, tfc_dtype dt) {
    cfg *c = &pl->c[pl->n_cfg++];
    *c = (cfg){.key = key, .klen = klen, .kind = kind, .idx = idx, .next = -1, .ftype = ftype_of(dt), .dtype = dt};
}

static bool run_plan(plan *pl, tfc_status *st) {
    tfc_kernel_ctx *k = pl->k;
    const int64_t B = pl->batch, n = pl->n_cfg;
    bool ok = false;
    /* hash of the configured keys */
    uint32_t size = 16;
    while (size < 2u * (uint32_t)n) size *= 2;
    pl->mask = size - 1;
    pl->table = tfc_malloc(size * sizeof(int));
    pl->sl = tfc_malloc((size_t)(B * n + 1) * sizeof(slice));
    pl->count = tfc_malloc((size_t)(B * n + 1) * sizeof(int64_t));
    pl->off = tfc_malloc((size_t)(B * n + 1) * sizeof(int64_t));
    pl->rows = tfc_calloc((size_t)n + 1, sizeof(int64_t));
    if (!pl->table || !pl->sl || !pl->count || !pl->off || !pl->rows) {
        tfc_status_oom(st, pl->op, (size_t)(B * n + 1) * (sizeof(slice) + 16));
        goto done;
    }
    for (uint32_t i = 0; i < size; i++) pl->table[i] = -1;
    for (int ci = (int)n - 1; ci >= 0; ci--) { /* chains keep configuration order */
        uint32_t h = hash(pl->c[ci].key, pl->c[ci].klen) & pl->mask;
        pl->c[ci].next = pl->table[h];
        pl->table[h] = ci;
    }
    atomic_store(&pl->first_bad, (long long)B);
    atomic_store(&pl->oom, false);
    size_t bytes = tfc_tensor_byte_size(pl->ser);
    for (int64_t i = 0; i < pl->ser->num_elements; i++) bytes += tfc_tstring_size((const tfc_tstring *)pl->ser->data + i);
    const int64_t cost = (int64_t)(bytes / (size_t)(B ? B : 1)) * 4 + 64;
    tfc_parallel_for(k->pool, B, cost, pass1_range, pl);
    if (atomic_load(&pl->first_bad) < B) {
        pass1(pl, atomic_load(&pl->first_bad), st);
        goto done;
    }
    /* sizes and offsets */
    for (int ci = 0; ci < n; ci++) {
        const cfg *c = &pl->c[ci];
        int64_t total = 0, maxc = 0;
        for (int64_t e = 0; e < B; e++) {
            pl->off[e * n + ci] = total;
            int64_t v = pl->count[e * n + ci];
            if (v > INT64_MAX - total) {
                tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: too many values for key %.*s", pl->op, (int)c->klen, c->key);
                goto done;
            }
            total += v;
            if (v > maxc) maxc = v;
        }
        const size_t es = tfc_dtype_size(c->dtype);
        if (c->kind == K_SPARSE) {
            const int64_t idims[2] = {total, pl->scalar ? 1 : 2};
            if (!tfc_kernel_alloc_output(k, c->idx, idims, 2, st) || !tfc_kernel_alloc_output(k, pl->ns + c->idx, &total, 1, st))
                goto done;
            int64_t *shape = k->out[2 * pl->ns + c->idx]->data;
            if (pl->scalar) shape[0] = maxc;
            else shape[0] = B, shape[1] = maxc;
        } else if (c->kind == K_RAGGED) {
            const int vo = 3 * pl->ns + pl->nd + c->idx, so = vo + pl->nr;
            if (!tfc_kernel_alloc_output(k, vo, &total, 1, st)) goto done;
            const int64_t nsplit = pl->scalar ? 0 : B + 1;
            if (!k->out[so] && !tfc_kernel_alloc_output(k, so, &nsplit, 1, st)) goto done;
            tfc_tensor *sp = k->out[so];
            for (int64_t e = 0; e < nsplit; e++) {
                const int64_t v = e < B ? pl->off[e * n + ci] : total;
                if (sp->dtype == TFC_INT32) {
                    if (v > INT32_MAX) {
                        tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: row split %lld of key %.*s does not fit int32", pl->op,
                                       (long long)v, (int)c->klen, c->key);
                        goto done;
                    }
                    ((int32_t *)sp->data)[e] = (int32_t)v;
                } else {
                    ((int64_t *)sp->data)[e] = v;
                }
            }
        } else {
            const int o = 3 * pl->ns + c->idx;
            tfc_shape s = {.rank = 0};
            if (!pl->scalar) s.dims[s.rank++] = B;
            for (int i = 0; i < c->shape.rank; i++) s.dims[s.rank++] = c->shape.dims[i];
            if (c->varlen) {
                pl->rows[ci] = c->stride ? maxc / c->stride : 0;
                s.dims[pl->scalar ? 0 : 1] = pl->rows[ci];
            }
            int64_t ne;
            if (!tfc_shape_num_elements(&s, &ne, pl->op, st) || !tfc_mul_overflow_i64(ne, (int64_t)es, &ne)) {
                tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: dense output for key %.*s is too large", pl->op, (int)c->klen, c->key);
                goto done;
            }
            if ((c->varlen || !k->out[o]) && !tfc_kernel_alloc_output(k, o, s.dims, s.rank, st)) goto done;
        }
    }
    tfc_parallel_for(k->pool, B, cost, pass2_range, pl);
    if (atomic_load(&pl->oom)) {
        tfc_status_oom(st, pl->op, 0);
        goto done;
    }
    ok = true;
done:
    tfc_free(pl->table);
    tfc_free(pl->sl);
    tfc_free(pl->count);
    tfc_free(pl->off);
    tfc_free(pl->rows);
    return ok;
}

static bool setup_dense(plan *pl, int d, const tfc_tensor *def, const tfc_shape *shape) {
    cfg *c = &pl->c[pl->n_cfg - 1];
    (void)d;
    c->def = def;
    c->shape = *shape;
    c->varlen = shape->rank > 0 && shape->dims[0] < 0;
    c->stride = tfc_dims_product(shape->dims, c->varlen ? 1 : 0, shape->rank); /* of an output that exists */
    return true;
}

static bool parse_example_v2(tfc_kernel_ctx *k, tfc_status *st) {
    const tfc_attr *stp = tfc_attrs_find(k->attrs, "sparse_types"), *rvt = tfc_attrs_find(k->attrs, "ragged_value_types");
    int n_shapes = 0;
    const tfc_shape *shapes = tfc_attrs_shapes(k->attrs, "dense_shapes", &n_shapes);
    plan pl = {.k = k, .op = k->op->name, .ser = k->in[0], .names = k->in[1]};
    pl.ns = (int)tfc_attrs_int(k->attrs, "num_sparse", 0);
    pl.nd = k->n_in - 5;
    pl.nr = rvt ? rvt->n : 0;
    pl.scalar = k->in[0]->shape.rank == 0;
    pl.batch = pl.scalar ? 1 : k->in[0]->shape.dims[0];
    pl.c = tfc_malloc((size_t)(pl.ns + pl.nd + pl.nr + 1) * sizeof(cfg));
    if (!pl.c) return tfc_status_oom(st, pl.op, sizeof(cfg));
    size_t kl;
    for (int i = 0; i < pl.ns; i++) {
        const char *key = tfc_tensor_string(k->in[2], i, &kl);
        add_cfg(&pl, K_SPARSE, i, key, kl, stp->v.types[i]);
    }
    for (int d = 0; d < pl.nd; d++) {
        const char *key = tfc_tensor_string(k->in[3], d, &kl);
        add_cfg(&pl, K_DENSE, d, key, kl, k->in[5 + d]->dtype);
        setup_dense(&pl, d, k->in[5 + d], &shapes[d]);
    }
    for (int r = 0; r < pl.nr; r++) {
        const char *key = tfc_tensor_string(k->in[4], r, &kl);
        add_cfg(&pl, K_RAGGED, r, key, kl, rvt->v.types[r]);
    }
    bool ok = run_plan(&pl, st);
    tfc_free(pl.c);
    return ok;
}

static bool parse_single_example(tfc_kernel_ctx *k, tfc_status *st) {
    const tfc_attr *stp = tfc_attrs_find(k->attrs, "sparse_types");
    const tfc_attr *sk = tfc_attrs_find(k->attrs, "sparse_keys"), *dk = tfc_attrs_find(k->attrs, "dense_keys");
    int n_shapes = 0;
    const tfc_shape *shapes = tfc_attrs_shapes(k->attrs, "dense_shapes", &n_shapes);
    plan pl = {.k = k, .op = k->op->name, .ser = k->in[0], .scalar = true, .batch = 1};
    pl.ns = (int)tfc_attrs_int(k->attrs, "num_sparse", 0);
    pl.nd = k->n_in - 1;
    pl.c = tfc_malloc((size_t)(pl.ns + pl.nd + 1) * sizeof(cfg));
    if (!pl.c) return tfc_status_oom(st, pl.op, sizeof(cfg));
    for (int i = 0; i < pl.ns; i++) add_cfg(&pl, K_SPARSE, i, sk->v.strs[i], strlen(sk->v.strs[i]), stp->v.types[i]);
    for (int d = 0; d < pl.nd; d++) {
        add_cfg(&pl, K_DENSE, d, dk->v.strs[d], strlen(dk->v.strs[d]), k->in[1 + d]->dtype);
        setup_dense(&pl, d, k->in[1 + d], &shapes[d]);
    }
    bool ok = run_plan(&pl, st);
    tfc_free(pl.c);
    return ok;
}

const tfc_kernel_reg tfc_cpu_kernels_parsing[] = {
    {"ParseExampleV2", parse_example_v2},
    {"ParseSingleExample", parse_single_example},
    {NULL, NULL},
};
