/* Internal: the ParameterServerStrategy object, shared by ps_strategy.c and coordinator.c. */
#ifndef TFC_PS_STRATEGY_INTERNAL_H
#define TFC_PS_STRATEGY_INTERNAL_H

#include "distribute/transport.h"
#include "tfc/parameter_server.h"

struct tfc_ps_strategy {
    const tfc_cluster *cluster;     /* borrowed */
    int n_ps, n_workers;
    double timeout;
    tfc_variable_partitioner partitioner;
    ps_transport *ps[TFC_CLUSTER_MAX_TASKS];
    int next_task;                  /* round-robin placement */
    tfc_ps_variable **vars;
    int n_vars;
    struct { uint32_t seed; double dup, delay; int max_delay_ms; bool on; } faults; /* test hook */
};

#endif
