/* GraphDef reading, validation and writing: a round trip, every validation error on hostile graphs built
 * here, truncated and deeply nested bytes, 10^6-node graphs, and allocation failures. */
#include <time.h>

#include "proto/graph.pb-c.h"
#include "tfc_test.h"

static const int64_t two[1] = {2};

/* x = Placeholder(float [2]); c = Const([1.5, -2]); add = AddV2(x, c) */
static tfc_graphdef *small_graph(tfc_status *st) {
    tfc_graphdef *g = tfc_graphdef_new(st);
    REQUIRE(g);
    float cv[2] = {1.5f, -2.0f};
    tfc_tensor *c = tfc_tensor_from_data(TFC_FLOAT, two, 1, cv, sizeof cv, st);
    REQUIRE(c);
    tfc_attr xa[] = {TFC_ATTR_T("dtype", TFC_FLOAT), TFC_ATTR_SHAPE_("shape", two, 1)};
    tfc_attr ca[] = {TFC_ATTR_T("dtype", TFC_FLOAT), {.name = "value", .kind = TFC_ATTR_TENSOR, .v.tensor = c}};
    tfc_attr aa[] = {TFC_ATTR_T("T", TFC_FLOAT)};
    const char *ins[] = {"x", "c:0"};
    REQUIRE(tfc_graphdef_add_node(g, TFC_GRAPHDEF_TOP, "x", "Placeholder", NULL, 0, xa, 2, st));
    REQUIRE(tfc_graphdef_add_node(g, TFC_GRAPHDEF_TOP, "c", "Const", NULL, 0, ca, 2, st));
    REQUIRE(tfc_graphdef_add_node(g, TFC_GRAPHDEF_TOP, "add", "AddV2", ins, 2, aa, 1, st));
    tfc_tensor_unref(c);
    return g;
}

static tfc_graphdef *roundtrip(tfc_graphdef *g, const tfc_graphdef_opts *opts, tfc_status *st) {
    void *data;
    size_t size;
    REQUIRE(tfc_graphdef_serialize(g, &data, &size, st));
    tfc_graphdef *h = tfc_graphdef_parse(data, size, opts, st);
    tfc_free(data);
    return h;
}

static void test_roundtrip(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_graphdef *g = small_graph(&st);
    CHECK(tfc_graphdef_validate(g, NULL, &st));
    CHECK_OK(&st);
    tfc_graphdef *h = roundtrip(g, NULL, &st);
    CHECK_OK(&st);
    REQUIRE(h);
    CHECK(tfc_graphdef_num_nodes(h, TFC_GRAPHDEF_TOP) == 3);
    int producer;
    tfc_graphdef_versions(h, &producer, NULL);
    CHECK(producer > 1000);
    tfc_graphdef_node_info nd;
    CHECK(tfc_graphdef_node(h, TFC_GRAPHDEF_TOP, 2, &nd));
    CHECK(!strcmp(nd.name, "add") && !strcmp(nd.op, "AddV2") && nd.n_inputs == 2 && nd.n_outputs == 1);
    CHECK(!strcmp(nd.inputs[1], "c:0"));
    CHECK(tfc_graphdef_find_node(h, TFC_GRAPHDEF_TOP, "c") == 1);
    CHECK(tfc_graphdef_find_node(h, TFC_GRAPHDEF_TOP, "nope") == -1);
    tfc_attr a;
    CHECK(tfc_graphdef_node_attr(h, TFC_GRAPHDEF_TOP, 1, "value", &a, &st));
    CHECK(a.kind == TFC_ATTR_TENSOR && tfc_tensor_num_elements(a.v.tensor) == 2);
    CHECK(tfc_tensor_get_f64(a.v.tensor, 0) == 1.5 && tfc_tensor_get_f64(a.v.tensor, 1) == -2.0);
    CHECK(tfc_graphdef_node_attr(h, TFC_GRAPHDEF_TOP, 0, "shape", &a, &st));
    CHECK(a.kind == TFC_ATTR_SHAPE && a.n == 1 && a.v.ints[0] == 2);
    CHECK(!tfc_graphdef_node_attr(h, TFC_GRAPHDEF_TOP, 0, "nope", &a, &st));
    CHECK_CODE(&st, TFC_NOT_FOUND);
    tfc_graphdef_free(h);
    /* written to a file and read back */
    const char *path = "test_graphdef_roundtrip.pb";
    CHECK(tfc_graphdef_write(g, path, &st));
    h = tfc_graphdef_read(path, NULL, &st);
    CHECK(h && tfc_graphdef_num_nodes(h, TFC_GRAPHDEF_TOP) == 3);
    tfc_graphdef_free(h);
    remove(path);
    h = tfc_graphdef_read("no/such/file.pb", NULL, &st);
    CHECK(!h);
    CHECK_CODE(&st, TFC_NOT_FOUND);
    tfc_graphdef_free(g);
}

/* Builds a graph with `extra` appended to small_graph and expects validation to fail with code and a
 * message containing `needle`. */
static void expect_bad(tfc_graphdef *g, tfc_code code, const char *needle, int line) {
    tfc_status st = TFC_STATUS_INIT;
    bool ok = tfc_graphdef_validate(g, NULL, &st);
    tfc_test_checks++;
    if (ok || st.code != code || !strstr(st.msg, needle)) {
        tfc_test_failures++;
        fprintf(stderr, "line %d: expected %s containing \"%s\", got %s: %s\n", line, tfc_code_name(code), needle,
                tfc_code_name(st.code), st.msg);
    }
    /* and the same through bytes */
    tfc_graphdef *h = roundtrip(g, NULL, &st);
    tfc_test_checks++;
    if (h || st.code != code) {
        tfc_test_failures++;
        fprintf(stderr, "line %d: parse: expected %s, got %s: %s\n", line, tfc_code_name(code), tfc_code_name(st.code),
                st.msg);
    }
    tfc_graphdef_free(h);
    tfc_graphdef_free(g);
}
#define EXPECT_BAD(g, code, needle) expect_bad(g, code, needle, __LINE__)

static tfc_graphdef *plus(const char *name, const char *op, const char **ins, int n_in, const tfc_attr *attrs, int n_attrs) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_graphdef *g = small_graph(&st);
    REQUIRE(tfc_graphdef_add_node(g, TFC_GRAPHDEF_TOP, name, op, ins, n_in, attrs, n_attrs, &st));
    return g;
}

static void test_bad_nodes(void) {
    tfc_attr tf = TFC_ATTR_T("T", TFC_FLOAT);
    const char *xx[] = {"x", "x"};
    EXPECT_BAD(plus("y", "NoSuchOp", xx, 2, &tf, 1), TFC_NOT_FOUND, "Op type not registered 'NoSuchOp'");
    EXPECT_BAD(plus("y", "AddV2", xx, 2, NULL, 0), TFC_INVALID_ARGUMENT, "NodeDef missing attr 'T'");
    tfc_attr ti = TFC_ATTR_I("T", 3);
    EXPECT_BAD(plus("y", "AddV2", xx, 2, &ti, 1), TFC_INVALID_ARGUMENT, "type 'int' when 'type' expected for attr 'T'");
    tfc_attr tc = TFC_ATTR_T("T", (tfc_dtype)8); /* complex64: not tfc's */
    EXPECT_BAD(plus("y", "AddV2", xx, 2, &tc, 1), TFC_INVALID_ARGUMENT, "dtype 8 is not a dtype tfc supports");
    const char *missing[] = {"x", "ghost"};
    EXPECT_BAD(plus("y", "AddV2", missing, 2, &tf, 1), TFC_INVALID_ARGUMENT, "Node 'y': Unknown input node 'ghost'");
    const char *badout[] = {"x", "add:3"};
    EXPECT_BAD(plus("y", "AddV2", badout, 2, &tf, 1), TFC_INVALID_ARGUMENT, "invalid output 3 of source node add");
    const char *malformed[] = {"x", "add:1x"};
    EXPECT_BAD(plus("y", "AddV2", malformed, 2, &tf, 1), TFC_INVALID_ARGUMENT, "malformed input 'add:1x'");
    const char *one[] = {"x"};
    EXPECT_BAD(plus("y", "AddV2", one, 1, &tf, 1), TFC_INVALID_ARGUMENT, "1 data inputs given, the op takes 2");
    const char *after_ctl[] = {"^x", "x", "x"};
    EXPECT_BAD(plus("y", "AddV2", after_ctl, 3, &tf, 1), TFC_INVALID_ARGUMENT, "follows a control input");
    EXPECT_BAD(plus("add", "AddV2", xx, 2, &tf, 1), TFC_INVALID_ARGUMENT, "Duplicate node name in graph: 'add'");
    EXPECT_BAD(plus("bad name!", "AddV2", xx, 2, &tf, 1), TFC_INVALID_ARGUMENT, "invalid name 'bad name!'");
    tfc_attr pad = TFC_ATTR_S("T", "float");
    EXPECT_BAD(plus("y", "AddV2", xx, 2, &pad, 1), TFC_INVALID_ARGUMENT, "type 'string' when 'type' expected");
    /* a cycle: y = AddV2(x, z), z = Identity(y) */
    tfc_status st = TFC_STATUS_INIT;
    const char *yin[] = {"x", "z"}, *zin[] = {"y"};
    tfc_graphdef *g = plus("y", "AddV2", yin, 2, &tf, 1);
    REQUIRE(tfc_graphdef_add_node(g, TFC_GRAPHDEF_TOP, "z", "Identity", zin, 1, &tf, 1, &st));
    EXPECT_BAD(g, TFC_INVALID_ARGUMENT, "Graph has a cycle: 'z' <- 'y'");
    /* a control-edge self loop */
    const char *self[] = {"x", "x", "^y"};
    EXPECT_BAD(plus("y", "AddV2", self, 3, &tf, 1), TFC_INVALID_ARGUMENT, "cycle");
}

static void test_bad_values(void) {
    tfc_status st = TFC_STATUS_INIT;
    const int64_t neg[1] = {-5};
    tfc_attr ph[] = {TFC_ATTR_T("dtype", TFC_FLOAT), TFC_ATTR_SHAPE_("shape", neg, 1)};
    EXPECT_BAD(plus("p", "Placeholder", NULL, 0, ph, 2), TFC_INVALID_ARGUMENT, "dim 0 has size -5");
    const int64_t huge[3] = {INT64_C(1) << 31, -1, INT64_C(1) << 33};
    tfc_attr phh[] = {TFC_ATTR_T("dtype", TFC_FLOAT), TFC_ATTR_SHAPE_("shape", huge, 3)};
    EXPECT_BAD(plus("p", "Placeholder", NULL, 0, phh, 2), TFC_INVALID_ARGUMENT, "attr 'shape': shape [2147483648,?,8589934592]... is too large");
    tfc_attr noval[] = {TFC_ATTR_T("dtype", TFC_FLOAT)};
    EXPECT_BAD(plus("k", "Const", NULL, 0, noval, 1), TFC_INVALID_ARGUMENT, "missing attr 'value'");
    /* tensors: hand-made TensorProtos through the wire */
    Tensorflow__TensorShapeProto__Dim d0 = TENSORFLOW__TENSOR_SHAPE_PROTO__DIM__INIT, d1 = TENSORFLOW__TENSOR_SHAPE_PROTO__DIM__INIT;
    Tensorflow__TensorShapeProto__Dim *dims[2] = {&d0, &d1};
    Tensorflow__TensorShapeProto shp = TENSORFLOW__TENSOR_SHAPE_PROTO__INIT;
    shp.dim = dims;
    Tensorflow__TensorProto tp = TENSORFLOW__TENSOR_PROTO__INIT;
    tp.dtype = TENSORFLOW__DATA_TYPE__DT_FLOAT;
    tp.tensor_shape = &shp;
    uint8_t buf[4096];
    struct { int64_t a, b; int n; const char *content; size_t clen; float v; size_t nv; size_t max; const char *needle; } cases[] = {
        {(int64_t)1 << 40, (int64_t)1 << 40, 2, NULL, 0, 1.0f, 1, 0, "is too large (more than 2^63-1 elements)"},
        {-3, 2, 2, NULL, 0, 1.0f, 1, 0, "dim 0 has size -3"},
        {-1, 2, 2, NULL, 0, 1.0f, 1, 0, "not fully defined"},
        {2, 3, 2, "abcd", 4, 0, 0, 0, "tensor_content has 4 bytes, but shape [2,3] of float32 needs 24"},
        {1 << 20, 1 << 20, 2, NULL, 0, 1.0f, 1, 1 << 20, "over the limit of 1048576"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        d0.size = cases[i].a;
        d1.size = cases[i].b;
        shp.n_dim = (size_t)cases[i].n;
        tp.tensor_content.data = (uint8_t *)cases[i].content;
        tp.tensor_content.len = cases[i].clen;
        tp.float_val = &cases[i].v;
        tp.n_float_val = cases[i].nv;
        size_t n = tensorflow__tensor_proto__pack(&tp, buf);
        tfc_tensor *t = tfc_tensor_from_proto(buf, n, cases[i].max, &st);
        CHECK(!t);
        CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
        if (!strstr(st.msg, cases[i].needle)) {
            tfc_test_failures++;
            fprintf(stderr, "tensor case %zu: \"%s\" lacks \"%s\"\n", i, st.msg, cases[i].needle);
        }
        tfc_tensor_unref(t);
    }
    /* the fill rule within the limit, and dtypes outside tfc's set */
    d0.size = 3;
    shp.n_dim = 1;
    tp.tensor_content.len = 0;
    float fv[2] = {7.0f, -1.0f};
    tp.float_val = fv;
    tp.n_float_val = 2;
    size_t n = tensorflow__tensor_proto__pack(&tp, buf);
    tfc_tensor *t = tfc_tensor_from_proto(buf, n, 0, &st);
    CHECK(t && tfc_tensor_get_f64(t, 0) == 7 && tfc_tensor_get_f64(t, 1) == -1 && tfc_tensor_get_f64(t, 2) == -1);
    tfc_tensor_unref(t);
    tp.dtype = TENSORFLOW__DATA_TYPE__DT_COMPLEX64;
    n = tensorflow__tensor_proto__pack(&tp, buf);
    CHECK(!tfc_tensor_from_proto(buf, n, 0, &st));
    CHECK(strstr(st.msg, "dtype 8 is not supported") != NULL);
}

/* f calls itself through a PartitionedCall; g and h call each other by op name. */
static void test_recursion_and_functions(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_graphdef_arg in = {"a", TFC_FLOAT}, out = {"r", TFC_FLOAT};
    const char *ret_id[] = {"id:output:0"};
    tfc_graphdef *g = tfc_graphdef_new(&st);
    int f = tfc_graphdef_add_function(g, "f", &in, 1, &out, ret_id, 1, &st);
    REQUIRE(f == 0);
    const tfc_dtype fl[1] = {TFC_FLOAT};
    tfc_attr call[] = {{.name = "Tin", .kind = TFC_ATTR_LIST_TYPE, .n = 1, .v.types = fl},
                       {.name = "Tout", .kind = TFC_ATTR_LIST_TYPE, .n = 1, .v.types = fl}, TFC_ATTR_FN("f", "f")};
    const char *a_in[] = {"a"}, *c_in[] = {"c:output:0"};
    tfc_attr tf = TFC_ATTR_T("T", TFC_FLOAT);
    REQUIRE(tfc_graphdef_add_node(g, f, "c", "PartitionedCall", a_in, 1, call, 3, &st));
    REQUIRE(tfc_graphdef_add_node(g, f, "id", "Identity", c_in, 1, &tf, 1, &st));
    EXPECT_BAD(g, TFC_INVALID_ARGUMENT, "function 'f' calls itself (f -> f)");

    g = tfc_graphdef_new(&st);
    REQUIRE(tfc_graphdef_add_function(g, "g", &in, 1, &out, (const char *[]){"call:r:0"}, 1, &st) == 0);
    REQUIRE(tfc_graphdef_add_function(g, "h", &in, 1, &out, (const char *[]){"call:r:0"}, 1, &st) == 1);
    REQUIRE(tfc_graphdef_add_node(g, 0, "call", "h", a_in, 1, NULL, 0, &st));
    REQUIRE(tfc_graphdef_add_node(g, 1, "call", "g", a_in, 1, NULL, 0, &st));
    EXPECT_BAD(g, TFC_INVALID_ARGUMENT, "calls itself (g -> h -> g)");

    /* a valid function, called from the graph; then broken in several ways */
    for (int variant = 0; variant < 5; variant++) {
        g = tfc_graphdef_new(&st);
        const char *ret = variant == 1 ? "id:nosuch:0" : variant == 2 ? "id:output:1" : variant == 3 ? "ghost" : "id:output:0";
        REQUIRE(tfc_graphdef_add_function(g, "fn", &in, 1, &out, &ret, 1, &st) == 0);
        REQUIRE(tfc_graphdef_add_node(g, 0, "id", "Identity", variant == 4 ? (const char *[]){"a:0"} : a_in, 1, &tf, 1, &st));
        tfc_attr ph[] = {TFC_ATTR_T("dtype", TFC_FLOAT)};
        REQUIRE(tfc_graphdef_add_node(g, TFC_GRAPHDEF_TOP, "x", "Placeholder", NULL, 0, ph, 1, &st));
        REQUIRE(tfc_graphdef_add_node(g, TFC_GRAPHDEF_TOP, "y", "fn", (const char *[]){"x"}, 1, NULL, 0, &st));
        REQUIRE(tfc_graphdef_add_node(g, TFC_GRAPHDEF_TOP, "z", "Identity", (const char *[]){"y:0"}, 1, &tf, 1, &st));
        if (variant == 0) {
            tfc_graphdef *h = roundtrip(g, NULL, &st);
            CHECK_OK(&st);
            CHECK(h && tfc_graphdef_num_functions(h) == 1 && tfc_graphdef_find_function(h, "fn") == 0);
            tfc_graphdef_function_info fi;
            tfc_graphdef_arg a;
            const char *r;
            CHECK(h && tfc_graphdef_function(h, 0, &fi) && fi.n_inputs == 1 && fi.n_outputs == 1 && fi.n_nodes == 1);
            CHECK(h && tfc_graphdef_function_arg(h, 0, true, 0, &a, &r) && !strcmp(a.name, "r") && a.type == TFC_FLOAT &&
                  !strcmp(r, "id:output:0"));
            tfc_graphdef_free(h);
            tfc_graphdef_free(g);
        } else {
            EXPECT_BAD(g, TFC_INVALID_ARGUMENT, variant == 1 ? "has no output named 'nosuch'"
                                                : variant == 2 ? "element 1 of output 'output'"
                                                : variant == 3 ? "ret 'r'"
                                                               : "malformed input 'a:0'");
        }
    }
    /* a function attr naming nothing */
    g = tfc_graphdef_new(&st);
    tfc_attr ph[] = {TFC_ATTR_T("dtype", TFC_FLOAT)};
    REQUIRE(tfc_graphdef_add_node(g, TFC_GRAPHDEF_TOP, "x", "Placeholder", NULL, 0, ph, 1, &st));
    REQUIRE(tfc_graphdef_add_node(g, TFC_GRAPHDEF_TOP, "c", "PartitionedCall", (const char *[]){"x"}, 1, call, 3, &st));
    EXPECT_BAD(g, TFC_NOT_FOUND, "attr 'f' names function 'f', which is not in the graph's library");
}

/* small_graph's serialised bytes (tfc_free them). */
static void *small_bytes(size_t *size) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_graphdef *g = small_graph(&st);
    void *data;
    REQUIRE(tfc_graphdef_serialize(g, &data, size, &st));
    tfc_graphdef_free(g);
    return data;
}

static void test_bytes(void) {
    tfc_status st = TFC_STATUS_INIT;
    size_t size;
    void *data = small_bytes(&size);
    int failed = 0;
    for (size_t cut = 0; cut < size; cut++) { /* every prefix: a valid shorter graph or a clean error */
        tfc_graphdef *h = tfc_graphdef_parse(data, cut, NULL, &st);
        CHECK(h || st.code == TFC_DATA_LOSS || st.code == TFC_INVALID_ARGUMENT);
        failed += !h;
        tfc_graphdef_free(h);
    }
    CHECK(failed > (int)size / 2);
    tfc_graphdef *h = tfc_graphdef_parse(data, size - 1, NULL, &st);
    CHECK(!h);
    CHECK_CODE(&st, TFC_DATA_LOSS);
    tfc_graphdef_opts small = {.max_bytes = size - 1};
    CHECK(!tfc_graphdef_parse(data, size, &small, &st));
    CHECK(strstr(st.msg, "exceed the limit") != NULL);
    tfc_free(data);
    /* nesting: node { attr { value { list { func { attr { value { list { func ... */
    enum { LEVELS = 60 };
    static uint8_t deep[LEVELS * 32];
    size_t len = 0;
    uint8_t tmp[sizeof deep];
    for (int i = 0; i < LEVELS; i++) { /* innermost first: NameAttrList{name:"f", attr{key:"k", value:AttrValue{func:<prev>}}} */
        uint8_t av[sizeof deep];
        size_t an = 0;
        av[an++] = 0x52; /* AttrValue.func (10, LEN) */
        av[an++] = (uint8_t)(len < 128 ? len : 0);
        if (len >= 128) { av[an - 1] = (uint8_t)(0x80 | (len & 0x7f)); av[an++] = (uint8_t)(len >> 7); }
        memcpy(av + an, deep, len);
        an += len;
        size_t tn = 0; /* entry: key "k", value av */
        tmp[tn++] = 0x0a; tmp[tn++] = 1; tmp[tn++] = 'k';
        tmp[tn++] = 0x12;
        if (an < 128) tmp[tn++] = (uint8_t)an; else { tmp[tn++] = (uint8_t)(0x80 | (an & 0x7f)); tmp[tn++] = (uint8_t)(an >> 7); }
        memcpy(tmp + tn, av, an);
        tn += an;
        len = 0; /* NameAttrList: name "f", attr entry */
        deep[len++] = 0x0a; deep[len++] = 1; deep[len++] = 'f';
        deep[len++] = 0x12;
        if (tn < 128) deep[len++] = (uint8_t)tn; else { deep[len++] = (uint8_t)(0x80 | (tn & 0x7f)); deep[len++] = (uint8_t)(tn >> 7); }
        memcpy(deep + len, tmp, tn);
        len += tn;
    }
    /* wrap: GraphDef.node { name "n" op "NoOp" attr { key "a" value { func <deep> } } } */
    static uint8_t wire[sizeof deep + 64];
    uint8_t av[sizeof deep + 16], ent[sizeof deep + 32], node[sizeof deep + 48];
    size_t an = 0, en = 0, nn = 0, wn = 0;
#define PUT_LEN(buf, k, n) do { if ((n) < 128) buf[k++] = (uint8_t)(n); else { buf[k++] = (uint8_t)(0x80 | ((n) & 0x7f)); buf[k++] = (uint8_t)((n) >> 7); } } while (0)
    av[an++] = 0x52; PUT_LEN(av, an, len); memcpy(av + an, deep, len); an += len;
    ent[en++] = 0x0a; ent[en++] = 1; ent[en++] = 'a'; ent[en++] = 0x12; PUT_LEN(ent, en, an); memcpy(ent + en, av, an); en += an;
    memcpy(node + nn, "\x0a\x01n\x12\x04NoOp", 9); nn += 9;
    node[nn++] = 0x2a; PUT_LEN(node, nn, en); memcpy(node + nn, ent, en); nn += en;
    wire[wn++] = 0x0a; PUT_LEN(wire, wn, nn); memcpy(wire + wn, node, nn); wn += nn;
    h = tfc_graphdef_parse(wire, wn, NULL, &st);
    CHECK(!h);
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "nested deeper than 100") != NULL);
    /* garbage */
    const uint8_t junk[] = {0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01};
    CHECK(!tfc_graphdef_parse(junk, sizeof junk, NULL, &st));
    CHECK_CODE(&st, TFC_DATA_LOSS);
    const uint8_t group[] = {0x0b, 0x0c};
    CHECK(!tfc_graphdef_parse(group, sizeof group, NULL, &st));
    CHECK_CODE(&st, TFC_DATA_LOSS);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* 10^6 nodes: a chain of Identity (valid), then the same closed into one big cycle. */
static void test_million(void) {
    enum { N = 1000000 };
    tfc_status st = TFC_STATUS_INIT;
    tfc_graphdef *g = tfc_graphdef_new(&st);
    tfc_attr ph[] = {TFC_ATTR_T("dtype", TFC_FLOAT)};
    tfc_attr tf = TFC_ATTR_T("T", TFC_FLOAT);
    REQUIRE(tfc_graphdef_add_node(g, TFC_GRAPHDEF_TOP, "n0", "Placeholder", NULL, 0, ph, 1, &st));
    char name[32], prev[32] = "n0";
    for (int i = 1; i < N; i++) {
        snprintf(name, sizeof name, "n%d", i);
        const char *in[1] = {prev};
        REQUIRE(tfc_graphdef_add_node(g, TFC_GRAPHDEF_TOP, name, "Identity", in, 1, &tf, 1, &st));
        memcpy(prev, name, sizeof name);
    }
    double t0 = now_s();
    tfc_graphdef *h = roundtrip(g, NULL, &st);
    double t1 = now_s();
    CHECK_OK(&st);
    CHECK(h && tfc_graphdef_num_nodes(h, TFC_GRAPHDEF_TOP) == N);
    CHECK(h && tfc_graphdef_find_node(h, TFC_GRAPHDEF_TOP, "n777777") == 777777);
    printf("10^6-node chain: serialise + parse + validate %.2f s\n", t1 - t0);
    tfc_graphdef_free(h);
    tfc_graphdef_free(g);
    /* the cycle: n0 = Identity(n999999) */
    g = tfc_graphdef_new(&st);
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "n%d", i);
        snprintf(prev, sizeof prev, "n%d", (i + N - 1) % N);
        const char *in[1] = {prev};
        REQUIRE(tfc_graphdef_add_node(g, TFC_GRAPHDEF_TOP, name, "Identity", in, 1, &tf, 1, &st));
    }
    t0 = now_s();
    CHECK(!tfc_graphdef_validate(g, NULL, &st));
    CHECK(strstr(st.msg, "cycle") != NULL);
    printf("10^6-node cycle found in %.2f s\n", now_s() - t0);
    tfc_graphdef_free(g);
}

/* Every allocation of a parse failing in turn: a clean error (or success), never a crash or a leak. */
static void test_alloc_failures(void) {
    tfc_status st = TFC_STATUS_INIT;
    size_t size;
    void *data = small_bytes(&size);
    int n, oom = 0;
    for (n = 0; n < 500; n++) {
        tfc_alloc_fail_once_after(n);
        tfc_graphdef *h = tfc_graphdef_parse(data, size, NULL, &st);
        int64_t failures = tfc_alloc_failures();
        tfc_alloc_fail_once_after(-1);
        if (h) {
            tfc_graphdef_free(h);
            if (!failures) break;
        } else {
            CHECK_CODE(&st, TFC_RESOURCE_EXHAUSTED);
            oom++;
        }
    }
    CHECK(n < 500 && oom > 5);
    tfc_free(data);
}

int main(void) {
    test_roundtrip();
    test_bad_nodes();
    test_bad_values();
    test_recursion_and_functions();
    test_bytes();
    test_alloc_failures();
    test_million();
    TEST_MAIN_END();
}
