/* SipHash-2-4 (Aumasson and Bernstein): 2 compression rounds per 8-byte word, 4 finalisation rounds; the
 * last word carries the length in its top byte. Words are read little-endian. */
#include "core/siphash.h"

static uint64_t rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

#define SIPROUND(v0, v1, v2, v3)                                                                  \
    do {                                                                                          \
        v0 += v1, v1 = rotl(v1, 13), v1 ^= v0, v0 = rotl(v0, 32);                                 \
        v2 += v3, v3 = rotl(v3, 16), v3 ^= v2;                                                    \
        v0 += v3, v3 = rotl(v3, 21), v3 ^= v0;                                                    \
        v2 += v1, v1 = rotl(v1, 17), v1 ^= v2, v2 = rotl(v2, 32);                                 \
    } while (0)

uint64_t tfc_siphash24(const uint64_t key[2], const void *data, size_t n) {
    const uint8_t *p = data;
    uint64_t v0 = key[0] ^ 0x736f6d6570736575ULL, v1 = key[1] ^ 0x646f72616e646f6dULL;
    uint64_t v2 = key[0] ^ 0x6c7967656e657261ULL, v3 = key[1] ^ 0x7465646279746573ULL;
    size_t full = n & ~(size_t)7;
    for (size_t i = 0; i < full; i += 8) {
        uint64_t m = 0;
        for (int k = 7; k >= 0; k--) m = (m << 8) | p[i + (size_t)k];
        v3 ^= m;
        SIPROUND(v0, v1, v2, v3);
        SIPROUND(v0, v1, v2, v3);
        v0 ^= m;
    }
    uint64_t b = (uint64_t)n << 56;
    for (size_t k = 0; k < (n & 7); k++) b |= (uint64_t)p[full + k] << (8 * k);
    v3 ^= b;
    SIPROUND(v0, v1, v2, v3);
    SIPROUND(v0, v1, v2, v3);
    v0 ^= b;
    v2 ^= 0xff;
    for (int r = 0; r < 4; r++) SIPROUND(v0, v1, v2, v3);
    return v0 ^ v1 ^ v2 ^ v3;
}
