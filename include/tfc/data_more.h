/* tfc — more of tf.data: the stateful and combining transformations (scan, reduce, take_while, unique, rebatch,
 * group_by_window, bucket_by_sequence_length, choose_from_datasets, sample_from_datasets), the counter source,
 * and the fixed-length-record and CSV file sources (tf.data.FixedLengthRecordDataset,
 * tf.data.experimental.CsvDataset).
 *
 * Ownership, user callbacks, threads and errors follow include/tfc/data.h: transformations TAKE the references
 * of their input datasets (also on failure); a user_free given with a callback takes `user`. */
#ifndef TFC_DATA_MORE_H
#define TFC_DATA_MORE_H

#include "tfc/data.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- sources --------------------------------------------------------------------------------------------- */
/* tf.data.Dataset.counter(start, step, dtype): start, start + step, ... forever (cardinality
 * TFC_INFINITE_CARDINALITY), scalars of dtype (0 = int64; any integer or floating dtype). step may be 0 (as
 * TensorFlow: the same value forever). INVALID_ARGUMENT for another dtype. */
TFC_API tfc_dataset *tfc_dataset_counter(int64_t start, int64_t step, tfc_dtype dtype, tfc_status *st);

/* tf.data.FixedLengthRecordDataset(filenames, record_bytes, header_bytes, footer_bytes, buffer_size,
 * compression_type, num_parallel_reads): each file is header_bytes skipped, then records of record_bytes
 * bytes (string scalars), then footer_bytes skipped. filenames as tfc_dataset_tfrecord (taken); opts may be
 * NULL. INVALID_ARGUMENT at construction for record_bytes < 1 or header/footer < 0. From next: INVALID_ARGUMENT
 * "FixedLengthRecordDataset <file>: ... body length N bytes, which is not an exact multiple of the record length
 * (R bytes)" for an uncompressed file of the wrong size (found before its first record), DATA_LOSS naming the
 * file for a compressed stream that ends inside a record or the footer; NOT_FOUND naming a missing file. */
TFC_API tfc_dataset *tfc_dataset_fixed_length_record(tfc_dataset *filenames, int64_t record_bytes,
                                                     int64_t header_bytes, int64_t footer_bytes,
                                                     const tfc_reader_opts *opts, tfc_status *st);

/* Options of tfc_dataset_csv (tf.data.experimental.CsvDataset's arguments after record_defaults). */
typedef struct tfc_csv_opts {
    const char *compression_type;     /* NULL or "": none; "GZIP"; "ZLIB" */
    int64_t buffer_size;              /* read buffer in bytes; 0 = 256 KiB */
    bool header;                      /* skip each file's first record */
    char field_delim;                 /* 0 = ',' */
    tfc_flag use_quote_delim;         /* default yes: RFC 4180 quoting ("a,b", "" = one quote, line breaks) */
    const char *na_value;             /* NULL = "": a field equal to it is missing */
    const int64_t *select_cols;       /* n_select sorted, distinct column indices, or NULL = all columns */
    int n_select;
    const int64_t *exclude_cols;      /* n_exclude sorted, distinct indices to leave out (not with select_cols) */
    int n_exclude;
} tfc_csv_opts;
/* tf.data.experimental.CsvDataset(filenames, record_defaults, ...): each record (line, or several lines where a
 * quoted field holds line breaks; "\r\n" ends a record too) becomes a tuple of n scalar tensors. record_defaults
 * are n borrowed tensors: their dtypes (int32, int64, float32, float64 or string) type the columns; one with a
 * single element is the value of a missing (empty or na_value) field, one with zero elements makes the column
 * required. Elements: "(.,.,...)" (a 1-tuple for n == 1), cardinality unknown. Construction: INVALID_ARGUMENT
 * for n < 1, a bad dtype, a default with more than one element, select_cols/exclude_cols not sorted or not
 * distinct, both given, or a select_cols count other than n. From next, INVALID_ARGUMENT naming the file and
 * record (counted from 0 in the file, header included): "Expect 3 fields but have 2 in record 4" (a short,
 * truncated or long row), "Field 1 is required but missing in record 4", "Field 0 in record 4 is not a valid
 * int32: abc", "Quoted field has to end with quote followed by delim or end" and an unterminated quote at the
 * end of the file; reading goes on with the next record. NOT_FOUND for a missing file. */
TFC_API tfc_dataset *tfc_dataset_csv(tfc_dataset *filenames, tfc_tensor *const *record_defaults, int n,
                                     const tfc_csv_opts *opts, tfc_status *st);

/* ---- stateful transformations ------------------------------------------------------------------------------- */
typedef struct tfc_scan_opts {
    const char *state_structure;
    const char *output_structure;
    const tfc_tensor_spec *output_spec;
    void (*user_free)(void *user);
} tfc_scan_opts;
/* Dataset.scan(initial_state, scan_func): fn receives (state components..., element components...) and writes
 * (new state components..., output components...). initial_state: n_state borrowed tensors with structure
 * state_structure (NULL: "." or a tuple); the new state must keep the initial state's dtypes and shapes
 * (INVALID_ARGUMENT "scan: component i: expected ..."; TensorFlow relaxes shapes, tfc does not). The outputs
 * have output_structure (NULL: ".") and output_spec (NULL: unknown). Cardinality: the input's. */
TFC_API tfc_dataset *tfc_dataset_scan(tfc_dataset *ds, tfc_tensor *const *initial_state, int n_state,
                                      tfc_data_map_fn fn, void *user, const tfc_scan_opts *opts, tfc_status *st);

/* Dataset.reduce(initial_state, reduce_func): folds every element into the state: fn receives (state...,
 * element...) and writes the n_state components of the new state (same dtypes and shapes as initial_state).
 * Writes the final state (new references) to out[0..n_state). Errors: those of the pipeline and of fn. A
 * dataset of infinite cardinality is INVALID_ARGUMENT (it would never end). */
TFC_API bool tfc_dataset_reduce(tfc_dataset *ds, tfc_tensor *const *initial_state, int n_state, tfc_data_map_fn fn,
                                void *user, tfc_tensor **out, tfc_status *st);

/* Dataset.take_while(predicate): the elements before the first one for which fn sets *keep false.
 * Cardinality: unknown (as TensorFlow). opts may be NULL. */
TFC_API tfc_dataset *tfc_dataset_take_while(tfc_dataset *ds, tfc_data_predicate_fn fn, void *user,
                                            const tfc_filter_opts *opts, tfc_status *st);

/* Dataset.unique(): the elements not seen before, in order. Elements must be one scalar component of int32,
 * int64 or string (INVALID_ARGUMENT "unique: ..." otherwise, as TensorFlow's
 * "Dataset.unique() only supports ..."). Memory grows with the number of distinct elements. */
TFC_API tfc_dataset *tfc_dataset_unique(tfc_dataset *ds, tfc_status *st);

/* Dataset.rebatch(batch_size, drop_remainder): re-slices an already batched input (every component of rank >= 1
 * with the same dim 0) into batches of n_sizes sizes taken in turn (n_sizes 1: all batch_sizes[0]); a batch may
 * span input batches. Without drop_remainder the last batch may be smaller; with it, a last short batch is
 * dropped. INVALID_ARGUMENT for n_sizes < 1, a size < 1 (TensorFlow also accepts 0 in a list; tfc does not), or
 * a scalar component. */
TFC_API tfc_dataset *tfc_dataset_rebatch(tfc_dataset *ds, const int64_t *batch_sizes, int n_sizes,
                                         bool drop_remainder, tfc_status *st);

/* ---- grouping --------------------------------------------------------------------------------------------- */
/* group_by_window's reduce_func: receives the group's int64 key and its window (a dataset of the group's
 * elements, borrowed: take a reference to keep it) and returns a new dataset (the caller's reference). */
typedef tfc_dataset *(*tfc_data_window_fn)(tfc_ctx *ctx, void *user, tfc_tensor *key, tfc_dataset *window,
                                           tfc_status *st);
typedef struct tfc_group_by_window_opts {
    const char *output_structure;      /* structure of reduce_func's datasets; NULL: the input's */
    const tfc_tensor_spec *output_spec;/* NULL: unknown */
    void (*user_free)(void *user);     /* frees user (shared by all callbacks) */
    /* window_size_func: the window size of a key (>= 1; INVALID_ARGUMENT from next otherwise), used instead
     * of window_size when set (then window_size must be 0), as TensorFlow's exactly-one-of rule. */
    int64_t (*window_size_fn)(void *user, int64_t key);
} tfc_group_by_window_opts;
/* Dataset.group_by_window(key_func, reduce_func, window_size, window_size_func): key_fn (a map function writing one int64
 * scalar) puts each element in a group; a group reaching window_size elements is handed to reduce_fn at once and
 * the elements of the returned dataset come out; at the end of the input the remaining groups go in ascending
 * key order (as TensorFlow). INVALID_ARGUMENT for window_size < 1 without window_size_fn, both given, and (from
 * next) a key that is not an int64 scalar. */
TFC_API tfc_dataset *tfc_dataset_group_by_window(tfc_dataset *ds, tfc_data_map_fn key_fn,
                                                 tfc_data_window_fn reduce_fn, void *user, int64_t window_size,
                                                 const tfc_group_by_window_opts *opts, tfc_status *st);

/* element_length_func of bucket_by_sequence_length: sets *length. */
typedef bool (*tfc_data_length_fn)(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, int64_t *length,
                                   tfc_status *st);
typedef struct tfc_bucket_opts {
    const tfc_shape *padded_shapes;    /* as tfc_padded_batch_opts (NULL: pad every dim to the batch maximum) */
    tfc_tensor *const *padding_values; /* as tfc_padded_batch_opts */
    bool pad_to_bucket_boundary;       /* pad dim 0 of every component to its bucket's boundary - 1 */
    bool no_padding;                   /* plain batch instead of padded_batch */
    bool drop_remainder;
    void (*user_free)(void *user);
} tfc_bucket_opts;
/* Dataset.bucket_by_sequence_length(element_length_func, bucket_boundaries, bucket_batch_sizes, ...): an element
 * of length L goes to bucket i, the first with L < bucket_boundaries[i] (n_boundaries ascending positive
 * values; the last bucket takes the rest); each bucket is batched (padded) by bucket_batch_sizes[i]
 * (n_boundaries + 1 of them) through group_by_window. INVALID_ARGUMENT for a wrong count of batch sizes,
 * boundaries not increasing, and (from next, with pad_to_bucket_boundary) an element of length >= the last
 * boundary. */
TFC_API tfc_dataset *tfc_dataset_bucket_by_sequence_length(tfc_dataset *ds, tfc_data_length_fn length_fn,
                                                           void *user, const int64_t *bucket_boundaries,
                                                           int n_boundaries, const int64_t *bucket_batch_sizes,
                                                           const tfc_bucket_opts *opts, tfc_status *st);

/* ---- combining ------------------------------------------------------------------------------------------- */
/* tf.data.Dataset.choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset): element k is the next
 * element of datasets[c_k], c_k the k-th (int64 scalar) element of choice_dataset. When the chosen dataset is
 * exhausted: stop_on_empty_dataset ends the output, otherwise that choice is skipped (and the output ends when
 * all are exhausted). INVALID_ARGUMENT "Selector index out of range" (from next) for c_k outside [0, n). The
 * datasets must have the same structure and dtypes (shapes relaxed). Takes every reference. */
TFC_API tfc_dataset *tfc_dataset_choose_from_datasets(tfc_dataset *const *datasets, int n, tfc_dataset *choice,
                                                      bool stop_on_empty_dataset, tfc_status *st);
/* tf.data.Dataset.sample_from_datasets(datasets, weights, seed, stop_on_empty_dataset): each element comes from
 * input i with probability weights[i] / sum (weights NULL: uniform), renormalised over the inputs not yet
 * exhausted unless stop_on_empty_dataset (then the first exhausted input ends the output). The order within an
 * input is kept. With has_seed the sequence of choices is reproducible; it is not TensorFlow's random stream.
 * INVALID_ARGUMENT for negative or all-zero weights. Takes every reference. */
TFC_API tfc_dataset *tfc_dataset_sample_from_datasets(tfc_dataset *const *datasets, int n, const double *weights,
                                                      int64_t seed, bool has_seed, bool stop_on_empty_dataset,
                                                      tfc_status *st);

#ifdef __cplusplus
}
#endif
#endif
