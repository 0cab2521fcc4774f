/* The snapshot reader of Dataset.load / Dataset.snapshot (src/data/snapshot_format.c). The first byte picks what
 * the rest is: 0 a snapshot.metadata file, 1 a dataset_spec.pb file (serialised StructuredValue), 2..3 a chunk file
 * (uncompressed / GZIP) of a snapshot whose metadata declares the components chosen by the second byte, read with
 * Dataset.load to the end. */
#include "fuzz_util.h"

#include "data/snapshot_internal.h"
#include "platform/files.h"

static char root[256];

static void remove_root(void) {
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", root);
}

/* <root>/snapshot.metadata for n components of the given dtypes, finalized, run "1", num_elements -1 (unknown,
 * so the count is not checked and every record of the chunk is read). */
static bool setup(const tfc_dtype *dts, int n) {
    if (!root[0]) {
        const char *d = getenv("TMPDIR");
        snprintf(root, sizeof root, "%s/tfc_fuzz_snapshot_%d", d && *d ? d : "/tmp", (int)getpid());
        atexit(remove_root);
    }
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor_spec specs[4];
    for (int i = 0; i < n; i++) specs[i] = (tfc_tensor_spec){dts[i], {.rank = -1}};
    data_spec sp;
    if (!data_spec_init(&sp, NULL, n, specs, &st)) return false;
    char shard[320];
    snprintf(shard, sizeof shard, "%s/1/00000000.shard", root);
    bool ok = snap_meta_write(root, "1", "", &sp, -1, true, &st) && tfc_make_dirs(shard, "fuzz", &st);
    data_spec_free(&sp);
    return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_ctx();
    if (size < 2) return 0;
    tfc_status st = TFC_STATUS_INIT;
    int mode = data[0] % 4;
    if (mode == 0) {
        snap_meta m;
        if (snap_meta_parse(data + 1, size - 1, "snapshot.metadata", &m, &st)) snap_meta_free(&m);
        return 0;
    }
    if (mode == 1) {
        data_spec sp;
        if (snap_spec_decode(data + 1, size - 1, "dataset_spec.pb", &sp, &st)) data_spec_free(&sp);
        return 0;
    }
    static const tfc_dtype pick[8] = {TFC_FLOAT, TFC_INT64, TFC_STRING, TFC_INT32,
                                      TFC_UINT8, TFC_BOOL,  TFC_DOUBLE, TFC_HALF};
    int n = 1 + (data[1] >> 6) % 3;
    tfc_dtype dts[3] = {pick[data[1] & 7], pick[(data[1] >> 3) & 7], TFC_STRING};
    static int made = -1;
    if (made != data[1]) { /* the metadata only changes with the second byte */
        if (!setup(dts, n)) return 0;
        made = data[1];
    }
    char chunk[400];
    snprintf(chunk, sizeof chunk, "%s/1/00000000.shard/00000000.snapshot", root);
    FILE *f = fopen(chunk, "wb");
    if (!f) return 0;
    bool ok = fwrite(data + 2, 1, size - 2, f) == size - 2;
    if (fclose(f) != 0 || !ok) return 0;
    tfc_load_opts o = {.compression = mode == 3 ? "GZIP" : NULL, .structure = n == 1 ? "." : n == 2 ? "(.,.)" : "(.,.,.)"};
    tfc_dataset *ds = tfc_dataset_load(root, &o, &st);
    tfc_iterator *it = ds ? tfc_iterator_new(ds, &st) : NULL;
    for (int i = 0; it && i < 10000; i++) {
        tfc_tensor *out[3] = {0};
        tfc_status e = TFC_STATUS_INIT;
        if (!tfc_iterator_next(it, out, 3, &e)) {
            if (e.code == TFC_OUT_OF_RANGE) break;
            continue;
        }
        for (int k = 0; k < n; k++) tfc_tensor_unref(out[k]);
    }
    tfc_iterator_free(it);
    tfc_dataset_unref(ds);
    return 0;
}
