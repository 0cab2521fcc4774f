/* Pipelines as GraphDefs (tfc/data_graph.h): serialise a dataset graph node by node and rebuild it through the
 * public constructors, optionally with its source restricted to one split (the data service's
 * distributed_epoch). A node's arguments are read from its `describe` text, the pipeline-identity line of
 * tfc_dataset_graph_str ("batch_size=4, drop_remainder=false"; callbacks and tensors appear there by address,
 * which reads back with %p inside this process), so the dataset kinds need no serialisation hook of their own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/size_check.h"
#include "data/data_graph.h"

#define DESC_MAX 65536
#define MAX_NODES 4096

/* ---- describe text ------------------------------------------------------------------------------------------ */
static void describe(const tfc_dataset *ds, char *buf, size_t size) {
    data_strbuf b = {buf, size, 0};
    buf[0] = 0;
    if (ds->kind->describe) ds->kind->describe(ds, &b);
}

/* The value of `key=` in a describe text (up to ", " or the end; a quoted value without its quotes). */
static bool desc_get(const char *d, const char *key, char *val, size_t n) {
    size_t kl = strlen(key);
    for (const char *p = d; (p = strstr(p, key)); p += kl) {
        if ((p != d && !(p >= d + 2 && p[-2] == ',' && p[-1] == ' ')) || p[kl] != '=') continue;
        const char *v = p + kl + 1, *e;
        if (*v == '"') {
            v++;
            e = strchr(v, '"');
            if (!e) return false;
        } else {
            e = strstr(v, ", ");
            if (!e) e = v + strlen(v);
        }
        size_t len = (size_t)(e - v);
        if (len >= n) return false;
        memcpy(val, v, len);
        val[len] = 0;
        return true;
    }
    return false;
}

static bool desc_int(const char *d, const char *key, int64_t *out) {
    char v[64], *end;
    if (!desc_get(d, key, v, sizeof v)) return false;
    if (!strcmp(v, "true") || !strcmp(v, "false")) {
        *out = !strcmp(v, "true");
        return true;
    }
    *out = strtoll(v, &end, 10);
    return end != v && !*end;
}

static void *desc_ptr(const char *d, const char *key) {
    char v[64];
    void *p = NULL;
    if (!desc_get(d, key, v, sizeof v) || sscanf(v, "%p", &p) != 1) return NULL;
    return p;
}

/* ---- serialise ------------------------------------------------------------------------------------------------ */
typedef struct ser {
    tfc_graphdef *gd;
    const tfc_dataset *seen[MAX_NODES];
    char names[MAX_NODES][64];
    int n;
    char *desc;
    const char *tin[TFC_DATA_MAX_COMPONENTS];      /* a Tensor(Slice)Dataset's Const inputs (leaves: no recursion */
    char tnames[TFC_DATA_MAX_COMPONENTS][64];       /* after them, so one set serves every node) */
} ser;

static const char *deterministic_str(int64_t flag) {
    return flag == TFC_YES ? "true" : flag == TFC_NO ? "false" : "default";
}

static bool unsupported(const tfc_dataset *ds, const char *why, tfc_status *st) {
    return tfc_status_set(st, TFC_INVALID_ARGUMENT, "serialize: %s has no graph form%s%s", ds->kind->name,
                          why ? ": " : "", why ? why : "");
}

/* attrs of a map / filter's function: f (or predicate) or _tfc_callback. */
static bool fn_attr(const tfc_dataset *ds, ser *s, const char *key, const char *attr_name, bool map, tfc_attr *a,
                    char *cb_buf, tfc_status *st) {
    void *fn = desc_ptr(s->desc, key), *user = desc_ptr(s->desc, "user");
    const bool gfn = map ? fn == (void *)(uintptr_t)data_gfn_map : fn == (void *)(uintptr_t)data_gfn_predicate;
    if (gfn) {
        const data_gfn *g = user;
        if (!data_gfn_export(g, s->gd, st)) return false;
        *a = TFC_ATTR_FN(attr_name, g->entry);
        return true;
    }
    const char *name = data_callback_name((void (*)(void))(uintptr_t)fn, user);
    if (!name) {
        char why[160];
        snprintf(why, sizeof why, "its %s is the C callback %p (user %p), neither a graph function nor registered "
                 "by name (tfc_data_register_%s_fn)", key, fn, user, map ? "map" : "predicate");
        return unsupported(ds, why, st);
    }
    snprintf(cb_buf, 128, "%s", name);
    *a = TFC_ATTR_S("_tfc_callback", cb_buf);
    return true;
}

static const char *ser_node(ser *s, const tfc_dataset *ds, tfc_status *st);

static bool ser_tensors(ser *s, const tfc_dataset *ds, const char *node, const char **inputs, char (*in_names)[64],
                        tfc_status *st) {
    const char *p = s->desc;
    for (int c = 0; c < ds->spec.n; c++) {
        const char *at = strchr(p, '@');
        void *t = NULL;
        if (!at || sscanf(at + 1, "%p", &t) != 1 || !t) return unsupported(ds, "components unreadable", st);
        p = at + 1;
        snprintf(in_names[c], 64, "%s/component_%d", node, c);
        const tfc_tensor *tt = t;
        tfc_attr a[2] = {{.name = "value", .kind = TFC_ATTR_TENSOR, .v.tensor = tt}, TFC_ATTR_T("dtype", tt->dtype)};
        if (!tfc_graphdef_add_node(s->gd, TFC_GRAPHDEF_TOP, in_names[c], "Const", NULL, 0, a, 2, st)) return false;
        inputs[c] = in_names[c];
    }
    return true;
}

static const char *ser_node(ser *s, const tfc_dataset *ds, tfc_status *st) {
    for (int i = 0; i < s->n; i++)
        if (s->seen[i] == ds) return s->names[i];
    if (s->n == MAX_NODES) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "serialize: over %d nodes", MAX_NODES), NULL;
    int n_in = ds->n_inputs;
    if (n_in > 16) return unsupported(ds, "over 16 inputs", st), NULL;
    const char *ups[16], **in_nodes = ups;
    for (int i = 0; i < n_in; i++)
        if (!(ups[i] = ser_node(s, ds->inputs[i], st))) return NULL;
    const int me = s->n++;
    s->seen[me] = ds;
    snprintf(s->names[me], sizeof s->names[me], "%s_%d", ds->kind->name, me);
    const char *node = s->names[me], *k = ds->kind->name;
    describe(ds, s->desc, DESC_MAX);

    tfc_dtype types[TFC_DATA_MAX_COMPONENTS];
    tfc_shape shapes[TFC_DATA_MAX_COMPONENTS];
    for (int c = 0; c < ds->spec.n; c++) {
        if (ds->spec.comps[c].dtype == TFC_INVALID_DTYPE) {
            char why[96];
            snprintf(why, sizeof why, "component %d has no known dtype (give the transformation an output_spec)", c);
            return unsupported(ds, why, st), NULL;
        }
        types[c] = ds->spec.comps[c].dtype;
        shapes[c] = ds->spec.comps[c].shape;
    }
    tfc_attr a[16];
    int na = 0;
    a[na++] = (tfc_attr){.name = "output_types", .kind = TFC_ATTR_LIST_TYPE, .n = ds->spec.n, .v.types = types};
    a[na++] = TFC_ATTR_SHAPES("output_shapes", shapes, ds->spec.n);
    a[na++] = TFC_ATTR_S("_structure", ds->spec.structure);
    int64_t v[4] = {0};
    char str[256], cb[128];
    const char *d = s->desc;
    bool ok = true;
    if (!strcmp(k, "RangeDataset")) {
        ok = desc_int(d, "start", &v[0]) && desc_int(d, "stop", &v[1]) && desc_int(d, "step", &v[2]);
        a[na++] = TFC_ATTR_I("start", v[0]);
        a[na++] = TFC_ATTR_I("stop", v[1]);
        a[na++] = TFC_ATTR_I("step", v[2]);
    } else if (!strcmp(k, "TensorDataset") || !strcmp(k, "TensorSliceDataset")) {
        if (!ser_tensors(s, ds, node, s->tin, s->tnames, st)) return NULL;
        in_nodes = s->tin;
        n_in = ds->spec.n;
    } else if (!strcmp(k, "TFRecordDataset") || !strcmp(k, "TextLineDataset")) {
        ok = desc_get(d, "compression_type", str, sizeof str) && desc_int(d, "buffer_size", &v[0]);
        a[na++] = TFC_ATTR_S("compression_type", str);
        a[na++] = TFC_ATTR_I("buffer_size", v[0]);
    } else if (!strcmp(k, "MapDataset") || !strcmp(k, "ParallelMapDatasetV2") || !strcmp(k, "FilterDataset")) {
        const bool map = strcmp(k, "FilterDataset") != 0;
        if (!fn_attr(ds, s, map ? "f" : "predicate", map ? "f" : "predicate", map, &a[na++], cb, st)) return NULL;
        if (desc_int(d, "num_parallel_calls", &v[0])) {
            desc_int(d, "deterministic", &v[1]);
            a[na++] = TFC_ATTR_I("num_parallel_calls", v[0]);
            a[na++] = TFC_ATTR_S("deterministic", deterministic_str(v[1]));
        }
    } else if (!strcmp(k, "BatchDatasetV2") || !strcmp(k, "ParallelBatchDataset")) {
        ok = desc_int(d, "batch_size", &v[0]) && desc_int(d, "drop_remainder", &v[1]);
        a[na++] = TFC_ATTR_I("batch_size", v[0]);
        a[na++] = TFC_ATTR_B("drop_remainder", v[1] != 0);
        if (desc_int(d, "num_parallel_calls", &v[2])) {
            desc_int(d, "deterministic", &v[3]);
            a[na++] = TFC_ATTR_I("num_parallel_calls", v[2]);
            a[na++] = TFC_ATTR_S("deterministic", deterministic_str(v[3]));
        }
    } else if (!strcmp(k, "ShuffleDatasetV3")) {
        ok = desc_int(d, "buffer_size", &v[0]) && desc_int(d, "seed", &v[1]) &&
             desc_int(d, "reshuffle_each_iteration", &v[2]);
        a[na++] = TFC_ATTR_I("buffer_size", v[0]);
        a[na++] = TFC_ATTR_I("seed", v[1]);
        a[na++] = TFC_ATTR_I("seed2", 0);
        a[na++] = TFC_ATTR_B("reshuffle_each_iteration", v[2] != 0);
    } else if (!strcmp(k, "RepeatDataset") || !strcmp(k, "TakeDataset") || !strcmp(k, "SkipDataset")) {
        ok = desc_int(d, "count", &v[0]);
        a[na++] = TFC_ATTR_I("count", v[0]);
    } else if (!strcmp(k, "ShardDataset")) {
        ok = desc_int(d, "num_shards", &v[0]) && desc_int(d, "index", &v[1]);
        a[na++] = TFC_ATTR_I("num_shards", v[0]);
        a[na++] = TFC_ATTR_I("index", v[1]);
    } else if (!strcmp(k, "PrefetchDataset")) {
        ok = desc_int(d, "buffer_size", &v[0]);
        a[na++] = TFC_ATTR_I("buffer_size", v[0]);
    } else if (!strcmp(k, "EnumerateDataset")) {
        ok = desc_int(d, "start", &v[0]);
        a[na++] = TFC_ATTR_I("start", v[0]);
    } else if (!strcmp(k, "OptionsDataset")) {
        ok = desc_int(d, "deterministic", &v[0]) && desc_int(d, "private_threadpool_size", &v[1]) &&
             desc_int(d, "max_intra_op_parallelism", &v[2]);
        a[na++] = TFC_ATTR_I("deterministic", v[0]);
        a[na++] = TFC_ATTR_I("private_threadpool_size", v[1]);
        a[na++] = TFC_ATTR_I("max_intra_op_parallelism", v[2]);
    } else if (strcmp(k, "ZipDataset") && strcmp(k, "ConcatenateDataset") && strcmp(k, "UnbatchDataset") &&
               strcmp(k, "IgnoreErrorsDataset")) {
        return unsupported(ds, NULL, st), NULL;
    }
    if (!ok) return tfc_status_set(st, TFC_INTERNAL, "serialize: cannot read the arguments of %s (%s)", k, d), NULL;
    return tfc_graphdef_add_node(s->gd, TFC_GRAPHDEF_TOP, node, k, in_nodes, n_in, a, na, st) ? node : NULL;
}

bool tfc_dataset_serialize(const tfc_dataset *ds, void **data, size_t *size, tfc_status *st) {
    if (!ds || !data || !size) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "serialize: NULL argument");
    ser *s = tfc_calloc(1, sizeof *s);
    char *desc = tfc_malloc(DESC_MAX);
    bool ok = s && desc;
    if (!ok) tfc_status_oom(st, "serialize", sizeof *s);
    if (ok) {
        s->desc = desc;
        ok = (s->gd = tfc_graphdef_new(st)) && ser_node(s, ds, st) && tfc_graphdef_serialize(s->gd, data, size, st);
    }
    if (s) tfc_graphdef_free(s->gd);
    tfc_free(s);
    tfc_free(desc);
    if (ok) tfc_status_clear(st);
    return ok;
}

/* ---- rebuild --------------------------------------------------------------------------------------------------- */
typedef struct bld {
    tfc_graphdef *gd;
    int64_t i;                 /* node being built */
    const char *name, *op;
    tfc_status *st;
} bld;

static bool bad(bld *b, const char *what) {
    return tfc_status_set(b->st, TFC_INVALID_ARGUMENT, "dataset graph: node '%s' (%s): %s", b->name, b->op, what);
}

static bool attr(bld *b, const char *name, tfc_attr_kind kind, tfc_attr *out) {
    if (!tfc_graphdef_node_attr(b->gd, TFC_GRAPHDEF_TOP, b->i, name, out, b->st)) {
        char m[400];
        snprintf(m, sizeof m, "attr '%s': %s", name, b->st->msg);
        return bad(b, m);
    }
    if (out->kind != kind && !(kind == TFC_ATTR_LIST_TYPE && out->kind == TFC_ATTR_LIST_INT && out->n == 0)) {
        char m[96];
        snprintf(m, sizeof m, "attr '%s' has the wrong kind", name);
        return bad(b, m);
    }
    return true;
}

static bool attr_i(bld *b, const char *name, int64_t *v) {
    tfc_attr a;
    if (!attr(b, name, TFC_ATTR_INT, &a)) return false;
    *v = a.v.i;
    return true;
}

/* An optional int attr: false (st untouched) when absent. */
static bool opt_int(bld *b, const char *name, int64_t *v) {
    tfc_attr a;
    tfc_status tmp = TFC_STATUS_INIT;
    if (!tfc_graphdef_node_attr(b->gd, TFC_GRAPHDEF_TOP, b->i, name, &a, &tmp) || a.kind != TFC_ATTR_INT) return false;
    *v = a.v.i;
    return true;
}

static tfc_flag attr_det(bld *b) {
    tfc_attr a;
    tfc_status tmp = TFC_STATUS_INIT;
    if (!tfc_graphdef_node_attr(b->gd, TFC_GRAPHDEF_TOP, b->i, "deterministic", &a, &tmp) || a.kind != TFC_ATTR_STRING)
        return TFC_DEFAULT;
    return !strcmp(a.v.s, "true") ? TFC_YES : !strcmp(a.v.s, "false") ? TFC_NO : TFC_DEFAULT;
}

/* output_types / output_shapes / _structure as a spec (specs has room for TFC_DATA_MAX_COMPONENTS). */
static bool node_spec(bld *b, tfc_tensor_spec *specs, int *n, const char **structure) {
    tfc_attr t, sh, s;
    if (!attr(b, "output_types", TFC_ATTR_LIST_TYPE, &t) || !attr(b, "output_shapes", TFC_ATTR_LIST_SHAPE, &sh) ||
        !attr(b, "_structure", TFC_ATTR_STRING, &s))
        return false;
    if (t.n != sh.n || t.n < 1 || t.n > TFC_DATA_MAX_COMPONENTS) return bad(b, "output_types and output_shapes disagree");
    for (int c = 0; c < t.n; c++) specs[c] = (tfc_tensor_spec){t.v.types[c], sh.v.shapes[c]};
    *n = t.n;
    *structure = s.v.s;
    return true;
}

/* Rows [lo, hi) of t along dim 0, a copy. */
static tfc_tensor *rows_of(const tfc_tensor *t, int64_t lo, int64_t hi, tfc_status *st) {
    tfc_shape sh = t->shape;
    sh.dims[0] = hi - lo;
    tfc_tensor *r = tfc_tensor_new(t->dtype, sh.dims, sh.rank, st);
    const int64_t row = tfc_dims_product(t->shape.dims, 1, t->shape.rank);
    if (r && !data_copy_elems(t->dtype, (void *)tfc_tensor_data(r), 0, tfc_tensor_data(t), lo * row, (hi - lo) * row, st)) {
        tfc_tensor_unref(r);
        return NULL;
    }
    return r;
}

typedef struct split_req {
    int64_t index, count;      /* count 0: no split */
    int64_t leaf;              /* the node the split applies to */
} split_req;

static void split_bounds(const split_req *sp, int64_t rows, int64_t *lo, int64_t *hi) {
    *lo = rows / sp->count * sp->index + (sp->index < rows % sp->count ? sp->index : rows % sp->count);
    *hi = *lo + rows / sp->count + (sp->index < rows % sp->count ? 1 : 0);
}

static tfc_dataset *build_node(bld *b, tfc_dataset **in, int n_in, const split_req *sp) {
    tfc_status *st = b->st;
    const char *k = b->op;
    tfc_tensor_spec specs[TFC_DATA_MAX_COMPONENTS];
    int n = 0;
    const char *structure = NULL;
    if (!node_spec(b, specs, &n, &structure)) return NULL;
    const bool split_here = sp->count > 0 && sp->leaf == b->i;
    int64_t v[4];
    tfc_attr a;
    if (!strcmp(k, "RangeDataset")) {
        if (!attr_i(b, "start", &v[0]) || !attr_i(b, "stop", &v[1]) || !attr_i(b, "step", &v[2])) return NULL;
        tfc_dataset *r = tfc_dataset_range(v[0], v[1], v[2], specs[0].dtype, st);
        if (!r || !split_here) return r;
        /* the split's rows [lo, hi) of the range's cardinality as a range of its own */
        const int64_t rows = tfc_dataset_cardinality(r);
        int64_t lo, hi;
        tfc_dataset_unref(r);
        split_bounds(sp, rows, &lo, &hi);
        return tfc_dataset_range(v[0] + lo * v[2], hi == rows ? v[1] : v[0] + hi * v[2], v[2], specs[0].dtype, st);
    }
    if (!strcmp(k, "TensorDataset") || !strcmp(k, "TensorSliceDataset")) {
        tfc_tensor *t[TFC_DATA_MAX_COMPONENTS] = {0};
        int nt = 0;
        tfc_graphdef_node_info info;
        tfc_graphdef_node(b->gd, TFC_GRAPHDEF_TOP, b->i, &info);
        bool ok = info.n_inputs - info.n_control_inputs == n;
        if (!ok) bad(b, "one Const input per component expected");
        for (; ok && nt < n; nt++) {
            int64_t c = tfc_graphdef_find_node(b->gd, TFC_GRAPHDEF_TOP, info.inputs[nt]);
            tfc_attr val;
            ok = c >= 0 && tfc_graphdef_node_attr(b->gd, TFC_GRAPHDEF_TOP, c, "value", &val, st) &&
                 val.kind == TFC_ATTR_TENSOR;
            if (!ok) {
                bad(b, "a component input is not a Const with a value");
                break;
            }
            t[nt] = tfc_tensor_ref((tfc_tensor *)val.v.tensor);
        }
        const bool slices = k[6] == 'S';
        if (ok && slices && split_here) {
            const int64_t rows = t[0]->shape.rank > 0 ? t[0]->shape.dims[0] : 0;
            int64_t lo, hi;
            split_bounds(sp, rows, &lo, &hi);
            for (int c = 0; ok && c < n; c++) {
                tfc_tensor *r = t[c]->shape.rank > 0 && t[c]->shape.dims[0] == rows ? rows_of(t[c], lo, hi, st) : NULL;
                if (!r && st->code == TFC_OK) bad(b, "components differ in dim 0");
                tfc_tensor_unref(t[c]);
                t[c] = r;
                ok = r != NULL;
            }
        }
        tfc_dataset *ds = NULL;
        if (ok) ds = slices ? tfc_dataset_from_tensor_slices(t, n, structure, st) : tfc_dataset_from_tensors(t, n, structure, st);
        for (int c = 0; c < nt; c++) tfc_tensor_unref(t[c]);
        return ds;
    }
    if (n_in < 1) return bad(b, "unknown source dataset op"), NULL;
    tfc_dataset *x = in[0];
    if (!strcmp(k, "TFRecordDataset") || !strcmp(k, "TextLineDataset")) {
        tfc_attr c;
        if (!attr(b, "compression_type", TFC_ATTR_STRING, &c) || !attr_i(b, "buffer_size", &v[0])) return NULL;
        tfc_reader_opts o = {.compression_type = c.v.s, .buffer_size = v[0]};
        return k[1] == 'F' ? tfc_dataset_tfrecord(tfc_dataset_ref(x), &o, st) : tfc_dataset_text_line(tfc_dataset_ref(x), &o, st);
    }
    if (!strcmp(k, "MapDataset") || !strcmp(k, "ParallelMapDatasetV2") || !strcmp(k, "FilterDataset")) {
        const bool map = k[0] != 'F';
        void (*fn)(void) = NULL;
        void *user = NULL;
        void (*user_free)(void *) = NULL;
        tfc_status tmp = TFC_STATUS_INIT;
        if (tfc_graphdef_node_attr(b->gd, TFC_GRAPHDEF_TOP, b->i, "_tfc_callback", &a, &tmp)) {
            if (a.kind != TFC_ATTR_STRING) return bad(b, "_tfc_callback is not a string"), NULL;
            if (!data_callback_lookup(a.v.s, &fn, &user))
                return tfc_status_set(st, TFC_NOT_FOUND, "dataset graph: node '%s': no callback registered as '%s' "
                                      "in this process", b->name, a.v.s), NULL;
        } else {
            if (!attr(b, map ? "f" : "predicate", TFC_ATTR_FUNC, &a)) return NULL;
            data_gfn *g = data_gfn_from_graphdef(b->gd, a.v.s, st);
            if (!g) return NULL;
            fn = map ? (void (*)(void))data_gfn_map : (void (*)(void))data_gfn_predicate;
            user = g;
            user_free = data_gfn_free;
        }
        if (!map)
            return tfc_dataset_filter(tfc_dataset_ref(x), (tfc_data_predicate_fn)(uintptr_t)fn, user,
                                      &(tfc_filter_opts){.user_free = user_free}, st);
        tfc_map_opts o = {.output_structure = structure, .output_spec = specs, .user_free = user_free};
        if (opt_int(b, "num_parallel_calls", &o.num_parallel_calls)) o.deterministic = attr_det(b);
        return tfc_dataset_map(tfc_dataset_ref(x), (tfc_data_map_fn)(uintptr_t)fn, user, &o, st);
    }
    if (!strcmp(k, "BatchDatasetV2") || !strcmp(k, "ParallelBatchDataset")) {
        if (!attr_i(b, "batch_size", &v[0]) || !attr(b, "drop_remainder", TFC_ATTR_BOOL, &a)) return NULL;
        tfc_batch_opts o = {.drop_remainder = a.v.b};
        if (opt_int(b, "num_parallel_calls", &o.num_parallel_calls)) o.deterministic = attr_det(b);
        return tfc_dataset_batch(tfc_dataset_ref(x), v[0], &o, st);
    }
    if (!strcmp(k, "ShuffleDatasetV3")) {
        if (!attr_i(b, "buffer_size", &v[0]) || !attr_i(b, "seed", &v[1]) ||
            !attr(b, "reshuffle_each_iteration", TFC_ATTR_BOOL, &a))
            return NULL;
        tfc_shuffle_opts o = {.seed = v[1], .has_seed = true, .reshuffle_each_iteration = a.v.b ? TFC_YES : TFC_NO};
        return tfc_dataset_shuffle(tfc_dataset_ref(x), v[0], &o, st);
    }
    if (!strcmp(k, "RepeatDataset") || !strcmp(k, "TakeDataset") || !strcmp(k, "SkipDataset")) {
        if (!attr_i(b, "count", &v[0])) return NULL;
        return (k[0] == 'R' ? tfc_dataset_repeat : k[0] == 'T' ? tfc_dataset_take : tfc_dataset_skip)(
            tfc_dataset_ref(x), v[0], st);
    }
    if (!strcmp(k, "ShardDataset")) {
        if (!attr_i(b, "num_shards", &v[0]) || !attr_i(b, "index", &v[1])) return NULL;
        return tfc_dataset_shard(tfc_dataset_ref(x), v[0], v[1], st);
    }
    if (!strcmp(k, "PrefetchDataset"))
        return attr_i(b, "buffer_size", &v[0]) ? tfc_dataset_prefetch(tfc_dataset_ref(x), v[0], st) : NULL;
    if (!strcmp(k, "EnumerateDataset"))
        return attr_i(b, "start", &v[0]) ? tfc_dataset_enumerate(tfc_dataset_ref(x), v[0], st) : NULL;
    if (!strcmp(k, "OptionsDataset")) {
        if (!attr_i(b, "deterministic", &v[0]) || !attr_i(b, "private_threadpool_size", &v[1]) ||
            !attr_i(b, "max_intra_op_parallelism", &v[2]))
            return NULL;
        tfc_data_options o = {(tfc_flag)v[0], (int)v[1], (int)v[2]};
        return tfc_dataset_with_options(tfc_dataset_ref(x), &o, st);
    }
    if (!strcmp(k, "UnbatchDataset")) return tfc_dataset_unbatch(tfc_dataset_ref(x), st);
    if (!strcmp(k, "IgnoreErrorsDataset")) return tfc_dataset_ignore_errors(tfc_dataset_ref(x), st);
    if (!strcmp(k, "ConcatenateDataset")) {
        if (n_in != 2) return bad(b, "two inputs expected"), NULL;
        return tfc_dataset_concatenate(tfc_dataset_ref(x), tfc_dataset_ref(in[1]), st);
    }
    if (!strcmp(k, "ZipDataset")) {
        for (int i = 0; i < n_in; i++) tfc_dataset_ref(in[i]);
        return tfc_dataset_zip(in, n_in, st);
    }
    return bad(b, "not a dataset op tfc can rebuild"), NULL;
}

static bool is_const(tfc_graphdef *gd, int64_t i) {
    tfc_graphdef_node_info info;
    return tfc_graphdef_node(gd, TFC_GRAPHDEF_TOP, i, &info) && !strcmp(info.op, "Const");
}

tfc_dataset *data_graph_build(const void *data, size_t size, int64_t split_index, int64_t num_splits,
                              tfc_status *st) {
    tfc_graphdef_opts go = {.allow_unknown_ops = true};
    tfc_graphdef *gd = tfc_graphdef_parse(data, size, &go, st);
    if (!gd) return NULL;
    const int64_t n = tfc_graphdef_num_nodes(gd, TFC_GRAPHDEF_TOP);
    tfc_dataset **built = n > 0 ? tfc_calloc((size_t)n, sizeof *built) : NULL;
    tfc_dataset *out = NULL;
    int64_t last = -1;
    for (int64_t i = n - 1; i >= 0 && last < 0; i--)
        if (!is_const(gd, i)) last = i;
    if (!built || last < 0) {
        tfc_status_set(st, n > 0 && !built ? TFC_RESOURCE_EXHAUSTED : TFC_INVALID_ARGUMENT,
                       "dataset graph: no dataset node");
        goto done;
    }
    split_req sp = {split_index, num_splits, -1};
    if (num_splits > 0) { /* the leaf of the first-input chain from the output */
        for (int64_t i = last; i >= 0;) {
            tfc_graphdef_node_info info;
            tfc_graphdef_node(gd, TFC_GRAPHDEF_TOP, i, &info);
            int64_t up = -1;
            int data_in = info.n_inputs - info.n_control_inputs;
            if (data_in > 1 && strcmp(info.op, "TensorSliceDataset")) {
                tfc_status_set(st, TFC_INVALID_ARGUMENT, "dataset graph: %s '%s' has %d inputs; only a single "
                               "chain down to one source can be split", info.op, info.name, data_in);
                goto done;
            }
            if (data_in == 1) up = tfc_graphdef_find_node(gd, TFC_GRAPHDEF_TOP, info.inputs[0]);
            if (up < 0 || is_const(gd, up)) {
                if (strcmp(info.op, "RangeDataset") && strcmp(info.op, "TensorSliceDataset")) {
                    tfc_status_set(st, TFC_INVALID_ARGUMENT, "dataset graph: the source %s '%s' cannot be split "
                                   "(RangeDataset or TensorSliceDataset sources can)", info.op, info.name);
                    goto done;
                }
                sp.leaf = i;
                break;
            }
            i = up;
        }
    }
    for (int64_t i = 0; i <= last; i++) {
        tfc_graphdef_node_info info;
        tfc_graphdef_node(gd, TFC_GRAPHDEF_TOP, i, &info);
        if (!strcmp(info.op, "Const")) continue;
        tfc_dataset *in[16];
        int n_in = info.n_inputs - info.n_control_inputs;
        bool tensors = !strncmp(info.op, "Tensor", 6);
        if (n_in > 16) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "dataset graph: node '%s' has over 16 inputs", info.name);
            goto done;
        }
        for (int k = 0; k < n_in && !tensors; k++) {
            int64_t j = tfc_graphdef_find_node(gd, TFC_GRAPHDEF_TOP, info.inputs[k]);
            if (j < 0 || j >= i || !built[j]) {
                tfc_status_set(st, TFC_INVALID_ARGUMENT, "dataset graph: input '%s' of node '%s' is not an "
                               "earlier dataset node", info.inputs[k], info.name);
                goto done;
            }
            in[k] = built[j];
        }
        bld b = {gd, i, info.name, info.op, st};
        if (!(built[i] = build_node(&b, in, tensors ? 0 : n_in, &sp))) goto done;
    }
    out = tfc_dataset_ref(built[last]);
    tfc_status_clear(st);
done:
    for (int64_t i = 0; built && i < n; i++) tfc_dataset_unref(built[i]);
    tfc_free(built);
    tfc_graphdef_free(gd);
    return out;
}

tfc_dataset *tfc_dataset_deserialize(const void *data, size_t size, tfc_status *st) {
    return data_graph_build(data, size, 0, 0, st);
}

int64_t data_graph_split_rows(const tfc_dataset *ds, tfc_status *st) {
    while (ds->n_inputs == 1) ds = ds->inputs[0];
    const char *k = ds->kind->name;
    if (ds->n_inputs > 1 || (strcmp(k, "RangeDataset") && strcmp(k, "TensorSliceDataset")))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s cannot be split: distributed_epoch needs a pipeline that "
                              "is one chain down to a RangeDataset or TensorSliceDataset (file names for "
                              "TFRecordDataset)", k), -1;
    return tfc_dataset_cardinality(ds);
}
