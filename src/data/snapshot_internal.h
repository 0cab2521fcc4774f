/* Internal: TensorFlow's snapshot format (include/tfc/data_save.h) shared by save/load (save_load.c) and
 * snapshot (snapshot.c): metadata and element-spec files, chunk writers, and the shard reader datasets. */
#ifndef TFC_DATA_SNAPSHOT_INTERNAL_H
#define TFC_DATA_SNAPSHOT_INTERNAL_H

#include "data/data_internal.h"
#include "tfc/data_save.h"

#define SNAP_VERSION 2
#define SNAP_METADATA "snapshot.metadata"
#define SNAP_SPEC_FILE "dataset_spec.pb"
#define SNAP_MAX_FILE ((size_t)64 << 20) /* metadata and spec files larger than this are refused */

/* "a/b" in a new tfc_malloc'd string (NULL when out of memory). */
char *snap_join(const char *a, const char *b);

/* The fields of SnapshotMetadataRecord tfc uses. */
typedef struct snap_meta {
    char run_id[64];
    char graph_hash[64];
    int64_t version, num_elements, creation_timestamp;
    int n_dtypes;
    tfc_dtype *dtypes;        /* owned */
    bool finalized;
} snap_meta;
void snap_meta_free(snap_meta *m);

/* Validates and normalises a compression name ("" or "GZIP" into *out). snapshot: accepts "AUTO". */
bool snap_compression(const char *c, bool snapshot, const char *what, const char **out, tfc_status *st);

/* <dir>/snapshot.metadata: *exists false (and true returned) when there is none. Validates the version, the run
 * id and the dtypes (INVALID_ARGUMENT naming the file and field); DATA_LOSS when it does not parse. */
bool snap_meta_read(const char *dir, snap_meta *m, bool *exists, tfc_status *st);
/* Parses metadata bytes (the fuzz target's entry); `file` names them in messages. */
bool snap_meta_parse(const uint8_t *data, size_t size, const char *file, snap_meta *m, tfc_status *st);
/* Writes <dir>/snapshot.metadata atomically. */
bool snap_meta_write(const char *dir, const char *run_id, const char *graph_hash, const data_spec *spec,
                     int64_t num_elements, bool finalized, tfc_status *st);

/* element_spec <-> serialised StructuredValue (nested_structure_coder's encoding of TensorSpecs, tuples and
 * dicts). decode fills a data_spec (free with data_spec_free). */
bool snap_spec_encode(const data_spec *spec, uint8_t **out, size_t *size, tfc_status *st);
bool snap_spec_decode(const uint8_t *data, size_t size, const char *file, data_spec *spec, tfc_status *st);

/* A fresh run id (a random uint64 in decimal). */
void snap_new_run_id(char *buf, size_t size);

/* Writers of one run: one chunk file per shard, each "<run>/<%08d>.shard/00000000.snapshot", written under a
 * temporary name until snap_writers_finish renames them all. */
typedef struct snap_writers snap_writers;
snap_writers *snap_writers_new(const char *run_dir, const char *compression, tfc_status *st);
bool snap_writers_write(snap_writers *w, int64_t shard, tfc_tensor *const *t, int n, tfc_status *st);
bool snap_writers_finish(snap_writers *w, tfc_status *st);  /* closes and renames; frees w */
void snap_writers_abort(snap_writers *w);                   /* closes, removes the temporary files; frees w */

/* The shard index of an element: shard_func's int64 scalar, or 0 without one. */
bool snap_shard_index(tfc_ctx *ctx, tfc_data_map_fn fn, void *user, tfc_tensor *const *t, int n, int64_t *shard,
                      tfc_status *st);

/* The dataset reading a finalized run <dir>/<m->run_id>: one shard dataset per "*.shard" directory (sorted),
 * combined by reader_func (NULL: round-robin), wrapped in a node of cardinality m->num_elements that (with the
 * default reader) checks the count at the end. spec: the elements' spec (dtypes equal to m's). `what` names
 * the operation in messages ("load"). */
tfc_dataset *snap_reader_dataset(const char *dir, const snap_meta *m, const data_spec *spec,
                                 const char *compression, tfc_data_reader_fn reader_func, void *user,
                                 const char *what, tfc_status *st);
/* Checks a spec against the metadata's dtypes: INVALID_ARGUMENT naming the file and field otherwise. */
bool snap_check_dtypes(const data_spec *spec, const snap_meta *m, const char *dir, tfc_status *st);

#endif
