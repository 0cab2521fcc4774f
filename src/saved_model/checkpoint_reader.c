/* tf.train.load_checkpoint's CheckpointReader over the bundle reader. */
#define _POSIX_C_SOURCE 200809L
#include <string.h>
#include <sys/stat.h>

#include "saved_model/bundle.h"
#include "saved_model/checkpoint_internal.h"

struct tfc_checkpoint_reader {
    tfc_bundle_reader *bundle;
};

tfc_checkpoint_reader *tfc_checkpoint_reader_new(const char *ckpt_dir_or_file, tfc_status *st) {
    char latest[4096];
    const char *prefix = ckpt_dir_or_file;
    struct stat sb;
    if (stat(ckpt_dir_or_file, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        if (!tfc_latest_checkpoint(ckpt_dir_or_file, latest, sizeof latest, st)) {
            if (st->code == TFC_NOT_FOUND)
                tfc_status_set(st, TFC_NOT_FOUND, "Couldn't find 'checkpoint' file or checkpoints in given directory %s",
                               ckpt_dir_or_file);
            return NULL;
        }
        prefix = latest;
    }
    tfc_checkpoint_reader *r = tfc_calloc(1, sizeof *r);
    if (!r) {
        tfc_status_oom(st, "checkpoint reader", sizeof *r);
        return NULL;
    }
    if (!(r->bundle = tfc_bundle_open(prefix, st))) {
        tfc_free(r);
        return NULL;
    }
    return r;
}

void tfc_checkpoint_reader_free(tfc_checkpoint_reader *r) {
    if (!r) return;
    tfc_bundle_close(r->bundle);
    tfc_free(r);
}

int64_t tfc_checkpoint_reader_size(const tfc_checkpoint_reader *r) { return (int64_t)tfc_bundle_num_entries(r->bundle); }

const char *tfc_checkpoint_reader_name(const tfc_checkpoint_reader *r, int64_t i) {
    const tfc_bundle_entry *e = i >= 0 ? tfc_bundle_entry_at(r->bundle, (size_t)i) : NULL;
    return e ? e->key : NULL;
}

bool tfc_checkpoint_reader_has_tensor(const tfc_checkpoint_reader *r, const char *name) {
    return tfc_bundle_find(r->bundle, name) != NULL;
}

bool tfc_checkpoint_reader_info(const tfc_checkpoint_reader *r, const char *name, int *dtype, tfc_shape *shape,
                                tfc_status *st) {
    const tfc_bundle_entry *e = tfc_bundle_find(r->bundle, name);
    if (!e) return tfc_status_set(st, TFC_NOT_FOUND, "Key %s not found in checkpoint", name);
    if (dtype) *dtype = e->dtype;
    if (shape) *shape = e->shape;
    tfc_status_clear(st);
    return true;
}

tfc_tensor *tfc_checkpoint_reader_get_tensor(tfc_checkpoint_reader *r, const char *name, tfc_status *st) {
    return tfc_bundle_read(r->bundle, name, st);
}
