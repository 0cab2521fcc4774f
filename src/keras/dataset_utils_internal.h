/* Internals of Keras's dataset utilities (src/keras/dataset_utils.c, dataset_index.c): the directory index
 * (tf_keras's dataset_utils.index_directory) and numpy's legacy RandomState shuffle. */
#ifndef TFC_KERAS_DATASET_UTILS_INTERNAL_H
#define TFC_KERAS_DATASET_UTILS_INTERNAL_H

#include "tfc/keras/dataset_utils.h"

/* numpy.random.RandomState's MT19937 (legacy seeding by an integer). */
typedef struct np_mt19937 {
    uint32_t key[624];
    int pos;
} np_mt19937;

void np_mt19937_seed(np_mt19937 *s, uint32_t seed);
uint32_t np_mt19937_next32(np_mt19937 *s);
/* numpy's random_interval(max): uniform in [0, max] by masked rejection sampling. */
uint64_t np_random_interval(np_mt19937 *s, uint64_t max);
/* perm[i] = i, then RandomState(seed).shuffle(perm): after it, element i of a list shuffled by numpy with this
 * seed is the original element perm[i]. */
void np_shuffle_permutation(uint32_t seed, int64_t *perm, int64_t n);

/* The listing of a directory as index_directory returns it. */
typedef struct keras_file_index {
    char **paths;         /* directory joined with each file's path below it */
    int32_t *labels;
    int64_t n;
    char **class_names;
    int num_classes;
} keras_file_index;

typedef struct keras_index_opts {
    bool inferred;                    /* labels="inferred" */
    const int32_t *label_values;      /* explicit labels (not inferred); NULL: labels=None */
    int64_t num_label_values;
    const char *const *class_names;
    int num_class_names;
    const char *const *formats;       /* lowercase extensions with their dot, NULL-terminated */
    bool shuffle;
    uint32_t seed;
    bool verbose;
} keras_index_opts;

/* index_directory: lists, labels, prints Keras's "Found ..." message, and shuffles. */
bool keras_index_directory(const char *directory, const keras_index_opts *o, keras_file_index *out, tfc_status *st);
void keras_file_index_free(keras_file_index *ix);

/* Python's repr of a list of strings, ['a', 'b'], into buf (truncated); returns buf. */
char *keras_py_list_repr(const char *const *strs, int n, char *buf, size_t size);
/* Python's repr of a list of ints, [0, 2], into buf (truncated); returns buf. */
char *keras_int_list_repr(const int32_t *v, int64_t n, char *buf, size_t size);

#endif
