/* Small file-system helpers (platform/files.h). */
#include "platform/files.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "tfc/platform.h"

tfc_code tfc_errno_code(int e) {
    switch (e) {
    case EACCES: case EPERM: case EROFS: return TFC_PERMISSION_DENIED;
    case ENOENT: return TFC_NOT_FOUND;
    case EEXIST: return TFC_ALREADY_EXISTS;
    case ENOSPC: case EFBIG:
#ifdef EDQUOT
    case EDQUOT:
#endif
        return TFC_RESOURCE_EXHAUSTED;
    case ENOTDIR: case EISDIR: return TFC_FAILED_PRECONDITION;
    default: return TFC_UNKNOWN;
    }
}

static bool make_one(char *path, const char *what, tfc_status *st) {
    struct stat sb;
    if (mkdir(path, 0777) == 0) return true;
    int e = errno;
    if (e == EEXIST) {
        if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) return true;
        return tfc_status_set(st, TFC_FAILED_PRECONDITION, "%s: cannot create directory %s: it exists and is not a "
                              "directory", what, path);
    }
    return tfc_status_set(st, tfc_errno_code(e), "%s: cannot create directory %s: %s", what, path, strerror(e));
}

bool tfc_make_dirs(const char *dir, const char *what, tfc_status *st) {
    if (!dir || !*dir) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: empty directory name", what);
    char *buf = tfc_strdup(dir);
    if (!buf) return tfc_status_oom(st, what, strlen(dir) + 1);
    bool ok = true;
    for (char *p = buf + 1; *p && ok; p++) {
        if (*p != '/' || p[-1] == '/') continue;
        *p = 0;
        ok = make_one(buf, what, st);
        *p = '/';
    }
    size_t n = strlen(buf);
    while (n > 1 && buf[n - 1] == '/') buf[--n] = 0;
    if (ok) ok = make_one(buf, what, st);
    tfc_free(buf);
    if (ok) tfc_status_clear(st);
    return ok;
}
