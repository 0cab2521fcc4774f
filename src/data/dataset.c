/* Dataset nodes and iterators: structure strings, element specs, options, cardinality, the pipeline graph text
 * and the public iterator. The kinds of node live in the other files of this folder. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "data/data_internal.h"
#include "data/iterator_state.h"

/* ---- structure strings --------------------------------------------------------------------------------------
 * Parsed into a small tree only to validate, count leaves and print the canonical form (dict keys sorted). */
typedef struct snode {
    char kind;                /* '.', '(' or '{' */
    int n;                    /* children */
    struct snode **kids;
    char **keys;              /* dicts */
} snode;

static void snode_free(snode *t) {
    if (!t) return;
    for (int i = 0; i < t->n; i++) {
        snode_free(t->kids[i]);
        if (t->keys) tfc_free(t->keys[i]);
    }
    tfc_free(t->kids);
    tfc_free(t->keys);
    tfc_free(t);
}

static bool is_key_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '/' || c == '-';
}

typedef struct sparser {
    const char *s, *p;
    tfc_status *st;
    int depth;
} sparser;

static void skip_ws(sparser *ps) {
    while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n') ps->p++;
}

static bool perr(sparser *ps, const char *what) {
    return tfc_status_set(ps->st, TFC_INVALID_ARGUMENT, "structure \"%s\": %s at offset %d", ps->s, what,
                          (int)(ps->p - ps->s));
}

static bool snode_add(snode *t, snode *kid, char *key, sparser *ps) {
    snode **k = tfc_realloc(t->kids, (size_t)(t->n + 1) * sizeof *k);
    if (!k) return tfc_status_oom(ps->st, "structure", 0);
    t->kids = k;
    if (t->kind == '{') {
        char **keys = tfc_realloc(t->keys, (size_t)(t->n + 1) * sizeof *keys);
        if (!keys) return tfc_status_oom(ps->st, "structure", 0);
        t->keys = keys;
        t->keys[t->n] = key;
    }
    t->kids[t->n++] = kid;
    return true;
}

static snode *parse_node(sparser *ps) {
    skip_ws(ps);
    snode *t = tfc_calloc(1, sizeof *t);
    if (!t) {
        tfc_status_oom(ps->st, "structure", sizeof *t);
        return NULL;
    }
    char c = *ps->p;
    if (c == '.') {
        t->kind = '.';
        ps->p++;
        return t;
    }
    if (c != '(' && c != '{') {
        perr(ps, "expected '.', '(' or '{'");
        goto fail;
    }
    if (++ps->depth > 64) {
        perr(ps, "nested too deeply");
        goto fail;
    }
    t->kind = c;
    char close = c == '(' ? ')' : '}';
    ps->p++;
    for (;;) {
        skip_ws(ps);
        if (*ps->p == close) {
            ps->p++;
            break;
        }
        char *key = NULL;
        if (c == '{') {
            const char *k0 = ps->p;
            while (is_key_char(*ps->p)) ps->p++;
            size_t kl = (size_t)(ps->p - k0);
            if (kl == 0) {
                perr(ps, "expected a dict key");
                goto fail;
            }
            skip_ws(ps);
            if (*ps->p != ':') {
                perr(ps, "expected ':' after a dict key");
                goto fail;
            }
            ps->p++;
            key = tfc_malloc(kl + 1);
            if (!key) {
                tfc_status_oom(ps->st, "structure", kl + 1);
                goto fail;
            }
            memcpy(key, k0, kl);
            key[kl] = 0;
            for (int i = 0; i < t->n; i++)
                if (!strcmp(t->keys[i], key)) {
                    tfc_free(key);
                    perr(ps, "duplicate dict key");
                    goto fail;
                }
        }
        snode *kid = parse_node(ps);
        if (!kid) {
            tfc_free(key);
            goto fail;
        }
        if (!snode_add(t, kid, key, ps)) {
            snode_free(kid);
            tfc_free(key);
            goto fail;
        }
        skip_ws(ps);
        if (*ps->p == ',') {
            ps->p++;
            continue;
        }
        if (*ps->p != close) {
            perr(ps, c == '(' ? "expected ',' or ')'" : "expected ',' or '}'");
            goto fail;
        }
    }
    ps->depth--;
    if (c == '{') { /* sort entries by key (insertion sort: dicts are small) */
        for (int i = 1; i < t->n; i++)
            for (int j = i; j > 0 && strcmp(t->keys[j - 1], t->keys[j]) > 0; j--) {
                char *k = t->keys[j];
                t->keys[j] = t->keys[j - 1];
                t->keys[j - 1] = k;
                snode *s = t->kids[j];
                t->kids[j] = t->kids[j - 1];
                t->kids[j - 1] = s;
            }
    }
    return t;
fail:
    snode_free(t);
    return NULL;
}

static int snode_leaves(const snode *t) {
    if (t->kind == '.') return 1;
    int n = 0;
    for (int i = 0; i < t->n; i++) n += snode_leaves(t->kids[i]);
    return n;
}

/* Canonical text; with specs, TensorFlow's element_spec repr instead. leaf counts the components printed. */
static void snode_print(const snode *t, data_strbuf *b, const tfc_tensor_spec *specs, int *leaf) {
    if (t->kind == '.') {
        if (!specs) {
            data_strbuf_printf(b, ".");
        } else {
            const tfc_tensor_spec *s = &specs[(*leaf)];
            data_strbuf_printf(b, "TensorSpec(shape=");
            if (s->shape.rank < 0) {
                data_strbuf_printf(b, "<unknown>");
            } else {
                data_strbuf_printf(b, "(");
                for (int i = 0; i < s->shape.rank; i++) {
                    if (s->shape.dims[i] < 0) data_strbuf_printf(b, "%sNone", i ? ", " : "");
                    else data_strbuf_printf(b, "%s%lld", i ? ", " : "", (long long)s->shape.dims[i]);
                }
                data_strbuf_printf(b, "%s)", s->shape.rank == 1 ? "," : "");
            }
            data_strbuf_printf(b, ", dtype=%s%s, name=None)", s->dtype ? "tf." : "",
                               s->dtype ? tfc_dtype_name(s->dtype) : "unknown");
        }
        (*leaf)++;
        return;
    }
    const char *sep = specs ? ", " : ",";
    data_strbuf_printf(b, "%c", t->kind);
    for (int i = 0; i < t->n; i++) {
        if (i) data_strbuf_printf(b, "%s", sep);
        if (t->kind == '{') data_strbuf_printf(b, specs ? "'%s': " : "%s:", t->keys[i]);
        snode_print(t->kids[i], b, specs, leaf);
    }
    if (t->kind == '(' && t->n == 1) data_strbuf_printf(b, ",");
    data_strbuf_printf(b, "%c", t->kind == '(' ? ')' : '}');
}

static snode *parse_structure(const char *s, tfc_status *st) {
    sparser ps = {s, s, st, 0};
    snode *t = parse_node(&ps);
    if (!t) return NULL;
    skip_ws(&ps);
    if (*ps.p) {
        perr(&ps, "unexpected text after the structure");
        snode_free(t);
        return NULL;
    }
    return t;
}

bool data_struct_parse(const char *s, char **canonical, int *n_leaves, tfc_status *st) {
    snode *t = parse_structure(s, st);
    if (!t) return false;
    *n_leaves = snode_leaves(t);
    bool ok = true;
    if (canonical) {
        size_t cap = 2 * strlen(s) + 8; /* a 1-tuple gains a ',' */
        *canonical = tfc_malloc(cap);
        if (!*canonical) {
            ok = tfc_status_oom(st, "structure", cap);
        } else {
            data_strbuf b = {*canonical, cap, 0};
            int leaf = 0;
            (*canonical)[0] = 0;
            snode_print(t, &b, NULL, &leaf);
        }
    }
    snode_free(t);
    return ok;
}

void data_strbuf_printf(data_strbuf *b, const char *fmt, ...) {
    if (b->len + 1 >= b->size) return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(b->buf + b->len, b->size - b->len, fmt, ap);
    va_end(ap);
    if (w < 0) return;
    b->len += (size_t)w;
    if (b->len >= b->size) b->len = b->size - 1;
}

/* ---- specs ----------------------------------------------------------------------------------------------- */
static char *default_structure(int n) {
    size_t cap = (size_t)n * 2 + 4;
    char *s = tfc_malloc(cap);
    if (!s) return NULL;
    if (n == 1) {
        strcpy(s, ".");
        return s;
    }
    size_t k = 0;
    s[k++] = '(';
    for (int i = 0; i < n; i++) {
        if (i) s[k++] = ',';
        s[k++] = '.';
    }
    s[k++] = ')';
    s[k] = 0;
    return s;
}

bool data_spec_init(data_spec *sp, const char *structure, int n, const tfc_tensor_spec *comps, tfc_status *st) {
    memset(sp, 0, sizeof *sp);
    if (structure) {
        int leaves = 0;
        if (!data_struct_parse(structure, &sp->structure, &leaves, st)) return false;
        if (n >= 0 && leaves != n) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "structure \"%s\" has %d components, %d given", structure,
                           leaves, n);
            data_spec_free(sp);
            return false;
        }
        n = leaves;
    } else {
        if (n < 0) n = 1;
        sp->structure = default_structure(n);
        if (!sp->structure) return tfc_status_oom(st, "structure", (size_t)n * 2 + 4);
    }
    if (n > TFC_DATA_MAX_COMPONENTS) {
        data_spec_free(sp);
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "an element has %d components, more than %d", n,
                              TFC_DATA_MAX_COMPONENTS);
    }
    sp->n = n;
    sp->comps = tfc_calloc((size_t)(n ? n : 1), sizeof *sp->comps);
    if (!sp->comps) {
        data_spec_free(sp);
        return tfc_status_oom(st, "element spec", (size_t)n * sizeof *sp->comps);
    }
    for (int i = 0; i < n; i++) {
        if (comps) {
            sp->comps[i] = comps[i];
            if (comps[i].shape.rank > TFC_MAX_RANK || comps[i].shape.rank < -1) {
                data_spec_free(sp);
                return tfc_status_set(st, TFC_INVALID_ARGUMENT, "spec of component %d: bad rank %d", i,
                                      comps[i].shape.rank);
            }
            if (comps[i].dtype != TFC_INVALID_DTYPE && !tfc_dtype_is_valid(comps[i].dtype)) {
                data_spec_free(sp);
                return tfc_status_set(st, TFC_INVALID_ARGUMENT, "spec of component %d: bad dtype %d", i,
                                      (int)comps[i].dtype);
            }
        } else {
            sp->comps[i].dtype = TFC_INVALID_DTYPE;
            sp->comps[i].shape.rank = -1;
        }
    }
    return true;
}

bool data_spec_copy(data_spec *dst, const data_spec *src, tfc_status *st) {
    return data_spec_init(dst, src->structure, src->n, src->comps, st);
}

void data_spec_free(data_spec *sp) {
    tfc_free(sp->structure);
    tfc_free(sp->comps);
    memset(sp, 0, sizeof *sp);
}

tfc_tensor_spec data_spec_of(const tfc_tensor *t) {
    tfc_tensor_spec s = {tfc_tensor_dtype(t), *tfc_tensor_shape(t)};
    return s;
}

char *data_spec_str(const tfc_tensor_spec *s, char *buf, size_t size) {
    char sh[TFC_SHAPE_STR];
    snprintf(buf, size, "%s %s", s->dtype ? tfc_dtype_name(s->dtype) : "<unknown dtype>",
             tfc_shape_str(&s->shape, sh, sizeof sh));
    return buf;
}

bool data_spec_check(const data_spec *sp, tfc_tensor *const *t, const char *what, tfc_status *st) {
    for (int i = 0; i < sp->n; i++) {
        const tfc_tensor_spec *s = &sp->comps[i];
        const tfc_shape *sh = tfc_tensor_shape(t[i]);
        bool ok = s->dtype == TFC_INVALID_DTYPE || s->dtype == tfc_tensor_dtype(t[i]);
        if (ok && s->shape.rank >= 0) {
            ok = s->shape.rank == sh->rank;
            for (int d = 0; ok && d < sh->rank; d++) ok = s->shape.dims[d] < 0 || s->shape.dims[d] == sh->dims[d];
        }
        if (!ok) {
            char a[TFC_SHAPE_STR + 32], b[TFC_SHAPE_STR + 32];
            tfc_tensor_spec got = data_spec_of(t[i]);
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: component %d: expected %s, got %s", what, i,
                                  data_spec_str(s, a, sizeof a), data_spec_str(&got, b, sizeof b));
        }
    }
    return true;
}

/* ---- nodes ----------------------------------------------------------------------------------------------- */
static void merge_options(tfc_data_options *dst, const tfc_data_options *src) {
    if (src->deterministic != TFC_DEFAULT) dst->deterministic = src->deterministic;
    if (src->private_threadpool_size) dst->private_threadpool_size = src->private_threadpool_size;
    if (src->max_intra_op_parallelism) dst->max_intra_op_parallelism = src->max_intra_op_parallelism;
}

tfc_dataset *data_ds_new(const data_kind *k, size_t psize, tfc_dataset *const *inputs, int n_in, tfc_status *st) {
    size_t head = (sizeof(tfc_dataset) + 15) & ~(size_t)15;
    tfc_dataset *ds = tfc_calloc(1, head + psize);
    tfc_dataset **ins = n_in ? tfc_calloc((size_t)n_in, sizeof *ins) : NULL;
    if (!ds || (n_in && !ins)) {
        tfc_free(ds);
        tfc_free(ins);
        for (int i = 0; i < n_in; i++) tfc_dataset_unref(inputs[i]);
        tfc_status_oom(st, k->name, head + psize);
        return NULL;
    }
    atomic_init(&ds->refcount, 1);
    ds->kind = k;
    ds->n_inputs = n_in;
    ds->inputs = ins;
    for (int i = 0; i < n_in; i++) {
        ins[i] = inputs[i];
        merge_options(&ds->opts, &inputs[i]->opts);
    }
    ds->p = (char *)ds + head;
    return ds;
}

bool data_check_input(tfc_dataset *ds, tfc_status *st) {
    if (ds) return true;
    if (st && st->code == TFC_OK) tfc_status_set(st, TFC_INVALID_ARGUMENT, "NULL input dataset");
    return false;
}

tfc_dataset *data_ds_fail(tfc_dataset *ds) {
    tfc_dataset_unref(ds);
    return NULL;
}

tfc_dataset *tfc_dataset_ref(tfc_dataset *ds) {
    if (ds) atomic_fetch_add(&ds->refcount, 1);
    return ds;
}

void tfc_dataset_unref(tfc_dataset *ds) {
    /* Long chains (a thousand maps) would recurse deeply: release inputs iteratively along the first input. */
    while (ds && atomic_fetch_sub(&ds->refcount, 1) == 1) {
        if (ds->kind->free) ds->kind->free(ds);
        for (int i = 1; i < ds->n_inputs; i++) tfc_dataset_unref(ds->inputs[i]);
        tfc_dataset *next = ds->n_inputs ? ds->inputs[0] : NULL;
        data_spec_free(&ds->spec);
        tfc_free(ds->inputs);
        tfc_free(ds);
        ds = next;
    }
}

int64_t tfc_dataset_cardinality(const tfc_dataset *ds) {
    if (!ds || !ds->kind->cardinality) return TFC_UNKNOWN_CARDINALITY;
    return ds->kind->cardinality(ds);
}

int64_t data_card_input(const tfc_dataset *ds) { return tfc_dataset_cardinality(ds->inputs[0]); }

const char *tfc_dataset_structure(const tfc_dataset *ds) { return ds ? ds->spec.structure : NULL; }
int tfc_dataset_num_components(const tfc_dataset *ds) { return ds ? ds->spec.n : 0; }

tfc_tensor_spec tfc_dataset_component_spec(const tfc_dataset *ds, int i) {
    if (!ds || i < 0 || i >= ds->spec.n) {
        tfc_tensor_spec none = {TFC_INVALID_DTYPE, {-1, {0}}};
        return none;
    }
    return ds->spec.comps[i];
}

char *tfc_dataset_element_spec_str(const tfc_dataset *ds, char *buf, size_t size) {
    if (!size) return buf;
    buf[0] = 0;
    if (!ds) return buf;
    tfc_status st = TFC_STATUS_INIT;
    snode *t = parse_structure(ds->spec.structure, &st);
    if (!t) return buf;
    data_strbuf b = {buf, size, 0};
    int leaf = 0;
    snode_print(t, &b, ds->spec.comps, &leaf);
    snode_free(t);
    return buf;
}

static void graph_str(const tfc_dataset *ds, data_strbuf *b, int depth) {
    data_strbuf_printf(b, "%*s%s(", depth * 2, "", ds->kind->name);
    if (ds->kind->describe) ds->kind->describe(ds, b);
    data_strbuf_printf(b, ") -> %s\n", ds->spec.structure);
    for (int i = 0; i < ds->n_inputs; i++) graph_str(ds->inputs[i], b, depth + 1);
}

char *tfc_dataset_graph_str(const tfc_dataset *ds, char *buf, size_t size) {
    if (!size) return buf;
    buf[0] = 0;
    if (!ds) return buf;
    data_strbuf b = {buf, size, 0};
    graph_str(ds, &b, 0);
    return buf;
}

/* ---- options --------------------------------------------------------------------------------------------- */
static const data_kind options_kind;

static data_iter *options_iter(tfc_dataset *ds, const data_ictx *ictx, tfc_status *st) {
    return data_iter_make(ds->inputs[0], ictx, st);
}

static void options_describe(const tfc_dataset *ds, data_strbuf *b) {
    const tfc_data_options *o = ds->p;
    data_strbuf_printf(b, "deterministic=%d, private_threadpool_size=%d, max_intra_op_parallelism=%d",
                       (int)o->deterministic, o->private_threadpool_size, o->max_intra_op_parallelism);
}

static const data_kind options_kind = {"OptionsDataset", options_iter, data_card_input, NULL, options_describe};

tfc_dataset *tfc_dataset_with_options(tfc_dataset *in, const tfc_data_options *options, tfc_status *st) {
    if (!data_check_input(in, st)) return NULL;
    tfc_data_options o = options ? *options : (tfc_data_options){0};
    if (o.private_threadpool_size < 0 || o.max_intra_op_parallelism < 0) {
        tfc_dataset_unref(in);
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "with_options: thread counts must be >= 0 (got %d and %d)",
                       o.private_threadpool_size, o.max_intra_op_parallelism);
        return NULL;
    }
    tfc_dataset *ds = data_ds_new(&options_kind, sizeof o, &in, 1, st);
    if (!ds) return NULL;
    *(tfc_data_options *)ds->p = o;
    merge_options(&ds->opts, &o);
    if (!data_spec_copy(&ds->spec, &in->spec, st)) return data_ds_fail(ds);
    return ds;
}

tfc_data_options tfc_dataset_options(const tfc_dataset *ds) {
    tfc_data_options o = {0};
    return ds ? ds->opts : o;
}

/* ---- iterators ------------------------------------------------------------------------------------------- */
void *data_iter_alloc(size_t size, const data_iter_vt *vt, tfc_dataset *ds, const data_ictx *ictx, tfc_status *st) {
    data_iter *it = tfc_calloc(1, size);
    if (!it) {
        tfc_status_oom(st, "iterator", size);
        return NULL;
    }
    it->vt = vt;
    it->ds = ds;
    it->ictx = ictx;
    return it;
}

data_iter *data_iter_make(tfc_dataset *ds, const data_ictx *ictx, tfc_status *st) {
    if (ictx->replay) data_replay_made(ictx->replay, ds);
    return ds->kind->make_iter(ds, ictx, st);
}

void data_iter_free(data_iter *it) {
    if (!it) return;
    if (it->vt->free) it->vt->free(it);
    tfc_free(it);
}

struct tfc_iterator {
    data_ictx ictx;
    tfc_dataset *ds;
    data_iter *root;
    bool ended;
};

tfc_iterator *tfc_iterator_new(tfc_dataset *ds, tfc_status *st) {
    if (!ds) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "iterator: NULL dataset");
        return NULL;
    }
    tfc_iterator *it = tfc_calloc(1, sizeof *it);
    if (!it) {
        tfc_status_oom(st, "iterator", sizeof *it);
        return NULL;
    }
    it->ictx.opts = ds->opts;
    it->ictx.deterministic = TFC_FLAG(ds->opts.deterministic, true);
    int cores = tfc_num_cores();
    int cap = ds->opts.private_threadpool_size;
    it->ictx.max_threads = cap > 0 ? cap : cores;
    it->ds = tfc_dataset_ref(ds);
    it->ictx.replay = data_replay_new(ds, st);
    it->root = it->ictx.replay ? data_iter_make(ds, &it->ictx, st) : NULL;
    if (!it->root) {
        data_replay_free(it->ictx.replay);
        tfc_dataset_unref(it->ds);
        tfc_free(it);
        return NULL;
    }
    tfc_status_clear(st);
    return it;
}

bool tfc_iterator_next(tfc_iterator *it, tfc_tensor **out, int max_out, tfc_status *st) {
    if (!it) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "iterator_next: NULL iterator");
    int n = it->ds->spec.n;
    if (max_out < n || (n && !out))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "iterator_next: elements have %d components, room for %d", n,
                              max_out);
    for (int i = 0; i < n; i++) out[i] = NULL;
    if (it->ended || !it->root) return tfc_status_set(st, TFC_OUT_OF_RANGE, "End of sequence");
    bool end = false;
    tfc_status_clear(st);
    if (!data_iter_next(it->root, out, &end, st)) {
        data_unref_n(out, n);
        if (st->code == TFC_OK) tfc_status_set(st, TFC_INTERNAL, "iterator failed without a status");
        data_replay_note(it->ictx.replay, NULL, 0, st->code, false);
        return false;
    }
    data_replay_note(it->ictx.replay, out, n, TFC_OK, end);
    if (end) {
        it->ended = true;
        return tfc_status_set(st, TFC_OUT_OF_RANGE, "End of sequence");
    }
    return true;
}

void tfc_iterator_free(tfc_iterator *it) {
    if (!it) return;
    data_iter_free(it->root);
    data_replay_free(it->ictx.replay);
    tfc_dataset_unref(it->ds);
    tfc_free(it);
}

bool data_iterator_reset(tfc_iterator *it, tfc_status *st) {
    data_iter_free(it->root);
    it->ended = !(it->root = data_iter_make(it->ds, &it->ictx, st));
    return !it->ended;
}

void data_iterator_end(tfc_iterator *it) {
    data_iter_free(it->root);
    it->root = NULL;
    it->ended = true;
}

data_replay *data_iterator_replay(tfc_iterator *it) { return it->ictx.replay; }

tfc_dataset *tfc_iterator_dataset(const tfc_iterator *it) { return it ? it->ds : NULL; }
