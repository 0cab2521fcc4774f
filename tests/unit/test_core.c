/* Core: status codes, dtype traits, float16/bfloat16 conversions (exhaustive against independent references),
 * shapes and tensors. */
#include <float.h>
#include <stdint.h>

#include "core/tensor_internal.h"
#include "tfc_test.h"

#if defined(__SANITIZE_ADDRESS__)
/* Impossible sizes must come back as NULL under ASan too, as they do from malloc. */
const char *__asan_default_options(void);
__attribute__((visibility("default"), used)) const char *__asan_default_options(void) {
    return "allocator_may_return_null=1";
}
#endif

static uint32_t f2u(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static float u2f(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint32_t rng32(void) { /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 0x2545F4914F6CDD1Dull) >> 32);
}

/* ---- status ------------------------------------------------------------------------------------------- */
static void test_status(void) {
    /* tensorflow/core/protobuf/error_codes.proto */
    static const struct { tfc_code c; int num; const char *name; } codes[] = {
        {TFC_OK, 0, "OK"},
        {TFC_CANCELLED, 1, "CANCELLED"},
        {TFC_UNKNOWN, 2, "UNKNOWN"},
        {TFC_INVALID_ARGUMENT, 3, "INVALID_ARGUMENT"},
        {TFC_DEADLINE_EXCEEDED, 4, "DEADLINE_EXCEEDED"},
        {TFC_NOT_FOUND, 5, "NOT_FOUND"},
        {TFC_ALREADY_EXISTS, 6, "ALREADY_EXISTS"},
        {TFC_PERMISSION_DENIED, 7, "PERMISSION_DENIED"},
        {TFC_RESOURCE_EXHAUSTED, 8, "RESOURCE_EXHAUSTED"},
        {TFC_FAILED_PRECONDITION, 9, "FAILED_PRECONDITION"},
        {TFC_ABORTED, 10, "ABORTED"},
        {TFC_OUT_OF_RANGE, 11, "OUT_OF_RANGE"},
        {TFC_UNIMPLEMENTED, 12, "UNIMPLEMENTED"},
        {TFC_INTERNAL, 13, "INTERNAL"},
        {TFC_UNAVAILABLE, 14, "UNAVAILABLE"},
        {TFC_DATA_LOSS, 15, "DATA_LOSS"},
        {TFC_UNAUTHENTICATED, 16, "UNAUTHENTICATED"},
    };
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        CHECK((int)codes[i].c == codes[i].num);
        CHECK(strcmp(tfc_code_name(codes[i].c), codes[i].name) == 0);
    }
    CHECK(strcmp(tfc_code_name((tfc_code)17), "UNKNOWN_CODE") == 0);
    CHECK(strcmp(tfc_code_name((tfc_code)-1), "UNKNOWN_CODE") == 0);

    tfc_status st = TFC_STATUS_INIT;
    CHECK(st.code == TFC_OK && st.msg[0] == 0 && tfc_ok(&st));
    CHECK(tfc_ok(NULL));
    CHECK(tfc_status_set(&st, TFC_NOT_FOUND, "op %s: %d", "Foo", 42) == false);
    CHECK(st.code == TFC_NOT_FOUND && strcmp(st.msg, "op Foo: 42") == 0 && !tfc_ok(&st));
    CHECK(tfc_status_set(NULL, TFC_INTERNAL, "ignored") == false);
    char big[600];
    memset(big, 'm', sizeof big - 1);
    big[sizeof big - 1] = 0;
    tfc_status_set(&st, TFC_INTERNAL, "%s", big);
    CHECK(strlen(st.msg) == sizeof st.msg - 1);
    tfc_status_clear(&st);
    CHECK(st.code == TFC_OK && st.msg[0] == 0);
    tfc_status_clear(NULL);
    CHECK(tfc_status_oom(&st, "tensor", 1024) == false);
    CHECK(st.code == TFC_RESOURCE_EXHAUSTED && strcmp(st.msg, "tensor: out of memory (1024 bytes)") == 0);
    tfc_status_oom(&st, NULL, 8);
    CHECK(strcmp(st.msg, "tfc: out of memory (8 bytes)") == 0);
}

/* ---- dtypes ------------------------------------------------------------------------------------------- */
static void test_dtypes(void) {
    /* tensorflow/core/framework/types.proto DataType numbers, tf.DType.name and sizes */
    static const struct { tfc_dtype dt; int num; const char *name; size_t size; bool fl, in; } t[] = {
        {TFC_FLOAT, 1, "float32", 4, true, false},     {TFC_DOUBLE, 2, "float64", 8, true, false},
        {TFC_INT32, 3, "int32", 4, false, true},       {TFC_UINT8, 4, "uint8", 1, false, true},
        {TFC_INT16, 5, "int16", 2, false, true},       {TFC_INT8, 6, "int8", 1, false, true},
        {TFC_STRING, 7, "string", 24, false, false},   {TFC_INT64, 9, "int64", 8, false, true},
        {TFC_BOOL, 10, "bool", 1, false, false},       {TFC_BFLOAT16, 14, "bfloat16", 2, true, false},
        {TFC_HALF, 19, "float16", 2, true, false},     {TFC_RESOURCE, 20, "resource", sizeof(void *), false, false},
        {TFC_UINT16, 17, "uint16", 2, false, true},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        CHECK((int)t[i].dt == t[i].num);
        CHECK(strcmp(tfc_dtype_name(t[i].dt), t[i].name) == 0);
        CHECK(tfc_dtype_size(t[i].dt) == t[i].size);
        CHECK(tfc_dtype_from_name(t[i].name) == t[i].dt);
        CHECK(tfc_dtype_is_valid(t[i].dt));
        CHECK(tfc_dtype_is_floating(t[i].dt) == t[i].fl);
        CHECK(tfc_dtype_is_integer(t[i].dt) == t[i].in);
    }
    CHECK(TFC_INVALID_DTYPE == 0);
    CHECK(tfc_dtype_from_name("float") == TFC_FLOAT);
    CHECK(tfc_dtype_from_name("double") == TFC_DOUBLE);
    CHECK(tfc_dtype_from_name("half") == TFC_HALF);
    CHECK(tfc_dtype_from_name("float128") == TFC_INVALID_DTYPE);
    CHECK(tfc_dtype_from_name("") == TFC_INVALID_DTYPE);
    CHECK(tfc_dtype_from_name(NULL) == TFC_INVALID_DTYPE);
    const int invalid[] = {0, 8, 11, 12, 13, 15, 16, 18, 21, 99, -1};
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++) {
        CHECK(!tfc_dtype_is_valid((tfc_dtype)invalid[i]));
        CHECK(tfc_dtype_size((tfc_dtype)invalid[i]) == 0);
        CHECK(strcmp(tfc_dtype_name((tfc_dtype)invalid[i]), "invalid") == 0);
    }
    CHECK(sizeof(tfc_half) == 2 && sizeof(tfc_bfloat16) == 2);
}

static void test_dtype_f64(void) {
    union { double d; float f; int64_t i64; int32_t i32; int16_t i16; int8_t i8; uint8_t u8; uint16_t h; } u;
    struct { tfc_dtype dt; double in, out; } c[] = {
        {TFC_FLOAT, 1.5, 1.5},        {TFC_FLOAT, 1e300, INFINITY},  {TFC_DOUBLE, -2.25, -2.25},
        {TFC_INT8, 300, 127},         {TFC_INT8, -300, -128},         {TFC_INT8, -2.9, -2},
        {TFC_INT8, NAN, 0},           {TFC_UINT8, -1, 0},             {TFC_UINT8, 256, 255},
        {TFC_UINT8, 2.7, 2},          {TFC_INT16, 40000, 32767},      {TFC_INT16, -40000, -32768},
        {TFC_INT32, 3e9, 2147483647}, {TFC_INT32, -3e9, -2147483648.0}, {TFC_INT32, -7.5, -7},
        {TFC_INT64, -1e30, -9223372036854775808.0}, {TFC_INT64, 123456789012.0, 123456789012.0},
        {TFC_BOOL, 0.5, 1},           {TFC_BOOL, 0, 0},               {TFC_BOOL, -3, 1},
        {TFC_HALF, 1.0, 1.0},         {TFC_HALF, 65504, 65504},       {TFC_HALF, 1e6, INFINITY},
        {TFC_BFLOAT16, 1.0, 1.0},     {TFC_BFLOAT16, 3.0, 3.0},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        memset(&u, 0, sizeof u);
        tfc_dtype_set_f64(c[i].dt, &u, 0, c[i].in);
        double got = tfc_dtype_get_f64(c[i].dt, &u, 0);
        if (got != c[i].out) fprintf(stderr, "dtype %s: set %g, got %.17g, expected %.17g\n",
                                     tfc_dtype_name(c[i].dt), c[i].in, got, c[i].out);
        CHECK(got == c[i].out);
    }
    tfc_dtype_set_f64(TFC_HALF, &u, 0, 1.0);
    CHECK(u.h == 0x3c00);
    tfc_dtype_set_f64(TFC_BFLOAT16, &u, 0, 1.0);
    CHECK(u.h == 0x3f80);
    tfc_dtype_set_f64(TFC_BOOL, &u, 0, 2.0);
    CHECK(u.u8 == 1);
    int32_t arr[4] = {5, 6, 7, 8};
    CHECK(tfc_dtype_get_f64(TFC_INT32, arr, 2) == 7);
    tfc_dtype_set_f64(TFC_INT32, arr, 3, 80);
    CHECK(arr[3] == 80 && arr[2] == 7);
    CHECK(tfc_dtype_get_f64(TFC_STRING, arr, 0) == 0.0);
}

/* ---- float16: an independent reference ---------------------------------------------------------------- */
/* The value of a finite half (sign ignored), from the IEEE definition. */
static double ref_half_value(uint16_t h) {
    int e = (h >> 10) & 31, m = h & 1023;
    return e == 0 ? ldexp(m, -24) : ldexp(1024 + m, e - 25);
}

/* Round-to-nearest-even by search over the ordered finite magnitudes: bits 0..0x7bff grow with value. */
static uint16_t ref_half_from_float(float f) {
    uint16_t sign = signbit(f) ? 0x8000 : 0;
    double a = fabs((double)f);
    if (isnan(f)) return sign | 0x7e00;
    int lo = 0, hi = 0x7bff; /* largest k with value(k) <= a */
    if (a >= ref_half_value(0x7bff)) {
        lo = 0x7bff;
    } else {
        while (lo < hi) {
            int mid = (lo + hi + 1) / 2;
            if (ref_half_value((uint16_t)mid) <= a) lo = mid;
            else hi = mid - 1;
        }
    }
    double v0 = ref_half_value((uint16_t)lo);
    double v1 = lo == 0x7bff ? 65536.0 : ref_half_value((uint16_t)(lo + 1)); /* past max: infinity's slot */
    double midv = (v0 + v1) / 2;
    int k = a < midv ? lo : a > midv ? lo + 1 : (lo % 2 == 0 ? lo : lo + 1);
    return (uint16_t)(sign | k); /* lo + 1 == 0x7c00 is infinity */
}

static int half_mismatches;
static void check_half_from(float f) {
    uint16_t got = tfc_half_from_float(f).bits, want = ref_half_from_float(f);
    bool ok = isnan(f) ? (((got & 0x7c00) == 0x7c00) && (got & 0x3ff) && (got & 0x8000) == (want & 0x8000))
                       : got == want;
#if defined(__FLT16_MAX__)
    /* the compiler's own conversion agrees with the reference */
    _Float16 h = (_Float16)f;
    uint16_t hb;
    memcpy(&hb, &h, 2);
    if (!isnan(f) && hb != want) {
        ok = false;
        fprintf(stderr, "reference disagrees with _Float16 for %a: %04x vs %04x\n", (double)f, want, hb);
    }
#endif
    if (!ok && half_mismatches++ < 10)
        fprintf(stderr, "half_from_float(%a = %08x): got %04x, expected %04x\n", (double)f, f2u(f), got, want);
    CHECK(ok);
}

static void test_half(void) {
    /* every bit pattern: decode exactly, and round-trip (NaN stays NaN with its sign) */
    int bad = 0;
    for (uint32_t b = 0; b < 65536; b++) {
        tfc_half h = {(uint16_t)b};
        float f = tfc_half_to_float(h);
        int e = (b >> 10) & 31, m = b & 1023;
        bool neg = b & 0x8000;
        if (e == 31 && m) bad += !isnan(f) || (signbit(f) != 0) != neg;
        else if (e == 31) bad += !isinf(f) || (signbit(f) != 0) != neg;
        else bad += (double)f != (neg ? -1 : 1) * ref_half_value((uint16_t)b) || (signbit(f) != 0) != neg;
#if defined(__FLT16_MAX__)
        _Float16 hh;
        memcpy(&hh, &h.bits, 2);
        if (!(e == 31 && m)) bad += f2u((float)hh) != f2u(f);
#endif
        tfc_half back = tfc_half_from_float(f);
        if (e == 31 && m)
            bad += (back.bits & 0x7c00) != 0x7c00 || !(back.bits & 0x3ff) || (back.bits & 0x8000) != (b & 0x8000);
        else
            bad += back.bits != b;
    }
    CHECK(bad == 0);
    CHECK(tfc_half_to_float((tfc_half){0x3c00}) == 1.0f);
    CHECK(tfc_half_to_float((tfc_half){0x7bff}) == 65504.0f);
    CHECK(tfc_half_to_float((tfc_half){0x0001}) == 0x1p-24f);
    CHECK(tfc_half_to_float((tfc_half){0xc000}) == -2.0f);

    /* float -> half at every rounding boundary: for each pair of adjacent halves, the endpoints, their
     * neighbours, the midpoint (a tie) and the floats on either side of it; both signs */
    for (int k = 0; k <= 0x7bff; k++) {
        float lo = (float)ref_half_value((uint16_t)k);
        float hi = k == 0x7bff ? 65536.0f : (float)ref_half_value((uint16_t)(k + 1));
        float mid = (float)(((double)lo + (double)hi) / 2); /* exact: 12 significant bits */
        float cand[] = {lo, nextafterf(lo, INFINITY), nextafterf(mid, 0), mid, nextafterf(mid, INFINITY),
                        nextafterf(hi, 0)};
        for (int i = 0; i < 6; i++) {
            check_half_from(cand[i]);
            check_half_from(-cand[i]);
        }
    }
    /* below the smallest subnormal, the overflow threshold, specials */
    const float special[] = {0.0f, 0x1p-25f, nextafterf(0x1p-25f, 1), nextafterf(0x1p-25f, 0), 0x1p-26f, 0x1p-30f,
                             FLT_MIN, FLT_TRUE_MIN, 65519.0f, nextafterf(65520.0f, 0), 65520.0f, 65536.0f, 1e10f,
                             FLT_MAX, INFINITY, NAN, u2f(0x7f800001), u2f(0x7fffffff), u2f(0x7fc00001)};
    for (size_t i = 0; i < sizeof special / sizeof special[0]; i++) {
        check_half_from(special[i]);
        check_half_from(-special[i]);
    }
    CHECK(tfc_half_from_float(65520.0f).bits == 0x7c00);
    CHECK(tfc_half_from_float(-65520.0f).bits == 0xfc00);
    CHECK(tfc_half_from_float(nextafterf(65520.0f, 0)).bits == 0x7bff);
    CHECK(tfc_half_from_float(0x1p-25f).bits == 0); /* tie to even (zero) */
    CHECK(tfc_half_from_float(-0.0f).bits == 0x8000);
    CHECK(tfc_half_from_float(1.0f + 0x1p-11f).bits == 0x3c00);                 /* tie, down to even */
    CHECK(tfc_half_from_float(1.0f + 3 * 0x1p-11f).bits == 0x3c02);             /* tie, up to even */
    /* random floats, all exponents */
    for (int i = 0; i < 2000000; i++) check_half_from(u2f(rng32()));
    /* random floats in the half range, where most rounding happens */
    for (int i = 0; i < 1000000; i++) {
        float m = (float)(rng32() >> 8) / 16777216.0f;
        check_half_from(ldexpf(m, (int)(rng32() % 44) - 28));
    }
}

/* ---- bfloat16 ------------------------------------------------------------------------------------------- */
/* bfloat16 is the upper half of a float32: value(k) is the float with bits k << 16. */
static double ref_bf16_value(uint32_t k) { return (double)u2f(k << 16); }

static uint16_t ref_bf16_from_float(float f) {
    uint16_t sign = signbit(f) ? 0x8000 : 0;
    if (isnan(f)) return 0x7fc0; /* TensorFlow's canonical NaN, whatever the sign and payload */
    double a = fabs((double)f);
    uint32_t lo = (f2u(fabsf(f)) >> 16); /* largest magnitude <= a: truncation */
    if (lo == 0x7f80) return sign | 0x7f80;
    double v0 = ref_bf16_value(lo);
    double v1 = lo == 0x7f7f ? 0x1p128 : ref_bf16_value(lo + 1); /* past max: infinity's slot */
    double midv = (v0 + v1) / 2;
    uint32_t k = a < midv ? lo : a > midv ? lo + 1 : (lo % 2 == 0 ? lo : lo + 1);
    return (uint16_t)(sign | k);
}

static int bf16_mismatches;
static void check_bf16_from(float f) {
    uint16_t got = tfc_bfloat16_from_float(f).bits, want = ref_bf16_from_float(f);
    bool ok = got == want;
    if (!ok && bf16_mismatches++ < 10)
        fprintf(stderr, "bfloat16_from_float(%a = %08x): got %04x, expected %04x\n", (double)f, f2u(f), got, want);
    CHECK(ok);
}

static void test_bfloat16(void) {
    int bad = 0;
    for (uint32_t b = 0; b < 65536; b++) {
        float f = tfc_bfloat16_to_float((tfc_bfloat16){(uint16_t)b});
        bad += f2u(f) != b << 16;
        tfc_bfloat16 back = tfc_bfloat16_from_float(f);
        bool is_nan = (b & 0x7f80) == 0x7f80 && (b & 0x7f);
        if (is_nan)
            bad += back.bits != 0x7fc0;
        else
            bad += back.bits != b;
    }
    CHECK(bad == 0);
    CHECK(tfc_bfloat16_to_float((tfc_bfloat16){0x3f80}) == 1.0f);
    for (uint32_t k = 0; k < 0x7f80; k++) {
        float lo = u2f(k << 16);
        float hi = k == 0x7f7f ? INFINITY : u2f((k + 1) << 16);
        float mid = k == 0x7f7f ? u2f(0x7f7f8000) : u2f((k << 16) | 0x8000);
        float cand[] = {lo, nextafterf(lo, INFINITY), nextafterf(mid, 0), mid, nextafterf(mid, INFINITY),
                        nextafterf(hi, 0)};
        for (int i = 0; i < 6; i++) {
            check_bf16_from(cand[i]);
            check_bf16_from(-cand[i]);
        }
    }
    const float special[] = {0.0f, FLT_TRUE_MIN, FLT_MAX, INFINITY, NAN, u2f(0x7f800001), u2f(0x7f810000),
                             u2f(0x7fffffff)};
    for (size_t i = 0; i < sizeof special / sizeof special[0]; i++) {
        check_bf16_from(special[i]);
        check_bf16_from(-special[i]);
    }
    CHECK(tfc_bfloat16_from_float(FLT_MAX).bits == 0x7f80); /* rounds past the largest bfloat16 */
    CHECK(tfc_bfloat16_from_float(u2f(0x3f808000)).bits == 0x3f80); /* tie, down to even */
    CHECK(tfc_bfloat16_from_float(u2f(0x3f818000)).bits == 0x3f82); /* tie, up to even */
    CHECK(tfc_bfloat16_from_float(u2f(0x7f800001)).bits != 0x7f80);  /* a NaN whose payload is low stays NaN */
    for (int i = 0; i < 2000000; i++) check_bf16_from(u2f(rng32()));
}

/* ---- shapes ------------------------------------------------------------------------------------------- */
static void test_shapes(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_shape s;
    char buf[TFC_SHAPE_STR];
    int64_t n = -7;
    REQUIRE(tfc_shape_make(&s, (int64_t[]){2, 3, 4}, 3, &st));
    CHECK(s.rank == 3 && s.dims[0] == 2 && s.dims[2] == 4 && s.dims[3] == 0);
    CHECK(tfc_shape_num_elements(&s, &n, NULL, &st) && n == 24);
    CHECK(strcmp(tfc_shape_str(&s, buf, sizeof buf), "[2,3,4]") == 0);
    CHECK(tfc_shape_is_fully_defined(&s));
    REQUIRE(tfc_shape_make(&s, NULL, 0, &st));
    CHECK(tfc_shape_num_elements(&s, &n, NULL, &st) && n == 1);
    CHECK(strcmp(tfc_shape_str(&s, buf, sizeof buf), "[]") == 0);
    REQUIRE(tfc_shape_make(&s, (int64_t[]){5, 0, 3}, 3, &st));
    CHECK(tfc_shape_num_elements(&s, &n, NULL, &st) && n == 0);
    /* rank 8 is the limit */
    int64_t d9[9] = {1, 2, 1, 2, 1, 2, 1, 2, 1};
    CHECK(tfc_shape_make(&s, d9, 8, &st));
    CHECK(tfc_shape_num_elements(&s, &n, NULL, &st) && n == 16);
    CHECK(!tfc_shape_make(&s, d9, 9, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "9") != NULL);
    CHECK(!tfc_shape_make(&s, d9, -1, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    /* negative dims: -1 means unknown (graphs); anything below is rejected */
    CHECK(!tfc_shape_make(&s, (int64_t[]){2, -2}, 2, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "-2") != NULL);
    REQUIRE(tfc_shape_make(&s, (int64_t[]){2, -1}, 2, &st));
    CHECK(!tfc_shape_is_fully_defined(&s));
    CHECK(strcmp(tfc_shape_str(&s, buf, sizeof buf), "[2,?]") == 0);
    CHECK(!tfc_shape_num_elements(&s, &n, "Foo", &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strncmp(st.msg, "Foo: ", 5) == 0);
    s.rank = -1;
    CHECK(strcmp(tfc_shape_str(&s, buf, sizeof buf), "<unknown>") == 0);
    CHECK(!tfc_shape_num_elements(&s, &n, NULL, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    /* overflow of the element count */
    struct { int64_t d[4]; int rank; bool ok; int64_t n; } ov[] = {
        {{INT64_C(1) << 31, INT64_C(1) << 31}, 2, true, INT64_C(1) << 62},
        {{INT64_C(1) << 31, INT64_C(1) << 32}, 2, false, 0},
        {{INT64_C(1) << 32, INT64_C(1) << 32}, 2, false, 0},
        {{INT64_MAX, 2}, 2, false, 0},
        {{INT64_MAX, 1}, 2, true, INT64_MAX},
        {{3, 3074457345618258603}, 2, false, 0}, /* 3 * that = 2^63 + 1 */
        {{0, INT64_MAX, INT64_MAX}, 3, true, 0},
        {{1 << 20, 1 << 20, 1 << 20, 1 << 4}, 4, false, 0},
    };
    for (size_t i = 0; i < sizeof ov / sizeof ov[0]; i++) {
        REQUIRE(tfc_shape_make(&s, ov[i].d, ov[i].rank, &st));
        bool ok = tfc_shape_num_elements(&s, &n, "T", &st);
        CHECK(ok == ov[i].ok);
        if (ok) CHECK(n == ov[i].n);
        else CHECK(st.code == TFC_INVALID_ARGUMENT && strstr(st.msg, "overflow") != NULL);
    }
    int64_t p = 0;
    CHECK(tfc_mul_overflow_i64(3, 4, &p) && p == 12);
    CHECK(!tfc_mul_overflow_i64(INT64_MAX, 2, &p));
    CHECK(!tfc_mul_overflow_i64(-1, 2, &p));
    CHECK(tfc_mul_overflow_i64(0, INT64_MAX, &p) && p == 0);
    /* equality */
    tfc_shape a, b;
    tfc_shape_make(&a, (int64_t[]){2, 3}, 2, &st);
    tfc_shape_make(&b, (int64_t[]){2, 3}, 2, &st);
    CHECK(tfc_shape_equal(&a, &b));
    tfc_shape_make(&b, (int64_t[]){3, 2}, 2, &st);
    CHECK(!tfc_shape_equal(&a, &b));
    tfc_shape_make(&b, (int64_t[]){2, 3, 1}, 3, &st);
    CHECK(!tfc_shape_equal(&a, &b));
    /* the longest possible string fits */
    int64_t big[8];
    for (int i = 0; i < 8; i++) big[i] = INT64_MAX;
    tfc_shape_make(&s, big, 8, &st);
    tfc_shape_str(&s, buf, sizeof buf);
    CHECK(strlen(buf) == 2 + 8 * 19 + 7 && buf[strlen(buf) - 1] == ']');
    /* truncation into a small buffer stays terminated */
    char tiny[5];
    tfc_shape_make(&s, (int64_t[]){123, 456}, 2, &st);
    tfc_shape_str(&s, tiny, sizeof tiny);
    CHECK(strcmp(tiny, "[123") == 0);
}

/* ---- tensors ------------------------------------------------------------------------------------------ */
static int dealloc_calls;
static void *dealloc_data;
static size_t dealloc_size;
static void *dealloc_arg;
static void count_dealloc(void *data, size_t size, void *arg) {
    dealloc_calls++;
    dealloc_data = data;
    dealloc_size = size;
    dealloc_arg = arg;
}

static void test_tensor_new(void) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t live = tfc_tensor_live_count();
    tfc_tensor *t = tfc_tensor_new(TFC_FLOAT, (int64_t[]){2, 3}, 2, &st);
    REQUIRE(t);
    CHECK_OK(&st);
    CHECK(tfc_tensor_live_count() == live + 1);
    CHECK(tfc_tensor_dtype(t) == TFC_FLOAT && tfc_tensor_rank(t) == 2);
    CHECK(tfc_tensor_dim(t, 0) == 2 && tfc_tensor_dim(t, 1) == 3 && tfc_tensor_dim(t, -1) == 3);
    CHECK(tfc_tensor_dim(t, -2) == 2 && tfc_tensor_dim(t, 2) == -1 && tfc_tensor_dim(t, -3) == -1);
    CHECK(tfc_tensor_num_elements(t) == 6 && tfc_tensor_byte_size(t) == 24);
    CHECK(tfc_tensor_shape(t)->rank == 2);
    CHECK(!tfc_tensor_is_symbolic(t));
    CHECK(((uintptr_t)tfc_tensor_data(t) & 63) == 0);
    const float *d = tfc_tensor_data(t);
    int nz = 0;
    for (int i = 0; i < 6; i++) nz += d[i] != 0.0f;
    CHECK(nz == 0);
    CHECK(tfc_tensor_get_f64(t, 6) == 0.0 && tfc_tensor_get_f64(t, -1) == 0.0);
    tfc_tensor_unref(t);
    CHECK(tfc_tensor_live_count() == live);
    tfc_tensor_unref(NULL);
    CHECK(tfc_tensor_ref(NULL) == NULL);

    /* scalars and size-0 tensors */
    tfc_tensor *s = tfc_tensor_new(TFC_INT64, NULL, 0, &st);
    REQUIRE(s);
    CHECK(tfc_tensor_rank(s) == 0 && tfc_tensor_num_elements(s) == 1 && tfc_tensor_byte_size(s) == 8);
    tfc_tensor_unref(s);
    tfc_tensor *z = tfc_tensor_new(TFC_DOUBLE, (int64_t[]){4, 0}, 2, &st);
    REQUIRE(z);
    CHECK(tfc_tensor_num_elements(z) == 0 && tfc_tensor_byte_size(z) == 0 && tfc_tensor_data(z) != NULL);
    tfc_tensor_unref(z);

    /* invalid arguments */
    int64_t d9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    CHECK(!tfc_tensor_new(TFC_FLOAT, d9, 9, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(!tfc_tensor_new(TFC_FLOAT, (int64_t[]){2, -1}, 2, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(!tfc_tensor_new(TFC_FLOAT, (int64_t[]){-3}, 1, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(!tfc_tensor_new((tfc_dtype)8, (int64_t[]){2}, 1, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(!tfc_tensor_new(TFC_FLOAT, (int64_t[]){INT64_C(1) << 32, INT64_C(1) << 32}, 2, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(!tfc_tensor_new(TFC_DOUBLE, (int64_t[]){INT64_C(1) << 61}, 1, &st)); /* 2^64 bytes */
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    /* representable but impossible: out of memory, not a crash */
    CHECK(!tfc_tensor_new(TFC_FLOAT, (int64_t[]){INT64_C(1) << 60}, 1, &st));
    CHECK_CODE(&st, TFC_RESOURCE_EXHAUSTED);
    CHECK(tfc_tensor_live_count() == live);

    /* injected allocation failures at each step leave nothing behind */
    for (int k = 0; k < 3; k++) {
        tfc_alloc_fail_after(k);
        tfc_tensor *f = tfc_tensor_new(TFC_FLOAT, (int64_t[]){8}, 1, &st);
        tfc_alloc_fail_after(-1);
        if (k < 3) {
            CHECK(f == NULL);
            CHECK_CODE(&st, TFC_RESOURCE_EXHAUSTED);
        }
        tfc_tensor_unref(f);
    }
    CHECK(tfc_tensor_live_count() == live);

    /* scalar constructors */
    tfc_tensor *sc[] = {tfc_scalar_f32(1.5f, &st), tfc_scalar_f64(-2.5, &st), tfc_scalar_i32(-7, &st),
                        tfc_scalar_i64(INT64_C(1) << 60, &st), tfc_scalar_bool(true, &st),
                        tfc_scalar(TFC_HALF, 0.5, &st), tfc_scalar(TFC_UINT8, 200, &st)};
    tfc_dtype sdt[] = {TFC_FLOAT, TFC_DOUBLE, TFC_INT32, TFC_INT64, TFC_BOOL, TFC_HALF, TFC_UINT8};
    double sv[] = {1.5, -2.5, -7, (double)(INT64_C(1) << 60), 1, 0.5, 200};
    for (int i = 0; i < 7; i++) {
        REQUIRE(sc[i]);
        CHECK(tfc_tensor_dtype(sc[i]) == sdt[i] && tfc_tensor_rank(sc[i]) == 0);
        CHECK(tfc_tensor_get_f64(sc[i], 0) == sv[i]);
        tfc_tensor_unref(sc[i]);
    }
    tfc_tensor *i64 = tfc_scalar_i64(INT64_MAX, &st);
    CHECK(*(const int64_t *)tfc_tensor_data(i64) == INT64_MAX); /* exact, not through double */
    tfc_tensor_unref(i64);
    int32_t iv[] = {3, 1, 4};
    int64_t lv[] = {-1, INT64_MIN};
    float fv[] = {0.25f};
    tfc_tensor *v1 = tfc_vec_i32(iv, 3, &st), *v2 = tfc_vec_i64(lv, 2, &st), *v3 = tfc_vec_f32(fv, 1, &st);
    REQUIRE(v1 && v2 && v3);
    CHECK(tfc_tensor_dtype(v1) == TFC_INT32 && tfc_tensor_dim(v1, 0) == 3 && memcmp(tfc_tensor_data(v1), iv, 12) == 0);
    CHECK(tfc_tensor_dtype(v2) == TFC_INT64 && memcmp(tfc_tensor_data(v2), lv, 16) == 0);
    CHECK(tfc_tensor_dtype(v3) == TFC_FLOAT && tfc_tensor_get_f64(v3, 0) == 0.25);
    tfc_tensor *v0 = tfc_vec_i64(NULL, 0, &st);
    REQUIRE(v0);
    CHECK(tfc_tensor_num_elements(v0) == 0 && tfc_tensor_rank(v0) == 1);
    tfc_tensor_unref(v0);
    tfc_tensor_unref(v1);
    tfc_tensor_unref(v2);
    tfc_tensor_unref(v3);
    CHECK(tfc_tensor_live_count() == live);
}

static void test_tensor_from_data_wrap(void) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t live = tfc_tensor_live_count();
    double src[6] = {1, 2, 3, 4, 5, 6};
    tfc_tensor *t = tfc_tensor_from_data(TFC_DOUBLE, (int64_t[]){3, 2}, 2, src, sizeof src, &st);
    REQUIRE(t);
    src[0] = 100; /* copied, not borrowed */
    CHECK(tfc_tensor_get_f64(t, 0) == 1 && tfc_tensor_get_f64(t, 5) == 6);
    CHECK(tfc_tensor_data(t) != (const void *)src);
    tfc_tensor_unref(t);
    CHECK(!tfc_tensor_from_data(TFC_DOUBLE, (int64_t[]){3, 2}, 2, src, sizeof src - 8, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "40") && strstr(st.msg, "48"));
    CHECK(!tfc_tensor_from_data(TFC_STRING, (int64_t[]){1}, 1, src, 24, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(tfc_tensor_live_count() == live);

    /* wrap: no copy; dealloc runs exactly once, when the last reference (incl. reshaped views) goes */
    static float mem[12];
    for (int i = 0; i < 12; i++) mem[i] = (float)i;
    dealloc_calls = 0;
    int token;
    tfc_tensor *w = tfc_tensor_wrap(TFC_FLOAT, (int64_t[]){3, 4}, 2, mem, sizeof mem, count_dealloc, &token, &st);
    REQUIRE(w);
    CHECK(tfc_tensor_data(w) == (const void *)mem);
    CHECK(tfc_tensor_get_f64(w, 7) == 7.0);
    tfc_tensor_ref(w);
    tfc_tensor *r = tfc_tensor_reshaped(w, (int64_t[]){12}, 1, &st);
    REQUIRE(r);
    CHECK(tfc_tensor_data(r) == (const void *)mem);
    tfc_tensor_unref(w);
    tfc_tensor_unref(w);
    CHECK(dealloc_calls == 0);
    tfc_tensor_unref(r);
    CHECK(dealloc_calls == 1);
    CHECK(dealloc_data == (void *)mem && dealloc_size == sizeof mem && dealloc_arg == &token);
    /* NULL dealloc is allowed */
    w = tfc_tensor_wrap(TFC_FLOAT, (int64_t[]){12}, 1, mem, sizeof mem, NULL, NULL, &st);
    REQUIRE(w);
    tfc_tensor_unref(w);
    /* a failed wrap does not take ownership: dealloc is not called */
    CHECK(!tfc_tensor_wrap(TFC_FLOAT, (int64_t[]){5}, 1, mem, sizeof mem, count_dealloc, NULL, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(!tfc_tensor_wrap(TFC_FLOAT, (int64_t[]){-1}, 1, mem, 0, count_dealloc, NULL, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(!tfc_tensor_wrap(TFC_STRING, (int64_t[]){2}, 1, mem, 48, count_dealloc, NULL, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    for (int k = 0; k < 2; k++) {
        tfc_alloc_fail_after(k);
        CHECK(!tfc_tensor_wrap(TFC_FLOAT, (int64_t[]){12}, 1, mem, sizeof mem, count_dealloc, NULL, &st));
        tfc_alloc_fail_after(-1);
        CHECK_CODE(&st, TFC_RESOURCE_EXHAUSTED);
    }
    CHECK(dealloc_calls == 1);
    CHECK(tfc_tensor_live_count() == live);
}

static void test_tensor_share_copy(void) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t live = tfc_tensor_live_count();
    int32_t v[6] = {1, 2, 3, 4, 5, 6};
    tfc_tensor *t = tfc_tensor_from_data(TFC_INT32, (int64_t[]){2, 3}, 2, v, sizeof v, &st);
    REQUIRE(t);
    /* sole owner: writable */
    int32_t *m = tfc_tensor_mutable_data(t);
    REQUIRE(m);
    m[0] = 10;
    CHECK(tfc_tensor_get_f64(t, 0) == 10);
    /* another reference: read-only */
    tfc_tensor_ref(t);
    CHECK(tfc_tensor_mutable_data(t) == NULL);
    tfc_tensor_unref(t);
    CHECK(tfc_tensor_mutable_data(t) == m);

    /* reshaped shares the buffer */
    tfc_tensor *r = tfc_tensor_reshaped(t, (int64_t[]){3, 1, 2}, 3, &st);
    REQUIRE(r);
    CHECK(tfc_tensor_data(r) == tfc_tensor_data(t));
    CHECK(tfc_tensor_rank(r) == 3 && tfc_tensor_dim(r, 0) == 3 && tfc_tensor_num_elements(r) == 6);
    CHECK(tfc_tensor_mutable_data(t) == NULL && tfc_tensor_mutable_data(r) == NULL); /* buffer is shared */
    tfc_tensor *r0 = tfc_tensor_reshaped(t, NULL, 0, &st);
    CHECK(!r0);
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "[2,3]") != NULL);
    CHECK(!tfc_tensor_reshaped(t, (int64_t[]){-1, 2}, 2, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(!tfc_tensor_reshaped(t, (int64_t[]){7}, 1, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);

    /* copy is deep */
    tfc_tensor *c = tfc_tensor_copy(r, &st);
    REQUIRE(c);
    CHECK(tfc_tensor_data(c) != tfc_tensor_data(r));
    CHECK(tfc_shape_equal(tfc_tensor_shape(c), tfc_tensor_shape(r)) && tfc_tensor_dtype(c) == TFC_INT32);
    CHECK(memcmp(tfc_tensor_data(c), tfc_tensor_data(r), 24) == 0);
    int32_t *cm = tfc_tensor_mutable_data(c);
    REQUIRE(cm);
    cm[1] = 99;
    CHECK(tfc_tensor_get_f64(t, 1) == 2);
    tfc_tensor_unref(r);
    CHECK(tfc_tensor_mutable_data(t) == m); /* sole owner again */
    tfc_tensor_unref(c);
    tfc_tensor_unref(t);
    CHECK(tfc_tensor_live_count() == live);
}

static void test_tensor_strings(void) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t live = tfc_tensor_live_count();
    char twenty2[23], twenty3[24], kilo[1001];
    memset(twenty2, 's', 22);
    twenty2[22] = 0;
    memset(twenty3, 'l', 23);
    twenty3[23] = 0;
    for (int i = 0; i < 1000; i++) kilo[i] = (char)('A' + i % 26);
    kilo[1000] = 0;
    const char *strs[] = {"", "a", twenty2, twenty3, kilo, "hello world"};
    tfc_tensor *t = tfc_tensor_from_strings(strs, NULL, (int64_t[]){2, 3}, 2, &st);
    REQUIRE(t);
    CHECK(tfc_tensor_dtype(t) == TFC_STRING && tfc_tensor_byte_size(t) == 6 * 24);
    const tfc_tstring *e = tfc_tensor_data(t);
    tfc_tstring_type want[] = {TFC_TSTR_SMALL, TFC_TSTR_SMALL, TFC_TSTR_SMALL, TFC_TSTR_LARGE, TFC_TSTR_LARGE,
                               TFC_TSTR_SMALL};
    for (int i = 0; i < 6; i++) {
        size_t n = 0;
        const char *p = tfc_tensor_string(t, i, &n);
        CHECK(p && n == strlen(strs[i]) && memcmp(p, strs[i], n) == 0 && p[n] == 0);
        CHECK(tfc_tstring_get_type(&e[i]) == want[i]);
    }
    CHECK(tfc_tensor_string(t, 6, NULL) == NULL);
    /* explicit lengths: embedded NULs, and bytes past len are not read */
    const char *raw[] = {"a\0b", "xyz"};
    size_t lens[] = {3, 2};
    tfc_tensor *u = tfc_tensor_from_strings(raw, lens, (int64_t[]){2}, 1, &st);
    REQUIRE(u);
    size_t n = 0;
    CHECK(memcmp(tfc_tensor_string(u, 0, &n), "a\0b", 3) == 0 && n == 3);
    CHECK(strcmp(tfc_tensor_string(u, 1, &n), "xy") == 0 && n == 2);
    /* not a string tensor */
    tfc_tensor *f = tfc_scalar_f32(1, &st);
    CHECK(tfc_tensor_string(f, 0, &n) == NULL);
    /* deep copy of strings */
    tfc_tensor *c = tfc_tensor_copy(t, &st);
    REQUIRE(c);
    const tfc_tstring *ce = tfc_tensor_data(c);
    CHECK(tfc_tstring_data(&ce[4]) != tfc_tstring_data(&e[4]));
    CHECK(memcmp(tfc_tstring_data(&ce[4]), kilo, 1000) == 0 && tfc_tstring_size(&ce[4]) == 1000);
    /* out of memory part-way: no leak (ASan), no tensor */
    for (int k = 0; k < 6; k++) {
        tfc_alloc_fail_after(k);
        tfc_tensor *x = tfc_tensor_from_strings(strs, NULL, (int64_t[]){6}, 1, &st);
        tfc_alloc_fail_after(-1);
        if (k < 5) { /* shell, buffer struct, data, then the two LARGE strings */
            CHECK(x == NULL);
            CHECK_CODE(&st, TFC_RESOURCE_EXHAUSTED);
        }
        tfc_tensor_unref(x);
    }
    tfc_tensor_unref(c);
    tfc_tensor_unref(f);
    tfc_tensor_unref(u);
    tfc_tensor_unref(t);
    CHECK(tfc_tensor_live_count() == live);
}

static void check_str(tfc_tensor *t, int64_t max, const char *want) {
    char buf[512];
    tfc_tensor_str(t, buf, sizeof buf, max);
    if (strcmp(buf, want)) fprintf(stderr, "tensor_str: got  %s\n            want %s\n", buf, want);
    CHECK(strcmp(buf, want) == 0);
    tfc_tensor_unref(t);
}

static void test_tensor_str(void) {
    tfc_status st = TFC_STATUS_INIT;
    check_str(tfc_vec_i32((int32_t[]){1, 2, 3}, 3, &st), 10, "tf.Tensor([1 2 3], shape=(3,), dtype=int32)");
    check_str(tfc_scalar_i64(7, &st), 10, "tf.Tensor(7, shape=(), dtype=int64)");
    check_str(tfc_scalar_i64(INT64_MIN, &st), 10, "tf.Tensor(-9223372036854775808, shape=(), dtype=int64)");
    check_str(tfc_scalar_f32(1.5f, &st), 10, "tf.Tensor(1.5, shape=(), dtype=float32)");
    int32_t m[6] = {1, 2, 3, 4, 5, 6};
    check_str(tfc_tensor_from_data(TFC_INT32, (int64_t[]){2, 3}, 2, m, sizeof m, &st), 10,
              "tf.Tensor([[1 2 3] [4 5 6]], shape=(2, 3), dtype=int32)");
    check_str(tfc_tensor_from_data(TFC_INT32, (int64_t[]){3, 1, 2}, 3, m, sizeof m, &st), 10,
              "tf.Tensor([[[1 2]] [[3 4]] [[5 6]]], shape=(3, 1, 2), dtype=int32)");
    check_str(tfc_tensor_from_data(TFC_INT32, (int64_t[]){2, 3}, 2, m, sizeof m, &st), 4,
              "tf.Tensor([[1 2 3] [4 ...]], shape=(2, 3), dtype=int32)");
    check_str(tfc_vec_i32(m, 6, &st), 2, "tf.Tensor([1 2 ...], shape=(6,), dtype=int32)");
    check_str(tfc_tensor_new(TFC_FLOAT, (int64_t[]){2, 0}, 2, &st), 10, "tf.Tensor([], shape=(2, 0), dtype=float32)");
    uint8_t b[2] = {1, 0};
    check_str(tfc_tensor_from_data(TFC_BOOL, (int64_t[]){2}, 1, b, 2, &st), 10,
              "tf.Tensor([True False], shape=(2,), dtype=bool)");
    const char *s[] = {"ab", "c"};
    check_str(tfc_tensor_from_strings(s, NULL, (int64_t[]){2}, 1, &st), 10,
              "tf.Tensor([b'ab' b'c'], shape=(2,), dtype=string)");
    float h[2] = {0.5f, -2.0f};
    check_str(tfc_tensor_from_data(TFC_FLOAT, (int64_t[]){1, 2}, 2, h, sizeof h, &st), 10,
              "tf.Tensor([[0.5 -2]], shape=(1, 2), dtype=float32)");
    /* truncation keeps the buffer terminated */
    char small[12];
    tfc_tensor *t = tfc_vec_i32(m, 6, &st);
    tfc_tensor_str(t, small, sizeof small, 10);
    CHECK(strcmp(small, "tf.Tensor([") == 0);
    tfc_tensor_unref(t);
}

int main(void) {
    test_status();
    test_dtypes();
    test_dtype_f64();
    test_half();
    test_bfloat16();
    test_shapes();
    test_tensor_new();
    test_tensor_from_data_wrap();
    test_tensor_share_copy();
    test_tensor_strings();
    test_tensor_str();
    TEST_MAIN_END();
}
