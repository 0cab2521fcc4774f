/* tfc — Keras's dataset utilities: tf.keras.utils.image_dataset_from_directory and text_dataset_from_directory
 * (TF 2.4: tf.keras.preprocessing.image_dataset_from_directory / text_dataset_from_directory). Each lists the
 * files under a directory as Keras does, labels them by their class sub-folder, and returns a tf.data dataset
 * (include/tfc/data.h) that reads them in a parallel map.
 *
 * FILE ORDER, as tf_keras's dataset_utils.index_directory:
 *   - labels inferred: the class names are the sub-folders of `directory` (symlinks to folders included; names
 *     starting with "." skipped), sorted by bytes (Python's str order). Each class folder is walked
 *     recursively; the folders found are sorted by their path, and the files of each folder by name; a file is
 *     kept when its lowercased name ends with an allowed extension. Classes follow one another in sorted folder
 *     order (also when class_names gives another label order).
 *   - labels not inferred: the same walk over `directory` itself (hidden folders included, as Keras).
 *   - file paths are `directory` joined with the path below it (os.path.join: no "/" added after a
 *     trailing "/").
 *   - shuffle: the list is then shuffled by numpy's RandomState(seed).shuffle (MT19937 and numpy's legacy
 *     Fisher-Yates), exactly as Keras, so validation_split picks the same files: the last
 *     int(validation_split * n) files are the validation subset, the others the training subset.
 *   - Symbolic links to folders are followed whatever follow_links says: tf_keras (2.5 and later) and Keras 3
 *     walk with tf.io.gfile.walk, which follows them too. A link back to a folder being walked is skipped
 *     (Keras would recurse until the path is too long).
 * The dataset then applies Keras's own pipeline: with shuffle, Dataset.shuffle(8 * batch_size, seed) before
 * batching (1024 when unbatched), then batch and prefetch(AUTOTUNE) (text: prefetch, shuffle, batch). That
 * shuffle buffer is tfc's (tf.data's algorithm, tfc's random numbers), so the element order after it is not
 * TensorFlow's; the file list and the split are.
 *
 * MESSAGES. As Keras, "Found N files belonging to M classes." and, with a validation split, "Using K files for
 * training." / "Using K files for validation." are printed on stdout (verbose = TFC_NO silences them).
 *
 * OWNERSHIP. The returned dataset holds one reference (tfc_dataset_unref). info (may be NULL) receives Keras's
 * dataset attributes (class_names, file_paths) and must be released with tfc_directory_dataset_info_free.
 *
 * ERRORS (Keras's ValueError messages as INVALID_ARGUMENT):
 *   NOT_FOUND         "Could not find directory <dir>" (labels inferred and the directory does not exist)
 *   INVALID_ARGUMENT  bad label_mode, color_mode, subset, validation_split (not in (0, 1), without subset or
 *                     the inverse, with shuffle but no seed), image_size, batch_size or max_length;
 *                     class_names with labels not inferred, or not matching the sub-folders; explicit labels
 *                     whose count is not the number of files; label_mode "binary" without exactly 2 classes;
 *                     no files found ("No images found in directory <dir>. Allowed formats: (...)"); a seed
 *                     outside [0, 2**32 - 1] when shuffling (numpy's limit)
 *   UNIMPLEMENTED     interpolation "bicubic", "area", "lanczos3", "lanczos5", "gaussian", "mitchellcubic"
 *                     (tfc has no kernel for them yet); an unknown name is INVALID_ARGUMENT
 *   RESOURCE_EXHAUSTED out of memory
 * Errors of one element surface from tfc_iterator_next, naming the file: a file that cannot be read (NOT_FOUND,
 * PERMISSION_DENIED, ...: "<path>; No such file or directory", as tf.io.read_file) or decoded ("Cannot decode
 * image <path>: <decoder's message>", with the decoder's code: INVALID_ARGUMENT for corrupt data, UNIMPLEMENTED
 * for what tfc's DecodeImage does not decode yet, such as GIF). The iterator then goes on with the next element,
 * so tfc_dataset_ignore_errors skips bad files. */
#ifndef TFC_KERAS_DATASET_UTILS_H
#define TFC_KERAS_DATASET_UTILS_H

#include "tfc/data.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TFC_UNBATCHED (-1) /* batch_size=None: the dataset yields single elements */

/* image_dataset_from_directory's arguments; a zeroed struct (or NULL) means Keras's defaults. */
typedef struct tfc_image_dataset_opts {
    const char *labels;               /* NULL or "inferred": from the class sub-folders; "none": no labels
                                         (labels=None) */
    const int32_t *label_values;      /* labels=[...]: one integer label per file, in the unshuffled file order;
                                         class_names become the sorted distinct values (as decimal strings) */
    int64_t num_label_values;
    const char *label_mode;           /* NULL or "int": int32 scalars; "categorical": float32 one-hot vectors
                                         [num_classes]; "binary": float32 [1] (2 classes); "none": no labels */
    const char *const *class_names;   /* explicit class order (labels inferred): must name the sub-folders */
    int num_class_names;
    const char *color_mode;           /* NULL or "rgb": 3 channels; "grayscale": 1; "rgba": 4 */
    int64_t batch_size;               /* 0 = 32; TFC_UNBATCHED: no batching */
    int64_t image_size[2];            /* {height, width}; {0, 0} = {256, 256} */
    tfc_flag shuffle;                 /* default yes; no: files in the order above */
    int64_t seed;                     /* used when has_seed; otherwise a random seed in [0, 10**6), as Keras */
    bool has_seed;
    double validation_split;          /* 0 = none; else in (0, 1) with subset */
    const char *subset;               /* NULL, "training", "validation", or "both" (training returned,
                                         validation in info->validation, info required) */
    const char *interpolation;        /* NULL or "bilinear" (float32 output); "nearest" (uint8 output, as
                                         tf.image.resize); case-insensitive */
    tfc_flag follow_links;            /* accepted for Keras compatibility; see FILE ORDER */
    tfc_flag crop_to_aspect_ratio;    /* default no; yes: Keras's smart_resize (centre crop to the target
                                         aspect ratio, then resize) */
    tfc_flag verbose;                 /* default yes: Keras's messages on stdout */
} tfc_image_dataset_opts;

/* text_dataset_from_directory's arguments; a zeroed struct (or NULL) means Keras's defaults. The fields mean
 * what they mean for images. */
typedef struct tfc_text_dataset_opts {
    const char *labels;
    const int32_t *label_values;
    int64_t num_label_values;
    const char *label_mode;
    const char *const *class_names;
    int num_class_names;
    int64_t batch_size;               /* 0 = 32; TFC_UNBATCHED: no batching */
    int64_t max_length;               /* 0 = None; n > 0: texts truncated to their first n bytes */
    tfc_flag shuffle;
    int64_t seed;
    bool has_seed;
    double validation_split;
    const char *subset;
    tfc_flag follow_links;
    tfc_flag verbose;
} tfc_text_dataset_opts;

/* The attributes Keras sets on the returned dataset, and the files behind it. */
typedef struct tfc_directory_dataset_info {
    char **class_names;               /* dataset.class_names: label i is class_names[i] */
    int num_classes;
    char **file_paths;                /* dataset.file_paths: the files of the dataset, in the order they enter
                                         its shuffle buffer (after Keras's seeded shuffle and split) */
    int32_t *labels;                  /* the integer label of each file (0 without labels) */
    int64_t num_files;
    tfc_dataset *validation;          /* subset "both": the validation dataset (one reference, freed by
                                         tfc_directory_dataset_info_free unless taken and set to NULL) */
    char **validation_file_paths;     /* subset "both": its files and labels */
    int32_t *validation_labels;
    int64_t num_validation_files;
} tfc_directory_dataset_info;

/* tf.keras.utils.image_dataset_from_directory(directory, ...). Supported files: .bmp .gif .jpeg .jpg .png (by
 * extension, as Keras; decoded by content with DecodeImage, expand_animations=False), resized to image_size
 * with tf.image.resize (half-pixel centres). Elements, batched along a new dim 0 unless TFC_UNBATCHED:
 *   images  float32 [height, width, channels] (uint8 for "nearest")
 *   labels  int32 [] ("int"), float32 [num_classes] ("categorical"), float32 [1] ("binary")
 * structure "(.,.)" (images, labels), or "." without labels. */
TFC_API tfc_dataset *tfc_image_dataset_from_directory(const char *directory, const tfc_image_dataset_opts *opts,
                                                      tfc_directory_dataset_info *info, tfc_status *st);

/* tf.keras.utils.text_dataset_from_directory(directory, ...): the .txt files; elements (string [] text,
 * labels) batched as above, or "." (the texts) without labels. */
TFC_API tfc_dataset *tfc_text_dataset_from_directory(const char *directory, const tfc_text_dataset_opts *opts,
                                                     tfc_directory_dataset_info *info, tfc_status *st);

/* Frees what info holds (NULL-safe) and zeroes it. */
TFC_API void tfc_directory_dataset_info_free(tfc_directory_dataset_info *info);

#ifdef __cplusplus
}
#endif
#endif
