/* Internal: what the preprocessing layers share: the adapt hooks of a preprocessing class, the categorical
 * encodings (Keras's encode_categorical_inputs), output-mode names and the token vocabulary. */
#ifndef TFC_KERAS_LAYERS_PREPROCESSING_INTERNAL_H
#define TFC_KERAS_LAYERS_PREPROCESSING_INTERNAL_H

#include "keras/keras_internal.h"
#include "tfc/keras/preprocessing.h"

/* A preprocessing class: the layer class plus adapt's three steps (Keras's reset_state, update_state per batch,
 * finalize_state). adapt_begin also refuses layers whose state was given ("Cannot adapt ..."). */
typedef struct tfc_prep_class {
    tfc_layer_class base;    /* first: l->cls points here */
    bool (*adapt_begin)(tfc_layer *l, tfc_status *st);
    bool (*adapt_update)(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *batch, tfc_status *st);
    bool (*adapt_finish)(tfc_layer *l, tfc_ctx *ctx, tfc_status *st);
    void (*adapt_abort)(tfc_layer *l); /* drops the partial state after an error (may be NULL) */
} tfc_prep_class;
/* The preprocessing class of l, or NULL for other layers (the classes with adapt are listed in
 * preprocessing_adapt.c). */
const tfc_prep_class *tfc_prep_class_of(const tfc_layer *l);

/* TextVectorization's inner StringLookup, or NULL for other layers (preprocessing_text.c). */
tfc_layer *tfc_prep_text_lookup(const tfc_layer *l);
/* A StringLookup; a bad vocabulary is reported in st (NULL then), or with st NULL kept for the first call. */
tfc_layer *tfc_prep_string_lookup_new(const tfc_lookup_opts *o, tfc_status *st);
/* A JSON list of strings / numbers as a new 1-D tensor of dtype dt (string, int64 or float). */
tfc_tensor *tfc_prep_json_list_tensor(const cJSON *a, tfc_dtype dt, const char *key, tfc_status *st);

/* Output modes of the categorical layers. */
typedef enum { TFC_PREP_INT, TFC_PREP_ONE_HOT, TFC_PREP_MULTI_HOT, TFC_PREP_COUNT, TFC_PREP_TF_IDF } tfc_prep_mode;
/* Parses name (NULL = dflt); allowed is a bit mask of 1 << mode. false with INVALID_ARGUMENT naming the layer and
 * listing the allowed names. */
bool tfc_prep_mode_parse(const tfc_layer *l, const char *name, tfc_prep_mode dflt, unsigned allowed,
                         tfc_prep_mode *out, tfc_status *st);
const char *tfc_prep_mode_name(tfc_prep_mode m);
/* Output shape of encode_categorical_inputs for an input shape: INVALID_ARGUMENT for an output rank > 2. */
bool tfc_prep_encoded_shape(const tfc_layer *l, const tfc_shape *in, tfc_prep_mode mode, int64_t depth,
                            tfc_shape *out, tfc_status *st);
/* Encodes n ids (shape `in`, each in [0, depth)) as float32 one_hot/multi_hot/count/tf_idf vectors (idf: depth
 * weights for tf_idf). A new caller-owned tensor, or NULL with st set. */
tfc_tensor *tfc_prep_encode(const tfc_layer *l, const int64_t *ids, const tfc_shape *in, tfc_prep_mode mode,
                            int64_t depth, const float *idf, tfc_status *st);
/* The int64 tensor of shape `in` holding ids (copied). */
tfc_tensor *tfc_prep_ids_tensor(const int64_t *ids, const tfc_shape *in, tfc_status *st);
/* Reads an integer tensor's values as int64 into a new tfc_malloc'd array (NULL with st set: non-integer dtype
 * named with the layer). n receives the element count. */
int64_t *tfc_prep_read_ints(const tfc_layer *l, const tfc_tensor *t, int64_t *n, tfc_status *st);

/* ---- token vocabulary (preprocessing_vocab.c): strings or int64 tokens with counts, hashed for lookup ---- */
typedef struct tfc_vocab {
    bool strings;
    int64_t n, cap;
    char **s;                /* strings: owned copies (NUL-terminated, may hold NULs: see len) */
    size_t *len;
    int64_t *iv;             /* int64 tokens */
    int64_t *count;          /* adapt: occurrences */
    int64_t *doc;            /* adapt (tf_idf): documents holding the token; NULL unless track_docs */
    int64_t *last_doc;
    int64_t *slots;          /* open addressing: token index + 1, 0 empty */
    int64_t n_slots;
} tfc_vocab;
void tfc_vocab_init(tfc_vocab *v, bool strings);
void tfc_vocab_clear(tfc_vocab *v); /* frees everything; v stays usable */
/* Index of a token, or -1. */
int64_t tfc_vocab_find_str(const tfc_vocab *v, const char *s, size_t n);
int64_t tfc_vocab_find_int(const tfc_vocab *v, int64_t x);
/* Adds the token if missing (count 0) and returns its index; -1 with RESOURCE_EXHAUSTED when out of memory. */
int64_t tfc_vocab_add_str(tfc_vocab *v, const char *s, size_t n, tfc_status *st);
int64_t tfc_vocab_add_int(tfc_vocab *v, int64_t x, tfc_status *st);
/* Removes a token (its entry is swapped with the last). */
void tfc_vocab_remove(tfc_vocab *v, int64_t i);
/* Sorts by count descending, ties by token descending (numpy lexsort((tokens, counts))[::-1]), keeps the first
 * `keep` (< 0: all) and rehashes. false with st set when out of memory. */
bool tfc_vocab_sort_by_count(tfc_vocab *v, int64_t keep, tfc_status *st);

#endif
