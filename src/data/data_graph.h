/* Internal: dataset functions that are graph functions (graph_fn.c) and pipelines as GraphDefs
 * (dataset_graph.c), shared with the data service. */
#ifndef TFC_DATA_GRAPH_H
#define TFC_DATA_GRAPH_H

#include "data/data_internal.h"
#include "tfc/data_graph.h"
#include "tfc/graphdef.h"

/* A graph function a dataset node runs: a GraphDef whose library holds `entry` and every function it calls.
 * Each eager context that calls it imports the library once (the contexts of tf.data stages are private to a
 * stage or a worker thread, so names never collide). */
typedef struct data_gfn {
    char *entry;
    void *gd;                 /* serialised GraphDef (library only) */
    size_t gd_size;
    int n_in, n_out;
} data_gfn;
void data_gfn_free(void *g);  /* NULL-safe; the user_free of map and filter nodes */
/* The callbacks map and filter nodes run for a data_gfn user pointer. */
bool data_gfn_map(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                  tfc_status *st);
bool data_gfn_predicate(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, bool *keep, tfc_status *st);
/* A data_gfn of the library function `entry` of gd (its call tree exported into a fresh library-only GraphDef). */
data_gfn *data_gfn_from_graphdef(tfc_graphdef *gd, const char *entry, tfc_status *st);
/* Appends g's functions to gd's library (those it already has are left alone). */
bool data_gfn_export(const data_gfn *g, tfc_graphdef *gd, tfc_status *st);

/* The name a C callback was registered under (tfc_data_register_*), or NULL. */
const char *data_callback_name(void (*fn)(void), void *user);
/* The registered callback and user pointer of `name`; false when none is registered under it. */
bool data_callback_lookup(const char *name, void (**fn)(void), void **user);

/* Rebuilds a serialised pipeline (tfc_dataset_deserialize) and, when num_splits > 0, restricts its source to
 * split split_index of num_splits: the rows [i*R/n, (i+1)*R/n) of the leaf source's R rows (elements of a
 * RangeDataset or TensorSliceDataset, file names of a TFRecordDataset). INVALID_ARGUMENT when the pipeline has
 * no such source (see data_graph_split_rows). */
tfc_dataset *data_graph_build(const void *data, size_t size, int64_t split_index, int64_t num_splits,
                              tfc_status *st);
/* R above for ds (the rows of the source at the end of its first-input chain), or -1 with st set
 * (INVALID_ARGUMENT naming the node that has no splittable source). */
int64_t data_graph_split_rows(const tfc_dataset *ds, tfc_status *st);

#endif
