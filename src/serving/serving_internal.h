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

/* Runs signature `key` on one free copy of v (predict.c): in[] in signature input order, out[] gets every output
 * (n_out of them). */
bool srv_run_on_copy(tfc_srv_version *v, const char *key, tfc_tensor *const *in, int n_in, tfc_tensor **out,
                     int n_out, tfc_status *st);

/* The signature `signature_name` of v when Classify (method "tensorflow/serving/classify") or Regress
 * ("tensorflow/serving/regress") may run it: its method_name, one DT_STRING input "inputs" (predict.c). NULL
 * with tfc_srv_classify's errors otherwise. */
const tfc_saved_model_signature *srv_examples_signature(tfc_srv_version *v, const char *signature_name,
                                                       const char *method, tfc_status *st);

/* The batcher (batching.c). srv_batcher_run queues one predict call (inputs of rank >= 1 sharing dimension 0)
 * and blocks until its batch ran: out[] gets this call's rows of every output. */
typedef struct srv_batcher srv_batcher;
srv_batcher *srv_batcher_new(const tfc_srv_batching_opts *o, tfc_status *st);
void srv_batcher_free(srv_batcher *b); /* runs what is queued, then joins the threads; NULL-safe */
bool srv_batcher_run(srv_batcher *b, tfc_srv_version *v, const char *sig, tfc_tensor *const *in, int n_in,
                     tfc_tensor **out, int n_out, tfc_status *st);
/* The manager's batcher, or NULL when batching is off (manager.c). */
srv_batcher *srv_manager_batcher(tfc_srv_manager *m);

/* This thread's deadline (CLOCK_MONOTONIC seconds) set by tfc_srv_set_deadline, or 0 for none (predict.c). */
double srv_deadline(void);
/* Sets DEADLINE_EXCEEDED with TensorFlow's message in st and returns false. */
bool srv_deadline_exceeded(tfc_status *st);
double srv_now(void); /* CLOCK_MONOTONIC seconds */

/* A free copy of v (waiting while every copy is busy, until `deadline` when it is not 0: then NULL); give it
 * back with srv_instance_put. */
srv_instance *srv_instance_take(tfc_srv_version *v, double deadline);
void srv_instance_put(tfc_srv_version *v, srv_instance *in);

#endif
