/* In-memory sources (from_tensors, from_tensor_slices, range, from_generator) and the combining sources zip
 * and concatenate. */
#include <string.h>

#include "data/data_internal.h"

/* ---- from_tensors / from_tensor_slices ----------------------------------------------------------------------- */
typedef struct tensors_params {
    int n;
    tfc_tensor **t;           /* owned references */
    int64_t rows;             /* slices: dim 0; from_tensors: 1 */
    bool slices;
} tensors_params;

typedef struct tensors_iter {
    data_iter base;
    int64_t i;
} tensors_iter;

static bool tensors_next(data_iter *it_, tfc_tensor **out, bool *end, tfc_status *st) {
    tensors_iter *it = (tensors_iter *)it_;
    tensors_params *p = it_->ds->p;
    if (it->i >= p->rows) {
        *end = true;
        return true;
    }
    for (int c = 0; c < p->n; c++) {
        out[c] = p->slices ? data_slice_row(p->t[c], it->i, st) : tfc_tensor_ref(p->t[c]);
        if (!out[c]) {
            data_unref_n(out, c);
            return false;
        }
    }
    it->i++;
    return true;
}

static const data_iter_vt tensors_vt = {tensors_next, NULL};

static data_iter *tensors_make_iter(tfc_dataset *ds, const data_ictx *ictx, tfc_status *st) {
    return data_iter_alloc(sizeof(tensors_iter), &tensors_vt, ds, ictx, st);
}

static int64_t tensors_card(const tfc_dataset *ds) { return ((tensors_params *)ds->p)->rows; }

static void tensors_free(tfc_dataset *ds) {
    tensors_params *p = ds->p;
    if (p->t) data_unref_n(p->t, p->n);
    tfc_free(p->t);
}

static void tensors_describe(const tfc_dataset *ds, data_strbuf *b) {
    tensors_params *p = ds->p;
    for (int c = 0; c < p->n; c++) {
        char sh[TFC_SHAPE_STR];
        data_strbuf_printf(b, "%s%s%s@%p", c ? ", " : "", tfc_dtype_name(p->t[c]->dtype),
                           tfc_shape_str(&p->t[c]->shape, sh, sizeof sh), (void *)p->t[c]);
    }
}

static const data_kind tensor_kind = {"TensorDataset", tensors_make_iter, tensors_card, tensors_free,
                                      tensors_describe};
static const data_kind slice_kind = {"TensorSliceDataset", tensors_make_iter, tensors_card, tensors_free,
                                     tensors_describe};

static tfc_dataset *tensors_new(tfc_tensor *const *comps, int n, const char *structure, bool slices,
                                tfc_status *st) {
    const char *what = slices ? "from_tensor_slices" : "from_tensors";
    if (n <= 0 || !comps) { /* tf.data: "Invalid `element`. `element` should not be empty." */
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: the element must have at least one component (got %d)", what, n);
        return NULL;
    }
    int64_t rows = 1;
    for (int c = 0; c < n; c++) {
        if (!comps[c] || tfc_tensor_is_symbolic(comps[c]) || comps[c]->dtype == TFC_RESOURCE) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: component %d is not a tensor with a value", what, c);
            return NULL;
        }
        if (!slices) continue;
        if (comps[c]->shape.rank == 0) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT,
                           "from_tensor_slices: Unbatching a tensor is only supported for rank >= 1 (component %d is "
                           "a scalar)",
                           c);
            return NULL;
        }
        if (c > 0 && comps[c]->shape.dims[0] != rows) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT,
                           "from_tensor_slices: Dimensions %lld and %lld are not compatible (dim 0 of components 0 "
                           "and %d)",
                           (long long)rows, (long long)comps[c]->shape.dims[0], c);
            return NULL;
        }
        rows = comps[c]->shape.dims[0];
    }
    if (slices && n == 0) rows = 0;
    tfc_dataset *ds = data_ds_new(slices ? &slice_kind : &tensor_kind, sizeof(tensors_params), NULL, 0, st);
    if (!ds) return NULL;
    tensors_params *p = ds->p;
    if (!data_spec_init(&ds->spec, structure, n, NULL, st)) return data_ds_fail(ds);
    p->t = tfc_calloc((size_t)(n ? n : 1), sizeof *p->t);
    if (!p->t) {
        tfc_status_oom(st, what, (size_t)n * sizeof *p->t);
        return data_ds_fail(ds);
    }
    p->n = n;
    p->rows = rows;
    p->slices = slices;
    for (int c = 0; c < n; c++) {
        p->t[c] = tfc_tensor_ref(comps[c]);
        tfc_tensor_spec s = data_spec_of(comps[c]);
        if (slices) {
            for (int d = 1; d < s.shape.rank; d++) s.shape.dims[d - 1] = s.shape.dims[d];
            s.shape.rank--;
        }
        ds->spec.comps[c] = s;
    }
    tfc_status_clear(st);
    return ds;
}

tfc_dataset *tfc_dataset_from_tensors(tfc_tensor *const *components, int n, const char *structure, tfc_status *st) {
    return tensors_new(components, n, structure, false, st);
}

tfc_dataset *tfc_dataset_from_tensor_slices(tfc_tensor *const *components, int n, const char *structure,
                                            tfc_status *st) {
    return tensors_new(components, n, structure, true, st);
}

tfc_dataset *tfc_dataset_from_strings(const char *const *strs, int n, tfc_status *st) {
    if (n < 0 || (n > 0 && !strs)) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "from_strings: bad string list (n = %d)", n);
        return NULL;
    }
    int64_t dim = n;
    tfc_tensor *t = tfc_tensor_from_strings(strs, NULL, &dim, 1, st);
    if (!t) return NULL;
    tfc_dataset *ds = tensors_new(&t, 1, NULL, true, st);
    tfc_tensor_unref(t);
    return ds;
}

/* ---- range ----------------------------------------------------------------------------------------------------- */
typedef struct range_params {
    int64_t start, stop, step;
    tfc_dtype dtype;
} range_params;

typedef struct range_iter {
    data_iter base;
    int64_t next;
} range_iter;

static bool range_next(data_iter *it_, tfc_tensor **out, bool *end, tfc_status *st) {
    range_iter *it = (range_iter *)it_;
    range_params *p = it_->ds->p;
    if (p->step > 0 ? it->next >= p->stop : it->next <= p->stop) {
        *end = true;
        return true;
    }
    out[0] = p->dtype == TFC_INT64 ? tfc_scalar_i64(it->next, st) : tfc_scalar(p->dtype, (double)it->next, st);
    if (!out[0]) return false;
    /* Saturate instead of overflowing past stop near INT64_MAX. */
    if (__builtin_add_overflow(it->next, p->step, &it->next)) it->next = p->stop;
    return true;
}

static const data_iter_vt range_vt = {range_next, NULL};

static data_iter *range_make_iter(tfc_dataset *ds, const data_ictx *ictx, tfc_status *st) {
    range_iter *it = data_iter_alloc(sizeof *it, &range_vt, ds, ictx, st);
    if (!it) return NULL;
    it->next = ((range_params *)ds->p)->start;
    return &it->base;
}

static int64_t range_card(const tfc_dataset *ds) {
    range_params *p = ds->p;
    /* ceil((stop - start) / step) without overflow, clipped at 0 */
    if (p->step > 0) {
        if (p->stop <= p->start) return 0;
        uint64_t span = (uint64_t)p->stop - (uint64_t)p->start;
        return (int64_t)((span - 1) / (uint64_t)p->step + 1);
    }
    if (p->stop >= p->start) return 0;
    uint64_t span = (uint64_t)p->start - (uint64_t)p->stop, step = (uint64_t)0 - (uint64_t)p->step;
    return (int64_t)((span - 1) / step + 1);
}

static void range_describe(const tfc_dataset *ds, data_strbuf *b) {
    range_params *p = ds->p;
    data_strbuf_printf(b, "start=%lld, stop=%lld, step=%lld, output_type=%s", (long long)p->start,
                       (long long)p->stop, (long long)p->step, tfc_dtype_name(p->dtype));
}

static const data_kind range_kind = {"RangeDataset", range_make_iter, range_card, NULL, range_describe};

tfc_dataset *tfc_dataset_range(int64_t start, int64_t stop, int64_t step, tfc_dtype dtype, tfc_status *st) {
    if (dtype == TFC_INVALID_DTYPE) dtype = TFC_INT64;
    if (step == 0) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "range: step must be a non-zero integer.");
        return NULL;
    }
    if (!tfc_dtype_is_integer(dtype) && !tfc_dtype_is_floating(dtype)) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "range: output_type must be an integer or floating dtype, not %s",
                       tfc_dtype_name(dtype));
        return NULL;
    }
    tfc_dataset *ds = data_ds_new(&range_kind, sizeof(range_params), NULL, 0, st);
    if (!ds) return NULL;
    *(range_params *)ds->p = (range_params){start, stop, step, dtype};
    tfc_tensor_spec s = {dtype, {0, {0}}};
    if (!data_spec_init(&ds->spec, ".", 1, &s, st)) return data_ds_fail(ds);
    tfc_status_clear(st);
    return ds;
}

/* ---- from_generator ------------------------------------------------------------------------------------------ */
typedef struct gen_iter {
    data_iter base;
    void *state;
    bool started, ended;
    tfc_ctx *ctx;
} gen_iter;

static bool gen_next(data_iter *it_, tfc_tensor **out, bool *end, tfc_status *st) {
    gen_iter *it = (gen_iter *)it_;
    tfc_generator *g = it_->ds->p;
    const data_spec *sp = &it_->ds->spec;
    if (it->ended) {
        *end = true;
        return true;
    }
    if (!it->ctx && !(it->ctx = data_ctx_new(it_->ictx, true, st))) return false;
    if (!it->started) {
        if (g->init) {
            tfc_status_clear(st);
            it->state = g->init(g->user, st);
            if (st->code != TFC_OK) {
                data_fix_callback_status(st, "from_generator");
                return false;
            }
        }
        it->started = true;
    }
    for (int i = 0; i < sp->n; i++) out[i] = NULL;
    if (!tfc_scope_begin(it->ctx, st)) return false;
    tfc_status_clear(st);
    bool eos = false;
    bool ok = g->next(it->ctx, g->user, it->state, out, sp->n, &eos, st);
    for (int i = 0; i < sp->n; i++) tfc_keep(it->ctx, out[i]);
    tfc_scope_end(it->ctx);
    if (!ok) {
        data_unref_n(out, sp->n);
        data_fix_callback_status(st, "from_generator");
        return false;
    }
    tfc_status_clear(st);
    if (eos) {
        data_unref_n(out, sp->n);
        it->ended = *end = true;
        return true;
    }
    for (int i = 0; i < sp->n; i++)
        if (!out[i]) {
            data_unref_n(out, sp->n);
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "from_generator: the generator set no tensor for "
                                                            "component %d of %d", i, sp->n);
        }
    if (!data_spec_check(sp, out, "from_generator", st)) {
        data_unref_n(out, sp->n);
        return false;
    }
    return true;
}

static void gen_iter_free(data_iter *it_) {
    gen_iter *it = (gen_iter *)it_;
    tfc_generator *g = it_->ds->p;
    if (it->started && g->finalize) g->finalize(g->user, it->state);
    data_ctx_free(it->ctx);
}

static const data_iter_vt gen_vt = {gen_next, gen_iter_free};

static data_iter *gen_make_iter(tfc_dataset *ds, const data_ictx *ictx, tfc_status *st) {
    return data_iter_alloc(sizeof(gen_iter), &gen_vt, ds, ictx, st);
}

static void gen_free(tfc_dataset *ds) {
    tfc_generator *g = ds->p;
    if (g->user_free) g->user_free(g->user);
}

static void gen_describe(const tfc_dataset *ds, data_strbuf *b) {
    tfc_generator *g = ds->p;
    data_strbuf_printf(b, "next=%p, user=%p", (void *)(uintptr_t)g->next, g->user);
}

static const data_kind gen_kind = {"GeneratorDataset", gen_make_iter, NULL, gen_free, gen_describe};

tfc_dataset *tfc_dataset_from_generator(const tfc_generator *gen, const char *structure,
                                        const tfc_tensor_spec *output_signature, tfc_status *st) {
    if (!gen || !gen->next || !output_signature) {
        if (gen && gen->user_free) gen->user_free(gen->user);
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "from_generator: a generator with next and an output_signature "
                                                 "are required");
        return NULL;
    }
    tfc_dataset *ds = data_ds_new(&gen_kind, sizeof(tfc_generator), NULL, 0, st);
    if (!ds) {
        if (gen->user_free) gen->user_free(gen->user);
        return NULL;
    }
    *(tfc_generator *)ds->p = *gen;
    if (!data_spec_init(&ds->spec, structure ? structure : ".", -1, output_signature, st)) return data_ds_fail(ds);
    tfc_status_clear(st);
    return ds;
}

/* ---- zip ------------------------------------------------------------------------------------------------------- */
typedef struct zip_iter {
    data_iter base;
    data_iter **in;
} zip_iter;

static bool zip_next(data_iter *it_, tfc_tensor **out, bool *end, tfc_status *st) {
    zip_iter *it = (zip_iter *)it_;
    tfc_dataset *ds = it_->ds;
    int off = 0;
    bool ok = true;
    /* Every input advances even after an error, so the inputs stay aligned. */
    tfc_status first = TFC_STATUS_INIT;
    for (int i = 0; i < ds->n_inputs; i++) {
        int n = ds->inputs[i]->spec.n;
        bool e = false;
        tfc_status s = TFC_STATUS_INIT;
        if (!data_iter_next(it->in[i], out + off, &e, &s)) {
            if (ok) first = s;
            ok = false;
        } else if (e) {
            *end = true;
        }
        off += n;
    }
    if (!ok || *end) {
        for (int k = 0; k < off; k++) {
            tfc_tensor_unref(out[k]);
            out[k] = NULL;
        }
        if (!ok) {
            *end = false;
            *st = first;
            return false;
        }
    }
    return true;
}

static void zip_iter_free(data_iter *it_) {
    zip_iter *it = (zip_iter *)it_;
    if (!it->in) return;
    for (int i = 0; i < it_->ds->n_inputs; i++) data_iter_free(it->in[i]);
    tfc_free(it->in);
}

static const data_iter_vt zip_vt = {zip_next, zip_iter_free};

static data_iter *zip_make_iter(tfc_dataset *ds, const data_ictx *ictx, tfc_status *st) {
    zip_iter *it = data_iter_alloc(sizeof *it, &zip_vt, ds, ictx, st);
    if (!it) return NULL;
    it->in = tfc_calloc((size_t)ds->n_inputs, sizeof *it->in);
    if (!it->in) {
        tfc_status_oom(st, "zip", 0);
        data_iter_free(&it->base);
        return NULL;
    }
    for (int i = 0; i < ds->n_inputs; i++)
        if (!(it->in[i] = data_iter_make(ds->inputs[i], ictx, st))) {
            data_iter_free(&it->base);
            return NULL;
        }
    return &it->base;
}

static int64_t zip_card(const tfc_dataset *ds) {
    int64_t r = TFC_INFINITE_CARDINALITY;
    for (int i = 0; i < ds->n_inputs; i++) {
        int64_t n = tfc_dataset_cardinality(ds->inputs[i]);
        if (n == TFC_UNKNOWN_CARDINALITY) return n;
        if (n != TFC_INFINITE_CARDINALITY && (r == TFC_INFINITE_CARDINALITY || n < r)) r = n;
    }
    return r;
}

static const data_kind zip_kind = {"ZipDataset", zip_make_iter, zip_card, NULL, NULL};

tfc_dataset *tfc_dataset_zip(tfc_dataset *const *datasets, int n, tfc_status *st) {
    bool ok = n > 0 && datasets;
    for (int i = 0; ok && i < n; i++) ok = datasets[i] != NULL;
    if (!ok) {
        for (int i = 0; datasets && i < n; i++) tfc_dataset_unref(datasets[i]);
        if (st->code == TFC_OK) tfc_status_set(st, TFC_INVALID_ARGUMENT, "zip: needs one or more datasets");
        return NULL;
    }
    tfc_dataset *ds = data_ds_new(&zip_kind, 0, datasets, n, st);
    if (!ds) return NULL;
    /* structure "(s1,s2,...)" and the concatenated specs */
    size_t len = 4;
    int total = 0;
    for (int i = 0; i < n; i++) {
        len += strlen(datasets[i]->spec.structure) + 1;
        total += datasets[i]->spec.n;
    }
    char *s = tfc_malloc(len);
    if (!s) {
        tfc_status_oom(st, "zip", len);
        return data_ds_fail(ds);
    }
    size_t k = 0;
    s[k++] = '(';
    for (int i = 0; i < n; i++) {
        if (i) s[k++] = ',';
        size_t l = strlen(datasets[i]->spec.structure);
        memcpy(s + k, datasets[i]->spec.structure, l);
        k += l;
    }
    if (n == 1) s[k++] = ',';
    s[k++] = ')';
    s[k] = 0;
    ok = data_spec_init(&ds->spec, s, total, NULL, st);
    tfc_free(s);
    if (!ok) return data_ds_fail(ds);
    for (int i = 0, off = 0; i < n; off += datasets[i]->spec.n, i++)
        memcpy(ds->spec.comps + off, datasets[i]->spec.comps, (size_t)datasets[i]->spec.n * sizeof *ds->spec.comps);
    tfc_status_clear(st);
    return ds;
}

/* ---- concatenate ----------------------------------------------------------------------------------------------- */
typedef struct concat_iter {
    data_iter base;
    data_iter *cur;
    int which;
} concat_iter;

static bool concat_next(data_iter *it_, tfc_tensor **out, bool *end, tfc_status *st) {
    concat_iter *it = (concat_iter *)it_;
    while (it->which < 2) {
        if (!it->cur && !(it->cur = data_iter_make(it_->ds->inputs[it->which], it_->ictx, st))) return false;
        bool e = false;
        if (!data_iter_next(it->cur, out, &e, st)) return false;
        if (!e) return true;
        data_iter_free(it->cur);
        it->cur = NULL;
        it->which++;
    }
    *end = true;
    return true;
}

static void concat_iter_free(data_iter *it_) { data_iter_free(((concat_iter *)it_)->cur); }

static const data_iter_vt concat_vt = {concat_next, concat_iter_free};

static data_iter *concat_make_iter(tfc_dataset *ds, const data_ictx *ictx, tfc_status *st) {
    return data_iter_alloc(sizeof(concat_iter), &concat_vt, ds, ictx, st);
}

static int64_t concat_card(const tfc_dataset *ds) {
    int64_t a = tfc_dataset_cardinality(ds->inputs[0]), b = tfc_dataset_cardinality(ds->inputs[1]);
    if (a == TFC_INFINITE_CARDINALITY || b == TFC_INFINITE_CARDINALITY) return TFC_INFINITE_CARDINALITY;
    if (a == TFC_UNKNOWN_CARDINALITY || b == TFC_UNKNOWN_CARDINALITY) return TFC_UNKNOWN_CARDINALITY;
    return a + b;
}

static const data_kind concat_kind = {"ConcatenateDataset", concat_make_iter, concat_card, NULL, NULL};

tfc_dataset *tfc_dataset_concatenate(tfc_dataset *a, tfc_dataset *b, tfc_status *st) {
    if (!a || !b) {
        tfc_dataset_unref(a);
        tfc_dataset_unref(b);
        data_check_input(NULL, st);
        return NULL;
    }
    bool ok = strcmp(a->spec.structure, b->spec.structure) == 0;
    for (int i = 0; ok && i < a->spec.n; i++) ok = a->spec.comps[i].dtype == b->spec.comps[i].dtype;
    if (!ok) {
        char sa[512], sb[512];
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Incompatible dataset elements: %s vs. %s",
                       tfc_dataset_element_spec_str(a, sa, sizeof sa), tfc_dataset_element_spec_str(b, sb, sizeof sb));
        tfc_dataset_unref(a);
        tfc_dataset_unref(b);
        return NULL;
    }
    tfc_dataset *ds = data_ds_new(&concat_kind, 0, (tfc_dataset *[]){a, b}, 2, st);
    if (!ds) return NULL;
    if (!data_spec_copy(&ds->spec, &a->spec, st)) return data_ds_fail(ds);
    /* most specific shape compatible with both */
    for (int i = 0; i < ds->spec.n; i++) {
        tfc_shape *x = &ds->spec.comps[i].shape;
        const tfc_shape *y = &b->spec.comps[i].shape;
        if (x->rank != y->rank) {
            x->rank = -1;
            continue;
        }
        for (int d = 0; d < x->rank; d++)
            if (x->dims[d] != y->dims[d]) x->dims[d] = -1;
    }
    tfc_status_clear(st);
    return ds;
}
