/* Internal: the tf.data service's messages (requests and replies alike) and their byte encoding.
 *
 * Layout, little-endian: "TFDS" | version u8 (1) | op u8 | reserved u16 (0) | code i32 | v i64 x 8 |
 * str_len u32 | str bytes (no NUL) | blob_len u64 | blob bytes. The decoder checks the magic, version, op,
 * reserved bytes, and that every length lies within the buffer; it copies nothing: str and blob point into
 * the buffer. Elements travel in the blob as a count u32 then, per element, code u32 | len u64 | bytes: the
 * bytes of data_encode_element for code 0 (OK), an error message otherwise. */
#ifndef TFC_DS_WIRE_H
#define TFC_DS_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "data/data_internal.h"

#define DS_STR_MAX 4096
#define DS_MAX_ELEMENTS_PER_REPLY 64

typedef enum {
    DS_REGISTER_DATASET = 1, /* blob graph -> v[0] dataset id (the same id for the same graph) */
    DS_GET_DATASET = 2,      /* v[0] dataset id -> blob graph */
    DS_GET_OR_CREATE_JOB = 3,/* v[0] dataset id, v[1] mode, v[2] num_splits, v[3] num_consumers, v[4] repetition
                                (the consumer's iterator count), str job name ("": anonymous) -> v[0] job id (the
                                existing job of that name and repetition, whose dataset, mode and num_consumers must
                                agree); with num_consumers, str: the job's workers (fixed at
                                its creation, in the order consumers read them round by round) */
    DS_GET_SPLIT = 4,        /* v[0] job, v[1] client id, v[2] request number -> v[0] split index, -1 at the end */
    DS_HEARTBEAT = 5,        /* str worker address, v[0] its heartbeat interval in ms -> ok (registers the worker) */
    DS_GET_WORKERS = 6,      /* -> str live worker addresses, comma-separated */
    DS_GET_ELEMENTS = 7,     /* worker: v[0] job, v[1] dataset, v[2] split (-1: the whole dataset; -2: the whole
                                dataset read by coordinated consumers), v[3] num_splits (-2: num_consumers), v[4]
                                elements of the split to skip (-2: the index of the element wanted), v[5] client id, v[6] request number, v[7] most
                                elements wanted (0: only start the task) -> blob elements, v[0] count, v[1] 1 at the end of the task */
    DS_OP_MAX = 7
} ds_op;

#define DS_MODE_PARALLEL_EPOCHS 1
#define DS_MODE_DISTRIBUTED_EPOCH 2

typedef struct ds_msg {
    int op;
    int code;              /* tfc_code of a reply */
    int64_t v[8];
    const char *str;       /* points into the decoded buffer (or the caller's string when encoding) */
    uint32_t str_len;
    const uint8_t *blob;
    uint64_t blob_len;
} ds_msg;

/* Encodes into a new malloc'ed buffer (free()), as the transport's replies are. */
bool ds_msg_encode(const ds_msg *m, uint8_t **out, size_t *len, tfc_status *st);
/* Decodes and validates; INVALID_ARGUMENT naming the field on failure. m points into buf. */
bool ds_msg_decode(const uint8_t *buf, size_t len, ds_msg *m, tfc_status *st);
/* Copies m's str into a NUL-terminated buffer of size n; false when it does not fit. */
bool ds_msg_str(const ds_msg *m, char *buf, size_t n);
/* An error reply (code and message) as a new buffer; never fails (falls back to a static-size message). */
void ds_reply_error(int op, const tfc_status *st, uint8_t **rep, size_t *rn);
/* Sends req over t and decodes the reply into *rep (whose buffer *raw the caller releases with
 * t->free_reply(*raw, *raw_len)). A reply carrying an error code becomes st. */
typedef struct ps_transport ps_transport;
bool ds_call(ps_transport *t, const ds_msg *req, ds_msg *rep, uint8_t **raw, size_t *raw_len, tfc_status *st);

/* Appends one element (or the error st) to an element blob being built: b starts with a u32 count that this
 * increments. */
bool ds_elements_begin(data_bytes *b, tfc_status *st);
bool ds_elements_add(data_bytes *b, tfc_tensor *const *t, int n, const tfc_status *elem_st, tfc_status *st);
/* Appends an already-encoded entry (code u32 | len u64 | bytes). */
bool ds_elements_add_raw(data_bytes *b, const uint8_t *entry, size_t n, tfc_status *st);
/* Walks an element blob: *count, then ds_elements_next per entry (*code, *p, *n; borrowed). */
bool ds_elements_open(const uint8_t *blob, uint64_t len, uint32_t *count, size_t *pos, tfc_status *st);
bool ds_elements_next(const uint8_t *blob, uint64_t len, size_t *pos, uint32_t *code, const uint8_t **p, uint64_t *n,
                      tfc_status *st);

#endif
