/* tfc_tensor <-> TensorProto for every dtype tfc has (both encodings, the fill rule, every rejection),
 * TensorShapeProto, and tfc_attr <-> AttrValue for every kind. */
#include "proto/proto_internal.h"
#include "tfc_test.h"

static const tfc_dtype all_dtypes[] = {TFC_FLOAT, TFC_DOUBLE, TFC_INT32, TFC_UINT8, TFC_INT16,    TFC_INT8,
                                       TFC_INT64, TFC_BOOL,   TFC_HALF,  TFC_BFLOAT16, TFC_UINT16, TFC_STRING};

static tfc_tensor *sample(tfc_dtype dt, const int64_t *dims, int rank, tfc_status *st) {
    tfc_tensor *t = tfc_tensor_new(dt, dims, rank, st);
    REQUIRE(t);
    int64_t n = tfc_tensor_num_elements(t);
    void *d = tfc_tensor_mutable_data(t);
    for (int64_t i = 0; i < n; i++) {
        if (dt == TFC_STRING) {
            char s[40];
            int len = snprintf(s, sizeof s, i % 3 ? "s%lld" : "a longer string element number %lld", (long long)i);
            REQUIRE(tfc_tstring_copy(&((tfc_tstring *)d)[i], s, (size_t)len, st));
        } else {
            tfc_dtype_set_f64(dt, d, i, dt == TFC_BOOL ? (double)(i % 2) : (double)((i * 7) % 11) - 3.0 * (dt != TFC_UINT8 && dt != TFC_UINT16));
        }
    }
    return t;
}

static bool same(const tfc_tensor *a, const tfc_tensor *b) {
    if (tfc_tensor_dtype(a) != tfc_tensor_dtype(b) || !tfc_shape_equal(tfc_tensor_shape(a), tfc_tensor_shape(b))) return false;
    if (tfc_tensor_dtype(a) != TFC_STRING) return !memcmp(tfc_tensor_data(a), tfc_tensor_data(b), tfc_tensor_byte_size(a));
    for (int64_t i = 0; i < tfc_tensor_num_elements(a); i++) {
        size_t la, lb;
        const char *sa = tfc_tensor_string(a, i, &la), *sb = tfc_tensor_string(b, i, &lb);
        if (la != lb || memcmp(sa, sb, la)) return false;
    }
    return true;
}

static void test_roundtrip_all_dtypes(void) {
    tfc_status st = TFC_STATUS_INIT;
    const int64_t shapes[][3] = {{2, 3, 2}, {1, 1, 1}, {0, 4, 1}};
    const int ranks[] = {3, 0, 2};
    for (size_t d = 0; d < sizeof all_dtypes / sizeof all_dtypes[0]; d++)
        for (int s = 0; s < 3; s++) {
            tfc_tensor *t = sample(all_dtypes[d], shapes[s], ranks[s], &st);
            void *bytes;
            size_t n;
            REQUIRE(tfc_tensor_to_proto(t, &bytes, &n, &st));
            tfc_tensor *u = tfc_tensor_from_proto(bytes, n, 0, &st);
            CHECK_OK(&st);
            if (!u || !same(t, u)) {
                tfc_test_failures++;
                fprintf(stderr, "round trip of %s rank %d differs\n", tfc_dtype_name(all_dtypes[d]), ranks[s]);
            }
            /* the encoding TensorFlow uses: scalars in the typed field, strings in string_val */
            Tensorflow__TensorProto *p = (Tensorflow__TensorProto *)tfc_pb_unpack(&tensorflow__tensor_proto__descriptor,
                                                                                  bytes, n, 0, "t", &st);
            REQUIRE(p);
            CHECK((int)p->dtype == (int)all_dtypes[d]);
            if (all_dtypes[d] == TFC_STRING) CHECK(p->n_string_val == (size_t)tfc_tensor_num_elements(t));
            else if (ranks[s] == 0) CHECK(p->tensor_content.len == 0);
            else CHECK(p->tensor_content.len == tfc_tensor_byte_size(t));
            if (all_dtypes[d] == TFC_HALF && ranks[s] == 0) CHECK(p->n_half_val == 1);
            tfc_pb_free(p);
            tfc_free(bytes);
            tfc_tensor_unref(t);
            tfc_tensor_unref(u);
        }
}

/* Typed fields shorter than the shape repeat their last value; none gives zeros; each dtype's own field. */
static void test_typed_fields(void) {
    tfc_status st = TFC_STATUS_INIT;
    Tensorflow__TensorShapeProto__Dim dim = TENSORFLOW__TENSOR_SHAPE_PROTO__DIM__INIT, *dims[1] = {&dim};
    Tensorflow__TensorShapeProto shp = TENSORFLOW__TENSOR_SHAPE_PROTO__INIT;
    shp.dim = dims;
    shp.n_dim = 1;
    dim.size = 5;
    Tensorflow__TensorProto p = TENSORFLOW__TENSOR_PROTO__INIT;
    p.tensor_shape = &shp;
    int32_t iv[2] = {300, -2};
    p.int_val = iv;
    p.n_int_val = 2;
    const tfc_dtype int_types[] = {TFC_INT32, TFC_INT16, TFC_INT8, TFC_UINT8, TFC_UINT16};
    for (size_t k = 0; k < 5; k++) {
        p.dtype = (Tensorflow__DataType)int_types[k];
        tfc_tensor *t = tfc_pb_tensor_from_proto(&p, 0, "t", &st);
        REQUIRE(t);
        double first = int_types[k] == TFC_INT8 ? 44 : int_types[k] == TFC_UINT8 ? 44 : 300; /* static_cast wraps */
        double rest = int_types[k] == TFC_UINT8 ? 254 : int_types[k] == TFC_UINT16 ? 65534 : -2;
        CHECK(tfc_tensor_get_f64(t, 0) == first);
        for (int i = 1; i < 5; i++) CHECK(tfc_tensor_get_f64(t, i) == rest);
        tfc_tensor_unref(t);
    }
    p.int_val = NULL;
    p.n_int_val = 0;
    /* half_val holds bit patterns for half and bfloat16 */
    int32_t hv[1] = {tfc_half_from_float(-1.5f).bits};
    p.dtype = TENSORFLOW__DATA_TYPE__DT_HALF;
    p.half_val = hv;
    p.n_half_val = 1;
    tfc_tensor *t = tfc_pb_tensor_from_proto(&p, 0, "t", &st);
    REQUIRE(t);
    for (int i = 0; i < 5; i++) CHECK(tfc_tensor_get_f64(t, i) == -1.5);
    tfc_tensor_unref(t);
    hv[0] = tfc_bfloat16_from_float(3.0f).bits;
    p.dtype = TENSORFLOW__DATA_TYPE__DT_BFLOAT16;
    t = tfc_pb_tensor_from_proto(&p, 0, "t", &st);
    CHECK(t && tfc_tensor_get_f64(t, 4) == 3.0);
    tfc_tensor_unref(t);
    p.half_val = NULL;
    p.n_half_val = 0;
    /* strings */
    ProtobufCBinaryData sv[2] = {{1, (uint8_t *)"a"}, {3, (uint8_t *)"b\0c"}};
    p.dtype = TENSORFLOW__DATA_TYPE__DT_STRING;
    p.string_val = sv;
    p.n_string_val = 2;
    t = tfc_pb_tensor_from_proto(&p, 0, "t", &st);
    REQUIRE(t);
    size_t len;
    const char *s = tfc_tensor_string(t, 4, &len);
    CHECK(len == 3 && !memcmp(s, "b\0c", 3));
    tfc_tensor_unref(t);
    p.string_val = NULL;
    p.n_string_val = 0;
    /* no values: zeros; int64 and bool fields */
    p.dtype = TENSORFLOW__DATA_TYPE__DT_INT64;
    t = tfc_pb_tensor_from_proto(&p, 0, "t", &st);
    CHECK(t && tfc_tensor_get_f64(t, 3) == 0);
    tfc_tensor_unref(t);
    int64_t lv[1] = {INT64_C(1) << 40};
    p.int64_val = lv;
    p.n_int64_val = 1;
    t = tfc_pb_tensor_from_proto(&p, 0, "t", &st);
    CHECK(t && ((const int64_t *)tfc_tensor_data(t))[4] == INT64_C(1) << 40);
    tfc_tensor_unref(t);
    /* rejections: values in another dtype's field, more values than elements, content on strings */
    p.dtype = TENSORFLOW__DATA_TYPE__DT_FLOAT;
    CHECK(!tfc_pb_tensor_from_proto(&p, 0, "t", &st));
    CHECK(strstr(st.msg, "has values in int64_val") != NULL);
    p.dtype = TENSORFLOW__DATA_TYPE__DT_INT64;
    dim.size = 0;
    CHECK(!tfc_pb_tensor_from_proto(&p, 0, "t", &st));
    CHECK(strstr(st.msg, "1 values in int64_val for shape [0]") != NULL);
    p.int64_val = NULL;
    p.n_int64_val = 0;
    p.dtype = TENSORFLOW__DATA_TYPE__DT_STRING;
    dim.size = 1;
    p.tensor_content.data = (uint8_t *)"x";
    p.tensor_content.len = 1;
    CHECK(!tfc_pb_tensor_from_proto(&p, 0, "t", &st));
    CHECK(strstr(st.msg, "string TensorProto with tensor_content") != NULL);
    p.dtype = TENSORFLOW__DATA_TYPE__DT_BOOL; /* bool bytes other than 0 and 1 read as true */
    p.tensor_content.data = (uint8_t *)"\x82";
    t = tfc_pb_tensor_from_proto(&p, 0, "t", &st);
    CHECK(t && ((const uint8_t *)tfc_tensor_data(t))[0] == 1);
    tfc_tensor_unref(t);
    p.dtype = TENSORFLOW__DATA_TYPE__DT_RESOURCE;
    CHECK(!tfc_pb_tensor_from_proto(&p, 0, "t", &st));
    CHECK(strstr(st.msg, "resource is not supported") != NULL);
    p.dtype = (Tensorflow__DataType)101; /* float_ref */
    CHECK(!tfc_pb_tensor_from_proto(&p, 0, "t", &st));
    CHECK(strstr(st.msg, "dtype 101") != NULL);
}

static void test_shapes(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_shape s = {.rank = 3, .dims = {2, -1, 0}}, u = {.rank = -1}, back;
    Tensorflow__TensorShapeProto *p = tfc_pb_shape_to_proto(&s, &st);
    REQUIRE(p);
    CHECK(tfc_pb_shape_from_proto(p, &back, "s", &st) && tfc_shape_equal(&s, &back));
    tfc_pb_free(p);
    p = tfc_pb_shape_to_proto(&u, &st);
    REQUIRE(p);
    CHECK(p->unknown_rank && tfc_pb_shape_from_proto(p, &back, "s", &st) && back.rank == -1);
    tfc_pb_free(p);
    Tensorflow__TensorShapeProto__Dim d = TENSORFLOW__TENSOR_SHAPE_PROTO__DIM__INIT, *dims[9];
    for (int i = 0; i < 9; i++) dims[i] = &d;
    Tensorflow__TensorShapeProto q = TENSORFLOW__TENSOR_SHAPE_PROTO__INIT;
    q.dim = dims;
    q.n_dim = 9;
    CHECK(!tfc_pb_shape_from_proto(&q, &back, "s", &st) && strstr(st.msg, "rank 9 exceeds"));
    q.n_dim = 1;
    q.unknown_rank = true;
    CHECK(!tfc_pb_shape_from_proto(&q, &back, "s", &st) && strstr(st.msg, "unknown_rank set and 1 dims"));
    q.unknown_rank = false;
    d.size = -2;
    CHECK(!tfc_pb_shape_from_proto(&q, &back, "s", &st) && strstr(st.msg, "size -2"));
    CHECK(tfc_pb_shape_from_proto(NULL, &back, "s", &st) && back.rank == 0);
}

static void test_attrs(void) {
    tfc_status st = TFC_STATUS_INIT;
    const int64_t ints[3] = {1, -2, 3}, sdims[2] = {-1, 4};
    const double floats[2] = {0.5, -1.25};
    const tfc_dtype types[2] = {TFC_FLOAT, TFC_RESOURCE};
    const char *strs[2] = {"SAME", ""};
    const tfc_shape shapes[2] = {{.rank = -1}, {.rank = 2, .dims = {3, -1}}};
    tfc_tensor *ten = tfc_scalar_i64(42, &st);
    const char *fns[2] = {"f1", "f2"};
    const tfc_attr attrs[] = {
        TFC_ATTR_I("i", -7), TFC_ATTR_F("f", 0.25), TFC_ATTR_B("b", true), TFC_ATTR_T("t", TFC_BFLOAT16),
        TFC_ATTR_S("s", "VALID"), {.name = "bin", .kind = TFC_ATTR_STRING, .n = 3, .v.s = "a\0b"},
        TFC_ATTR_SHAPE_("shape", sdims, 2), {.name = "unk", .kind = TFC_ATTR_SHAPE, .n = -1},
        {.name = "tensor", .kind = TFC_ATTR_TENSOR, .v.tensor = ten}, TFC_ATTR_INTS("li", ints, 3),
        TFC_ATTR_FLOATS("lf", floats, 2), {.name = "lt", .kind = TFC_ATTR_LIST_TYPE, .n = 2, .v.types = types},
        {.name = "ls", .kind = TFC_ATTR_LIST_STRING, .n = 2, .v.strs = strs}, TFC_ATTR_SHAPES("lsh", shapes, 2),
        TFC_ATTR_FN("fn", "my_fn"), {.name = "lfn", .kind = TFC_ATTR_LIST_FUNC, .n = 2, .v.strs = fns},
        TFC_ATTR_INTS("empty", ints, 0),
    };
    tfc_pb_arena *ar = tfc_pb_arena_new();
    for (size_t k = 0; k < sizeof attrs / sizeof attrs[0]; k++) {
        const tfc_attr *a = &attrs[k];
        Tensorflow__AttrValue *v = tfc_pb_attr_to_proto(a, &st);
        REQUIRE(v);
        uint8_t buf[512];
        size_t n = tensorflow__attr_value__pack(v, buf);
        tfc_pb_free(v);
        v = (Tensorflow__AttrValue *)tfc_pb_unpack(&tensorflow__attr_value__descriptor, buf, n, 0, "a", &st);
        REQUIRE(v);
        tfc_attr b;
        CHECK(tfc_pb_attr_from_proto(v, a->name, ar, 0, "node 'n'", &b, &st));
        CHECK_OK(&st);
        CHECK(b.kind == a->kind);
        bool eq = b.kind == a->kind;
        switch (a->kind) {
        case TFC_ATTR_INT: eq = eq && b.v.i == a->v.i; break;
        case TFC_ATTR_FLOAT: eq = eq && b.v.f == a->v.f; break;
        case TFC_ATTR_BOOL: eq = eq && b.v.b == a->v.b; break;
        case TFC_ATTR_TYPE: eq = eq && b.v.type == a->v.type; break;
        case TFC_ATTR_STRING: eq = eq && b.n == (a->n ? a->n : (int)strlen(a->v.s)) && !memcmp(b.v.s, a->v.s, (size_t)b.n); break;
        case TFC_ATTR_FUNC: eq = eq && !strcmp(b.v.s, a->v.s); break;
        case TFC_ATTR_SHAPE: eq = eq && b.n == a->n && (a->n <= 0 || !memcmp(b.v.ints, a->v.ints, 8 * (size_t)a->n)); break;
        case TFC_ATTR_TENSOR: eq = eq && tfc_tensor_get_f64(b.v.tensor, 0) == 42; break;
        case TFC_ATTR_LIST_INT: eq = eq && b.n == a->n && (!a->n || !memcmp(b.v.ints, a->v.ints, 8 * (size_t)a->n)); break;
        case TFC_ATTR_LIST_FLOAT: eq = eq && b.n == 2 && b.v.floats[0] == 0.5 && b.v.floats[1] == -1.25; break;
        case TFC_ATTR_LIST_TYPE: eq = eq && b.n == 2 && b.v.types[0] == TFC_FLOAT && b.v.types[1] == TFC_RESOURCE; break;
        case TFC_ATTR_LIST_STRING: case TFC_ATTR_LIST_FUNC:
            eq = eq && b.n == 2 && !strcmp(b.v.strs[0], a->v.strs[0]) && !strcmp(b.v.strs[1], a->v.strs[1]);
            break;
        case TFC_ATTR_LIST_SHAPE: eq = eq && b.n == 2 && tfc_shape_equal(&b.v.shapes[0], &shapes[0]) &&
                                       tfc_shape_equal(&b.v.shapes[1], &shapes[1]); break;
        default: break;
        }
        if (!eq) {
            tfc_test_failures++;
            fprintf(stderr, "attr '%s' did not round-trip\n", a->name);
        }
        tfc_pb_free(v);
    }
    /* values tfc_attr cannot hold, and bad ones */
    Tensorflow__AttrValue v;
    tensorflow__attr_value__init(&v);
    tfc_attr b;
    CHECK(!tfc_pb_attr_from_proto(&v, "x", ar, 0, "node 'n'", &b, &st) && strstr(st.msg, "node 'n': attr 'x' has no value"));
    v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_TYPE;
    v.type = (Tensorflow__DataType)21; /* variant */
    CHECK(!tfc_pb_attr_from_proto(&v, "T", ar, 0, "node 'n'", &b, &st) && strstr(st.msg, "dtype 21 is not a dtype tfc supports"));
    Tensorflow__AttrValue__ListValue l = TENSORFLOW__ATTR_VALUE__LIST_VALUE__INIT;
    protobuf_c_boolean bools[1] = {1};
    int64_t li[1] = {1};
    l.b = bools;
    l.n_b = 1;
    v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_LIST;
    v.list = &l;
    CHECK(!tfc_pb_attr_from_proto(&v, "lb", ar, 0, "node 'n'", &b, &st));
    CHECK_CODE(&st, TFC_UNIMPLEMENTED);
    l.i = li;
    l.n_i = 1;
    CHECK(!tfc_pb_attr_from_proto(&v, "lb", ar, 0, "node 'n'", &b, &st) && strstr(st.msg, "more than one kind"));
    CHECK(!strcmp(tfc_pb_attr_value_kind(&v), "list(mixed)"));
    tfc_pb_arena_free(ar);
    tfc_tensor_unref(ten);
}

/* AsProtoField (what TensorFlow Serving's Predict answers with): every value in the dtype's typed field, none in
 * tensor_content, and it decodes back to the same tensor. */
static void test_as_proto_field(void) {
    tfc_status st = TFC_STATUS_INIT;
    const int64_t dims[] = {2, 3};
    for (size_t d = 0; d < sizeof all_dtypes / sizeof all_dtypes[0]; d++) {
        tfc_tensor *t = sample(all_dtypes[d], dims, 2, &st);
        Tensorflow__TensorProto *p = tfc_pb_tensor_to_proto_field(t, "t", &st);
        REQUIRE(p);
        CHECK(p->tensor_content.len == 0);
        size_t n = 0;
        switch (all_dtypes[d]) {
        case TFC_FLOAT: n = p->n_float_val; break;
        case TFC_DOUBLE: n = p->n_double_val; break;
        case TFC_INT64: n = p->n_int64_val; break;
        case TFC_BOOL: n = p->n_bool_val; break;
        case TFC_HALF: case TFC_BFLOAT16: n = p->n_half_val; break;
        case TFC_STRING: n = p->n_string_val; break;
        default: n = p->n_int_val; break;
        }
        CHECK(n == 6);
        tfc_tensor *u = tfc_pb_tensor_from_proto(p, 0, "t", &st);
        CHECK_OK(&st);
        if (!u || !same(t, u)) {
            tfc_test_failures++;
            fprintf(stderr, "AsProtoField round trip of %s differs\n", tfc_dtype_name(all_dtypes[d]));
        }
        if (all_dtypes[d] == TFC_FLOAT) CHECK(p->float_val[4] == ((const float *)tfc_tensor_data(t))[4]);
        tfc_pb_free(p);
        tfc_tensor_unref(t);
        tfc_tensor_unref(u);
    }
}

/* The decoded-size limit counts the strings that repeated-value filling copies: one 1000-byte string_val with
 * shape [100000] asks for 100 MB. */
static void test_string_fill_limit(void) {
    tfc_status st = TFC_STATUS_INIT;
    static uint8_t big[1000];
    memset(big, 'x', sizeof big);
    ProtobufCBinaryData sv = {sizeof big, big};
    ProtobufCBinaryData *svp = &sv;
    Tensorflow__TensorShapeProto__Dim dim = TENSORFLOW__TENSOR_SHAPE_PROTO__DIM__INIT, *dimp = &dim;
    Tensorflow__TensorShapeProto shape = TENSORFLOW__TENSOR_SHAPE_PROTO__INIT;
    shape.n_dim = 1;
    shape.dim = &dimp;
    Tensorflow__TensorProto p = TENSORFLOW__TENSOR_PROTO__INIT;
    p.dtype = TENSORFLOW__DATA_TYPE__DT_STRING;
    p.tensor_shape = &shape;
    p.n_string_val = 1;
    p.string_val = svp;
    dim.size = 100000;
    CHECK(!tfc_pb_tensor_from_proto(&p, (size_t)10 << 20, "s", &st));
    CHECK(st.code == TFC_INVALID_ARGUMENT && strstr(st.msg, "limit"));
    dim.size = 100; /* 100 x (24 + 1000) bytes fit in 1 MiB */
    tfc_status_clear(&st);
    tfc_tensor *t = tfc_pb_tensor_from_proto(&p, (size_t)1 << 20, "s", &st);
    CHECK_OK(&st);
    size_t len = 0;
    CHECK(t && tfc_tensor_string(t, 99, &len) && len == sizeof big);
    tfc_tensor_unref(t);
}

int main(void) {
    test_roundtrip_all_dtypes();
    test_as_proto_field();
    test_string_fill_limit();
    test_typed_fields();
    test_shapes();
    test_attrs();
    TEST_MAIN_END();
}
