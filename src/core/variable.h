/* Internal: resource variables (the state behind VarHandleOp handles). Every resource struct starts with
 * a uint64 id so tapes can key resources and tensors in one id space. */
#ifndef TFC_CORE_VARIABLE_H
#define TFC_CORE_VARIABLE_H

#include <pthread.h>

#include "core/tensor_internal.h"

struct tfc_variable {
    uint64_t id; /* must stay first: tapes read it through a resource handle */
    atomic_int refcount;
    pthread_mutex_t mu;
    tfc_tensor *value; /* NULL until initialised (VarHandleOp before AssignVariableOp) */
    tfc_dtype dtype;
    tfc_shape shape;
    char *name;
    bool trainable;
    tfc_tensor *handle; /* cached handle holding a reference back; released by tfc_variable_free */
};
typedef struct tfc_variable tfc_variable;

tfc_variable *tfc_var_new(tfc_dtype dt, const tfc_shape *shape, const char *name, tfc_status *st);
void tfc_var_acquire(void *v);
void tfc_var_release(void *v);
/* A new handle tensor (dtype TFC_RESOURCE, scalar) referring to v. */
tfc_tensor *tfc_var_handle(tfc_variable *v, tfc_status *st);
/* The variable behind a handle, or NULL with INVALID_ARGUMENT naming op. */
tfc_variable *tfc_var_from_handle(const tfc_tensor *h, const char *op, tfc_status *st);
/* Key of a tensor for tapes: the resource id for handles, else the tensor id. */
static inline uint64_t tfc_tensor_key(const tfc_tensor *t) {
    return t->dtype == TFC_RESOURCE && t->resource ? *(const uint64_t *)t->resource : t->id;
}

#endif
