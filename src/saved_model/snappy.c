/* Raw Snappy decompression: older TensorFlow checkpoints store their index blocks Snappy-compressed
 * (specs/savedmodel.md §6.1 describes the element format). Every length and back-reference is checked
 * against what has been produced and the announced size. */
#include <string.h>

#include "saved_model/table.h"
#include "tfc/platform.h"

bool tfc_snappy_uncompress(const uint8_t *in, size_t n, size_t max_out, const char *what, uint8_t **out,
                           size_t *out_len, tfc_status *st) {
    size_t pos = 0;
    uint64_t want;
    if (!tfc_varint_read(in, &pos, n, &want) || want > UINT32_MAX)
        return tfc_status_set(st, TFC_DATA_LOSS, "%s: Snappy block: corrupt length preamble", what);
    if (want > max_out)
        return tfc_status_set(st, TFC_DATA_LOSS, "%s: Snappy block announces %llu bytes (limit %zu)", what,
                              (unsigned long long)want, max_out);
    uint8_t *o = tfc_malloc(want ? (size_t)want : 1);
    if (!o) return tfc_status_oom(st, what, (size_t)want);
    size_t op = 0;
    while (pos < n) {
        uint8_t tag = in[pos++];
        size_t len, offset = 0;
        if ((tag & 3) == 0) { /* literal */
            len = tag >> 2;
            if (len >= 60) {
                size_t k = len - 59;
                if (k > n - pos) goto bad;
                len = 0;
                for (size_t i = 0; i < k; i++) len |= (size_t)in[pos + i] << (8 * i);
                pos += k;
            }
            len += 1;
            if (len > n - pos || len > want - op) goto bad;
            memcpy(o + op, in + pos, len);
            pos += len;
            op += len;
            continue;
        }
        if ((tag & 3) == 1) {
            if (pos >= n) goto bad;
            len = 4 + ((tag >> 2) & 7);
            offset = (size_t)(tag >> 5) << 8 | in[pos++];
        } else {
            size_t k = (tag & 3) == 2 ? 2 : 4;
            if (k > n - pos) goto bad;
            len = (size_t)(tag >> 2) + 1;
            for (size_t i = 0; i < k; i++) offset |= (size_t)in[pos + i] << (8 * i);
            pos += k;
        }
        if (offset == 0 || offset > op || len > want - op) goto bad;
        for (size_t i = 0; i < len; i++, op++) o[op] = o[op - offset]; /* may overlap: byte by byte */
    }
    if (op != want) goto bad;
    *out = o;
    *out_len = op;
    return true;
bad:
    tfc_free(o);
    return tfc_status_set(st, TFC_DATA_LOSS, "%s: corrupt Snappy block (at input byte %zu of %zu)", what, pos, n);
}
