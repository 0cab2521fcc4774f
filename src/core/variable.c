#include <string.h>

#include "core/variable.h"

tfc_variable *tfc_var_new(tfc_dtype dt, const tfc_shape *shape, const char *name, tfc_status *st) {
    tfc_variable *v = tfc_calloc(1, sizeof *v);
    if (!v) {
        tfc_status_oom(st, "variable", sizeof *v);
        return NULL;
    }
    v->id = tfc_tensor_next_id();
    atomic_init(&v->refcount, 1);
    pthread_mutex_init(&v->mu, NULL);
    v->dtype = dt;
    v->shape = *shape;
    v->trainable = true;
    v->name = tfc_strdup(name ? name : "Variable");
    if (!v->name) {
        tfc_free(v);
        tfc_status_oom(st, "variable", 16);
        return NULL;
    }
    return v;
}

void tfc_var_acquire(void *p) { atomic_fetch_add(&((tfc_variable *)p)->refcount, 1); }

void tfc_var_release(void *p) {
    tfc_variable *v = p;
    if (!v || atomic_fetch_sub(&v->refcount, 1) != 1) return;
    tfc_tensor_unref(v->value);
    pthread_mutex_destroy(&v->mu);
    tfc_free(v->name);
    tfc_free(v);
}

tfc_tensor *tfc_var_handle(tfc_variable *v, tfc_status *st) {
    return tfc_tensor_resource(v, tfc_var_acquire, tfc_var_release, st);
}

tfc_variable *tfc_var_from_handle(const tfc_tensor *h, const char *op, tfc_status *st) {
    if (h->dtype != TFC_RESOURCE || !h->resource) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: expected a resource handle, got a %s tensor", op,
                       tfc_dtype_name(h->dtype));
        return NULL;
    }
    return h->resource;
}
