/* tf.summary.graph: a GraphDef as the Event's graph_def (TensorBoard's graph dashboard reads the last one of a
 * run). The bytes are checked to be a GraphDef first, so a run never holds a graph TensorBoard cannot show. */
#include "summary/summary_internal.h"
#include "tfc/graphdef.h"

bool tfc_summary_write_graph(tfc_summary_writer *w, const void *graph_def, size_t size, tfc_status *st) {
    if (!graph_def && size) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "tf.summary.graph: NULL graph_def");
    /* An unknown op is not an error here: TensorBoard draws graphs of ops tfc cannot run. */
    tfc_graphdef *g = tfc_graphdef_parse(graph_def, size, &(tfc_graphdef_opts){.allow_unknown_ops = true}, st);
    if (!g) {
        tfc_status err = *st;
        return tfc_status_set(st, err.code, "tf.summary.graph: graph_def is not a valid GraphDef: %s", err.msg);
    }
    tfc_graphdef_free(g);
    Tensorflow__Event ev = TENSORFLOW__EVENT__INIT;
    ev.what_case = TENSORFLOW__EVENT__WHAT_GRAPH_DEF;
    ev.graph_def.data = (uint8_t *)graph_def;
    ev.graph_def.len = size;
    ev.step = 0; /* as TensorFlow: a graph belongs to the run, not to a step */
    return summary_writer_add(w, &ev, st);
}

bool tfc_summary_write_function_graph(tfc_summary_writer *w, tfc_ctx *ctx, const tfc_concrete_function *cf,
                                      tfc_status *st) {
    if (!cf) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "tf.summary.graph: NULL concrete function");
    void *data = NULL;
    size_t size = 0;
    if (!tfc_concrete_function_graph_def(ctx, cf, &data, &size, st)) return false;
    bool ok = tfc_summary_write_graph(w, data, size, st);
    tfc_free(data);
    return ok;
}

bool tfc_summary_graph(const void *graph_def, size_t size, tfc_status *st) {
    if (!summary_recording()) {
        tfc_status_clear(st);
        return false;
    }
    return tfc_summary_write_graph(tfc_summary_default_writer(), graph_def, size, st);
}
