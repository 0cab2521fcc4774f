/* Internal: GraphDef <-> graph IR. Import turns a validated GraphDef (tfc_graphdef) into library functions of
 * the IR; export writes IR graphs and functions as GraphDef nodes and FunctionDefs with TensorFlow's op names,
 * attrs and input syntax. */
#ifndef TFC_GRAPH_GRAPHDEF_IO_H
#define TFC_GRAPH_GRAPHDEF_IO_H

#include "graph/graph.h"
#include "tfc/graphdef.h"

/* Adds every function of gd's library to lib (same names; ALREADY_EXISTS when lib has one). Nodes whose op is
 * a library function become PartitionedCall / StatefulPartitionedCall nodes; attrs tfc's op does not declare
 * (TensorFlow's "_"-prefixed annotations, ...) are dropped. */
bool tfc_graphdef_import_library(tfc_graphdef *gd, tfc_flib *lib, tfc_status *st);
/* Imports gd's own nodes as a new function `name` of lib: its arguments are the graph's Placeholder nodes in
 * node order (resource placeholders are how TensorFlow passes captured variables), its results the
 * `outputs` ("node" or "node:k"). Import the library first. NOT_FOUND for an output naming no node. */
tfc_gfunc *tfc_graphdef_import_graph(tfc_graphdef *gd, tfc_flib *lib, const char *name, const char *const *outputs,
                                     int n_outputs, tfc_status *st);

/* A tensor of the graph fed as an argument of an imported subgraph: "node" or "node:k", with the dtype and
 * (optional) shape the argument gets. */
typedef struct tfc_graphdef_feed {
    const char *tensor;
    tfc_dtype dtype;
    const tfc_shape *shape;
} tfc_graphdef_feed;
/* Imports the part of gd's own nodes that `outputs` ("node" / "node:k"; "^node": a target, run for its effects as
 * a control result, not a result) need, as a new function `name` of lib
 * (TensorFlow's Session pruning): argument i is feeds[i], whose producer is not run (any tensor may be fed, a
 * VarHandleOp's handle as well as a Placeholder); nodes the outputs do not need are left out, so the rest of the
 * graph may hold ops tfc lacks (validate with allow_unknown_ops). The library functions those nodes call, and
 * the ones they call, are imported first when lib lacks them. NOT_FOUND for a feed or output naming no tensor;
 * INVALID_ARGUMENT for a needed Placeholder that is not fed. */
tfc_gfunc *tfc_graphdef_import_subgraph(tfc_graphdef *gd, tfc_flib *lib, const char *name,
                                        const tfc_graphdef_feed *feeds, int n_feeds, const char *const *outputs,
                                        int n_outputs, tfc_status *st);

/* Appends g's nodes to gd's top level (input strings "node", "node:k", "^node"; every resolved attr). */
bool tfc_graphdef_export_graph(const tfc_graph *g, tfc_graphdef *gd, tfc_status *st);
/* Appends fn as a FunctionDef (arguments from its Placeholder args, results "node:out_arg:k"). */
bool tfc_graphdef_export_function(const tfc_gfunc *fn, tfc_graphdef *gd, tfc_status *st);

/* Appends fn and every function it calls (directly or through others) that gd does not hold yet. */
bool tfc_graphdef_export_function_tree(const tfc_gfunc *fn, const tfc_flib *lib, tfc_graphdef *gd, tfc_status *st);

#endif
