/* tfc — the tf.data service (tf.data.experimental.service): a dispatcher and workers that run input pipelines
 * for consumers elsewhere, so that preprocessing scales past the host that trains.
 *
 * PIECES. A dispatcher (tfc_dispatch_server, `tfc data dispatcher`) keeps the registered datasets, the jobs and
 * the list of live workers. Workers (tfc_worker_server, `tfc data worker`) register with it by heartbeat,
 * fetch a job's dataset graph from it and produce elements on their own threads into bounded buffers.
 * A consumer is a dataset made by tfc_dataset_distribute or tfc_data_service_from_dataset_id: iterating it
 * creates (or, by job_name, joins) a job and reads from every worker at once.
 *
 * PIPELINES TRAVEL AS GRAPHS. A distributed dataset is serialised with tfc_dataset_serialize (tfc/data_graph.h):
 * its map and filter functions must be graph functions (tfc_dataset_map_function) or C callbacks that the
 * worker process has registered under the same name; otherwise distribute fails with INVALID_ARGUMENT naming
 * the callback. Workers run pipelines they were not compiled with.
 *
 * TRANSPORT. Addresses are "host:port" (a "grpc://" or "nng://" prefix is accepted and ignored). Messages
 * travel over nng REQ/REP (the parameter-server transport): a request whose reply was lost is resent by the
 * library, and every state-changing request carries a client id and request number, so a resent request gets
 * the first answer again instead of a second split or a second batch of elements.
 *
 * PROCESSING MODES (tf.data.experimental.service.ShardingPolicy OFF / DYNAMIC):
 *   "parallel_epochs"   every worker runs the whole dataset; a consumer gets every worker's elements, so each
 *                       element arrives once per worker. Consumers sharing a job (job_name) share each worker's
 *                       stream: every element goes to one of them.
 *   "distributed_epoch" the source (the RangeDataset or TensorSliceDataset at the end of the pipeline's
 *                       single chain of transformations; for TFRecordDataset, its list of file names) is cut
 *                       into splits of consecutive rows handed out by the dispatcher; a worker runs the rest of
 *                       the pipeline on one split at a time. Every element of the epoch is produced exactly once
 *                       across all workers and consumers of the job. Transformations that count (batch, take,
 *                       skip, shard, enumerate, shuffle's buffer) work within a split, as in TensorFlow (a batch
 *                       never spans two splits).
 * Element order across workers is not deterministic.
 *
 * COORDINATED READS (consumer_index / num_consumers, for synchronous training): num_consumers consumers of one
 * named parallel_epochs job over an infinite dataset read in rounds: in round r every consumer reads from the
 * same worker (number r % W of the W workers registered when the job was created, in address order), consumer
 * c getting element (r / W) * num_consumers + c of that worker's stream. A consumer more than 16 rounds ahead of
 * the slowest waits for it (DEADLINE_EXCEEDED after timeout_s); a dead worker is UNAVAILABLE (rounds cannot
 * skip it).
 *
 * FAULTS (the visitation guarantees):
 *   - distributed_epoch: when a worker dies or stops answering, the consumer hands each split it was reading
 *     from that worker, with the number of elements already received, to another live worker, which replays the
 *     split and skips that many elements. So no element is lost and none is delivered twice (exactly once),
 *     provided the pipeline is deterministic within a split (same split -> same elements in the same order);
 *     with random transformations a replayed split yields the right number of elements but not necessarily
 *     the same ones. A split handed out to a consumer that dies is lost with it (at most once for that split).
 *   - parallel_epochs: the elements a dead worker had not yet delivered are lost (at most once per worker).
 *   - A consumer reports UNAVAILABLE ("no tf.data service worker left ...") only when no live worker is left
 *     while elements are still owed; it waits for the dispatcher to list a new worker for worker_wait_ms first.
 *     A dispatcher that does not answer gives UNAVAILABLE naming its address.
 *   - A dispatcher restarted with the same work_dir and fault_tolerant_mode replays its journal: registered
 *     datasets keep their ids, and jobs continue from the splits not yet handed out.
 * Garbage sent to a dispatcher or a worker is answered with INVALID_ARGUMENT; it never stops the server. */
#ifndef TFC_DATA_SERVICE_H
#define TFC_DATA_SERVICE_H

#include "tfc/data.h"

#ifdef __cplusplus
extern "C" {
#endif

/* tf.data.experimental.service.DispatcherConfig. */
typedef struct tfc_dispatcher_config {
    int port;                     /* 0: a free port (tfc_dispatch_server_port tells which) */
    const char *protocol;         /* NULL, "", "grpc" or "nng": all mean tfc's nng transport */
    const char *work_dir;         /* journal directory (used with fault_tolerant_mode); NULL: none */
    bool fault_tolerant_mode;     /* journal state changes to work_dir and replay them at start */
    int64_t job_gc_timeout_ms;    /* a job no consumer touched for this long is dropped (checked when a job is
                                     created); 0: 300000 (5 min) */
} tfc_dispatcher_config;

/* tf.data.experimental.service.WorkerConfig. */
typedef struct tfc_worker_config {
    const char *dispatcher_address;   /* "host:port" of the dispatcher (required) */
    const char *worker_address;       /* how consumers reach this worker; "%port%" is replaced by the port;
                                         NULL: "127.0.0.1:%port%" */
    int port;                         /* 0: a free port */
    int64_t heartbeat_interval_ms;    /* 0: 1000 */
} tfc_worker_config;

typedef struct tfc_dispatch_server tfc_dispatch_server;
typedef struct tfc_worker_server tfc_worker_server;

/* DispatchServer(config): starts serving on port (all interfaces) on its own thread. With
 * fault_tolerant_mode, replays and then appends to work_dir/dispatcher.journal (work_dir is created).
 * INVALID_ARGUMENT for an unknown protocol, fault_tolerant_mode without work_dir, or a bad port; UNAVAILABLE
 * when the port is taken; DATA_LOSS naming the journal when it is corrupt (a torn last record is ignored).
 * Returns a new server owned by the caller. */
TFC_API tfc_dispatch_server *tfc_dispatch_server_new(const tfc_dispatcher_config *config, tfc_status *st);
/* The port it listens on. */
TFC_API int tfc_dispatch_server_port(const tfc_dispatch_server *d);
/* DispatchServer.target without the protocol: "127.0.0.1:<port>" (borrowed). */
TFC_API const char *tfc_dispatch_server_target(const tfc_dispatch_server *d);
/* Workers that sent a heartbeat within the last max(5 s, 4 of their heartbeat intervals): the ones consumers are
 * told about. */
TFC_API int tfc_dispatch_server_num_workers(tfc_dispatch_server *d);
/* Stops serving, joins its thread and frees it (NULL-safe). */
TFC_API void tfc_dispatch_server_free(tfc_dispatch_server *d);
/* Serves until *stop becomes non-zero or a fatal error (for the command line); returns false with st set on
 * failure. The server is freed by the caller afterwards. */
TFC_API bool tfc_dispatch_server_join(tfc_dispatch_server *d, volatile int *stop, tfc_status *st);

/* WorkerServer(config): starts serving and heartbeating to the dispatcher on its own threads. It does not wait
 * for the dispatcher (heartbeats are retried). INVALID_ARGUMENT for a missing dispatcher_address; UNAVAILABLE
 * when the port is taken. */
TFC_API tfc_worker_server *tfc_worker_server_new(const tfc_worker_config *config, tfc_status *st);
TFC_API int tfc_worker_server_port(const tfc_worker_server *w);
/* The address it reports to the dispatcher (borrowed). */
TFC_API const char *tfc_worker_server_address(const tfc_worker_server *w);
/* Stops serving, stops its tasks' threads and frees it (NULL-safe). */
TFC_API void tfc_worker_server_free(tfc_worker_server *w);
/* As tfc_dispatch_server_join, for a worker. */
TFC_API bool tfc_worker_server_join(tfc_worker_server *w, volatile int *stop, tfc_status *st);

/* Options of tf.data.experimental.service.distribute / from_dataset_id. */
typedef struct tfc_distribute_opts {
    const char *processing_mode;       /* "parallel_epochs" (NULL) or "distributed_epoch" */
    const char *service;               /* dispatcher "host:port" (required) */
    const char *job_name;              /* NULL: a job of its own per iterator; a name: shared by the consumers
                                          that use it, repetition by repetition: the k-th iterator of each
                                          consumer's dataset joins the k-th job of that name (as TensorFlow's
                                          repeated iteration of a shared job) */
    int64_t max_outstanding_requests;  /* elements buffered by the consumer; 0 or TFC_AUTOTUNE: 64 */
    int64_t consumer_index, num_consumers; /* coordinated reads; num_consumers 0: off (see COORDINATED READS) */
    int64_t worker_wait_ms;            /* how long a consumer without live workers waits for one; 0: 10000 */
    double timeout_s;                  /* per-request timeout; 0: 10 s */
} tfc_distribute_opts;

/* tf.data.experimental.service.register_dataset(service, dataset): sends ds's graph to the dispatcher and
 * returns its dataset id (the same id for the same graph), or -1 with st set: INVALID_ARGUMENT when ds does not
 * serialise; UNAVAILABLE when the dispatcher does not answer. Borrows ds. */
TFC_API int64_t tfc_data_service_register_dataset(const char *service, const tfc_dataset *ds, tfc_status *st);
/* tf.data.experimental.service.from_dataset_id(processing_mode, service, dataset_id, element_spec, job_name,
 * ...): a dataset reading the registered dataset through the service. The element spec and structure come
 * from the registered graph (fetched from the dispatcher now: UNAVAILABLE when it does not answer, NOT_FOUND for
 * an unknown id). INVALID_ARGUMENT for a bad processing_mode, a consumer_index outside [0, num_consumers),
 * coordinated reads without a job_name, in distributed_epoch or of a finite dataset, or a distributed_epoch
 * dataset whose source cannot be split. */
TFC_API tfc_dataset *tfc_data_service_from_dataset_id(int64_t dataset_id, const tfc_distribute_opts *opts,
                                                      tfc_status *st);
/* dataset.apply(tf.data.experimental.service.distribute(...)): registers ds (taken) and returns
 * from_dataset_id of it. Errors of both. */
TFC_API tfc_dataset *tfc_dataset_distribute(tfc_dataset *ds, const tfc_distribute_opts *opts, tfc_status *st);

#ifdef __cplusplus
}
#endif
#endif
