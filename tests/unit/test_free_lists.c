/* The per-thread free lists of small blocks (src/platform/free_lists.h): a freed tensor header, buffer record and
 * small data block are handed out again (in release builds), blocks of every size class keep what is written
 * into them across reuse, more blocks than a list keeps go back to malloc, the failure hook still fails
 * allocations served from a list, threads that keep blocks and exit, and under AddressSanitizer the lists are
 * off (a freed block goes straight back to malloc, so ASan still reports a use after free); a block freed twice
 * aborts. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdint.h>
#include <string.h>

#include "core/tensor_internal.h"
#include "platform/free_lists.h"
#include "tfc_test.h"

static bool asan_build(void) {
#if defined(__SANITIZE_ADDRESS__)
    return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    return true;
#endif
#endif
    return false;
}

static void test_reuse(void) {
    tfc_status st = TFC_STATUS_INIT;
    if (asan_build()) {
        CHECK(!tfc_fl_enabled());
        return;
    }
    const char *e = getenv("TFC_FREE_LISTS");
    CHECK(tfc_fl_enabled() == !(e && !strcmp(e, "0")));
    if (!tfc_fl_enabled()) return;
    /* a scalar: header, buffer record and 64-byte data block all come back from the lists */
    tfc_tensor *a = tfc_scalar_f32(1.5f, &st);
    REQUIRE(a);
    void *hdr = a, *rec = a->buf, *data = a->data;
    tfc_tensor_unref(a);
    tfc_tensor *b = tfc_scalar_f32(2.5f, &st);
    REQUIRE(b);
    CHECK((void *)b == hdr && (void *)b->buf == rec && b->data == data);
    CHECK(*(float *)b->data == 2.5f && b->refcount == 1 && b->shape.rank == 0 && b->buf->refcount == 1);
    tfc_tensor_unref(b);
    /* small tensors' data up to 384 bytes from the lists, 64-byte aligned */
    for (int64_t n = 1; n <= 96; n += 5) {
        tfc_tensor *t = tfc_tensor_new(TFC_FLOAT, &n, 1, &st);
        REQUIRE(t);
        CHECK(((uintptr_t)t->data & 63) == 0);
        void *d = t->data;
        tfc_tensor_unref(t);
        t = tfc_tensor_new(TFC_FLOAT, &n, 1, &st);
        REQUIRE(t);
        CHECK(t->data == d);
        for (int64_t i = 0; i < n; i++) CHECK(((float *)t->data)[i] == 0.0f); /* tfc_tensor_new zeroes */
        tfc_tensor_unref(t);
    }
}

/* Blocks of every size 1 .. 600 (past the largest class), many more than a list keeps, hold their bytes; returns
 * the bytes found wrong (no CHECK: it also runs on other threads). */
static long churn(void) {
    enum { N = 300 };
    unsigned char *blk[N];
    long bad = 0;
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < N; i++) {
            size_t size = (size_t)(i * 7 + round * 13) % 600 + 1;
            blk[i] = tfc_fl_alloc(size);
            if (!blk[i]) return -1;
            memset(blk[i], (int)(i & 0xFF), size);
        }
        for (int i = 0; i < N; i++) {
            size_t size = (size_t)(i * 7 + round * 13) % 600 + 1;
            for (size_t k = 0; k < size; k++) bad += blk[i][k] != (unsigned char)(i & 0xFF);
        }
        for (int i = 0; i < N; i += 2) tfc_fl_free(blk[i], (size_t)(i * 7 + round * 13) % 600 + 1);
        for (int i = 1; i < N; i += 2) tfc_fl_free(blk[i], (size_t)(i * 7 + round * 13) % 600 + 1);
    }
    tfc_fl_free(NULL, 64);
    return bad;
}

static void *thread_churn(void *arg) {
    long *bad = arg;
    *bad = churn();
    tfc_status st = TFC_STATUS_INIT;
    for (int i = 0; i < 200; i++) {
        tfc_tensor *t = tfc_scalar_f32((float)i, &st);
        if (!t || *(float *)t->data != (float)i) (*bad)++;
        tfc_tensor_unref(t);
    }
    return NULL; /* its lists are released at exit */
}

static void test_threads_and_faults(void) {
    CHECK(churn() == 0);
    pthread_t th[3];
    long bad[3] = {0};
    for (int i = 0; i < 3; i++) REQUIRE(pthread_create(&th[i], NULL, thread_churn, &bad[i]) == 0);
    for (int i = 0; i < 3; i++) {
        pthread_join(th[i], NULL);
        CHECK(bad[i] == 0);
    }
    /* a block is waiting in the 64-byte list: the hook fails the allocation anyway */
    void *p = tfc_fl_alloc(40);
    REQUIRE(p);
    tfc_fl_free(p, 40);
    tfc_alloc_fail_after(0);
    CHECK(tfc_fl_alloc(40) == NULL);
    tfc_status st = TFC_STATUS_INIT;
    CHECK(tfc_scalar_f32(1.0f, &st) == NULL);
    CHECK_CODE(&st, TFC_RESOURCE_EXHAUSTED);
    tfc_alloc_fail_after(-1);
    tfc_status_clear(&st);
    p = tfc_fl_alloc(40);
    CHECK(p != NULL);
    tfc_fl_free(p, 40);
}

/* A block freed twice onto a list aborts with a message (in a child process) instead of being handed out twice. */
static void test_double_free(void) {
    if (!tfc_fl_enabled()) return;
    fflush(NULL);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        void *p = tfc_fl_alloc(100);
        tfc_fl_free(p, 100);
        tfc_fl_free(p, 100);
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
    /* the same block freed, handed out again and freed again is fine */
    void *p = tfc_fl_alloc(100);
    tfc_fl_free(p, 100);
    void *q = tfc_fl_alloc(100);
    CHECK(q == p);
    tfc_fl_free(q, 100);
}

int main(void) {
    test_reuse();
    test_threads_and_faults();
    test_double_free();
    TEST_MAIN_END();
}
