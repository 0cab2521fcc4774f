/* TensorFlow's snapshot format (include/tfc/data_save.h): snapshot.metadata, dataset_spec.pb, the chunk writers
 * of one run and the datasets reading a finalized run. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "data/snapshot_internal.h"
#include "core/size_check.h"
#include "platform/file_io.h"
#include "platform/files.h"
#include "proto/proto_internal.h"
#include "proto/snapshot.pb-c.h"
#include "proto/struct.pb-c.h"
#include "tfc/data_more.h"

char *snap_join(const char *a, const char *b) {
    size_t n = strlen(a) + strlen(b) + 2;
    char *s = tfc_malloc(n);
    if (s) snprintf(s, n, "%s/%s", a, b);
    return s;
}

bool snap_compression(const char *c, bool snapshot, const char *what, const char **out, tfc_status *st) {
    if (!c || !*c || !strcmp(c, "NONE") || (snapshot && !strcmp(c, "AUTO"))) {
        *out = "";
        return true;
    }
    if (!strcmp(c, "GZIP")) {
        *out = "GZIP";
        return true;
    }
    return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: compression \"%s\" is not supported (%sNONE or GZIP)", what,
                          c, snapshot ? "AUTO, " : "");
}

/* ---- snapshot.metadata -------------------------------------------------------------------------------------- */
void snap_meta_free(snap_meta *m) {
    tfc_free(m->dtypes);
    memset(m, 0, sizeof *m);
}

static bool run_id_ok(const char *s) {
    if (!*s || !strcmp(s, ".") || !strcmp(s, "..")) return false;
    for (; *s; s++)
        if (*s == '/' || *s == '\\') return false;
    return true;
}

bool snap_meta_parse(const uint8_t *data, size_t size, const char *file, snap_meta *m, tfc_status *st) {
    memset(m, 0, sizeof *m);
    Tensorflow__Data__Experimental__SnapshotMetadataRecord *r =
        (void *)tfc_pb_unpack(&tensorflow__data__experimental__snapshot_metadata_record__descriptor, data, size,
                              SNAP_MAX_FILE, file, st);
    if (!r) {
        if (st->code != TFC_RESOURCE_EXHAUSTED) st->code = TFC_DATA_LOSS;
        return false;
    }
    bool ok = false;
    if (r->version != SNAP_VERSION) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT,
                       "%s: field version: snapshot version %lld is not supported (tfc reads version %d)", file,
                       (long long)r->version, SNAP_VERSION);
        goto done;
    }
    if (!r->run_id || !run_id_ok(r->run_id) || strlen(r->run_id) >= sizeof m->run_id) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: field run_id: \"%.64s\" is not a directory name", file,
                       r->run_id ? r->run_id : "");
        goto done;
    }
    if (r->n_dtype > TFC_DATA_MAX_COMPONENTS) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: field dtype: %zu components (at most %d)", file, r->n_dtype,
                       TFC_DATA_MAX_COMPONENTS);
        goto done;
    }
    m->dtypes = tfc_calloc(r->n_dtype ? r->n_dtype : 1, sizeof *m->dtypes);
    if (!m->dtypes) {
        tfc_status_oom(st, file, r->n_dtype * sizeof *m->dtypes);
        goto done;
    }
    for (size_t i = 0; i < r->n_dtype; i++) {
        if (!tfc_pb_dtype_is_data((int)r->dtype[i])) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: field dtype: component %zu has dtype %d (%s), not a data type",
                           file, i, (int)r->dtype[i], tfc_pb_dtype_enum_name((int)r->dtype[i]));
            goto done;
        }
        m->dtypes[i] = (tfc_dtype)r->dtype[i];
    }
    m->n_dtypes = (int)r->n_dtype;
    snprintf(m->run_id, sizeof m->run_id, "%s", r->run_id);
    snprintf(m->graph_hash, sizeof m->graph_hash, "%.63s", r->graph_hash ? r->graph_hash : "");
    m->version = r->version;
    m->num_elements = r->num_elements;
    m->creation_timestamp = r->creation_timestamp;
    m->finalized = r->finalized;
    ok = true;
done:
    tfc_pb_free(r);
    if (!ok) snap_meta_free(m);
    return ok;
}

bool snap_meta_read(const char *dir, snap_meta *m, bool *exists, tfc_status *st) {
    memset(m, 0, sizeof *m);
    *exists = false;
    char *file = snap_join(dir, SNAP_METADATA);
    if (!file) return tfc_status_oom(st, "snapshot path", strlen(dir));
    struct stat sb;
    if (stat(file, &sb) != 0) {
        tfc_free(file);
        return true;
    }
    *exists = true;
    void *data = NULL;
    size_t size = 0;
    bool ok = tfc_file_read_all(file, SNAP_MAX_FILE, &data, &size, st) && snap_meta_parse(data, size, file, m, st);
    tfc_free(data);
    tfc_free(file);
    return ok;
}

bool snap_meta_write(const char *dir, const char *run_id, const char *graph_hash, const data_spec *spec,
                     int64_t num_elements, bool finalized, tfc_status *st) {
    Tensorflow__Data__Experimental__SnapshotMetadataRecord r =
        TENSORFLOW__DATA__EXPERIMENTAL__SNAPSHOT_METADATA_RECORD__INIT;
    Tensorflow__DataType dts[TFC_DATA_MAX_COMPONENTS];
    for (int i = 0; i < spec->n; i++) dts[i] = (Tensorflow__DataType)spec->comps[i].dtype;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    r.graph_hash = (char *)graph_hash;
    r.run_id = (char *)run_id;
    r.creation_timestamp = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
    r.version = SNAP_VERSION;
    r.n_dtype = (size_t)spec->n;
    r.dtype = dts;
    r.num_elements = num_elements;
    r.finalized = finalized;
    uint8_t *buf = NULL;
    size_t size = 0;
    char *file = snap_join(dir, SNAP_METADATA);
    bool ok = file && tfc_make_dirs(dir, "snapshot", st) &&
              tfc_pb_pack(&r.base, &buf, &size, SNAP_METADATA, st) && tfc_file_write_atomic(file, buf, size, st);
    if (!file) tfc_status_oom(st, "snapshot path", strlen(dir));
    tfc_free(buf);
    tfc_free(file);
    return ok;
}

void snap_new_run_id(char *buf, size_t size) {
    snprintf(buf, size, "%llu", (unsigned long long)(uint64_t)data_random_seed());
}

/* ---- element_spec as StructuredValue ---------------------------------------------------------------------------- */
static Tensorflow__StructuredValue *sv_new(void) {
    Tensorflow__StructuredValue *v = tfc_malloc(sizeof *v);
    if (v) *v = (Tensorflow__StructuredValue)TENSORFLOW__STRUCTURED_VALUE__INIT;
    return v;
}

/* Builds the value of the structure at *s (canonical form), taking leaves from spec->comps[*leaf...]. */
static Tensorflow__StructuredValue *sv_build(const char **s, const data_spec *spec, int *leaf, tfc_status *st) {
    Tensorflow__StructuredValue *v = sv_new();
    if (!v) goto oom;
    if (**s == '.') {
        (*s)++;
        Tensorflow__TensorSpecProto *t = tfc_malloc(sizeof *t);
        if (!t) goto oom;
        *t = (Tensorflow__TensorSpecProto)TENSORFLOW__TENSOR_SPEC_PROTO__INIT;
        v->kind_case = TENSORFLOW__STRUCTURED_VALUE__KIND_TENSOR_SPEC_VALUE;
        v->tensor_spec_value = t;
        const tfc_tensor_spec *c = &spec->comps[(*leaf)++];
        t->dtype = (Tensorflow__DataType)c->dtype;
        t->shape = tfc_pb_shape_to_proto(&c->shape, st);
        if (!t->shape) goto fail;
        return v;
    }
    bool dict = **s == '{';
    char close = dict ? '}' : ')';
    (*s)++;
    Tensorflow__StructuredValue **items = NULL;
    Tensorflow__DictValue__FieldsEntry **fields = NULL;
    size_t n = 0;
    if (dict) {
        Tensorflow__DictValue *d = tfc_malloc(sizeof *d);
        if (!d) goto oom;
        *d = (Tensorflow__DictValue)TENSORFLOW__DICT_VALUE__INIT;
        v->kind_case = TENSORFLOW__STRUCTURED_VALUE__KIND_DICT_VALUE;
        v->dict_value = d;
    } else {
        Tensorflow__TupleValue *t = tfc_malloc(sizeof *t);
        if (!t) goto oom;
        *t = (Tensorflow__TupleValue)TENSORFLOW__TUPLE_VALUE__INIT;
        v->kind_case = TENSORFLOW__STRUCTURED_VALUE__KIND_TUPLE_VALUE;
        v->tuple_value = t;
    }
    while (**s && **s != close) {
        char *key = NULL;
        if (dict) {
            const char *colon = strchr(*s, ':');
            if (!colon) goto bad;
            key = tfc_malloc((size_t)(colon - *s) + 1);
            if (!key) goto oom;
            memcpy(key, *s, (size_t)(colon - *s));
            key[colon - *s] = 0;
            *s = colon + 1;
        }
        Tensorflow__StructuredValue *item = sv_build(s, spec, leaf, st);
        if (!item) {
            tfc_free(key);
            goto fail;
        }
        if (dict) {
            Tensorflow__DictValue__FieldsEntry *e = tfc_malloc(sizeof *e);
            void *grown = tfc_realloc(fields, (n + 1) * sizeof *fields);
            if (!e || !grown) {
                tfc_free(e);
                tfc_free(key);
                tfc_pb_free(item);
                goto oom;
            }
            *e = (Tensorflow__DictValue__FieldsEntry)TENSORFLOW__DICT_VALUE__FIELDS_ENTRY__INIT;
            e->key = key;
            e->value = item;
            fields = grown;
            fields[n++] = e;
            v->dict_value->fields = fields;
            v->dict_value->n_fields = n;
        } else {
            void *grown = tfc_realloc(items, (n + 1) * sizeof *items);
            if (!grown) {
                tfc_pb_free(item);
                goto oom;
            }
            items = grown;
            items[n++] = item;
            v->tuple_value->values = items;
            v->tuple_value->n_values = n;
        }
        if (**s == ',') (*s)++;
    }
    if (**s != close) goto bad;
    (*s)++;
    return v;
bad:
    tfc_status_set(st, TFC_INTERNAL, "element_spec: malformed structure \"%s\"", spec->structure);
    goto fail;
oom:
    tfc_status_oom(st, "element_spec", sizeof *v);
fail:
    tfc_pb_free(v);
    return NULL;
}

bool snap_spec_encode(const data_spec *spec, uint8_t **out, size_t *size, tfc_status *st) {
    const char *s = spec->structure;
    int leaf = 0;
    Tensorflow__StructuredValue *v = sv_build(&s, spec, &leaf, st);
    if (!v) return false;
    bool ok = tfc_pb_pack(&v->base, out, size, SNAP_SPEC_FILE, st);
    tfc_pb_free(v);
    return ok;
}

typedef struct spec_acc {
    data_strbuf text;
    tfc_tensor_spec *comps;
    int n;
    const char *file;
} spec_acc;

static int cmp_entry(const void *a, const void *b) {
    return strcmp((*(Tensorflow__DictValue__FieldsEntry *const *)a)->key,
                  (*(Tensorflow__DictValue__FieldsEntry *const *)b)->key);
}

static bool key_ok(const char *k) {
    if (!*k) return false;
    for (; *k; k++)
        if (!((*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z') || (*k >= '0' && *k <= '9') || strchr("_./-", *k)))
            return false;
    return true;
}

static bool sv_walk(const Tensorflow__StructuredValue *v, spec_acc *a, tfc_status *st) {
    const Tensorflow__TensorShapeProto *shape = NULL;
    Tensorflow__DataType dt = 0;
    switch (v->kind_case) {
    case TENSORFLOW__STRUCTURED_VALUE__KIND_TENSOR_SPEC_VALUE:
        shape = v->tensor_spec_value->shape, dt = v->tensor_spec_value->dtype;
        break;
    case TENSORFLOW__STRUCTURED_VALUE__KIND_BOUNDED_TENSOR_SPEC_VALUE:
        shape = v->bounded_tensor_spec_value->shape, dt = v->bounded_tensor_spec_value->dtype;
        break;
    case TENSORFLOW__STRUCTURED_VALUE__KIND_TUPLE_VALUE:
    case TENSORFLOW__STRUCTURED_VALUE__KIND_LIST_VALUE: {
        size_t n = v->kind_case == TENSORFLOW__STRUCTURED_VALUE__KIND_TUPLE_VALUE ? v->tuple_value->n_values
                                                                                 : v->list_value->n_values;
        Tensorflow__StructuredValue **vals = v->kind_case == TENSORFLOW__STRUCTURED_VALUE__KIND_TUPLE_VALUE
                                                 ? v->tuple_value->values
                                                 : v->list_value->values;
        data_strbuf_printf(&a->text, "(");
        for (size_t i = 0; i < n; i++) {
            if (i) data_strbuf_printf(&a->text, ",");
            if (!sv_walk(vals[i], a, st)) return false;
        }
        data_strbuf_printf(&a->text, n == 1 ? ",)" : ")");
        return true;
    }
    case TENSORFLOW__STRUCTURED_VALUE__KIND_DICT_VALUE: {
        Tensorflow__DictValue *d = v->dict_value;
        if (d->n_fields) qsort(d->fields, d->n_fields, sizeof *d->fields, cmp_entry);
        data_strbuf_printf(&a->text, "{");
        for (size_t i = 0; i < d->n_fields; i++) {
            if (!key_ok(d->fields[i]->key) || !d->fields[i]->value)
                return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: dict key \"%.64s\" is not supported", a->file,
                                      d->fields[i]->key);
            data_strbuf_printf(&a->text, "%s%s:", i ? "," : "", d->fields[i]->key);
            if (!sv_walk(d->fields[i]->value, a, st)) return false;
        }
        data_strbuf_printf(&a->text, "}");
        return true;
    }
    default:
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "%s: element_spec value of kind %d is not supported (TensorSpecs in tuples and dicts)",
                              a->file, (int)v->kind_case);
    }
    if (a->n >= TFC_DATA_MAX_COMPONENTS)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: more than %d components", a->file, TFC_DATA_MAX_COMPONENTS);
    if (!tfc_pb_dtype_is_data((int)dt))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: component %d: dtype %d (%s) is not a data type", a->file,
                              a->n, (int)dt, tfc_pb_dtype_enum_name((int)dt));
    tfc_tensor_spec *c = &a->comps[a->n];
    c->dtype = (tfc_dtype)dt;
    if (!tfc_pb_shape_from_proto(shape, &c->shape, a->file, st)) return false;
    a->n++;
    data_strbuf_printf(&a->text, ".");
    return true;
}

bool snap_spec_decode(const uint8_t *data, size_t size, const char *file, data_spec *spec, tfc_status *st) {
    memset(spec, 0, sizeof *spec);
    Tensorflow__StructuredValue *v =
        (void *)tfc_pb_unpack(&tensorflow__structured_value__descriptor, data, size, SNAP_MAX_FILE, file, st);
    if (!v) {
        if (st->code != TFC_RESOURCE_EXHAUSTED && st->code != TFC_INVALID_ARGUMENT) st->code = TFC_DATA_LOSS;
        return false;
    }
    size_t tcap = 4096;
    spec_acc a = {{tfc_malloc(tcap), tcap, 0}, tfc_calloc(TFC_DATA_MAX_COMPONENTS, sizeof(tfc_tensor_spec)), 0, file};
    bool ok = false;
    if (!a.text.buf || !a.comps) {
        tfc_status_oom(st, file, tcap);
    } else {
        a.text.buf[0] = 0;
        ok = sv_walk(v, &a, st);
        if (ok && a.text.len + 1 >= tcap)
            ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: element structure too long", file);
        if (ok && a.n == 0) ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: element_spec has no tensors", file);
        if (ok) ok = data_spec_init(spec, a.text.buf, a.n, a.comps, st);
    }
    tfc_free(a.text.buf);
    tfc_free(a.comps);
    tfc_pb_free(v);
    return ok;
}

bool snap_check_dtypes(const data_spec *spec, const snap_meta *m, const char *dir, tfc_status *st) {
    if (spec->n != m->n_dtypes)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "%s/" SNAP_METADATA ": field dtype: %d components, element_spec has %d", dir,
                              m->n_dtypes, spec->n);
    for (int i = 0; i < spec->n; i++)
        if (spec->comps[i].dtype != m->dtypes[i])
            return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                  "%s/" SNAP_METADATA ": field dtype: component %d is %s, element_spec has %s", dir, i,
                                  tfc_dtype_name(m->dtypes[i]), tfc_dtype_name(spec->comps[i].dtype));
    return true;
}

/* ---- writers ---------------------------------------------------------------------------------------------------- */
#define SNAP_MAX_SHARDS 4096

typedef struct snap_shard_writer {
    int64_t shard;
    tfc_tfrecord_writer *w;
    char *tmp, *final;
} snap_shard_writer;

struct snap_writers {
    char *run_dir;
    const char *compression;
    snap_shard_writer *s;
    int n;
};

snap_writers *snap_writers_new(const char *run_dir, const char *compression, tfc_status *st) {
    snap_writers *w = tfc_calloc(1, sizeof *w);
    if (w) w->run_dir = tfc_strdup(run_dir);
    if (!w || !w->run_dir) {
        tfc_free(w);
        tfc_status_oom(st, "snapshot writer", strlen(run_dir));
        return NULL;
    }
    w->compression = compression;
    return w;
}

static snap_shard_writer *shard_writer(snap_writers *w, int64_t shard, tfc_status *st) {
    for (int i = 0; i < w->n; i++)
        if (w->s[i].shard == shard) return &w->s[i];
    if (w->n >= SNAP_MAX_SHARDS) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "snapshot: more than %d distinct shard indices", SNAP_MAX_SHARDS);
        return NULL;
    }
    void *grown = tfc_realloc(w->s, (size_t)(w->n + 1) * sizeof *w->s);
    if (!grown) {
        tfc_status_oom(st, "snapshot writer", 0);
        return NULL;
    }
    w->s = grown;
    snap_shard_writer *s = &w->s[w->n];
    memset(s, 0, sizeof *s);
    s->shard = shard;
    char name[32];
    snprintf(name, sizeof name, "%08llu.shard", (unsigned long long)shard);
    char *dir = snap_join(w->run_dir, name);
    s->final = dir ? snap_join(dir, "00000000.snapshot") : NULL;
    size_t tn = s->final ? strlen(s->final) + 40 : 0;
    s->tmp = s->final ? tfc_malloc(tn) : NULL;
    if (!s->tmp) {
        tfc_free(dir);
        tfc_free(s->final);
        tfc_status_oom(st, "snapshot writer", 0);
        return NULL;
    }
    snprintf(s->tmp, tn, "%s.tmp-%llu", s->final, (unsigned long long)(uint64_t)data_random_seed());
    bool ok = tfc_make_dirs(dir, "snapshot shard", st);
    tfc_free(dir);
    if (ok) s->w = tfc_tfrecord_writer_new(s->tmp, w->compression, -1, st);
    if (!s->w) {
        tfc_free(s->tmp);
        tfc_free(s->final);
        return NULL;
    }
    w->n++;
    return s;
}

bool snap_writers_write(snap_writers *w, int64_t shard, tfc_tensor *const *t, int n, tfc_status *st) {
    snap_shard_writer *s = shard_writer(w, shard, st);
    if (!s) return false;
    for (int i = 0; i < n; i++) {
        Tensorflow__TensorProto *p = tfc_pb_tensor_to_proto(t[i], "snapshot element", st);
        uint8_t *buf = NULL;
        size_t size = 0;
        bool ok = p && tfc_pb_pack(&p->base, &buf, &size, "snapshot element", st) &&
                  tfc_tfrecord_writer_write(s->w, buf, size, st);
        tfc_free(buf);
        tfc_pb_free(p);
        if (!ok) return false;
    }
    return true;
}

static void writers_free(snap_writers *w) {
    for (int i = 0; i < w->n; i++) {
        tfc_free(w->s[i].tmp);
        tfc_free(w->s[i].final);
    }
    tfc_free(w->s);
    tfc_free(w->run_dir);
    tfc_free(w);
}

bool snap_writers_finish(snap_writers *w, tfc_status *st) {
    if (!w) return true;
    bool ok = true;
    for (int i = 0; i < w->n; i++) {
        tfc_status e = TFC_STATUS_INIT;
        if (!tfc_tfrecord_writer_close(w->s[i].w, &e) && ok) {
            *st = e;
            ok = false;
        }
        w->s[i].w = NULL;
    }
    for (int i = 0; ok && i < w->n; i++)
        if (rename(w->s[i].tmp, w->s[i].final) != 0)
            ok = tfc_status_set(st, tfc_errno_code(errno), "snapshot: cannot rename %s to %s: %s", w->s[i].tmp,
                                w->s[i].final, strerror(errno));
    if (!ok)
        for (int i = 0; i < w->n; i++) unlink(w->s[i].tmp);
    writers_free(w);
    return ok;
}

void snap_writers_abort(snap_writers *w) {
    if (!w) return;
    for (int i = 0; i < w->n; i++) {
        tfc_status e = TFC_STATUS_INIT;
        tfc_tfrecord_writer_close(w->s[i].w, &e);
        unlink(w->s[i].tmp);
    }
    writers_free(w);
}

bool snap_shard_index(tfc_ctx *ctx, tfc_data_map_fn fn, void *user, tfc_tensor *const *t, int n, int64_t *shard,
                      tfc_status *st) {
    *shard = 0;
    if (!fn) return true;
    tfc_tensor *out = NULL;
    tfc_tensor_spec any = {TFC_INVALID_DTYPE, {.rank = -1}};
    const data_spec one = {(char *)".", 1, &any};
    if (!data_call_map(ctx, fn, user, t, n, &out, &one, "shard_func", st)) return false;
    bool ok = tfc_tensor_dtype(out) == TFC_INT64 && tfc_tensor_num_elements(out) == 1;
    if (ok) *shard = ((const int64_t *)tfc_tensor_data(out))[0];
    tfc_tensor_unref(out);
    if (!ok) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "`shard_func` must return a scalar int64.");
    if (*shard < 0) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "`shard_func` returned a negative shard %lld",
                                          (long long)*shard);
    return true;
}

/* ---- reading: one shard ------------------------------------------------------------------------------------------ */
typedef struct shard_params {
    char *dir;                /* NULL: an empty dataset (a snapshot without shards) */
    char compression[8];
} shard_params;

typedef struct shard_iter {
    data_iter base;
    int64_t chunk;
    char *file;
    data_record_reader rr;
    bool open, done;
} shard_iter;

static bool shard_open_chunk(shard_iter *it, bool *none, tfc_status *st) {
    shard_params *p = it->base.ds->p;
    char name[32];
    snprintf(name, sizeof name, "%08lld.snapshot", (long long)it->chunk);
    tfc_free(it->file);
    it->file = snap_join(p->dir, name);
    if (!it->file) return tfc_status_oom(st, "snapshot reader", 0);
    struct stat sb;
    *none = stat(it->file, &sb) != 0;
    if (*none) return true;
    if (!data_record_reader_open(&it->rr, it->file, p->compression, 0, st)) return false;
    it->open = true;
    return true;
}

/* A string tensor whose strings are in tensor_content, as TensorFlow's Tensor::AsProtoTensorContent writes them
 * (the chunk files TensorFlow writes): a varint32 length per string, then the bytes of all strings. */
static tfc_tensor *string_content_tensor(const Tensorflow__TensorProto *tp, const char *what, tfc_status *st) {
    tfc_shape shape;
    if (!tfc_pb_shape_from_proto(tp->tensor_shape, &shape, what, st)) return NULL;
    const uint8_t *p = tp->tensor_content.data, *end = p + tp->tensor_content.len;
    int64_t n = 1;
    for (int i = 0; i < shape.rank; i++)
        if (shape.dims[i] < 0 || !tfc_size_mul(n, shape.dims[i], &n) || n > (int64_t)tp->tensor_content.len) {
            tfc_status_set(st, TFC_DATA_LOSS, "%s: string tensor_content of %zu bytes cannot hold the shape's strings",
                           what, tp->tensor_content.len);
            return NULL;
        }
    size_t *lens = tfc_calloc((size_t)(n ? n : 1), sizeof *lens);
    const char **strs = tfc_calloc((size_t)(n ? n : 1), sizeof *strs);
    tfc_tensor *t = NULL;
    if (!lens || !strs) {
        tfc_status_oom(st, what, (size_t)n * sizeof *lens);
        goto done;
    }
    for (int64_t i = 0; i < n; i++) {
        uint32_t v = 0;
        int shift = 0;
        for (;;) {
            if (p >= end || shift > 28) goto bad;
            uint8_t b = *p++;
            v |= (uint32_t)(b & 0x7f) << shift;
            shift += 7;
            if (!(b & 0x80)) break;
        }
        lens[i] = v;
    }
    for (int64_t i = 0; i < n; i++) {
        if (lens[i] > (size_t)(end - p)) goto bad;
        strs[i] = (const char *)p;
        p += lens[i];
    }
    if (p != end) goto bad;
    t = tfc_tensor_from_strings(strs, lens, shape.dims, shape.rank, st);
    goto done;
bad:
    tfc_status_set(st, TFC_DATA_LOSS, "%s: malformed string tensor_content (%zu bytes)", what, tp->tensor_content.len);
done:
    tfc_free(lens);
    tfc_free(strs);
    return t;
}

static bool shard_fail(shard_iter *it, tfc_tensor **out, int k, tfc_status *st) {
    data_unref_n(out, k);
    if (st->code != TFC_RESOURCE_EXHAUSTED) st->code = TFC_DATA_LOSS;
    it->done = true; /* the components of later elements can no longer be told apart */
    return false;
}

static bool shard_next(data_iter *it_, tfc_tensor **out, bool *end, tfc_status *st) {
    shard_iter *it = (shard_iter *)it_;
    shard_params *p = it_->ds->p;
    const data_spec *sp = &it_->ds->spec;
    if (!p->dir || it->done) {
        *end = true;
        return true;
    }
    for (;;) {
        if (!it->open) {
            bool none = false;
            if (!shard_open_chunk(it, &none, st)) {
                it->done = true;
                return false;
            }
            if (none) {
                it->done = true;
                *end = true;
                return true;
            }
        }
        int k = 0;
        for (; k < sp->n; k++) {
            size_t len = 0;
            bool rend = false;
            if (!data_record_reader_next(&it->rr, &len, &rend, st)) return shard_fail(it, out, k, st);
            if (rend) break;
            char what[512];
            snprintf(what, sizeof what, "load %s: record %lld", it->file, (long long)(it->rr.index - 1));
            Tensorflow__TensorProto *tp = (void *)tfc_pb_unpack(&tensorflow__tensor_proto__descriptor, it->rr.buf, len,
                                                                (size_t)1 << 40, what, st);
            out[k] = NULL;
            if (tp && tp->dtype == TENSORFLOW__DATA_TYPE__DT_STRING && tp->tensor_content.len > 0)
                out[k] = string_content_tensor(tp, what, st);
            else if (tp)
                out[k] = tfc_pb_tensor_from_proto(tp, 0, what, st);
            tfc_pb_free(tp);
            if (!out[k]) return shard_fail(it, out, k, st);
            if (tfc_tensor_dtype(out[k]) != sp->comps[k].dtype) {
                tfc_status_set(st, TFC_DATA_LOSS, "%s: component %d has dtype %s, snapshot.metadata says %s", what, k,
                               tfc_dtype_name(tfc_tensor_dtype(out[k])), tfc_dtype_name(sp->comps[k].dtype));
                return shard_fail(it, out, k + 1, st);
            }
        }
        if (k == sp->n) break;
        if (k > 0) {
            tfc_status_set(st, TFC_DATA_LOSS, "load %s: truncated element (%d of %d components)", it->file, k, sp->n);
            return shard_fail(it, out, k, st);
        }
        data_record_reader_close(&it->rr);
        it->open = false;
        it->chunk++;
    }
    if (!data_spec_check(sp, out, "load", st)) {
        data_unref_n(out, sp->n);
        return false;
    }
    return true;
}

static void shard_iter_free(data_iter *it_) {
    shard_iter *it = (shard_iter *)it_;
    if (it->open) data_record_reader_close(&it->rr);
    tfc_free(it->file);
}

static const data_iter_vt shard_vt = {shard_next, shard_iter_free};

static data_iter *shard_make_iter(tfc_dataset *ds, const data_ictx *ictx, tfc_status *st) {
    return data_iter_alloc(sizeof(shard_iter), &shard_vt, ds, ictx, st);
}

static void shard_free(tfc_dataset *ds) { tfc_free(((shard_params *)ds->p)->dir); }

static void shard_describe(const tfc_dataset *ds, data_strbuf *b) {
    const shard_params *p = ds->p;
    data_strbuf_printf(b, "shard_dir=%s, compression=\"%s\", version=%d", p->dir ? p->dir : "", p->compression,
                       SNAP_VERSION);
}

static const data_kind shard_kind = {"SnapshotDatasetReader", shard_make_iter, NULL, shard_free, shard_describe};

static tfc_dataset *shard_dataset(const char *dir, const data_spec *spec, const char *compression, tfc_status *st) {
    tfc_dataset *ds = data_ds_new(&shard_kind, sizeof(shard_params), NULL, 0, st);
    if (!ds) return NULL;
    shard_params *p = ds->p;
    snprintf(p->compression, sizeof p->compression, "%s", compression);
    if (dir && !(p->dir = tfc_strdup(dir))) {
        tfc_status_oom(st, "snapshot reader", strlen(dir));
        return data_ds_fail(ds);
    }
    if (!data_spec_copy(&ds->spec, spec, st)) return data_ds_fail(ds);
    return ds;
}

/* ---- reading: the whole run --------------------------------------------------------------------------------------- */
typedef struct load_params {
    int64_t num_elements;
    bool check_count;
    char *dir;
    char *what;
} load_params;

typedef struct load_iter {
    data_iter base;
    data_iter *in;
    int64_t count;
    bool reported;
} load_iter;

static bool load_next(data_iter *it_, tfc_tensor **out, bool *end, tfc_status *st) {
    load_iter *it = (load_iter *)it_;
    load_params *p = it_->ds->p;
    if (it->reported) {
        *end = true;
        return true;
    }
    if (!data_iter_next(it->in, out, end, st)) return false;
    if (!*end) {
        it->count++;
        return true;
    }
    if (p->check_count && p->num_elements >= 0 && it->count != p->num_elements) {
        it->reported = true;
        *end = false;
        return tfc_status_set(st, TFC_DATA_LOSS,
                              "%s %s: the chunk files hold %lld elements, " SNAP_METADATA " field num_elements says %lld",
                              p->what, p->dir, (long long)it->count, (long long)p->num_elements);
    }
    return true;
}

static void load_iter_free(data_iter *it_) { data_iter_free(((load_iter *)it_)->in); }

static const data_iter_vt load_vt = {load_next, load_iter_free};

static data_iter *load_make_iter(tfc_dataset *ds, const data_ictx *ictx, tfc_status *st) {
    load_iter *it = data_iter_alloc(sizeof *it, &load_vt, ds, ictx, st);
    if (!it) return NULL;
    it->in = data_iter_make(ds->inputs[0], ictx, st);
    if (!it->in) {
        tfc_free(it);
        return NULL;
    }
    return &it->base;
}

static int64_t load_card(const tfc_dataset *ds) {
    const load_params *p = ds->p;
    return p->num_elements >= 0 ? p->num_elements : TFC_UNKNOWN_CARDINALITY;
}

static void load_free(tfc_dataset *ds) {
    load_params *p = ds->p;
    tfc_free(p->dir);
    tfc_free(p->what);
}

static void load_describe(const tfc_dataset *ds, data_strbuf *b) {
    const load_params *p = ds->p;
    data_strbuf_printf(b, "path=%s, num_elements=%lld", p->dir, (long long)p->num_elements);
}

static const data_kind load_kind = {"LoadDataset", load_make_iter, load_card, load_free, load_describe};

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The "*.shard" directories of run_dir, sorted (new tfc_malloc'd strings). */
static bool list_shards(const char *run_dir, char ***out, int *n_out, tfc_status *st) {
    *out = NULL;
    *n_out = 0;
    DIR *d = opendir(run_dir);
    if (!d) {
        if (errno == ENOENT) return true; /* nothing was written: an empty dataset */
        return tfc_status_set(st, tfc_errno_code(errno), "load: cannot list %s: %s", run_dir, strerror(errno));
    }
    char **v = NULL;
    int n = 0;
    bool ok = true;
    struct dirent *e;
    while (ok && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len <= 6 || strcmp(e->d_name + len - 6, ".shard")) continue;
        if (n >= SNAP_MAX_SHARDS) {
            ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "load %s: more than %d shards", run_dir, SNAP_MAX_SHARDS);
            break;
        }
        void *grown = tfc_realloc(v, (size_t)(n + 1) * sizeof *v);
        char *path = snap_join(run_dir, e->d_name);
        if (!grown || !path) {
            if (grown) v = grown;
            tfc_free(path);
            ok = tfc_status_oom(st, "load", 0);
            break;
        }
        v = grown;
        v[n++] = path;
    }
    closedir(d);
    if (!ok) {
        for (int i = 0; i < n; i++) tfc_free(v[i]);
        tfc_free(v);
        return false;
    }
    if (n) qsort(v, (size_t)n, sizeof *v, cmp_str);
    *out = v;
    *n_out = n;
    return true;
}

tfc_dataset *snap_reader_dataset(const char *dir, const snap_meta *m, const data_spec *spec,
                                 const char *compression, tfc_data_reader_fn reader_func, void *user,
                                 const char *what, tfc_status *st) {
    char *run_dir = snap_join(dir, m->run_id);
    if (!run_dir) {
        tfc_status_oom(st, what, strlen(dir));
        return NULL;
    }
    char **dirs = NULL;
    int n = 0;
    tfc_dataset *combined = NULL;
    tfc_dataset **shards = NULL;
    if (!list_shards(run_dir, &dirs, &n, st)) goto done;
    shards = tfc_calloc((size_t)(n ? n : 1), sizeof *shards);
    if (!shards) {
        tfc_status_oom(st, what, 0);
        goto done;
    }
    int made = 0;
    for (; made < (n ? n : 1); made++)
        if (!(shards[made] = shard_dataset(n ? dirs[made] : NULL, spec, compression, st))) break;
    if (made == (n ? n : 1)) {
        if (reader_func) {
            combined = reader_func(user, shards, n ? n : 1, st);
            if (!combined && st->code == TFC_OK)
                tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: reader_func returned no dataset", what);
        } else if (n <= 1) {
            combined = tfc_dataset_ref(shards[0]);
        } else {
            tfc_dataset *choice = tfc_dataset_repeat(tfc_dataset_range(0, n, 1, TFC_INT64, st), -1, st);
            for (int i = 0; i < n; i++) tfc_dataset_ref(shards[i]);
            combined = choice ? tfc_dataset_choose_from_datasets(shards, n, choice, false, st) : NULL;
            if (!choice)
                for (int i = 0; i < n; i++) tfc_dataset_unref(shards[i]);
        }
    }
    for (int i = 0; i < made; i++) tfc_dataset_unref(shards[i]);
done:
    for (int i = 0; i < n; i++) tfc_free(dirs[i]);
    tfc_free(dirs);
    tfc_free(shards);
    tfc_free(run_dir);
    if (!combined) return NULL;
    tfc_dataset *ds = data_ds_new(&load_kind, sizeof(load_params), &combined, 1, st);
    if (!ds) return NULL;
    load_params *p = ds->p;
    p->num_elements = m->num_elements;
    p->check_count = !reader_func;
    p->dir = tfc_strdup(dir);
    p->what = tfc_strdup(what);
    if (!p->dir || !p->what) {
        tfc_status_oom(st, what, strlen(dir));
        return data_ds_fail(ds);
    }
    if (!data_spec_copy(&ds->spec, &combined->spec, st)) return data_ds_fail(ds);
    return ds;
}
