/* tf.summary.scalar / histogram / image / text / write: TF 2 tensor summaries (a TensorProto and the
 * TensorBoard plugin that reads it) queued on a writer (writer.c). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "summary/summary_internal.h"
#include "tfc/ops/image.h"

/* The pieces of one Summary.Value: a TensorProto over borrowed data. */
typedef struct {
    Tensorflow__TensorProto tp;
    Tensorflow__TensorShapeProto shape;
    Tensorflow__TensorShapeProto__Dim dims[TFC_MAX_RANK], *dimp[TFC_MAX_RANK];
} tensor_msg;

static void tensor_msg_init(tensor_msg *m, tfc_dtype dt, const int64_t *dims, int rank) {
    m->tp = (Tensorflow__TensorProto)TENSORFLOW__TENSOR_PROTO__INIT;
    m->shape = (Tensorflow__TensorShapeProto)TENSORFLOW__TENSOR_SHAPE_PROTO__INIT;
    for (int i = 0; i < rank; i++) {
        m->dims[i] = (Tensorflow__TensorShapeProto__Dim)TENSORFLOW__TENSOR_SHAPE_PROTO__DIM__INIT;
        m->dims[i].size = dims[i];
        m->dimp[i] = &m->dims[i];
    }
    m->shape.n_dim = (size_t)rank;
    m->shape.dim = rank ? m->dimp : NULL;
    m->tp.dtype = (Tensorflow__DataType)dt;
    m->tp.tensor_shape = &m->shape;
}

/* Queues Event{step, summary{value{tag, tensor, metadata{plugin}}}}. */
static bool write_value(tfc_summary_writer *w, const char *what, const char *tag, int64_t step,
                        Tensorflow__TensorProto *tp, const char *plugin, const void *content, size_t content_len,
                        const char *description, tfc_status *st) {
    if (!tag || !*tag) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: the tag (name) must be non-empty", what);
    int64_t s;
    if (!summary_resolve_step(step, what, &s, st)) return false;
    Tensorflow__SummaryMetadata__PluginData pd = TENSORFLOW__SUMMARY_METADATA__PLUGIN_DATA__INIT;
    Tensorflow__SummaryMetadata md = TENSORFLOW__SUMMARY_METADATA__INIT;
    Tensorflow__Summary__Value v = TENSORFLOW__SUMMARY__VALUE__INIT, *vp = &v;
    Tensorflow__Summary sum = TENSORFLOW__SUMMARY__INIT;
    Tensorflow__Event ev = TENSORFLOW__EVENT__INIT;
    v.tag = (char *)tag;
    v.value_case = TENSORFLOW__SUMMARY__VALUE__VALUE_TENSOR;
    v.tensor = tp;
    if (plugin) {
        pd.plugin_name = (char *)plugin;
        pd.content = (ProtobufCBinaryData){content_len, (uint8_t *)content};
        md.plugin_data = &pd;
        if (description) md.summary_description = (char *)description;
        v.metadata = &md;
    }
    sum.n_value = 1;
    sum.value = &vp;
    ev.step = s;
    ev.what_case = TENSORFLOW__EVENT__WHAT_SUMMARY;
    ev.summary = &sum;
    return summary_writer_add(w, &ev, st);
}

bool tfc_summary_write_scalar(tfc_summary_writer *w, const char *tag, double value, int64_t step,
                              const char *description, tfc_status *st) {
    float f = (float)value;
    tensor_msg m;
    tensor_msg_init(&m, TFC_FLOAT, NULL, 0);
    m.tp.tensor_content = (ProtobufCBinaryData){sizeof f, (uint8_t *)&f};
    return write_value(w, "tf.summary.scalar", tag, step, &m.tp, "scalars", NULL, 0, description, st);
}

static bool real_dtype(tfc_dtype dt) { return tfc_dtype_is_floating(dt) || tfc_dtype_is_integer(dt) || dt == TFC_BOOL; }

bool tfc_summary_write_histogram(tfc_summary_writer *w, const char *tag, const tfc_tensor *data, int64_t step,
                                 int buckets, const char *description, tfc_status *st) {
    const char *what = "tf.summary.histogram";
    if (!data) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s '%s': NULL data", what, tag ? tag : "");
    tfc_dtype dt = tfc_tensor_dtype(data);
    if (!real_dtype(dt))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s '%s': data of dtype %s cannot be cast to float64", what,
                              tag ? tag : "", tfc_dtype_name(dt));
    int64_t k = buckets > 0 ? buckets : 30, n = tfc_tensor_num_elements(data);
    double *rows = tfc_calloc((size_t)k * 3, sizeof *rows);
    if (!rows) return tfc_status_oom(st, what, (size_t)k * 3 * sizeof *rows);
    if (n > 0) {
        double lo = INFINITY, hi = -INFINITY;
        for (int64_t i = 0; i < n; i++) {
            double x = tfc_tensor_get_f64(data, i);
            lo = x < lo ? x : lo;
            hi = x > hi ? x : hi;
        }
        double range = hi - lo;
        if (range == 0) { /* one distinct value: every edge at it, the count in the last bucket */
            for (int64_t b = 0; b < k; b++) rows[3 * b] = rows[3 * b + 1] = hi;
            rows[3 * (k - 1) + 2] = (double)n;
        } else {
            double width = range / (double)k;
            for (int64_t i = 0; i < n; i++) {
                double q = floor((tfc_tensor_get_f64(data, i) - lo) / width);
                if (q != q) continue; /* NaN (or an infinite range): counted nowhere */
                int64_t b = q >= (double)(k - 1) ? k - 1 : q < 0 ? 0 : (int64_t)q;
                rows[3 * b + 2] += 1;
            }
            /* edges: tf.linspace(min, max, k + 1) (start + i * step), the last one the max itself */
            double delta = range / (double)k;
            for (int64_t b = 0; b < k; b++) {
                rows[3 * b] = lo + delta * (double)b;
                rows[3 * b + 1] = b + 1 == k ? hi : lo + delta * (double)(b + 1);
            }
        }
    }
    tensor_msg m;
    int64_t dims[2] = {k, 3};
    tensor_msg_init(&m, TFC_DOUBLE, dims, 2);
    m.tp.tensor_content = (ProtobufCBinaryData){(size_t)k * 3 * sizeof *rows, (uint8_t *)rows};
    bool ok = write_value(w, what, tag, step, &m.tp, "histograms", NULL, 0, description, st);
    tfc_free(rows);
    return ok;
}

/* A string TensorProto over n borrowed byte strings. */
static bool write_strings(tfc_summary_writer *w, const char *what, const char *tag, int64_t step,
                          const int64_t *dims, int rank, ProtobufCBinaryData *strs, size_t n, const char *plugin,
                          const char *description, tfc_status *st) {
    tensor_msg m;
    tensor_msg_init(&m, TFC_STRING, dims, rank);
    m.tp.n_string_val = n;
    m.tp.string_val = strs;
    return write_value(w, what, tag, step, &m.tp, plugin, NULL, 0, description, st);
}

static ProtobufCBinaryData *string_elems(const tfc_tensor *t, size_t *n, tfc_status *st) {
    int64_t cnt = tfc_tensor_num_elements(t);
    ProtobufCBinaryData *s = tfc_calloc(cnt ? (size_t)cnt : 1, sizeof *s);
    if (!s) {
        tfc_status_oom(st, "summary strings", (size_t)cnt * sizeof *s);
        return NULL;
    }
    for (int64_t i = 0; i < cnt; i++) {
        size_t len = 0;
        const char *p = tfc_tensor_string(t, i, &len);
        s[i] = (ProtobufCBinaryData){len, (uint8_t *)p};
    }
    *n = (size_t)cnt;
    return s;
}

bool tfc_summary_write_text(tfc_summary_writer *w, const char *tag, const tfc_tensor *data, int64_t step,
                            const char *description, tfc_status *st) {
    if (!data || tfc_tensor_dtype(data) != TFC_STRING)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "tf.summary.text '%s': data must be a string tensor, got %s",
                              tag ? tag : "", data ? tfc_dtype_name(tfc_tensor_dtype(data)) : "NULL");
    size_t n = 0;
    ProtobufCBinaryData *s = string_elems(data, &n, st);
    if (!s) return false;
    const tfc_shape *sh = tfc_tensor_shape(data);
    bool ok = write_strings(w, "tf.summary.text", tag, step, sh->dims, sh->rank, s, n, "text", description, st);
    tfc_free(s);
    return ok;
}

/* uint8 pixel of element i (convert_image_dtype(uint8, saturate=True) for floats: x * 255.5, clipped,
 * truncated; float32 math for float32/half/bfloat16, float64 for float64). */
static uint8_t to_u8(const tfc_tensor *t, tfc_dtype dt, int64_t i) {
    if (dt == TFC_UINT8) return ((const uint8_t *)tfc_tensor_data(t))[i];
    double x;
    if (dt == TFC_DOUBLE) x = tfc_tensor_get_f64(t, i) * 255.5;
    else x = (double)((float)tfc_tensor_get_f64(t, i) * 255.5f);
    if (!(x > 0)) return 0; /* NaN too */
    return x >= 255 ? 255 : (uint8_t)x;
}

bool tfc_summary_write_image(tfc_summary_writer *w, tfc_ctx *ctx, const char *tag, const tfc_tensor *data,
                             int64_t step, int max_outputs, const char *description, tfc_status *st) {
    const char *what = "tf.summary.image";
    if (!data) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s '%s': NULL data", what, tag ? tag : "");
    tfc_dtype dt = tfc_tensor_dtype(data);
    const tfc_shape *sh = tfc_tensor_shape(data);
    if (sh->rank != 4 || (sh->dims[3] != 1 && sh->dims[3] != 3 && sh->dims[3] != 4))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s '%s': data must have shape [k, h, w, c] with c in "
                              "{1, 3, 4}, got rank %d", what, tag ? tag : "", sh->rank);
    if (dt != TFC_UINT8 && !tfc_dtype_is_floating(dt))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s '%s': data must be uint8 or floating, got %s", what,
                              tag ? tag : "", tfc_dtype_name(dt));
    if (!ctx) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s '%s': NULL context", what, tag ? tag : "");
    int64_t k = sh->dims[0], h = sh->dims[1], wd = sh->dims[2], c = sh->dims[3];
    int64_t n = k < (max_outputs > 0 ? max_outputs : 3) ? k : (max_outputs > 0 ? max_outputs : 3);
    int64_t per = h * wd * c;
    char wstr[24], hstr[24];
    snprintf(wstr, sizeof wstr, "%lld", (long long)wd);
    snprintf(hstr, sizeof hstr, "%lld", (long long)h);
    ProtobufCBinaryData *s = tfc_calloc((size_t)n + 2, sizeof *s);
    uint8_t *px = tfc_malloc(per ? (size_t)per : 1);
    bool ok = s && px;
    if (!ok) tfc_status_oom(st, what, (size_t)per);
    if (ok) {
        s[0] = (ProtobufCBinaryData){strlen(wstr), (uint8_t *)wstr};
        s[1] = (ProtobufCBinaryData){strlen(hstr), (uint8_t *)hstr};
    }
    int64_t made = 0;
    for (int64_t i = 0; i < n && ok; i++) {
        for (int64_t j = 0; j < per; j++) px[j] = to_u8(data, dt, i * per + j);
        int64_t idims[3] = {h, wd, c};
        if (!(ok = tfc_scope_begin(ctx, st))) break;
        tfc_tensor *img = tfc_tensor_from_data(TFC_UINT8, idims, 3, px, (size_t)per, st), *png = NULL;
        if ((ok = img && (png = tfc_encode_png(ctx, img, -1, st)))) {
            size_t len = 0;
            const char *p = tfc_tensor_string(png, 0, &len);
            uint8_t *copy = tfc_malloc(len ? len : 1);
            if ((ok = copy != NULL)) {
                memcpy(copy, p, len);
                s[2 + i] = (ProtobufCBinaryData){len, copy};
                made++;
            } else {
                tfc_status_oom(st, what, len);
            }
        }
        tfc_scope_end(ctx);
        tfc_tensor_unref(img);
    }
    if (ok) {
        int64_t dims[1] = {n + 2};
        ok = write_strings(w, what, tag, step, dims, 1, s, (size_t)n + 2, "images", description, st);
    }
    for (int64_t i = 0; i < made; i++) tfc_free(s[2 + i].data);
    tfc_free(s);
    tfc_free(px);
    return ok;
}

bool tfc_summary_write_tensor(tfc_summary_writer *w, const char *tag, const tfc_tensor *data, int64_t step,
                              const char *plugin_name, const void *plugin_content, size_t content_len,
                              const char *description, tfc_status *st) {
    const char *what = "tf.summary.write";
    if (!data) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s '%s': NULL tensor", what, tag ? tag : "");
    tfc_dtype dt = tfc_tensor_dtype(data);
    const tfc_shape *sh = tfc_tensor_shape(data);
    if (dt == TFC_STRING) {
        size_t n = 0;
        ProtobufCBinaryData *s = string_elems(data, &n, st);
        if (!s) return false;
        tensor_msg m;
        tensor_msg_init(&m, dt, sh->dims, sh->rank);
        m.tp.n_string_val = n;
        m.tp.string_val = s;
        bool ok = write_value(w, what, tag, step, &m.tp, plugin_name, plugin_content, content_len, description, st);
        tfc_free(s);
        return ok;
    }
    if (!real_dtype(dt))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s '%s': dtype %s cannot be written", what, tag ? tag : "",
                              tfc_dtype_name(dt));
    tensor_msg m;
    tensor_msg_init(&m, dt, sh->dims, sh->rank);
    m.tp.tensor_content = (ProtobufCBinaryData){tfc_tensor_byte_size(data), (uint8_t *)tfc_tensor_data(data)};
    return write_value(w, what, tag, step, &m.tp, plugin_name, plugin_content, content_len, description, st);
}

/* ---- the default writer ---------------------------------------------------------------------------------- */

#define DEFAULT_WRITE(call)                    \
    do {                                       \
        if (!summary_recording()) {            \
            tfc_status_clear(st);              \
            return false;                      \
        }                                      \
        return call;                           \
    } while (0)

bool tfc_summary_scalar(const char *name, double value, int64_t step, tfc_status *st) {
    DEFAULT_WRITE(tfc_summary_write_scalar(tfc_summary_default_writer(), name, value, step, NULL, st));
}

bool tfc_summary_histogram(const char *name, const tfc_tensor *data, int64_t step, int buckets, tfc_status *st) {
    DEFAULT_WRITE(tfc_summary_write_histogram(tfc_summary_default_writer(), name, data, step, buckets, NULL, st));
}

bool tfc_summary_image(tfc_ctx *ctx, const char *name, const tfc_tensor *data, int64_t step, int max_outputs,
                       tfc_status *st) {
    DEFAULT_WRITE(tfc_summary_write_image(tfc_summary_default_writer(), ctx, name, data, step, max_outputs, NULL, st));
}

bool tfc_summary_text(const char *name, const tfc_tensor *data, int64_t step, tfc_status *st) {
    DEFAULT_WRITE(tfc_summary_write_text(tfc_summary_default_writer(), name, data, step, NULL, st));
}

bool tfc_summary_flush(tfc_status *st) {
    tfc_summary_writer *w = tfc_summary_default_writer();
    if (!w) {
        tfc_status_clear(st);
        return true;
    }
    return tfc_summary_writer_flush(w, st);
}
