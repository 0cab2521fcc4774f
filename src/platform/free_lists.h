/* Internal: per-thread free lists of small fixed-size blocks (tensor headers, buffer records, the blocks of small
 * tensors' data). A training step creates and frees ~130 tensors (most of them scalars of the optimizer's and the
 * loss's arithmetic): ~480 malloc/free pairs per step, more freed at a scope's end than malloc's per-thread cache
 * holds (7 per size), so most went through malloc's bins (~9 us per step of a 300 us MLP step). A free list
 * keeps up to FL_MAX blocks of each of 8 size classes (64-byte steps up to 512 bytes) per thread: at most
 * 8 * 128 * 512 bytes = 512 KiB per thread; a thread's lists are released when it exits.
 *
 * Off under AddressSanitizer (compiled out: a freed block goes back to malloc at once, so ASan still reports a
 * use after free of a tensor or its data) and when TFC_FREE_LISTS=0 is set in the environment (read once;
 * e.g. for valgrind). Allocations still pass the failure hook (tfc_alloc_fail_after). */
#ifndef TFC_PLATFORM_FREE_LISTS_H
#define TFC_PLATFORM_FREE_LISTS_H

#include <stdbool.h>
#include <stddef.h>

/* A block of size bytes (<= 512 come from the lists) or NULL. Free with tfc_fl_free and the same size. */
void *tfc_fl_alloc(size_t size);
void tfc_fl_free(void *p, size_t size);
/* Whether the lists are in use in this build and environment. */
bool tfc_fl_enabled(void);

#endif
