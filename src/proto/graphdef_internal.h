/* Internal: the parsed GraphDef (protobuf-c structs) with its indexes, and how a node's op is resolved
 * (tfc's registry, TensorFlow's graph-only ops tfc does not register, or a library function). */
#ifndef TFC_PROTO_GRAPHDEF_INTERNAL_H
#define TFC_PROTO_GRAPHDEF_INTERNAL_H

#include "ops/registry.h"
#include "proto/function.pb-c.h"
#include "proto/graph.pb-c.h"
#include "proto/node_def.pb-c.h"
#include "proto/proto_internal.h"
#include "tfc/graphdef.h"

/* String -> index hash map (open addressing; keys borrowed from the protobuf structs). */
typedef struct tfc_name_map {
    size_t cap;             /* power of two, >= 2 x count */
    const char **keys;
    int64_t *vals;
} tfc_name_map;
bool tfc_name_map_init(tfc_name_map *m, size_t count, tfc_status *st);
void tfc_name_map_clear(tfc_name_map *m);
/* Inserts; returns the existing index when the key is already there, else -1. */
int64_t tfc_name_map_put(tfc_name_map *m, const char *key, int64_t val);
int64_t tfc_name_map_get(const tfc_name_map *m, const char *key);

/* One body: the graph's nodes or a function's. */
typedef struct tfc_gd_body {
    Tensorflow__NodeDef **nodes; /* aliases GraphDef.node / FunctionDef.node_def */
    size_t n_nodes;
    tfc_name_map names;          /* node name -> index (valid after validation) */
    int64_t *n_outputs;          /* per node, after validation */
    int *n_control;              /* per node: trailing "^x" inputs */
    int64_t *order;              /* node indexes with producers first (after validation) */
} tfc_gd_body;

struct tfc_graphdef {
    Tensorflow__GraphDef *pb;
    tfc_pb_arena *arena;         /* decoded attr values */
    tfc_graphdef_opts opts;
    tfc_gd_body top;
    tfc_gd_body *fns;            /* one per library function */
    size_t n_fns;
    tfc_name_map fn_names;
    bool validated;
};

/* Where a node's op comes from. */
typedef enum { TFC_GD_OP_REGISTRY, TFC_GD_OP_GRAPH, TFC_GD_OP_FUNCTION } tfc_gd_op_kind;
typedef struct tfc_gd_graph_op tfc_gd_graph_op;
typedef struct tfc_gd_op {
    tfc_gd_op_kind kind;
    const char *name;
    const tfc_op *reg;
    const tfc_gd_graph_op *graph;
    const Tensorflow__FunctionDef *fn;
} tfc_gd_op;

/* Resolves node's op: tfc's registry first, then TensorFlow's graph-only ops (Const, Placeholder, If,
 * While, PartitionedCall, ...) that the registry lacks, then the library. False when none has it. */
bool tfc_gd_op_resolve(const tfc_graphdef *g, const char *op_name, tfc_gd_op *out);
/* Number of input (output = false) or output args of the op. */
int tfc_gd_op_num_args(const tfc_gd_op *op, bool output);
/* Arg i: its name, and how many tensors it is for node nd (list args read their length attr). INVALID_ARGUMENT
 * naming the node when a length attr is missing, of the wrong kind or negative. */
bool tfc_gd_op_arg(const tfc_gd_op *op, const Tensorflow__NodeDef *nd, bool output, int i, const char **name,
                   int64_t *count, tfc_status *st);

/* An attr the op declares: name, TensorFlow kind name ("type", "list(type)", "func", ...), whether it must
 * be present (no default). */
typedef struct tfc_gd_attr_spec {
    const char *name;
    const char *kind;
    bool required;
    const tfc_attr_spec *reg; /* registry ops: the parsed spec (allowed sets, minimum) */
} tfc_gd_attr_spec;
int tfc_gd_op_num_attrs(const tfc_gd_op *op);
void tfc_gd_op_attr(const tfc_gd_op *op, int i, tfc_gd_attr_spec *out);
/* "Op<name=AddV2; signature=x:T, y:T -> z:T; attr=T:type>" style summary for messages. */
void tfc_gd_op_describe(const tfc_gd_op *op, char *buf, size_t size);

/* Finds attr `name` among a node's attrs (NULL when absent). */
const Tensorflow__AttrValue *tfc_gd_node_attr(const Tensorflow__NodeDef *nd, const char *name);

/* Sizes the node and function arrays of a parsed message to powers of two, as the builder grows them. */
bool tfc_gd_pow2_arrays(tfc_graphdef *g, tfc_status *st);

/* A graphdef of an unpacked GraphDef embedded in another message (a MetaGraphDef's): takes pb (freed on failure
 * too; detach it from its parent first) and validates it as tfc_graphdef_parse does. */
tfc_graphdef *tfc_gd_adopt(Tensorflow__GraphDef *pb, const tfc_graphdef_opts *opts, tfc_status *st);

/* Validation (graphdef_check.c). */
bool tfc_gd_validate(tfc_graphdef *g, tfc_status *st);
/* Re-points the bodies at the protobuf arrays (after parsing or building) and drops old indexes. */
bool tfc_gd_bind(tfc_graphdef *g, tfc_status *st);

#endif
