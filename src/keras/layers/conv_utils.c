/* Keras's conv_utils for the 2-D image layers: normalisation, validation messages, output lengths, config
 * readers. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "keras/layers/conv_utils.h"

void tfc_kconv_lower(char *buf, size_t size, const char *s, const char *dflt) {
    if (!size) return;
    if (!s || !*s) s = dflt;
    size_t i = 0;
    for (; s[i] && i + 1 < size; i++) buf[i] = (char)tolower((unsigned char)s[i]);
    buf[i] = 0;
}

void tfc_kconv_pair(int64_t out[2], const int64_t in[2], int64_t dflt) {
    out[0] = in[0];
    out[1] = in[1] == 0 && in[0] != 0 ? in[0] : in[1];
    for (int i = 0; i < 2; i++)
        if (out[i] == 0) out[i] = dflt;
}

bool tfc_kconv_check_padding(const tfc_layer *l, const char *padding, tfc_status *st) {
    if (!strcmp(padding, "valid") || !strcmp(padding, "same")) return true;
    if (!strcmp(padding, "causal"))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "Causal padding is only supported for `Conv1D`and `SeparableConv1D`. (layer \"%s\")",
                              l->name);
    return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                          "The `padding` argument must be a list/tuple or one of \"valid\", \"same\" (or \"causal\", "
                          "only for `Conv1D). Received: %s (layer \"%s\")",
                          padding, l->name);
}

bool tfc_kconv_check_data_format(const tfc_layer *l, const char *data_format, tfc_status *st) {
    if (!strcmp(data_format, "channels_last") || !strcmp(data_format, "channels_first")) return true;
    return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                          "The `data_format` argument must be one of \"channels_first\", \"channels_last\". Received: "
                          "%s (layer \"%s\")",
                          data_format, l->name);
}

bool tfc_kconv_check_pair(const tfc_layer *l, const char *what, const int64_t v[2], int64_t min, tfc_status *st) {
    if (v[0] >= min && v[1] >= min) return true;
    if (min == 1 && v[0] >= 0 && v[1] >= 0) /* Keras's _validate_init wording for zeros */
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "The argument `%s` cannot contain 0(s). Received: (%lld, %lld) (layer \"%s\")", what,
                              (long long)v[0], (long long)v[1], l->name);
    return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                          "The `%s` argument must be a tuple of 2 integers. Received: (%lld, %lld) including %lld that "
                          "does not satisfy the requirement `%s 0`. (layer \"%s\")",
                          what, (long long)v[0], (long long)v[1], (long long)(v[0] < min ? v[0] : v[1]),
                          min ? ">" : ">=", l->name);
}

int64_t tfc_kconv_output_length(int64_t in, int64_t k, bool same, int64_t stride, int64_t dilation) {
    if (in < 0) return -1;
    int64_t dk = k + (k - 1) * (dilation - 1);
    int64_t len = same ? in : in - dk + 1;
    /* Python's floor division: (len + stride - 1) // stride */
    int64_t num = len + stride - 1;
    return num >= 0 ? num / stride : -((-num + stride - 1) / stride);
}

bool tfc_kconv_spatial(const tfc_layer *l, const tfc_shape *in, int h_axis, const int64_t k[2], const int64_t s[2],
                       const int64_t d[2], bool same, int64_t out[2], tfc_status *st) {
    bool bad = false;
    for (int i = 0; i < 2; i++) {
        int64_t n = in->dims[h_axis + i];
        out[i] = tfc_kconv_output_length(n, k[i], same, s[i], d[i]);
        /* An empty input gives an empty output with "same" padding; everything else must keep a dim >= 1. */
        if (n >= 0 && out[i] <= 0 && !(n == 0 && same)) bad = true;
    }
    if (!bad) return true;
    char shp[TFC_SHAPE_STR];
    size_t m = (size_t)snprintf(shp, sizeof shp, "[");
    for (int i = 0; i < in->rank && m < sizeof shp; i++) {
        if (in->dims[i] < 0) m += (size_t)snprintf(shp + m, sizeof shp - m, "%sNone", i ? ", " : "");
        else m += (size_t)snprintf(shp + m, sizeof shp - m, "%s%lld", i ? ", " : "", (long long)in->dims[i]);
    }
    if (m < sizeof shp) snprintf(shp + m, sizeof shp - m, "]");
    return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                          "One of the dimensions in the output is <= 0 due to downsampling in %s. Consider increasing "
                          "the input size. Received input shape %s which would produce output shape with a zero or "
                          "negative value in a dimension.",
                          l->name, shp);
}

bool tfc_kconv_check_rank(const tfc_layer *l, const tfc_shape *s, int ndim, bool at_least, tfc_status *st) {
    if (s->rank < 0 || (at_least ? s->rank >= ndim : s->rank == ndim)) return true;
    return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                          "Input 0 of layer \"%s\" is incompatible with the layer: expected %s=%d, found ndim=%d. "
                          "Full shape received: %s",
                          l->name, at_least ? "min_ndim" : "ndim", ndim, s->rank, TFC_KSHP(s));
}

char *tfc_kconv_tuple_str(const int64_t *v, int n, char *buf, size_t size) {
    tfc_shape t = {.rank = n};
    for (int i = 0; i < n && i < TFC_MAX_RANK; i++) t.dims[i] = v[i];
    return tfc_keras_shape_str(&t, buf, size);
}

bool tfc_kconv_validate_axes(const tfc_layer *l, const int64_t *axes, int n, int rank, int64_t *out, tfc_status *st) {
    char buf[TFC_SHAPE_STR];
    for (int i = 0; i < n; i++) out[i] = axes[i] < 0 ? axes[i] + rank : axes[i];
    for (int i = 0; i < n; i++)
        if (out[i] < 0 || out[i] >= rank)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                  "Invalid value for `axis` argument. Expected 0 <= axis < inputs.rank (with "
                                  "inputs.rank=%d). Received: axis=%s (layer \"%s\")",
                                  rank, tfc_kconv_tuple_str(out, n, buf, sizeof buf), l->name);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (out[i] == out[j])
                return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Duplicate axis: %s (layer \"%s\")",
                                      tfc_kconv_tuple_str(out, n, buf, sizeof buf), l->name);
    return true;
}

/* ---- config readers ---- */

bool tfc_kconv_json_tuple(const cJSON *cfg, const char *key, int rank, int64_t *out, bool *present, tfc_status *st) {
    int64_t v[3];
    int n = 0;
    bool has = false;
    if (!tfc_json_get_i64_list(cfg, key, v, rank, &n, &has, st)) return false;
    if (present) *present = has;
    if (!has) return true;
    if (n == 1 && cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(cfg, key)))
        for (int i = 1; i < rank; i++) v[i] = v[0];
    else if (n != rank)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "The `%s` argument must be a tuple of %d integers. Received: %d values", key, rank, n);
    for (int i = 0; i < rank; i++)
        if (v[i] < 0)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                  "The `%s` argument must be a tuple of %d integers. Received: %lld at index %d", key,
                                  rank, (long long)v[i], i);
    for (int i = 0; i < rank; i++) out[i] = v[i];
    return true;
}

bool tfc_kconv_json_pair(const cJSON *cfg, const char *key, int64_t out[2], bool *present, tfc_status *st) {
    return tfc_kconv_json_tuple(cfg, key, 2, out, present, st);
}

static bool json_choice(const cJSON *cfg, const char *key, const char *const *ok, const char *msg, const char **out,
                        tfc_status *st) {
    const char *s = NULL;
    bool has = false;
    if (!tfc_json_get_str(cfg, key, &s, &has, st)) return false;
    if (!has) return true;
    for (int i = 0; ok[i]; i++)
        if (!strcasecmp(s, ok[i])) {
            *out = s;
            return true;
        }
    return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s Received: %s", msg, s);
}

bool tfc_kconv_json_padding(const cJSON *cfg, const char **out, tfc_status *st) {
    static const char *const ok[] = {"valid", "same", NULL};
    return json_choice(cfg, "padding", ok,
                       "The `padding` argument must be a list/tuple or one of \"valid\", \"same\" (or \"causal\", only "
                       "for `Conv1D).",
                       out, st);
}

bool tfc_kconv_json_data_format(const cJSON *cfg, const char **out, tfc_status *st) {
    static const char *const ok[] = {"channels_last", "channels_first", NULL};
    return json_choice(cfg, "data_format", ok,
                       "The `data_format` argument must be one of \"channels_first\", \"channels_last\".", out, st);
}

bool tfc_kconv_json_axes(const cJSON *cfg, const char *key, int64_t *out, int max, int *n, bool *is_list,
                         bool *present, tfc_status *st) {
    bool has = false;
    if (!tfc_json_get_i64_list(cfg, key, out, max, n, &has, st)) return false;
    if (present) *present = has;
    if (!has) return true;
    *is_list = cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(cfg, key));
    if (*n < 1) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "config key \"%s\" must not be an empty list", key);
    return true;
}

bool tfc_kconv_check_conv_args(const tfc_layer *l, int64_t filters, int64_t groups, const int64_t *strides,
                               const int64_t *dilation, int n, tfc_status *st) {
    if (filters <= 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "Invalid value for argument `filters`. Expected a strictly positive value. Received "
                              "filters=%lld. (layer \"%s\")",
                              (long long)filters, l->name);
    if (groups <= 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "Invalid value for argument `groups`. Expected a positive integer. Received groups=%lld. "
                              "(layer \"%s\")",
                              (long long)groups, l->name);
    if (filters % groups != 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "The number of filters must be evenly divisible by the number of groups. Received: "
                              "groups=%lld, filters=%lld (layer \"%s\")",
                              (long long)groups, (long long)filters, l->name);
    bool strided = false, dilated = false;
    for (int i = 0; i < n; i++) strided |= strides[i] > 1, dilated |= dilation[i] > 1;
    if (strided && dilated) {
        char sb[64], db[64];
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "`strides > 1` not supported in conjunction with `dilation_rate > 1`. Received: "
                              "strides=%s and dilation_rate=%s (layer \"%s\")",
                              tfc_kconv_tuple_str(strides, n, sb, sizeof sb),
                              tfc_kconv_tuple_str(dilation, n, db, sizeof db), l->name);
    }
    return true;
}
