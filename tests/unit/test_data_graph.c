/* Pipelines as graphs: graph-function map/filter, serialise -> GraphDef with TensorFlow's dataset op names ->
 * rebuild, the same elements; splits of the source; clear errors for C callbacks and malformed bytes. */
#include "data/data_graph.h"
#include "data_test_util.h"

/* x -> x * 3 + 1 (int64) */
static int times3_plus1(tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int max_out, void *user,
                        tfc_status *st) {
    tfc_tensor *three = tfc_scalar_i64(3, st), *one = tfc_scalar_i64(1, st);
    tfc_tensor *m = three ? tfc_mul(ctx, in[0], three, st) : NULL;
    out[0] = m && one ? tfc_add(ctx, m, one, st) : NULL;
    tfc_tensor_unref(three);
    tfc_tensor_unref(one);
    return out[0] ? 1 : -1;
}

/* keeps x with x % 2 == 0 */
static int is_even(tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int max_out, void *user,
                   tfc_status *st) {
    tfc_tensor *two = tfc_scalar_i64(2, st), *zero = tfc_scalar_i64(0, st);
    tfc_tensor *r = two ? tfc_floormod(ctx, in[0], two, st) : NULL;
    out[0] = r && zero ? tfc_equal(ctx, r, zero, st) : NULL;
    tfc_tensor_unref(two);
    tfc_tensor_unref(zero);
    return out[0] ? 1 : -1;
}

static bool c_double(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                     tfc_status *st) {
    tfc_tensor *two = tfc_scalar_i64(2, st);
    out[0] = two ? tfc_mul(ctx, in[0], two, st) : NULL;
    tfc_tensor_unref(two);
    return out[0] != NULL;
}

static tfc_dataset *pipeline(tfc_ctx *ctx, tfc_function *map, tfc_function *filter, int64_t n, tfc_status *st) {
    tfc_dataset *ds = tfc_dataset_range(0, n, 1, TFC_INT64, st);
    ds = tfc_dataset_map_function(ds, ctx, map, &(tfc_map_opts){.num_parallel_calls = 2}, st);
    ds = tfc_dataset_filter_function(ds, ctx, filter, st);
    ds = tfc_dataset_batch(ds, 4, NULL, st);
    ds = tfc_dataset_unbatch(ds, st);
    return tfc_dataset_prefetch(ds, 2, st);
}

static void test_round_trip(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_ctx *ctx = tfc_ctx_new(NULL, &st);
    tfc_function *map = tfc_function_new(ctx, times3_plus1, NULL, &(tfc_function_opts){.name = "times3"}, &st);
    tfc_function *filt = tfc_function_new(ctx, is_even, NULL, &(tfc_function_opts){.name = "even"}, &st);
    const int64_t n = 50 + rand() % 50;
    tfc_dataset *ds = pipeline(ctx, map, filt, n, &st);
    REQUIRE(ds);
    CHECK_OK(&st);
    int64_t want[100], got[100];
    int64_t k = drain_i64(ds, 0, want, 100, &st);
    int64_t expect = 0;
    for (int64_t i = 0; i < n; i++)
        if ((i * 3 + 1) % 2 == 0) CHECK(expect < k && want[expect++] == i * 3 + 1);
    CHECK(k == expect);

    void *bytes = NULL;
    size_t size = 0;
    REQUIRE(tfc_dataset_serialize(ds, &bytes, &size, &st));
    /* a GraphDef with TensorFlow's dataset op names and the functions in its library */
    tfc_graphdef *gd = tfc_graphdef_parse(bytes, size, &(tfc_graphdef_opts){.allow_unknown_ops = true}, &st);
    REQUIRE(gd);
    const char *ops[] = {"RangeDataset", "ParallelMapDatasetV2", "FilterDataset", "BatchDatasetV2", "UnbatchDataset",
                         "PrefetchDataset"};
    CHECK(tfc_graphdef_num_nodes(gd, TFC_GRAPHDEF_TOP) == 6);
    for (int i = 0; i < 6; i++) {
        tfc_graphdef_node_info info;
        CHECK(tfc_graphdef_node(gd, TFC_GRAPHDEF_TOP, i, &info) && !strcmp(info.op, ops[i]));
    }
    CHECK(tfc_graphdef_num_functions(gd) >= 2);
    tfc_attr a;
    CHECK(tfc_graphdef_node_attr(gd, TFC_GRAPHDEF_TOP, 1, "f", &a, &st) && a.kind == TFC_ATTR_FUNC &&
          tfc_graphdef_find_function(gd, a.v.s) >= 0);
    tfc_graphdef_free(gd);

    /* rebuilt without the C functions (they are freed first): the same elements */
    tfc_function_free(map);
    tfc_function_free(filt);
    tfc_dataset *back = tfc_dataset_deserialize(bytes, size, &st);
    REQUIRE(back);
    CHECK(!strcmp(tfc_dataset_structure(back), tfc_dataset_structure(ds)));
    CHECK(tfc_dataset_component_spec(back, 0).dtype == TFC_INT64);
    CHECK(drain_i64(back, 0, got, 100, &st) == k && same_i64(got, want, k));
    /* serialising the rebuilt pipeline gives the same bytes */
    void *again = NULL;
    size_t size2 = 0;
    CHECK(tfc_dataset_serialize(back, &again, &size2, &st) && size2 == size && !memcmp(again, bytes, size));
    tfc_free(again);

    /* splits: every element once across all splits */
    int64_t total = 0;
    for (int s = 0; s < 7; s++) {
        tfc_dataset *part = data_graph_build(bytes, size, s, 7, &st);
        REQUIRE(part);
        int64_t vals[100];
        int64_t m = drain_i64(part, 0, vals, 100, &st);
        for (int64_t i = 0; i < m && total + i < 100; i++) CHECK(vals[i] == want[total + i]);
        total += m;
        tfc_dataset_unref(part);
    }
    CHECK(total == k);
    CHECK(data_graph_split_rows(ds, &st) == n);
    tfc_free(bytes);
    tfc_dataset_unref(back);
    tfc_dataset_unref(ds);
    tfc_ctx_free(ctx);
}

static void test_tensor_slices_and_callbacks(void) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t v[10];
    for (int i = 0; i < 10; i++) v[i] = 100 + i;
    tfc_tensor *t = vec64(v, 10);
    tfc_dataset *ds = tfc_dataset_from_tensor_slices(&t, 1, NULL, &st);
    tfc_tensor_unref(t);
    static int user_tag;
    ds = tfc_dataset_map(ds, c_double, &user_tag, &(tfc_map_opts){.output_spec = &(tfc_tensor_spec){TFC_INT64, {0}}}, &st);
    ds = tfc_dataset_shuffle(ds, 4, &(tfc_shuffle_opts){.seed = 7, .has_seed = true}, &st);
    REQUIRE(ds);
    void *bytes = NULL;
    size_t size = 0;
    /* an unregistered C callback: INVALID_ARGUMENT naming the transformation */
    CHECK(!tfc_dataset_serialize(ds, &bytes, &size, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "MapDataset") && strstr(st.msg, "C callback"));
    /* registered by name: serialises and rebuilds in this process */
    REQUIRE(tfc_data_register_map_fn("test.double", c_double, &user_tag, &st));
    CHECK(!tfc_data_register_map_fn("test.double", c_double, NULL, &st));
    CHECK_CODE(&st, TFC_ALREADY_EXISTS);
    REQUIRE(tfc_dataset_serialize(ds, &bytes, &size, &st));
    tfc_dataset *back = tfc_dataset_deserialize(bytes, size, &st);
    if (!back) fprintf(stderr, "%s\n", st.msg);
    REQUIRE(back);
    int64_t a[10], b[10];
    CHECK(drain_i64(ds, 0, a, 10, &st) == 10);
    CHECK(drain_i64(back, 0, b, 10, &st) == 10 && same_i64(a, b, 10)); /* the same seed: the same order */
    int64_t sum = 0;
    for (int i = 0; i < 10; i++) sum += b[i];
    CHECK(sum == 2 * (100 * 10 + 45));
    tfc_dataset_unref(back);
    tfc_free(bytes);
    tfc_dataset_unref(ds);

    /* generators have no graph form */
    tfc_dataset *r = tfc_dataset_range(0, 3, 1, 0, &st);
    tfc_dataset *z = tfc_dataset_zip((tfc_dataset *[]){r, tfc_dataset_range(0, 3, 1, 0, &st)}, 2, &st);
    CHECK(tfc_dataset_serialize(z, &bytes, &size, &st));
    CHECK(data_graph_split_rows(z, &st) < 0);
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(!data_graph_build(bytes, size, 0, 2, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_free(bytes);
    tfc_dataset_unref(z);
}

static void test_bad_bytes(void) {
    tfc_status st = TFC_STATUS_INIT;
    CHECK(!tfc_dataset_deserialize("garbage!", 8, &st));
    CHECK(st.code == TFC_DATA_LOSS || st.code == TFC_INVALID_ARGUMENT);
    /* a GraphDef whose node is not a dataset op */
    tfc_graphdef *gd = tfc_graphdef_new(&st);
    tfc_dtype types[1] = {TFC_INT64};
    tfc_shape shapes[1] = {{0}};
    tfc_attr a[3] = {{.name = "output_types", .kind = TFC_ATTR_LIST_TYPE, .n = 1, .v.types = types},
                     TFC_ATTR_SHAPES("output_shapes", shapes, 1), TFC_ATTR_S("_structure", ".")};
    REQUIRE(tfc_graphdef_add_node(gd, TFC_GRAPHDEF_TOP, "x", "NotADataset", NULL, 0, a, 3, &st));
    void *bytes = NULL;
    size_t size = 0;
    REQUIRE(tfc_graphdef_serialize(gd, &bytes, &size, &st));
    CHECK(!tfc_dataset_deserialize(bytes, size, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "NotADataset") != NULL);
    tfc_free(bytes);
    tfc_graphdef_free(gd);
}

int main(void) {
    srand((unsigned)time(NULL));
    test_round_trip();
    test_tensor_slices_and_callbacks();
    test_bad_bytes();
    printf("%d checks, %d failures\n", tfc_test_checks, tfc_test_failures);
    return tfc_test_failures != 0;
}
