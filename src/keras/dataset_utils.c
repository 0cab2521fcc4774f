/* tf.keras.utils.image_dataset_from_directory and text_dataset_from_directory on tfc's tf.data: Keras's argument
 * checks (in Keras's order, with its messages), the directory index (dataset_index.c), the validation split, and
 * Keras's pipeline: from_tensor_slices(paths, labels) -> parallel map (read, decode, resize, encode the label)
 * -> shuffle -> batch -> prefetch.
 *
 * Keras zips a dataset of images with a separately mapped dataset of labels; one map over (path, label) gives the
 * same elements with one parallel stage instead of two. The codecs and resizing run as ops by name (DecodeImage,
 * ResizeBilinear, ResizeNearestNeighbor), inside the map's scope. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "keras/dataset_utils_internal.h"
#include "tfc/attr.h"
#include "tfc/tstring.h"

static const char *const image_formats[] = {".bmp", ".gif", ".jpeg", ".jpg", ".png", NULL};
static const char *const text_formats[] = {".txt", NULL};
#define IMAGE_FORMATS_STR "('.bmp', '.gif', '.jpeg', '.jpg', '.png')"

typedef enum { LABELS_NONE = 0, LABELS_INT, LABELS_CATEGORICAL, LABELS_BINARY } label_mode;

/* The arguments both utilities share, resolved to Keras's defaults. */
typedef struct dir_args {
    const char *labels;
    const int32_t *label_values;
    int64_t num_label_values;
    const char *label_mode;
    const char *const *class_names;
    int num_class_names;
    int64_t batch_size;
    bool shuffle;
    int64_t seed;
    bool has_seed;
    double validation_split;
    const char *subset;
    bool verbose;
} dir_args;

/* What a map needs to turn (path, label) into an element. */
typedef struct load_cfg {
    bool image;
    int channels;
    int64_t height, width;
    bool nearest, crop;
    int64_t max_length; /* text: 0 = whole file */
    label_mode mode;
    int num_classes;
} load_cfg;

/* ---- helpers -------------------------------------------------------------------------------------------------- */

static bool ieq(const char *a, const char *b) {
    for (; *a && *b; a++, b++) {
        char x = (*a >= 'A' && *a <= 'Z') ? (char)(*a + 32) : *a, y = (*b >= 'A' && *b <= 'Z') ? (char)(*b + 32) : *b;
        if (x != y) return false;
    }
    return *a == *b;
}

/* Python's str(float): the shortest %.{p}g that reads back as v. */
static const char *py_float(double v, char *buf, size_t size) {
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, size, "%.*g", p, v);
        if (strtod(buf, NULL) == v) break;
    }
    if (!strchr(buf, '.') && !strchr(buf, 'e') && !strchr(buf, 'n') && !strchr(buf, 'i')) {
        size_t n = strlen(buf);
        if (n + 2 < size) memcpy(buf + n, ".0", 3);
    }
    return buf;
}

/* tf.io.read_file: the bytes of path (up to max_bytes when max_bytes > 0) as a string scalar, or NULL with st
 * set to TensorFlow's "<path>; <reason>". */
static tfc_tensor *read_file(const char *path, int64_t max_bytes, tfc_status *st) {
    FILE *f = fopen(path, "rb");
    struct stat sb;
    int err = 0;
    if (!f || fstat(fileno(f), &sb) != 0) {
        err = errno;
        if (f) fclose(f);
        goto io_error;
    }
    if (S_ISDIR(sb.st_mode)) {
        fclose(f);
        err = EISDIR;
        goto io_error;
    }
    int64_t size = sb.st_size > 0 ? (int64_t)sb.st_size : 0;
    if (max_bytes > 0 && size > max_bytes) size = max_bytes;
    tfc_tensor *t = tfc_tensor_new(TFC_STRING, NULL, 0, st);
    if (!t) {
        fclose(f);
        return NULL;
    }
    tfc_tstring *s = tfc_tensor_mutable_data(t);
    char *p = tfc_tstring_resize(s, (size_t)size);
    if (!p) {
        fclose(f);
        tfc_tensor_unref(t);
        tfc_status_oom(st, "file contents", (size_t)size);
        return NULL;
    }
    size_t got = size ? fread(p, 1, (size_t)size, f) : 0;
    if (got < (size_t)size && ferror(f)) {
        err = errno ? errno : EIO;
        fclose(f);
        tfc_tensor_unref(t);
        goto io_error;
    }
    fclose(f);
    if (got < (size_t)size) tfc_tstring_resize(s, got); /* shrank since fstat */
    return t;
io_error:;
    tfc_code code = err == ENOENT || err == ENOTDIR ? TFC_NOT_FOUND
                    : err == EACCES || err == EPERM ? TFC_PERMISSION_DENIED
                    : err == EISDIR                 ? TFC_FAILED_PRECONDITION
                                                    : TFC_UNKNOWN;
    tfc_status_set(st, code, "%s; %s", path, strerror(err));
    return NULL;
}

/* Keras's smart_resize crop box: the largest centred window of the target aspect ratio, with its float32
 * arithmetic. img uint8 [h, w, c] -> a new uint8 [ch, cw, c] tensor. */
static tfc_tensor *crop_to_aspect(const tfc_tensor *img, int64_t th, int64_t tw, tfc_status *st) {
    int64_t h = tfc_tensor_dim(img, 0), w = tfc_tensor_dim(img, 1), c = tfc_tensor_dim(img, 2);
    int64_t ch = (int64_t)((float)(w * th) / (float)tw), cw = (int64_t)((float)(h * tw) / (float)th);
    if (ch > h) ch = h;
    if (cw > w) cw = w;
    int64_t h0 = (int64_t)((float)(h - ch) / 2.0f), w0 = (int64_t)((float)(w - cw) / 2.0f);
    int64_t dims[3] = {ch, cw, c};
    tfc_tensor *out = tfc_tensor_new(TFC_UINT8, dims, 3, st);
    if (!out) return NULL;
    const uint8_t *src = tfc_tensor_data(img);
    uint8_t *dst = tfc_tensor_mutable_data(out);
    for (int64_t y = 0; y < ch; y++) memcpy(dst + y * cw * c, src + ((h0 + y) * w + w0) * c, (size_t)(cw * c));
    return out;
}

/* "Cannot decode image <path>: <decoder's message>", keeping the decoder's code. */
static bool decode_error(const char *path, tfc_status *st) {
    char msg[sizeof st->msg];
    memcpy(msg, st->msg, sizeof msg);
    return tfc_status_set(st, st->code, "Cannot decode image %s: %s", path, msg);
}

/* load_image: read, DecodeImage(channels, uint8, expand_animations=False), optional smart-resize crop,
 * tf.image.resize with half-pixel centres. */
static tfc_tensor *load_image(tfc_ctx *ctx, const load_cfg *c, const char *path, tfc_status *st) {
    tfc_tensor *contents = read_file(path, 0, st);
    if (!contents) return NULL;
    tfc_attr da[] = {TFC_ATTR_I("channels", c->channels), TFC_ATTR_T("dtype", TFC_UINT8),
                     TFC_ATTR_B("expand_animations", false)};
    tfc_tensor *img = tfc_emit(ctx, "DecodeImage", &contents, 1, da, 3, st);
    tfc_tensor_unref(contents);
    if (!img) {
        decode_error(path, st);
        return NULL;
    }
    tfc_tensor *cropped = NULL;
    if (c->crop) {
        if (!(cropped = crop_to_aspect(img, c->height, c->width, st))) return NULL;
        img = cropped;
    }
    const tfc_shape *s = tfc_tensor_shape(img);
    int64_t dims4[4] = {1, s->dims[0], s->dims[1], s->dims[2]};
    tfc_tensor *img4 = tfc_tensor_reshaped(img, dims4, 4, st);
    tfc_tensor_unref(cropped);
    if (!img4) return NULL;
    int32_t hw[2] = {(int32_t)c->height, (int32_t)c->width};
    tfc_tensor *size = tfc_vec_i32(hw, 2, st);
    tfc_tensor *resized = NULL;
    if (size) {
        tfc_attr ra[] = {TFC_ATTR_B("align_corners", false), TFC_ATTR_B("half_pixel_centers", true)};
        resized = tfc_emit(ctx, c->nearest ? "ResizeNearestNeighbor" : "ResizeBilinear", (tfc_tensor *[]){img4, size},
                           2, ra, 2, st);
    }
    tfc_tensor_unref(size);
    tfc_tensor_unref(img4);
    if (!resized) return NULL;
    int64_t dims3[3] = {c->height, c->width, c->channels};
    return tfc_tensor_reshaped(resized, dims3, 3, st);
}

/* Keras's labels_to_dataset: int32 as is, "binary" float32 [1], "categorical" tf.one_hot (all zeros for a label
 * outside [0, num_classes), as one_hot). */
static tfc_tensor *encode_label(const load_cfg *c, tfc_tensor *label, tfc_status *st) {
    int32_t v = *(const int32_t *)tfc_tensor_data(label);
    if (c->mode == LABELS_INT) return tfc_tensor_ref(label);
    int64_t n = c->mode == LABELS_BINARY ? 1 : c->num_classes;
    tfc_tensor *t = tfc_tensor_new(TFC_FLOAT, &n, 1, st);
    if (!t) return NULL;
    float *d = tfc_tensor_mutable_data(t);
    if (c->mode == LABELS_BINARY)
        d[0] = (float)v;
    else if (v >= 0 && v < c->num_classes)
        d[v] = 1.0f;
    return t;
}

static bool load_element(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                         tfc_status *st) {
    (void)n_in;
    (void)n_out;
    const load_cfg *c = user;
    size_t len = 0;
    const char *p = tfc_tensor_string(in[0], 0, &len);
    char *path = tfc_malloc(len + 1);
    if (!path) return tfc_status_oom(st, "file path", len + 1);
    memcpy(path, p, len);
    path[len] = 0;
    out[0] = c->image ? load_image(ctx, c, path, st) : read_file(path, c->max_length, st);
    tfc_free(path);
    if (!out[0]) return false;
    if (c->mode != LABELS_NONE && !(out[1] = encode_label(c, in[1], st))) return false;
    return true;
}

/* paths_and_labels_to_dataset, then Keras's shuffle / batch / prefetch. Takes nothing; cfg is copied. */
static tfc_dataset *build_dataset(char **paths, const int32_t *labels, int64_t n, const load_cfg *cfg,
                                  const dir_args *a, tfc_status *st) {
    load_cfg *c = tfc_malloc(sizeof *c);
    if (!c) {
        tfc_status_oom(st, "dataset", sizeof *c);
        return NULL;
    }
    *c = *cfg;
    bool with_labels = c->mode != LABELS_NONE;
    tfc_tensor *comps[2] = {tfc_tensor_from_strings((const char *const *)paths, NULL, &n, 1, st), NULL};
    if (comps[0] && with_labels) comps[1] = tfc_tensor_from_data(TFC_INT32, &n, 1, labels, (size_t)n * 4, st);
    tfc_dataset *ds = NULL;
    if (comps[0] && (!with_labels || comps[1]))
        ds = tfc_dataset_from_tensor_slices(comps, with_labels ? 2 : 1, with_labels ? "(.,.)" : ".", st);
    tfc_tensor_unref(comps[0]);
    tfc_tensor_unref(comps[1]);
    if (!ds) {
        tfc_free(c);
        return NULL;
    }
    tfc_tensor_spec spec[2] = {{0}};
    if (c->image) {
        spec[0].dtype = c->nearest ? TFC_UINT8 : TFC_FLOAT;
        spec[0].shape = (tfc_shape){.rank = 3, .dims = {c->height, c->width, c->channels}};
    } else {
        spec[0].dtype = TFC_STRING;
        spec[0].shape = (tfc_shape){.rank = 0};
    }
    if (c->mode == LABELS_INT) {
        spec[1] = (tfc_tensor_spec){.dtype = TFC_INT32, .shape = {.rank = 0}};
    } else if (with_labels) {
        spec[1] = (tfc_tensor_spec){.dtype = TFC_FLOAT,
                                    .shape = {.rank = 1, .dims = {c->mode == LABELS_BINARY ? 1 : c->num_classes}}};
    }
    tfc_map_opts mo = {.num_parallel_calls = TFC_AUTOTUNE, .output_structure = with_labels ? "(.,.)" : ".",
                       .output_spec = spec, .user_free = tfc_free};
    ds = tfc_dataset_map(ds, load_element, c, &mo, st);
    bool batched = a->batch_size != TFC_UNBATCHED;
    tfc_shuffle_opts so = {.seed = a->seed, .has_seed = true};
    int64_t buffer = batched ? a->batch_size * 8 : 1024;
    /* c belongs to the map now (freed if it failed): read cfg below */
    if (!cfg->image) ds = tfc_dataset_prefetch(ds, TFC_AUTOTUNE, st); /* text prefetches before shuffling */
    if (a->shuffle) ds = tfc_dataset_shuffle(ds, buffer, &so, st);
    if (batched) ds = tfc_dataset_batch(ds, a->batch_size, NULL, st);
    if (cfg->image) ds = tfc_dataset_prefetch(ds, TFC_AUTOTUNE, st);
    return ds;
}

static char **copy_strs(char *const *v, int64_t n) {
    char **out = tfc_calloc((size_t)(n ? n : 1), sizeof *out);
    if (!out) return NULL;
    for (int64_t i = 0; i < n; i++)
        if (!(out[i] = tfc_strdup(v[i]))) {
            for (int64_t j = 0; j < i; j++) tfc_free(out[j]);
            tfc_free(out);
            return NULL;
        }
    return out;
}

static int32_t *copy_i32(const int32_t *v, int64_t n) {
    int32_t *out = tfc_malloc((size_t)(n ? n : 1) * sizeof *out);
    if (out && n) memcpy(out, v, (size_t)n * sizeof *out);
    return out;
}

void tfc_directory_dataset_info_free(tfc_directory_dataset_info *info) {
    if (!info) return;
    for (int i = 0; info->class_names && i < info->num_classes; i++) tfc_free(info->class_names[i]);
    tfc_free(info->class_names);
    for (int64_t i = 0; info->file_paths && i < info->num_files; i++) tfc_free(info->file_paths[i]);
    tfc_free(info->file_paths);
    tfc_free(info->labels);
    tfc_dataset_unref(info->validation);
    for (int64_t i = 0; info->validation_file_paths && i < info->num_validation_files; i++)
        tfc_free(info->validation_file_paths[i]);
    tfc_free(info->validation_file_paths);
    tfc_free(info->validation_labels);
    memset(info, 0, sizeof *info);
}

/* Fills the part of info that describes one subset. */
static bool info_set(char ***paths_out, int32_t **labels_out, int64_t *n_out, char *const *paths,
                     const int32_t *labels, int64_t n, tfc_status *st) {
    if ((*paths_out = copy_strs(paths, n))) *n_out = n;
    *labels_out = copy_i32(labels, n);
    if (!*paths_out || !*labels_out) return tfc_status_oom(st, "file paths", (size_t)n * 16);
    return true;
}

/* A seed as numpy's np.random.randint(1e6) would draw when none is given. */
static int64_t random_seed(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 32);
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    return (int64_t)(x % 1000000u);
}

/* The common body of both utilities after their own argument checks. */
static tfc_dataset *from_directory(const char *directory, const dir_args *a, load_cfg *cfg,
                                   tfc_directory_dataset_info *info, tfc_status *st) {
    if (a->subset && !strcmp(a->subset, "both") && !info) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "subset \"both\" returns the validation dataset in info: pass one");
        return NULL;
    }
    bool inferred = cfg->mode != LABELS_NONE && !a->label_values;
    int64_t seed = a->has_seed ? a->seed : random_seed();
    if (a->shuffle && (seed < 0 || seed > (int64_t)0xffffffffu)) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Seed must be between 0 and 2**32 - 1 (seed %lld)", (long long)seed);
        return NULL;
    }
    keras_index_opts io = {.inferred = inferred,
                           .label_values = cfg->mode != LABELS_NONE ? a->label_values : NULL,
                           .num_label_values = a->num_label_values,
                           .class_names = a->class_names,
                           .num_class_names = a->num_class_names,
                           .formats = cfg->image ? image_formats : text_formats,
                           .shuffle = a->shuffle,
                           .seed = (uint32_t)seed,
                           .verbose = a->verbose};
    keras_file_index ix;
    if (!keras_index_directory(directory, &io, &ix, st)) return NULL;
    tfc_dataset *ds = NULL, *val = NULL;
    char buf[192];
    if (cfg->mode == LABELS_BINARY && ix.num_classes != 2) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT,
                       "When passing `label_mode=\"binary\"`, there must be exactly 2 class_names. Received: "
                       "class_names=%s",
                       keras_py_list_repr((const char *const *)ix.class_names, ix.num_classes, buf, sizeof buf));
        goto done;
    }
    cfg->num_classes = ix.num_classes;
    /* get_training_or_validation_split: samples[:-k] / samples[-k:] with k = int(split * n), so k = 0 gives an
     * empty training subset and a validation subset of everything, as Keras. */
    int64_t k = a->validation_split != 0 ? (int64_t)(a->validation_split * (double)ix.n) : 0;
    int64_t t0 = 0, tn = ix.n, v0 = 0, vn = 0;
    bool both = a->subset && !strcmp(a->subset, "both");
    if (a->validation_split != 0) {
        tn = k ? ix.n - k : 0;
        v0 = k ? ix.n - k : 0;
        vn = ix.n - v0;
        bool train = both || !strcmp(a->subset, "training");
        if (a->verbose) {
            if (train) printf("Using %lld files for training.\n", (long long)(ix.n - k));
            if (!train || both) printf("Using %lld files for validation.\n", (long long)k);
            fflush(stdout);
        }
        if (!train) {
            t0 = v0;
            tn = vn;
        }
    }
    const char *what = cfg->image ? "images" : "text files";
    const char *allowed = cfg->image ? "Allowed formats: " IMAGE_FORMATS_STR : "Allowed format: .txt";
    if (both && !tn) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "No training %s found in directory %s. %s", what, directory, allowed);
        goto done;
    }
    if (both && !vn) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "No validation %s found in directory %s. %s", what, directory,
                       allowed);
        goto done;
    }
    if (!tn) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "No %s found in directory %s. %s", what, directory, allowed);
        goto done;
    }
    if (!(ds = build_dataset(ix.paths + t0, ix.labels + t0, tn, cfg, a, st))) goto done;
    if (both && !(val = build_dataset(ix.paths + v0, ix.labels + v0, vn, cfg,
                                      &(dir_args){.batch_size = a->batch_size, .shuffle = false}, st)))
        goto fail;
    if (info) {
        memset(info, 0, sizeof *info);
        info->class_names = ix.class_names;
        info->num_classes = ix.num_classes;
        ix.class_names = NULL;
        ix.num_classes = 0;
        info->validation = val;
        val = NULL;
        if (!info_set(&info->file_paths, &info->labels, &info->num_files, ix.paths + t0, ix.labels + t0, tn, st) ||
            (both && !info_set(&info->validation_file_paths, &info->validation_labels, &info->num_validation_files,
                               ix.paths + v0, ix.labels + v0, vn, st))) {
            tfc_directory_dataset_info_free(info);
            goto fail;
        }
    }
    goto done;
fail:
    tfc_dataset_unref(ds);
    ds = NULL;
done:
    tfc_dataset_unref(val);
    keras_file_index_free(&ix);
    return ds;
}

/* Keras's checks shared by both utilities, in its order; sets *mode. */
static bool check_common(const dir_args *a, label_mode *mode, bool image, tfc_status *st) {
    const char *kind = image ? "image" : "text";
    bool explicit_labels = a->label_values != NULL;
    if (!explicit_labels && a->labels && strcmp(a->labels, "inferred") && strcmp(a->labels, "none"))
        return tfc_status_set(
            st, TFC_INVALID_ARGUMENT,
            "`labels` argument should be a list/tuple of integer labels, of the same size as the "
            "number of %s files in the target directory. If you wish to infer the labels from the "
            "subdirectory names in the target directory, pass `labels=\"inferred\"`. If you wish to "
            "get a dataset that only contains %s (no labels), pass `labels=None`. Received: labels=%s",
            kind, image ? "images" : "text samples", a->labels);
    if (explicit_labels && a->num_class_names > 0) {
        char lb[96], cb[96];
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "You can only pass `class_names` if `labels=\"inferred\"`. Received: labels=%s, and "
                              "class_names=%s",
                              keras_int_list_repr(a->label_values, a->num_label_values, lb, sizeof lb),
                              keras_py_list_repr(a->class_names, a->num_class_names, cb, sizeof cb));
    }
    if (explicit_labels && a->num_label_values < 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "num_label_values must be >= 0, got %lld",
                              (long long)a->num_label_values);
    const char *lm = a->label_mode;
    if (!lm || !strcmp(lm, "int"))
        *mode = LABELS_INT;
    else if (!strcmp(lm, "categorical"))
        *mode = LABELS_CATEGORICAL;
    else if (!strcmp(lm, "binary"))
        *mode = LABELS_BINARY;
    else if (!strcmp(lm, "none"))
        *mode = LABELS_NONE;
    else
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "`label_mode` argument must be one of \"int\", \"categorical\", \"binary\", or None. "
                              "Received: label_mode=%s",
                              lm);
    if (!explicit_labels && a->labels && !strcmp(a->labels, "none")) *mode = LABELS_NONE;
    if (a->num_class_names < 0 || (a->num_class_names > 0 && !a->class_names))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "num_class_names %d without class_names", a->num_class_names);
    for (int i = 0; i < a->num_class_names; i++)
        if (!a->class_names[i]) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "class_names[%d] is NULL", i);
    return true;
}

/* check_validation_split_arg, then tfc's own range checks. */
static bool check_split(const dir_args *a, tfc_status *st) {
    double vs = a->validation_split;
    char fb[40];
    if (vs != 0 && !(vs > 0 && vs < 1))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "`validation_split` must be between 0 and 1, received: %s",
                              py_float(vs, fb, sizeof fb));
    if ((vs != 0 || a->subset) && !(vs != 0 && a->subset))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "If `subset` is set, `validation_split` must be set, and inversely.");
    if (a->subset && strcmp(a->subset, "training") && strcmp(a->subset, "validation") && strcmp(a->subset, "both"))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "`subset` must be either \"training\", \"validation\" or \"both\", received: %s",
                              a->subset);
    if (vs != 0 && a->shuffle && !a->has_seed)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "If using `validation_split` and shuffling the data, you must provide a `seed` argument, "
                              "to make sure that there is no overlap between the training and validation subset.");
    if (a->batch_size < 1 && a->batch_size != TFC_UNBATCHED)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "batch_size must be positive or TFC_UNBATCHED, got %lld",
                              (long long)a->batch_size);
    if (a->batch_size > INT64_MAX / 8)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "batch_size %lld is too large", (long long)a->batch_size);
    return true;
}

/* The label, batching, shuffling and split options that tfc_image_dataset_opts and tfc_text_dataset_opts share
 * (same field names), with Keras's defaults: batch_size 32, shuffle and verbose true. */
#define DIR_ARGS(o)                                                                                                \
    ((dir_args){.labels = (o)->labels,                                                                             \
                .label_values = (o)->label_values,                                                                 \
                .num_label_values = (o)->num_label_values,                                                         \
                .label_mode = (o)->label_mode,                                                                     \
                .class_names = (o)->class_names,                                                                   \
                .num_class_names = (o)->num_class_names,                                                           \
                .batch_size = (o)->batch_size ? (o)->batch_size : 32,                                              \
                .shuffle = TFC_FLAG((o)->shuffle, true),                                                           \
                .seed = (o)->seed,                                                                                 \
                .has_seed = (o)->has_seed,                                                                         \
                .validation_split = (o)->validation_split,                                                         \
                .subset = (o)->subset,                                                                             \
                .verbose = TFC_FLAG((o)->verbose, true)})

static bool check_directory(const char *directory, tfc_status *st) {
    if (!directory) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "directory is NULL");
    return true;
}

tfc_dataset *tfc_image_dataset_from_directory(const char *directory, const tfc_image_dataset_opts *opts,
                                              tfc_directory_dataset_info *info, tfc_status *st) {
    static const tfc_image_dataset_opts defaults = {0};
    const tfc_image_dataset_opts *o = opts ? opts : &defaults;
    if (info) memset(info, 0, sizeof *info);
    dir_args a = DIR_ARGS(o);
    load_cfg cfg = {.image = true, .crop = TFC_FLAG(o->crop_to_aspect_ratio, false)};
    if (!check_directory(directory, st) || !check_common(&a, &cfg.mode, true, st)) return NULL;
    const char *cm = o->color_mode ? o->color_mode : "rgb";
    if (!strcmp(cm, "rgb"))
        cfg.channels = 3;
    else if (!strcmp(cm, "rgba"))
        cfg.channels = 4;
    else if (!strcmp(cm, "grayscale"))
        cfg.channels = 1;
    else {
        tfc_status_set(st, TFC_INVALID_ARGUMENT,
                       "`color_mode` must be one of {\"rgb\", \"rgba\", \"grayscale\"}. Received: color_mode=%s", cm);
        return NULL;
    }
    const char *interp = o->interpolation ? o->interpolation : "bilinear";
    static const char *const later[] = {"bicubic", "area", "lanczos3", "lanczos5", "gaussian", "mitchellcubic"};
    if (ieq(interp, "bilinear") || ieq(interp, "nearest")) {
        cfg.nearest = ieq(interp, "nearest");
    } else {
        for (size_t i = 0; i < sizeof later / sizeof *later; i++)
            if (ieq(interp, later[i])) {
                tfc_status_set(st, TFC_UNIMPLEMENTED,
                               "image_dataset_from_directory: interpolation \"%s\" is not implemented in tfc yet "
                               "(supported: \"bilinear\", \"nearest\")",
                               interp);
                return NULL;
            }
        tfc_status_set(st, TFC_INVALID_ARGUMENT,
                       "Value not recognized for `interpolation`: %s. Supported values are: dict_keys(['bilinear', "
                       "'nearest', 'bicubic', 'area', 'lanczos3', 'lanczos5', 'gaussian', 'mitchellcubic'])",
                       interp);
        return NULL;
    }
    if (!check_split(&a, st)) return NULL;
    cfg.height = o->image_size[0] ? o->image_size[0] : 256;
    cfg.width = o->image_size[1] ? o->image_size[1] : 256;
    if (cfg.height < 1 || cfg.width < 1 || cfg.height > INT32_MAX || cfg.width > INT32_MAX) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "image_size must be positive, got (%lld, %lld)",
                       (long long)o->image_size[0], (long long)o->image_size[1]);
        return NULL;
    }
    return from_directory(directory, &a, &cfg, info, st);
}

tfc_dataset *tfc_text_dataset_from_directory(const char *directory, const tfc_text_dataset_opts *opts,
                                             tfc_directory_dataset_info *info, tfc_status *st) {
    static const tfc_text_dataset_opts defaults = {0};
    const tfc_text_dataset_opts *o = opts ? opts : &defaults;
    if (info) memset(info, 0, sizeof *info);
    dir_args a = DIR_ARGS(o);
    load_cfg cfg = {.image = false, .max_length = o->max_length};
    if (!check_directory(directory, st) || !check_common(&a, &cfg.mode, false, st) || !check_split(&a, st))
        return NULL;
    if (o->max_length < 0) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "max_length must be >= 0 (0 = no limit), got %lld",
                       (long long)o->max_length);
        return NULL;
    }
    return from_directory(directory, &a, &cfg, info, st);
}
