/* Parsing ops (tensorflow/core/ops/parsing_ops.cc): ParseExampleV2 (tf.io.parse_example and, on a scalar,
 * tf.io.parse_single_example) and the older ParseSingleExample. The shape functions check the feature
 * configuration with the messages of TensorFlow's kernels; the kernel (src/kernels/cpu/parsing.c) decodes
 * the tf.train.Example protos. Neither op has a gradient. */
#include <string.h>

#include "core/size_check.h"
#include "core/tensor_internal.h"
#include "ops/op_util.h"

/* Element count of a (partial) shape: 0 when a dim is unknown or 0, INT64_MAX when it overflows. */
static int64_t elems(const tfc_shape *s) {
    int64_t n = 1;
    for (int i = 0; i < s->rank; i++)
        if (s->dims[i] <= 0) return 0;
    for (int i = 0; i < s->rank; i++)
        if (!tfc_size_mul(n, s->dims[i], &n)) return INT64_MAX;
    return n;
}

/* A dense feature's shape: fully known, or [-1, known...] (FixedLenSequenceFeature). */
static bool check_dense_shape(tfc_shape_ctx *c, int d, const tfc_shape *s, bool *varlen, tfc_status *st) {
    bool ok = s->rank >= 0;
    for (int i = 1; ok && i < s->rank; i++) ok = s->dims[i] >= 0;
    if (!ok) return TFC_OP_ERR(c, st, "dense_shapes[%d] has unknown rank or unknown inner dimensions: %s", d, SHP(s));
    *varlen = s->rank > 0 && s->dims[0] < 0;
    return true;
}

static bool dims_compatible(const tfc_shape *a, const tfc_shape *b) {
    if (a->rank != b->rank) return false;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] >= 0 && b->dims[i] >= 0 && a->dims[i] != b->dims[i]) return false;
    return true;
}

/* Defaults (first_default is the input index of dense_defaults[0]) against the dense shapes; output shapes
 * of the dense values for a batch of `batch` examples (-1: a scalar input, no batch dim). */
static bool check_dense(tfc_shape_ctx *c, int first_default, int n_dense, int first_out, int64_t batch, tfc_status *st) {
    int n_shapes = 0;
    const tfc_shape *shapes = tfc_attrs_shapes(c->attrs, "dense_shapes", &n_shapes);
    if (n_shapes != n_dense) return TFC_OP_ERR(c, st, "len(dense_keys) != len(dense_shapes)");
    for (int d = 0; d < n_dense; d++) {
        bool varlen = false;
        if (!check_dense_shape(c, d, &shapes[d], &varlen, st)) return false;
        const tfc_shape *def = &c->in_shapes[first_default + d];
        if (varlen && elems(def) != 1)
            return TFC_OP_ERR(c, st,
                              "dense_shape[%d] is a variable length shape: %s, therefore def_value[%d] must contain a single "
                              "element (the padding element).  But its shape is: %s",
                              d, SHP(&shapes[d]), d, SHP(def));
        if (!varlen && elems(def) > 0 && !dims_compatible(&shapes[d], def))
            return TFC_OP_ERR(c, st, "def_value[%d].shape() == %s is not compatible with dense_shapes_[%d] == %s", d, SHP(def),
                              d, SHP(&shapes[d]));
        tfc_shape out = {.rank = 0};
        if (batch >= 0 || batch == -2) out.dims[out.rank++] = batch >= 0 ? batch : -1;
        if (shapes[d].rank + out.rank > TFC_MAX_RANK)
            return TFC_OP_ERR(c, st, "dense_shapes[%d] %s has too many dimensions", d, SHP(&shapes[d]));
        for (int i = 0; i < shapes[d].rank; i++) out.dims[out.rank++] = shapes[d].dims[i];
        if (!tfc_check_out_shape(c, &out, st)) return false;
        c->out_shapes[first_out + d] = out;
    }
    return true;
}

static int64_t count_of(const tfc_shape *s) { return s->rank < 0 ? -1 : elems(s); }

/* Inputs: serialized, names, sparse_keys, dense_keys, ragged_keys, dense_defaults...
 * Outputs: sparse_indices[ns], sparse_values[ns], sparse_shapes[ns], dense_values[nd], ragged_values[nr],
 * ragged_row_splits[nr]. */
static bool parse_example_v2_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *ser = &c->in_shapes[0], *names = &c->in_shapes[1];
    const int64_t ns = tfc_attrs_int(c->attrs, "num_sparse", 0);
    int n_sparse_types = 0, n_rv = 0, n_rs = 0;
    const tfc_attr *st_attr = tfc_attrs_find(c->attrs, "sparse_types");
    n_sparse_types = st_attr ? st_attr->n : 0;
    const tfc_attr *rv = tfc_attrs_find(c->attrs, "ragged_value_types"), *rs = tfc_attrs_find(c->attrs, "ragged_split_types");
    n_rv = rv ? rv->n : 0;
    n_rs = rs ? rs->n : 0;
    const int n_dense = c->n_in - 5;
    if (ns != n_sparse_types) return TFC_OP_ERR(c, st, "len(sparse_keys) != len(sparse_types)");
    if (n_rv != n_rs) return TFC_OP_ERR(c, st, "len(ragged_keys) != len(ragged_split_types)");
    if (ser->rank > 1) return TFC_OP_ERR(c, st, "Expected serialized to be a scalar or vector, got shape: %s", SHP(ser));
    const int64_t nn = count_of(names);
    if (nn > 0 && ser->rank >= 0 && !tfc_shape_equal(names, ser))
        return TFC_OP_ERR(c, st, "Expected names have the same shape as serialized: name.shape=%s, serialized.shape=%s",
                          SHP(names), SHP(ser));
    const int64_t nsk = count_of(&c->in_shapes[2]), ndk = count_of(&c->in_shapes[3]), nrk = count_of(&c->in_shapes[4]);
    if (nsk >= 0 && nsk != ns)
        return TFC_OP_ERR(c, st, "Expected len(sparse_keys) == num_sparse but got: %lld vs. %lld", (long long)nsk, (long long)ns);
    if (ndk >= 0 && ndk != n_dense)
        return TFC_OP_ERR(c, st, "Expected len(dense_keys) == len(dense_types) but got: %lld vs. %d", (long long)ndk, n_dense);
    if (nrk >= 0 && nrk != n_rv)
        return TFC_OP_ERR(c, st, "Expected len(ragged_keys) == len(ragged_value_types) but got: %lld vs. %d", (long long)nrk,
                          n_rv);
    const bool scalar = ser->rank == 0;
    /* -2: a batch of unknown size (unknown rank, or a vector of unknown length); -1: a scalar (no batch dimension) */
    const int64_t batch = ser->rank < 0 || (!scalar && ser->dims[0] < 0) ? -2 : scalar ? -1 : ser->dims[0];
    for (int64_t i = 0; i < ns; i++) {
        c->out_shapes[i] = (tfc_shape){.rank = 2, .dims = {-1, scalar ? 1 : 2}};
        c->out_shapes[ns + i] = (tfc_shape){.rank = 1, .dims = {-1}};
        c->out_shapes[2 * ns + i] = (tfc_shape){.rank = 1, .dims = {scalar ? 1 : 2}};
    }
    if (!check_dense(c, 5, n_dense, (int)(3 * ns), batch, st)) return false;
    for (int i = 0; i < n_rv; i++) {
        c->out_shapes[3 * ns + n_dense + i] = (tfc_shape){.rank = 1, .dims = {-1}};
        c->out_shapes[3 * ns + n_dense + n_rv + i] =
            (tfc_shape){.rank = 1, .dims = {scalar ? 0 : batch >= 0 ? batch + 1 : -1}};
    }
    /* dense var-len outputs depend on the data */
    int n_shapes = 0;
    const tfc_shape *shapes = tfc_attrs_shapes(c->attrs, "dense_shapes", &n_shapes);
    for (int d = 0; d < n_dense; d++)
        if (shapes[d].rank > 0 && shapes[d].dims[0] < 0) c->out_shapes[3 * ns + d].dims[scalar ? 0 : 1] = -1;
    return true;
}

const tfc_op_def tfc_op_def_parse_example_v2 = {
    .name = "ParseExampleV2",
    .inputs = "serialized: string, names: string, sparse_keys: string, dense_keys: string, ragged_keys: string, "
              "dense_defaults: Tdense",
    .outputs = "sparse_indices: num_sparse * int64, sparse_values: sparse_types, sparse_shapes: num_sparse * int64, "
               "dense_values: Tdense, ragged_values: ragged_value_types, ragged_row_splits: ragged_split_types",
    .attrs = "Tdense: list({float, int64, string}) >= 0, num_sparse: int >= 0, "
             "sparse_types: list({float, int64, string}) >= 0, ragged_value_types: list({float, int64, string}) >= 0, "
             "ragged_split_types: list({int32, int64}) >= 0, dense_shapes: list(shape) >= 0",
    .shape = parse_example_v2_shape,
};

/* ParseSingleExample: keys as attrs, a scalar input. */
static bool parse_single_example_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *ser = &c->in_shapes[0];
    const int64_t ns = tfc_attrs_int(c->attrs, "num_sparse", 0);
    const tfc_attr *sk = tfc_attrs_find(c->attrs, "sparse_keys"), *dk = tfc_attrs_find(c->attrs, "dense_keys");
    const tfc_attr *stp = tfc_attrs_find(c->attrs, "sparse_types");
    const int n_dense = c->n_in - 1;
    if (ser->rank > 0) return TFC_OP_ERR(c, st, "Expected serialized to be a scalar, got shape: %s", SHP(ser));
    if ((sk ? sk->n : 0) != ns || (stp ? stp->n : 0) != ns)
        return TFC_OP_ERR(c, st, "len(sparse_keys) != num_sparse (%d vs. %lld) or len(sparse_types) != num_sparse (%d)",
                          sk ? sk->n : 0, (long long)ns, stp ? stp->n : 0);
    if ((dk ? dk->n : 0) != n_dense)
        return TFC_OP_ERR(c, st, "len(dense_keys) != len(dense_defaults): %d vs. %d", dk ? dk->n : 0, n_dense);
    for (int64_t i = 0; i < ns; i++) {
        c->out_shapes[i] = (tfc_shape){.rank = 2, .dims = {-1, 1}};
        c->out_shapes[ns + i] = (tfc_shape){.rank = 1, .dims = {-1}};
        c->out_shapes[2 * ns + i] = (tfc_shape){.rank = 1, .dims = {1}};
    }
    if (!check_dense(c, 1, n_dense, (int)(3 * ns), -1, st)) return false;
    int n_shapes = 0;
    const tfc_shape *shapes = tfc_attrs_shapes(c->attrs, "dense_shapes", &n_shapes);
    for (int d = 0; d < n_dense; d++)
        if (shapes[d].rank > 0 && shapes[d].dims[0] < 0) c->out_shapes[3 * ns + d].dims[0] = -1;
    return true;
}

const tfc_op_def tfc_op_def_parse_single_example = {
    .name = "ParseSingleExample", .inputs = "serialized: string, dense_defaults: Tdense",
    .outputs = "sparse_indices: num_sparse * int64, sparse_values: sparse_types, sparse_shapes: num_sparse * int64, "
               "dense_values: Tdense",
    .attrs = "num_sparse: int >= 0, sparse_keys: list(string) >= 0, dense_keys: list(string) >= 0, "
             "sparse_types: list({float, int64, string}) >= 0, Tdense: list({float, int64, string}) >= 0, "
             "dense_shapes: list(shape) >= 0",
    .shape = parse_single_example_shape,
};

const tfc_op_def *const tfc_ops_parsing[] = {&tfc_op_def_parse_example_v2, &tfc_op_def_parse_single_example, NULL};
