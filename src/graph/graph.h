/* Internal: the graph IR (TensorFlow's Graph / FunctionDefLibrary as C structures).
 *
 * A graph is a list of nodes. Each node is one op call with TensorFlow's op name and fully resolved attrs
 * (defaults filled, type attrs inferred), data inputs as (node, output index) ports, control inputs as node
 * ids, and per-output dtype and partially known shape (TensorFlow's shape inference result: rank -1 or dims -1
 * where unknown). Node names are unique within a graph. Node ids are indexes into graph->nodes and never
 * change; nodes are never removed (passes build a new graph). Nodes are added in any order (an importer may
 * add a consumer before its producer by adding nodes first and wiring later); tfc_graph_topo_order gives a
 * run order and detects cycles.
 *
 * A function library holds named functions (TensorFlow's FunctionDef): a body graph whose arguments are
 * Placeholder nodes (arg i = body->nodes[arg_nodes[i]], its dtype attr "dtype" and shape attr "shape") and
 * whose results are ports of the body, each with a name. Function-valued attrs (If's then_branch, While's
 * body, PartitionedCall's f, Case's branches) are TFC_ATTR_FUNC / TFC_ATTR_LIST_FUNC attrs holding function
 * names that resolve in the graph's library.
 *
 * Ops with a meaning only in graphs are registered like others: Const (attrs value: tensor, dtype), Placeholder
 * (dtype, shape; unknown rank by default), NoOp and BroadcastGradientArgs in src/ops/graph_ops.c;
 * PartitionedCall / StatefulPartitionedCall (Tin, Tout, f) in src/graph/functional_ops.c; If / StatelessIf
 * (Tcond, Tin, Tout, then_branch, else_branch, output_shapes), Case / StatelessCase (Tin, Tout, branches,
 * output_shapes) and While / StatelessWhile (T, cond, body, output_shapes, parallel_iterations) in
 * src/graph/control_flow_ops.c, with TensorFlow's attr names. Their kernels run library functions of the
 * calling context's library (ctx->flib, see graph/trace.h tfc_ctx_flib): an importer that wants a GraphDef's
 * functions callable adds them there.
 *
 * Graphs map one-to-one onto GraphDef (node name, op, input strings "name", "name:i", "^ctrl", attrs) and
 * functions onto FunctionDef (signature from the Placeholder args and result names). Ownership: a graph owns
 * its nodes and their attrs (which hold references to Const tensors); a library owns its functions and their
 * body graphs. A graph points to (does not own) the library its function attrs resolve in. */
#ifndef TFC_GRAPH_GRAPH_H
#define TFC_GRAPH_GRAPH_H

#include "ops/registry.h"

typedef struct tfc_graph tfc_graph;
typedef struct tfc_flib tfc_flib;

/* Output `index` of node `node` (an id in the same graph). */
typedef struct tfc_gport {
    int node;
    int index;
} tfc_gport;

typedef struct tfc_gnode {
    tfc_graph *graph;
    int id;               /* index in graph->nodes */
    char *name;           /* unique in the graph */
    const tfc_op *op;     /* registered op */
    tfc_attrs *attrs;     /* resolved attrs, owned (tfc_attrs_clone); attrs->a[i] matches op->attrs[i] */
    int n_in;
    tfc_gport *in;        /* data inputs, flattened as the op's input args (list args expanded) */
    int n_ctrl;
    int *ctrl;            /* control inputs: ids of nodes that must run first */
    int n_out;
    tfc_dtype *out_dtypes;
    tfc_shape *out_shapes; /* partially known: rank -1 / dims -1 where unknown */
    char *device;          /* requested device ("" = any) */
    void *user;            /* free for passes/importers while they hold the graph; NULL otherwise */
} tfc_gnode;

struct tfc_graph {
    tfc_gnode **nodes; /* nodes[id]; each allocated once (pointers stay valid while nodes are added) */
    int n_nodes, cap_nodes;
    tfc_flib *lib;     /* where function attrs resolve (borrowed; may be NULL when no node has a function attr) */
    /* name -> id (open addressing), for uniqueness and tfc_graph_find */
    int *name_slots;
    int cap_slots;
};

/* New empty graph whose function attrs resolve in lib (borrowed, may be NULL). NULL when out of memory. */
tfc_graph *tfc_graph_new(tfc_flib *lib, tfc_status *st);
void tfc_graph_free(tfc_graph *g); /* NULL-safe; frees nodes and their attrs (releasing Const tensors) */

/* Adds a node whose attrs are already resolved and whose outputs are already inferred (the tracer's path).
 * name: the node's name, or NULL for a fresh name made from the op's name (TensorFlow's "AddV2", "AddV2_1",
 * ...). A given name that is taken is INVALID_ARGUMENT ("Duplicate node name in graph: 'x'"). attrs is
 * cloned (may be NULL for an op without attrs). Inputs must name existing nodes and outputs in range
 * (INVALID_ARGUMENT otherwise). Returns the node (owned by g) or NULL with st set; g is unchanged on failure. */
tfc_gnode *tfc_graph_add_node(tfc_graph *g, const tfc_op *op, const char *name, const tfc_attrs *attrs,
                              const tfc_gport *in, int n_in, const int *ctrl, int n_ctrl, int n_out,
                              const tfc_dtype *out_dtypes, const tfc_shape *out_shapes, tfc_status *st);

/* Adds a node by op name from caller attrs (the importer's path): resolves attrs against the input ports'
 * dtypes (defaults, inference, allowed sets), then runs the op's shape function with the inputs' partial
 * shapes and, for inputs produced by Const nodes, their values. Errors as tfc_execute's (NOT_FOUND "Op type
 * not registered 'X'", INVALID_ARGUMENT naming the op), prefixed by the node name. */
tfc_gnode *tfc_graph_add_op(tfc_graph *g, const char *op_name, const char *name, const tfc_gport *in, int n_in,
                            const tfc_attr *attrs, int n_attrs, const int *ctrl, int n_ctrl, tfc_status *st);

/* Convenience: a Const node holding `value` (a reference is taken) / a Placeholder of dtype and shape
 * (shape NULL: unknown rank). */
tfc_gnode *tfc_graph_add_const(tfc_graph *g, const char *name, tfc_tensor *value, tfc_status *st);
tfc_gnode *tfc_graph_add_placeholder(tfc_graph *g, const char *name, tfc_dtype dt, const tfc_shape *shape,
                                     tfc_status *st);

/* Adds a control input (ctrl must run before node); duplicates are ignored. */
bool tfc_graph_add_control(tfc_graph *g, int node, int ctrl, tfc_status *st);

tfc_gnode *tfc_graph_find(const tfc_graph *g, const char *name); /* NULL when absent */
static inline bool tfc_gport_valid(const tfc_graph *g, tfc_gport p) {
    return p.node >= 0 && p.node < g->n_nodes && p.index >= 0 && p.index < g->nodes[p.node]->n_out;
}
static inline tfc_gnode *tfc_graph_node(const tfc_graph *g, int id) { return g->nodes[id]; }

/* Fills order[0..n_nodes) with node ids so that every node comes after its data and control inputs (stable:
 * ids in increasing order where free). INVALID_ARGUMENT naming a node on a cycle when there is one. */
bool tfc_graph_topo_order(const tfc_graph *g, int *order, tfc_status *st);

/* The value of a Const node's output (borrowed), or NULL when the port is not a Const. */
const tfc_tensor *tfc_graph_const_value(const tfc_graph *g, tfc_gport p);

/* ---- function library (FunctionDefLibrary) ---------------------------------------------------------- */
typedef struct tfc_gfunc {
    char *name;        /* unique in the library */
    tfc_flib *lib;
    tfc_graph *body;   /* owned; body->lib == lib */
    int n_args;
    int *arg_nodes;    /* Placeholder node ids, in argument order (their names are the arg names) */
    int n_rets;
    tfc_gport *rets;
    char **ret_names;  /* output arg names ("output_0", ... unless given) */
    int n_ctrl_rets;
    int *ctrl_rets;    /* nodes that must run for a call to be complete (TensorFlow's control_ret) */
    bool stateful;     /* some body node is stateful (calls become StatefulPartitionedCall / If / While) */
    bool pinned;       /* owned by an API object (a concrete function): tfc_flib_release leaves it alone */
    /* The runtime's instantiation (the executor's plan), made on first call and freed with the function. */
    void *runtime;
    void (*runtime_free)(void *runtime);
} tfc_gfunc;

struct tfc_flib {
    tfc_gfunc **fns;
    int n, cap;
};

tfc_flib *tfc_flib_new(tfc_status *st);
void tfc_flib_free(tfc_flib *lib); /* NULL-safe; frees every function and its body */
tfc_gfunc *tfc_flib_find(const tfc_flib *lib, const char *name);
/* A new function with an empty body (ALREADY_EXISTS when the name is taken). Fill it with
 * tfc_gfunc_add_arg, nodes of fn->body, then tfc_gfunc_set_rets. */
tfc_gfunc *tfc_flib_add(tfc_flib *lib, const char *name, tfc_status *st);
/* Removes and frees a function (a failed trace's); no-op when fn is not in lib. */
void tfc_flib_remove(tfc_flib *lib, tfc_gfunc *fn);
/* True when a node of some function of lib other than `except` has a function attr naming `name`. */
bool tfc_flib_is_referenced(const tfc_flib *lib, const char *name, const tfc_gfunc *except);
/* Removes fn when no other function calls it, with the gradient functions built for it ("<name>_grad...") and
 * the unpinned functions it called (branches, bodies) that nothing else calls. */
void tfc_flib_release(tfc_flib *lib, tfc_gfunc *fn);
/* Adds argument `name` (a Placeholder node in the body). Returns the node id or -1. */
int tfc_gfunc_add_arg(tfc_gfunc *fn, const char *name, tfc_dtype dt, const tfc_shape *shape, tfc_status *st);
/* Sets the results (ports of the body; names may be NULL: "output_<i>"). Replaces earlier results. */
bool tfc_gfunc_set_rets(tfc_gfunc *fn, const tfc_gport *rets, const char *const *names, int n, tfc_status *st);
/* Recomputes fn->stateful from the body's ops. */
void tfc_gfunc_update_stateful(tfc_gfunc *fn);

/* Attrs of a call of fn: the dtypes of its args / results (Tin / Tout). out must hold n_args / n_rets. */
void tfc_gfunc_arg_dtypes(const tfc_gfunc *fn, tfc_dtype *out);
void tfc_gfunc_ret_dtypes(const tfc_gfunc *fn, tfc_dtype *out);

#endif
