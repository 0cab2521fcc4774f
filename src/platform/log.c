/* Logging with a redirectable sink (TensorFlow's levels; TFC_MIN_LOG_LEVEL as TF_CPP_MIN_LOG_LEVEL). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "tfc/platform.h"

static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static tfc_log_sink sink_fn;
static void *sink_user;
static int min_level = -1;

void tfc_log_set_sink(tfc_log_sink sink, void *user) {
    pthread_mutex_lock(&log_mu);
    sink_fn = sink;
    sink_user = user;
    pthread_mutex_unlock(&log_mu);
}

void tfc_log_set_min_level(tfc_log_level level) {
    pthread_mutex_lock(&log_mu);
    min_level = (int)level;
    pthread_mutex_unlock(&log_mu);
}

/* As in TensorFlow, the minimum level filters messages before any sink sees them. */
void tfc_log(tfc_log_level level, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&log_mu);
    if (min_level < 0) {
        const char *e = getenv("TFC_MIN_LOG_LEVEL");
        min_level = e ? atoi(e) : TFC_LOG_WARNING;
    }
    if ((int)level >= min_level) {
        if (sink_fn)
            sink_fn(sink_user, level, msg);
        else
            fprintf(stderr, "tfc %c %s\n", "IWE"[level < 0 ? 0 : level > 2 ? 2 : level], msg);
    }
    pthread_mutex_unlock(&log_mu);
}
