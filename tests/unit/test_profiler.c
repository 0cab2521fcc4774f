/* The profiler (src/profiler, platform/trace.h): events from several threads land on one line per thread
 * of the XSpace, in start order, with their step numbers; a chunk boundary (over 512 events per thread) loses
 * nothing; sessions do not leak events into each other; start twice / stop twice are errors. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/xplane.pb-c.h"
#include "tfc/tfc.h"
#include "tfc_test.h"

#define THREADS 4
#define SCOPES 700

static void *worker(void *arg) {
    int id = (int)(intptr_t)arg;
    for (int i = 0; i < SCOPES; i++) {
        tfc_profiler_trace t;
        tfc_profiler_trace_begin(&t, id == 0 ? "even" : "odd", i);
        tfc_profiler_trace_end(&t);
    }
    return NULL;
}

static Tensorflow__Profiler__XSpace *read_space(const char *run_dir) {
    char host[256] = "localhost", path[1400];
    gethostname(host, sizeof host - 1);
    snprintf(path, sizeof path, "%s/%s.xplane.pb", run_dir, host);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    static uint8_t buf[4 << 20];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    return tensorflow__profiler__xspace__unpack(NULL, n, buf);
}

int main(void) {
    char dir[256];
    snprintf(dir, sizeof dir, "%s/tfc_profiler_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    REQUIRE(mkdtemp(dir));
    tfc_status st = TFC_STATUS_INIT;
    /* a session whose events must not show in the next one */
    CHECK(tfc_profiler_start(dir, NULL, &st));
    tfc_profiler_trace t;
    tfc_profiler_trace_begin(&t, "stale", -1);
    tfc_profiler_trace_end(&t);
    CHECK(tfc_profiler_stop(false, &st));
    CHECK(!tfc_profiler_stop(false, &st));
    CHECK_CODE(&st, TFC_UNAVAILABLE);

    CHECK(tfc_profiler_start(dir, &(tfc_profiler_options){.host_tracer_level = 1}, &st));
    CHECK(!tfc_profiler_start(dir, NULL, &st));
    CHECK_CODE(&st, TFC_ALREADY_EXISTS);
    CHECK(tfc_profiler_active());
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++) pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
    for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
    CHECK(tfc_profiler_stop(true, &st));
    CHECK(!tfc_profiler_active());
    char run[1024];
    tfc_profiler_last_run_dir(run, sizeof run);
    CHECK(strstr(run, "/plugins/profile/") != NULL);
    Tensorflow__Profiler__XSpace *xs = read_space(run);
    REQUIRE(xs && xs->n_planes == 1);
    Tensorflow__Profiler__XPlane *p = xs->planes[0];
    CHECK(!strcmp(p->name, "/host:CPU"));
    CHECK(p->n_lines == THREADS);
    int64_t step_id = 0;
    for (size_t i = 0; i < p->n_stat_metadata; i++)
        if (!strcmp(p->stat_metadata[i]->value->name, "step_num")) step_id = p->stat_metadata[i]->key;
    REQUIRE(step_id);
    for (size_t l = 0; l < p->n_lines; l++) {
        Tensorflow__Profiler__XLine *line = p->lines[l];
        CHECK(line->n_events == SCOPES);
        int64_t prev = -1, expect = 0;
        for (size_t e = 0; e < line->n_events; e++) {
            Tensorflow__Profiler__XEvent *ev = line->events[e];
            CHECK(ev->offset_ps >= prev);
            prev = ev->offset_ps;
            for (size_t s = 0; s < ev->n_stats; s++)
                if (ev->stats[s]->metadata_id == step_id) CHECK(ev->stats[s]->int64_value == expect++);
        }
        CHECK(expect == SCOPES);
    }
    for (size_t i = 0; i < p->n_event_metadata; i++) CHECK(strcmp(p->event_metadata[i]->value->name, "stale"));
    tensorflow__profiler__xspace__free_unpacked(xs, NULL);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    TEST_MAIN_END();
}
