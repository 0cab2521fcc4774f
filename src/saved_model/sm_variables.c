/* Restoring a SavedModel's variables: needs the tensor bundle reader; until then a model with variables is
 * refused. */
#include "saved_model/sm_internal.h"

bool tfc_sm_restore_variables(tfc_saved_model *m, tfc_status *st) {
    return m->n_vars == 0 || tfc_status_set(st, TFC_UNIMPLEMENTED, "%s: restoring variables is not supported yet", m->dir);
}
