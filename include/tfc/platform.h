/* tfc — platform layer: export macro, allocation hooks, thread pool, logging.
 * Everything above this layer allocates through tfc_malloc so tests can make the Nth allocation fail. */
#ifndef TFC_PLATFORM_H
#define TFC_PLATFORM_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define TFC_API __declspec(dllexport)
#else
#define TFC_API __attribute__((visibility("default")))
#endif

/* Tri-state for optional booleans (Keras arguments, tf.data options): zero is the default of that argument. */
typedef enum { TFC_DEFAULT = 0, TFC_YES = 1, TFC_NO = -1 } tfc_flag;
#define TFC_FLAG(f, dflt) ((f) == TFC_DEFAULT ? (dflt) : (f) == TFC_YES)

/* ---- allocation ---------------------------------------------------------------------------------
 * tfc_malloc/tfc_calloc/tfc_realloc return NULL on failure (never abort). They go through a hook that
 * tests replace to fail allocations (see tfc_alloc_fail_after). Memory is 64-byte aligned when
 * allocated with tfc_aligned_alloc and freed with tfc_aligned_free. */
TFC_API void *tfc_malloc(size_t size);
TFC_API void *tfc_calloc(size_t n, size_t size);
TFC_API void *tfc_realloc(void *p, size_t size);
TFC_API void tfc_free(void *p);
TFC_API void *tfc_aligned_alloc(size_t size); /* 64-byte aligned, size 0 gives a valid pointer */
TFC_API void tfc_aligned_free(void *p);
/* Releases the blocks tfc_aligned_free keeps for reuse (large tensor buffers are cached, bounded by the
 * environment variable TFC_ALLOC_CACHE_MB, default 256; 0 disables the cache). */
TFC_API void tfc_alloc_cache_clear(void);
TFC_API char *tfc_strdup(const char *s);

/* Makes every allocation after the next `n` successful ones fail (n < 0 disables). For fault tests. */
TFC_API void tfc_alloc_fail_after(int64_t n);
/* Makes only the allocation after the next `n` successful ones fail; later ones succeed again. Finds
 * failures that are swallowed instead of reported (SQLite's transient faults). n < 0 disables. */
TFC_API void tfc_alloc_fail_once_after(int64_t n);
/* Number of allocations that the fault hook made fail since the last tfc_alloc_fail_after(_once) call. */
TFC_API int64_t tfc_alloc_failures(void);
/* Makes every allocation of more than max_bytes fail as if out of memory (0: no limit). For fuzz tests, whose
 * random shapes may ask for any size, and for capping a process's largest single allocation. */
TFC_API void tfc_alloc_set_limit(size_t max_bytes);

/* ---- thread pool ---------------------------------------------------------------------------------
 * A fixed pool of worker threads; tfc_parallel_for splits [0, n) into contiguous ranges and runs
 * fn(arg, begin, end) on the pool and the calling thread, returning when all ranges are done.
 * cost_per_unit is an estimate of the work per index in cycles-ish units; small total work runs
 * inline on the caller. Nested calls from a worker run inline. After each job the workers poll for the next
 * one for a short while (50 microseconds; TFC_POOL_SPIN_US in the environment sets it, 0 turns polling off)
 * before they sleep, so that jobs of a few microseconds each (a batch-1 inference) can be split. */
typedef struct tfc_threadpool tfc_threadpool;
typedef void (*tfc_range_fn)(void *arg, int64_t begin, int64_t end);

/* num_threads <= 0 means the number of online CPU cores. Returns NULL when out of memory. */
TFC_API tfc_threadpool *tfc_threadpool_new(int num_threads);
TFC_API void tfc_threadpool_free(tfc_threadpool *pool); /* NULL-safe; joins the workers */
TFC_API int tfc_threadpool_size(const tfc_threadpool *pool); /* threads including the caller */
TFC_API void tfc_parallel_for(tfc_threadpool *pool, int64_t n, int64_t cost_per_unit, tfc_range_fn fn,
                              void *arg);
TFC_API int tfc_num_cores(void);

/* ---- logging ---------------------------------------------------------------------------------------
 * Levels follow TensorFlow's (INFO=0, WARNING=1, ERROR=2). Messages below the minimum level (env
 * TFC_MIN_LOG_LEVEL, default 1 = WARNING) are dropped before any sink, as TF_CPP_MIN_LOG_LEVEL does; the
 * default sink writes "tfc <I|W|E> <message>" lines to stderr. Sinks run under a lock: they must not log. */
typedef enum { TFC_LOG_INFO = 0, TFC_LOG_WARNING = 1, TFC_LOG_ERROR = 2 } tfc_log_level;
typedef void (*tfc_log_sink)(void *user, tfc_log_level level, const char *msg);
/* Redirects log output; NULL restores the stderr sink. */
TFC_API void tfc_log_set_sink(tfc_log_sink sink, void *user);
TFC_API void tfc_log_set_min_level(tfc_log_level level);
TFC_API void tfc_log(tfc_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- CRC-32C ---------------------------------------------------------------------------------------
 * CRC-32C (Castagnoli), hardware-accelerated where the CPU has SSE4.2; extend continues a running crc.
 * The mask is TensorFlow's for CRCs stored next to the data they cover (TFRecord, tensor bundles, tables). */
/* CRC-32C of n bytes at data (tensorflow::crc32c::Value). */
TFC_API uint32_t tfc_crc32c(const void *data, size_t n);
/* CRC-32C of the bytes already covered by crc followed by n bytes at data (crc32c::Extend). */
TFC_API uint32_t tfc_crc32c_extend(uint32_t crc, const void *data, size_t n);
/* crc32c::Mask: the stored form of a CRC. */
TFC_API uint32_t tfc_crc32c_mask(uint32_t crc);
/* crc32c::Unmask: the inverse of tfc_crc32c_mask. */
TFC_API uint32_t tfc_crc32c_unmask(uint32_t masked);

#ifdef __cplusplus
}
#endif
#endif
