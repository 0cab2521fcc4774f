/* Keras's _Merge base: shape validation and rank alignment shared by Add, Multiply and Concatenate. */
#include <stdio.h>
#include <string.h>

#include "keras/layers/merge.h"

char *tfc_merge_shapes_str(const tfc_shape *in, int n, char *buf, size_t size) {
    size_t k = (size_t)snprintf(buf, size, "[");
    for (int i = 0; i < n && k < size; i++)
        k += (size_t)snprintf(buf + k, size - k, "%s%s", i ? ", " : "", TFC_KSHP(&in[i]));
    if (k < size) snprintf(buf + k, size - k, "]");
    return buf;
}

static bool at_least_one(tfc_layer *l, int n_in, tfc_status *st) {
    if (n_in >= 1) return true;
    return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                          "Layer \"%s\": a merge layer should be called on a list of at least 1 input. Got 0 inputs",
                          l->name);
}

bool tfc_merge_elementwise_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out,
                                 tfc_status *st) {
    if (!at_least_one(l, n_in, st)) return false;
    char all[512];
    int64_t batch = -1;
    for (int i = 0; i < n_in; i++) {
        if (in[i].rank < 1)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": input %d has shape %s, without a batch dim",
                                  l->name, i, TFC_KSHP(&in[i]));
        int64_t b = in[i].dims[0];
        if (b >= 0 && batch >= 0 && b != batch)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                  "Layer \"%s\": cannot merge tensors with different batch sizes. Got tensors with "
                                  "shapes %s",
                                  l->name, tfc_merge_shapes_str(in, n_in, all, sizeof all));
        if (b >= 0) batch = b;
    }
    /* Keras's _compute_elemwise_op_output_shape on the shapes without the batch dim. */
    tfc_shape acc = {.rank = in[0].rank - 1};
    memcpy(acc.dims, in[0].dims + 1, sizeof(int64_t) * (size_t)acc.rank);
    for (int i = 1; i < n_in; i++) {
        tfc_shape s = {.rank = in[i].rank - 1};
        memcpy(s.dims, in[i].dims + 1, sizeof(int64_t) * (size_t)s.rank);
        const tfc_shape *a = acc.rank >= s.rank ? &acc : &s, *b = acc.rank >= s.rank ? &s : &acc;
        tfc_shape r = *a;
        int off = a->rank - b->rank;
        for (int j = 0; j < b->rank; j++) {
            int64_t x = a->dims[off + j], y = b->dims[j];
            if (x < 0 || y < 0) r.dims[off + j] = -1;
            else if (x == 1) r.dims[off + j] = y;
            else if (y == 1) r.dims[off + j] = x;
            else if (x != y)
                return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                      "Inputs have incompatible shapes. Received shapes %s and %s (layer \"%s\", "
                                      "input shapes %s)",
                                      TFC_KSHP(a), TFC_KSHP(b), l->name, tfc_merge_shapes_str(in, n_in, all, sizeof all));
        }
        acc = r;
    }
    out[0] = (tfc_shape){.rank = acc.rank + 1, .dims = {batch}};
    memcpy(out[0].dims + 1, acc.dims, sizeof(int64_t) * (size_t)acc.rank);
    *n_out = 1;
    return true;
}

bool tfc_merge_build(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st) {
    for (int i = 0; i < n_in; i++) l->input_spec[i] = (tfc_input_spec){.ndim = -1};
    l->has_input_spec = true;
    return true;
}

bool tfc_merge_elementwise_call(tfc_layer *l, tfc_ctx *ctx, const char *op, tfc_tensor *const *in, int n_in,
                                tfc_tensor **out, tfc_status *st) {
    tfc_shape shapes[TFC_KERAS_MAX_IO] = {{0}}, o;
    for (int i = 0; i < n_in; i++) shapes[i] = *tfc_tensor_shape(in[i]);
    if (!tfc_merge_elementwise_shape(l, shapes, n_in, &o, &(int){0}, st)) return false;
    int max_rank = 0;
    for (int i = 0; i < n_in; i++)
        if (shapes[i].rank > max_rank) max_rank = shapes[i].rank;
    tfc_tensor *one = tfc_scalar_i32(1, st);
    if (!one) return false;
    tfc_tensor *acc = NULL;
    bool ok = true;
    for (int i = 0; i < n_in && ok; i++) {
        tfc_tensor *x = in[i];
        for (int r = shapes[i].rank; r < max_rank && x; r++) x = tfc_emit(ctx, "ExpandDims", (tfc_tensor *[]){x, one}, 2, NULL, 0, st);
        if (!x) ok = false;
        else if (!acc) acc = x;
        else ok = (acc = tfc_emit(ctx, op, (tfc_tensor *[]){acc, x}, 2, NULL, 0, st)) != NULL;
    }
    tfc_tensor_unref(one);
    if (ok && acc == in[0]) ok = (acc = tfc_emit(ctx, "Identity", &acc, 1, NULL, 0, st)) != NULL;
    out[0] = ok ? acc : NULL;
    return ok;
}

bool tfc_merge_opts_from_config(const cJSON *cfg, tfc_merge_opts *o, tfc_status *st) {
    tfc_layer_common_cfg c;
    if (!tfc_json_get_common(cfg, &c, st)) return false;
    memset(o, 0, sizeof *o);
    TFC_COMMON_TO_OPTS(c, *o);
    return tfc_json_get_i64(cfg, "axis", &o->axis, &o->has_axis, st);
}
