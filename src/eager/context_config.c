/* A context's runtime switches (tfc_runtime_config): the given ones or the defaults, then the environment, read
 * once when the context is created. */
#include <stdlib.h>
#include <string.h>

#include "eager/context_internal.h"

#define MAX_PREFETCH_DEPTH 8

tfc_runtime_config tfc_runtime_config_defaults(void) {
    return (tfc_runtime_config){.keras_run_eagerly = true, .keras_fuse_conv_pool = true, .fit_prefetch = true};
}

static int clamp_depth(int d) { return d >= 0 && d <= MAX_PREFETCH_DEPTH ? d : 0; }

/* "0" -> false, "1" -> true; anything else (or unset) keeps *v */
static void env_bool(const char *name, bool *v) {
    const char *e = getenv(name);
    if (e && !strcmp(e, "0")) *v = false;
    else if (e && !strcmp(e, "1")) *v = true;
}

void tfc_ctx_config_init(tfc_ctx *ctx, const tfc_runtime_config *given) {
    tfc_runtime_config c = given ? *given : tfc_runtime_config_defaults();
    env_bool("TFC_KERAS_RUN_EAGERLY", &c.keras_run_eagerly);
    env_bool("TFC_KERAS_FUSE_CONV_POOL", &c.keras_fuse_conv_pool);
    env_bool("TFC_FIT_PREFETCH", &c.fit_prefetch);
    const char *e = getenv("TFC_FIT_PREFETCH_DEPTH");
    if (e && *e) c.fit_prefetch_depth = atoi(e);
    c.fit_prefetch_depth = clamp_depth(c.fit_prefetch_depth);
    ctx->config = c;
}

const tfc_runtime_config *tfc_ctx_config(const tfc_ctx *ctx) { return &ctx->config; }

void tfc_ctx_set_config(tfc_ctx *ctx, const tfc_runtime_config *config) {
    if (!ctx || !config) return;
    ctx->config = *config;
    ctx->config.fit_prefetch_depth = clamp_depth(config->fit_prefetch_depth);
}
