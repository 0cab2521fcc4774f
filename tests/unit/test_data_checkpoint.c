/* Iterator checkpoints (tfc/data_checkpoint.h): for each kind of pipeline, iterate k elements, save, iterate to
 * the end (the reference tail), then build the pipeline again (as a restarted program would), restore into a
 * fresh iterator and iterate: the elements equal the reference tail byte for byte. Also through
 * tf.train.Checkpoint files, the reshuffle epoch counter, and the refusals and bad states. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "data_test_util.h"

static char dir[256];

/* ---- elements as bytes ---- */
typedef struct blob {
    unsigned char *p;
    size_t n;
} blob;

static void put(blob *b, const void *p, size_t n) {
    b->p = realloc(b->p, b->n + n + 1);
    REQUIRE(b->p);
    memcpy(b->p + b->n, p, n);
    b->n += n;
}

static blob elem_blob(tfc_tensor **out, int n) {
    blob b = {0};
    for (int i = 0; i < n; i++) {
        int32_t dt = (int32_t)tfc_tensor_dtype(out[i]), rank = tfc_tensor_rank(out[i]);
        put(&b, &dt, 4);
        put(&b, &rank, 4);
        for (int d = 0; d < rank; d++) {
            int64_t v = tfc_tensor_dim(out[i], d);
            put(&b, &v, 8);
        }
        if (dt == TFC_STRING) {
            for (int64_t k = 0; k < tfc_tensor_num_elements(out[i]); k++) {
                size_t len = 0;
                const char *s = tfc_tensor_string(out[i], k, &len);
                put(&b, &len, sizeof len);
                put(&b, s, len);
            }
        } else {
            put(&b, tfc_tensor_data(out[i]), tfc_tensor_byte_size(out[i]));
        }
    }
    return b;
}

/* Iterates to the end (at most max), returning the elements; *count gets how many. */
static blob *drain(tfc_iterator *it, int64_t max, int64_t *count) {
    int n = tfc_dataset_num_components(tfc_iterator_dataset(it));
    blob *all = calloc((size_t)max + 1, sizeof *all);
    tfc_tensor *out[16];
    tfc_status st = TFC_STATUS_INIT;
    int64_t k = 0;
    while (k < max) {
        if (tfc_iterator_next(it, out, 16, &st)) {
            all[k++] = elem_blob(out, n);
            for (int i = 0; i < n; i++) tfc_tensor_unref(out[i]);
        } else if (st.code == TFC_OUT_OF_RANGE) {
            break;
        } else { /* an element error is an element of the sequence too */
            blob b = {0};
            put(&b, "error:", 6);
            put(&b, st.msg, strlen(st.msg));
            all[k++] = b;
        }
    }
    *count = k;
    return all;
}

static void free_blobs(blob *b, int64_t n) {
    for (int64_t i = 0; i < n; i++) free(b[i].p);
    free(b);
}

/* ---- user functions ---- */
static bool square_plus_one(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                            tfc_status *st) {
    int64_t v = (int64_t)tfc_tensor_get_f64(in[0], 0);
    return (out[0] = tfc_scalar_i64(v * v + 1, st)) != NULL;
}

static bool is_even(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, bool *keep, tfc_status *st) {
    *keep = (int64_t)tfc_tensor_get_f64(in[0], 0) % 2 == 0;
    return true;
}

/* x -> a vector of x % 4 + 1 copies of x (for padded_batch). */
static bool ragged(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                   tfc_status *st) {
    int64_t v = (int64_t)tfc_tensor_get_f64(in[0], 0), n = v % 4 + 1, d[4] = {v, v, v, v};
    return (out[0] = tfc_tensor_from_data(TFC_INT64, &n, 1, d, (size_t)n * 8, st)) != NULL;
}

/* x -> range(10x, 10x + 5) */
static tfc_dataset *inner_range(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, tfc_status *st) {
    int64_t v = (int64_t)tfc_tensor_get_f64(in[0], 0);
    return tfc_dataset_range(10 * v, 10 * v + 5, 1, TFC_INT64, st);
}

/* Not deterministic: adds a global call counter. */
static int64_t calls;
static bool add_calls(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                      tfc_status *st) {
    return (out[0] = tfc_scalar_i64((int64_t)tfc_tensor_get_f64(in[0], 0) + calls++, st)) != NULL;
}

/* Fails on multiples of 7 (element errors are part of the position). */
static bool fail_on_7(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                      tfc_status *st) {
    int64_t v = (int64_t)tfc_tensor_get_f64(in[0], 0);
    if (v % 7 == 3) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "bad element %lld", (long long)v);
    return (out[0] = tfc_scalar_i64(v, st)) != NULL;
}

/* ---- pipelines: each built from scratch on every call (a restarted program builds its own) ---- */
static tfc_status bst = TFC_STATUS_INIT;
#define S (&bst)

static tfc_dataset *range(int64_t n) { return tfc_dataset_range(0, n, 1, TFC_INT64, S); }

static tfc_dataset *p_slices(void) {
    float x[20 * 3];
    int64_t y[20];
    for (int i = 0; i < 60; i++) x[i] = (float)i * 0.5f;
    for (int i = 0; i < 20; i++) y[i] = i % 3;
    int64_t dx[2] = {20, 3}, dy = 20;
    tfc_tensor *t[2] = {tfc_tensor_from_data(TFC_FLOAT, dx, 2, x, sizeof x, S),
                        tfc_tensor_from_data(TFC_INT64, &dy, 1, y, sizeof y, S)};
    tfc_dataset *ds = tfc_dataset_from_tensor_slices(t, 2, "(.,.)", S);
    tfc_tensor_unref(t[0]);
    tfc_tensor_unref(t[1]);
    return ds;
}
static tfc_dataset *p_range(void) { return range(37); }

static const char *file_names[3];
static tfc_dataset *files(void) { return tfc_dataset_from_strings(file_names, 3, S); }
static tfc_dataset *p_tfrecord(void) { return tfc_dataset_tfrecord(files(), NULL, S); }
static tfc_dataset *p_tfrecord_parallel(void) {
    return tfc_dataset_tfrecord(files(), &(tfc_reader_opts){.num_parallel_reads = 2}, S);
}
static const char *text_names[2];
static tfc_dataset *p_text(void) {
    return tfc_dataset_text_line(tfc_dataset_from_strings(text_names, 2, S), NULL, S);
}
static tfc_dataset *p_map(void) { return tfc_dataset_map(range(30), square_plus_one, NULL, NULL, S); }
static tfc_dataset *p_map_parallel(void) {
    return tfc_dataset_map(range(60), square_plus_one, NULL, &(tfc_map_opts){.num_parallel_calls = 3}, S);
}
static tfc_dataset *p_filter(void) { return tfc_dataset_filter(range(40), is_even, NULL, NULL, S); }
static tfc_dataset *p_batch(void) { return tfc_dataset_batch(range(23), 4, NULL, S); }
static tfc_dataset *p_batch_parallel(void) {
    return tfc_dataset_batch(range(50), 3, &(tfc_batch_opts){.num_parallel_calls = 2, .drop_remainder = true}, S);
}
static tfc_dataset *p_padded_batch(void) {
    return tfc_dataset_padded_batch(tfc_dataset_map(range(21), ragged, NULL, NULL, S), 4, NULL, S);
}
static tfc_dataset *p_shuffle_seeded(void) {
    return tfc_dataset_shuffle(range(40), 10, &(tfc_shuffle_opts){.seed = 7, .has_seed = true}, S);
}
static tfc_dataset *p_shuffle_unseeded(void) { return tfc_dataset_shuffle(range(40), 10, NULL, S); }
static tfc_dataset *p_shuffle_repeat(void) { /* a new shuffle iterator (and epoch) per repetition */
    return tfc_dataset_repeat(tfc_dataset_shuffle(range(12), 5, &(tfc_shuffle_opts){.seed = 3, .has_seed = true}, S), 4,
                              S);
}
static tfc_dataset *p_repeat(void) { return tfc_dataset_repeat(range(7), 3, S); }
static tfc_dataset *p_prefetch(void) {
    return tfc_dataset_prefetch(tfc_dataset_map(range(80), square_plus_one, NULL, NULL, S), 8, S);
}
static tfc_dataset *p_take_skip(void) { return tfc_dataset_take(tfc_dataset_skip(range(50), 5, S), 30, S); }
static tfc_dataset *p_interleave(void) {
    return tfc_dataset_interleave(range(7), inner_range, NULL, &(tfc_interleave_opts){.cycle_length = 3, .block_length = 2},
                                  S);
}
static tfc_dataset *p_interleave_parallel(void) {
    return tfc_dataset_interleave(
        range(9), inner_range, NULL,
        &(tfc_interleave_opts){.cycle_length = 3, .block_length = 2, .num_parallel_calls = 2}, S);
}
static tfc_dataset *p_zip(void) {
    tfc_dataset *z[2] = {range(25), tfc_dataset_map(range(30), square_plus_one, NULL, NULL, S)};
    return tfc_dataset_zip(z, 2, S);
}
static tfc_dataset *p_concatenate(void) {
    return tfc_dataset_concatenate(range(6), tfc_dataset_range(100, 115, 1, TFC_INT64, S), S);
}
static tfc_dataset *p_errors(void) { return tfc_dataset_map(range(30), fail_on_7, NULL, NULL, S); }
static tfc_dataset *p_training(void) { /* a typical input pipeline */
    tfc_dataset *ds = tfc_dataset_shuffle(range(64), 16, &(tfc_shuffle_opts){.seed = 11, .has_seed = true}, S);
    ds = tfc_dataset_map(ds, square_plus_one, NULL, &(tfc_map_opts){.num_parallel_calls = TFC_AUTOTUNE}, S);
    ds = tfc_dataset_batch(ds, 5, NULL, S);
    return tfc_dataset_prefetch(tfc_dataset_repeat(ds, 2, S), TFC_AUTOTUNE, S);
}
static tfc_dataset *p_cache(void) { return tfc_dataset_cache(tfc_dataset_map(range(20), square_plus_one, NULL, NULL, S), NULL, S); }

/* iterate k, save, drain (reference); rebuild, restore, drain: equal */
static void check_resume(const char *name, tfc_dataset *(*make)(void), int64_t k) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_dataset *ds = make();
    REQUIRE(ds);
    tfc_iterator *it = tfc_iterator_new(ds, &st);
    REQUIRE(it);
    int64_t got = 0, n_ref = 0, n_tail = 0;
    blob *head = drain(it, k, &got);
    free_blobs(head, got);
    tfc_tensor *state = tfc_iterator_save_state(it, &st);
    CHECK_OK(&st);
    REQUIRE(state);
    blob *ref = drain(it, 1 << 20, &n_ref);
    tfc_iterator_free(it);
    tfc_dataset_unref(ds);

    tfc_dataset *ds2 = make();
    tfc_iterator *it2 = tfc_iterator_new(ds2, &st);
    REQUIRE(it2);
    bool ok = tfc_iterator_restore_state(it2, state, &st);
    CHECK(ok);
    CHECK_OK(&st);
    blob *tail = drain(it2, 1 << 20, &n_tail);
    CHECK(n_tail == n_ref);
    int64_t diff = -1;
    for (int64_t i = 0; i < n_ref && i < n_tail && diff < 0; i++)
        if (ref[i].n != tail[i].n || memcmp(ref[i].p, tail[i].p, ref[i].n)) diff = i;
    CHECK(diff < 0);
    if (!ok || n_tail != n_ref || diff >= 0)
        fprintf(stderr, "%s, k=%lld: tail of %lld elements vs %lld, first difference at %lld (%s)\n", name,
                (long long)k, (long long)n_tail, (long long)n_ref, (long long)diff, st.msg);
    free_blobs(ref, n_ref);
    free_blobs(tail, n_tail);
    tfc_iterator_free(it2);
    tfc_dataset_unref(ds2);
    tfc_tensor_unref(state);
}

typedef struct {
    const char *name;
    tfc_dataset *(*make)(void);
    int64_t k;
} pipeline;

static void test_pipelines(void) {
    static const pipeline p[] = {
        {"from_tensor_slices", p_slices, 7},     {"range", p_range, 11},
        {"tfrecord", p_tfrecord, 13},            {"tfrecord parallel reads", p_tfrecord_parallel, 9},
        {"text_line", p_text, 5},                {"map", p_map, 10},
        {"map parallel", p_map_parallel, 17},    {"filter", p_filter, 6},
        {"batch", p_batch, 3},                   {"batch parallel", p_batch_parallel, 5},
        {"padded_batch", p_padded_batch, 2},     {"shuffle seeded", p_shuffle_seeded, 15},
        {"shuffle unseeded", p_shuffle_unseeded, 15}, {"shuffle + repeat", p_shuffle_repeat, 29},
        {"repeat", p_repeat, 9},                 {"prefetch", p_prefetch, 21},
        {"take/skip", p_take_skip, 12},          {"interleave", p_interleave, 8},
        {"interleave parallel", p_interleave_parallel, 14}, {"zip", p_zip, 10},
        {"concatenate", p_concatenate, 8},       {"element errors", p_errors, 12},
        {"shuffle-map-batch-repeat-prefetch", p_training, 17}, {"cache", p_cache, 6},
    };
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) {
        check_resume(p[i].name, p[i].make, 0);       /* before the first element */
        check_resume(p[i].name, p[i].make, p[i].k);  /* mid-way */
        check_resume(p[i].name, p[i].make, 1 << 20); /* at the end */
    }
    CHECK_OK(&bst);
}

/* reshuffle_each_iteration: the epoch counter travels with the state, so the iterators made after a restore
 * (the next epochs) shuffle as the uninterrupted run's did. */
static void test_reshuffle_epochs(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_dataset *ds = p_shuffle_unseeded();
    int64_t n0 = 0, n1 = 0, nt = 0, n2a = 0, n2b = 0;
    tfc_iterator *e0 = tfc_iterator_new(ds, &st);
    blob *b0 = drain(e0, 1 << 20, &n0);
    free_blobs(b0, n0);
    tfc_iterator_free(e0);
    tfc_iterator *e1 = tfc_iterator_new(ds, &st);
    blob *b1 = drain(e1, 9, &n1);
    free_blobs(b1, n1);
    tfc_tensor *state = tfc_iterator_save_state(e1, &st);
    REQUIRE(state);
    blob *tail1 = drain(e1, 1 << 20, &n1);
    tfc_iterator_free(e1);
    tfc_iterator *e2 = tfc_iterator_new(ds, &st);
    blob *epoch2 = drain(e2, 1 << 20, &n2a);
    tfc_iterator_free(e2);

    tfc_dataset *ds2 = p_shuffle_unseeded(); /* another random seed until restored */
    tfc_iterator *r1 = tfc_iterator_new(ds2, &st);
    CHECK(tfc_iterator_restore_state(r1, state, &st));
    blob *rtail = drain(r1, 1 << 20, &nt);
    tfc_iterator_free(r1);
    tfc_iterator *r2 = tfc_iterator_new(ds2, &st);
    blob *repoch2 = drain(r2, 1 << 20, &n2b);
    tfc_iterator_free(r2);
    CHECK(nt == n1 && n2a == 40 && n2b == 40);
    bool same_tail = true, same_epoch2 = true, epochs_differ = false;
    for (int64_t i = 0; i < n1 && i < nt; i++) same_tail &= !memcmp(tail1[i].p, rtail[i].p, tail1[i].n);
    for (int64_t i = 0; i < 40; i++) same_epoch2 &= !memcmp(epoch2[i].p, repoch2[i].p, epoch2[i].n);
    for (int64_t i = 0; i < n1; i++) epochs_differ |= memcmp(epoch2[9 + i].p, tail1[i].p, tail1[i].n) != 0;
    CHECK(same_tail);
    CHECK(same_epoch2);
    CHECK(epochs_differ); /* the epochs really are shuffled differently */
    free_blobs(tail1, n1);
    free_blobs(rtail, nt);
    free_blobs(epoch2, n2a);
    free_blobs(repoch2, n2b);
    tfc_tensor_unref(state);
    tfc_dataset_unref(ds);
    tfc_dataset_unref(ds2);
}

/* ---- refusals and bad states ---- */
static bool gen_next(tfc_ctx *ctx, void *user, void *state, tfc_tensor **out, int n_out, bool *eos, tfc_status *st) {
    int *i = user;
    if (*i >= 5) {
        *eos = true;
        return true;
    }
    return (out[0] = tfc_scalar_i64((*i)++, st)) != NULL;
}

static void expect_refused(tfc_dataset *ds, const char *needle) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_iterator *it = tfc_iterator_new(ds, &st);
    REQUIRE(it);
    tfc_tensor *out[4];
    if (tfc_iterator_next(it, out, 4, &st)) tfc_tensor_unref(out[0]);
    tfc_tensor *state = tfc_iterator_save_state(it, &st);
    CHECK(!state);
    CHECK_CODE(&st, TFC_FAILED_PRECONDITION);
    CHECK(strstr(st.msg, needle) != NULL);
    if (!strstr(st.msg, needle)) fprintf(stderr, "message: %s\n", st.msg);
    tfc_tensor_unref(state);
    tfc_iterator_free(it);
    tfc_dataset_unref(ds);
}

static void test_refusals(void) {
    tfc_status st = TFC_STATUS_INIT;
    int gi = 0;
    tfc_tensor_spec spec = {TFC_INT64, {0, {0}}};
    tfc_generator g = {.next = gen_next, .user = &gi};
    expect_refused(tfc_dataset_map(tfc_dataset_from_generator(&g, NULL, &spec, &st), square_plus_one, NULL, NULL, &st),
                   "from_generator");
    expect_refused(tfc_dataset_map(range(20), square_plus_one, NULL,
                                   &(tfc_map_opts){.num_parallel_calls = 2, .deterministic = TFC_NO}, &st),
                   "deterministic=false");
    tfc_data_options o = {.deterministic = TFC_NO};
    expect_refused(tfc_dataset_with_options(
                       tfc_dataset_map(range(20), square_plus_one, NULL, &(tfc_map_opts){.num_parallel_calls = 2}, &st),
                       &o, &st),
                   "ParallelMapDatasetV2");
    CHECK_OK(&st);

    /* restoring into another pipeline, bad bytes, wrong dtype */
    tfc_dataset *ds = p_map();
    tfc_iterator *it = tfc_iterator_new(ds, &st);
    tfc_tensor *out[2];
    for (int i = 0; i < 3 && tfc_iterator_next(it, out, 2, &st); i++) tfc_tensor_unref(out[0]);
    tfc_tensor *state = tfc_iterator_save_state(it, &st);
    REQUIRE(state);
    tfc_dataset *other = p_filter();
    tfc_iterator *it2 = tfc_iterator_new(other, &st);
    CHECK(!tfc_iterator_restore_state(it2, state, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "another pipeline") && strstr(st.msg, "FilterDataset") && strstr(st.msg, "MapDataset"));
    /* the failed restore left it2 usable, at its start */
    CHECK(tfc_iterator_next(it2, out, 2, &st) && tfc_tensor_get_f64(out[0], 0) == 0);
    tfc_tensor_unref(out[0]);
    size_t len = 0;
    const char *bytes = tfc_tensor_string(state, 0, &len);
    char *bad = malloc(len);
    memcpy(bad, bytes, len);
    bad[len / 2] ^= 0x40;
    const char *bp = bad;
    tfc_tensor *corrupt = tfc_tensor_from_strings(&bp, &len, NULL, 0, &st);
    tfc_iterator *it3 = tfc_iterator_new(ds, &st);
    CHECK(!tfc_iterator_restore_state(it3, corrupt, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "not a tfc iterator state") != NULL);
    for (size_t cut = 0; cut < len; cut += 7) { /* every truncation is refused */
        const char *cp = bytes;
        size_t cl = cut;
        tfc_tensor *t = tfc_tensor_from_strings(&cp, &cl, NULL, 0, &st);
        CHECK(!tfc_iterator_restore_state(it3, t, &st));
        CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
        tfc_tensor_unref(t);
    }
    tfc_tensor *num = tfc_scalar_i64(3, &st);
    CHECK(!tfc_iterator_restore_state(it3, num, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_tensor_unref(num);
    free(bad);
    tfc_tensor_unref(corrupt);
    tfc_tensor_unref(state);
    tfc_iterator_free(it);
    tfc_iterator_free(it2);
    tfc_iterator_free(it3);
    tfc_dataset_unref(other);
    tfc_dataset_unref(ds);

    /* a non-deterministic function: the replay is detected as different */
    ds = tfc_dataset_map(range(20), add_calls, NULL, NULL, &st);
    it = tfc_iterator_new(ds, &st);
    for (int i = 0; i < 5 && tfc_iterator_next(it, out, 2, &st); i++) tfc_tensor_unref(out[0]);
    state = tfc_iterator_save_state(it, &st);
    REQUIRE(state);
    it2 = tfc_iterator_new(ds, &st);
    CHECK(!tfc_iterator_restore_state(it2, state, &st));
    CHECK_CODE(&st, TFC_FAILED_PRECONDITION);
    CHECK(strstr(st.msg, "not deterministic") != NULL);
    tfc_tensor_unref(state);
    tfc_iterator_free(it);
    tfc_iterator_free(it2);
    tfc_dataset_unref(ds);
}

/* ---- tf.train.Checkpoint(step=v, iterator=it) ---- */
static void test_checkpoint_files(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_ctx *ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    char prefix[400];
    snprintf(prefix, sizeof prefix, "%s/ckpt/it", dir);
    tfc_dataset *ds = p_training();
    tfc_iterator *it = tfc_iterator_new(ds, &st);
    tfc_tensor *out[2];
    for (int i = 0; i < 6 && tfc_iterator_next(it, out, 2, &st); i++) tfc_tensor_unref(out[0]);
    tfc_trackable *tr = tfc_iterator_trackable(it, &st);
    REQUIRE(tr);
    tfc_tensor *v0 = tfc_scalar_f32(2.5f, &st);
    tfc_variable *var = tfc_variable_new(ctx, v0, true, "v", &st);
    tfc_trackable *holder = tfc_trackable_new(&st);
    REQUIRE(tfc_trackable_track_variable(holder, "v", var, &st));
    const char *names[2] = {"iterator", "model"};
    tfc_trackable *objs[2] = {tr, holder};
    tfc_checkpoint *ck = tfc_checkpoint_new(ctx, names, objs, 2, &st);
    REQUIRE(ck);
    char path[512];
    CHECK(tfc_checkpoint_save(ck, prefix, path, sizeof path, &st));
    CHECK_OK(&st);
    int64_t n_ref;
    blob *ref = drain(it, 1 << 20, &n_ref);
    CHECK(n_ref == 26 - 6);
    /* the file lists the iterator's state as TensorFlow's key */
    tfc_checkpoint_reader *rd = tfc_checkpoint_reader_new(path, &st);
    REQUIRE(rd);
    CHECK(tfc_checkpoint_reader_has_tensor(rd, "iterator/.ATTRIBUTES/ITERATOR_STATE"));
    CHECK(tfc_checkpoint_reader_has_tensor(rd, "model/v/.ATTRIBUTES/VARIABLE_VALUE"));
    int dtype = 0;
    tfc_shape shape;
    CHECK(tfc_checkpoint_reader_info(rd, "iterator/.ATTRIBUTES/ITERATOR_STATE", &dtype, &shape, &st));
    CHECK(dtype == 7 && shape.rank == 0); /* DT_STRING scalar */
    tfc_checkpoint_reader_free(rd);

    /* restore into a freshly built pipeline, iterator and checkpoint */
    tfc_dataset *ds2 = p_training();
    tfc_iterator *it2 = tfc_iterator_new(ds2, &st);
    tfc_trackable *tr2 = tfc_iterator_trackable(it2, &st);
    tfc_tensor *z = tfc_scalar_f32(0, &st);
    tfc_variable *var2 = tfc_variable_new(ctx, z, true, "v", &st);
    tfc_trackable *holder2 = tfc_trackable_new(&st);
    REQUIRE(tfc_trackable_track_variable(holder2, "v", var2, &st));
    tfc_trackable *objs2[2] = {tr2, holder2};
    tfc_checkpoint *ck2 = tfc_checkpoint_new(ctx, names, objs2, 2, &st);
    tfc_checkpoint_status *cs = tfc_checkpoint_restore(ck2, path, &st);
    CHECK_OK(&st);
    REQUIRE(cs);
    CHECK(tfc_checkpoint_status_assert_consumed(cs, &st));
    CHECK_OK(&st);
    tfc_checkpoint_status_free(cs);
    CHECK(tfc_tensor_get_f64(tfc_variable_value(var2), 0) == 2.5);
    int64_t n_tail;
    blob *tail = drain(it2, 1 << 20, &n_tail);
    CHECK(n_tail == n_ref);
    bool same = true;
    for (int64_t i = 0; i < n_ref && i < n_tail; i++)
        same &= ref[i].n == tail[i].n && !memcmp(ref[i].p, tail[i].p, ref[i].n);
    CHECK(same);
    free_blobs(ref, n_ref);
    free_blobs(tail, n_tail);

    /* a checkpoint without an iterator: the iterator is reported as not bound */
    char path2[512], prefix2[400];
    snprintf(prefix2, sizeof prefix2, "%s/ckpt2/only", dir);
    tfc_checkpoint *ck3 = tfc_checkpoint_new(ctx, &names[1], &objs[1], 1, &st);
    CHECK(tfc_checkpoint_save(ck3, prefix2, path2, sizeof path2, &st));
    cs = tfc_checkpoint_restore(ck2, path2, &st);
    REQUIRE(cs);
    CHECK(!tfc_checkpoint_status_assert_existing_objects_matched(cs, &st));
    CHECK_CODE(&st, TFC_FAILED_PRECONDITION);
    CHECK(strstr(st.msg, "(root).iterator") != NULL);
    tfc_checkpoint_status_expect_partial(cs);
    tfc_checkpoint_status_free(cs);
    /* the other way: an iterator value nothing takes is unused */
    cs = tfc_checkpoint_restore(ck3, path, &st);
    REQUIRE(cs);
    CHECK(tfc_checkpoint_status_unused_values(cs) == 1);
    CHECK(!tfc_checkpoint_status_assert_consumed(cs, &st));
    tfc_checkpoint_status_expect_partial(cs);
    tfc_checkpoint_status_free(cs);
    /* a pipeline that cannot be captured fails the save, naming why */
    int gi = 0;
    tfc_tensor_spec spec = {TFC_INT64, {0, {0}}};
    tfc_generator g = {.next = gen_next, .user = &gi};
    tfc_dataset *gds = tfc_dataset_from_generator(&g, NULL, &spec, &st);
    tfc_iterator *git = tfc_iterator_new(gds, &st);
    tfc_trackable *gtr = tfc_iterator_trackable(git, &st);
    tfc_checkpoint *ck4 = tfc_checkpoint_new(ctx, names, &gtr, 1, &st);
    CHECK(!tfc_checkpoint_save(ck4, prefix2, path2, sizeof path2, &st));
    CHECK_CODE(&st, TFC_FAILED_PRECONDITION);
    CHECK(strstr(st.msg, "from_generator") != NULL);

    tfc_checkpoint_free(ck4);
    tfc_trackable_unref(gtr);
    tfc_iterator_free(git);
    tfc_dataset_unref(gds);
    tfc_checkpoint_free(ck);
    tfc_checkpoint_free(ck2);
    tfc_checkpoint_free(ck3);
    tfc_trackable_unref(tr);
    tfc_trackable_unref(tr2);
    tfc_trackable_unref(holder);
    tfc_trackable_unref(holder2);
    tfc_variable_free(var);
    tfc_variable_free(var2);
    tfc_tensor_unref(v0);
    tfc_tensor_unref(z);
    tfc_iterator_free(it);
    tfc_iterator_free(it2);
    tfc_dataset_unref(ds);
    tfc_dataset_unref(ds2);
    tfc_ctx_free(ctx);
}

static void write_inputs(void) {
    tfc_status st = TFC_STATUS_INIT;
    static char fn[3][300], tn[2][300];
    for (int f = 0; f < 3; f++) {
        snprintf(fn[f], sizeof fn[f], "%s/r%d.tfrecord", dir, f);
        file_names[f] = fn[f];
        tfc_tfrecord_writer *w = tfc_tfrecord_writer_new(fn[f], f == 1 ? "GZIP" : NULL, -1, &st);
        REQUIRE(w);
        for (int i = 0; i < 10 + f; i++) {
            char rec[64];
            int n = snprintf(rec, sizeof rec, "file %d record %d", f, i);
            REQUIRE(tfc_tfrecord_writer_write(w, rec, (size_t)n, &st));
        }
        REQUIRE(tfc_tfrecord_writer_close(w, &st));
    }
    for (int f = 0; f < 2; f++) {
        snprintf(tn[f], sizeof tn[f], "%s/t%d.txt", dir, f);
        text_names[f] = tn[f];
        FILE *fp = fopen(tn[f], "w");
        REQUIRE(fp);
        for (int i = 0; i < 8; i++) fprintf(fp, "line %d of %d\n", i, f);
        fclose(fp);
    }
}

int main(void) {
    snprintf(dir, sizeof dir, "/tmp/tfc_data_ckpt_XXXXXX");
    REQUIRE(mkdtemp(dir));
    write_inputs();
    test_pipelines();
    test_reshuffle_epochs();
    test_refusals();
    test_checkpoint_files();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    TEST_MAIN_END();
}
