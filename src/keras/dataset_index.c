/* Keras's directory index (tf_keras's dataset_utils.index_directory and iter_valid_files) and numpy's legacy
 * RandomState shuffle, which together fix the file order, the labels and the validation split of
 * image_dataset_from_directory / text_dataset_from_directory.
 *
 * Keras walks each class folder with tf.io.gfile.walk and sorts the (root, dirs, files) triples by root path,
 * then each root's files by name. Sorting by the whole root string is not a depth-first order: "a-b" sorts
 * before "a/z" because '-' < '/'. So the walk here collects every folder first and sorts afterwards. Python
 * compares str by code point, which for UTF-8 names is strcmp's byte order. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "keras/dataset_utils_internal.h"

/* ---- numpy's MT19937 (numpy/random/src/mt19937) ---------------------------------------------------------------
 * RandomState(seed) with an integer seed uses the reference init_genrand; next32 is the reference generator
 * with its tempering. */
#define MT_N 624
#define MT_M 397

void np_mt19937_seed(np_mt19937 *s, uint32_t seed) {
    for (int i = 0; i < MT_N; i++) {
        s->key[i] = seed;
        seed = 1812433253u * (seed ^ (seed >> 30)) + (uint32_t)i + 1u;
    }
    s->pos = MT_N;
}

static void mt_twist(np_mt19937 *s) {
    uint32_t *k = s->key;
    for (int i = 0; i < MT_N; i++) {
        uint32_t y = (k[i] & 0x80000000u) | (k[(i + 1) % MT_N] & 0x7fffffffu);
        k[i] = k[(i + MT_M) % MT_N] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
    }
    s->pos = 0;
}

uint32_t np_mt19937_next32(np_mt19937 *s) {
    if (s->pos == MT_N) mt_twist(s);
    uint32_t y = s->key[s->pos++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

/* numpy's legacy random_interval: the smallest all-ones mask covering max, then rejection. Values up to
 * 2**32 - 1 draw one 32-bit word; larger ones a 64-bit value made of two words (high word first). */
uint64_t np_random_interval(np_mt19937 *s, uint64_t max) {
    if (max == 0) return 0;
    uint64_t mask = max;
    mask |= mask >> 1;
    mask |= mask >> 2;
    mask |= mask >> 4;
    mask |= mask >> 8;
    mask |= mask >> 16;
    mask |= mask >> 32;
    uint64_t v;
    if (max <= 0xffffffffu) {
        while ((v = (np_mt19937_next32(s) & mask)) > max) {
        }
    } else {
        do {
            uint64_t hi = np_mt19937_next32(s);
            v = ((hi << 32) | np_mt19937_next32(s)) & mask;
        } while (v > max);
    }
    return v;
}

/* RandomState.shuffle, both its list path and its 1-D array path: for i from n-1 down to 1, swap x[i] with
 * x[random_interval(i)]. */
void np_shuffle_permutation(uint32_t seed, int64_t *perm, int64_t n) {
    for (int64_t i = 0; i < n; i++) perm[i] = i;
    np_mt19937 s;
    np_mt19937_seed(&s, seed);
    for (int64_t i = n - 1; i >= 1; i--) {
        int64_t j = (int64_t)np_random_interval(&s, (uint64_t)i);
        int64_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

/* ---- strings --------------------------------------------------------------------------------------------------- */

/* os.path.join(a, b) for a relative b: a "/" between them unless a is empty or ends with one. */
static char *path_join(const char *a, const char *b) {
    size_t na = strlen(a), nb = strlen(b);
    bool sep = na > 0 && a[na - 1] != '/';
    char *p = tfc_malloc(na + sep + nb + 1);
    if (!p) return NULL;
    memcpy(p, a, na);
    if (sep) p[na] = '/';
    memcpy(p + na + sep, b, nb + 1);
    return p;
}

/* Joins up to three parts of a relative path, skipping empty ones. */
static char *rel_join3(const char *a, const char *b, const char *c) {
    const char *parts[3] = {a, b, c};
    size_t len = 0;
    for (int i = 0; i < 3; i++) len += strlen(parts[i]) + 1;
    char *p = tfc_malloc(len + 1);
    if (!p) return NULL;
    size_t k = 0;
    for (int i = 0; i < 3; i++) {
        size_t n = strlen(parts[i]);
        if (!n) continue;
        if (k) p[k++] = '/';
        memcpy(p + k, parts[i], n);
        k += n;
    }
    p[k] = 0;
    return p;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static bool has_format(const char *name, const char *const *formats) {
    size_t n = strlen(name);
    for (const char *const *f = formats; *f; f++) {
        size_t m = strlen(*f);
        if (m > n) continue;
        const char *tail = name + n - m;
        size_t i = 0;
        while (i < m && (char)((tail[i] >= 'A' && tail[i] <= 'Z') ? tail[i] + 32 : tail[i]) == (*f)[i]) i++;
        if (i == m) return true;
    }
    return false;
}

static void free_strs(char **v, int64_t n) {
    if (!v) return;
    for (int64_t i = 0; i < n; i++) tfc_free(v[i]);
    tfc_free(v);
}

/* Appends s (taken) to a growing array; on failure frees s. */
static bool push_str(char ***v, int64_t *n, int64_t *cap, char *s) {
    if (!s) return false;
    if (*n == *cap) {
        int64_t nc = *cap ? *cap * 2 : 16;
        char **nv = tfc_realloc(*v, (size_t)nc * sizeof *nv);
        if (!nv) {
            tfc_free(s);
            return false;
        }
        *v = nv;
        *cap = nc;
    }
    (*v)[(*n)++] = s;
    return true;
}

char *keras_py_list_repr(const char *const *strs, int n, char *buf, size_t size) {
    size_t k = 0;
#define PUT(c)                            \
    do {                                  \
        if (k + 1 < size) buf[k++] = (c); \
    } while (0)
    if (!size) return buf;
    PUT('[');
    for (int i = 0; i < n; i++) {
        const char *s = strs[i];
        if (i) {
            PUT(',');
            PUT(' ');
        }
        char q = (strchr(s, '\'') && !strchr(s, '"')) ? '"' : '\'';
        PUT(q);
        for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
            if (*c == '\\' || *c == (unsigned char)q) {
                PUT('\\');
                PUT((char)*c);
            } else if (*c == '\n' || *c == '\r' || *c == '\t') {
                PUT('\\');
                PUT(*c == '\n' ? 'n' : *c == '\r' ? 'r' : 't');
            } else if (*c < 0x20 || *c == 0x7f) {
                char hex[5];
                snprintf(hex, sizeof hex, "\\x%02x", *c);
                for (int j = 0; hex[j]; j++) PUT(hex[j]);
            } else {
                PUT((char)*c);
            }
        }
        PUT(q);
    }
    PUT(']');
    buf[k] = 0;
#undef PUT
    return buf;
}

/* ---- the walk ---------------------------------------------------------------------------------------------------- */

typedef struct walk_dir {
    char *rel;      /* path of the folder below the walk's top ("" for the top) */
    char **files;   /* names of its files with an allowed extension */
    int64_t nfiles, capfiles;
} walk_dir;

typedef struct walk_state {
    walk_dir *dirs;
    int64_t ndirs, capdirs;
    const char *const *formats;
    bool oom;
} walk_state;

/* The folders on the path from the top to the folder being listed, to skip links back into them. */
typedef struct walk_anc {
    dev_t dev;
    ino_t ino;
    const struct walk_anc *up;
} walk_anc;

static void walk_state_free(walk_state *w) {
    for (int64_t i = 0; i < w->ndirs; i++) {
        tfc_free(w->dirs[i].rel);
        free_strs(w->dirs[i].files, w->dirs[i].nfiles);
    }
    tfc_free(w->dirs);
}

/* tf.io.gfile.walk(full): lists the folder (an unreadable one is skipped silently, as the walk's onerror=None),
 * classifies entries with stat (so links to folders are folders, dangling links files), recurses into
 * sub-folders. Only out-of-memory fails. */
static bool walk(walk_state *w, const char *full, char *rel, const walk_anc *anc) {
    DIR *d = opendir(full);
    if (!d) {
        tfc_free(rel);
        return true;
    }
    if (w->ndirs == w->capdirs) {
        int64_t nc = w->capdirs ? w->capdirs * 2 : 16;
        walk_dir *nd = tfc_realloc(w->dirs, (size_t)nc * sizeof *nd);
        if (!nd) {
            closedir(d);
            tfc_free(rel);
            return false;
        }
        w->dirs = nd;
        w->capdirs = nc;
    }
    int64_t me = w->ndirs++;
    w->dirs[me] = (walk_dir){.rel = rel};
    char **subs = NULL;
    int64_t nsubs = 0, capsubs = 0;
    bool ok = true;
    struct dirent *e;
    while (ok && (e = readdir(d))) {
        const char *name = e->d_name;
        if (!strcmp(name, ".") || !strcmp(name, "..")) continue;
        char *child = path_join(full, name);
        if (!child) {
            ok = false;
            break;
        }
        struct stat sb;
        bool is_dir = stat(child, &sb) == 0 && S_ISDIR(sb.st_mode);
        tfc_free(child);
        if (is_dir) {
            bool loop = false;
            for (const walk_anc *a = anc; a; a = a->up)
                if (a->dev == sb.st_dev && a->ino == sb.st_ino) loop = true;
            if (!loop) ok = push_str(&subs, &nsubs, &capsubs, tfc_strdup(name));
        } else if (has_format(name, w->formats)) {
            walk_dir *me_dir = &w->dirs[me];
            ok = push_str(&me_dir->files, &me_dir->nfiles, &me_dir->capfiles, tfc_strdup(name));
        }
    }
    closedir(d);
    for (int64_t i = 0; ok && i < nsubs; i++) {
        char *child = path_join(full, subs[i]);
        char *crel = rel_join3(w->dirs[me].rel, subs[i], "");
        struct stat sb;
        if (!child || !crel) {
            tfc_free(child);
            tfc_free(crel);
            ok = false;
            break;
        }
        if (stat(child, &sb) != 0) { /* vanished since the listing */
            tfc_free(child);
            tfc_free(crel);
            continue;
        }
        walk_anc here = {.dev = sb.st_dev, .ino = sb.st_ino, .up = anc};
        ok = walk(w, child, crel, &here);
        tfc_free(child);
    }
    free_strs(subs, nsubs);
    return ok;
}

static int cmp_dir(const void *a, const void *b) {
    return strcmp(((const walk_dir *)a)->rel, ((const walk_dir *)b)->rel);
}

/* iter_valid_files + index_subdirectory for one top folder: appends "<directory>/<subdir>/<path below top>" and
 * the label to the output arrays. */
static bool index_subdirectory(const char *directory, const char *subdir, int32_t label, const char *const *formats,
                               char ***paths, int32_t **labels, int64_t *n, int64_t *cap, tfc_status *st) {
    char *top = path_join(directory, subdir);
    if (!top) return tfc_status_oom(st, "directory path", strlen(directory) + strlen(subdir) + 2);
    walk_state w = {.formats = formats};
    char *rel0 = tfc_strdup("");
    struct stat sb;
    bool ok = rel0 != NULL;
    if (ok && stat(top, &sb) == 0) {
        walk_anc root = {.dev = sb.st_dev, .ino = sb.st_ino, .up = NULL};
        ok = walk(&w, top, rel0, &root);
    } else {
        tfc_free(rel0);
    }
    tfc_free(top);
    if (!ok) {
        walk_state_free(&w);
        return tfc_status_oom(st, "directory listing", 0);
    }
    if (w.ndirs > 1) qsort(w.dirs, (size_t)w.ndirs, sizeof *w.dirs, cmp_dir);
    for (int64_t i = 0; ok && i < w.ndirs; i++) {
        walk_dir *wd = &w.dirs[i];
        if (wd->nfiles > 1) qsort(wd->files, (size_t)wd->nfiles, sizeof *wd->files, cmp_str);
        for (int64_t j = 0; ok && j < wd->nfiles; j++) {
            char *rel = rel_join3(subdir, wd->rel, wd->files[j]);
            char *p = rel ? path_join(directory, rel) : NULL;
            tfc_free(rel);
            int64_t old_cap = *cap;
            ok = push_str(paths, n, cap, p);
            if (ok && *cap != old_cap) {
                int32_t *nl = tfc_realloc(*labels, (size_t)*cap * sizeof *nl);
                if (!nl) {
                    ok = false;
                    break;
                }
                *labels = nl;
            }
            if (ok) (*labels)[*n - 1] = label;
        }
    }
    walk_state_free(&w);
    return ok || tfc_status_oom(st, "file list", 0);
}

/* The class sub-folders of directory: sorted names of its folders (links followed) not starting with ".". */
static bool list_class_dirs(const char *directory, char ***out, int64_t *nout, tfc_status *st) {
    *out = NULL;
    *nout = 0;
    DIR *d = opendir(directory);
    if (!d) {
        int err = errno;
        if (err == ENOENT || err == ENOTDIR)
            return tfc_status_set(st, TFC_NOT_FOUND, "Could not find directory %s", directory);
        return tfc_status_set(st, err == EACCES ? TFC_PERMISSION_DENIED : TFC_UNKNOWN,
                              "Could not list directory %s: %s", directory, strerror(err));
    }
    int64_t cap = 0;
    bool ok = true;
    struct dirent *e;
    while (ok && (e = readdir(d))) {
        const char *name = e->d_name;
        if (name[0] == '.') continue; /* also "." and ".." */
        char *full = path_join(directory, name);
        if (!full) {
            ok = false;
            break;
        }
        struct stat sb;
        bool is_dir = stat(full, &sb) == 0 && S_ISDIR(sb.st_mode);
        tfc_free(full);
        if (is_dir) ok = push_str(out, nout, &cap, tfc_strdup(name));
    }
    closedir(d);
    if (!ok) {
        free_strs(*out, *nout);
        *out = NULL;
        *nout = 0;
        return tfc_status_oom(st, "directory listing", 0);
    }
    if (*nout > 1) qsort(*out, (size_t)*nout, sizeof **out, cmp_str);
    return true;
}

void keras_file_index_free(keras_file_index *ix) {
    if (!ix) return;
    free_strs(ix->paths, ix->n);
    tfc_free(ix->labels);
    free_strs(ix->class_names, ix->num_classes);
    memset(ix, 0, sizeof *ix);
}

static int cmp_i32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

char *keras_int_list_repr(const int32_t *v, int64_t n, char *buf, size_t size) {
    size_t k = (size_t)snprintf(buf, size, "[");
    for (int64_t i = 0; i < n && k < size; i++) k += (size_t)snprintf(buf + k, size - k, "%s%d", i ? ", " : "", v[i]);
    if (k < size) snprintf(buf + k, size - k, "]");
    return buf;
}

/* class_names = sorted(set(labels)) for explicit labels, as decimal strings. */
static bool explicit_class_names(const int32_t *labels, int64_t n, keras_file_index *out, tfc_status *st) {
    int32_t *s = tfc_malloc((size_t)(n ? n : 1) * sizeof *s);
    if (!s) return tfc_status_oom(st, "labels", (size_t)n * 4);
    memcpy(s, labels, (size_t)n * sizeof *s);
    if (n > 1) qsort(s, (size_t)n, sizeof *s, cmp_i32);
    int64_t u = 0;
    for (int64_t i = 0; i < n; i++)
        if (!u || s[i] != s[u - 1]) s[u++] = s[i];
    out->class_names = tfc_calloc((size_t)(u ? u : 1), sizeof *out->class_names);
    bool ok = out->class_names != NULL;
    for (int64_t i = 0; ok && i < u; i++) {
        char num[16];
        snprintf(num, sizeof num, "%d", s[i]);
        ok = (out->class_names[i] = tfc_strdup(num)) != NULL;
        out->num_classes = (int)i + 1;
    }
    tfc_free(s);
    return ok || tfc_status_oom(st, "class names", 0);
}

bool keras_index_directory(const char *directory, const keras_index_opts *o, keras_file_index *out, tfc_status *st) {
    memset(out, 0, sizeof *out);
    char **subdirs = NULL;
    int64_t nsub = 0, cap = 0;
    char buf_a[128], buf_b[128];
    if (o->inferred) {
        if (!list_class_dirs(directory, &subdirs, &nsub, st)) return false;
        if (o->num_class_names > 0) {
            bool same = true;
            for (int64_t i = 0; same && i < nsub; i++) {
                bool found = false;
                for (int j = 0; j < o->num_class_names && !found; j++) found = !strcmp(subdirs[i], o->class_names[j]);
                same = found;
            }
            for (int j = 0; same && j < o->num_class_names; j++) {
                bool found = false;
                for (int64_t i = 0; i < nsub && !found; i++) found = !strcmp(subdirs[i], o->class_names[j]);
                same = found;
            }
            if (!same) {
                tfc_status_set(st, TFC_INVALID_ARGUMENT,
                               "The `class_names` passed did not match the names of the subdirectories of the target "
                               "directory. Expected: %s, but received: %s",
                               keras_py_list_repr((const char *const *)subdirs, (int)nsub, buf_a, sizeof buf_a),
                               keras_py_list_repr(o->class_names, o->num_class_names, buf_b, sizeof buf_b));
                free_strs(subdirs, nsub);
                return false;
            }
        }
    } else {
        subdirs = tfc_malloc(sizeof *subdirs);
        if (subdirs) subdirs[0] = tfc_strdup("");
        if (!subdirs || !subdirs[0]) {
            tfc_free(subdirs);
            return tfc_status_oom(st, "directory listing", 0);
        }
        nsub = 1;
    }
    /* class_names and each folder's label: dict(zip(class_names, range(...))), so a repeated name maps to its
     * last position. */
    const char *const *names = o->inferred && o->num_class_names > 0 ? o->class_names : (const char *const *)subdirs;
    int num_names = o->inferred && o->num_class_names > 0 ? o->num_class_names : (int)nsub;
    bool ok = true;
    for (int64_t i = 0; ok && i < nsub; i++) {
        int32_t label = 0;
        for (int j = 0; j < num_names; j++)
            if (!strcmp(names[j], subdirs[i])) label = j;
        ok = index_subdirectory(directory, subdirs[i], label, o->formats, &out->paths, &out->labels, &out->n, &cap, st);
    }
    if (ok && !o->label_values) {
        out->class_names = tfc_calloc((size_t)(num_names ? num_names : 1), sizeof *out->class_names);
        ok = out->class_names != NULL;
        for (int j = 0; ok && j < num_names; j++) {
            ok = (out->class_names[j] = tfc_strdup(names[j])) != NULL;
            out->num_classes = j + 1;
        }
        if (!ok) tfc_status_oom(st, "class names", 0);
    }
    free_strs(subdirs, nsub);
    if (ok && !out->labels) /* no files: still a valid (empty) array */
        ok = (out->labels = tfc_malloc(sizeof *out->labels)) != NULL || tfc_status_oom(st, "labels", 4);
    if (ok && o->label_values) {
        if (o->num_label_values != out->n) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT,
                           "Expected the lengths of `labels` to match the number of files in the target directory. "
                           "len(labels) is %lld while we found %lld files in directory %s.",
                           (long long)o->num_label_values, (long long)out->n, directory);
            ok = false;
        } else {
            memcpy(out->labels, o->label_values, (size_t)out->n * sizeof *out->labels);
            ok = explicit_class_names(o->label_values, out->n, out, st);
        }
    }
    if (!ok) {
        keras_file_index_free(out);
        return false;
    }
    if (o->verbose) {
        /* Keras turns labels=None into an array of zeros before this test, so it always names the classes. */
        printf("Found %lld files belonging to %d classes.\n", (long long)out->n, out->num_classes);
        fflush(stdout);
    }
    if (o->shuffle && out->n > 1) {
        int64_t *perm = tfc_malloc((size_t)out->n * sizeof *perm);
        char **np = tfc_malloc((size_t)out->n * sizeof *np);
        int32_t *nl = tfc_malloc((size_t)out->n * sizeof *nl);
        if (!perm || !np || !nl) {
            tfc_free(perm);
            tfc_free(np);
            tfc_free(nl);
            keras_file_index_free(out);
            return tfc_status_oom(st, "shuffled file list", (size_t)out->n * 20);
        }
        np_shuffle_permutation(o->seed, perm, out->n);
        for (int64_t i = 0; i < out->n; i++) {
            np[i] = out->paths[perm[i]];
            nl[i] = out->labels[perm[i]];
        }
        tfc_free(perm);
        tfc_free(out->paths);
        tfc_free(out->labels);
        out->paths = np;
        out->labels = nl;
    }
    return true;
}
