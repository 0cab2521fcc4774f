/* Internal: whole-file reads with a size limit, and writes through a temporary file renamed into place. */
#ifndef TFC_PLATFORM_FILE_IO_H
#define TFC_PLATFORM_FILE_IO_H

#include "tfc/status.h"

/* Reads the whole file into a new tfc_malloc'd buffer (*data, *size; one extra NUL byte after the data).
 * NOT_FOUND when it cannot be opened, INVALID_ARGUMENT when larger than max_bytes (0: no limit),
 * DATA_LOSS on a short read. */
bool tfc_file_read_all(const char *path, size_t max_bytes, void **data, size_t *size, tfc_status *st);
/* Writes size bytes to path.tmp<pid>, syncs, and renames it to path (UNAVAILABLE on failure; the temporary
 * file is removed). */
bool tfc_file_write_atomic(const char *path, const void *data, size_t size, tfc_status *st);

#endif
