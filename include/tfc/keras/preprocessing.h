/* tfc — Keras preprocessing layers (tf.keras.layers: Normalization, Discretization, CategoryEncoding, Hashing,
 * StringLookup, IntegerLookup, Rescaling, CenterCrop, Resizing) and their adapt() (PreprocessingLayer.adapt).
 *
 * Constructors follow tfc/keras/layers.h: Keras's argument names as designated initialisers, zero meaning
 * Keras's default, the common options (name, dtype, input_shape, ...) of TFC_LAYER_COMMON_OPTS. A new layer is
 * floating (layer.h); NULL only when out of memory. Invalid arguments (num_bins 0, a vocabulary with duplicates,
 * an unknown output_mode, ...) surface at the first build, call or adapt as INVALID_ARGUMENT with Keras's
 * message, naming the layer. The layers run on the CPU on the input's values: they have no gradient except
 * Normalization and Rescaling, which are made of differentiable ops. Output dtypes follow Keras: "int" modes
 * give int64, the other modes the layer's float dtype (float32). */
#ifndef TFC_KERAS_PREPROCESSING_H
#define TFC_KERAS_PREPROCESSING_H

#include "tfc/data.h"
#include "tfc/keras/layers.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Normalization: (x - mean) / max(sqrt(variance), 1e-7), or x * max(sqrt(variance), 1e-7) + mean when invert. */
typedef struct {
    TFC_LAYER_COMMON_OPTS;
    int64_t axis[TFC_MAX_RANK]; /* the kept axes (negative from the end) */
    int n_axis;                 /* 0: Keras's default axis=-1 */
    bool axis_none;             /* axis=None: one mean and variance for every element */
    const double *mean, *variance; /* n_mean values each (1 broadcasts); NULL: learnt by tfc_layer_adapt */
    int64_t n_mean;
    bool invert;
} tfc_normalization_opts;
/* tf.keras.layers.Normalization(axis, mean, variance, invert): inputs [batch, ...] of a float dtype (others are
 * cast), same-shaped output. Without mean/variance the layer holds non-trainable weights "mean", "variance"
 * (the kept axes' shape) and "count" (int64 scalar), set by tfc_layer_adapt (streaming mean/variance, Keras's
 * batch-wise combination); before adapt they hold 0 and 1, as Keras's. INVALID_ARGUMENT: only one of mean and
 * variance, axes out of range or kept axes of unknown size, mean/variance sizes that match neither 1 nor the kept
 * dims, adapt on a layer given mean/variance. A new floating layer, NULL only when out of memory. */
TFC_API tfc_layer *tfc_layers_normalization_new(const tfc_normalization_opts *o);
#define tfc_layers_normalization(...) tfc_layers_normalization_new(&(tfc_normalization_opts){__VA_ARGS__})

/* Discretization: bucket ids of float values given sorted bin_boundaries (Bucketize: id = number of boundaries
 * <= x), output_mode "int" (default, int64) or "one_hot" / "multi_hot" / "count" (float32, depth =
 * boundaries + 1). */
typedef struct {
    TFC_LAYER_COMMON_OPTS;
    const double *bin_boundaries; /* NULL: num_bins, learnt by tfc_layer_adapt */
    int64_t n_bin_boundaries;
    int64_t num_bins;
    double epsilon;               /* 0 = 0.01 */
    const char *output_mode;      /* NULL = "int" */
} tfc_discretization_opts;
/* tf.keras.layers.Discretization(bin_boundaries, num_bins, epsilon, output_mode). Without boundaries (before
 * adapt) every value is bucket 0, as Keras. INVALID_ARGUMENT: both bin_boundaries and num_bins, num_bins < 0,
 * unsorted boundaries, an unknown output_mode, adapt without num_bins > 0 or on given boundaries. adapt computes
 * the boundaries from Keras's quantile summary with epsilon (numpy.interp's float64 arithmetic on float32 state).
 * Float inputs compare as float32 with subnormals read as 0 (TensorFlow's flushed denormals). num_bins 0 in the
 * options means None; from_config keeps an explicit 0. A new floating layer, NULL only when out of memory. */
TFC_API tfc_layer *tfc_layers_discretization_new(const tfc_discretization_opts *o);
#define tfc_layers_discretization(...) tfc_layers_discretization_new(&(tfc_discretization_opts){__VA_ARGS__})

/* CategoryEncoding: integer ids in [0, num_tokens) -> float32 vectors of num_tokens (one_hot: one per id, the last
 * dim 1 or added; multi_hot: 1 where an id occurs in the row; count: occurrences). Rank-1 inputs are one row
 * (multi_hot/count) or one id per row (one_hot); outputs have rank <= 2. */
typedef struct {
    TFC_LAYER_COMMON_OPTS;
    int64_t num_tokens;
    const char *output_mode; /* NULL = "multi_hot" */
    bool sparse;             /* not supported: INVALID_ARGUMENT at build */
} tfc_category_encoding_opts;
/* tf.keras.layers.CategoryEncoding(num_tokens, output_mode). INVALID_ARGUMENT: num_tokens < 1, an unknown
 * output_mode, ids out of [0, num_tokens) ("Input values must be in the range 0 <= values < num_tokens with
 * num_tokens=n"), an output of rank > 2, non-integer inputs. A new floating layer, NULL only when out of memory. */
TFC_API tfc_layer *tfc_layers_category_encoding_new(const tfc_category_encoding_opts *o);
#define tfc_layers_category_encoding(...) tfc_layers_category_encoding_new(&(tfc_category_encoding_opts){__VA_ARGS__})

/* Hashing: bucket = Fingerprint64(x) mod num_bins for strings (TensorFlow's StringToHashBucketFast); integers
 * are hashed as their decimal text (AsString). With salt, SipHash-2-4 keyed by the salt
 * (StringToHashBucketStrong). With a mask_value, the mask maps to 0 and the others to 1 + hash mod
 * (num_bins - 1). */
typedef struct {
    TFC_LAYER_COMMON_OPTS;
    int64_t num_bins;
    const char *mask_value;       /* string inputs; NULL = None */
    int64_t mask_value_int;       /* integer inputs, when has_mask_value_int */
    bool has_mask_value_int;
    uint64_t salt[2];             /* Keras's salt: one int s is {s, s} */
    bool has_salt;
    const char *output_mode;      /* NULL = "int" */
} tfc_hashing_opts;
/* tf.keras.layers.Hashing(num_bins, mask_value, salt, output_mode): int64 bucket ids ("int") or float32
 * one_hot / multi_hot / count vectors of num_bins. INVALID_ARGUMENT: num_bins < 1 (or < 2 with a mask value),
 * inputs that are neither strings nor integers, an unknown output_mode. A new floating layer, NULL only when out
 * of memory. */
TFC_API tfc_layer *tfc_layers_hashing_new(const tfc_hashing_opts *o);
#define tfc_layers_hashing(...) tfc_layers_hashing_new(&(tfc_hashing_opts){__VA_ARGS__})

/* StringLookup / IntegerLookup (Keras's IndexLookup): vocabulary index of each token. Indices: the mask token
 * (when set) is 0, then num_oov_indices OOV slots (an unknown token takes the single slot, or with several,
 * Fingerprint64(token) mod n / integer mod n), then the vocabulary. invert maps indices back to tokens. */
typedef struct {
    TFC_LAYER_COMMON_OPTS;
    int64_t max_tokens;           /* 0 = None (no limit); includes the mask and OOV entries */
    int64_t num_oov_indices;      /* used when has_num_oov_indices (default 1) */
    bool has_num_oov_indices;
    const char *mask_token;       /* StringLookup; NULL = None */
    const char *oov_token;        /* StringLookup; NULL = "[UNK]" */
    int64_t mask_token_int, oov_token_int; /* IntegerLookup: used when has_mask_token_int / has_oov_token_int */
    bool has_mask_token_int, has_oov_token_int; /* IntegerLookup oov_token default -1 */
    const char *output_mode;      /* "int" (default), "one_hot", "multi_hot", "count", "tf_idf" */
    bool invert, pad_to_max_tokens, sparse;
    tfc_tensor *vocabulary;       /* 1-D string (StringLookup) or int64 (IntegerLookup); borrowed; NULL: adapt */
    tfc_tensor *idf_weights;      /* tf_idf with a given vocabulary: float, one per vocabulary entry */
} tfc_lookup_opts;
/* tf.keras.layers.StringLookup(...) and IntegerLookup(...). INVALID_ARGUMENT with Keras's messages: max_tokens
 * <= 1, num_oov_indices < 0, pad_to_max_tokens without max_tokens, invert with an output_mode other than "int",
 * sparse, a vocabulary that is empty, has repeated terms, holds the mask token (or the OOV token when inverting)
 * elsewhere than at the start, or is larger than max_tokens; unknown tokens with num_oov_indices 0. Calling
 * before a vocabulary is set with output_mode other than "int" is FAILED_PRECONDITION. A new floating layer, NULL
 * only when out of memory. */
TFC_API tfc_layer *tfc_layers_string_lookup_new(const tfc_lookup_opts *o);
TFC_API tfc_layer *tfc_layers_integer_lookup_new(const tfc_lookup_opts *o);
#define tfc_layers_string_lookup(...) tfc_layers_string_lookup_new(&(tfc_lookup_opts){__VA_ARGS__})
#define tfc_layers_integer_lookup(...) tfc_layers_integer_lookup_new(&(tfc_lookup_opts){__VA_ARGS__})

/* TextVectorization: strings -> standardize -> split -> ngrams -> an inner StringLookup (mask "", one OOV slot). */
typedef struct {
    TFC_LAYER_COMMON_OPTS;
    int64_t max_tokens;           /* 0 = None */
    const char *standardize;      /* NULL = "lower_and_strip_punctuation"; "lower", "strip_punctuation" */
    bool standardize_none;        /* standardize=None */
    const char *split;            /* NULL = "whitespace"; "character" */
    bool split_none;              /* split=None: each string is one token */
    int64_t ngrams_int;           /* ngrams=k: widths 1..k (k <= 8); 0 = see ngrams */
    int64_t ngrams[8];            /* ngrams=(w1, w2, ...) */
    int n_ngrams;                 /* 0 (and ngrams_int 0) = None */
    const char *output_mode;      /* "int" (default), "multi_hot" ("binary"), "count", "tf_idf" */
    int64_t output_sequence_length; /* "int" mode: pad with 0 / truncate to it; 0 = None (the longest row) */
    bool pad_to_max_tokens, sparse;
    tfc_tensor *vocabulary;       /* 1-D string, borrowed; NULL: adapt */
    tfc_tensor *idf_weights;
} tfc_text_vectorization_opts;
/* tf.keras.layers.TextVectorization(max_tokens, standardize, split, ngrams, output_mode, output_sequence_length,
 * pad_to_max_tokens, vocabulary, idf_weights): string inputs [batch] or [batch, 1] -> int64 [batch, length] token
 * ids (0 padding, 1 OOV) or float32 [batch, vocabulary size] multi_hot / count / tf_idf. Lowering is ASCII (as
 * tf.strings.lower), punctuation is the ASCII set Keras strips, whitespace is ASCII's, "character" splits UTF-8 code
 * points (U+FFFD per invalid byte). get_vocabulary / set_vocabulary / vocabulary_size below and tfc_layer_adapt work
 * on it as on its lookup. INVALID_ARGUMENT: an unknown standardize/split/output_mode, output_sequence_length outside
 * "int" mode, inputs that are not strings or of rank > 1 with a last dim other than 1 (when splitting), and the
 * lookup's errors; UNIMPLEMENTED: ngrams without a split. Callables for standardize/split, ragged and sparse outputs
 * are not supported. A new floating layer, NULL only when out of memory. */
TFC_API tfc_layer *tfc_layers_text_vectorization_new(const tfc_text_vectorization_opts *o);
#define tfc_layers_text_vectorization(...) tfc_layers_text_vectorization_new(&(tfc_text_vectorization_opts){__VA_ARGS__})

/* layer.get_vocabulary(include_special_tokens): a new 1-D string (StringLookup) or int64 (IntegerLookup)
 * tensor, caller-owned: [mask?, oov * num_oov_indices, tokens...] (specials left out when
 * include_special_tokens is false). TextVectorization answers for its lookup. INVALID_ARGUMENT for a layer that is
 * not a lookup layer. */
TFC_API tfc_tensor *tfc_lookup_get_vocabulary(const tfc_layer *l, bool include_special_tokens, tfc_status *st);
/* layer.set_vocabulary(vocabulary, idf_weights): vocab is a 1-D tensor of the layer's token dtype, with or
 * without the leading special tokens; idf_weights (tf_idf only, else NULL) one float per entry. Errors as the
 * constructor's vocabulary. */
TFC_API bool tfc_lookup_set_vocabulary(tfc_layer *l, tfc_tensor *vocab, tfc_tensor *idf_weights, tfc_status *st);
/* layer.vocabulary_size(): entries including the mask and OOV slots; -1 for a layer that is not a lookup layer. */
TFC_API int64_t tfc_lookup_vocabulary_size(const tfc_layer *l);

/* Rescaling: x * scale + offset in the layer's float dtype. */
typedef struct { TFC_LAYER_COMMON_OPTS; double scale; double offset; } tfc_rescaling_opts;
/* tf.keras.layers.Rescaling(scale, offset): any shape, inputs cast to the layer's dtype. A new floating layer,
 * NULL only when out of memory. */
TFC_API tfc_layer *tfc_layers_rescaling_new(const tfc_rescaling_opts *o);
#define tfc_layers_rescaling(...) tfc_layers_rescaling_new(&(tfc_rescaling_opts){__VA_ARGS__})

/* CenterCrop / Resizing: images [batch, h, w, c] or [h, w, c] (channels_last). */
typedef struct {
    TFC_LAYER_COMMON_OPTS;
    int64_t height, width;
    const char *interpolation;  /* Resizing: "bilinear" (default) or "nearest" */
    bool crop_to_aspect_ratio;  /* Resizing */
} tfc_image_preprocessing_opts;
/* tf.keras.layers.CenterCrop(height, width): the centred height x width window ((h - height) / 2 from the top);
 * an image smaller than the target is resized to it (bilinear), as Keras. Output in the layer's float dtype.
 * INVALID_ARGUMENT: height or width < 1, inputs of rank other than 3 or 4. A new floating layer, NULL only when
 * out of memory. */
TFC_API tfc_layer *tfc_layers_center_crop_new(const tfc_image_preprocessing_opts *o);
#define tfc_layers_center_crop(...) tfc_layers_center_crop_new(&(tfc_image_preprocessing_opts){__VA_ARGS__})
/* tf.keras.layers.Resizing(height, width, interpolation, crop_to_aspect_ratio): tf.image.resize (half-pixel
 * centres, no antialias); crop_to_aspect_ratio first takes the largest centred window of the target's aspect
 * ratio. INVALID_ARGUMENT: height or width < 1, an unknown interpolation, inputs of rank other than 3 or 4. A new
 * floating layer, NULL only when out of memory. */
TFC_API tfc_layer *tfc_layers_resizing_new(const tfc_image_preprocessing_opts *o);
#define tfc_layers_resizing(...) tfc_layers_resizing_new(&(tfc_image_preprocessing_opts){__VA_ARGS__})

/* RandomFlip / RandomContrast: augmentation in training only (identity at inference), images [batch,] h, w, c. Draws
 * come from tfc's random ops (seed, else the context's seed): statistically as Keras's, not draw for draw. */
typedef struct { TFC_LAYER_COMMON_OPTS; const char *mode; int64_t seed; bool has_seed; } tfc_random_flip_opts;
/* tf.keras.layers.RandomFlip(mode, seed): each image flipped left-right ("horizontal") and/or up-down
 * ("vertical"; default "horizontal_and_vertical") with probability 1/2, independently. INVALID_ARGUMENT: an unknown
 * mode, inputs of rank other than 3 or 4. A new floating layer, NULL only when out of memory. */
TFC_API tfc_layer *tfc_layers_random_flip_new(const tfc_random_flip_opts *o);
#define tfc_layers_random_flip(...) tfc_layers_random_flip_new(&(tfc_random_flip_opts){__VA_ARGS__})
typedef struct {
    TFC_LAYER_COMMON_OPTS;
    double factor[2];   /* factor, or (lower, upper) when factor_pair */
    bool factor_pair;
    int64_t seed;
    bool has_seed;
} tfc_random_contrast_opts;
/* tf.keras.layers.RandomContrast(factor, seed): one factor per call uniform in [1 - lower, 1 + upper]; each
 * image's channels become (x - mean) * factor + mean (mean over height and width), clipped to [0, 255].
 * INVALID_ARGUMENT: negative factors or a lower factor > 1, inputs of rank other than 3 or 4. A new floating layer,
 * NULL only when out of memory. */
TFC_API tfc_layer *tfc_layers_random_contrast_new(const tfc_random_contrast_opts *o);
#define tfc_layers_random_contrast(...) tfc_layers_random_contrast_new(&(tfc_random_contrast_opts){__VA_ARGS__})

/* layer.adapt(data, batch_size, steps): learns the layer's state (Normalization's mean/variance,
 * Discretization's boundaries, the lookups' vocabulary) from data, a tensor whose first dim is the batch,
 * streamed in batches of batch_size rows (0 = 32) for at most steps batches (0 = all). Memory is bounded by the
 * state (distinct tokens, kept-axis statistics), not the data. The lookups order their vocabulary by frequency,
 * ties by descending token, as Keras. INVALID_ARGUMENT for a layer without adapt, a layer created with a fixed
 * vocabulary/statistics, empty data, or data of the wrong dtype; the state is unchanged on error. */
TFC_API bool tfc_layer_adapt(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *data, int64_t batch_size, int64_t steps,
                             tfc_status *st);
/* layer.adapt(dataset, steps): the same over a dataset's elements (its first component; each element is a
 * batch), for at most steps elements (0 = until the end). The dataset is borrowed. */
TFC_API bool tfc_layer_adapt_dataset(tfc_layer *l, tfc_ctx *ctx, tfc_dataset *ds, int64_t steps, tfc_status *st);

/* dataset.map(layer): a dataset whose first component is the layer's output on the input's first component
 * (the others pass through), called with training=false on the map's context. Takes ds's reference and a
 * reference to the layer (released with the dataset). Errors as tfc_dataset_map. */
TFC_API tfc_dataset *tfc_dataset_map_layer(tfc_dataset *ds, tfc_layer *l, tfc_status *st);

#ifdef __cplusplus
}
#endif
#endif
