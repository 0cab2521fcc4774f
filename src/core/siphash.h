/* Internal: SipHash-2-4 with a 128-bit key (two uint64 words), the keyed hash TensorFlow's
 * StringToHashBucketStrong uses. */
#ifndef TFC_CORE_SIPHASH_H
#define TFC_CORE_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

uint64_t tfc_siphash24(const uint64_t key[2], const void *s, size_t n);

#endif
