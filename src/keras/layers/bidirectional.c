/* tf.keras.layers.Bidirectional: a recurrent layer run forward and a copy of it run backward, outputs merged. */
#include <string.h>

#include "keras/layers/recurrent.h"

typedef struct {
    tfc_layer base;
    tfc_layer *fw, *bw;   /* tracked sublayers (owned through base.sublayers) */
    char merge_mode[8];   /* "concat", "sum", "mul", "ave", "none" (longer names are cut: still unknown) */
    char *inner_name;     /* the wrapped layer's own name, as its config keeps it */
    bool custom_backward;
} bidi;

static const tfc_rnn *rnn_of(const tfc_layer *l) { return tfc_rnn_is(l) ? (const tfc_rnn *)l : NULL; }

static bool bidi_check(bidi *b, tfc_status *st) {
    const char *m = b->merge_mode;
    if (strcmp(m, "concat") && strcmp(m, "sum") && strcmp(m, "mul") && strcmp(m, "ave") && strcmp(m, "none"))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "Invalid merge mode. Received: %s. Merge mode should be one of {\"sum\", \"mul\", "
                              "\"ave\", \"concat\", None}",
                              m);
    if (!rnn_of(b->fw) || !rnn_of(b->bw))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "Layer \"%s\": Bidirectional wraps SimpleRNN, LSTM or GRU layers; received %s",
                              b->base.name, tfc_layer_class_name(rnn_of(b->fw) ? b->bw : b->fw));
    const tfc_rnn *f = rnn_of(b->fw), *r = rnn_of(b->bw);
    if (f->go_backwards == r->go_backwards || f->return_sequences != r->return_sequences ||
        f->return_state != r->return_state)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "Layer \"%s\": the backward layer must have the opposite go_backwards and the same "
                              "return_sequences and return_state as the forward layer",
                              b->base.name);
    return true;
}

static bool bidi_output_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out,
                              tfc_status *st) {
    bidi *b = (bidi *)l;
    if (!bidi_check(b, st)) return false;
    int ns = tfc_rnn_n_states(rnn_of(b->fw));
    if (n_in != 1 && n_in != 1 + 2 * ns)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "Layer \"%s\" expects 1 input (or 1 + %d initial states), but it received %d input "
                              "tensors",
                              l->name, 2 * ns, n_in);
    tfc_shape fo[TFC_KERAS_MAX_IO], bo[TFC_KERAS_MAX_IO], fi[3] = {in[0]}, bi[3] = {in[0]};
    for (int i = 0; i + 1 < n_in; i++) (i < ns ? fi : bi)[1 + i % ns] = in[1 + i];
    int nf = TFC_KERAS_MAX_IO, nb = TFC_KERAS_MAX_IO, n_sub = n_in == 1 ? 1 : 1 + ns;
    if (!b->fw->cls->compute_output_shape(b->fw, fi, n_sub, fo, &nf, st) ||
        !b->bw->cls->compute_output_shape(b->bw, bi, n_sub, bo, &nb, st))
        return false;
    int n = 0;
    if (!strcmp(b->merge_mode, "none")) {
        out[n++] = fo[0];
        out[n++] = bo[0];
    } else {
        out[n] = fo[0];
        if (!strcmp(b->merge_mode, "concat")) out[n].dims[out[n].rank - 1] += bo[0].dims[bo[0].rank - 1];
        n++;
    }
    for (int i = 1; i < nf; i++) out[n++] = fo[i];
    for (int i = 1; i < nb; i++) out[n++] = bo[i];
    *n_out = n;
    return true;
}

/* Builds a sublayer under the name "<outer>/<sub>" so that its variables get Keras's names, then restores it. */
static bool build_sub(tfc_layer *outer, tfc_layer *sub, tfc_ctx *ctx, const tfc_shape *in, int n_in,
                      tfc_status *st) {
    size_t n = strlen(outer->name) + strlen(sub->name) + 2;
    char *scoped = tfc_malloc(n), *own = sub->name;
    if (!scoped) return tfc_status_oom(st, outer->name, n);
    snprintf(scoped, n, "%s/%s", outer->name, own);
    sub->name = scoped;
    bool ok = tfc_layer_build(sub, ctx, in, n_in, st);
    sub->name = own;
    tfc_free(scoped);
    return ok;
}

static bool bidi_build(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st) {
    bidi *b = (bidi *)l;
    int ns = tfc_rnn_n_states(rnn_of(b->fw)), n_sub = n_in == 1 ? 1 : 1 + ns;
    tfc_shape fi[3] = {in[0]}, bi[3] = {in[0]};
    for (int i = 0; i + 1 < n_in; i++) (i < ns ? fi : bi)[1 + i % ns] = in[1 + i];
    if (!build_sub(l, b->fw, ctx, fi, n_sub, st) || !build_sub(l, b->bw, ctx, bi, n_sub, st)) return false;
    l->input_spec[0] = b->fw->input_spec[0];
    for (int i = 1; i < n_in; i++) l->input_spec[i] = b->fw->input_spec[1];
    l->has_input_spec = true;
    return true;
}

static tfc_tensor *merge(bidi *b, tfc_ctx *ctx, tfc_tensor *y, tfc_tensor *yb, tfc_status *st) {
    const char *m = b->merge_mode;
    if (!strcmp(m, "concat")) {
        tfc_tensor *axis = tfc_scalar_i32(-1, st);
        tfc_attr a = TFC_ATTR_I("N", 2);
        tfc_tensor *r = axis ? tfc_emit(ctx, "ConcatV2", (tfc_tensor *[]){y, yb, axis}, 3, &a, 1, st) : NULL;
        tfc_tensor_unref(axis);
        return r;
    }
    tfc_tensor *r = tfc_emit(ctx, !strcmp(m, "mul") ? "Mul" : "AddV2", (tfc_tensor *[]){y, yb}, 2, NULL, 0, st);
    if (!r || strcmp(m, "ave")) return r;
    tfc_tensor *half = tfc_scalar(tfc_tensor_dtype(r), 0.5, st);
    tfc_tensor *avg = half ? tfc_emit(ctx, "Mul", (tfc_tensor *[]){r, half}, 2, NULL, 0, st) : NULL;
    tfc_tensor_unref(half);
    return avg;
}

static bool bidi_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                      bool training, tfc_status *st) {
    bidi *b = (bidi *)l;
    const tfc_rnn *f = rnn_of(b->fw);
    int ns = tfc_rnn_n_states(f), n_sub = 1 + (f->return_state ? ns : 0), n_sub_in = n_in == 1 ? 1 : 1 + ns;
    bool none = !strcmp(b->merge_mode, "none");
    int avail = (none ? 2 : 1) + 2 * (n_sub - 1);
    if (n_out > avail)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\" has %d output(s); %d requested", l->name, avail,
                              n_out);
    tfc_tensor *fi[3] = {in[0]}, *bi[3] = {in[0]}, *fo[3] = {NULL}, *bo[3] = {NULL};
    for (int i = 0; i + 1 < n_in; i++) (i < ns ? fi : bi)[1 + i % ns] = in[1 + i];
    if (!tfc_layer_call(b->fw, ctx, fi, n_sub_in, fo, n_sub, training, st) ||
        !tfc_layer_call(b->bw, ctx, bi, n_sub_in, bo, n_sub, training, st))
        return false;
    tfc_tensor *yb = bo[0];
    if (f->return_sequences) {
        tfc_tensor *axis = tfc_vec_i32((int32_t[]){f->time_major ? 0 : 1}, 1, st);
        yb = axis ? tfc_emit(ctx, "ReverseV2", (tfc_tensor *[]){yb, axis}, 2, NULL, 0, st) : NULL;
        tfc_tensor_unref(axis);
        if (!yb) return false;
    }
    tfc_tensor *all[2 + 4];
    int n = 0;
    if (none) {
        all[n++] = fo[0];
        all[n++] = yb;
    } else if (!(all[n++] = merge(b, ctx, fo[0], yb, st))) {
        return false;
    }
    for (int i = 1; i < n_sub; i++) all[n++] = fo[i];
    for (int i = 1; i < n_sub; i++) all[n++] = bo[i];
    for (int i = 0; i < n_out; i++) out[i] = all[i];
    return true;
}

static cJSON *sub_config(const tfc_layer *sub, const char *name, tfc_status *st) {
    cJSON *c = tfc_layer_config_json(sub, st), *w = c ? cJSON_CreateObject() : NULL;
    if (!w || !cJSON_ReplaceItemInObject(c, "name", cJSON_CreateString(name)) ||
        !cJSON_AddStringToObject(w, "class_name", tfc_layer_class_name(sub)) || !cJSON_AddItemToObject(w, "config", c)) {
        if (!w || !cJSON_GetObjectItem(w, "config")) cJSON_Delete(c);
        cJSON_Delete(w);
        if (st->code == TFC_OK) tfc_status_oom(st, "Bidirectional config", 0);
        return NULL;
    }
    return w;
}

static bool bidi_get_config(const tfc_layer *l, void *vcfg, tfc_status *st) {
    const bidi *b = (const bidi *)l;
    cJSON *cfg = vcfg, *inner = sub_config(b->fw, b->inner_name, st);
    if (!inner || !cJSON_AddItemToObject(cfg, "layer", inner)) return cJSON_Delete(inner), false;
    bool ok = !strcmp(b->merge_mode, "none") ? cJSON_AddNullToObject(cfg, "merge_mode") != NULL
                                              : cJSON_AddStringToObject(cfg, "merge_mode", b->merge_mode) != NULL;
    if (ok && b->custom_backward) {
        cJSON *bw = sub_config(b->bw, b->bw->name, st);
        ok = bw && cJSON_AddItemToObject(cfg, "backward_layer", bw);
        if (!ok) cJSON_Delete(bw);
    }
    return ok;
}

static void bidi_destroy(tfc_layer *l) { tfc_free(((bidi *)l)->inner_name); }

static const tfc_layer_class bidi_class = {
    .class_name = "Bidirectional",
    .size = sizeof(bidi),
    .build = bidi_build,
    .compute_output_shape = bidi_output_shape,
    .call = bidi_call,
    .get_config = bidi_get_config,
    .destroy = bidi_destroy,
};

static bool rename_layer(tfc_layer *l, const char *prefix, const char *base) {
    size_t n = strlen(prefix) + strlen(base) + 1;
    char *s = tfc_malloc(n);
    if (!s) return false;
    snprintf(s, n, "%s%s", prefix, base);
    tfc_free(l->name);
    l->name = s;
    return true;
}

/* A copy of the layer from its config with go_backwards flipped (Keras's default backward layer). */
static tfc_layer *backward_copy(const tfc_layer *fw, tfc_status *st) {
    cJSON *c = tfc_layer_config_json(fw, st);
    if (!c) return NULL;
    const cJSON *gb = cJSON_GetObjectItem(c, "go_backwards");
    cJSON_ReplaceItemInObject(c, "go_backwards", cJSON_CreateBool(!cJSON_IsTrue(gb)));
    tfc_layer *l = tfc_layer_from_config_json(tfc_layer_class_name(fw), c, st);
    cJSON_Delete(c);
    return l;
}

tfc_layer *tfc_layers_bidirectional_new(const tfc_bidirectional_opts *o) {
    tfc_status st = TFC_STATUS_INIT;
    if (!o->layer) {
        if (o->backward_layer) tfc_layer_unref(tfc_layer_take(o->backward_layer));
        return NULL;
    }
    bidi *b = TFC_LAYER_NEW(bidi, &bidi_class, o);
    tfc_layer *fw = tfc_layer_take(o->layer);
    tfc_layer *bw = o->backward_layer ? tfc_layer_take(o->backward_layer) : NULL;
    bool ok = b && (b->inner_name = tfc_strdup(fw->name)) != NULL;
    if (ok && !bw) ok = (bw = backward_copy(fw, &st)) != NULL && (bw = tfc_layer_take(bw));
    if (ok) {
        b->custom_backward = o->backward_layer != NULL;
        snprintf(b->merge_mode, sizeof b->merge_mode, "%s", o->merge_mode ? o->merge_mode : "concat");
        char *bname = tfc_strdup(bw->name);
        ok = bname && rename_layer(fw, "forward_", b->inner_name) && rename_layer(bw, "backward_", bname) &&
             tfc_layer_track(&b->base, fw, &st) && tfc_layer_track(&b->base, bw, &st);
        tfc_free(bname);
    }
    if (ok) b->fw = fw, b->bw = bw;
    tfc_layer_unref(fw); /* the tracked references keep them */
    tfc_layer_unref(bw);
    if (!ok) {
        tfc_layer_unref(b ? &b->base : NULL);
        return NULL;
    }
    return &b->base;
}

tfc_layer *tfc_keras_from_config_bidirectional(const cJSON *cfg, tfc_status *st) {
    tfc_layer_common_cfg c;
    if (!tfc_json_get_common(cfg, &c, st)) return NULL;
    tfc_bidirectional_opts o = {0};
    TFC_COMMON_TO_OPTS(c, o);
    const cJSON *inner = cJSON_GetObjectItem(cfg, "layer"), *bw = cJSON_GetObjectItem(cfg, "backward_layer");
    const cJSON *mm = cJSON_GetObjectItem(cfg, "merge_mode");
    if (!cJSON_IsObject(inner) || !cJSON_IsString(cJSON_GetObjectItem(inner, "class_name"))) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Bidirectional: the config has no \"layer\" {class_name, config}");
        return NULL;
    }
    o.merge_mode = cJSON_IsString(mm) ? mm->valuestring : mm && cJSON_IsNull(mm) ? "none" : NULL;
    o.layer = tfc_layer_from_config_json(cJSON_GetObjectItem(inner, "class_name")->valuestring,
                                         cJSON_GetObjectItem(inner, "config"), st);
    if (!o.layer) return NULL;
    if (cJSON_IsObject(bw) && cJSON_IsString(cJSON_GetObjectItem(bw, "class_name"))) {
        o.backward_layer = tfc_layer_from_config_json(cJSON_GetObjectItem(bw, "class_name")->valuestring,
                                                      cJSON_GetObjectItem(bw, "config"), st);
        if (!o.backward_layer) return tfc_layer_unref(o.layer), NULL;
    }
    tfc_layer *l = tfc_layers_bidirectional_new(&o);
    if (!l) tfc_status_oom(st, "Bidirectional", sizeof(bidi));
    return l;
}
