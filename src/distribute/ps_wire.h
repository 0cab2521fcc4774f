/* Internal: the parameter-server message (request and reply alike) and its byte encoding.
 *
 * Layout, little-endian: "TFPS" | version u8 (1) | op u8 | reserved u16 (0) | code i32 | id u64 | step i64 |
 * value f64 | name_len u32 | name bytes (no NUL) | n_tensors u32 | per tensor: dtype u32 | rank u32 |
 * dims i64 x rank | nbytes u64 | bytes. The decoder validates everything before use: the magic and version,
 * lengths within the buffer, the name length and contents, the tensor count, dtypes (fixed-size only), ranks,
 * dims (non-negative, element count and byte size overflow-checked) and nbytes equal to the shape's size. */
#ifndef TFC_PS_WIRE_H
#define TFC_PS_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "tfc/tensor.h"

#define PS_NAME_MAX 512       /* name, or error message in a reply */
#define PS_MAX_TENSORS 64

typedef enum {
    PS_OP_PING = 1,       /* -> reply; the server's liveness */
    PS_OP_CREATE = 2,     /* name, t[0] initial value: create if absent (the same dtype and shape if present) */
    PS_OP_READ = 3,       /* name -> t[0] */
    PS_OP_ASSIGN = 4,     /* name, t[0] */
    PS_OP_ASSIGN_ADD = 5, /* name, t[0] */
    PS_OP_APPLY_SGD = 6,  /* name, t[0] gradient, value learning rate: var -= value * grad */
    PS_OP_RUN = 7,        /* worker: name function, step, t[] args -> t[] results */
    PS_OP_STOP = 8,       /* ask the server to stop serving */
    PS_OP_COUNT = 9,      /* worker: how many function executions it ran (step = 1: and reset) */
    PS_OP_MAKE_ITERATOR = 10, /* worker: name dataset function, id iterator handle: make it unless present */
    PS_OP_MAX = 10
} ps_op;

typedef struct ps_msg {
    int op;
    int code;             /* tfc_code of a reply */
    uint64_t id;          /* deduplication key of a state-changing request (0: none) */
    int64_t step;
    double value;
    char name[PS_NAME_MAX + 1];
    int n_tensors;
    tfc_tensor *t[PS_MAX_TENSORS]; /* owned by the message */
} ps_msg;

void ps_msg_init(ps_msg *m, int op, const char *name);
void ps_msg_clear(ps_msg *m);      /* releases the tensors; the message can be reused */
/* Adds a tensor (a new reference is taken). False when full. */
bool ps_msg_add(ps_msg *m, tfc_tensor *t, tfc_status *st);
/* Encodes into a new malloc'd buffer (*out, *len). */
bool ps_msg_encode(const ps_msg *m, uint8_t **out, size_t *len, tfc_status *st);
/* Decodes and validates; on failure INVALID_ARGUMENT naming the field and value, and m holds no tensors. */
bool ps_msg_decode(const uint8_t *buf, size_t len, ps_msg *m, tfc_status *st);

#endif
