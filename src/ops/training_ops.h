/* Internal: the training ops' signatures and the variable checks shared by their shape functions
 * (src/ops/training_ops.c) and CPU kernels (src/kernels/cpu/training.c). */
#ifndef TFC_OPS_TRAINING_OPS_H
#define TFC_OPS_TRAINING_OPS_H

#include "core/variable.h"
#include "ops/op_util.h"

#define TFC_TRAIN_MAX_VARS 4

/* Where an op's inputs are: resource handles first (var, then slots), scalars, and the gradient. */
typedef struct tfc_train_sig {
    const char *op;
    int n_vars;
    const char *vars[TFC_TRAIN_MAX_VARS]; /* "var", "m", "v", ... (input indices 0..n_vars-1) */
    int n_scalars;
    int scalar_idx[6];
    const char *scalars[6];
    int grad;                             /* input index of the gradient */
    const char *grad_name;                /* "grad" ("delta" for ResourceApplyGradientDescent) */
} tfc_train_sig;

/* The signature of a training op by name, or NULL. */
const tfc_train_sig *tfc_train_sig_find(const char *op);

/* Resolves the variables behind the handles in[0..n_vars) (INVALID_ARGUMENT naming the op when an input is
 * not a handle or two inputs name the same variable). */
bool tfc_train_vars(const tfc_train_sig *s, tfc_tensor *const *in, tfc_variable **v, tfc_status *st);
/* Locks the variables' mutexes in address order (TensorFlow's MaybeLockVariableInputMutexesInOrder), so two
 * updates of overlapping variables cannot deadlock; unlock releases them. */
void tfc_train_lock(tfc_variable *const *v, int n);
void tfc_train_unlock(tfc_variable *const *v, int n);
/* With the variables locked: each is initialised (FAILED_PRECONDITION), holds dtype T and the var's shape,
 * and the gradient has that shape too (INVALID_ARGUMENT naming the op, the inputs and the shapes). */
bool tfc_train_check(const tfc_train_sig *s, tfc_variable *const *v, tfc_dtype T, const tfc_shape *grad,
                     tfc_status *st);

#endif
