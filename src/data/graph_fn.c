/* Dataset functions that are graph functions (tfc_dataset_map_function / filter_function) and the registry of C
 * callbacks by name. A graph function is kept as a library-only GraphDef, not as a pointer into the tracing
 * context: the same bytes then run locally, in every iterator's own context, and on a data-service worker. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "data/data_graph.h"
#include "graph/exec.h"
#include "graph/graphdef_io.h"
#include "graph/trace.h"

void data_gfn_free(void *p) {
    data_gfn *g = p;
    if (!g) return;
    tfc_free(g->entry);
    tfc_free(g->gd);
    tfc_free(g);
}

static char *dup_str(const char *s, tfc_status *st) {
    size_t n = strlen(s) + 1;
    char *d = tfc_malloc(n);
    if (!d) return tfc_status_oom(st, "string", n), NULL;
    return memcpy(d, s, n);
}

/* The exported call tree of fn (from lib) as a data_gfn. */
static data_gfn *gfn_of(const tfc_gfunc *fn, const tfc_flib *lib, tfc_status *st) {
    data_gfn *g = tfc_calloc(1, sizeof *g);
    if (!g) return tfc_status_oom(st, "graph function", sizeof *g), NULL;
    tfc_graphdef *gd = tfc_graphdef_new(st);
    bool ok = gd && (g->entry = dup_str(fn->name, st)) && tfc_graphdef_export_function_tree(fn, lib, gd, st) &&
              tfc_graphdef_serialize(gd, &g->gd, &g->gd_size, st);
    tfc_graphdef_free(gd);
    g->n_in = fn->n_args;
    g->n_out = fn->n_rets;
    if (!ok) {
        data_gfn_free(g);
        return NULL;
    }
    return g;
}

data_gfn *data_gfn_from_graphdef(tfc_graphdef *gd, const char *entry, tfc_status *st) {
    tfc_flib *lib = tfc_flib_new(st);
    if (!lib) return NULL;
    data_gfn *g = NULL;
    if (tfc_graphdef_import_library(gd, lib, st)) {
        const tfc_gfunc *fn = tfc_flib_find(lib, entry);
        if (!fn) tfc_status_set(st, TFC_INVALID_ARGUMENT, "dataset function '%s' is not in the graph's library", entry);
        else g = gfn_of(fn, lib, st);
    }
    tfc_flib_free(lib);
    return g;
}

bool data_gfn_export(const data_gfn *g, tfc_graphdef *out, tfc_status *st) {
    tfc_graphdef_opts o = {.allow_unknown_ops = false};
    tfc_graphdef *gd = tfc_graphdef_parse(g->gd, g->gd_size, &o, st);
    tfc_flib *lib = gd ? tfc_flib_new(st) : NULL;
    bool ok = lib && tfc_graphdef_import_library(gd, lib, st);
    const tfc_gfunc *fn = ok ? tfc_flib_find(lib, g->entry) : NULL;
    if (ok && !fn) ok = tfc_status_set(st, TFC_INTERNAL, "dataset function '%s' lost its graph", g->entry);
    ok = ok && tfc_graphdef_export_function_tree(fn, lib, out, st);
    tfc_flib_free(lib);
    tfc_graphdef_free(gd);
    return ok;
}

/* g's entry function in ctx's library, imported on the context's first call. */
static tfc_gfunc *gfn_in_ctx(tfc_ctx *ctx, const data_gfn *g, tfc_status *st) {
    tfc_flib *lib = tfc_ctx_flib(ctx, st);
    if (!lib) return NULL;
    tfc_gfunc *fn = tfc_flib_find(lib, g->entry);
    if (fn) return fn;
    tfc_graphdef *gd = tfc_graphdef_parse(g->gd, g->gd_size, NULL, st);
    bool ok = gd && tfc_graphdef_import_library(gd, lib, st);
    tfc_graphdef_free(gd);
    if (!ok) return NULL;
    if (!(fn = tfc_flib_find(lib, g->entry)))
        tfc_status_set(st, TFC_INTERNAL, "dataset function '%s' missing after import", g->entry);
    return fn;
}

static bool gfn_run(tfc_ctx *ctx, const data_gfn *g, tfc_tensor *const *in, int n_in, tfc_tensor **out,
                    tfc_status *st) {
    if (n_in != g->n_in)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "dataset function '%s' takes %d inputs, the element has %d",
                              g->entry, g->n_in, n_in);
    tfc_gfunc *fn = gfn_in_ctx(ctx, g, st);
    tfc_exec *x = fn ? tfc_exec_get(ctx, fn, st) : NULL;
    return x && tfc_exec_run(ctx, x, in, n_in, out, st);
}

bool data_gfn_map(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                  tfc_status *st) {
    const data_gfn *g = user;
    if (n_out != g->n_out)
        return tfc_status_set(st, TFC_INTERNAL, "dataset function '%s': %d outputs expected, %d slots", g->entry,
                              g->n_out, n_out);
    return gfn_run(ctx, g, in, n_in, out, st);
}

bool data_gfn_predicate(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, bool *keep, tfc_status *st) {
    tfc_tensor *out = NULL;
    if (!gfn_run(ctx, user, in, n_in, &out, st)) return false;
    *keep = *(const bool *)tfc_tensor_data(out);
    tfc_tensor_unref(out);
    return true;
}

/* Traces f for ds's element spec and keeps its graph. */
static data_gfn *trace_for(tfc_dataset *ds, tfc_ctx *ctx, tfc_function *f, const char *what, tfc_status *st) {
    if (!ctx || !f) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: NULL context or function", what), NULL;
    for (int i = 0; i < ds->spec.n; i++)
        if (ds->spec.comps[i].dtype == TFC_INVALID_DTYPE)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                  "%s: component %d of the input has no known dtype (give the upstream map an "
                                  "output_spec)", what, i), NULL;
    tfc_concrete_function *cf = tfc_function_get_concrete_function(f, ds->spec.comps, ds->spec.n, st);
    if (!cf) return NULL;
    const char *name = tfc_concrete_function_name(cf);
    if (tfc_concrete_function_num_captures(cf) > 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "%s: function '%s' captures %d tensors (variables or large tensors); a dataset "
                              "function must be self-contained to be serialised", what, name,
                              tfc_concrete_function_num_captures(cf)), NULL;
    if (tfc_concrete_function_num_outputs(cf) < 1)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: function '%s' returns no output", what, name), NULL;
    tfc_flib *lib = tfc_ctx_flib(ctx, st);
    const tfc_gfunc *fn = lib ? tfc_flib_find(lib, name) : NULL;
    if (lib && !fn)
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: function '%s' is not in the given context's library", what, name);
    return fn ? gfn_of(fn, lib, st) : NULL;
}

tfc_dataset *tfc_dataset_map_function(tfc_dataset *ds, tfc_ctx *ctx, tfc_function *f, const tfc_map_opts *opts,
                                      tfc_status *st) {
    if (!data_check_input(ds, st)) return NULL;
    data_gfn *g = trace_for(ds, ctx, f, "map_function", st);
    if (!g) {
        tfc_dataset_unref(ds);
        return NULL;
    }
    tfc_concrete_function *cf = tfc_function_get_concrete_function(f, ds->spec.comps, ds->spec.n, st);
    tfc_tensor_spec specs[TFC_DATA_MAX_COMPONENTS];
    int n = g->n_out < TFC_DATA_MAX_COMPONENTS ? g->n_out : TFC_DATA_MAX_COMPONENTS;
    for (int i = 0; i < n; i++) specs[i] = tfc_concrete_function_output_spec(cf, i);
    tfc_map_opts o = opts ? *opts : (tfc_map_opts){0};
    o.output_spec = specs;
    o.user_free = data_gfn_free;
    return tfc_dataset_map(ds, data_gfn_map, g, &o, st);
}

tfc_dataset *tfc_dataset_filter_function(tfc_dataset *ds, tfc_ctx *ctx, tfc_function *f, tfc_status *st) {
    if (!data_check_input(ds, st)) return NULL;
    data_gfn *g = trace_for(ds, ctx, f, "filter_function", st);
    if (g) {
        tfc_concrete_function *cf = tfc_function_get_concrete_function(f, ds->spec.comps, ds->spec.n, st);
        tfc_tensor_spec s = tfc_concrete_function_output_spec(cf, 0);
        if (g->n_out != 1 || s.dtype != TFC_BOOL || s.shape.rank != 0) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT,
                           "filter_function: predicate '%s' must return one bool scalar, returns %d outputs, the "
                           "first %s of rank %d", g->entry, g->n_out, tfc_dtype_name(s.dtype), s.shape.rank);
            data_gfn_free(g);
            g = NULL;
        }
    }
    if (!g) {
        tfc_dataset_unref(ds);
        return NULL;
    }
    return tfc_dataset_filter(ds, data_gfn_predicate, g, &(tfc_filter_opts){.user_free = data_gfn_free}, st);
}

/* ---- C callbacks registered by name ---------------------------------------------------------------------------- */
typedef struct reg_entry {
    char name[128];
    void (*fn)(void);
    void *user;
} reg_entry;

#define REG_MAX 256
static reg_entry reg[REG_MAX];
static int n_reg;
static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;

static bool reg_add(const char *name, void (*fn)(void), void *user, tfc_status *st) {
    if (!name || !*name || strlen(name) >= sizeof reg[0].name || !fn)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "register: the name must be 1 to %d characters and the "
                              "callback not NULL", (int)sizeof reg[0].name - 1);
    bool ok = true;
    pthread_mutex_lock(&reg_mu);
    int i = 0;
    while (i < n_reg && strcmp(reg[i].name, name)) i++;
    if (i < n_reg) {
        if (reg[i].fn != fn || reg[i].user != user)
            ok = tfc_status_set(st, TFC_ALREADY_EXISTS, "a dataset callback is already registered as '%s'", name);
    } else if (n_reg == REG_MAX) {
        ok = tfc_status_set(st, TFC_RESOURCE_EXHAUSTED, "more than %d dataset callbacks registered", REG_MAX);
    } else {
        snprintf(reg[n_reg].name, sizeof reg[n_reg].name, "%s", name);
        reg[n_reg].fn = fn;
        reg[n_reg].user = user;
        n_reg++;
    }
    pthread_mutex_unlock(&reg_mu);
    if (ok) tfc_status_clear(st);
    return ok;
}

bool tfc_data_register_map_fn(const char *name, tfc_data_map_fn fn, void *user, tfc_status *st) {
    return reg_add(name, (void (*)(void))fn, user, st);
}

bool tfc_data_register_predicate_fn(const char *name, tfc_data_predicate_fn fn, void *user, tfc_status *st) {
    return reg_add(name, (void (*)(void))fn, user, st);
}

const char *data_callback_name(void (*fn)(void), void *user) {
    const char *name = NULL;
    pthread_mutex_lock(&reg_mu);
    for (int i = 0; i < n_reg && !name; i++)
        if (reg[i].fn == fn && reg[i].user == user) name = reg[i].name; /* entries are never removed */
    pthread_mutex_unlock(&reg_mu);
    return name;
}

bool data_callback_lookup(const char *name, void (**fn)(void), void **user) {
    bool found = false;
    pthread_mutex_lock(&reg_mu);
    for (int i = 0; i < n_reg && !found; i++)
        if (!strcmp(reg[i].name, name)) {
            *fn = reg[i].fn;
            *user = reg[i].user;
            found = true;
        }
    pthread_mutex_unlock(&reg_mu);
    return found;
}
