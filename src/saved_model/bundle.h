/* Internal: TensorFlow's tensor bundle (checkpoint V2), read and written: `<prefix>.index`, a table (table.h)
 * mapping "" to a BundleHeaderProto and each tensor name to a BundleEntryProto, and `<prefix>.data-SSSSS-of-NNNNN`
 * shards holding the tensor bytes, each tensor's masked CRC32C in its entry (specs/savedmodel.md §6). Used by
 * checkpoints, SavedModel variables and the `tfc checkpoint` tool. */
#ifndef TFC_SAVED_MODEL_BUNDLE_H
#define TFC_SAVED_MODEL_BUNDLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tfc/tensor.h"

/* The key under which object-based checkpoints store their TrackableObjectGraph (a DT_STRING scalar). */
#define TFC_BUNDLE_OBJECT_GRAPH_KEY "_CHECKPOINTABLE_OBJECT_GRAPH"

typedef struct {
    const char *key; /* NUL-terminated; owned by the reader */
    int dtype;       /* TensorFlow DataType number (may be one tfc cannot hold, e.g. complex64) */
    tfc_shape shape; /* fully defined */
    int32_t shard_id;
    int64_t offset, size; /* bytes in the shard */
    uint32_t crc32c;      /* masked, as stored */
    bool sliced;          /* a partitioned variable's full entry (its slices live under other keys) */
    size_t key_len;       /* bytes of key (slice keys hold NUL bytes) */
    size_t table_index;   /* the index table's entry (reader-internal) */
} tfc_bundle_entry;

typedef struct tfc_bundle_reader tfc_bundle_reader;

/* Opens the bundle at prefix (tf.train.load_checkpoint's BundleReader): reads and checks `<prefix>.index`
 * entirely: every block CRC, the header (num_shards >= 1, endianness), and each entry (a DataType TensorFlow
 * knows, a fully defined shape whose element count fits int64, shard_id < num_shards, offset/size >= 0, size
 * equal to elements x dtype size for fixed-size dtypes). Data shards open when a tensor is read.
 *   NOT_FOUND         no `<prefix>.index`
 *   DATA_LOSS         a corrupt table or message (the message names the file, key and field)
 *   INVALID_ARGUMENT  an entry's values are out of range (as above) */
tfc_bundle_reader *tfc_bundle_open(const char *prefix, tfc_status *st);
/* tfc_bundle_open with explicit file names: index_path, and shard0_path (NULL: derived from name) for shard 0;
 * name is the prefix used in messages and to derive the other shards' names. */
tfc_bundle_reader *tfc_bundle_open_at(const char *name, const char *index_path, const char *shard0_path,
                                      tfc_status *st);
void tfc_bundle_close(tfc_bundle_reader *r); /* NULL-safe */

/* Tensor entries in key order (the header "" and the slices of partitioned variables, whose keys are TensorFlow's
 * binary EncodeTensorNameSlice keys, are not among them: a sliced entry reads as its whole tensor). */
size_t tfc_bundle_num_entries(const tfc_bundle_reader *r);
const tfc_bundle_entry *tfc_bundle_entry_at(const tfc_bundle_reader *r, size_t i);
const tfc_bundle_entry *tfc_bundle_find(const tfc_bundle_reader *r, const char *key); /* NULL when absent */
const char *tfc_bundle_prefix(const tfc_bundle_reader *r);

/* Reads a tensor's value (a new tensor, caller owns one reference), checking the bytes against the entry:
 *   NOT_FOUND         no such key
 *   DATA_LOSS         the shard is missing or shorter than offset + size, the CRC32C does not match, a string
 *                     tensor's lengths are malformed or do not add up to size
 *   INVALID_ARGUMENT  a partitioned variable whose slices are missing, out of its bounds, of another dtype or
 *                     size, or do not cover it
 *   UNIMPLEMENTED     a dtype tfc cannot hold (or a partitioned string variable)
 * A partitioned variable (tf.distribute's variable partitioners, ShardedVariable: a full entry listing slices,
 * each stored under its own key, possibly in other data shards) is assembled from its slices. */
tfc_tensor *tfc_bundle_read(tfc_bundle_reader *r, const char *key, tfc_status *st);

/* ---- writing ---- */

typedef struct tfc_bundle_writer tfc_bundle_writer;
/* Starts a bundle at prefix (one shard); creates the prefix's directory. Tensor bytes go to a temporary file
 * next to the shard's name; nothing under the final names changes until tfc_bundle_writer_finish. */
tfc_bundle_writer *tfc_bundle_writer_new(const char *prefix, tfc_status *st);
/* Appends a tensor under key (INVALID_ARGUMENT for a duplicate or empty key, a symbolic or resource tensor). */
bool tfc_bundle_writer_add(tfc_bundle_writer *w, const char *key, const tfc_tensor *t, tfc_status *st);
/* Syncs and renames the data shard into place, then writes the index (temporary name, renamed). */
bool tfc_bundle_writer_finish(tfc_bundle_writer *w, tfc_status *st);
/* Frees the writer; an unfinished bundle's temporary file is removed. NULL-safe. */
void tfc_bundle_writer_free(tfc_bundle_writer *w);

/* `<prefix>.data-SSSSS-of-NNNNN` into buf. */
void tfc_bundle_shard_name(const char *prefix, int shard, int num_shards, char *buf, size_t size);

#endif
