/* tf.keras.layers.StringLookup and IntegerLookup (Keras's IndexLookup): token -> index through a vocabulary
 * laid out as [mask?, OOV slots..., tokens...], or index -> token when inverted; adapt counts tokens and keeps
 * the most frequent (ties: the larger token first, as Keras's lexsort). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/farmhash.h"
#include "keras/layers/preprocessing_internal.h"

#define LOOKUP_MODES 0x1fu

typedef struct {
    tfc_layer base;
    bool strings;
    int64_t max_tokens, num_oov;   /* max_tokens 0 = None */
    char *mask_tok, *oov_tok;      /* StringLookup (owned); mask NULL = None */
    int64_t mask_int, oov_int;
    bool has_mask_int;
    char mode_name[16];
    bool has_mode, invert, pad, sparse;
    tfc_prep_mode mode;
    tfc_vocab vocab;               /* the tokens after the special entries */
    bool has_vocab, vocab_given;   /* given: by the constructor or set_vocabulary (adapt refused) */
    bool ctor_vocab;               /* the constructor's vocabulary (get_config writes it) */
    float *idf;                    /* tf_idf weights, one per index */
    int64_t n_idf;
    tfc_vocab acc;                 /* adapt: counts */
    int64_t num_docs;
    bool adapting;
    tfc_status deferred;           /* a constructor vocabulary error, reported at the first build/call/adapt */
} lookup;

extern const tfc_prep_class tfc_prep_string_lookup_class, tfc_prep_integer_lookup_class;

static bool has_mask(const lookup *k) { return k->strings ? k->mask_tok != NULL : k->has_mask_int; }
/* The mask takes index 0 in "int" mode only; other modes drop masked tokens (as Keras). */
static int64_t oov_start(const lookup *k) { return has_mask(k) && k->mode == TFC_PREP_INT ? 1 : 0; }
static int64_t token_start(const lookup *k) { return oov_start(k) + k->num_oov; }
static int64_t vocab_size(const lookup *k) { return token_start(k) + k->vocab.n; }

static bool lk_check(lookup *k, tfc_status *st) {
    tfc_layer *l = &k->base;
    if (!tfc_ok(&k->deferred)) {
        *st = k->deferred;
        return false;
    }
    if (k->max_tokens != 0 && k->max_tokens <= 1)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": If set, `max_tokens` must be greater than 1. "
                              "Received: max_tokens=%lld", l->name, (long long)k->max_tokens);
    if (k->pad && !k->max_tokens)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": If pad_to_max_tokens is True, must set "
                              "`max_tokens`. Received: max_tokens=None", l->name);
    if (k->num_oov < 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": `num_oov_indices` must be greater than or equal "
                              "to 0. Received: num_oov_indices=%lld", l->name, (long long)k->num_oov);
    if (!tfc_prep_mode_parse(l, k->has_mode ? k->mode_name : NULL, TFC_PREP_INT, LOOKUP_MODES, &k->mode, st)) return false;
    if (k->invert && k->mode != TFC_PREP_INT)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": `output_mode` must be `'int'` when `invert` is "
                              "true. Received: output_mode=%s", l->name, tfc_prep_mode_name(k->mode));
    if (k->sparse)
        return tfc_status_set(st, TFC_UNIMPLEMENTED, "Layer \"%s\": sparse=True outputs are not supported", l->name);
    return true;
}

static bool lk_output_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out, tfc_status *st) {
    lookup *k = (lookup *)l;
    if (!tfc_keras_expect_inputs(l, n_in, 1, st) || !lk_check(k, st)) return false;
    *n_out = 1;
    int64_t depth = k->pad ? k->max_tokens : k->has_vocab ? vocab_size(k) : -1;
    return tfc_prep_encoded_shape(l, &in[0], k->mode, depth, &out[0], st);
}

static bool lk_build(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st) {
    l->input_spec[0] = (tfc_input_spec){.ndim = -1};
    l->has_input_spec = true;
    return true;
}

/* Token text for messages. */
static void token_text(const lookup *k, const tfc_tensor *x, int64_t i, const int64_t *ints, char *buf, size_t size) {
    if (!k->strings) {
        snprintf(buf, size, "%" PRId64, ints[i]);
        return;
    }
    size_t n;
    const char *s = tfc_tensor_string(x, i, &n);
    snprintf(buf, size, "%.*s", (int)(n > 64 ? 64 : n), s);
}

static bool lookup_forward(lookup *k, tfc_tensor *x, int64_t *ids, tfc_status *st) {
    tfc_layer *l = &k->base;
    int64_t n = tfc_tensor_num_elements(x), *ints = NULL;
    if (k->strings != (tfc_tensor_dtype(x) == TFC_STRING))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": expected %s inputs, got %s", l->name,
                              k->strings ? "string" : "integer", tfc_dtype_name(tfc_tensor_dtype(x)));
    if (!k->strings && !(ints = tfc_prep_read_ints(l, x, &n, st))) return false;
    int64_t ts = token_start(k), os = oov_start(k);
    for (int64_t i = 0; i < n; i++) {
        size_t len = 0;
        const char *s = k->strings ? tfc_tensor_string(x, i, &len) : NULL;
        bool is_mask = k->strings ? k->mask_tok && strlen(k->mask_tok) == len && !memcmp(k->mask_tok, s, len)
                                  : k->has_mask_int && ints[i] == k->mask_int;
        if (is_mask) {
            ids[i] = k->mode == TFC_PREP_INT ? 0 : INT64_MAX; /* out of every depth: dropped by the encoding */
            continue;
        }
        int64_t j = k->strings ? tfc_vocab_find_str(&k->vocab, s, len) : tfc_vocab_find_int(&k->vocab, ints[i]);
        if (j >= 0) ids[i] = ts + j;
        else if (k->num_oov == 1) ids[i] = os;
        else if (k->num_oov > 1) {
            int64_t b = k->strings ? (int64_t)(tfc_fingerprint64(s, len) % (uint64_t)k->num_oov)
                                   : ((ints[i] % k->num_oov) + k->num_oov) % k->num_oov; /* floormod */
            ids[i] = os + b;
        } else {
            char t[72];
            token_text(k, x, i, ints, t, sizeof t);
            tfc_free(ints);
            return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                  "Layer \"%s\": When `num_oov_indices=0` all inputs should be in vocabulary, found "
                                  "OOV values [%s], consider setting `num_oov_indices=1`.",
                                  l->name, t);
        }
    }
    tfc_free(ints);
    return true;
}

static tfc_tensor *lookup_inverse(lookup *k, tfc_tensor *x, tfc_status *st) {
    int64_t n, *ids = tfc_prep_read_ints(&k->base, x, &n, st);
    if (!ids) return NULL;
    const tfc_shape *s = tfc_tensor_shape(x);
    int64_t ts = token_start(k);
    tfc_tensor *out = NULL;
    if (k->strings) {
        const char **p = tfc_malloc((size_t)(n ? n : 1) * sizeof *p);
        size_t *len = tfc_malloc((size_t)(n ? n : 1) * sizeof *len);
        if (!p || !len) tfc_status_oom(st, k->base.name, (size_t)n * sizeof *p);
        else {
            for (int64_t i = 0; i < n; i++) {
                int64_t j = ids[i] - ts;
                if (ids[i] == 0 && k->mask_tok) p[i] = k->mask_tok, len[i] = strlen(k->mask_tok);
                else if (j >= 0 && j < k->vocab.n) p[i] = k->vocab.s[j], len[i] = k->vocab.len[j];
                else p[i] = k->oov_tok, len[i] = strlen(k->oov_tok);
            }
            out = tfc_tensor_from_strings(p, len, s->dims, s->rank, st);
        }
        tfc_free(p);
        tfc_free(len);
    } else {
        for (int64_t i = 0; i < n; i++) {
            int64_t j = ids[i] - ts;
            ids[i] = ids[i] == 0 && k->has_mask_int ? k->mask_int : j >= 0 && j < k->vocab.n ? k->vocab.iv[j] : k->oov_int;
        }
        out = tfc_prep_ids_tensor(ids, s, st);
    }
    tfc_free(ids);
    return out;
}

static bool lk_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                    bool training, tfc_status *st) {
    lookup *k = (lookup *)l;
    if (!lk_check(k, st)) return false;
    if (k->invert) return (out[0] = lookup_inverse(k, in[0], st)) != NULL;
    if (k->mode != TFC_PREP_INT && !k->pad && !k->has_vocab)
        return tfc_status_set(st, TFC_FAILED_PRECONDITION,
                              "Layer \"%s\": When using `output_mode=%s` and `pad_to_max_tokens=False`, you must set "
                              "the layer's vocabulary before calling it. Either pass a `vocabulary` argument to the "
                              "layer, or call `adapt` with some sample data.",
                              l->name, tfc_prep_mode_name(k->mode));
    int64_t n = tfc_tensor_num_elements(in[0]);
    int64_t *ids = tfc_malloc((size_t)(n ? n : 1) * sizeof *ids);
    if (!ids) return tfc_status_oom(st, l->name, (size_t)n * sizeof *ids);
    bool ok = lookup_forward(k, in[0], ids, st);
    if (ok) {
        const tfc_shape *s = tfc_tensor_shape(in[0]);
        int64_t depth = k->pad ? k->max_tokens : vocab_size(k);
        out[0] = k->mode == TFC_PREP_INT ? tfc_prep_ids_tensor(ids, s, st)
                                         : tfc_prep_encode(l, ids, s, k->mode, depth, k->idf, st);
        ok = out[0] != NULL;
    }
    tfc_free(ids);
    return ok;
}

/* ---- vocabulary ---- */

static bool token_is(const lookup *k, const tfc_tensor *v, int64_t i, const char *s, int64_t x, bool is_set) {
    if (!is_set) return false;
    if (!k->strings) return ((const int64_t *)tfc_tensor_data(v))[i] == x;
    size_t n;
    const char *t = tfc_tensor_string(v, i, &n);
    return strlen(s) == n && !memcmp(s, t, n);
}

static bool set_vocab(lookup *k, tfc_tensor *v, tfc_tensor *idf, tfc_status *st) {
    tfc_layer *l = &k->base;
    if (!lk_check(k, st)) return false;
    tfc_dtype want = k->strings ? TFC_STRING : TFC_INT64;
    if (!v || tfc_tensor_dtype(v) != want || tfc_tensor_rank(v) > 1)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": the vocabulary must be a 1-D %s tensor%s%s",
                              l->name, tfc_dtype_name(want), v ? ", got " : "", v ? tfc_dtype_name(tfc_tensor_dtype(v)) : "");
    int64_t n = tfc_tensor_num_elements(v);
    if (n == 0) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": Cannot set an empty vocabulary, you "
                                      "passed [].", l->name);
    if (idf && k->mode != TFC_PREP_TF_IDF)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": `idf_weights` should only be set if output_mode "
                              "is `'tf_idf'`. Received: output_mode=%s", l->name, tfc_prep_mode_name(k->mode));
    if (!idf && k->mode == TFC_PREP_TF_IDF)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": `idf_weights` must be set if output_mode is "
                              "TF_IDF", l->name);
    /* leading special tokens, when all present in order, are skipped */
    int64_t os = oov_start(k), ts = token_start(k), start = 0;
    if (n >= ts) {
        bool found = true;
        for (int64_t i = 0; i < ts && found; i++)
            found = i < os ? token_is(k, v, i, k->mask_tok, k->mask_int, true)
                           : token_is(k, v, i, k->oov_tok, k->oov_int, true);
        if (found) start = ts;
    }
    tfc_vocab nv;
    tfc_vocab_init(&nv, k->strings);
    char repeated[160] = "";
    int rep_len = 0;
    for (int64_t i = start; i < n; i++) {
        size_t len = 0;
        const char *s = k->strings ? tfc_tensor_string(v, i, &len) : NULL;
        int64_t x = k->strings ? 0 : ((const int64_t *)tfc_tensor_data(v))[i];
        if (token_is(k, v, i, k->mask_tok, k->mask_int, has_mask(k))) {
            tfc_vocab_clear(&nv);
            return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                  "Layer \"%s\": Found reserved mask token at unexpected location in `vocabulary`. "
                                  "Note that passed `vocabulary` does not need to include the OOV and mask tokens. "
                                  "Received: mask_token at vocabulary index %lld",
                                  l->name, (long long)i);
        }
        if (k->invert && token_is(k, v, i, k->oov_tok, k->oov_int, true)) {
            tfc_vocab_clear(&nv);
            return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                  "Layer \"%s\": Found reserved OOV token at unexpected location in `vocabulary`. "
                                  "Received: oov_token at vocabulary index %lld",
                                  l->name, (long long)i);
        }
        int64_t before = nv.n;
        int64_t j = k->strings ? tfc_vocab_add_str(&nv, s, len, st) : tfc_vocab_add_int(&nv, x, st);
        if (j < 0) return tfc_vocab_clear(&nv), false;
        if (nv.n == before && rep_len < (int)sizeof repeated - 40) {
            if (k->strings)
                rep_len += snprintf(repeated + rep_len, sizeof repeated - (size_t)rep_len, "%s'%.*s'",
                                    rep_len ? ", " : "", (int)(len > 32 ? 32 : len), s);
            else
                rep_len += snprintf(repeated + rep_len, sizeof repeated - (size_t)rep_len, "%s%" PRId64,
                                    rep_len ? ", " : "", x);
        }
    }
    if (rep_len) {
        tfc_vocab_clear(&nv);
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": The passed vocabulary has at least one repeated "
                              "term. Please uniquify your dataset. The repeated terms are [%s]", l->name, repeated);
    }
    if (k->max_tokens && ts + nv.n > k->max_tokens) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": Attempted to set a vocabulary larger than the maximum "
                       "vocab size. Passed vocab size is %lld, max vocab size is %lld.", l->name,
                       (long long)(ts + nv.n), (long long)k->max_tokens);
        tfc_vocab_clear(&nv);
        return false;
    }
    float *w = NULL;
    int64_t nw = 0;
    if (idf) {
        int64_t ni = tfc_tensor_num_elements(idf);
        if (ni != n || tfc_tensor_dtype(idf) != TFC_FLOAT || tfc_tensor_rank(idf) != 1) {
            tfc_vocab_clear(&nv);
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": `idf_weights` must be the same length as "
                                  "vocabulary (a 1-D float32 tensor). len(idf_weights) is %lld, len(vocabulary) is "
                                  "%lld", l->name, (long long)ni, (long long)n);
        }
        nw = k->pad ? k->max_tokens : ts + nv.n;
        if (!(w = tfc_calloc((size_t)nw, sizeof *w))) {
            tfc_vocab_clear(&nv);
            return tfc_status_oom(st, l->name, (size_t)nw * sizeof *w);
        }
        const float *src = tfc_tensor_data(idf);
        double mean = 0;
        for (int64_t i = 0; i < n; i++) mean += src[i];
        mean /= (double)n;
        for (int64_t i = 0; i < ts + nv.n; i++)
            w[i] = start ? src[i] : i < ts ? (float)mean : src[i - ts];
    }
    tfc_vocab_clear(&k->vocab);
    k->vocab = nv;
    tfc_free(k->idf);
    k->idf = w;
    k->n_idf = nw;
    k->has_vocab = k->vocab_given = true;
    return true;
}

bool tfc_lookup_set_vocabulary(tfc_layer *l, tfc_tensor *vocab, tfc_tensor *idf, tfc_status *st) {
    if (tfc_prep_text_lookup(l)) l = tfc_prep_text_lookup(l);
    const tfc_prep_class *pc = tfc_prep_class_of(l);
    if (pc != &tfc_prep_string_lookup_class && pc != &tfc_prep_integer_lookup_class)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "set_vocabulary: layer \"%s\" is not a lookup layer",
                              l ? l->name : "(null)");
    return set_vocab((lookup *)l, vocab, idf, st);
}

int64_t tfc_lookup_vocabulary_size(const tfc_layer *l) {
    if (tfc_prep_text_lookup(l)) l = tfc_prep_text_lookup(l);
    const tfc_prep_class *pc = tfc_prep_class_of(l);
    if (pc != &tfc_prep_string_lookup_class && pc != &tfc_prep_integer_lookup_class) return -1;
    return vocab_size((const lookup *)l);
}

tfc_tensor *tfc_lookup_get_vocabulary(const tfc_layer *l, bool include_special, tfc_status *st) {
    if (tfc_prep_text_lookup(l)) l = tfc_prep_text_lookup(l);
    const tfc_prep_class *pc = tfc_prep_class_of(l);
    if (pc != &tfc_prep_string_lookup_class && pc != &tfc_prep_integer_lookup_class) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "get_vocabulary: layer \"%s\" is not a lookup layer",
                       l ? l->name : "(null)");
        return NULL;
    }
    const lookup *k = (const lookup *)l;
    int64_t ts = include_special ? token_start(k) : 0, n = ts + k->vocab.n, os = include_special ? oov_start(k) : 0;
    if (!k->strings) {
        int64_t *v = tfc_malloc((size_t)(n ? n : 1) * sizeof *v);
        if (!v) return tfc_status_oom(st, l->name, (size_t)n * sizeof *v), NULL;
        for (int64_t i = 0; i < n; i++) v[i] = i < os ? k->mask_int : i < ts ? k->oov_int : k->vocab.iv[i - ts];
        tfc_tensor *t = tfc_tensor_from_data(TFC_INT64, &n, 1, v, (size_t)n * sizeof *v, st);
        tfc_free(v);
        return t;
    }
    const char **p = tfc_malloc((size_t)(n ? n : 1) * sizeof *p);
    size_t *len = tfc_malloc((size_t)(n ? n : 1) * sizeof *len);
    tfc_tensor *t = NULL;
    if (!p || !len) tfc_status_oom(st, l->name, (size_t)n * sizeof *p);
    else {
        for (int64_t i = 0; i < n; i++) {
            p[i] = i < os ? k->mask_tok : i < ts ? k->oov_tok : k->vocab.s[i - ts];
            len[i] = i < ts ? strlen(p[i]) : k->vocab.len[i - ts];
        }
        t = tfc_tensor_from_strings(p, len, &n, 1, st);
    }
    tfc_free(p);
    tfc_free(len);
    return t;
}

/* ---- adapt ---- */

static bool lk_adapt_begin(tfc_layer *l, tfc_status *st) {
    lookup *k = (lookup *)l;
    if (!lk_check(k, st)) return false;
    if (k->vocab_given)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": Cannot adapt %s layer after setting a static "
                              "vocabulary via init argument or `set_vocabulary`.", l->name, l->cls->class_name);
    tfc_vocab_clear(&k->acc);
    tfc_vocab_init(&k->acc, k->strings);
    k->num_docs = 0;
    k->adapting = true;
    return true;
}

static bool lk_adapt_update(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *batch, tfc_status *st) {
    lookup *k = (lookup *)l;
    tfc_tensor *x = batch;
    int64_t n, *ints = NULL;
    if (k->strings != (tfc_tensor_dtype(x) == TFC_STRING))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": adapt() expected %s data, got %s", l->name,
                              k->strings ? "string" : "integer", tfc_dtype_name(tfc_tensor_dtype(x)));
    n = tfc_tensor_num_elements(x);
    if (!k->strings && !(ints = tfc_prep_read_ints(l, x, &n, st))) return false;
    if (k->mode == TFC_PREP_TF_IDF && !k->acc.doc) {
        k->acc.doc = tfc_calloc(k->acc.cap ? (size_t)k->acc.cap : 1, sizeof(int64_t));
        k->acc.last_doc = tfc_calloc(k->acc.cap ? (size_t)k->acc.cap : 1, sizeof(int64_t));
        if (!k->acc.doc || !k->acc.last_doc) return tfc_free(ints), tfc_status_oom(st, l->name, 8);
    }
    /* documents: the rows of a rank >= 2 batch; a vector or scalar is one document */
    int r = tfc_tensor_rank(x);
    int64_t rows = r >= 2 ? tfc_tensor_dim(x, 0) : 1, per = rows ? n / rows : 0;
    for (int64_t i = 0; i < n; i++) {
        size_t len = 0;
        const char *s = k->strings ? tfc_tensor_string(x, i, &len) : NULL;
        int64_t j = k->strings ? tfc_vocab_add_str(&k->acc, s, len, st) : tfc_vocab_add_int(&k->acc, ints[i], st);
        if (j < 0) return tfc_free(ints), false;
        k->acc.count[j]++;
        int64_t doc = k->num_docs + (per ? i / per : 0);
        if (k->acc.doc && k->acc.last_doc[j] != doc) k->acc.doc[j]++, k->acc.last_doc[j] = doc;
    }
    k->num_docs += rows;
    tfc_free(ints);
    return true;
}

static bool lk_adapt_finish(tfc_layer *l, tfc_ctx *ctx, tfc_status *st) {
    lookup *k = (lookup *)l;
    k->adapting = false;
    if (k->acc.n == 0) return true; /* Keras keeps the layer as it was */
    int64_t i = k->strings ? (k->mask_tok ? tfc_vocab_find_str(&k->acc, k->mask_tok, strlen(k->mask_tok)) : -1)
                           : (k->has_mask_int ? tfc_vocab_find_int(&k->acc, k->mask_int) : -1);
    tfc_vocab_remove(&k->acc, i);
    i = k->strings ? tfc_vocab_find_str(&k->acc, k->oov_tok, strlen(k->oov_tok)) : tfc_vocab_find_int(&k->acc, k->oov_int);
    tfc_vocab_remove(&k->acc, i);
    int64_t keep = k->max_tokens ? k->max_tokens - token_start(k) : -1;
    if (keep < -1) keep = 0;
    if (!tfc_vocab_sort_by_count(&k->acc, keep, st)) return false;
    float *w = NULL;
    int64_t nw = 0;
    if (k->mode == TFC_PREP_TF_IDF) {
        int64_t ts = token_start(k);
        nw = k->pad ? k->max_tokens : ts + k->acc.n;
        if (!(w = tfc_calloc((size_t)(nw ? nw : 1), sizeof *w))) return tfc_status_oom(st, l->name, (size_t)nw * 4);
        float sum = 0;
        for (int64_t t = 0; t < k->acc.n; t++) {
            /* log(1 + num_documents / (1 + document count)) in float64, then cast (Keras casts to float32) */
            w[ts + t] = (float)log(1.0 + (double)k->num_docs / (1.0 + (double)k->acc.doc[t]));
            sum += w[ts + t];
        }
        for (int64_t t = 0; t < ts; t++) w[t] = k->acc.n ? sum / (float)k->acc.n : 0;
    }
    tfc_vocab_clear(&k->vocab);
    k->vocab = k->acc;
    tfc_vocab_init(&k->acc, k->strings);
    tfc_free(k->idf);
    k->idf = w;
    k->n_idf = nw;
    k->has_vocab = true;
    return true;
}

static void lk_adapt_abort(tfc_layer *l) {
    lookup *k = (lookup *)l;
    tfc_vocab_clear(&k->acc);
    k->adapting = false;
}

/* ---- config ---- */

static cJSON *token_json(const lookup *k, const char *s, int64_t x, bool set) {
    if (!set) return cJSON_CreateNull();
    return k->strings ? cJSON_CreateString(s) : cJSON_CreateNumber((double)x);
}

static bool add_item(cJSON *cfg, const char *key, cJSON *v) {
    if (v && cJSON_AddItemToObject(cfg, key, v)) return true;
    cJSON_Delete(v);
    return false;
}

static bool lk_get_config(const tfc_layer *l, void *vcfg, tfc_status *st) {
    const lookup *k = (const lookup *)l;
    cJSON *cfg = vcfg, *vocab = NULL, *idf = NULL;
    if (k->ctor_vocab) {
        tfc_tensor *v = tfc_lookup_get_vocabulary(l, false, st);
        if (!v) return false;
        vocab = cJSON_CreateArray();
        for (int64_t i = 0; vocab && i < k->vocab.n; i++) {
            cJSON *e = k->strings ? cJSON_CreateString(k->vocab.s[i]) : cJSON_CreateNumber((double)k->vocab.iv[i]);
            if (!e || !cJSON_AddItemToArray(vocab, e)) cJSON_Delete(e), cJSON_Delete(vocab), vocab = NULL;
        }
        tfc_tensor_unref(v);
        if (k->idf && (idf = cJSON_CreateArray()))
            for (int64_t i = token_start(k); i < token_start(k) + k->vocab.n; i++)
                cJSON_AddItemToArray(idf, cJSON_CreateNumber(k->idf[i]));
    }
    bool ok = cJSON_AddBoolToObject(cfg, "invert", k->invert) &&
              (k->max_tokens ? cJSON_AddNumberToObject(cfg, "max_tokens", (double)k->max_tokens)
                             : cJSON_AddNullToObject(cfg, "max_tokens")) &&
              cJSON_AddNumberToObject(cfg, "num_oov_indices", (double)k->num_oov) &&
              add_item(cfg, "oov_token", token_json(k, k->oov_tok, k->oov_int, true)) &&
              add_item(cfg, "mask_token", token_json(k, k->mask_tok, k->mask_int, has_mask(k))) &&
              cJSON_AddStringToObject(cfg, "output_mode", k->has_mode ? k->mode_name : "int") &&
              cJSON_AddBoolToObject(cfg, "sparse", k->sparse) &&
              cJSON_AddBoolToObject(cfg, "pad_to_max_tokens", k->pad) &&
              (k->strings || cJSON_AddStringToObject(cfg, "vocabulary_dtype", "int64")) &&
              add_item(cfg, "idf_weights", idf ? idf : cJSON_CreateNull()) &&
              add_item(cfg, "vocabulary", vocab ? vocab : cJSON_CreateNull()) &&
              (k->has_vocab ? cJSON_AddNumberToObject(cfg, "vocabulary_size", (double)vocab_size(k))
                            : cJSON_AddNullToObject(cfg, "vocabulary_size")) &&
              (!k->strings || cJSON_AddStringToObject(cfg, "encoding", "utf-8"));
    return ok;
}

static void lk_destroy(tfc_layer *l) {
    lookup *k = (lookup *)l;
    tfc_free(k->mask_tok);
    tfc_free(k->oov_tok);
    tfc_vocab_clear(&k->vocab);
    tfc_vocab_clear(&k->acc);
    tfc_free(k->idf);
}

#define LOOKUP_CLASS(cname)                                                                                       \
    {.base = {.class_name = cname, .size = sizeof(lookup), .build = lk_build, .compute_output_shape = lk_output_shape, \
              .call = lk_call, .get_config = lk_get_config, .destroy = lk_destroy},                                \
     .adapt_begin = lk_adapt_begin, .adapt_update = lk_adapt_update, .adapt_finish = lk_adapt_finish,            \
     .adapt_abort = lk_adapt_abort}
const tfc_prep_class tfc_prep_string_lookup_class = LOOKUP_CLASS("StringLookup");
const tfc_prep_class tfc_prep_integer_lookup_class = LOOKUP_CLASS("IntegerLookup");

static char *dup_str(const char *s) {
    size_t n = strlen(s) + 1;
    char *c = tfc_malloc(n);
    if (c) memcpy(c, s, n);
    return c;
}

/* Creates the layer; a constructor vocabulary error is reported by st (from_config) or kept for the build. */
static tfc_layer *lookup_new(const tfc_lookup_opts *o, bool strings, tfc_status *st) {
    const tfc_prep_class *pc = strings ? &tfc_prep_string_lookup_class : &tfc_prep_integer_lookup_class;
    lookup *k = TFC_LAYER_NEW(lookup, &pc->base, o);
    if (!k) return NULL;
    k->strings = strings;
    tfc_vocab_init(&k->vocab, strings);
    tfc_vocab_init(&k->acc, strings);
    k->max_tokens = o->max_tokens;
    k->num_oov = o->has_num_oov_indices ? o->num_oov_indices : 1;
    k->invert = o->invert;
    k->pad = o->pad_to_max_tokens;
    k->sparse = o->sparse;
    if ((k->has_mode = o->output_mode != NULL)) snprintf(k->mode_name, sizeof k->mode_name, "%s", o->output_mode);
    if (strings) {
        if (!(k->oov_tok = dup_str(o->oov_token ? o->oov_token : "[UNK]")) ||
            (o->mask_token && !(k->mask_tok = dup_str(o->mask_token))))
            return tfc_layer_unref(&k->base), NULL;
    } else {
        k->has_mask_int = o->has_mask_token_int;
        k->mask_int = o->mask_token_int;
        k->oov_int = o->has_oov_token_int ? o->oov_token_int : -1;
    }
    /* Keras: int64 ids in "int" mode (and tokens when inverting strings), float vectors otherwise */
    tfc_prep_mode m = TFC_PREP_INT;
    tfc_status ignore = TFC_STATUS_INIT;
    bool int_mode = !tfc_prep_mode_parse(&k->base, o->output_mode, TFC_PREP_INT, LOOKUP_MODES, &m, &ignore) ||
                    m == TFC_PREP_INT;
    k->mode = m;
    if (int_mode) k->base.dtype = k->base.compute_dtype = k->invert && strings ? TFC_STRING : TFC_INT64;
    k->base.no_autocast = true;
    k->base.keeps_input_dtype = false;
    if (o->vocabulary) {
        tfc_status local = TFC_STATUS_INIT;
        if (!set_vocab(k, o->vocabulary, o->idf_weights, st ? st : &local)) {
            if (st) return tfc_layer_unref(&k->base), NULL;
            k->deferred = local;
        }
        k->ctor_vocab = true;
    }
    return &k->base;
}

tfc_layer *tfc_layers_string_lookup_new(const tfc_lookup_opts *o) { return lookup_new(o, true, NULL); }
tfc_layer *tfc_prep_string_lookup_new(const tfc_lookup_opts *o, tfc_status *st) { return lookup_new(o, true, st); }
tfc_layer *tfc_layers_integer_lookup_new(const tfc_lookup_opts *o) { return lookup_new(o, false, NULL); }

/* A JSON list of tokens (or idf floats) as a new 1-D tensor. */
tfc_tensor *tfc_prep_json_list_tensor(const cJSON *a, tfc_dtype dt, const char *key, tfc_status *st) {
    int64_t n = cJSON_GetArraySize(a);
    tfc_tensor *t = NULL;
    if (dt == TFC_STRING) {
        const char **p = tfc_malloc((size_t)(n ? n : 1) * sizeof *p);
        if (!p) return tfc_status_oom(st, key, (size_t)n * sizeof *p), NULL;
        int64_t i = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, a) p[i++] = cJSON_IsString(e) ? e->valuestring : NULL;
        bool ok = true;
        for (i = 0; i < n; i++) ok &= p[i] != NULL;
        if (ok) t = tfc_tensor_from_strings(p, NULL, &n, 1, st);
        else tfc_status_set(st, TFC_INVALID_ARGUMENT, "StringLookup: \"%s\" must be a list of strings", key);
        tfc_free(p);
        return t;
    }
    if (!(t = tfc_tensor_new(dt, &n, 1, st))) return NULL;
    int64_t i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, a) {
        if (!cJSON_IsNumber(e)) {
            tfc_tensor_unref(t);
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "\"%s\" must be a list of numbers", key);
            return NULL;
        }
        if (dt == TFC_INT64) ((int64_t *)tfc_tensor_mutable_data(t))[i++] = (int64_t)e->valuedouble;
        else ((float *)tfc_tensor_mutable_data(t))[i++] = (float)e->valuedouble;
    }
    return t;
}

static tfc_layer *lookup_from_config(const cJSON *cfg, bool strings, tfc_status *st) {
    tfc_layer_common_cfg c;
    if (!tfc_json_get_common(cfg, &c, st)) return NULL;
    tfc_lookup_opts o = {0};
    TFC_COMMON_TO_OPTS(c, o);
    if (c.dtype == TFC_INT64 || c.dtype == TFC_STRING) o.dtype = 0; /* the output dtype follows the mode */
    const cJSON *mask = cJSON_GetObjectItemCaseSensitive(cfg, "mask_token");
    const cJSON *oov = cJSON_GetObjectItemCaseSensitive(cfg, "oov_token");
    const cJSON *voc = cJSON_GetObjectItemCaseSensitive(cfg, "vocabulary");
    const cJSON *idf = cJSON_GetObjectItemCaseSensitive(cfg, "idf_weights");
    if (!tfc_json_get_i64(cfg, "max_tokens", &o.max_tokens, NULL, st) ||
        !tfc_json_get_i64(cfg, "num_oov_indices", &o.num_oov_indices, &o.has_num_oov_indices, st) ||
        !tfc_json_get_str(cfg, "output_mode", &o.output_mode, NULL, st) ||
        !tfc_json_get_bool(cfg, "invert", &o.invert, NULL, st) ||
        !tfc_json_get_bool(cfg, "pad_to_max_tokens", &o.pad_to_max_tokens, NULL, st) ||
        !tfc_json_get_bool(cfg, "sparse", &o.sparse, NULL, st))
        return NULL;
    const char *cls = strings ? "StringLookup" : "IntegerLookup";
    if (strings) {
        if ((mask && !cJSON_IsNull(mask) && !cJSON_IsString(mask)) || (oov && !cJSON_IsNull(oov) && !cJSON_IsString(oov)))
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: mask_token and oov_token must be strings", cls), NULL;
        o.mask_token = cJSON_IsString(mask) ? mask->valuestring : NULL;
        o.oov_token = cJSON_IsString(oov) ? oov->valuestring : NULL;
    } else {
        if ((mask && !cJSON_IsNull(mask) && !cJSON_IsNumber(mask)) || (oov && !cJSON_IsNull(oov) && !cJSON_IsNumber(oov)))
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: mask_token and oov_token must be integers", cls), NULL;
        if ((o.has_mask_token_int = cJSON_IsNumber(mask))) o.mask_token_int = (int64_t)mask->valuedouble;
        if ((o.has_oov_token_int = cJSON_IsNumber(oov))) o.oov_token_int = (int64_t)oov->valuedouble;
    }
    if (voc && cJSON_IsString(voc))
        return tfc_status_set(st, TFC_UNIMPLEMENTED, "%s: vocabulary files are not supported", cls), NULL;
    if (voc && !cJSON_IsNull(voc) && !cJSON_IsArray(voc))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: \"vocabulary\" must be a list", cls), NULL;
    tfc_tensor *vt = cJSON_IsArray(voc) ? tfc_prep_json_list_tensor(voc, strings ? TFC_STRING : TFC_INT64, "vocabulary", st) : NULL;
    tfc_tensor *it = vt && cJSON_IsArray(idf) ? tfc_prep_json_list_tensor(idf, TFC_FLOAT, "idf_weights", st) : NULL;
    if ((cJSON_IsArray(voc) && !vt) || (vt && cJSON_IsArray(idf) && !it)) {
        tfc_tensor_unref(vt);
        return NULL;
    }
    o.vocabulary = vt;
    o.idf_weights = it;
    tfc_status local = TFC_STATUS_INIT;
    tfc_layer *l = lookup_new(&o, strings, &local);
    tfc_tensor_unref(vt);
    tfc_tensor_unref(it);
    if (!l) {
        if (tfc_ok(&local)) tfc_status_oom(st, cls, sizeof(lookup));
        else *st = local;
    }
    return l;
}

tfc_layer *tfc_keras_from_config_string_lookup(const cJSON *cfg, tfc_status *st) { return lookup_from_config(cfg, true, st); }
tfc_layer *tfc_keras_from_config_integer_lookup(const cJSON *cfg, tfc_status *st) { return lookup_from_config(cfg, false, st); }
