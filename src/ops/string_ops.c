/* String ops (tensorflow/core/ops/string_ops.cc, parsing_ops.cc): splitting, joining, lengths, substrings
 * and the string <-> number conversions a CSV or text pipeline needs (StringSplitV2, StringSplit,
 * StringJoin, StringLength, Substr, StringToNumber, AsString, DecodeCSV). Validation happens here with the
 * messages of TensorFlow's kernels; data-dependent errors (unparsable numbers, out-of-range positions) come
 * from the kernels. None has a gradient (StringToNumber, AsString and StringJoin are NotDifferentiable in
 * TensorFlow; the others have none registered). */
#include <string.h>

#include "core/tensor_internal.h"
#include "ops/op_util.h"

/* ---- StringSplitV2 / StringSplit: a vector of strings -> sparse [rows, max tokens] ---------------------- */

static bool split_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *in = &c->in_shapes[0], *sep = &c->in_shapes[1];
    if (in->rank >= 0 && in->rank != 1) return TFC_OP_ERR(c, st, "input must be a vector, got shape: %s", SHP(in));
    if (sep->rank >= 0 && sep->rank != 0)
        return TFC_OP_ERR(c, st, "%s must be a scalar, got shape: %s", strcmp(c->op->name, "StringSplit") ? "sep" : "delimiter",
                          SHP(sep));
    c->out_shapes[0] = (tfc_shape){.rank = 2, .dims = {-1, 2}};
    c->out_shapes[1] = (tfc_shape){.rank = 1, .dims = {-1}};
    c->out_shapes[2] = (tfc_shape){.rank = 1, .dims = {2}};
    return true;
}

const tfc_op_def tfc_op_def_string_split_v2 = {
    .name = "StringSplitV2", .inputs = "input: string, sep: string",
    .outputs = "indices: int64, values: string, shape: int64", .attrs = "maxsplit: int = -1", .shape = split_shape,
};
const tfc_op_def tfc_op_def_string_split = {
    .name = "StringSplit", .inputs = "input: string, delimiter: string",
    .outputs = "indices: int64, values: string, shape: int64", .attrs = "skip_empty: bool = true", .shape = split_shape,
};

/* ---- StringJoin: scalars broadcast, every other input has one common shape ---------------------------- */

static bool join_shape(tfc_shape_ctx *c, tfc_status *st) {
    tfc_shape out = {.rank = 0};
    bool have = false;
    for (int i = 0; i < c->n_in; i++) {
        const tfc_shape *s = &c->in_shapes[i];
        if (s->rank == 0) continue;
        if (s->rank < 0) {
            out.rank = -1;
            continue;
        }
        if (have && out.rank >= 0 && !tfc_shape_equal(&out, s))
            return TFC_OP_ERR(c, st, "Input shapes do not match: %s vs. %s", SHP(&out), SHP(s));
        if (out.rank >= 0) out = *s;
        have = true;
    }
    tfc_set_out(c, 0, &out);
    return true;
}

const tfc_op_def tfc_op_def_string_join = {
    .name = "StringJoin", .inputs = "inputs: N * string", .outputs = "output: string",
    .attrs = "N: int >= 0, separator: string = ''", .shape = join_shape, .not_differentiable = true,
};

const tfc_op_def tfc_op_def_string_length = {
    .name = "StringLength", .inputs = "input: string", .outputs = "output: int32",
    .attrs = "unit: {'BYTE', 'UTF8_CHAR'} = 'BYTE'", .shape = tfc_shape_same_as_input0,
};

/* ---- Substr: pos and len share one shape; they are scalars, match input, or broadcast with it (rank <= 2) */

static bool substr_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *in = &c->in_shapes[0], *pos = &c->in_shapes[1], *len = &c->in_shapes[2];
    if (pos->rank >= 0 && len->rank >= 0 && !tfc_shape_equal(pos, len))
        return TFC_OP_ERR(c, st, "pos and len should have the same shape, got: %s vs. %s", SHP(pos), SHP(len));
    bool empty = false;
    for (int i = 0; i < pos->rank; i++) empty |= pos->dims[i] == 0;
    if (pos->rank >= 0 && empty) return TFC_OP_ERR(c, st, "received empty tensor pos_tensor: shape %s", SHP(pos));
    if (pos->rank == 0 || tfc_shape_equal(in, pos)) {
        tfc_set_out(c, 0, in);
        return true;
    }
    tfc_shape out;
    if (!tfc_broadcast_shapes(in, pos, &out, c->op->name, st)) return false;
    if (out.rank > 2)
        return tfc_status_set(st, TFC_UNIMPLEMENTED, "Substr: Substr broadcast not implemented for %d dimensions", out.rank);
    tfc_set_out(c, 0, &out);
    return true;
}

const tfc_op_def tfc_op_def_substr = {
    .name = "Substr", .inputs = "input: string, pos: T, len: T", .outputs = "output: string",
    .attrs = "T: {int32, int64}, unit: {'BYTE', 'UTF8_CHAR'} = 'BYTE'", .shape = substr_shape,
};

/* ---- StringToNumber / AsString ------------------------------------------------------------------------ */

const tfc_op_def tfc_op_def_string_to_number = {
    .name = "StringToNumber", .inputs = "string_tensor: string", .outputs = "output: out_type",
    .attrs = "out_type: {float, double, int32, int64} = float", .shape = tfc_shape_same_as_input0,
    .not_differentiable = true,
};

static bool as_string_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_dtype dt = c->in_dtypes[0];
    const bool sci = tfc_attrs_bool(c->attrs, "scientific", false), shortest = tfc_attrs_bool(c->attrs, "shortest", false);
    const int64_t precision = tfc_attrs_int(c->attrs, "precision", -1);
    const char *fill = tfc_attrs_string(c->attrs, "fill", "");
    if (sci && shortest) return TFC_OP_ERR(c, st, "Cannot select both scientific and shortest notation");
    if (strlen(fill) > 1) return TFC_OP_ERR(c, st, "Fill string must be one or fewer characters");
    if (*fill && !strchr(" +-0#", *fill)) return TFC_OP_ERR(c, st, "Fill argument not supported: \"%s\"", fill);
    if (!tfc_dtype_is_floating(dt) && dt != TFC_STRING) {
        if (sci || shortest)
            return TFC_OP_ERR(c, st, "scientific and shortest format not supported for datatype %s", tfc_dtype_name(dt));
        if (precision > -1) return TFC_OP_ERR(c, st, "precision not supported for datatype %s", tfc_dtype_name(dt));
    }
    if (tfc_attrs_int(c->attrs, "width", -1) > 4096 || precision > 4096)
        return TFC_OP_ERR(c, st, "width and precision must be at most 4096, got %lld and %lld",
                          (long long)tfc_attrs_int(c->attrs, "width", -1), (long long)precision);
    c->out_shapes[0] = c->in_shapes[0];
    return true;
}

const tfc_op_def tfc_op_def_as_string = {
    .name = "AsString", .inputs = "input: T", .outputs = "output: string",
    .attrs = "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, bool, string}, "
             "precision: int = -1, scientific: bool = false, shortest: bool = false, width: int = -1, fill: string = ''",
    .shape = as_string_shape, .not_differentiable = true,
};

/* ---- DecodeCSV ---------------------------------------------------------------------------------------- */

static bool decode_csv_shape(tfc_shape_ctx *c, tfc_status *st) {
    const char *delim = tfc_attrs_string(c->attrs, "field_delim", ",");
    if (strlen(delim) != 1) return TFC_OP_ERR(c, st, "field_delim should be only 1 char");
    int n_sel = 0;
    const int64_t *sel = tfc_attrs_ints(c->attrs, "select_cols", &n_sel);
    for (int i = 1; i < n_sel; i++)
        if (sel[i - 1] >= sel[i]) return TFC_OP_ERR(c, st, "select_cols should be strictly increasing indices");
    if (n_sel > 0 && sel[0] < 0) return TFC_OP_ERR(c, st, "select_cols should be non-negative indices");
    const int n_cols = c->n_in - 1;
    if (n_sel > 0 && n_sel != n_cols) return TFC_OP_ERR(c, st, "select_cols should match output size");
    for (int i = 0; i < n_cols; i++) {
        const tfc_shape *d = &c->in_shapes[1 + i];
        if (d->rank > 1) return TFC_OP_ERR(c, st, "Each record default should be at most rank 1");
        if (d->rank == 1 && d->dims[0] > 1)
            return TFC_OP_ERR(c, st, "There should only be 1 default per field but field %d has %lld", i,
                              (long long)d->dims[0]);
    }
    for (int i = 0; i < c->n_out; i++) c->out_shapes[i] = c->in_shapes[0];
    return true;
}

const tfc_op_def tfc_op_def_decode_csv = {
    .name = "DecodeCSV", .inputs = "records: string, record_defaults: OUT_TYPE", .outputs = "output: OUT_TYPE",
    .attrs = "OUT_TYPE: list({float, double, int32, int64, string}) >= 1, field_delim: string = ',', "
             "use_quote_delim: bool = true, na_value: string = '', select_cols: list(int) = []",
    .shape = decode_csv_shape,
};

const tfc_op_def *const tfc_ops_string[] = {
    &tfc_op_def_string_split_v2, &tfc_op_def_string_split, &tfc_op_def_string_join, &tfc_op_def_string_length,
    &tfc_op_def_substr, &tfc_op_def_string_to_number, &tfc_op_def_as_string, &tfc_op_def_decode_csv,
    NULL,
};
