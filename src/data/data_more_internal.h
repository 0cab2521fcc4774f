/* Internal: pieces shared by the file sources of include/tfc/data_more.h (src/data/fixed_length.c, csv.c) and
 * TextLineDataset (files.c). */
#ifndef TFC_DATA_MORE_INTERNAL_H
#define TFC_DATA_MORE_INTERNAL_H

#include "data/data_internal.h"

/* Opens the next file named by the filenames iterator: *path (owned, tfc_free) and *s, or *end when there are no
 * more names. Errors name the source (what) and the file. */
bool data_open_next_file(data_iter *files, const char *what, const char *compression, int64_t buffer_size,
                         char **path, data_stream **s, bool *end, tfc_status *st);
/* Validates reader options and a filenames dataset of string scalars for the source `what` (src/data/tfrecord.c). */
bool data_check_reader(tfc_dataset *files, const tfc_reader_opts *o, const char *what, tfc_status *st);

#endif
