/* Typed wrappers for the string ops (include/tfc/ops/string.h). */
#include <string.h>

#include "tfc/ops/string.h"

#define T(x) ((tfc_tensor *)(x)) /* inputs are only read */

bool tfc_string_split(tfc_ctx *ctx, const tfc_tensor *input, const char *sep, int64_t maxsplit, tfc_tensor **indices,
                      tfc_tensor **values, tfc_tensor **dense_shape, tfc_status *st) {
    const char *s = sep ? sep : "";
    tfc_tensor *sept = tfc_tensor_from_strings(&s, NULL, NULL, 0, st), *out[3];
    if (!sept) return false;
    tfc_attr a = TFC_ATTR_I("maxsplit", maxsplit);
    int n = tfc_execute(ctx, "StringSplitV2", (tfc_tensor *[]){T(input), sept}, 2, &a, 1, out, 3, st);
    tfc_tensor_unref(sept);
    if (n != 3) return false;
    *indices = out[0];
    *values = out[1];
    *dense_shape = out[2];
    return true;
}

tfc_tensor *tfc_string_join(tfc_ctx *ctx, const tfc_tensor *const *inputs, int n, const char *separator,
                            tfc_status *st) {
    tfc_attr a[2] = {TFC_ATTR_S("separator", separator ? separator : ""), TFC_ATTR_I("N", n)};
    return tfc_emit(ctx, "StringJoin", (tfc_tensor *const *)inputs, n, a, 2, st);
}

tfc_tensor *tfc_string_length(tfc_ctx *ctx, const tfc_tensor *input, bool utf8, tfc_status *st) {
    tfc_attr a = TFC_ATTR_S("unit", utf8 ? "UTF8_CHAR" : "BYTE");
    return tfc_emit(ctx, "StringLength", (tfc_tensor *[]){T(input)}, 1, &a, 1, st);
}

tfc_tensor *tfc_substr(tfc_ctx *ctx, const tfc_tensor *input, int64_t pos, int64_t len, bool utf8, tfc_status *st) {
    tfc_tensor *p = tfc_scalar_i64(pos, st), *l = p ? tfc_scalar_i64(len, st) : NULL, *r = NULL;
    tfc_attr a = TFC_ATTR_S("unit", utf8 ? "UTF8_CHAR" : "BYTE");
    if (l) r = tfc_emit(ctx, "Substr", (tfc_tensor *[]){T(input), p, l}, 3, &a, 1, st);
    tfc_tensor_unref(p);
    tfc_tensor_unref(l);
    return r;
}

tfc_tensor *tfc_string_to_number(tfc_ctx *ctx, const tfc_tensor *input, tfc_dtype out_type, tfc_status *st) {
    tfc_attr a = TFC_ATTR_T("out_type", out_type ? out_type : TFC_FLOAT);
    return tfc_emit(ctx, "StringToNumber", (tfc_tensor *[]){T(input)}, 1, &a, 1, st);
}

tfc_tensor *tfc_as_string(tfc_ctx *ctx, const tfc_tensor *input, int precision, bool scientific, bool shortest, int width,
                          const char *fill, tfc_status *st) {
    tfc_attr a[5] = {TFC_ATTR_I("precision", precision < 0 ? -1 : precision), TFC_ATTR_B("scientific", scientific),
                     TFC_ATTR_B("shortest", shortest), TFC_ATTR_I("width", width < 0 ? -1 : width),
                     TFC_ATTR_S("fill", fill ? fill : "")};
    return tfc_emit(ctx, "AsString", (tfc_tensor *[]){T(input)}, 1, a, 5, st);
}

bool tfc_decode_csv(tfc_ctx *ctx, const tfc_tensor *records, const tfc_tensor *const *record_defaults, int n,
                    const tfc_decode_csv_attrs *attrs, tfc_tensor **outputs, tfc_status *st) {
    const tfc_decode_csv_attrs d = attrs ? *attrs : (tfc_decode_csv_attrs){0};
    if (n < 1 || n > 63 || !record_defaults)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "DecodeCSV: between 1 and 63 record defaults are needed, got %d", n);
    tfc_tensor *in[64];
    in[0] = T(records);
    for (int i = 0; i < n; i++) in[1 + i] = T(record_defaults[i]);
    tfc_attr a[4] = {TFC_ATTR_S("field_delim", d.field_delim ? d.field_delim : ","),
                     TFC_ATTR_B("use_quote_delim", !d.no_quote_delim), TFC_ATTR_S("na_value", d.na_value ? d.na_value : ""),
                     TFC_ATTR_INTS("select_cols", d.select_cols, d.select_cols ? d.n_select_cols : 0)};
    return tfc_execute(ctx, "DecodeCSV", in, n + 1, a, 4, outputs, n, st) == n;
}
