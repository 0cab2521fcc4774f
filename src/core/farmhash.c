/* FarmHash Fingerprint64 (the farmhashna 64-bit hash with its fixed seed), written from the published
 * algorithm: inputs up to 16, 32 and 64 bytes have their own mixing; longer inputs run 64-byte rounds over
 * two 128-bit states and finish on the last 64 bytes. */
#include "core/farmhash.h"


static const uint64_t K0 = 0xc3a5c85c97cb3127ULL, K1 = 0xb492b66fbe98f273ULL, K2 = 0x9ae16a3b2f90404fULL;

static uint64_t fetch64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}
static uint32_t fetch32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t rot(uint64_t v, int s) { return s == 0 ? v : (v >> s) | (v << (64 - s)); }
static uint64_t shift_mix(uint64_t v) { return v ^ (v >> 47); }

static uint64_t len16_mul(uint64_t u, uint64_t v, uint64_t mul) {
    uint64_t a = (u ^ v) * mul;
    a ^= a >> 47;
    uint64_t b = (v ^ a) * mul;
    b ^= b >> 47;
    return b * mul;
}

static uint64_t len0to16(const uint8_t *s, size_t len) {
    if (len >= 8) {
        uint64_t mul = K2 + len * 2, a = fetch64(s) + K2, b = fetch64(s + len - 8);
        uint64_t c = rot(b, 37) * mul + a, d = (rot(a, 25) + b) * mul;
        return len16_mul(c, d, mul);
    }
    if (len >= 4) {
        uint64_t mul = K2 + len * 2, a = fetch32(s);
        return len16_mul(len + (a << 3), fetch32(s + len - 4), mul);
    }
    if (len > 0) {
        uint8_t a = s[0], b = s[len >> 1], c = s[len - 1];
        uint32_t y = (uint32_t)a + ((uint32_t)b << 8), z = (uint32_t)len + ((uint32_t)c << 2);
        return shift_mix(y * K2 ^ z * K0) * K2;
    }
    return K2;
}

static uint64_t len17to32(const uint8_t *s, size_t len) {
    uint64_t mul = K2 + len * 2, a = fetch64(s) * K1, b = fetch64(s + 8);
    uint64_t c = fetch64(s + len - 8) * mul, d = fetch64(s + len - 16) * K2;
    return len16_mul(rot(a + b, 43) + rot(c, 30) + d, a + rot(b + K2, 18) + c, mul);
}

static uint64_t len33to64(const uint8_t *s, size_t len) {
    uint64_t mul = K2 + len * 2, a = fetch64(s) * K2, b = fetch64(s + 8);
    uint64_t c = fetch64(s + len - 8) * mul, d = fetch64(s + len - 16) * K2;
    uint64_t y = rot(a + b, 43) + rot(c, 30) + d, z = len16_mul(y, a + rot(b + K2, 18) + c, mul);
    uint64_t e = fetch64(s + 16) * mul, f = fetch64(s + 24);
    uint64_t g = (y + fetch64(s + len - 32)) * mul, h = (z + fetch64(s + len - 24)) * mul;
    return len16_mul(rot(e + f, 43) + rot(g, 30) + h, e + rot(f + a, 18) + g, mul);
}

typedef struct { uint64_t first, second; } pair64;

static pair64 weak32(const uint8_t *s, uint64_t a, uint64_t b) {
    uint64_t w = fetch64(s), x = fetch64(s + 8), y = fetch64(s + 16), z = fetch64(s + 24);
    a += w;
    b = rot(b + a + z, 21);
    uint64_t c = a;
    a += x;
    a += y;
    b += rot(a, 44);
    return (pair64){a + z, b + c};
}

uint64_t tfc_fingerprint64(const void *data, size_t len) {
    const uint8_t *s = data;
    if (len <= 16) return len0to16(s, len);
    if (len <= 32) return len17to32(s, len);
    if (len <= 64) return len33to64(s, len);
    const uint64_t seed = 81;
    uint64_t x = seed, y = seed * K1 + 113, z = shift_mix(y * K2 + 113) * K2, t;
    pair64 v = {0, 0}, w = {0, 0};
    x = x * K2 + fetch64(s);
    const uint8_t *end = s + ((len - 1) / 64) * 64, *last64 = end + ((len - 1) & 63) - 63;
    do {
        x = rot(x + y + v.first + fetch64(s + 8), 37) * K1;
        y = rot(y + v.second + fetch64(s + 48), 42) * K1;
        x ^= w.second;
        y += v.first + fetch64(s + 40);
        z = rot(z + w.first, 33) * K1;
        v = weak32(s, v.second * K1, x + w.first);
        w = weak32(s + 32, z + w.second, y + fetch64(s + 16));
        t = z, z = x, x = t;
        s += 64;
    } while (s != end);
    uint64_t mul = K1 + ((z & 0xff) << 1);
    s = last64;
    w.first += ((len - 1) & 63);
    v.first += w.first;
    w.first += v.first;
    x = rot(x + y + v.first + fetch64(s + 8), 37) * mul;
    y = rot(y + v.second + fetch64(s + 48), 42) * mul;
    x ^= w.second * 9;
    y += v.first * 9 + fetch64(s + 40);
    z = rot(z + w.first, 33) * mul;
    v = weak32(s, v.second * mul, x + w.first);
    w = weak32(s + 32, z + w.second, y + fetch64(s + 16));
    t = z, z = x, x = t;
    return len16_mul(len16_mul(v.first, w.first, mul) + shift_mix(y) * K0 + z, len16_mul(v.second, w.second, mul) + x,
                     mul);
}
