/* PreprocessingLayer.adapt over tensors (in batches) and datasets, and dataset.map with a layer. */
#include <string.h>

#include "core/size_check.h"
#include "keras/layers/preprocessing_internal.h"

extern const tfc_prep_class tfc_prep_normalization_class, tfc_prep_discretization_class,
    tfc_prep_string_lookup_class, tfc_prep_integer_lookup_class, tfc_prep_text_vectorization_class;

const tfc_prep_class *tfc_prep_class_of(const tfc_layer *l) {
    static const tfc_prep_class *const classes[] = {&tfc_prep_normalization_class, &tfc_prep_discretization_class,
                                                    &tfc_prep_string_lookup_class, &tfc_prep_integer_lookup_class,
                                                    &tfc_prep_text_vectorization_class};
    for (size_t i = 0; l && i < sizeof classes / sizeof *classes; i++)
        if (l->cls == &classes[i]->base) return classes[i];
    return NULL;
}

static const tfc_prep_class *adaptable(const tfc_layer *l, tfc_status *st) {
    const tfc_prep_class *pc = tfc_prep_class_of(l);
    if (!pc)
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\" (%s) has no adapt(): it is not an adaptable "
                       "preprocessing layer", l ? l->name : "(null)", l ? l->cls->class_name : "");
    return pc;
}

/* Rows [r0, r0 + n) of t as a new tensor. */
static tfc_tensor *rows_of(const tfc_tensor *t, int64_t r0, int64_t n, tfc_status *st) {
    tfc_shape s = *tfc_tensor_shape(t);
    int64_t per = tfc_dims_product(s.dims, 1, s.rank);
    s.dims[0] = n;
    if (tfc_tensor_dtype(t) != TFC_STRING) {
        size_t esz = tfc_dtype_size(tfc_tensor_dtype(t));
        return tfc_tensor_from_data(tfc_tensor_dtype(t), s.dims, s.rank,
                                    (const char *)tfc_tensor_data(t) + (size_t)(r0 * per) * esz,
                                    (size_t)(n * per) * esz, st);
    }
    int64_t k = n * per;
    const char **p = tfc_malloc((size_t)(k ? k : 1) * sizeof *p);
    size_t *len = tfc_malloc((size_t)(k ? k : 1) * sizeof *len);
    tfc_tensor *r = NULL;
    if (!p || !len) tfc_status_oom(st, "adapt batch", (size_t)k * sizeof *p);
    else {
        for (int64_t i = 0; i < k; i++) p[i] = tfc_tensor_string(t, r0 * per + i, &len[i]);
        r = tfc_tensor_from_strings(p, len, s.dims, s.rank, st);
    }
    tfc_free(p);
    tfc_free(len);
    return r;
}

static bool finish(tfc_layer *l, const tfc_prep_class *pc, tfc_ctx *ctx, bool ok, int64_t batches, tfc_status *st) {
    if (ok && batches == 0)
        ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": adapt() received no data (an empty "
                            "dataset or tensor)", l->name);
    if (ok) ok = pc->adapt_finish(l, ctx, st);
    if (!ok && pc->adapt_abort) pc->adapt_abort(l);
    return ok;
}

bool tfc_layer_adapt(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *data, int64_t batch_size, int64_t steps,
                     tfc_status *st) {
    const tfc_prep_class *pc = adaptable(l, st);
    if (!pc) return false;
    if (!ctx || !data) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": adapt() needs a context and data",
                                             l->name);
    if (batch_size < 0 || steps < 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": adapt() batch_size and steps must be >= 0, got "
                              "%lld and %lld", l->name, (long long)batch_size, (long long)steps);
    if (!pc->adapt_begin(l, st)) return false;
    const tfc_shape *s = tfc_tensor_shape(data);
    int64_t bs = batch_size ? batch_size : 32, rows = s->rank == 0 ? 1 : s->dims[0], batches = 0;
    bool ok = true;
    if (s->rank == 0 || tfc_shape_product(s) == 0) {
        /* a scalar is one batch; empty data gives no batch */
        if (s->rank == 0) ok = pc->adapt_update(l, ctx, data, st), batches = 1;
    } else {
        for (int64_t r0 = 0; ok && r0 < rows && (!steps || batches < steps); r0 += bs, batches++) {
            int64_t n = rows - r0 < bs ? rows - r0 : bs;
            tfc_tensor *b = rows_of(data, r0, n, st);
            ok = b && pc->adapt_update(l, ctx, b, st);
            tfc_tensor_unref(b);
        }
    }
    return finish(l, pc, ctx, ok, batches, st);
}

bool tfc_layer_adapt_dataset(tfc_layer *l, tfc_ctx *ctx, tfc_dataset *ds, int64_t steps, tfc_status *st) {
    const tfc_prep_class *pc = adaptable(l, st);
    if (!pc) return false;
    if (!ctx || !ds)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": adapt() needs a context and a dataset", l->name);
    int nc = tfc_dataset_num_components(ds);
    if (nc < 1 || nc > 64)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": adapt() dataset has %d components", l->name, nc);
    tfc_iterator *it = tfc_iterator_new(ds, st);
    if (!it) return false;
    if (!pc->adapt_begin(l, st)) {
        tfc_iterator_free(it);
        return false;
    }
    tfc_tensor *el[64];
    int64_t batches = 0;
    bool ok = true;
    while (ok && (!steps || batches < steps)) {
        if (!tfc_iterator_next(it, el, nc, st)) {
            if (st->code == TFC_OUT_OF_RANGE) tfc_status_clear(st);
            else ok = false;
            break;
        }
        ok = pc->adapt_update(l, ctx, el[0], st);
        for (int i = 0; i < nc; i++) tfc_tensor_unref(el[i]);
        batches++;
    }
    tfc_iterator_free(it);
    return finish(l, pc, ctx, ok, batches, st);
}

static bool map_layer(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                      tfc_status *st) {
    tfc_layer *l = user;
    if (n_in < 1 || n_out != n_in) return tfc_status_set(st, TFC_INTERNAL, "map(%s): %d inputs, %d outputs", l->name, n_in, n_out);
    if (!tfc_layer_call(l, ctx, in, 1, out, 1, false, st)) return false;
    out[0] = tfc_keep(ctx, out[0]); /* a new reference for the map, whether a scope held it or not */
    for (int i = 1; i < n_in; i++) out[i] = tfc_tensor_ref(in[i]);
    return true;
}

static void unref_layer(void *user) { tfc_layer_unref(user); }

tfc_dataset *tfc_dataset_map_layer(tfc_dataset *ds, tfc_layer *l, tfc_status *st) {
    if (!l) {
        tfc_dataset_unref(ds);
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "map: NULL layer");
        return NULL;
    }
    tfc_layer_ref(l);
    tfc_map_opts o = {.user_free = unref_layer};
    return tfc_dataset_map(ds, map_layer, l, &o, st);
}
