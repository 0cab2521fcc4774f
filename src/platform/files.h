/* Internal: small file-system helpers shared by the writers above the platform layer. */
#ifndef TFC_PLATFORM_FILES_H
#define TFC_PLATFORM_FILES_H

#include <stdbool.h>

#include "tfc/status.h"

/* TensorFlow's error code for an errno (errors::IOError's mapping: EACCES/EPERM/EROFS PERMISSION_DENIED,
 * ENOENT NOT_FOUND, EEXIST ALREADY_EXISTS, ENOSPC/EFBIG/EDQUOT RESOURCE_EXHAUSTED, ENOTDIR/EISDIR
 * FAILED_PRECONDITION, others UNKNOWN). */
tfc_code tfc_errno_code(int e);
/* mkdir -p: creates dir and its missing parents (0777 before the umask). Errors name `what` and the component
 * that failed, with tfc_errno_code's code. */
bool tfc_make_dirs(const char *dir, const char *what, tfc_status *st);

#endif
