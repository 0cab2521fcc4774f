/* data_pipeline: the tf.data issue's input pipeline, TFRecord of PNG-encoded Fashion-MNIST images -> parse
 * (tf.train.Example) -> DecodePng -> ResizeBilinear to 32x32 (half-pixel centres) -> scale to [0, 1] ->
 * shuffle(1024) -> batch(128) -> prefetch(AUTOTUNE). One iteration is one epoch over PIPELINE_IMAGES records.
 *
 * The same work and the same parallelism on both sides (bench_data.py is TensorFlow's side):
 *   - one file: tfc writes the TFRecord (tfc_tfrecord_writer, EncodePng and a hand-encoded Example) into the
 *     work folder; tf.data reads the same file;
 *   - the same ops per record: ParseExampleV2 (dense "image" string and "label" int64, as
 *     tf.io.parse_single_example), DecodePng(channels=1), ResizeBilinear(half_pixel_centers=true, uint8 in,
 *     float32 out, as tf.image.resize), Mul by 1/255; the map function's constant tensors (keys, defaults, size,
 *     scale) are made once, as they are constants of TensorFlow's traced function. Both sides report a checksum
 *     of one epoch (the sum of every pixel and label, which does not depend on the order), and the driver
 *     compares them;
 *   - "threads = N": tf.data's Options.threading.private_threadpool_size = N, on which the map function runs,
 *     with num_parallel_calls = AUTOTUNE, whose parallelism TensorFlow caps at that pool's size; tfc's
 *     tfc_data_options.private_threadpool_size = N, its map stage running at most N calls at once (AUTOTUNE).
 *     max_intra_op_parallelism = 1 on both: the ops inside the function run on the thread that calls it. Besides
 *     the N function threads, tf.data runs the map's input reads on a runner thread of its own and prefetch on
 *     a background thread; tfc's map workers read their input themselves (under a lock, in order) and prefetch
 *     has one background thread; the consumer is the calling thread on both sides. TensorFlow's intra- and
 *     inter-op pools (N threads each) are idle here.
 * Peak memory (peak_mem_data_pipeline): bench_peak_mem_data runs PEAK_EPOCHS epochs in a fresh process, whose
 * ru_maxrss the driver compares with TensorFlow's doing the same (peers.py peak-mem).
 *
 * The tf.data API and the parsing ops are referenced weakly and every op is looked up at run time, so the
 * workload reports what is missing ("not yet available") when libtfc lacks it. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "tfc/data.h"
#include "tfc/data_graph.h"
#include "tfc/data_service.h"
#include "tfc/keras/datasets.h"

#pragma weak tfc_dataset_from_strings
#pragma weak tfc_dataset_tfrecord
#pragma weak tfc_dataset_map
#pragma weak tfc_dataset_shuffle
#pragma weak tfc_dataset_batch
#pragma weak tfc_dataset_prefetch
#pragma weak tfc_dataset_with_options
#pragma weak tfc_dataset_unref
#pragma weak tfc_iterator_new
#pragma weak tfc_iterator_next
#pragma weak tfc_iterator_free
#pragma weak tfc_tfrecord_writer_new
#pragma weak tfc_tfrecord_writer_write
#pragma weak tfc_tfrecord_writer_close
#pragma weak tfc_datasets_fashion_mnist_load
#pragma weak tfc_datasets_free
#pragma weak tfc_data_register_map_fn
#pragma weak tfc_dispatch_server_new
#pragma weak tfc_dispatch_server_target
#pragma weak tfc_dispatch_server_num_workers
#pragma weak tfc_dispatch_server_free
#pragma weak tfc_worker_server_new
#pragma weak tfc_worker_server_free
#pragma weak tfc_dataset_distribute

#define PIPELINE_IMAGES 4096
#define PIPELINE_BATCH 128
#define PIPELINE_SHUFFLE 1024
#define PIPELINE_SIZE 32
#define PNG_MAX 4096 /* a 28x28 grayscale PNG is ~0.3-1 KB */
#define PEAK_EPOCHS 3

static bool data_available(tfc_status *st) {
    struct {
        const char *name;
        bool present;
    } need[] = {
        {"tfc_dataset_from_strings", tfc_dataset_from_strings != NULL},
        {"tfc_dataset_tfrecord", tfc_dataset_tfrecord != NULL},
        {"tfc_dataset_map", tfc_dataset_map != NULL},
        {"tfc_dataset_shuffle", tfc_dataset_shuffle != NULL},
        {"tfc_dataset_batch", tfc_dataset_batch != NULL},
        {"tfc_dataset_prefetch", tfc_dataset_prefetch != NULL},
        {"tfc_dataset_with_options", tfc_dataset_with_options != NULL},
        {"tfc_dataset_unref", tfc_dataset_unref != NULL},
        {"tfc_iterator_new", tfc_iterator_new != NULL && tfc_iterator_next != NULL && tfc_iterator_free != NULL},
        {"tfc_tfrecord_writer", tfc_tfrecord_writer_new != NULL && tfc_tfrecord_writer_write != NULL &&
                                    tfc_tfrecord_writer_close != NULL},
        {"tfc_datasets_fashion_mnist_load", tfc_datasets_fashion_mnist_load != NULL && tfc_datasets_free != NULL},
        {"op ParseExampleV2", tfc_op_lookup("ParseExampleV2") != NULL},
        {"op DecodePng", tfc_op_lookup("DecodePng") != NULL},
        {"op EncodePng", tfc_op_lookup("EncodePng") != NULL},
        {"op ResizeBilinear", tfc_op_lookup("ResizeBilinear") != NULL},
    };
    char missing[200] = "";
    size_t len = 0;
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
        if (!need[i].present && len < sizeof missing)
            len += (size_t)snprintf(missing + len, sizeof missing - len, "%s%s", len ? ", " : "", need[i].name);
    if (!len) return true;
    return tfc_status_set(st, TFC_UNIMPLEMENTED, "libtfc lacks %s", missing);
}

/* ---- the TFRecord file: Example{features{feature{"image": bytes_list{png}}, feature{"label": int64_list}}} ---- */
static size_t put_varint(uint8_t *p, uint64_t v) {
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

/* field `field` with wire type 2 (length-delimited) holding n bytes of data */
static size_t put_bytes(uint8_t *p, int field, const void *data, size_t n) {
    size_t k = put_varint(p, (uint64_t)field << 3 | 2);
    k += put_varint(p + k, n);
    memcpy(p + k, data, n);
    return k + n;
}

/* One map entry of Features.feature: {key: name, value: Feature holding `feature` (already encoded)}. */
static size_t put_feature_entry(uint8_t *p, const char *name, const uint8_t *feature, size_t n) {
    uint8_t entry[PNG_MAX + 64];
    size_t k = put_bytes(entry, 1, name, strlen(name));
    k += put_bytes(entry + k, 2, feature, n);
    return put_bytes(p, 1, entry, k);
}

static size_t encode_example(uint8_t *out, const char *png, size_t png_len, int64_t label) {
    uint8_t list[PNG_MAX + 16], feat[PNG_MAX + 32], feats[PNG_MAX + 160];
    size_t n = put_bytes(list, 1, png, png_len);        /* BytesList.value */
    size_t f = put_bytes(feat, 1, list, n);             /* Feature.bytes_list */
    size_t k = put_feature_entry(feats, "image", feat, f);
    uint8_t v[16];
    n = put_varint(v, (uint64_t)label);
    n = put_bytes(list, 1, v, n);                       /* Int64List.value, packed */
    f = put_bytes(feat, 3, list, n);                    /* Feature.int64_list */
    k += put_feature_entry(feats + k, "label", feat, f);
    return put_bytes(out, 1, feats, k);                 /* Example.features */
}

static bool write_tfrecord(tfc_ctx *ctx, const bench_cfg *cfg, const char *path, tfc_status *st) {
    struct stat sb;
    if (stat(path, &sb) == 0) return true;
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    tfc_dataset_arrays d = {0};
    if (!tfc_datasets_fashion_mnist_load(cfg->data_dir, &d, st)) return false;
    tfc_tfrecord_writer *w = tfc_tfrecord_writer_new(tmp, NULL, -1, st);
    bool ok = w != NULL;
    const uint8_t *px = tfc_tensor_data(d.x_test), *py = tfc_tensor_data(d.y_test);
    for (int64_t i = 0; ok && i < PIPELINE_IMAGES; i++) {
        int64_t dims[3] = {28, 28, 1};
        int64_t src = i % tfc_tensor_dim(d.x_test, 0);
        tfc_tensor *img = tfc_tensor_from_data(TFC_UINT8, dims, 3, px + src * 784, 784, st);
        tfc_tensor *png = img ? tfc_emit(ctx, "EncodePng", &img, 1, NULL, 0, st) : NULL;
        size_t len = 0;
        const char *bytes = png ? tfc_tensor_string(png, 0, &len) : NULL;
        uint8_t rec[PNG_MAX + 192];
        if (!bytes || len > PNG_MAX)
            ok = tfc_ok(st) ? tfc_status_set(st, TFC_INTERNAL, "EncodePng gave %zu bytes", len) : false;
        else
            ok = tfc_tfrecord_writer_write(w, rec, encode_example(rec, bytes, len, py[src]), st);
        tfc_tensor_unref(png);
        tfc_tensor_unref(img);
    }
    if (w && !tfc_tfrecord_writer_close(w, ok ? st : &(tfc_status)TFC_STATUS_INIT)) ok = false;
    tfc_datasets_free(&d);
    if (ok && rename(tmp, path) != 0) ok = tfc_status_set(st, TFC_UNKNOWN, "%s: cannot rename", tmp);
    if (!ok) remove(tmp);
    return ok;
}

/* ---- the map function: serialized Example -> (image float32 [32, 32, 1], label int64) ---- */
/* Its constant inputs, made once (TensorFlow's traced function holds them as Const nodes); the map's workers
 * share them read-only. */
typedef struct {
    tfc_tensor *names, *none, *dense_keys, *def_img, *def_lbl, *size, *scale;
} parse_consts;

static void consts_free(parse_consts *k) {
    tfc_tensor *all[] = {k->names, k->none, k->dense_keys, k->def_img, k->def_lbl, k->size, k->scale};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tfc_tensor_unref(all[i]);
    *k = (parse_consts){0};
}

static bool consts_make(parse_consts *k, tfc_status *st) {
    static const char *const keys[2] = {"image", "label"};
    int64_t zero = 0, two = 2;
    k->names = tfc_tensor_from_strings(NULL, NULL, &zero, 1, st);
    k->none = k->names ? tfc_tensor_from_strings(NULL, NULL, &zero, 1, st) : NULL;
    k->dense_keys = k->none ? tfc_tensor_from_strings(keys, NULL, &two, 1, st) : NULL;
    k->def_img = k->dense_keys ? tfc_tensor_from_strings(NULL, NULL, &zero, 1, st) : NULL;
    k->def_lbl = k->def_img ? tfc_tensor_new(TFC_INT64, &zero, 1, st) : NULL;
    k->size = k->def_lbl ? tfc_vec_i32((const int32_t[]){PIPELINE_SIZE, PIPELINE_SIZE}, 2, st) : NULL;
    k->scale = k->size ? tfc_scalar_f32(1.0f / 255.0f, st) : NULL;
    if (!k->scale) consts_free(k);
    return k->scale != NULL;
}

static bool parse_fn(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                     tfc_status *st) {
    (void)n_in, (void)n_out;
    const parse_consts *k = user;
    int64_t one = 1;
    tfc_tensor *serialized = tfc_tensor_reshaped(in[0], &one, 1, st);
    bool ok = serialized != NULL;
    if (ok) {
        /* ParseExampleV2(serialized, names, sparse_keys, dense_keys, ragged_keys, dense_defaults...) */
        tfc_tensor *pin[7] = {serialized, k->names, k->none, k->dense_keys, k->none, k->def_img, k->def_lbl};
        const tfc_dtype tdense[2] = {TFC_STRING, TFC_INT64};
        const tfc_shape shapes[2] = {{.rank = 0}, {.rank = 0}};
        tfc_attr pattrs[] = {
            TFC_ATTR_I("num_sparse", 0),
            {.name = "Tdense", .kind = TFC_ATTR_LIST_TYPE, .n = 2, .v.types = tdense},
            {.name = "sparse_types", .kind = TFC_ATTR_LIST_TYPE, .n = 0, .v.types = NULL},
            {.name = "ragged_value_types", .kind = TFC_ATTR_LIST_TYPE, .n = 0, .v.types = NULL},
            {.name = "ragged_split_types", .kind = TFC_ATTR_LIST_TYPE, .n = 0, .v.types = NULL},
            TFC_ATTR_SHAPES("dense_shapes", shapes, 2),
        };
        tfc_tensor *parsed[2] = {0};
        ok = tfc_execute(ctx, "ParseExampleV2", pin, 7, pattrs, (int)(sizeof pattrs / sizeof pattrs[0]), parsed, 2,
                         st) == 2;
        /* parsed: image png [1], label [1] */
        tfc_tensor *png = ok ? tfc_tensor_reshaped(parsed[0], NULL, 0, st) : NULL;
        tfc_tensor *img = png ? tfc_emit(ctx, "DecodePng", &png, 1, (tfc_attr[]){TFC_ATTR_I("channels", 1)}, 1, st)
                              : NULL;
        int64_t d4[4] = {1, 28, 28, 1}, d3[3] = {PIPELINE_SIZE, PIPELINE_SIZE, 1};
        tfc_tensor *img4 = img ? tfc_tensor_reshaped(img, d4, 4, st) : NULL;
        tfc_tensor *rin[2] = {img4, k->size};
        tfc_tensor *resized =
            img4 ? tfc_emit(ctx, "ResizeBilinear", rin, 2, (tfc_attr[]){TFC_ATTR_B("half_pixel_centers", true)}, 1, st)
                 : NULL;
        tfc_tensor *min[2] = {resized, k->scale};
        tfc_tensor *norm = resized ? tfc_emit(ctx, "Mul", min, 2, NULL, 0, st) : NULL;
        tfc_tensor *image = norm ? tfc_tensor_reshaped(norm, d3, 3, st) : NULL;
        tfc_tensor *label = image ? tfc_tensor_reshaped(parsed[1], NULL, 0, st) : NULL;
        ok = label != NULL;
        out[0] = image;
        out[1] = label;
        if (!ok) {
            tfc_tensor_unref(image);
            out[0] = out[1] = NULL;
        }
        tfc_tensor_unref(img4);
        tfc_tensor_unref(png);
    }
    tfc_tensor_unref(serialized);
    return ok;
}

typedef struct {
    bench_case base;
    tfc_dataset *ds;
    int copies;                      /* epochs of the pipeline one iteration reads (data_service: one per worker) */
    tfc_dispatch_server *dispatcher; /* data_service: the service in this process */
    tfc_worker_server *workers[2];
} data_case;

/* One iteration: `copies` epochs; *checksum (when not NULL) gets the sum of every pixel and label over one. */
static bool run_epoch(tfc_dataset *ds, int copies, double *checksum, tfc_status *st) {
    tfc_iterator *it = tfc_iterator_new(ds, st);
    if (!it) return false;
    int64_t seen = 0;
    double sum = 0;
    tfc_tensor *el[2];
    while (tfc_iterator_next(it, el, 2, st)) {
        int64_t n = tfc_tensor_dim(el[0], 0);
        seen += n;
        if (checksum) {
            const float *px = tfc_tensor_data(el[0]);
            const int64_t *lbl = tfc_tensor_data(el[1]);
            for (int64_t i = 0; i < tfc_tensor_num_elements(el[0]); i++) sum += px[i];
            for (int64_t i = 0; i < n; i++) sum += (double)lbl[i];
        }
        tfc_tensor_unref(el[0]);
        tfc_tensor_unref(el[1]);
    }
    tfc_iterator_free(it);
    if (st->code != TFC_OUT_OF_RANGE) return false;
    tfc_status_clear(st);
    if (seen != (int64_t)copies * PIPELINE_IMAGES)
        return tfc_status_set(st, TFC_INTERNAL, "data_pipeline: %ld elements, expected %d", (long)seen,
                              copies * PIPELINE_IMAGES);
    if (checksum) *checksum = sum / copies;
    return true;
}

static bool data_run(bench_case *bc, int64_t iters, tfc_status *st) {
    data_case *c = (data_case *)bc;
    for (int64_t i = 0; i < iters; i++) /* the first epoch (the warm-up) also sums its output */
        if (!run_epoch(c->ds, c->copies, isnan(c->base.check) ? &c->base.check : NULL, st)) return false;
    return true;
}

static void data_free(bench_case *bc) {
    data_case *c = (data_case *)bc;
    tfc_dataset_unref(c->ds);
    for (int i = 0; i < 2; i++)
        if (c->workers[i]) tfc_worker_server_free(c->workers[i]);
    if (c->dispatcher) tfc_dispatch_server_free(c->dispatcher);
    tfc_free(c);
}

static void consts_delete(void *k) {
    consts_free(k);
    tfc_free(k);
}

/* The pipeline over the TFRecord file at path (written already) with the map parse_fn(k), or NULL with st set;
 * map_opts carries the map's ownership of k (user_free) or its output_spec. */
static tfc_dataset *pipeline_over(const bench_cfg *cfg, const char *path, parse_consts *k, tfc_map_opts map_opts,
                                  tfc_status *st) {
    const char *files[1] = {path};
    tfc_dataset *ds = tfc_dataset_tfrecord(tfc_dataset_from_strings(files, 1, st), NULL, st);
    map_opts.num_parallel_calls = TFC_AUTOTUNE;
    map_opts.output_structure = "(.,.)";
    ds = tfc_dataset_map(ds, parse_fn, k, &map_opts, st);
    ds = tfc_dataset_shuffle(ds, PIPELINE_SHUFFLE, &(tfc_shuffle_opts){.seed = 1, .has_seed = true}, st);
    ds = tfc_dataset_batch(ds, PIPELINE_BATCH, NULL, st);
    ds = tfc_dataset_prefetch(ds, TFC_AUTOTUNE, st);
    return tfc_dataset_with_options(ds, &(tfc_data_options){.private_threadpool_size = cfg->threads,
                                                            .max_intra_op_parallelism = 1},
                                    st);
}

/* The pipeline over the TFRecord file at path (written already), or NULL with st set. */
static tfc_dataset *make_pipeline(const bench_cfg *cfg, const char *path, tfc_status *st) {
    parse_consts *k = tfc_calloc(1, sizeof *k);
    if (!k) return tfc_status_oom(st, "data_pipeline", sizeof *k), NULL;
    if (!consts_make(k, st)) {
        tfc_free(k);
        return NULL;
    }
    /* the map takes k (freed with the dataset, also when this fails) */
    return pipeline_over(cfg, path, k, (tfc_map_opts){.user_free = consts_delete}, st);
}

/* ---- data_service: the same pipeline through the tf.data service ----
 * tfc: a dispatcher and 2 workers in this process, each worker's pipeline with cfg->threads threads, feeding one
 * consumer in parallel_epochs (every worker reads the one file: an iteration is one epoch per worker, 2 x
 * PIPELINE_IMAGES elements); tfc_local: the pipeline itself with cfg->threads threads. The map's C callback is
 * registered by name (workers rebuild the pipeline from its graph) with constants made once for the process. */
static parse_consts *service_consts;

static tfc_dataset *service_pipeline(const bench_cfg *cfg, const char *path, tfc_status *st) {
    if (!service_consts) {
        parse_consts *k = tfc_calloc(1, sizeof *k);
        if (!k || !consts_make(k, st)) {
            tfc_free(k);
            return k ? NULL : (tfc_status_oom(st, "data_service", sizeof *k), NULL);
        }
        if (!tfc_data_register_map_fn("tfc_bench.parse_example", parse_fn, k, st)) {
            consts_delete(k);
            return NULL;
        }
        service_consts = k; /* the registry refers to it from now on */
    }
    const tfc_tensor_spec spec[2] = {{TFC_FLOAT, {3, {PIPELINE_SIZE, PIPELINE_SIZE, 1}}}, {TFC_INT64, {0}}};
    return pipeline_over(cfg, path, service_consts, (tfc_map_opts){.output_spec = spec}, st);
}

static bench_case *prep_service(tfc_ctx *ctx, const bench_cfg *cfg, const char *impl, tfc_status *st) {
    const bool local = !strcmp(impl, "tfc_local");
    if (!local && strcmp(impl, "tfc"))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "data_service: unknown impl '%s'", impl), NULL;
    if (!data_available(st)) return NULL;
    if (!tfc_data_register_map_fn || !tfc_dispatch_server_new || !tfc_worker_server_new || !tfc_dataset_distribute)
        return tfc_status_set(st, TFC_UNIMPLEMENTED, "libtfc lacks the tf.data service"), NULL;
    char path[1024];
    snprintf(path, sizeof path, "%s/data_pipeline.tfrecord", cfg->work_dir);
    if (!write_tfrecord(ctx, cfg, path, st)) return NULL;
    data_case *c = tfc_calloc(1, sizeof *c);
    if (!c) return tfc_status_oom(st, "data_service", sizeof *c), NULL;
    *c = (data_case){.base = {data_run, data_free, PIPELINE_IMAGES, NAN}, .copies = 1};
    tfc_dataset *ds = service_pipeline(cfg, path, st);
    if (ds && !local) {
        c->copies = 2;
        c->base.units = 2 * PIPELINE_IMAGES;
        bool ok = (c->dispatcher = tfc_dispatch_server_new(NULL, st)) != NULL;
        for (int i = 0; ok && i < 2; i++)
            ok = (c->workers[i] = tfc_worker_server_new(
                      &(tfc_worker_config){.dispatcher_address = tfc_dispatch_server_target(c->dispatcher),
                                           .heartbeat_interval_ms = 100}, st)) != NULL;
        for (int waited = 0; ok && tfc_dispatch_server_num_workers(c->dispatcher) < 2; waited += 10) {
            if (waited > 10000) ok = tfc_status_set(st, TFC_UNAVAILABLE, "data_service: workers did not register");
            usleep(10000);
        }
        tfc_dataset *svc = ok ? tfc_dataset_distribute(ds, &(tfc_distribute_opts){
                                                           .service = tfc_dispatch_server_target(c->dispatcher)}, st)
                              : (tfc_dataset_unref(ds), NULL);
        ds = svc;
    }
    if (!ds) {
        data_free(&c->base);
        return NULL;
    }
    c->ds = ds;
    return &c->base;
}

bench_case *bench_prep_data(tfc_ctx *ctx, const bench_cfg *cfg, const char *impl, const char *workload,
                            tfc_status *st) {
    if (!strcmp(workload, "data_service")) return prep_service(ctx, cfg, impl, st);
    if (strcmp(workload, "data_pipeline")) return NULL;
    if (strcmp(impl, "tfc")) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "data_pipeline: unknown impl '%s'", impl), NULL;
    if (!data_available(st)) return NULL;
    char path[1024];
    snprintf(path, sizeof path, "%s/data_pipeline.tfrecord", cfg->work_dir);
    if (!write_tfrecord(ctx, cfg, path, st)) return NULL;
    tfc_dataset *ds = make_pipeline(cfg, path, st);
    if (!ds) return NULL;
    data_case *c = tfc_calloc(1, sizeof *c);
    if (!c) {
        tfc_dataset_unref(ds);
        return tfc_status_oom(st, "data_pipeline", sizeof *c), NULL;
    }
    *c = (data_case){.base = {data_run, data_free, PIPELINE_IMAGES, NAN}, .ds = ds, .copies = 1};
    return &c->base;
}

/* The TFRecord file of data_pipeline, written by a child process (with an eager context of its own) when it is
 * missing: loading Fashion-MNIST to write it must not count in the peak memory of the process that then runs the
 * pipeline. Called before that process makes its threads. */
bool bench_data_ensure_file(const bench_cfg *cfg, tfc_status *st) {
    if (!data_available(st)) return false;
    char path[1024];
    snprintf(path, sizeof path, "%s/data_pipeline.tfrecord", cfg->work_dir);
    struct stat sb;
    if (stat(path, &sb) == 0) return true;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return tfc_status_set(st, TFC_UNKNOWN, "data_pipeline: fork failed");
    if (pid == 0) {
        tfc_status cst = TFC_STATUS_INIT;
        tfc_ctx *ctx = tfc_ctx_new(&(tfc_ctx_opts){.intra_op_threads = 1}, &cst);
        bool ok = ctx && write_tfrecord(ctx, cfg, path, &cst);
        if (!ok) fprintf(stderr, "data_pipeline: %s\n", cst.msg);
        _exit(ok ? 0 : 1);
    }
    int ws = 0;
    if (waitpid(pid, &ws, 0) != pid || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
        return tfc_status_set(st, TFC_UNKNOWN, "data_pipeline: writing %s failed (see stderr)", path);
    return true;
}

/* peak-mem mode, data_pipeline: PEAK_EPOCHS epochs in this process over the file bench_data_ensure_file wrote. */
bool bench_peak_mem_data(tfc_ctx *ctx, const bench_cfg *cfg, tfc_status *st) {
    (void)ctx;
    if (!data_available(st)) return false;
    char path[1024];
    snprintf(path, sizeof path, "%s/data_pipeline.tfrecord", cfg->work_dir);
    tfc_dataset *ds = make_pipeline(cfg, path, st);
    bool ok = ds != NULL;
    for (int e = 0; ok && e < PEAK_EPOCHS; e++) ok = run_epoch(ds, 1, NULL, st);
    tfc_dataset_unref(ds);
    return ok;
}
