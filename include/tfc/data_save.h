/* tfc — saving datasets to disk: tf.data.Dataset.save / tf.data.Dataset.load (also tf.data.experimental.save /
 * load, TF >= 2.3) and tf.data.Dataset.snapshot.
 *
 * ON-DISK FORMAT (TensorFlow's non-distributed snapshot format, version 2; files tfc writes load in TensorFlow
 * and the reverse):
 *     <path>/dataset_spec.pb           element_spec as a serialised tensorflow.StructuredValue (save only)
 *     <path>/snapshot.metadata         tensorflow.data.experimental.SnapshotMetadataRecord (binary): run_id,
 *                                      version 2, the components' dtypes, num_elements, finalized
 *     <path>/<run_id>/<%08d shard>.shard/<%08d chunk>.snapshot
 *                                      TFRecord files (optionally GZIP-compressed as a whole), one record per
 *                                      component: a serialised tensorflow.TensorProto
 * Metadata and element-spec files are written to a temporary name and renamed; chunk files are written to
 * "<name>.tmp-<random>" and renamed when their shard is complete; snapshot.metadata is rewritten with
 * finalized = true only after every chunk is in place, so a writer killed midway leaves a snapshot that is not
 * complete (see tfc_dataset_snapshot and tfc_dataset_load).
 *
 * COMPRESSION: NULL, "" or "NONE": none; "GZIP". TensorFlow's "SNAPPY" is INVALID_ARGUMENT (tfc has no Snappy).
 * As in TensorFlow, the compression is not recorded in the files: load must be given the one save used.
 *
 * SHARD FUNCTION: a map function (include/tfc/data.h) writing one int64 scalar per element, the shard it goes
 * to (INVALID_ARGUMENT "`shard_func` must return a scalar int64." otherwise, or for a negative shard). Without
 * one every element goes to shard 0 (as TensorFlow's Dataset.save), which keeps the order on load.
 *
 * READER FUNCTION: given the n shard datasets (borrowed, in shard-directory order; take a reference to keep
 * one), returns the dataset to read (a new reference). The default reads the shards round-robin, one element
 * from each in turn (TensorFlow's default interleave with cycle_length >= the number of shards). */
#ifndef TFC_DATA_SAVE_H
#define TFC_DATA_SAVE_H

#include "tfc/data.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef tfc_dataset *(*tfc_data_reader_fn)(void *user, tfc_dataset *const *shards, int n_shards, tfc_status *st);

typedef struct tfc_save_opts {
    const char *compression;           /* NULL, "", "NONE" or "GZIP" */
    tfc_data_map_fn shard_func;        /* NULL: every element to shard 0 */
    void *user;                        /* passed to shard_func (borrowed) */
} tfc_save_opts;
/* Dataset.save(path, compression, shard_func): iterates ds (borrowed) to its end and writes it under path
 * (created with its parents). Errors: those of the pipeline (nothing is finalized then), INVALID_ARGUMENT for a
 * bad compression or shard index, and I/O errors naming the file (NOT_FOUND / PERMISSION_DENIED / ...).
 * opts may be NULL. */
TFC_API bool tfc_dataset_save(tfc_dataset *ds, const char *path, const tfc_save_opts *opts, tfc_status *st);

typedef struct tfc_load_opts {
    const char *compression;           /* the compression save used */
    /* element_spec: structure (NULL: read <path>/dataset_spec.pb) and one spec per component (NULL with a
     * structure: dtypes from snapshot.metadata, shapes unknown). */
    const char *structure;
    const tfc_tensor_spec *element_spec;
    tfc_data_reader_fn reader_func;    /* NULL: round-robin over the shards */
    void *user;                        /* passed to reader_func (borrowed) */
} tfc_load_opts;
/* Dataset.load(path, element_spec, compression, reader_func): a dataset of the saved elements; cardinality is
 * snapshot.metadata's num_elements. opts may be NULL. Construction errors:
 *   NOT_FOUND        "Could not find metadata file [<path>]"; "tf.data snapshot element_spec file not found:
 *                    <path>/dataset_spec.pb." (no structure given)
 *   INVALID_ARGUMENT naming <path>/snapshot.metadata and its field: a version other than 2 (older custom formats
 *                    and newer ones), a run_id that is not one path component, dtypes that are not data types;
 *                    a given or stored element_spec whose component count or dtypes differ from the metadata's
 *   FAILED_PRECONDITION  finalized is false: the save did not complete (TensorFlow reads such a snapshot
 *                    anyway; tfc refuses it)
 *   DATA_LOSS        unparsable snapshot.metadata or dataset_spec.pb
 * From next: DATA_LOSS naming the chunk file and record for bad framing, CRCs, truncation (also a file that
 * ends between the components of an element, a GZIP stream cut short, and, with the default reader, fewer
 * elements in the chunks than num_elements), an unparsable TensorProto or one of another dtype than the
 * metadata's; INVALID_ARGUMENT "load: component i: expected <spec>, got <dtype> <shape>" for an element
 * that does not match element_spec's shape. */
TFC_API tfc_dataset *tfc_dataset_load(const char *path, const tfc_load_opts *opts, tfc_status *st);

typedef struct tfc_snapshot_opts {
    const char *compression;           /* NULL or "AUTO" (= "NONE" in tfc; TensorFlow picks SNAPPY), "GZIP",
                                          "NONE" */
    tfc_data_reader_fn reader_func;    /* as tfc_load_opts */
    tfc_data_map_fn shard_func;        /* as tfc_save_opts */
    void *user;                        /* passed to both callbacks */
    void (*user_free)(void *user);     /* when set, the dataset takes user (see data.h USER FUNCTIONS) */
} tfc_snapshot_opts;
/* Dataset.snapshot(path, compression, reader_func, shard_func): the snapshot lives in
 * <path>/<fingerprint>/ in the layout above (without dataset_spec.pb), where the fingerprint is
 * FarmHash Fingerprint64 of the input's pipeline graph (tfc_dataset_graph_str without callback addresses, so
 * it is the same in every process of one program; a changed callback with the same graph is not detected),
 * its structure and dtypes. An iterator that finds a finalized snapshot there reads it (the input is not
 * iterated); otherwise it passes the input's elements through while writing a new run, and finalizes it when
 * the input ends. An iterator freed (or a process killed) before the end leaves the run unfinalized: it is
 * never read, and the next iterator writes again. Elements whose production failed pass their error and are
 * not written. Takes ds. Errors: INVALID_ARGUMENT for a bad compression; from next, those of the reader (see
 * tfc_dataset_load) and of writing (naming the file). */
TFC_API tfc_dataset *tfc_dataset_snapshot(tfc_dataset *ds, const char *path, const tfc_snapshot_opts *opts,
                                          tfc_status *st);

#ifdef __cplusplus
}
#endif
#endif
