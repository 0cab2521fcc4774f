/* TF_TString (specs/tstring.md "How to test"): layout of the four representations, growth and shrink policy,
 * views, relocatable OFFSET blobs, assignment rules, and string tensors built on top. */
#include <stddef.h>

#include "tfc_test.h"

_Static_assert(sizeof(tfc_tstring) == 24, "TF_TString is 24 bytes");
_Static_assert(offsetof(tfc_tstring, large.cap) == 8 && offsetof(tfc_tstring, large.ptr) == 16, "LARGE layout");
_Static_assert(offsetof(tfc_tstring, offset.offset) == 4 && offsetof(tfc_tstring, offset.count) == 8, "OFFSET layout");
_Static_assert(offsetof(tfc_tstring, view.ptr) == 8, "VIEW layout");
_Static_assert(offsetof(tfc_tstring, small.str) == 1, "SMALL layout");

/* The first field's value, read at the width the representation uses (spec §1). */
static size_t first_field(const tfc_tstring *s) {
    switch (s->raw[0] & 3) {
    case 0: return s->raw[0];
    case 2: {
        uint32_t v;
        memcpy(&v, s->raw, 4);
        return v;
    }
    default: {
        size_t v;
        memcpy(&v, s->raw, sizeof v);
        return v;
    }
    }
}

static void fill(char *buf, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; i++) buf[i] = (char)('a' + (i * 7 + seed) % 26);
}

static void test_zeroed(void) {
    tfc_tstring s;
    memset(&s, 0, sizeof s);
    CHECK(tfc_tstring_get_type(&s) == TFC_TSTR_SMALL);
    CHECK(tfc_tstring_size(&s) == 0);
    CHECK(strcmp(tfc_tstring_data(&s), "") == 0);
    CHECK(tfc_tstring_capacity(&s) == 22);
    memset(&s, 0xab, sizeof s);
    tfc_tstring_init(&s);
    for (int i = 0; i < 24; i++) CHECK(s.raw[i] == 0);
    tfc_tstring_dealloc(&s); /* dealloc of a SMALL string is a reset */
    CHECK(tfc_tstring_size(&s) == 0);
}

static void check_copy(size_t n) {
    tfc_status st = TFC_STATUS_INIT;
    char src[1000];
    fill(src, n, (unsigned)n);
    tfc_tstring s;
    tfc_tstring_init(&s);
    REQUIRE(tfc_tstring_copy(&s, src, n, &st));
    CHECK_OK(&st);
    CHECK(tfc_tstring_size(&s) == n);
    CHECK(first_field(&s) >> 2 == n);
    const char *d = tfc_tstring_data(&s);
    CHECK(d != src && memcmp(d, src, n) == 0);
    CHECK(d[n] == 0);
    if (n <= 22) {
        CHECK((s.raw[0] & 3) == TFC_TSTR_SMALL);
        CHECK(tfc_tstring_get_type(&s) == TFC_TSTR_SMALL);
        CHECK(d == (const char *)&s + 1); /* inline */
        CHECK(s.raw[0] == (uint8_t)(n << 2));
        CHECK(tfc_tstring_capacity(&s) == 22);
    } else {
        CHECK((s.raw[0] & 3) == TFC_TSTR_LARGE);
        CHECK(tfc_tstring_get_type(&s) == TFC_TSTR_LARGE);
        CHECK(s.large.ptr == d);
        CHECK(s.large.size_and_type == ((n << 2) | 1));
        size_t cap = tfc_tstring_capacity(&s);
        CHECK(cap == s.large.cap);
        CHECK((cap + 1) % 16 == 0);
        CHECK(cap >= n && cap < n + 16); /* exact growth: align16(n + 1) - 1 */
    }
    tfc_tstring_dealloc(&s);
    for (int i = 0; i < 24; i++) CHECK(s.raw[i] == 0);
}

static void test_small_large(void) {
    size_t sizes[] = {0, 1, 21, 22, 23, 24, 31, 32, 47, 100, 999, 1000};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) check_copy(sizes[i]);
    /* the exact capacities named by the spec */
    tfc_status st = TFC_STATUS_INIT;
    tfc_tstring s;
    tfc_tstring_init(&s);
    char big[1000];
    fill(big, sizeof big, 3);
    REQUIRE(tfc_tstring_copy(&s, big, 23, &st));
    CHECK(tfc_tstring_capacity(&s) == 31);
    REQUIRE(tfc_tstring_copy(&s, big, 1000, &st));
    CHECK(tfc_tstring_capacity(&s) == 1007);
    CHECK(memcmp(tfc_tstring_data(&s), big, 1000) == 0);
    /* copying a short string into a LARGE one makes it SMALL (and frees the heap block: ASan checks) */
    REQUIRE(tfc_tstring_copy(&s, "short", 5, &st));
    CHECK(tfc_tstring_get_type(&s) == TFC_TSTR_SMALL);
    CHECK(tfc_tstring_size(&s) == 5 && strcmp(tfc_tstring_data(&s), "short") == 0);
    /* bytes are arbitrary, NULs included */
    REQUIRE(tfc_tstring_copy(&s, "a\0b", 3, &st));
    CHECK(tfc_tstring_size(&s) == 3 && memcmp(tfc_tstring_data(&s), "a\0b", 4) == 0);
    tfc_tstring_dealloc(&s);
}

static void test_resize_policy(void) {
    tfc_tstring s;
    tfc_tstring_init(&s);
    char *p = tfc_tstring_resize(&s, 3);
    REQUIRE(p);
    memcpy(p, "abc", 3);
    CHECK(tfc_tstring_get_type(&s) == TFC_TSTR_SMALL && strcmp(tfc_tstring_data(&s), "abc") == 0);
    /* SMALL -> LARGE keeps the prefix */
    REQUIRE((p = tfc_tstring_resize(&s, 100)));
    CHECK(tfc_tstring_get_type(&s) == TFC_TSTR_LARGE);
    CHECK(tfc_tstring_capacity(&s) == 111);
    CHECK(memcmp(p, "abc", 3) == 0 && p[100] == 0);
    memset(p, 'x', 100);
    /* growth past the capacity: align16(n + 1) - 1 */
    REQUIRE((p = tfc_tstring_resize(&s, 1000)));
    CHECK(tfc_tstring_capacity(&s) == 1007);
    CHECK(p[0] == 'x' && p[99] == 'x' && p[1000] == 0);
    memset(p, 'y', 1000);
    /* shrinking to at least half the capacity keeps the buffer */
    const char *before = tfc_tstring_data(&s);
    REQUIRE((p = tfc_tstring_resize(&s, 600)));
    CHECK(p == before && tfc_tstring_capacity(&s) == 1007);
    CHECK(tfc_tstring_size(&s) == 600 && p[600] == 0 && p[599] == 'y');
    /* growing again within the capacity keeps it too */
    REQUIRE((p = tfc_tstring_resize(&s, 1007)));
    CHECK(tfc_tstring_capacity(&s) == 1007 && p[1007] == 0);
    /* shrinking below half: capacity becomes align16(cap / 2 + 1) - 1 */
    REQUIRE((p = tfc_tstring_resize(&s, 100)));
    CHECK(tfc_tstring_capacity(&s) == 511);
    CHECK(tfc_tstring_size(&s) == 100 && p[0] == 'y' && p[99] == 'y' && p[100] == 0);
    REQUIRE((p = tfc_tstring_resize(&s, 200)));
    CHECK(tfc_tstring_capacity(&s) == 511); /* growing below half the capacity keeps it */
    /* 22 bytes or fewer: always SMALL */
    REQUIRE((p = tfc_tstring_resize(&s, 22)));
    CHECK(tfc_tstring_get_type(&s) == TFC_TSTR_SMALL);
    CHECK(tfc_tstring_size(&s) == 22 && p[0] == 'y' && p[21] == 'y' && p[22] == 0);
    REQUIRE((p = tfc_tstring_resize(&s, 0)));
    CHECK(tfc_tstring_get_type(&s) == TFC_TSTR_SMALL && tfc_tstring_size(&s) == 0 && p[0] == 0);
    tfc_tstring_dealloc(&s);
}

static void test_view(void) {
    tfc_status st = TFC_STATUS_INIT;
    char buf[40];
    fill(buf, sizeof buf, 1); /* not NUL-terminated */
    char saved[40];
    memcpy(saved, buf, sizeof buf);
    tfc_tstring s;
    tfc_tstring_init(&s);
    tfc_tstring_assign_view(&s, buf, 5);
    CHECK((s.raw[0] & 3) == TFC_TSTR_VIEW);
    CHECK(tfc_tstring_get_type(&s) == TFC_TSTR_VIEW);
    CHECK(first_field(&s) >> 2 == 5);
    CHECK(s.view.ptr == buf);
    CHECK(tfc_tstring_data(&s) == buf && tfc_tstring_size(&s) == 5);
    CHECK(tfc_tstring_capacity(&s) == 0);
    /* a mutation converts to SMALL and leaves the source untouched */
    char *p = tfc_tstring_resize(&s, 5);
    REQUIRE(p);
    CHECK(tfc_tstring_get_type(&s) == TFC_TSTR_SMALL);
    CHECK(p != buf && memcmp(p, saved, 5) == 0 && p[5] == 0);
    p[0] = '#';
    CHECK(memcmp(buf, saved, sizeof buf) == 0);
    /* a long view converts to LARGE */
    tfc_tstring_assign_view(&s, buf, 30);
    CHECK(tfc_tstring_get_type(&s) == TFC_TSTR_VIEW && tfc_tstring_size(&s) == 30);
    REQUIRE((p = tfc_tstring_resize(&s, 30)));
    CHECK(tfc_tstring_get_type(&s) == TFC_TSTR_LARGE && tfc_tstring_capacity(&s) == 31);
    CHECK(p != buf && memcmp(p, saved, 30) == 0 && p[30] == 0);
    p[0] = '#';
    CHECK(memcmp(buf, saved, sizeof buf) == 0);
    /* assigning a view over a LARGE string frees it (ASan) */
    tfc_tstring_assign_view(&s, buf + 10, 3);
    CHECK(tfc_tstring_get_type(&s) == TFC_TSTR_VIEW && tfc_tstring_data(&s) == buf + 10);
    /* copying into a VIEW writes owned storage, never the viewed bytes */
    REQUIRE(tfc_tstring_copy(&s, "zz", 2, &st));
    CHECK(tfc_tstring_get_type(&s) == TFC_TSTR_SMALL && strcmp(tfc_tstring_data(&s), "zz") == 0);
    CHECK(memcmp(buf, saved, sizeof buf) == 0);
    tfc_tstring_dealloc(&s);
}

/* [TF_TString x2]["ab"]["cdef"], offsets relative to each struct. */
static void make_blob(unsigned char *blob) {
    memset(blob, 0, 54);
    tfc_tstring *s = (tfc_tstring *)blob;
    s[0].offset.size_and_type = (2u << 2) | TFC_TSTR_OFFSET;
    s[0].offset.offset = 48;
    s[0].offset.count = 1;
    s[1].offset.size_and_type = (4u << 2) | TFC_TSTR_OFFSET;
    s[1].offset.offset = 50 - 24;
    s[1].offset.count = 1;
    memcpy(blob + 48, "ab", 2);
    memcpy(blob + 50, "cdef", 4);
}

static void check_blob(const unsigned char *blob) {
    const tfc_tstring *s = (const tfc_tstring *)blob;
    CHECK(tfc_tstring_get_type(&s[0]) == TFC_TSTR_OFFSET && tfc_tstring_get_type(&s[1]) == TFC_TSTR_OFFSET);
    CHECK((blob[0] & 3) == 2 && (blob[24] & 3) == 2);
    CHECK(tfc_tstring_size(&s[0]) == 2 && tfc_tstring_size(&s[1]) == 4);
    CHECK(tfc_tstring_data(&s[0]) == (const char *)blob + 48);
    CHECK(tfc_tstring_data(&s[1]) == (const char *)blob + 50);
    CHECK(memcmp(tfc_tstring_data(&s[0]), "ab", 2) == 0);
    CHECK(memcmp(tfc_tstring_data(&s[1]), "cdef", 4) == 0);
    CHECK(tfc_tstring_capacity(&s[0]) == 0);
}

static void test_offset(void) {
    tfc_status st = TFC_STATUS_INIT;
    _Alignas(8) unsigned char blob[64], moved[64 + 8];
    make_blob(blob);
    check_blob(blob);
    /* the offset field is stored little-endian right after the 32-bit size word */
    CHECK(blob[0] == ((2u << 2) | 2) && blob[1] == 0 && blob[4] == 48 && blob[5] == 0);
    /* relocatable: copy elsewhere (another alignment too) and read again */
    memcpy(moved + 8, blob, 54);
    memset(blob, 0xee, sizeof blob);
    check_blob(moved + 8);
    make_blob(blob);
    /* assigning from OFFSET gives a VIEW of the blob's bytes */
    tfc_tstring v;
    tfc_tstring_init(&v);
    REQUIRE(tfc_tstring_assign(&v, &((tfc_tstring *)blob)[1], &st));
    CHECK(tfc_tstring_get_type(&v) == TFC_TSTR_VIEW);
    CHECK(tfc_tstring_data(&v) == (const char *)blob + 50 && tfc_tstring_size(&v) == 4);
    /* mutating an OFFSET string converts it to an owned SMALL copy; the blob's bytes stay */
    tfc_tstring *s1 = &((tfc_tstring *)blob)[1];
    char *p = tfc_tstring_resize(s1, 4);
    REQUIRE(p);
    CHECK(tfc_tstring_get_type(s1) == TFC_TSTR_SMALL && memcmp(p, "cdef", 4) == 0 && p[4] == 0);
    p[0] = 'X';
    CHECK(memcmp(blob + 50, "cdef", 4) == 0);
    tfc_tstring_dealloc(s1);
    tfc_tstring_dealloc(&v);
}

static void test_assign(void) {
    tfc_status st = TFC_STATUS_INIT;
    char big[100];
    fill(big, sizeof big, 9);
    tfc_tstring small, large, view, dst;
    tfc_tstring_init(&small);
    tfc_tstring_init(&large);
    tfc_tstring_init(&dst);
    tfc_tstring_init(&view);
    REQUIRE(tfc_tstring_copy(&small, "hello", 5, &st));
    REQUIRE(tfc_tstring_copy(&large, big, 100, &st));
    tfc_tstring_assign_view(&view, big, 50);
    /* SMALL: the struct is copied */
    REQUIRE(tfc_tstring_assign(&dst, &small, &st));
    CHECK(memcmp(&dst, &small, sizeof dst) == 0);
    /* LARGE: deep copy into a fresh buffer */
    REQUIRE(tfc_tstring_assign(&dst, &large, &st));
    CHECK(tfc_tstring_get_type(&dst) == TFC_TSTR_LARGE);
    CHECK(dst.large.ptr != large.large.ptr);
    CHECK(tfc_tstring_size(&dst) == 100 && memcmp(tfc_tstring_data(&dst), big, 100) == 0);
    CHECK(tfc_tstring_data(&dst)[100] == 0);
    CHECK((tfc_tstring_capacity(&dst) + 1) % 16 == 0);
    /* VIEW: the struct is copied (same borrowed pointer); dst's LARGE buffer is freed (ASan) */
    REQUIRE(tfc_tstring_assign(&dst, &view, &st));
    CHECK(tfc_tstring_get_type(&dst) == TFC_TSTR_VIEW && tfc_tstring_data(&dst) == big);
    CHECK(memcmp(&dst, &view, sizeof dst) == 0);
    /* self-assignment is a no-op */
    REQUIRE(tfc_tstring_assign(&large, &large, &st));
    CHECK(tfc_tstring_size(&large) == 100 && memcmp(tfc_tstring_data(&large), big, 100) == 0);
    /* LARGE into LARGE, then into a shorter SMALL */
    REQUIRE(tfc_tstring_assign(&dst, &large, &st));
    REQUIRE(tfc_tstring_assign(&dst, &small, &st));
    CHECK(tfc_tstring_get_type(&dst) == TFC_TSTR_SMALL && strcmp(tfc_tstring_data(&dst), "hello") == 0);
    /* the source is unchanged throughout */
    CHECK(memcmp(tfc_tstring_data(&large), big, 100) == 0);
    tfc_tstring_dealloc(&dst);
    tfc_tstring_dealloc(&large);
    tfc_tstring_dealloc(&small);
}

static void test_oom(void) {
    tfc_status st = TFC_STATUS_INIT;
    char big[64];
    fill(big, sizeof big, 2);
    tfc_tstring s;
    tfc_tstring_init(&s);
    REQUIRE(tfc_tstring_copy(&s, "keep", 4, &st));
    tfc_alloc_fail_after(0);
    CHECK(!tfc_tstring_copy(&s, big, 64, &st));
    CHECK_CODE(&st, TFC_RESOURCE_EXHAUSTED);
    CHECK(tfc_alloc_failures() == 1);
    /* small copies need no memory */
    CHECK(tfc_tstring_copy(&s, "tiny", 4, &st));
    tfc_alloc_fail_after(-1);
    CHECK(strcmp(tfc_tstring_data(&s), "tiny") == 0);
    /* a failed grow of a LARGE string leaves it intact */
    REQUIRE(tfc_tstring_copy(&s, big, 40, &st));
    tfc_alloc_fail_after(0);
    CHECK(tfc_tstring_resize(&s, 60) == NULL);
    tfc_alloc_fail_after(-1);
    CHECK(tfc_tstring_get_type(&s) == TFC_TSTR_LARGE && tfc_tstring_size(&s) == 40);
    CHECK(memcmp(tfc_tstring_data(&s), big, 40) == 0);
    tfc_tstring_dealloc(&s);
}

/* String tensors hold TF_TStrings; element bytes must not depend on the representation chosen. */
static void test_string_tensor(void) {
    tfc_status st = TFC_STATUS_INIT;
    char thirty[30];
    memset(thirty, 'x', sizeof thirty);
    const char *strs[] = {"", "a", thirty};
    size_t lens[] = {0, 1, 30};
    tfc_tensor *t = tfc_tensor_from_strings(strs, lens, (int64_t[]){3}, 1, &st);
    REQUIRE(t);
    CHECK(tfc_tensor_byte_size(t) == 3 * 24);
    const tfc_tstring *e = tfc_tensor_data(t);
    CHECK(tfc_tstring_get_type(&e[0]) == TFC_TSTR_SMALL && tfc_tstring_get_type(&e[1]) == TFC_TSTR_SMALL);
    CHECK(tfc_tstring_get_type(&e[2]) == TFC_TSTR_LARGE);
    /* the same strings as views and as an OFFSET blob read identically */
    tfc_tensor *v = tfc_tensor_new(TFC_STRING, (int64_t[]){3}, 1, &st);
    REQUIRE(v);
    tfc_tstring *ve = tfc_tensor_mutable_data(v);
    REQUIRE(ve);
    for (int i = 0; i < 3; i++) tfc_tstring_assign_view(&ve[i], strs[i], lens[i]);
    for (int i = 0; i < 3; i++) {
        size_t n1 = 99, n2 = 99;
        const char *a = tfc_tensor_string(t, i, &n1), *b = tfc_tensor_string(v, i, &n2);
        CHECK(n1 == lens[i] && n2 == lens[i]);
        CHECK(a && b && memcmp(a, strs[i], lens[i]) == 0 && memcmp(b, strs[i], lens[i]) == 0);
    }
    /* a copy owns its bytes: SMALL/LARGE, never a view */
    tfc_tensor *c = tfc_tensor_copy(v, &st);
    REQUIRE(c);
    const tfc_tstring *ce = tfc_tensor_data(c);
    CHECK(tfc_tstring_get_type(&ce[0]) == TFC_TSTR_SMALL && tfc_tstring_get_type(&ce[2]) == TFC_TSTR_LARGE);
    CHECK(tfc_tstring_data(&ce[2]) != thirty && memcmp(tfc_tstring_data(&ce[2]), thirty, 30) == 0);
    CHECK(tfc_tensor_string(c, 3, NULL) == NULL && tfc_tensor_string(c, -1, NULL) == NULL);
    tfc_tensor_unref(c);
    tfc_tensor_unref(v);
    tfc_tensor_unref(t);
}

int main(void) {
    test_zeroed();
    test_small_large();
    test_resize_policy();
    test_view();
    test_offset();
    test_assign();
    test_oom();
    test_string_tensor();
    TEST_MAIN_END();
}
