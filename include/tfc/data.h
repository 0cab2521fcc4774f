/* tfc — tf.data: input pipelines (tf.data.Dataset, its iterators, sources and transformations), TFRecord files
 * (tf.io.TFRecordWriter, tf.data.TFRecordDataset) and CRC32C.
 *
 * A dataset is an immutable, refcounted node of a pipeline graph (source, map, batch, ...). Iterating it creates
 * an iterator tree that holds all mutable state, so one dataset can be iterated many times (epochs) and by several
 * iterators at once, from different threads. One iterator is used by one thread at a time.
 *
 * ELEMENTS are nested structures of tensors (TensorFlow's tuples and dicts), described by a structure string and
 * passed around flat, as the list of their components (tf.nest.flatten order):
 *     "."                   a single tensor
 *     "(.,.)"               a pair (x, y);  "(.,)" a 1-tuple;  "()" the empty tuple
 *     "{image:.,label:.}"   a dict; keys are [A-Za-z0-9_./-]+, components follow the keys in sorted order
 *     "((.,.),{a:.,b:.})"   nesting
 * Spaces are ignored; tfc_dataset_structure returns the canonical form (keys sorted, no spaces).
 * element_spec is one tfc_tensor_spec per component: a dtype (TFC_INVALID_DTYPE = not known) and a shape whose
 * dims may be -1 (unknown) and whose rank may be -1 (unknown).
 *
 * OWNERSHIP. Constructors return a new dataset holding one reference (tfc_dataset_unref releases it).
 * Transformations and file sources TAKE the caller's reference to their input dataset(s), also when they fail, so
 * calls chain without leaks:
 *     tfc_dataset *ds = tfc_dataset_batch(tfc_dataset_map(tfc_dataset_range(0, 100, 1, TFC_INT64, &st),
 *                                                         square, NULL, NULL, &st), 32, NULL, &st);
 *     if (!ds) ... st holds the first error of the chain
 * A NULL input dataset makes a transformation return NULL without touching st when st already holds an error
 * (INVALID_ARGUMENT "NULL input dataset" otherwise). Keep a dataset for reuse with tfc_dataset_ref. Tensors
 * passed to sources are borrowed (the dataset takes its own references). Tensors returned by an iterator are
 * new references owned by the caller.
 *
 * USER FUNCTIONS (map, filter, flat_map, interleave, from_generator) are plain C callbacks with a user pointer.
 * When a user_free is given, the dataset takes `user`: user_free(user) runs when the dataset is destroyed, or
 * before the constructor returns when it fails. Callbacks receive an eager context private to the
 * iterator (or to the worker thread) to run ops in, and the element's components (borrowed). Outputs must be
 * new references, one per out slot (pass an input through with tfc_tensor_ref). Every other tensor an op
 * returns inside the callback is released when it returns. A callback returning false must set st; that
 * error surfaces from tfc_iterator_next for this element (an OUT_OF_RANGE from a callback becomes
 * INVALID_ARGUMENT, as TensorFlow does), and the iterator stays usable: the next call goes on with the next
 * element. Callbacks of parallel transformations run on several threads at once.
 *
 * THREADS. Parallel map, parallel batch, interleave with num_parallel_calls, and prefetch run on threads owned
 * by the iterator, started at its first next, with bounded buffers (memory never grows with the dataset's
 * size). Freeing an iterator mid-epoch stops and joins them. TFC_AUTOTUNE picks parallelism and buffer sizes
 * at run time (see "AUTOTUNE" below). Output order is deterministic unless deterministic is TFC_NO (or the
 * dataset options say so). Cheap elements change hands between threads in runs: a stage whose elements take
 * less than ~200 us wakes a waiting consumer once a run of ready elements (about 200 us of work, at most 32
 * elements and 256 KiB) is there, and a parallel map or batch then buffers up to two runs besides its
 * parallelism; slower or larger elements are handed over one at a time.
 *
 * AUTOTUNE. A rate-based hill climb per parallel stage: the stage starts with parallelism 1 (prefetch: buffer
 * 1) and, over windows of 16 elements, measures the fraction of the consumer's time spent waiting for it; above
 * 5% it doubles its parallelism up to the number of cores (or the private_threadpool_size option) and its
 * buffer up to 64 elements (prefetch). A stage whose consumer never waits keeps its settings, so memory stays
 * bounded by these caps. Parallel interleave with TFC_AUTOTUNE reads with one thread per cycle slot up to that
 * same thread cap; a cycle_length of TFC_AUTOTUNE is the number of cores (as TensorFlow).
 *
 * ERRORS. Constructors: INVALID_ARGUMENT for bad arguments (named and with values, as TensorFlow's messages).
 * tfc_iterator_next: OUT_OF_RANGE "End of sequence" at the end (and again on later calls); the error of the
 * element otherwise. */
#ifndef TFC_DATA_H
#define TFC_DATA_H

#include "tfc/eager.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TFC_AUTOTUNE (-1)               /* tf.data.AUTOTUNE */
#define TFC_INFINITE_CARDINALITY (-1)   /* tf.data.INFINITE_CARDINALITY */
#define TFC_UNKNOWN_CARDINALITY (-2)    /* tf.data.UNKNOWN_CARDINALITY */
#define TFC_DATA_MAX_COMPONENTS 1024    /* components of one element */

typedef struct tfc_dataset tfc_dataset;
typedef struct tfc_iterator tfc_iterator;

/* tf.TensorSpec: dtype TFC_INVALID_DTYPE = unknown; shape.rank -1 = unknown rank, dims -1 = unknown. */
typedef struct tfc_tensor_spec {
    tfc_dtype dtype;
    tfc_shape shape;
} tfc_tensor_spec;

/* ---- datasets ------------------------------------------------------------------------------------------- */
TFC_API tfc_dataset *tfc_dataset_ref(tfc_dataset *ds);  /* +1 reference; returns ds; NULL-safe */
TFC_API void tfc_dataset_unref(tfc_dataset *ds);        /* -1 reference; frees at zero; NULL-safe */

/* Dataset.cardinality(): the number of elements, TFC_INFINITE_CARDINALITY or TFC_UNKNOWN_CARDINALITY, computed
 * as TensorFlow does (filter, flat_map, interleave, ignore_errors and file sources are unknown). */
TFC_API int64_t tfc_dataset_cardinality(const tfc_dataset *ds);
/* Canonical structure string of the elements (borrowed, lives as long as ds). */
TFC_API const char *tfc_dataset_structure(const tfc_dataset *ds);
TFC_API int tfc_dataset_num_components(const tfc_dataset *ds);
/* Spec of component i (dtype TFC_INVALID_DTYPE and rank -1 for i out of range). */
TFC_API tfc_tensor_spec tfc_dataset_component_spec(const tfc_dataset *ds, int i);
/* Dataset.element_spec as TensorFlow prints it, into buf (truncated to size); returns buf:
 * "(TensorSpec(shape=(None, 3), dtype=tf.float32, name=None), {'a': TensorSpec(shape=(), dtype=tf.int64, name=None)})" */
TFC_API char *tfc_dataset_element_spec_str(const tfc_dataset *ds, char *buf, size_t size);
/* The pipeline graph, one node per line from this dataset to its sources, each with TensorFlow's dataset op
 * name and its arguments ("BatchDatasetV2(batch_size=4, drop_remainder=false)"), inputs indented below. This
 * text identifies a pipeline (a basis for fingerprints); callbacks appear by address. Returns buf. */
TFC_API char *tfc_dataset_graph_str(const tfc_dataset *ds, char *buf, size_t size);

/* ---- iterators (iter(dataset), next(iterator)) --------------------------------------------------------- */
/* New iterator over ds (which it references). Cheap: work (files, threads) starts at the first next.
 * Errors: those of building the iterator tree (RESOURCE_EXHAUSTED). */
TFC_API tfc_iterator *tfc_iterator_new(tfc_dataset *ds, tfc_status *st);
/* Writes the next element's components (tfc_dataset_num_components of them, new references) into out.
 * OUT_OF_RANGE "End of sequence" at the end; INVALID_ARGUMENT when max_out is too small; otherwise the error
 * of this element (out then holds NULLs), after which the iterator goes on with the next element. */
TFC_API bool tfc_iterator_next(tfc_iterator *it, tfc_tensor **out, int max_out, tfc_status *st);
/* Frees the iterator (NULL-safe), stopping and joining its threads. */
TFC_API void tfc_iterator_free(tfc_iterator *it);
TFC_API tfc_dataset *tfc_iterator_dataset(const tfc_iterator *it); /* borrowed */

/* ---- sources ---------------------------------------------------------------------------------------------- */
/* Dataset.from_tensors(components): one element made of n tensors (borrowed). structure: NULL = "." for one
 * tensor, a tuple of n otherwise; else its leaf count must be n. INVALID_ARGUMENT for a bad structure, or for
 * n < 1 (as TensorFlow: an element must not be empty). */
TFC_API tfc_dataset *tfc_dataset_from_tensors(tfc_tensor *const *components, int n, const char *structure,
                                              tfc_status *st);
/* Dataset.from_tensor_slices(components): element i is row i (slice along dim 0) of every component.
 * INVALID_ARGUMENT for n < 1, a scalar component or differing dim 0 ("Dimensions 3 and 4 are not compatible"). */
TFC_API tfc_dataset *tfc_dataset_from_tensor_slices(tfc_tensor *const *components, int n, const char *structure,
                                                    tfc_status *st);
/* from_tensor_slices of a 1-D string tensor of n strings (e.g. file names). */
TFC_API tfc_dataset *tfc_dataset_from_strings(const char *const *strs, int n, tfc_status *st);
/* Dataset.range(start, stop, step, output_type): scalars start, start + step, ... before stop, of dtype (0 =
 * int64; any integer or floating dtype). INVALID_ARGUMENT "step must be a non-zero integer." for step 0. */
TFC_API tfc_dataset *tfc_dataset_range(int64_t start, int64_t stop, int64_t step, tfc_dtype dtype, tfc_status *st);

/* Dataset.from_generator with output_signature. init (may be NULL: state NULL) runs once per iterator,
 * finalize (may be NULL) when the iterator is freed; next writes one element (n_out new references) or sets
 * *end_of_sequence. Elements are checked against the signature: INVALID_ARGUMENT "from_generator: component 0:
 * expected float32 [?,3], got int32 [2,3]". An error of next or init surfaces from tfc_iterator_next. */
typedef struct tfc_generator {
    void *(*init)(void *user, tfc_status *st);
    bool (*next)(tfc_ctx *ctx, void *user, void *state, tfc_tensor **out, int n_out, bool *end_of_sequence,
                 tfc_status *st);
    void (*finalize)(void *user, void *state);
    void *user;
    void (*user_free)(void *user);   /* called when the dataset is destroyed; may be NULL */
} tfc_generator;
/* output_signature: one spec per leaf of structure (NULL = "."). */
TFC_API tfc_dataset *tfc_dataset_from_generator(const tfc_generator *gen, const char *structure,
                                                const tfc_tensor_spec *output_signature, tfc_status *st);

/* Dataset.zip(datasets): elements are tuples "(s1,s2,...)" of the inputs' elements; ends with the shortest.
 * Takes the n references. */
TFC_API tfc_dataset *tfc_dataset_zip(tfc_dataset *const *datasets, int n, tfc_status *st);
/* a.concatenate(b): a's elements then b's. INVALID_ARGUMENT "Incompatible dataset elements" unless the
 * structures and dtypes agree (shapes are relaxed to what both share). Takes both references. */
TFC_API tfc_dataset *tfc_dataset_concatenate(tfc_dataset *a, tfc_dataset *b, tfc_status *st);

/* Dataset.list_files(file_pattern, shuffle, seed): the file names matching any of the n glob patterns (*, ?,
 * [...] as glob(3)), sorted, deduplicated, as string scalars; shuffled (by a shuffle over all names) unless
 * shuffle is TFC_NO. INVALID_ARGUMENT "No files matched pattern: <patterns>" when nothing matches. */
typedef struct tfc_list_files_opts {
    tfc_flag shuffle;      /* default yes */
    int64_t seed;          /* used when has_seed; otherwise a fresh order each epoch */
    bool has_seed;
} tfc_list_files_opts;
/* Returns a new dataset owned by the caller (free with tfc_dataset_free), or NULL with st set: INVALID_ARGUMENT
 * when no file matches or n < 1; RESOURCE_EXHAUSTED out of memory. opts may be NULL (defaults). */
TFC_API tfc_dataset *tfc_dataset_list_files(const char *const *patterns, int n, const tfc_list_files_opts *opts,
                                            tfc_status *st);

/* Options of the file datasets (TFRecordDataset, TextLineDataset). */
typedef struct tfc_reader_opts {
    const char *compression_type;  /* NULL or "": none; "GZIP"; "ZLIB" (INVALID_ARGUMENT otherwise) */
    int64_t buffer_size;           /* read buffer in bytes; 0 = 256 KiB; at most 1 GiB and a plain file's size */
    int64_t num_parallel_reads;    /* 0: files one after another; n >= 1: n files interleaved one record
                                      each (as TensorFlow), read on n threads; TFC_AUTOTUNE: n = cores */
} tfc_reader_opts;
/* tf.data.TFRecordDataset(filenames): the records (string scalars) of each file named by `filenames`, a dataset
 * of string scalars (taken; see tfc_dataset_from_strings). Records are checked (CRC32C): DATA_LOSS
 * "TFRecord <file>: record <i>: ..." for a bad length CRC, a bad data CRC or a truncated record, where i
 * counts the file's records from 0. After a data CRC error reading goes on with the next record; after a
 * bad length or truncation, with the next file. A missing file is NOT_FOUND naming it. */
TFC_API tfc_dataset *tfc_dataset_tfrecord(tfc_dataset *filenames, const tfc_reader_opts *opts, tfc_status *st);
/* tf.data.TextLineDataset(filenames): the lines of each file without their "\n" or "\r\n". */
TFC_API tfc_dataset *tfc_dataset_text_line(tfc_dataset *filenames, const tfc_reader_opts *opts, tfc_status *st);

/* ---- user function types -------------------------------------------------------------------------------- */
/* map: writes n_out new references (see USER FUNCTIONS). */
typedef bool (*tfc_data_map_fn)(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, tfc_tensor **out,
                                int n_out, tfc_status *st);
/* filter: sets *keep. */
typedef bool (*tfc_data_predicate_fn)(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, bool *keep,
                                      tfc_status *st);
/* flat_map, interleave: returns a new dataset (the caller's reference), or NULL with st set. */
typedef tfc_dataset *(*tfc_data_dataset_fn)(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in,
                                            tfc_status *st);

/* ---- transformations (each takes its input's reference) ------------------------------------------------- */
typedef struct tfc_map_opts {
    int64_t num_parallel_calls;        /* 0: sequential (None); n >= 1 or TFC_AUTOTUNE: on threads */
    tfc_flag deterministic;            /* default: the options' deterministic (yes) */
    const char *output_structure;      /* NULL: the input's structure */
    const tfc_tensor_spec *output_spec;/* one per output component; NULL: unknown dtypes and shapes */
    void (*user_free)(void *user);
} tfc_map_opts;
/* Dataset.map(map_func, num_parallel_calls, deterministic). Outputs are checked against output_spec:
 * INVALID_ARGUMENT "map: output 0: expected float32 [3], got float32 [4]". opts may be NULL. */
TFC_API tfc_dataset *tfc_dataset_map(tfc_dataset *ds, tfc_data_map_fn fn, void *user, const tfc_map_opts *opts,
                                     tfc_status *st);

typedef struct tfc_filter_opts {
    void (*user_free)(void *user);
} tfc_filter_opts;
/* Dataset.filter(predicate): keeps the elements for which fn sets *keep. opts may be NULL. */
TFC_API tfc_dataset *tfc_dataset_filter(tfc_dataset *ds, tfc_data_predicate_fn fn, void *user,
                                        const tfc_filter_opts *opts, tfc_status *st);

typedef struct tfc_batch_opts {
    bool drop_remainder;               /* drop a last batch smaller than batch_size */
    int64_t num_parallel_calls;        /* 0: sequential; n or TFC_AUTOTUNE: batches assembled on threads */
    tfc_flag deterministic;
} tfc_batch_opts;
/* Dataset.batch(batch_size, drop_remainder, num_parallel_calls, deterministic): stacks batch_size consecutive
 * elements along a new dim 0 of every component (the last batch may be smaller unless drop_remainder).
 * INVALID_ARGUMENT "Batch size must be greater than zero." at construction; from next, INVALID_ARGUMENT
 * "Cannot batch tensors with different shapes in component 0. First element had shape [2] and element 1 had
 * shape [3]." Memory follows the elements that came: batch(2^62) of 3 elements holds 3. */
TFC_API tfc_dataset *tfc_dataset_batch(tfc_dataset *ds, int64_t batch_size, const tfc_batch_opts *opts,
                                       tfc_status *st);

typedef struct tfc_padded_batch_opts {
    /* One shape per component, or NULL. A dim -1 (or a shape of rank -1, or NULL) pads to the longest element
     * of the batch; a known dim pads to that size. */
    const tfc_shape *padded_shapes;
    /* One scalar per component (borrowed; dtype of the component), or NULL: 0, false or "". */
    tfc_tensor *const *padding_values;
    bool drop_remainder;
} tfc_padded_batch_opts;
/* Dataset.padded_batch: as batch, each component first padded at the end of every dim. INVALID_ARGUMENT for a
 * padded shape of another rank than the component's, a padding value that is not a scalar of its dtype, and
 * (from next) "Attempted to pad to a smaller size than the input element." A padded shape is the output's size,
 * as TensorFlow's: from next, INVALID_ARGUMENT "padded_batch: shape [3,4611686018427387904] has too many elements"
 * when the batch's element count overflows int64, RESOURCE_EXHAUSTED naming the padded shape when it cannot be
 * allocated. */
TFC_API tfc_dataset *tfc_dataset_padded_batch(tfc_dataset *ds, int64_t batch_size, const tfc_padded_batch_opts *opts,
                                              tfc_status *st);
/* Dataset.unbatch(): splits every component along dim 0. INVALID_ARGUMENT for scalar components and (from
 * next) for components of one element with different dim 0. */
TFC_API tfc_dataset *tfc_dataset_unbatch(tfc_dataset *ds, tfc_status *st);

typedef struct tfc_shuffle_opts {
    int64_t seed;                      /* used when has_seed; otherwise a random seed per dataset */
    bool has_seed;
    tfc_flag reshuffle_each_iteration; /* default yes: every iterator (epoch) draws another order */
} tfc_shuffle_opts;
/* Dataset.shuffle(buffer_size, seed, reshuffle_each_iteration), TensorFlow's algorithm: fill a buffer of
 * buffer_size elements, output one at a uniformly random position and put the next input element there. So
 * output k comes from the input's first k + buffer_size elements. The order is a function of (seed, epoch
 * number) only. INVALID_ARGUMENT for buffer_size < 1 (TFC_AUTOTUNE is not accepted). The buffer grows with the
 * elements that came (shuffle(2^63 - 1) of 3 elements holds 3). */
TFC_API tfc_dataset *tfc_dataset_shuffle(tfc_dataset *ds, int64_t buffer_size, const tfc_shuffle_opts *opts,
                                         tfc_status *st);

/* Dataset.repeat(count): count -1 (or any negative count, as tf.data) = forever (an empty input ends anyway);
 * 0 = empty. */
TFC_API tfc_dataset *tfc_dataset_repeat(tfc_dataset *ds, int64_t count, tfc_status *st);
/* Dataset.take(count): the first count elements (-1 or any negative count: all). */
TFC_API tfc_dataset *tfc_dataset_take(tfc_dataset *ds, int64_t count, tfc_status *st);
/* Dataset.skip(count): all but the first count elements (-1 or any negative count: skip everything). */
TFC_API tfc_dataset *tfc_dataset_skip(tfc_dataset *ds, int64_t count, tfc_status *st);
/* Dataset.shard(num_shards, index): elements i with i % num_shards == index. INVALID_ARGUMENT unless
 * num_shards > 0 and 0 <= index < num_shards. */
TFC_API tfc_dataset *tfc_dataset_shard(tfc_dataset *ds, int64_t num_shards, int64_t index, tfc_status *st);
/* Dataset.enumerate(start): elements (index int64 scalar, element), structure "(.,<input structure>)". */
TFC_API tfc_dataset *tfc_dataset_enumerate(tfc_dataset *ds, int64_t start, tfc_status *st);

typedef struct tfc_interleave_opts {
    int64_t cycle_length;              /* >= 1, or TFC_AUTOTUNE: number of cores (Python's None) */
    int64_t block_length;              /* >= 1 (Python's None is 1) */
    int64_t num_parallel_calls;        /* 0: sequential; n or TFC_AUTOTUNE: inner datasets read on threads */
    tfc_flag deterministic;
    const char *output_structure;      /* structure of the inner datasets' elements; NULL: "." */
    const tfc_tensor_spec *output_spec;/* NULL: unknown dtypes and shapes */
    void (*user_free)(void *user);
} tfc_interleave_opts;
/* Dataset.interleave(map_func, cycle_length, block_length, num_parallel_calls, deterministic): fn maps each
 * input element to a dataset; cycle_length of them are open at once and block_length consecutive elements are
 * taken from each in turn, in TensorFlow's exact order (also with num_parallel_calls, unless deterministic is
 * off, where a slow inner dataset is skipped for a ready one). The inner datasets' structure must equal
 * output_structure (INVALID_ARGUMENT otherwise). INVALID_ARGUMENT for num_parallel_calls above a fixed
 * cycle_length, as TensorFlow. As TensorFlow's InterleaveDataset op, 0 is no "default": INVALID_ARGUMENT
 * "interleave: cycle_length must be greater than zero. (cycle_length 0, ...)" for a cycle_length < 1 other than
 * TFC_AUTOTUNE, and "block_length must be greater than zero." for a block_length < 1. opts NULL: Python's
 * defaults (cycle_length TFC_AUTOTUNE, block_length 1, sequential). A cycle_length beyond what the input can fill
 * costs nothing (slots are made for the input elements actually open). */
TFC_API tfc_dataset *tfc_dataset_interleave(tfc_dataset *ds, tfc_data_dataset_fn fn, void *user,
                                            const tfc_interleave_opts *opts, tfc_status *st);
typedef struct tfc_flat_map_opts {
    const char *output_structure;      /* NULL: "." */
    const tfc_tensor_spec *output_spec;
    void (*user_free)(void *user);
} tfc_flat_map_opts;
/* Dataset.flat_map(map_func): the elements of fn(e) for each input element e, one dataset after the other. */
TFC_API tfc_dataset *tfc_dataset_flat_map(tfc_dataset *ds, tfc_data_dataset_fn fn, void *user,
                                          const tfc_flat_map_opts *opts, tfc_status *st);

/* Dataset.prefetch(buffer_size): a thread produces up to buffer_size elements ahead of the consumer
 * (TFC_AUTOTUNE: tuned, at most 64). 0 is a no-op. INVALID_ARGUMENT for buffer_size < -1. */
TFC_API tfc_dataset *tfc_dataset_prefetch(tfc_dataset *ds, int64_t buffer_size, tfc_status *st);
/* Dataset.cache(filename). filename NULL or "": in memory. Otherwise a file: the first epoch streams
 * elements to a temporary file beside <filename> as they pass (never holding the dataset in memory) and
 * renames it to <filename>.tfcache when the epoch completes (an epoch cut short leaves nothing); epochs
 * starting after that read the file (DATA_LOSS naming it when corrupt). Concurrent first epochs each write
 * their own temporary file. The in-memory cache likewise fills during the first complete epoch. */
TFC_API tfc_dataset *tfc_dataset_cache(tfc_dataset *ds, const char *filename, tfc_status *st);
/* Dataset.ignore_errors(): skips the elements whose production failed (any code but OUT_OF_RANGE). */
TFC_API tfc_dataset *tfc_dataset_ignore_errors(tfc_dataset *ds, tfc_status *st);

/* tf.data.Options (the subset tfc uses). Options set on any dataset of a pipeline apply to the whole pipeline;
 * where two say different things, the one applied later (closer to the iterated dataset) wins. */
typedef struct tfc_data_options {
    tfc_flag deterministic;            /* options.deterministic: default yes */
    int private_threadpool_size;       /* options.threading.private_threadpool_size: caps the threads of each
                                          parallel stage (and AUTOTUNE); 0 = cores */
    int max_intra_op_parallelism;      /* options.threading.max_intra_op_parallelism: 1 = ops in user functions
                                          run on the calling thread; otherwise ops of sequential stages may use
                                          a shared pool of one thread per core (workers of parallel stages
                                          always run their ops on their own thread) */
} tfc_data_options;
/* Dataset.with_options(options). */
TFC_API tfc_dataset *tfc_dataset_with_options(tfc_dataset *ds, const tfc_data_options *options, tfc_status *st);
/* Dataset.options(): the options in effect for ds. */
TFC_API tfc_data_options tfc_dataset_options(const tfc_dataset *ds);

/* ---- TFRecord files (specs/tfrecord.md) ------------------------------------------------------------------- */
/* CRC-32C and its masking: tfc_crc32c* in tfc/platform.h. */
typedef struct tfc_tfrecord_writer tfc_tfrecord_writer;
/* tf.io.TFRecordWriter(path, options): creates/truncates path. compression_type NULL, "", "GZIP" or "ZLIB";
 * compression_level -1 = zlib's default, 0..9. Errors: INVALID_ARGUMENT (compression), NOT_FOUND /
 * PERMISSION_DENIED / UNKNOWN naming the file. */
TFC_API tfc_tfrecord_writer *tfc_tfrecord_writer_new(const char *path, const char *compression_type,
                                                     int compression_level, tfc_status *st);
/* Writes one record of n bytes. */
TFC_API bool tfc_tfrecord_writer_write(tfc_tfrecord_writer *w, const void *data, size_t n, tfc_status *st);
/* Pushes buffered (and, compressed, all pending) bytes to the file; the compressed stream stays open. */
TFC_API bool tfc_tfrecord_writer_flush(tfc_tfrecord_writer *w, tfc_status *st);
/* Finishes the stream, closes and frees the writer (NULL-safe); false when the last writes failed. */
TFC_API bool tfc_tfrecord_writer_close(tfc_tfrecord_writer *w, tfc_status *st);

typedef struct tfc_tfrecord_reader tfc_tfrecord_reader;
/* Sequential record reader (tf.compat.v1.io.tf_record_iterator). buffer_size 0 = 256 KiB. */
TFC_API tfc_tfrecord_reader *tfc_tfrecord_reader_new(const char *path, const char *compression_type,
                                                     int64_t buffer_size, tfc_status *st);
/* Next record: *data (borrowed until the next call) and *len. OUT_OF_RANGE at a clean end of file; DATA_LOSS
 * as TFRecordDataset. */
TFC_API bool tfc_tfrecord_reader_next(tfc_tfrecord_reader *r, const char **data, size_t *len, tfc_status *st);
TFC_API void tfc_tfrecord_reader_free(tfc_tfrecord_reader *r);  /* NULL-safe */

#ifdef __cplusplus
}
#endif
#endif
