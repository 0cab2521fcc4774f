/* tfc — TensorFlow's GraphDef (tensorflow/core/framework/graph.proto): reading, validating, inspecting and
 * writing serialised graphs with their function library (what `tf.function(...).get_concrete_function()
 * .graph.as_graph_def()` and tf.compat.v1.GraphDef.SerializeToString produce and read), and TensorProto
 * bytes (tf.make_tensor_proto / tf.make_ndarray).
 *
 * A tfc_graphdef is one graph: its nodes and the functions of its library. `fn` arguments select the
 * graph's own nodes (TFC_GRAPHDEF_TOP) or the body of function number fn (0 <= fn < num_functions).
 * Strings returned are owned by the graphdef and live until it is freed or changed. */
#ifndef TFC_GRAPHDEF_H
#define TFC_GRAPHDEF_H

#include "tfc/attr.h"
#include "tfc/function.h"
#include "tfc/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tfc_graphdef tfc_graphdef;

#define TFC_GRAPHDEF_TOP (-1)

typedef struct tfc_graphdef_opts {
    size_t max_bytes;        /* largest serialised input; 0: 2 GiB - 1 (protobuf's own limit) */
    size_t max_tensor_bytes; /* largest decoded tensor (a Const's value); 0: 2 GiB - 1 */
    bool allow_unknown_ops;  /* skip the op-registry check (inspecting graphs with ops tfc lacks) */
} tfc_graphdef_opts;

/* Parses and validates serialised GraphDef bytes (opts may be NULL). Validation, with TensorFlow's codes:
 *   DATA_LOSS         truncated or malformed protobuf bytes
 *   INVALID_ARGUMENT  over a size limit; messages nested over 100 deep; empty or duplicate node names;
 *                     attrs of the wrong kind or missing without a default ("NodeDef missing attr 'T' ...",
 *                     naming node and attr); dtypes outside tfc's set; bad shapes and tensors (negative or
 *                     overflowing dims, content size not shape x dtype size); inputs naming missing nodes or
 *                     outputs, malformed input strings, data inputs after control inputs, input counts that
 *                     do not match the op; cycles; function signatures and results that do not resolve;
 *                     functions that call themselves (directly or through others)
 *   NOT_FOUND         a node's op is neither registered in tfc nor a function of the library
 *                     ("Op type not registered 'X' ...", as TensorFlow)
 * Work and memory are linear in the input size (10^6 nodes are fine). Caller owns the result. */
TFC_API tfc_graphdef *tfc_graphdef_parse(const void *data, size_t size, const tfc_graphdef_opts *opts,
                                         tfc_status *st);
/* Reads a binary GraphDef file (.pb) and parses it; NOT_FOUND when the file cannot be opened. */
TFC_API tfc_graphdef *tfc_graphdef_read(const char *path, const tfc_graphdef_opts *opts, tfc_status *st);
TFC_API void tfc_graphdef_free(tfc_graphdef *g); /* NULL-safe */

/* ---- inspecting ---- */
TFC_API int64_t tfc_graphdef_num_nodes(const tfc_graphdef *g, int fn); /* -1 for a bad fn */
TFC_API int tfc_graphdef_num_functions(const tfc_graphdef *g);
/* VersionDef: producer and min_consumer (0 when absent). */
TFC_API void tfc_graphdef_versions(const tfc_graphdef *g, int *producer, int *min_consumer);

typedef struct tfc_graphdef_node_info {
    const char *name;
    const char *op;
    const char *device;             /* "" when unset */
    int n_inputs;
    const char *const *inputs;      /* as written: "x", "x:1", "^x"; in functions "x:out_arg:0" or an arg name */
    int n_control_inputs;           /* how many of the inputs (the last ones) are "^x" */
    int64_t n_outputs;              /* from the op's signature and the node's attrs; -1 before validation */
    int n_attrs;
} tfc_graphdef_node_info;
/* Node i of fn; false when out of range. */
TFC_API bool tfc_graphdef_node(const tfc_graphdef *g, int fn, int64_t i, tfc_graphdef_node_info *out);
/* Index of the node named `name` in fn, or -1 (hash lookup; the graphdef must have been validated). */
TFC_API int64_t tfc_graphdef_find_node(const tfc_graphdef *g, int fn, const char *name);
/* Name of attr k (0 <= k < n_attrs) of node i, or NULL. */
TFC_API const char *tfc_graphdef_node_attr_name(const tfc_graphdef *g, int fn, int64_t i, int k);
/* Decodes the attr `name` of node i into *out (values owned by g until it is freed). NOT_FOUND when the node
 * has no such attr; INVALID_ARGUMENT / UNIMPLEMENTED when its value is one tfc_attr cannot hold (list(bool),
 * list(tensor), placeholders, functions instantiated with attrs). A string attr's n is its byte length. */
TFC_API bool tfc_graphdef_node_attr(tfc_graphdef *g, int fn, int64_t i, const char *name, tfc_attr *out,
                                    tfc_status *st);

typedef struct tfc_graphdef_arg {
    const char *name;
    tfc_dtype type;       /* TFC_INVALID_DTYPE when the arg's type comes from an attr */
} tfc_graphdef_arg;
typedef struct tfc_graphdef_function_info {
    const char *name;
    int n_inputs, n_outputs;
    int64_t n_nodes;
} tfc_graphdef_function_info;
/* Fills *out for function fn (0 <= fn < tfc_graphdef_num_functions(g)) of the library; names are borrowed
 * from g. False (nothing filled) when fn is out of range. */
TFC_API bool tfc_graphdef_function(const tfc_graphdef *g, int fn, tfc_graphdef_function_info *out);
TFC_API int tfc_graphdef_find_function(const tfc_graphdef *g, const char *name); /* -1 when absent */
/* Input (output = false) or output arg i of function fn; for outputs *ret gets the body tensor it returns
 * ("node:out_arg:k" or an input arg name; ret may be NULL). False when out of range. */
TFC_API bool tfc_graphdef_function_arg(const tfc_graphdef *g, int fn, bool output, int i, tfc_graphdef_arg *out,
                                       const char **ret);

/* ---- building and writing ---- */
/* An empty graph (versions producer 1994, min_consumer 12, as TensorFlow 2.21 writes). */
TFC_API tfc_graphdef *tfc_graphdef_new(tfc_status *st);
/* Appends a node to fn's body. inputs are copied strings in the syntax above; attrs are encoded as
 * AttrValues (a TFC_ATTR_STRING with n > 0 holds n bytes). Names are checked when validating. */
TFC_API bool tfc_graphdef_add_node(tfc_graphdef *g, int fn, const char *name, const char *op,
                                   const char *const *inputs, int n_inputs, const tfc_attr *attrs, int n_attrs,
                                   tfc_status *st);
/* Appends a function with fixed-dtype args: returns its index, or -1. rets[i] is what output i returns. */
TFC_API int tfc_graphdef_add_function(tfc_graphdef *g, const char *name, const tfc_graphdef_arg *inputs, int n_in,
                                      const tfc_graphdef_arg *outputs, const char *const *rets, int n_out,
                                      tfc_status *st);
/* Runs the checks tfc_graphdef_parse runs (for a built graph; opts may be NULL). */
TFC_API bool tfc_graphdef_validate(tfc_graphdef *g, const tfc_graphdef_opts *opts, tfc_status *st);
/* Serialises to GraphDef bytes in *data (free with tfc_free), *size. */
TFC_API bool tfc_graphdef_serialize(const tfc_graphdef *g, void **data, size_t *size, tfc_status *st);
/* Writes the serialised graph to path through a temporary file renamed into place. */
TFC_API bool tfc_graphdef_write(const tfc_graphdef *g, const char *path, tfc_status *st);

/* tf.function(...).get_concrete_function(...).graph.as_graph_def(): the concrete function's body as the
 * graph's nodes (its arguments are the Placeholders, TensorFlow's op names and attrs) and, in the library, every
 * function it calls directly or through others (call ops, cond/while branches). ctx is the context the function
 * was traced in. Serialised into *data (free with tfc_free), *size. NOT_FOUND when cf is not in ctx's library. */
TFC_API bool tfc_concrete_function_graph_def(tfc_ctx *ctx, const tfc_concrete_function *cf, void **data, size_t *size,
                                             tfc_status *st);

/* ---- tensors ---- */
/* Parses serialised TensorProto bytes into a new tensor (TensorFlow's decoding rules: tensor_content, or
 * the typed field with its last value repeated to fill the shape). INVALID_ARGUMENT for dtypes outside
 * tfc's set, unknown/negative/overflowing shapes, content of the wrong size, a decoded size over
 * max_tensor_bytes (0: 2 GiB - 1); DATA_LOSS for malformed bytes. */
TFC_API tfc_tensor *tfc_tensor_from_proto(const void *data, size_t size, size_t max_tensor_bytes, tfc_status *st);
/* Serialises a tensor as TensorProto bytes (as tf.make_tensor_proto: tensor_content for numeric tensors of
 * other than one element, typed fields for scalars and strings). *data is freed with tfc_free. */
TFC_API bool tfc_tensor_to_proto(const tfc_tensor *t, void **data, size_t *size, tfc_status *st);

#ifdef __cplusplus
}
#endif
#endif
