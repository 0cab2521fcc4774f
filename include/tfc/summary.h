/* tfc — tf.summary (TF 2): event files that TensorBoard reads (specs/tfevents.md).
 *
 * A writer owns one file `<logdir>/events.out.tfevents.<seconds, %010d>.<hostname>.<pid>.<n><suffix>` (n counts
 * the files this process opened, suffix ".v2" by default: TensorFlow's EventsWriter names), a TFRecord file of
 * serialized tensorflow.Event messages whose first record is Event{wall_time, file_version "brain.Event:2"}.
 * Summaries are TF 2 tensor summaries: a Summary.Value with a TensorProto and SummaryMetadata naming the
 * TensorBoard plugin ("scalars", "histograms", "images", "text"), as tf.summary.scalar/histogram/image/text
 * write them.
 *
 * Queueing is tf.summary.create_file_writer's: events wait in memory and are written (and the file flushed)
 * when more than max_queue wait or flush_millis have passed since the last flush, and at flush/close. Write
 * errors (a full disk, a removed folder) therefore show at that point; a writer that failed keeps failing with
 * the same message.
 *
 * Steps: every write takes a step; TFC_SUMMARY_DEFAULT_STEP means the thread's default step
 * (tf.summary.experimental.set_step); with none set the write is INVALID_ARGUMENT, as TF's ValueError.
 * The default writer (writer.as_default()) and the default step and tf.summary.record_if state are per
 * thread, as in TensorFlow. Writers are safe to share between threads. */
#ifndef TFC_SUMMARY_H
#define TFC_SUMMARY_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "tfc/eager.h"
#include "tfc/function.h"
#include "tfc/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tfc_summary_writer tfc_summary_writer;

#define TFC_SUMMARY_DEFAULT_STEP INT64_MIN

/* tf.summary.create_file_writer(logdir, max_queue=10, flush_millis=120000, filename_suffix=".v2"): creates
 * logdir and its missing parents, then the event file with its file_version record (flushed at once, so the
 * file exists when this returns). max_queue <= 0 and flush_millis <= 0 take the defaults; filename_suffix NULL
 * is ".v2" ("" for none). Errors: INVALID_ARGUMENT (NULL/empty logdir), PERMISSION_DENIED / NOT_FOUND /
 * FAILED_PRECONDITION (a logdir component is a file) / UNKNOWN naming the path. */
TFC_API tfc_summary_writer *tfc_summary_create_file_writer(const char *logdir, int max_queue, int flush_millis,
                                                           const char *filename_suffix, tfc_status *st);
/* The event file's path (owned by the writer). */
TFC_API const char *tfc_summary_writer_path(const tfc_summary_writer *w);
/* writer.flush(): writes the queued events and flushes the file. */
TFC_API bool tfc_summary_writer_flush(tfc_summary_writer *w, tfc_status *st);
/* writer.close(): flushes and closes the file; later writes are FAILED_PRECONDITION. */
TFC_API bool tfc_summary_writer_close(tfc_summary_writer *w, tfc_status *st);
/* Closes (errors dropped) and frees; NULL-safe. If w is the calling thread's default writer that is cleared. */
TFC_API void tfc_summary_writer_free(tfc_summary_writer *w);

/* writer.as_default(): makes w (NULL: none) the calling thread's default writer; returns the previous one
 * (restore it to leave the `with` block). The writer is borrowed. */
TFC_API tfc_summary_writer *tfc_summary_set_default_writer(tfc_summary_writer *w);
TFC_API tfc_summary_writer *tfc_summary_default_writer(void);
/* tf.summary.experimental.set_step / get_step: the thread's default step; TFC_SUMMARY_DEFAULT_STEP clears it.
 * get returns TFC_SUMMARY_DEFAULT_STEP when none is set. */
TFC_API void tfc_summary_set_step(int64_t step);
TFC_API int64_t tfc_summary_get_step(void);
/* tf.summary.record_if(condition) for the calling thread: while false, the default-writer functions below
 * write nothing and return false. Returns the previous state (initially true). */
TFC_API bool tfc_summary_record_if(bool record);

/* ---- writing to a given writer (tf.summary.* under writer.as_default()) ----------------------------------
 * Each returns true when the event was queued. description (may be NULL) is SummaryMetadata's
 * summary_description. Errors: INVALID_ARGUMENT (NULL/empty tag, bad data, no step), FAILED_PRECONDITION
 * (closed writer), the writer's I/O error. */

/* tf.summary.scalar: the value as a float32 scalar tensor, plugin "scalars". */
TFC_API bool tfc_summary_write_scalar(tfc_summary_writer *w, const char *tag, double value, int64_t step,
                                      const char *description, tfc_status *st);
/* tf.summary.histogram (TensorBoard's summary_v2): data of any shape and real dtype is flattened to float64
 * and bucketed into `buckets` equal-width buckets (<= 0: 30) between its min and max; the tensor is float64
 * [buckets, 3] of rows (left edge, right edge, count): the last edge is the max, a value on an inner edge goes
 * to the bucket on its right, the max to the last bucket; all-equal data has every edge at that value and
 * the count in the last bucket; empty data gives [buckets, 3] zeros. Plugin "histograms". */
TFC_API bool tfc_summary_write_histogram(tfc_summary_writer *w, const char *tag, const tfc_tensor *data, int64_t step,
                                         int buckets, const char *description, tfc_status *st);
/* tf.summary.image: data [k, h, w, c], c in {1, 3, 4}, uint8 or float (float16/bfloat16/float32/float64 in
 * [0, 1]; converted as tf.image.convert_image_dtype(saturate=True): x * 255.5 clipped to [0, 255] and
 * truncated); the first max_outputs (<= 0: 3) images are PNG-encoded (EncodePng, ctx runs it). The tensor is
 * string [2 + n]: width, height (decimal), then the PNGs; plugin "images". */
TFC_API bool tfc_summary_write_image(tfc_summary_writer *w, tfc_ctx *ctx, const char *tag, const tfc_tensor *data,
                                     int64_t step, int max_outputs, const char *description, tfc_status *st);
/* tf.summary.text: data is a string tensor of any shape (written as is), plugin "text". */
TFC_API bool tfc_summary_write_text(tfc_summary_writer *w, const char *tag, const tfc_tensor *data, int64_t step,
                                    const char *description, tfc_status *st);
/* tf.summary.write: any tensor (numeric, bool or string) with the given plugin name and plugin content bytes
 * (plugin_name NULL: no metadata). */
TFC_API bool tfc_summary_write_tensor(tfc_summary_writer *w, const char *tag, const tfc_tensor *data, int64_t step,
                                      const char *plugin_name, const void *plugin_content, size_t content_len,
                                      const char *description, tfc_status *st);

/* tf.summary.graph(graph_data): serialised GraphDef bytes as the run's graph (Event.graph_def, step 0 as
 * TensorFlow writes it; TensorBoard's graph dashboard shows the last graph of a run). The bytes are parsed and
 * validated first (ops tfc does not know are allowed): INVALID_ARGUMENT / DATA_LOSS with the parser's message
 * for bytes that are not a GraphDef. The bytes are copied; the caller keeps them. */
TFC_API bool tfc_summary_write_graph(tfc_summary_writer *w, const void *graph_def, size_t size, tfc_status *st);
/* tf.summary.graph(f.get_concrete_function().graph): the concrete function's graph with its function library
 * (tfc_concrete_function_graph_def of tfc/graphdef.h; ctx is the context it was traced in). */
TFC_API bool tfc_summary_write_function_graph(tfc_summary_writer *w, tfc_ctx *ctx, const tfc_concrete_function *cf,
                                              tfc_status *st);

/* ---- the default writer (tf.summary.scalar(name, data, step=None, description=None) etc.) ----------------
 * Write to the thread's default writer; with no default writer, or under record_if(false), nothing is written
 * and false is returned with st OK (TensorFlow's False). */
TFC_API bool tfc_summary_scalar(const char *name, double value, int64_t step, tfc_status *st);
TFC_API bool tfc_summary_histogram(const char *name, const tfc_tensor *data, int64_t step, int buckets,
                                   tfc_status *st);
TFC_API bool tfc_summary_image(tfc_ctx *ctx, const char *name, const tfc_tensor *data, int64_t step,
                               int max_outputs, tfc_status *st);
TFC_API bool tfc_summary_text(const char *name, const tfc_tensor *data, int64_t step, tfc_status *st);
/* tf.summary.graph to the default writer (false with st OK when nothing records, as the functions above). */
TFC_API bool tfc_summary_graph(const void *graph_def, size_t size, tfc_status *st);
/* tf.summary.flush(): flushes the default writer (nothing to do without one). */
TFC_API bool tfc_summary_flush(tfc_status *st);

#ifdef __cplusplus
}
#endif
#endif
