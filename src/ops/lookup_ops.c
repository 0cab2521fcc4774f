/* Lookup table ops (tensorflow/core/ops/lookup_ops.cc): hash tables behind resource handles — HashTableV2 (filled
 * once by an initializer) and MutableHashTableV2 — with their lookups, inserts, imports, exports, sizes and the
 * two initializers (from tensors, from a text file such as a vocabulary asset). Tables hold scalar values (half
 * and bfloat16 values are kept as their float value); keys are string, int32 or int64. Data-dependent errors (a
 * key dtype other than the table's, an uninitialized table, a bad vocabulary line) come from the kernels, naming
 * the op and the table or file. None has a gradient. */
#include <string.h>

#include "ops/op_util.h"

#define KEY_TYPES "{string, int32, int64}"
#define VALUE_TYPES "{string, int32, int64, float, double, half, bfloat16, bool}"
#define TABLE_ATTRS                                                                                                    \
    "container: string = '', shared_name: string = '', use_node_name_sharing: bool = false, key_dtype: " KEY_TYPES     \
    ", value_dtype: " VALUE_TYPES

static bool handle_shape(tfc_shape_ctx *c, tfc_status *st) {
    c->out_shapes[0].rank = 0;
    return true;
}

/* keys any shape; the values a lookup gives have the keys' shape (scalar-valued tables) */
static bool find_shape(tfc_shape_ctx *c, tfc_status *st) {
    if (!tfc_check_rank(c, 0, 0, "table handle", st)) return false;
    const tfc_shape *d = &c->in_shapes[2];
    if (d->rank > 0) return TFC_OP_ERR(c, st, "default_value must be a scalar, got shape %s", SHP(d));
    c->out_shapes[0] = c->in_shapes[1];
    return true;
}

/* keys and values: vectors of one length (InitializeTableV2, LookupTableInsertV2, LookupTableImportV2) */
static bool keys_values_shape(tfc_shape_ctx *c, tfc_status *st) {
    if (!tfc_check_rank(c, 0, 0, "table handle", st)) return false;
    const tfc_shape *k = &c->in_shapes[1], *v = &c->in_shapes[2];
    if (k->rank >= 0 && v->rank >= 0 && !tfc_shape_equal(k, v))
        return TFC_OP_ERR(c, st, "keys and values must have the same shape, got %s and %s", SHP(k), SHP(v));
    return true;
}

static bool size_shape(tfc_shape_ctx *c, tfc_status *st) {
    c->out_shapes[0].rank = 0;
    return tfc_check_rank(c, 0, 0, "table handle", st);
}

static bool export_shape(tfc_shape_ctx *c, tfc_status *st) {
    c->out_shapes[0] = (tfc_shape){.rank = 1, .dims = {-1}};
    c->out_shapes[1] = (tfc_shape){.rank = 1, .dims = {-1}};
    return tfc_check_rank(c, 0, 0, "table handle", st);
}

static bool text_init_shape(tfc_shape_ctx *c, tfc_status *st) {
    if (!tfc_check_rank(c, 0, 0, "table handle", st) || !tfc_check_rank(c, 1, 0, "filename", st)) return false;
    const char *d = tfc_attrs_string(c->attrs, "delimiter", "\t");
    if (strlen(d) != 1) return TFC_OP_ERR(c, st, "delimiter should be only 1 char, got '%s'", d);
    return true;
}

const tfc_op_def tfc_op_def_hash_table_v2 = {
    .name = "HashTableV2", .inputs = "", .outputs = "table_handle: resource", .attrs = TABLE_ATTRS,
    .shape = handle_shape, .not_differentiable = true, .stateful = true,
};
const tfc_op_def tfc_op_def_mutable_hash_table_v2 = {
    .name = "MutableHashTableV2", .inputs = "", .outputs = "table_handle: resource", .attrs = TABLE_ATTRS,
    .shape = handle_shape, .not_differentiable = true, .stateful = true,
};
const tfc_op_def tfc_op_def_lookup_table_find_v2 = {
    .name = "LookupTableFindV2", .inputs = "table_handle: resource, keys: Tin, default_value: Tout",
    .outputs = "values: Tout", .attrs = "Tin: type, Tout: type", .shape = find_shape, .not_differentiable = true,
    .stateful = true,
};
const tfc_op_def tfc_op_def_lookup_table_insert_v2 = {
    .name = "LookupTableInsertV2", .inputs = "table_handle: resource, keys: Tin, values: Tout", .outputs = "",
    .attrs = "Tin: type, Tout: type", .shape = keys_values_shape, .not_differentiable = true, .stateful = true,
};
const tfc_op_def tfc_op_def_lookup_table_import_v2 = {
    .name = "LookupTableImportV2", .inputs = "table_handle: resource, keys: Tin, values: Tout", .outputs = "",
    .attrs = "Tin: type, Tout: type", .shape = keys_values_shape, .not_differentiable = true, .stateful = true,
};
const tfc_op_def tfc_op_def_lookup_table_size_v2 = {
    .name = "LookupTableSizeV2", .inputs = "table_handle: resource", .outputs = "size: int64", .attrs = "",
    .shape = size_shape, .not_differentiable = true, .stateful = true,
};
const tfc_op_def tfc_op_def_lookup_table_export_v2 = {
    .name = "LookupTableExportV2", .inputs = "table_handle: resource", .outputs = "keys: Tkeys, values: Tvalues",
    .attrs = "Tkeys: type, Tvalues: type", .shape = export_shape, .not_differentiable = true, .stateful = true,
};
const tfc_op_def tfc_op_def_initialize_table_v2 = {
    .name = "InitializeTableV2", .inputs = "table_handle: resource, keys: Tkey, values: Tval", .outputs = "",
    .attrs = "Tkey: type, Tval: type", .shape = keys_values_shape, .not_differentiable = true, .stateful = true,
};
const tfc_op_def tfc_op_def_initialize_table_from_text_file_v2 = {
    .name = "InitializeTableFromTextFileV2", .inputs = "table_handle: resource, filename: string", .outputs = "",
    .attrs = "key_index: int >= -2, value_index: int >= -2, vocab_size: int >= -1 = -1, delimiter: string = '\t', "
             "offset: int = 0",
    .shape = text_init_shape, .not_differentiable = true, .stateful = true,
};

const tfc_op_def *const tfc_ops_lookup[] = {
    &tfc_op_def_hash_table_v2,          &tfc_op_def_mutable_hash_table_v2, &tfc_op_def_lookup_table_find_v2,
    &tfc_op_def_lookup_table_insert_v2, &tfc_op_def_lookup_table_import_v2, &tfc_op_def_lookup_table_size_v2,
    &tfc_op_def_lookup_table_export_v2, &tfc_op_def_initialize_table_v2,   &tfc_op_def_initialize_table_from_text_file_v2,
    NULL,
};
