/* Internal: LevelDB-format tables (TensorFlow's tensorflow/core/lib/io/table format), the layout of a
 * checkpoint's `.index` file: data blocks of prefix-compressed keys with restart points, each followed by a
 * 5-byte trailer (compression type, masked CRC32C), a metaindex and an index block, and a 48-byte footer
 * ending in the magic number. Readers take a whole file in memory and decode every entry up front (bundle
 * indexes hold one entry per tensor); writers build the whole table in memory. */
#ifndef TFC_SAVED_MODEL_TABLE_H
#define TFC_SAVED_MODEL_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tfc/status.h"

/* A growable byte buffer (tfc_malloc'd). */
typedef struct {
    uint8_t *data;
    size_t size, cap;
} tfc_bytes;
bool tfc_bytes_append(tfc_bytes *b, const void *p, size_t n, tfc_status *st);
bool tfc_bytes_varint(tfc_bytes *b, uint64_t v, tfc_status *st);
bool tfc_bytes_fixed32(tfc_bytes *b, uint32_t v, tfc_status *st);
void tfc_bytes_free(tfc_bytes *b);
/* Reads a varint of at most 64 bits at *pos (< end); false when malformed or past end. */
bool tfc_varint_read(const uint8_t *p, size_t *pos, size_t end, uint64_t *out);

typedef struct {
    char *key; /* NUL-terminated copy; keys may hold NUL bytes, so key_len is authoritative */
    size_t key_len;
    const uint8_t *value; /* in the same allocation as key */
    size_t value_len;
} tfc_table_entry;

typedef struct {
    tfc_table_entry *entries; /* sorted by unsigned bytewise key order, no duplicates */
    size_t n, cap;
} tfc_table;

/* Decodes a whole table file. Every block's trailer CRC is checked; compression 0 (none) and 1 (Snappy) are
 * read. DATA_LOSS naming `what` and the part (footer, block at offset, entry) for truncated, corrupt or
 * unsorted contents. The result owns copies of everything; free with tfc_table_free. */
bool tfc_table_parse(const uint8_t *data, size_t size, const char *what, tfc_table *out, tfc_status *st);
void tfc_table_free(tfc_table *t); /* NULL-safe; leaves *t zeroed */
/* The entry with exactly this key, or NULL. */
const tfc_table_entry *tfc_table_find(const tfc_table *t, const char *key, size_t key_len);

/* Builds a table in memory. Keys must be added in strictly increasing bytewise order (INVALID_ARGUMENT
 * otherwise). block_size 0 means TensorFlow's 256 KiB; blocks are stored uncompressed. */
typedef struct tfc_table_builder tfc_table_builder;
tfc_table_builder *tfc_table_builder_new(size_t block_size, tfc_status *st);
bool tfc_table_builder_add(tfc_table_builder *b, const void *key, size_t key_len, const void *value, size_t value_len,
                           tfc_status *st);
/* The finished file bytes: *out (tfc_malloc'd, caller frees) and *size. The builder is spent afterwards. */
bool tfc_table_builder_finish(tfc_table_builder *b, uint8_t **out, size_t *size, tfc_status *st);
void tfc_table_builder_free(tfc_table_builder *b); /* NULL-safe */

/* Raw Snappy decompression (the block format, not the framing format) into a new tfc_malloc'd buffer of at
 * most max_out bytes. DATA_LOSS naming `what` for malformed input. */
bool tfc_snappy_uncompress(const uint8_t *in, size_t n, size_t max_out, const char *what, uint8_t **out,
                           size_t *out_len, tfc_status *st);

#endif
