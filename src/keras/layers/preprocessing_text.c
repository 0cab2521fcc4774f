/* tf.keras.layers.TextVectorization: standardize (ASCII lowering as tf.strings.lower, the removal of ASCII
 * punctuation as Keras's DEFAULT_STRIP_REGEX), split (whitespace as tf.strings.split, characters as
 * tf.strings.unicode_split), ngrams joined by " " (tf.strings.ngrams), then an inner StringLookup with mask "" and
 * one OOV slot. Rows of tokens are padded with "" (the mask, index 0 or dropped) into a dense [batch, length]
 * string tensor before the lookup. */
#include <string.h>

#include "keras/layers/preprocessing_internal.h"

enum { STD_NONE, STD_LOWER_AND_STRIP, STD_LOWER, STD_STRIP };
enum { SPLIT_NONE, SPLIT_WHITESPACE, SPLIT_CHARACTER };
static const char *const STD_NAMES[] = {NULL, "lower_and_strip_punctuation", "lower", "strip_punctuation"};
static const char *const SPLIT_NAMES[] = {NULL, "whitespace", "character"};

#define TV_MODES ((1u << TFC_PREP_INT) | (1u << TFC_PREP_MULTI_HOT) | (1u << TFC_PREP_COUNT) | (1u << TFC_PREP_TF_IDF))

typedef struct {
    tfc_layer base;
    tfc_layer *lookup;             /* the inner StringLookup (owned reference) */
    int standardize, split;
    char bad_arg[96];              /* an invalid standardize/split/output_mode, reported at build/call/adapt */
    int64_t ngrams[8];
    int n_ngrams;                  /* 0 = None */
    bool ngrams_is_int;            /* ngrams=k given as an int (k = ngrams[n_ngrams - 1]) */
    tfc_prep_mode mode;
    int64_t seq_len;               /* output_sequence_length; 0 = None */
} text_vectorization;

extern const tfc_prep_class tfc_prep_text_vectorization_class;

tfc_layer *tfc_prep_text_lookup(const tfc_layer *l) {
    return l && l->cls == &tfc_prep_text_vectorization_class.base ? ((const text_vectorization *)l)->lookup : NULL;
}

static bool tv_check(text_vectorization *t, tfc_status *st) {
    if (t->bad_arg[0]) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": %s", t->base.name, t->bad_arg);
    if (t->mode != TFC_PREP_INT && t->seq_len)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": `output_sequence_length` must not be set if "
                              "`output_mode` is not 'int'. Received output_sequence_length=%lld.", t->base.name,
                              (long long)t->seq_len);
    if (t->n_ngrams && t->split == SPLIT_NONE)
        return tfc_status_set(st, TFC_UNIMPLEMENTED, "Layer \"%s\": ngrams without a split are not supported",
                              t->base.name);
    return true;
}

static bool tv_output_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out, tfc_status *st) {
    text_vectorization *t = (text_vectorization *)l;
    if (!tfc_keras_expect_inputs(l, n_in, 1, st) || !tv_check(t, st)) return false;
    const tfc_shape *s = &in[0];
    if (t->split != SPLIT_NONE && s->rank > 1 && (s->rank != 2 || (s->dims[1] != 1 && s->dims[1] >= 0)))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": When using `TextVectorization` to tokenize "
                              "strings, the input rank must be 1 or the last shape dimension must be 1. Received: "
                              "inputs.shape=%s with rank=%d", l->name, TFC_KSHP(s), s->rank);
    *n_out = 1;
    int64_t batch = s->rank > 0 ? s->dims[0] : 1;
    if (t->mode == TFC_PREP_INT) {
        if (t->split == SPLIT_NONE) out[0] = *s;
        else out[0] = (tfc_shape){.rank = 2, .dims = {batch, t->seq_len ? t->seq_len : -1}};
        return true;
    }
    int64_t depth = tfc_lookup_vocabulary_size(t->lookup);
    out[0] = (tfc_shape){.rank = 2, .dims = {batch, depth}};
    return true;
}

static bool tv_build(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st) {
    l->input_spec[0] = (tfc_input_spec){.ndim = -1};
    l->has_input_spec = true;
    return true;
}

/* ---- preprocessing ---- */

typedef struct {
    char **s;
    size_t *len;
    int64_t n, cap;
} toks;

static bool tok_push(toks *k, const char *s, size_t n, tfc_status *st) {
    if (k->n == k->cap) {
        int64_t cap = k->cap ? k->cap * 2 : 64;
        char **a = tfc_realloc(k->s, (size_t)cap * sizeof *a);
        if (!a) return tfc_status_oom(st, "TextVectorization tokens", (size_t)cap * sizeof *a);
        k->s = a;
        size_t *b = tfc_realloc(k->len, (size_t)cap * sizeof *b);
        if (!b) return tfc_status_oom(st, "TextVectorization tokens", (size_t)cap * sizeof *b);
        k->len = b;
        k->cap = cap;
    }
    char *c = tfc_malloc(n + 1);
    if (!c) return tfc_status_oom(st, "TextVectorization token", n + 1);
    if (n) memcpy(c, s, n);
    c[n] = 0;
    k->s[k->n] = c;
    k->len[k->n++] = n;
    return true;
}

static void tok_free(toks *k) {
    for (int64_t i = 0; i < k->n; i++) tfc_free(k->s[i]);
    tfc_free(k->s);
    tfc_free(k->len);
}

static bool is_punct(unsigned char c) { return c < 128 && strchr("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", c) && c; }
static bool is_space(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

/* Standardizes s[0..n) into a new buffer (out_len). */
static char *standardize(const text_vectorization *t, const char *s, size_t n, size_t *out_len) {
    char *o = tfc_malloc(n + 1);
    if (!o) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((t->standardize == STD_LOWER_AND_STRIP || t->standardize == STD_STRIP) && is_punct(c)) continue;
        if ((t->standardize == STD_LOWER_AND_STRIP || t->standardize == STD_LOWER) && c >= 'A' && c <= 'Z') c += 32;
        o[k++] = (char)c;
    }
    o[k] = 0;
    *out_len = k;
    return o;
}

/* Length of the UTF-8 sequence at s (n bytes left), 0 when invalid. */
static size_t utf8_len(const unsigned char *s, size_t n) {
    size_t want = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3 : (s[0] & 0xf8) == 0xf0 ? 4 : 0;
    if (!want || want > n || (want == 2 && s[0] < 0xc2)) return 0;
    for (size_t i = 1; i < want; i++)
        if ((s[i] & 0xc0) != 0x80) return 0;
    return want;
}

/* Splits one standardized string into row tokens (then ngrams), appended to out. */
static bool split_row(const text_vectorization *t, const char *s, size_t n, toks *out, tfc_status *st) {
    toks w = {0};
    bool ok = true;
    if (t->split == SPLIT_WHITESPACE) {
        for (size_t i = 0; ok && i < n;) {
            while (i < n && is_space((unsigned char)s[i])) i++;
            size_t j = i;
            while (j < n && !is_space((unsigned char)s[j])) j++;
            if (j > i) ok = tok_push(&w, s + i, j - i, st);
            i = j;
        }
    } else {
        for (size_t i = 0; ok && i < n;) {
            size_t k = utf8_len((const unsigned char *)s + i, n - i);
            ok = k ? tok_push(&w, s + i, k, st) : tok_push(&w, "\xef\xbf\xbd", 3, st); /* U+FFFD per bad byte */
            i += k ? k : 1;
        }
    }
    if (ok && !t->n_ngrams)
        for (int64_t i = 0; ok && i < w.n; i++) ok = tok_push(out, w.s[i], w.len[i], st);
    for (int g = 0; ok && g < t->n_ngrams; g++) {
        int64_t width = t->ngrams[g];
        for (int64_t i = 0; ok && width > 0 && i + width <= w.n; i++) {
            size_t total = (size_t)(width - 1);
            for (int64_t k = 0; k < width; k++) total += w.len[i + k];
            char *buf = tfc_malloc(total + 1);
            if (!buf) {
                ok = tfc_status_oom(st, "TextVectorization ngram", total + 1);
                break;
            }
            size_t o = 0;
            for (int64_t k = 0; k < width; k++) {
                if (k) buf[o++] = ' ';
                memcpy(buf + o, w.s[i + k], w.len[i + k]);
                o += w.len[i + k];
            }
            ok = tok_push(out, buf, total, st);
            tfc_free(buf);
        }
    }
    tok_free(&w);
    return ok;
}

/* The lookup's input for x: standardized strings of x's shape (split None), or the rows' tokens padded with "" to
 * [batch, length] (length: seq_len when pad_to is set, else the longest row). A new caller-owned tensor. */
static tfc_tensor *preprocess(text_vectorization *t, tfc_tensor *x, int64_t pad_to, tfc_status *st) {
    tfc_layer *l = &t->base;
    if (tfc_tensor_dtype(x) != TFC_STRING) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": expected string inputs, got %s", l->name,
                       tfc_dtype_name(tfc_tensor_dtype(x)));
        return NULL;
    }
    const tfc_shape *s = tfc_tensor_shape(x);
    int64_t n = tfc_tensor_num_elements(x);
    if (t->split != SPLIT_NONE && s->rank > 1 && (s->rank != 2 || s->dims[1] != 1)) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": When using `TextVectorization` to tokenize strings, the "
                       "input rank must be 1 or the last shape dimension must be 1. Received: inputs.shape=%s with "
                       "rank=%d", l->name, TFC_KSHP(s), s->rank);
        return NULL;
    }
    toks all = {0};
    int64_t *row_end = tfc_malloc((size_t)(n ? n : 1) * sizeof *row_end);
    bool ok = row_end != NULL;
    if (!ok) tfc_status_oom(st, l->name, (size_t)n * sizeof *row_end);
    for (int64_t i = 0; ok && i < n; i++) {
        size_t len, sl;
        const char *str = tfc_tensor_string(x, i, &len);
        char *std = standardize(t, str, len, &sl);
        if (!std) ok = tfc_status_oom(st, l->name, len + 1);
        else if (t->split == SPLIT_NONE) ok = tok_push(&all, std, sl, st);
        else ok = split_row(t, std, sl, &all, st);
        tfc_free(std);
        if (ok) row_end[i] = all.n;
    }
    tfc_tensor *out = NULL;
    if (ok && t->split == SPLIT_NONE) {
        out = tfc_tensor_from_strings((const char *const *)all.s, all.len, s->dims, s->rank, st);
    } else if (ok) {
        int64_t width = 0;
        for (int64_t i = 0; i < n; i++) {
            int64_t k = row_end[i] - (i ? row_end[i - 1] : 0);
            if (k > width) width = k;
        }
        if (pad_to > 0) width = pad_to;
        int64_t cells = n * width;
        const char **p = tfc_malloc((size_t)(cells ? cells : 1) * sizeof *p);
        size_t *pl = tfc_malloc((size_t)(cells ? cells : 1) * sizeof *pl);
        if (!p || !pl) tfc_status_oom(st, l->name, (size_t)cells * sizeof *p);
        else {
            for (int64_t i = 0; i < n; i++) {
                int64_t b = i ? row_end[i - 1] : 0, k = row_end[i] - b;
                for (int64_t j = 0; j < width; j++) {
                    p[i * width + j] = j < k ? all.s[b + j] : "";
                    pl[i * width + j] = j < k ? all.len[b + j] : 0;
                }
            }
            out = tfc_tensor_from_strings(p, pl, (int64_t[]){n, width}, 2, st);
        }
        tfc_free(p);
        tfc_free(pl);
    }
    tfc_free(row_end);
    tok_free(&all);
    return out;
}

static bool tv_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                    bool training, tfc_status *st) {
    text_vectorization *t = (text_vectorization *)l;
    if (!tv_check(t, st)) return false;
    tfc_tensor *tokens = preprocess(t, in[0], t->mode == TFC_PREP_INT ? t->seq_len : 0, st);
    if (!tokens) return false;
    out[0] = tfc_layer_call1(t->lookup, ctx, tokens, false, st);
    tfc_tensor_unref(tokens);
    return out[0] != NULL;
}

/* ---- adapt: the inner lookup's, on preprocessed batches ---- */

static const tfc_prep_class *inner(const text_vectorization *t) { return tfc_prep_class_of(t->lookup); }

static bool tv_adapt_begin(tfc_layer *l, tfc_status *st) {
    text_vectorization *t = (text_vectorization *)l;
    return tv_check(t, st) && inner(t)->adapt_begin(t->lookup, st);
}

static bool tv_adapt_update(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *batch, tfc_status *st) {
    text_vectorization *t = (text_vectorization *)l;
    tfc_tensor *tokens = preprocess(t, batch, 0, st);
    bool ok = tokens && inner(t)->adapt_update(t->lookup, ctx, tokens, st);
    tfc_tensor_unref(tokens);
    return ok;
}

static bool tv_adapt_finish(tfc_layer *l, tfc_ctx *ctx, tfc_status *st) {
    text_vectorization *t = (text_vectorization *)l;
    return inner(t)->adapt_finish(t->lookup, ctx, st);
}

static void tv_adapt_abort(tfc_layer *l) {
    text_vectorization *t = (text_vectorization *)l;
    if (inner(t)->adapt_abort) inner(t)->adapt_abort(t->lookup);
}

/* ---- config ---- */

static cJSON *name_or_null(const char *s) { return s ? cJSON_CreateString(s) : cJSON_CreateNull(); }

static bool tv_get_config(const tfc_layer *l, void *vcfg, tfc_status *st) {
    const text_vectorization *t = (const text_vectorization *)l;
    cJSON *cfg = vcfg;
    /* the lookup's config carries max_tokens, pad_to_max_tokens, sparse, vocabulary and idf_weights */
    cJSON *lc = tfc_layer_config_json(t->lookup, st);
    if (!lc) return false;
    cJSON *ng;
    if (!t->n_ngrams) ng = cJSON_CreateNull();
    else if (t->ngrams_is_int) ng = cJSON_CreateNumber((double)t->ngrams[t->n_ngrams - 1]);
    else ng = tfc_json_int_array(t->ngrams, t->n_ngrams);
    bool ok = cJSON_ReplaceItemInObject(cfg, "dtype", cJSON_CreateString("string"));
    const char *keys[] = {"max_tokens", NULL};
    for (int i = 0; ok && keys[i]; i++)
        ok = cJSON_AddItemToObject(cfg, keys[i], cJSON_DetachItemFromObject(lc, keys[i]));
    ok = ok && cJSON_AddItemToObject(cfg, "standardize", name_or_null(STD_NAMES[t->standardize])) &&
         cJSON_AddItemToObject(cfg, "split", name_or_null(SPLIT_NAMES[t->split])) && ng &&
         cJSON_AddItemToObject(cfg, "ngrams", ng);
    if (!ok) cJSON_Delete(ng);
    const char *tail[] = {"pad_to_max_tokens", "sparse", NULL};
    ok = ok && cJSON_AddStringToObject(cfg, "output_mode", tfc_prep_mode_name(t->mode)) &&
         (t->seq_len ? cJSON_AddNumberToObject(cfg, "output_sequence_length", (double)t->seq_len)
                     : cJSON_AddNullToObject(cfg, "output_sequence_length"));
    for (int i = 0; ok && tail[i]; i++) ok = cJSON_AddItemToObject(cfg, tail[i], cJSON_DetachItemFromObject(lc, tail[i]));
    ok = ok && cJSON_AddBoolToObject(cfg, "ragged", false) &&
         cJSON_AddItemToObject(cfg, "vocabulary", cJSON_DetachItemFromObject(lc, "vocabulary")) &&
         cJSON_AddItemToObject(cfg, "idf_weights", cJSON_DetachItemFromObject(lc, "idf_weights")) &&
         cJSON_AddStringToObject(cfg, "encoding", "utf-8") &&
         cJSON_AddNumberToObject(cfg, "vocabulary_size", (double)tfc_lookup_vocabulary_size(t->lookup));
    cJSON_Delete(lc);
    return ok;
}

static void tv_destroy(tfc_layer *l) { tfc_layer_unref(((text_vectorization *)l)->lookup); }

const tfc_prep_class tfc_prep_text_vectorization_class = {
    .base = {.class_name = "TextVectorization", .size = sizeof(text_vectorization), .build = tv_build,
             .compute_output_shape = tv_output_shape, .call = tv_call, .get_config = tv_get_config,
             .destroy = tv_destroy},
    .adapt_begin = tv_adapt_begin, .adapt_update = tv_adapt_update, .adapt_finish = tv_adapt_finish,
    .adapt_abort = tv_adapt_abort,
};

static int find_name(const char *const *names, int n, const char *s) {
    for (int i = 1; i < n; i++)
        if (!strcmp(names[i], s)) return i;
    return -1;
}

/* lookup_st: where a bad vocabulary is reported (from_config), or NULL to report it at the first call. */
static tfc_layer *tv_new(const tfc_text_vectorization_opts *o, tfc_status *lookup_st) {
    text_vectorization *t = TFC_LAYER_NEW(text_vectorization, &tfc_prep_text_vectorization_class.base, o);
    if (!t) return NULL;
    tfc_layer *l = &t->base;
    t->standardize = o->standardize_none ? STD_NONE : STD_LOWER_AND_STRIP;
    if (o->standardize && (t->standardize = find_name(STD_NAMES, 4, o->standardize)) < 0) {
        t->standardize = STD_NONE;
        snprintf(t->bad_arg, sizeof t->bad_arg, "Unknown value for `standardize`: %.40s", o->standardize);
    }
    t->split = o->split_none ? SPLIT_NONE : SPLIT_WHITESPACE;
    if (o->split && (t->split = find_name(SPLIT_NAMES, 3, o->split)) < 0) {
        t->split = SPLIT_NONE;
        snprintf(t->bad_arg, sizeof t->bad_arg, "Unknown value for `split`: %.40s", o->split);
    }
    if (o->ngrams_int > 0) {
        t->ngrams_is_int = true;
        t->n_ngrams = o->ngrams_int > 8 ? 8 : (int)o->ngrams_int;
        for (int i = 0; i < t->n_ngrams; i++) t->ngrams[i] = i + 1;
        if (o->ngrams_int > 8) snprintf(t->bad_arg, sizeof t->bad_arg, "ngrams > 8 is not supported");
    } else {
        t->n_ngrams = o->n_ngrams > 8 ? 8 : o->n_ngrams;
        memcpy(t->ngrams, o->ngrams, (size_t)t->n_ngrams * sizeof *t->ngrams);
    }
    tfc_status ms = TFC_STATUS_INIT;
    const char *mode = o->output_mode && !strcmp(o->output_mode, "binary") ? "multi_hot" : o->output_mode;
    if (!tfc_prep_mode_parse(l, mode, TFC_PREP_INT, TV_MODES, &t->mode, &ms))
        snprintf(t->bad_arg, sizeof t->bad_arg, "Unknown value for `output_mode`: %.40s", o->output_mode);
    t->seq_len = o->output_sequence_length > 0 ? o->output_sequence_length : 0;
    tfc_lookup_opts lo = {.max_tokens = o->max_tokens, .mask_token = "", .output_mode = tfc_prep_mode_name(t->mode),
                          .pad_to_max_tokens = o->pad_to_max_tokens, .sparse = o->sparse,
                          .vocabulary = o->vocabulary, .idf_weights = o->idf_weights};
    t->lookup = tfc_prep_string_lookup_new(&lo, lookup_st);
    if (!t->lookup) return tfc_layer_unref(l), NULL;
    tfc_layer_take(t->lookup);
    l->dtype = l->compute_dtype = t->mode == TFC_PREP_INT ? TFC_INT64 : TFC_FLOAT;
    l->no_autocast = true;
    return l;
}

tfc_layer *tfc_layers_text_vectorization_new(const tfc_text_vectorization_opts *o) { return tv_new(o, NULL); }

tfc_layer *tfc_keras_from_config_text_vectorization(const cJSON *cfg, tfc_status *st) {
    tfc_layer_common_cfg c;
    if (!tfc_json_get_common(cfg, &c, st)) return NULL;
    tfc_text_vectorization_opts o = {0};
    TFC_COMMON_TO_OPTS(c, o);
    o.dtype = 0;
    const cJSON *sd = cJSON_GetObjectItemCaseSensitive(cfg, "standardize"), *sp = cJSON_GetObjectItemCaseSensitive(cfg, "split");
    const cJSON *ng = cJSON_GetObjectItemCaseSensitive(cfg, "ngrams"), *voc = cJSON_GetObjectItemCaseSensitive(cfg, "vocabulary");
    const cJSON *idf = cJSON_GetObjectItemCaseSensitive(cfg, "idf_weights");
    bool ragged = false;
    if (!tfc_json_get_i64(cfg, "max_tokens", &o.max_tokens, NULL, st) ||
        !tfc_json_get_str(cfg, "output_mode", &o.output_mode, NULL, st) ||
        !tfc_json_get_i64(cfg, "output_sequence_length", &o.output_sequence_length, NULL, st) ||
        !tfc_json_get_bool(cfg, "pad_to_max_tokens", &o.pad_to_max_tokens, NULL, st) ||
        !tfc_json_get_bool(cfg, "sparse", &o.sparse, NULL, st) || !tfc_json_get_bool(cfg, "ragged", &ragged, NULL, st))
        return NULL;
    if (ragged) return tfc_status_set(st, TFC_UNIMPLEMENTED, "TextVectorization: ragged outputs are not supported"), NULL;
    if (sd && !cJSON_IsNull(sd) && !cJSON_IsString(sd))
        return tfc_status_set(st, TFC_UNIMPLEMENTED, "TextVectorization: a callable `standardize` is not supported"), NULL;
    if (sp && !cJSON_IsNull(sp) && !cJSON_IsString(sp))
        return tfc_status_set(st, TFC_UNIMPLEMENTED, "TextVectorization: a callable `split` is not supported"), NULL;
    if (cJSON_IsNull(sd)) o.standardize_none = true;
    else if (cJSON_IsString(sd)) o.standardize = sd->valuestring;
    if (cJSON_IsNull(sp)) o.split_none = true;
    else if (cJSON_IsString(sp)) o.split = sp->valuestring;
    if (cJSON_IsNumber(ng)) o.ngrams_int = (int64_t)ng->valuedouble;
    else if (ng && !cJSON_IsNull(ng) && !tfc_json_get_i64_list(cfg, "ngrams", o.ngrams, 8, &o.n_ngrams, NULL, st))
        return NULL;
    tfc_tensor *vt = NULL, *it = NULL;
    if (cJSON_IsArray(voc) && !(vt = tfc_prep_json_list_tensor(voc, TFC_STRING, "vocabulary", st))) return NULL;
    if (vt && cJSON_IsArray(idf) && !(it = tfc_prep_json_list_tensor(idf, TFC_FLOAT, "idf_weights", st)))
        return tfc_tensor_unref(vt), NULL;
    o.vocabulary = vt;
    o.idf_weights = it;
    tfc_status local = TFC_STATUS_INIT;
    tfc_layer *l = tv_new(&o, &local);
    tfc_tensor_unref(vt);
    tfc_tensor_unref(it);
    if (!l) {
        if (tfc_ok(&local)) tfc_status_oom(st, "TextVectorization", sizeof(text_vectorization));
        else *st = local;
    }
    return l;
}
