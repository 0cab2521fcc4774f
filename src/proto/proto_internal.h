/* Internal: conversions between tfc's objects and TensorFlow's protobuf messages (protobuf-c structs
 * generated from src/proto/<name>.proto), and the checked unpacking every reader goes through. Not public. */
#ifndef TFC_PROTO_INTERNAL_H
#define TFC_PROTO_INTERNAL_H

#include <protobuf-c/protobuf-c.h>

#include "proto/attr_value.pb-c.h"
#include "proto/tensor.pb-c.h"
#include "proto/tensor_shape.pb-c.h"
#include "tfc/attr.h"
#include "tfc/tensor.h"

/* Allocator routing protobuf-c's allocations through tfc_malloc/tfc_free (so fault injection reaches them).
 * Messages tfc builds itself are allocated with tfc_malloc too and freed with tfc_pb_free. */
extern ProtobufCAllocator tfc_pb_allocator;
void tfc_pb_free(void *msg); /* any ProtobufCMessage *; NULL-safe */

/* Nesting limit of messages in one input (TensorFlow's parser allows 100; a GraphDef's deepest natural
 * nesting is about 10: GraphDef > library > function > node > attr > list > func > attr > tensor > shape). */
#define TFC_PB_MAX_DEPTH 100

/* Walks the wire bytes of a `desc` message without allocating: every key, varint and length must be
 * well-formed and inside the buffer, and nested messages no deeper than max_depth (protobuf-c's unpacker
 * recurses once per level, so this bounds its stack use). `what` names the input in messages.
 *   DATA_LOSS         truncated or malformed bytes (offset given)
 *   INVALID_ARGUMENT  nesting deeper than max_depth */
bool tfc_pb_check(const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t size, int max_depth,
                  const char *what, tfc_status *st);
/* tfc_pb_check, then protobuf-c's unpack with tfc_pb_allocator; size over max_bytes is INVALID_ARGUMENT.
 * Free the result with tfc_pb_free. */
ProtobufCMessage *tfc_pb_unpack(const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t size,
                                size_t max_bytes, const char *what, tfc_status *st);
/* Prepends `prefix` to st's message (truncating the end to fit). */
void tfc_pb_status_prefix(tfc_status *st, const char *prefix);
/* Serialises msg into a new tfc_malloc'd buffer (*out, *size). */
bool tfc_pb_pack(const ProtobufCMessage *msg, uint8_t **out, size_t *size, const char *what, tfc_status *st);

/* ---- dtypes and shapes ---- */

/* TensorFlow's name of a DataType number ("DT_FLOAT" style names are not used: "float32", or "dtype 8"
 * written into buf for numbers tfc lacks). */
const char *tfc_pb_dtype_str(int dt, char *buf, size_t size);
/* The DataType enum's name of dt ("DT_FLOAT", "DT_HALF_REF", ...; "DT_INVALID" for numbers the enum lacks), from
 * types.proto's descriptor. */
const char *tfc_pb_dtype_enum_name(int dt);
/* True when dt is a dtype tfc can hold in a tensor (not invalid, not resource). */
bool tfc_pb_dtype_is_data(int dt);

/* TensorShapeProto -> tfc_shape: unknown_rank gives rank -1, size -1 an unknown dim. INVALID_ARGUMENT
 * (message prefixed by `what`) for rank > TFC_MAX_RANK, dims < -1, unknown_rank with dims.
 * p may be NULL (a scalar, as an absent message is). */
bool tfc_pb_shape_from_proto(const Tensorflow__TensorShapeProto *p, tfc_shape *out, const char *what,
                             tfc_status *st);
/* tfc_shape -> a new TensorShapeProto (tfc_pb_free). */
Tensorflow__TensorShapeProto *tfc_pb_shape_to_proto(const tfc_shape *s, tfc_status *st);

/* ---- tensors ---- */

/* TensorProto -> new tensor (caller owns one reference), with TensorFlow's decoding rules: tensor_content
 * wins when non-empty (its size must be elements x dtype size); otherwise the dtype's typed field, whose
 * last value repeats to fill the shape when shorter (none: zeros / empty strings). Rejected with
 * INVALID_ARGUMENT naming `what` and the field: dtypes outside tfc's set, unknown or negative dims, element
 * counts that overflow, a decoded size over max_bytes (0: no limit beyond overflow), more values than
 * elements, values in a field of another dtype, tensor_content on a string tensor. */
tfc_tensor *tfc_pb_tensor_from_proto(const Tensorflow__TensorProto *p, size_t max_bytes, const char *what,
                                     tfc_status *st);
/* Tensor -> a new TensorProto (tfc_pb_free), as TensorFlow's make_tensor_proto writes it: strings in
 * string_val, one-element tensors in their typed field (half_val for half and bfloat16), others in
 * tensor_content. INVALID_ARGUMENT for symbolic and resource tensors. */
Tensorflow__TensorProto *tfc_pb_tensor_to_proto(const tfc_tensor *t, const char *what, tfc_status *st);
/* Tensor -> a new TensorProto with every value in the dtype's typed field (float_val, int_val, string_val, ...),
 * as TensorFlow's Tensor::AsProtoField writes it (what TensorFlow Serving's Predict answers with). Errors as
 * tfc_pb_tensor_to_proto's. */
Tensorflow__TensorProto *tfc_pb_tensor_to_proto_field(const tfc_tensor *t, const char *what, tfc_status *st);

/* ---- attrs ---- */

/* Memory for decoded attrs: chunks freed together. */
typedef struct tfc_pb_arena tfc_pb_arena;
tfc_pb_arena *tfc_pb_arena_new(void);
void tfc_pb_arena_free(tfc_pb_arena *a); /* NULL-safe; unrefs the tensors decoded into it */
void *tfc_pb_arena_alloc(tfc_pb_arena *a, size_t size);
char *tfc_pb_arena_strndup(tfc_pb_arena *a, const char *s, size_t n);
bool tfc_pb_arena_keep_tensor(tfc_pb_arena *a, tfc_tensor *t); /* the arena takes t's reference */

/* TensorFlow's name of an AttrValue's kind: "int", "list(type)", "func", "placeholder", ... */
const char *tfc_pb_attr_value_kind(const Tensorflow__AttrValue *v);

/* AttrValue -> tfc_attr named `name` (arena-owned values). An AttrValue with no value set is
 * INVALID_ARGUMENT; a list's kind is that of its one non-empty field (an empty list decodes as an empty
 * list(int) which tfc_pb_attr_fits accepts for any list kind). Kinds tfc_attr cannot hold
 * (list(bool), list(tensor), placeholder, func attrs of a function reference) are INVALID_ARGUMENT.
 * `where` names the node in messages ("node 'x'"). */
bool tfc_pb_attr_from_proto(const Tensorflow__AttrValue *v, const char *name, tfc_pb_arena *arena,
                            size_t max_tensor_bytes, const char *where, tfc_attr *out, tfc_status *st);
/* tfc_attr -> a new AttrValue (tfc_pb_free). */
Tensorflow__AttrValue *tfc_pb_attr_to_proto(const tfc_attr *a, tfc_status *st);
/* The kind name of a tfc_attr kind, in TensorFlow's spelling. */
const char *tfc_pb_attr_kind_name(tfc_attr_kind k);

#endif
