/* tfc — tf.data pipelines as graphs: map and filter functions that are graph functions (tf.function), and a
 * pipeline serialised as a GraphDef, which is how the tf.data service ships a dataset to workers that were not
 * compiled with it.
 *
 * THE GRAPH. tfc_dataset_serialize writes one GraphDef node per dataset with TensorFlow's dataset op name
 * (RangeDataset, TensorSliceDataset, TensorDataset, TFRecordDataset, TextLineDataset, MapDataset,
 * ParallelMapDatasetV2, FilterDataset, BatchDatasetV2, ParallelBatchDataset, ShuffleDatasetV3, RepeatDataset,
 * TakeDataset, SkipDataset, ShardDataset, PrefetchDataset, EnumerateDataset, ZipDataset, ConcatenateDataset,
 * UnbatchDataset, IgnoreErrorsDataset, OptionsDataset), its inputs the upstream datasets (and, for
 * Tensor(Slice)Dataset, Const nodes holding the components), TensorFlow's output_types / output_shapes attrs
 * and the transformation's arguments as attrs under TensorFlow's argument names (scalars such as batch_size,
 * count and buffer_size are attrs rather than Const inputs). The last node is the pipeline's output. A map or
 * filter made with tfc_dataset_map_function / tfc_dataset_filter_function carries its function as a func attr
 * `f` / `predicate` naming a FunctionDef of the graph's library, so the receiver runs it without the C code.
 *
 * C CALLBACKS. A map or filter with a plain C callback serialises only when the callback (and its user pointer)
 * was registered by name with tfc_data_register_map_fn / tfc_data_register_predicate_fn; the node then carries
 * the attr `_tfc_callback` = name, and the receiving process must have registered a callback under the same name
 * (NOT_FOUND naming it otherwise). An unregistered callback is INVALID_ARGUMENT naming the transformation and
 * the callback's address. Generators, interleave, flat_map, padded batches, caches and other nodes without a
 * graph form are INVALID_ARGUMENT naming the node, and so is a node whose element dtypes are unknown (a C-callback
 * map without output_spec). */
#ifndef TFC_DATA_GRAPH_H_PUBLIC
#define TFC_DATA_GRAPH_H_PUBLIC

#include "tfc/data.h"
#include "tfc/function.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Dataset.map(f) with f a graph function (tf.function) made in ctx: f is traced once for the input's element spec (its
 * inputs are the element's components, flat) and its concrete function runs for every element, in each
 * iterator's own context. The output spec and structure are the concrete function's (opts->output_structure
 * may give a nesting for them; output_spec and user_free are ignored). f is not kept: the dataset holds the
 * traced graph. num_parallel_calls and deterministic as tfc_dataset_map. Takes ds.
 * INVALID_ARGUMENT when tracing fails, when the function captures variables or large tensors (a dataset
 * function must be self-contained to be shipped), or when it returns no output. */
TFC_API tfc_dataset *tfc_dataset_map_function(tfc_dataset *ds, tfc_ctx *ctx, tfc_function *f,
                                              const tfc_map_opts *opts, tfc_status *st);
/* Dataset.filter(predicate) with a graph function returning one bool scalar. Takes ds. INVALID_ARGUMENT as
 * tfc_dataset_map_function, and when the output is not a bool scalar. */
TFC_API tfc_dataset *tfc_dataset_filter_function(tfc_dataset *ds, tfc_ctx *ctx, tfc_function *predicate,
                                                 tfc_status *st);

/* Registers a C map callback and its user pointer (kept, never freed) under name, process-wide, so pipelines
 * using it serialise and rebuild (see C CALLBACKS). ALREADY_EXISTS when name is taken by another callback;
 * registering the same pair again is fine. INVALID_ARGUMENT for an empty name. */
TFC_API bool tfc_data_register_map_fn(const char *name, tfc_data_map_fn fn, void *user, tfc_status *st);
/* The same for filter predicates. */
TFC_API bool tfc_data_register_predicate_fn(const char *name, tfc_data_predicate_fn fn, void *user, tfc_status *st);

/* Serialises the pipeline ending at ds as GraphDef bytes (see THE GRAPH) into *data (free with tfc_free) and
 * *size. INVALID_ARGUMENT naming the first node that has no graph form. */
TFC_API bool tfc_dataset_serialize(const tfc_dataset *ds, void **data, size_t *size, tfc_status *st);
/* Rebuilds a pipeline from tfc_dataset_serialize's bytes. DATA_LOSS for malformed bytes; INVALID_ARGUMENT for
 * a graph that is not such a pipeline (unknown dataset op, missing or bad attrs, naming the node); NOT_FOUND for
 * a callback name not registered here. Returns a new dataset (the caller's reference). */
TFC_API tfc_dataset *tfc_dataset_deserialize(const void *data, size_t size, tfc_status *st);

#ifdef __cplusplus
}
#endif
#endif
