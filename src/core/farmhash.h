/* Internal: FarmHash's Fingerprint64 (farmhashna::Hash64), the string fingerprint TensorFlow's
 * StringToHashBucketFast and Fingerprint64-based bucketing use (tensorflow/core/platform/fingerprint.h). The
 * value is stable across platforms: bytes are read little-endian whatever the host's order. */
#ifndef TFC_CORE_FARMHASH_H
#define TFC_CORE_FARMHASH_H

#include <stddef.h>
#include <stdint.h>

/* Fingerprint64 of the n bytes at s (s may be NULL when n is 0). */
uint64_t tfc_fingerprint64(const void *s, size_t n);

#endif
