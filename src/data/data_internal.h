/* Internal: dataset nodes, iterators, element helpers and user-function calls shared by src/data. */
#ifndef TFC_DATA_INTERNAL_H
#define TFC_DATA_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "core/tensor_internal.h"
#include "tfc/data.h"

/* ---- element spec ---------------------------------------------------------------------------------------- */
typedef struct data_spec {
    char *structure;          /* canonical structure string (owned) */
    int n;                    /* components */
    tfc_tensor_spec *comps;   /* n entries (owned) */
} data_spec;

/* Parses a structure string: *canonical (tfc_malloc'ed, may be NULL when not wanted) and the leaf count. */
bool data_struct_parse(const char *s, char **canonical, int *n_leaves, tfc_status *st);
/* spec of n components of unknown dtype and shape with the given structure (NULL: "." or a tuple of n). */
bool data_spec_init(data_spec *sp, const char *structure, int n, const tfc_tensor_spec *comps, tfc_status *st);
bool data_spec_copy(data_spec *dst, const data_spec *src, tfc_status *st);
void data_spec_free(data_spec *sp);
/* Checks one produced element against a spec: INVALID_ARGUMENT "<what>: component i: expected <spec>, got
 * <dtype> <shape>". */
bool data_spec_check(const data_spec *sp, tfc_tensor *const *t, const char *what, tfc_status *st);
/* A spec of the tensor's dtype and shape. */
tfc_tensor_spec data_spec_of(const tfc_tensor *t);
/* "float32 [?,3]" style text. */
char *data_spec_str(const tfc_tensor_spec *s, char *buf, size_t size);

/* ---- dataset nodes ----------------------------------------------------------------------------------------- */
typedef struct data_iter data_iter;
typedef struct data_ictx data_ictx;

/* The growing text of tfc_dataset_graph_str. */
typedef struct data_strbuf {
    char *buf;
    size_t size, len;
} data_strbuf;
void data_strbuf_printf(data_strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

typedef struct data_kind {
    const char *name;         /* TensorFlow's dataset op name ("MapDataset") */
    data_iter *(*make_iter)(tfc_dataset *ds, const data_ictx *ictx, tfc_status *st);
    int64_t (*cardinality)(const tfc_dataset *ds);   /* NULL: UNKNOWN */
    void (*free)(tfc_dataset *ds);                   /* releases what params own; may be NULL */
    void (*describe)(const tfc_dataset *ds, data_strbuf *b); /* "arg=value, ..."; may be NULL */
} data_kind;

struct tfc_dataset {
    atomic_int refcount;
    const data_kind *kind;
    int n_inputs;
    tfc_dataset **inputs;     /* owned references */
    data_spec spec;
    tfc_data_options opts;    /* merged from the inputs and with_options */
    void *p;                  /* kind parameters, allocated with the node (zeroed) */
};

/* New node of kind k with params of psize bytes. Takes the n_in input references, also on failure. Options
 * are merged from the inputs (later inputs overriding earlier ones where set). */
tfc_dataset *data_ds_new(const data_kind *k, size_t psize, tfc_dataset *const *inputs, int n_in, tfc_status *st);
/* Returns false (and sets st unless it already holds an error) when an input of a transformation is NULL. */
bool data_check_input(tfc_dataset *ds, tfc_status *st);
/* Frees a node whose construction failed after data_ds_new (spec set or not). Returns NULL. */
tfc_dataset *data_ds_fail(tfc_dataset *ds);

/* Cardinality arithmetic helpers. */
int64_t data_card_input(const tfc_dataset *ds);  /* cardinality of inputs[0] */

/* ---- iterators --------------------------------------------------------------------------------------------- */
/* What all iterators of one tfc_iterator tree share (immutable once made). */
struct data_ictx {
    tfc_data_options opts;
    bool deterministic;       /* resolved opts.deterministic */
    int max_threads;          /* resolved private_threadpool_size (>= 1) */
    struct data_replay *replay; /* the tfc_iterator's checkpoint record (src/data/iterator_state.c) */
};

typedef struct data_iter_vt {
    /* Writes spec.n new references to out or sets *end. On error returns false (out all NULL). */
    bool (*next)(data_iter *it, tfc_tensor **out, bool *end, tfc_status *st);
    void (*free)(data_iter *it);  /* releases what the iterator owns besides the base (not it itself) */
} data_iter_vt;

struct data_iter {
    const data_iter_vt *vt;
    tfc_dataset *ds;          /* borrowed: the tfc_iterator or the parent iterator keeps the node alive */
    const data_ictx *ictx;
};

/* Allocates a zeroed iterator of `size` bytes (>= sizeof(data_iter)) for ds. */
void *data_iter_alloc(size_t size, const data_iter_vt *vt, tfc_dataset *ds, const data_ictx *ictx, tfc_status *st);
data_iter *data_iter_make(tfc_dataset *ds, const data_ictx *ictx, tfc_status *st);
void data_iter_free(data_iter *it);  /* NULL-safe */
static inline bool data_iter_next(data_iter *it, tfc_tensor **out, bool *end, tfc_status *st) {
    *end = false;
    return it->vt->next(it, out, end, st);
}

/* ---- tensors and elements ---------------------------------------------------------------------------------- */
void data_unref_n(tfc_tensor **t, int n);           /* unrefs and NULLs t[0..n) */
void data_ref_n(tfc_tensor *const *src, tfc_tensor **dst, int n);
/* Row i of t (dims[1:]), a copy. */
tfc_tensor *data_slice_row(const tfc_tensor *t, int64_t i, tfc_status *st);
/* Stacks component c of n elements (elems[k * stride + c]) along a new dim 0. Shapes must be equal
 * (INVALID_ARGUMENT "Cannot batch tensors with different shapes in component c. ..."). */
tfc_tensor *data_stack(tfc_tensor *const *elems, int64_t n, int stride, int c, tfc_status *st);
/* As data_stack, padding each element to `pad` (dims -1: the batch maximum) with the scalar `value` (NULL:
 * zeros / ""). */
tfc_tensor *data_pad_stack(tfc_tensor *const *elems, int64_t n, int stride, int c, const tfc_shape *pad,
                           const tfc_tensor *value, tfc_status *st);
/* Copies count elements of dtype dt from src[si..] to dst[di..] (strings deep-copied). */
bool data_copy_elems(tfc_dtype dt, void *dst, int64_t di, const void *src, int64_t si, int64_t count, tfc_status *st);

/* ---- user functions ----------------------------------------------------------------------------------------- */
/* An eager context for user functions. pooled: ops may use the shared data thread pool (sequential stages);
 * otherwise ops run on the calling thread (parallel workers, where parallelism is across elements). */
tfc_ctx *data_ctx_new(const data_ictx *ictx, bool pooled, tfc_status *st);
void data_ctx_free(tfc_ctx *ctx);
/* Runs fn in a scope on ctx and keeps its n_out outputs (checked against out_spec when not NULL). what names the
 * transformation in messages. On failure out holds NULLs and st the error (OUT_OF_RANGE made INVALID_ARGUMENT). */
bool data_call_map(tfc_ctx *ctx, tfc_data_map_fn fn, void *user, tfc_tensor *const *in, int n_in, tfc_tensor **out,
                   const data_spec *out_spec, const char *what, tfc_status *st);
bool data_call_predicate(tfc_ctx *ctx, tfc_data_predicate_fn fn, void *user, tfc_tensor *const *in, int n_in,
                         bool *keep, tfc_status *st);
tfc_dataset *data_call_dataset_fn(tfc_ctx *ctx, tfc_data_dataset_fn fn, void *user, tfc_tensor *const *in, int n_in,
                                  const data_spec *out_spec, const char *what, tfc_status *st);
/* Normalises the status of a failed user callback (a callback that returned false without setting st). */
void data_fix_callback_status(tfc_status *st, const char *what);

/* ---- threads and time -------------------------------------------------------------------------------------- */
double data_now(void);        /* monotonic seconds */
int64_t data_random_seed(void); /* a fresh seed from the OS (or time and a counter) */

/* ---- shared pieces between files ---------------------------------------------------------------------------- */
/* The sequential interleave iterator core (also flat_map): src/data/interleave.c. */
typedef struct data_interleave_params {
    tfc_data_dataset_fn fn;
    void *user;
    void (*user_free)(void *);
    int64_t cycle_length, block_length, num_parallel_calls;
    tfc_flag deterministic;
    bool flat_map;
} data_interleave_params;
/* Builds an InterleaveDataset, ParallelInterleaveDatasetV4 (num_parallel_calls set) or FlatMapDataset node.
 * Takes ds; p->user_free runs when the node goes (also when this fails). */
tfc_dataset *data_interleave_new(tfc_dataset *ds, const data_interleave_params *p, const char *structure,
                                 const tfc_tensor_spec *spec, tfc_status *st);

/* File name of element 0 of a string scalar (borrowed); NULL with INVALID_ARGUMENT otherwise. */
const char *data_filename(const tfc_tensor *t, const char *what, size_t *len, tfc_status *st);

/* File sources (TFRecordDataset, TextLineDataset): params of a single-file-sequence node, and the builder that
 * validates options and, with num_parallel_reads, interleaves one single-file dataset per file (as TensorFlow). */
typedef struct data_file_params {
    char *compression;
    int64_t buffer_size;
} data_file_params;
tfc_dataset *data_file_source(const data_kind *k, tfc_dataset *files, const tfc_reader_opts *opts, tfc_status *st);
tfc_dataset *data_file_source_single(const data_kind *k, tfc_dataset *files, const tfc_reader_opts *o,
                                     tfc_status *st);
void data_file_free(tfc_dataset *ds);
void data_file_describe(const tfc_dataset *ds, data_strbuf *b);

/* Compressed or plain sequential file input (src/data/file_stream.c). */
typedef struct data_stream data_stream;
data_stream *data_stream_open(const char *path, const char *compression_type, int64_t buffer_size, tfc_status *st);
/* Reads up to n bytes; *got gets how many (short only at the end of the data). */
bool data_stream_read(data_stream *s, void *buf, size_t n, size_t *got, tfc_status *st);
/* Bytes left in a plain file (-1 when compressed or unknown). */
int64_t data_stream_remaining(const data_stream *s);
void data_stream_close(data_stream *s);
/* Validates a compression type: INVALID_ARGUMENT naming it unless NULL, "", "GZIP" or "ZLIB". */
bool data_check_compression(const char *compression_type, tfc_status *st);

/* Element serialisation (cache files): appends the element to a growing byte buffer / reads it back. */
typedef struct data_bytes {
    uint8_t *p;
    size_t len, cap;
} data_bytes;
bool data_bytes_put(data_bytes *b, const void *src, size_t n, tfc_status *st);
bool data_encode_element(data_bytes *b, tfc_tensor *const *t, int n, tfc_status *st);
bool data_decode_element(const uint8_t *p, size_t len, tfc_tensor **t, int n, const char *what, tfc_status *st);

/* The TFRecord framing on top of a data_stream (src/data/tfrecord.c); `name` is used in messages. */
typedef struct data_record_reader {
    data_stream *s;
    char *path;
    int64_t index;            /* records read so far */
    uint8_t *buf;
    size_t cap;
    bool dead;                /* framing lost: no more records */
} data_record_reader;
bool data_record_reader_open(data_record_reader *r, const char *path, const char *compression_type,
                             int64_t buffer_size, tfc_status *st);
/* Next record into r->buf; *len its size; *end at a clean end. */
bool data_record_reader_next(data_record_reader *r, size_t *len, bool *end, tfc_status *st);
void data_record_reader_close(data_record_reader *r);
/* Frames one record into b (length, masked CRCs). */
bool data_record_frame(data_bytes *b, const void *data, size_t n, tfc_status *st);

#endif
