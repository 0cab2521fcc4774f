/* Internal to src/serving: the loaded-version layout shared by the manager (manager.c) and the calls
 * (predict.c). Front ends use servable.h only. */
#ifndef TFC_SERVING_SERVING_INTERNAL_H
#define TFC_SERVING_SERVING_INTERNAL_H

#include <pthread.h>

#include "serving/servable.h"
#include "tfc/eager.h"

/* One copy of a loaded version: a context and the SavedModel loaded into it; used by one call at a time. */
typedef struct srv_instance {
    tfc_ctx *ctx;
    tfc_saved_model *sm;
    bool busy;
} srv_instance;

struct tfc_srv_version {
    tfc_srv_manager *mgr;
    const char *model_name; /* borrowed from the manager's config, which outlives every version */
    int64_t number;
    int refs;               /* handles + the manager's own while it serves the version; under mgr's lock */
    int n_inst;
    srv_instance *inst;
    pthread_mutex_t mu;     /* guards inst[].busy */
    pthread_cond_t freed;
    void *sigmap;           /* serialized SignatureDefMap */
    size_t sigmap_len;
};

/* A free copy of v (waiting while every copy is busy); give it back with srv_instance_put. */
srv_instance *srv_instance_take(tfc_srv_version *v);
void srv_instance_put(tfc_srv_version *v, srv_instance *in);

#endif
