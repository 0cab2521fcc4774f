/* Saving and restoring a ParameterServerStrategy's variables (parameter_server.h): one .npy file per variable
 * holding its whole value, so a checkpoint restores onto any number of ps tasks and any partitioning. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "distribute/ps_strategy_internal.h"
#include "platform/files.h"
#include "tfc/npy.h"

/* dir/<name>.npy with '/' in the name written as '.' (names are at most 100 bytes). */
static bool var_path(const char *dir, const char *name, char *buf, size_t size, tfc_status *st) {
    const int n = snprintf(buf, size, "%s/%s.npy", dir, name);
    if (n < 0 || (size_t)n >= size)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "checkpoint path '%s/%s.npy' is too long", dir, name);
    for (char *p = buf + strlen(dir) + 1; *p; p++)
        if (*p == '/') *p = '.';
    return true;
}

bool tfc_ps_strategy_save(tfc_ps_strategy *s, const char *dir, tfc_status *st) {
    if (!dir || !*dir) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "checkpoint folder must be given");
    if (!tfc_make_dirs(dir, "checkpoint folder", st)) return false;
    for (int i = 0; i < s->n_vars; i++) {
        char path[4096];
        tfc_tensor *v = var_path(dir, tfc_ps_variable_name(s->vars[i]), path, sizeof path, st)
                            ? tfc_ps_variable_read(s->vars[i], st) : NULL;
        const bool ok = v && tfc_npy_write(v, path, st);
        tfc_tensor_unref(v);
        if (!ok) return false;
    }
    return true;
}

bool tfc_ps_strategy_restore(tfc_ps_strategy *s, const char *dir, tfc_status *st) {
    if (!dir || !*dir) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "checkpoint folder must be given");
    for (int i = 0; i < s->n_vars; i++) {
        char path[4096];
        tfc_tensor *v = var_path(dir, tfc_ps_variable_name(s->vars[i]), path, sizeof path, st)
                            ? tfc_npy_read(path, st) : NULL;
        const bool ok = v && tfc_ps_variable_assign(s->vars[i], v, st);
        tfc_tensor_unref(v);
        if (!ok) return false;
    }
    return true;
}
