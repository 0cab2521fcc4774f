/* tfc — tf.distribute, synchronous data parallelism in eager mode: collectives (all-reduce, broadcast,
 * all-gather), TF_CONFIG cluster resolution, tf.distribute.MirroredStrategy and
 * tf.distribute.MultiWorkerMirroredStrategy, input distribution (InputContext, auto-sharding) and Keras fit /
 * evaluate under a strategy (tfc_model_compile inside tfc_strategy_scope).
 *
 * TRANSPORT. Collectives go through a backend vtable (src/distribute/collective.h): "local" synchronises the
 * replica threads of one process (MirroredStrategy), "mpi" uses Open MPI between processes
 * (MultiWorkerMirroredStrategy); an NCCL backend can be added behind the same table. MPI is initialised only
 * when a multi-worker strategy with more than one worker is created, so programs that never create one run
 * without mpirun and never touch MPI. Processes are started either by `mpirun -np N prog` (ranks become
 * workers 0..N-1) or by the user, one per TF_CONFIG task (then the chief starts Open MPI's `ompi-server` as a
 * child, hands its URI to the other tasks over the TF_CONFIG addresses, and the tasks join one MPI
 * communicator; ranks follow worker ids). As root Open MPI needs OMPI_ALLOW_RUN_AS_ROOT=1 and
 * OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 (or mpirun --allow-run-as-root).
 *
 * TIMEOUTS. Every collective waits at most CommunicationOptions.timeout_seconds (0 = 300 s here: TensorFlow's
 * "no timeout" would let a dead peer hang the job). A collective that does not complete in time fails with
 * UNAVAILABLE naming this task, the collective and its sequence number, and, in TF_CONFIG groups, the task that
 * died (the leader sees its bootstrap connection close and tells the other tasks; under mpirun, mpirun itself
 * ends the job when a process dies); the group is then broken and every later collective fails at once with
 * UNAVAILABLE. Tensors whose dtype or shape differ across the group fail
 * with INVALID_ARGUMENT on every member, naming both tasks and shapes (members first exchange a small header).
 *
 * OWNERSHIP. Tensors returned are new references owned by the caller. Inputs are borrowed. */
#ifndef TFC_DISTRIBUTE_H
#define TFC_DISTRIBUTE_H

#include "tfc/data.h"

#ifdef __cplusplus
extern "C" {
#endif

/* tf.distribute.ReduceOp */
typedef enum { TFC_REDUCE_SUM = 0, TFC_REDUCE_MEAN = 1 } tfc_reduce_op;

/* tf.distribute.experimental.CommunicationImplementation */
typedef enum { TFC_COMM_AUTO = 0, TFC_COMM_RING = 1, TFC_COMM_NCCL = 2 } tfc_communication_implementation;

/* tf.distribute.experimental.CommunicationOptions(bytes_per_pack, timeout_seconds, implementation).
 * bytes_per_pack: gradients are all-reduced in packs of about this many bytes (fused buffers), in the order
 * the gradients are given (0 = one pack per dtype). timeout_seconds: 0 = 300 s (see TIMEOUTS). implementation:
 * AUTO and RING use MPI; NCCL is UNIMPLEMENTED (no GPU backend yet). */
typedef struct tfc_communication_options {
    int64_t bytes_per_pack;
    double timeout_seconds;
    tfc_communication_implementation implementation;
} tfc_communication_options;

/* ---- TF_CONFIG (TFConfigClusterResolver and multi_worker_util) ----------------------------------------- */
#define TFC_CLUSTER_MAX_TASKS 64
typedef struct tfc_cluster_job {
    char name[16];                          /* "chief", "worker", "ps", "evaluator" */
    int n_tasks;                            /* highest task index + 1 */
    char *address[TFC_CLUSTER_MAX_TASKS];   /* "host:port" per task index; NULL for sparse gaps */
} tfc_cluster_job;
typedef struct tfc_cluster {
    int n_jobs;
    tfc_cluster_job jobs[4];
    char task_type[16];                     /* "" in local mode */
    int task_id;
    char rpc_layer[16];                     /* "grpc" unless given */
    bool is_chief;                          /* chief task, or worker 0 without a chief job, or local mode */
    int num_workers;                        /* len(chief) + len(worker); an evaluator's own group: 1; local: 1 */
    int worker_id;                          /* chief 0, worker i -> i + (1 if a chief exists) */
} tfc_cluster;
/* Parses a TF_CONFIG value (json NULL: the TF_CONFIG environment variable; unset = local mode) and validates it
 * as TensorFlow: INVALID_ARGUMENT for malformed JSON (naming the offset), an unknown task type, a task type
 * missing from the cluster, an index out of range, more than one chief or evaluator, or a cluster without a
 * task ("When `cluster_spec` is given, you must also specify `task_type` and `task_id`"). */
TFC_API bool tfc_cluster_resolve(const char *json, tfc_cluster *out, tfc_status *st);
TFC_API void tfc_cluster_clear(tfc_cluster *c);
/* The address of task `index` of job `job` (borrowed), or NULL. */
TFC_API const char *tfc_cluster_address(const tfc_cluster *c, const char *job, int index);
/* The collective leader "/job:chief/replica:0/task:0" (or worker 0) into buf; returns buf. */
TFC_API char *tfc_cluster_leader(const tfc_cluster *c, char *buf, size_t size);

/* ---- collectives ---------------------------------------------------------------------------------------- */
typedef struct tfc_collective tfc_collective;
/* This process's rank in the collective group (0-based; worker id under TF_CONFIG, MPI rank under mpirun). */
TFC_API int tfc_collective_rank(const tfc_collective *c);
/* The number of members of the collective group (1 for a single process). */
TFC_API int tfc_collective_size(const tfc_collective *c);
TFC_API const char *tfc_collective_backend(const tfc_collective *c); /* "local" or "mpi" */
/* All-reduce (CollectiveReduceV2 with merge_op Add, final_op Id/Div): every member passes a tensor of the same
 * dtype and shape; each gets the element-wise sum (MEAN: divided by the group size; integer MEAN truncates, as
 * TensorFlow's Div). dtypes float32, float64, float16, bfloat16 (summed in float32), int32, int64; others are
 * INVALID_ARGUMENT. Zero-size tensors are allowed (the exchange still checks shapes). */
TFC_API tfc_tensor *tfc_collective_all_reduce(tfc_collective *c, const tfc_tensor *t, tfc_reduce_op op,
                                              tfc_status *st);
/* In-place all-reduce of several tensors fused into packs of about bytes_per_pack bytes (0 = one pack per
 * dtype run): ts[i] are replaced by new tensors (the old references are released). Same checks. */
TFC_API bool tfc_collective_all_reduce_n(tfc_collective *c, tfc_tensor **ts, int n, tfc_reduce_op op,
                                         int64_t bytes_per_pack, tfc_status *st);
/* Broadcast (CollectiveBcastSend/Recv): every member passes a tensor of the same dtype and shape; each gets a
 * copy of root's. */
TFC_API tfc_tensor *tfc_collective_broadcast(tfc_collective *c, const tfc_tensor *t, int root, tfc_status *st);
/* All-gather (CollectiveGatherV2) along dim 0: members' tensors must agree in dtype, rank and every dim but
 * the first, which may differ (ragged); the result is their concatenation in rank order. Scalars are gathered
 * as [1] each. Any fixed-size dtype (not string or resource). */
TFC_API tfc_tensor *tfc_collective_all_gather(tfc_collective *c, const tfc_tensor *t, tfc_status *st);
/* A group of n in-process members (threads), for tests and MirroredStrategy: returns n handles, one per
 * member (rank i), sharing one rendezvous; each handle is used by one thread. Free every handle. */
TFC_API bool tfc_collective_local_group(int n, double timeout_seconds, tfc_collective **members, tfc_status *st);
/* The process group of the MPI job (mpirun) or of the TF_CONFIG cluster: see TRANSPORT. timeout_seconds as
 * CommunicationOptions. UNAVAILABLE when the cluster cannot be reached within the timeout; FAILED_PRECONDITION
 * when MPI reports another error at start. */
TFC_API tfc_collective *tfc_collective_mpi_new(const tfc_cluster *cluster, double timeout_seconds, tfc_status *st);
TFC_API void tfc_collective_free(tfc_collective *c); /* NULL-safe */
/* The collectives this member has run and the wall time spent in them (waiting for slower peers included), for
 * measuring the share of a training step spent communicating. */
TFC_API void tfc_collective_stats(const tfc_collective *c, int64_t *calls, double *seconds);

/* ---- strategies ----------------------------------------------------------------------------------------- */
typedef struct tfc_strategy tfc_strategy;
typedef struct tfc_replica_ctx tfc_replica_ctx;

/* tf.distribute.MirroredStrategy with num_replicas CPU replicas in this process (0 = 1). In strategy.run each
 * replica runs in its own thread with its own eager context (intra_op_threads threads each; 0 = 1). Keras fit
 * and evaluate under it run the local replicas' pieces of a batch one after another on the calling thread (the
 * same results; the replicas share the context's intra-op threads). */
typedef struct tfc_mirrored_opts {
    int num_replicas;
    int intra_op_threads;
    tfc_communication_options communication_options;
} tfc_mirrored_opts;
/* tf.distribute.MirroredStrategy(devices): a new strategy owned by the caller (tfc_strategy_free); opts may be
 * NULL (one replica). Errors: INVALID_ARGUMENT for num_replicas above the supported maximum (the message says
 * it), UNIMPLEMENTED for NCCL communication, RESOURCE_EXHAUSTED when the replicas' contexts cannot be made. */
TFC_API tfc_strategy *tfc_mirrored_strategy_new(tfc_ctx *ctx, const tfc_mirrored_opts *opts, tfc_status *st);
/* tf.distribute.MultiWorkerMirroredStrategy(communication_options): one replica per process. The cluster comes
 * from TF_CONFIG (tfc_cluster_resolve) or, under mpirun (OMPI_COMM_WORLD_SIZE set and no TF_CONFIG cluster),
 * from MPI's rank and size (rank 0 is the chief). Without either it behaves as a one-worker MirroredStrategy.
 * An evaluator task forms a group of its own. Errors: those of tfc_cluster_resolve and tfc_collective_mpi_new;
 * UNIMPLEMENTED for implementation NCCL. */
TFC_API tfc_strategy *tfc_multi_worker_mirrored_strategy_new(tfc_ctx *ctx, const tfc_communication_options *opts,
                                                             tfc_status *st);
/* Frees the strategy (NULL-safe). Must not be called inside its scope. */
TFC_API void tfc_strategy_free(tfc_strategy *s);

TFC_API int tfc_strategy_num_replicas_in_sync(const tfc_strategy *s); /* all replicas of all workers */
TFC_API int tfc_strategy_num_local_replicas(const tfc_strategy *s);
TFC_API int tfc_strategy_num_workers(const tfc_strategy *s);
TFC_API int tfc_strategy_worker_id(const tfc_strategy *s);
TFC_API bool tfc_strategy_is_chief(const tfc_strategy *s);          /* multi_worker_util.is_chief */
TFC_API const tfc_cluster *tfc_strategy_cluster(const tfc_strategy *s);
TFC_API tfc_collective *tfc_strategy_collective(tfc_strategy *s);  /* cross-worker group (borrowed) */
TFC_API const tfc_communication_options *tfc_strategy_communication_options(const tfc_strategy *s);

/* with strategy.scope(): makes s the current strategy of this thread (tf.distribute.get_strategy) until
 * tfc_strategy_scope_end. A Keras model compiled inside the scope trains and evaluates under the strategy (see
 * tfc/keras/model.h); its weights and optimizer state are broadcast from worker 0 when fit starts, so every
 * worker starts from the chief's values (MultiWorkerMirroredStrategy's initial-value broadcast). One copy of a
 * variable serves all local replicas (they share the CPU's memory, and synchronous updates keep mirrors equal).
 * Scopes of one strategy nest; another strategy's scope inside is INVALID_ARGUMENT ("Mixing different
 * tf.distribute.Strategy objects"). */
TFC_API bool tfc_strategy_scope(tfc_strategy *s, tfc_status *st);
TFC_API void tfc_strategy_scope_end(tfc_strategy *s);
/* The strategy whose scope is open on this thread, or NULL (the default strategy). */
TFC_API tfc_strategy *tfc_distribute_get_strategy(void);

/* ---- per-replica values and strategy.run -------------------------------------------------------------- */
#define TFC_MAX_LOCAL_REPLICAS 16
/* tf.distribute.DistributedValues (PerReplica): one tensor per local replica (values[i] owned). */
typedef struct tfc_per_replica {
    int n;
    tfc_tensor *values[TFC_MAX_LOCAL_REPLICAS];
} tfc_per_replica;
TFC_API void tfc_per_replica_clear(tfc_per_replica *v); /* unrefs the values */

/* The function strategy.run calls in each replica: rc is the replica context, ctx the replica's eager context,
 * in[i] the replica's component i of the arguments, out receives n_out new tensors. */
typedef bool (*tfc_replica_fn)(tfc_replica_ctx *rc, tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in,
                               tfc_tensor **out, int n_out, tfc_status *st);
/* strategy.run(fn, args): args are n_in per-replica values (each with tfc_strategy_num_local_replicas values;
 * a tensor given to every replica is passed as n copies of one reference); out receives n_out per-replica
 * results. Replicas run at once, one thread each, so collectives inside fn (tfc_replica_all_reduce,
 * tfc_replica_merge_call) synchronise them. The first error of a replica is returned (the other replicas'
 * collectives then fail too, which unblocks them). */
TFC_API bool tfc_strategy_run(tfc_strategy *s, tfc_replica_fn fn, void *user, const tfc_per_replica *args, int n_in,
                              tfc_per_replica *out, int n_out, tfc_status *st);

/* strategy.reduce(reduce_op, value, axis): reduces the per-replica value across all replicas of all workers;
 * with has_axis, each replica's value is first reduced over `axis` (sum; MEAN divides by the total count along
 * that axis, as TensorFlow). Returns a new tensor, equal on every worker. */
TFC_API tfc_tensor *tfc_strategy_reduce(tfc_strategy *s, tfc_reduce_op op, const tfc_per_replica *value,
                                        bool has_axis, int axis, tfc_status *st);
/* strategy.gather(value, axis): the per-replica values of all replicas (all workers, replica order)
 * concatenated along axis (ragged along axis allowed). */
TFC_API tfc_tensor *tfc_strategy_gather(tfc_strategy *s, const tfc_per_replica *value, int axis, tfc_status *st);

/* Broadcasts the values of n variables from worker 0 to every worker (assigning them); a no-op with one worker.
 * Collective: every worker passes the same variables in the same order. */
TFC_API bool tfc_strategy_broadcast_variables(tfc_strategy *s, tfc_variable *const *vars, int n, tfc_status *st);

/* ---- replica context (tf.distribute.ReplicaContext) --------------------------------------------------- */
TFC_API int tfc_replica_id_in_sync_group(const tfc_replica_ctx *rc);
TFC_API int tfc_replica_num_replicas_in_sync(const tfc_replica_ctx *rc);
TFC_API tfc_strategy *tfc_replica_strategy(tfc_replica_ctx *rc);
/* replica_ctx.all_reduce(reduce_op, value): every replica of the group must call it (same dtype and shape). */
TFC_API tfc_tensor *tfc_replica_all_reduce(tfc_replica_ctx *rc, tfc_reduce_op op, const tfc_tensor *value,
                                           tfc_status *st);
/* replica_ctx.merge_call(merge_fn, args): every replica stops here; merge_fn runs once, in cross-replica
 * context on replica 0's thread, with the per-replica values of `value` (one per local replica); its result
 * (a new tensor, or NULL for none) is given to every replica (each gets its own reference in *out). */
typedef bool (*tfc_merge_fn)(tfc_strategy *s, tfc_ctx *ctx, void *user, const tfc_per_replica *value,
                             tfc_tensor **result, tfc_status *st);
/* Runs fn once for the group (see above); false with st set when fn fails (every replica gets its error) or a
 * replica does not arrive before the collective timeout (UNAVAILABLE naming it). */
TFC_API bool tfc_replica_merge_call(tfc_replica_ctx *rc, tfc_merge_fn fn, void *user, tfc_tensor *value,
                                    tfc_tensor **out, tfc_status *st);

/* ---- distributed variables (MirroredVariable, SyncOnReadVariable) --------------------------------------- */
/* tf.VariableSynchronization and tf.VariableAggregation (TensorFlow's numbers) */
typedef enum {
    TFC_VARIABLE_SYNCHRONIZATION_AUTO = 0, TFC_VARIABLE_SYNCHRONIZATION_NONE = 1,
    TFC_VARIABLE_SYNCHRONIZATION_ON_WRITE = 2, TFC_VARIABLE_SYNCHRONIZATION_ON_READ = 3
} tfc_variable_synchronization;
typedef enum {
    TFC_VARIABLE_AGGREGATION_NONE = 0, TFC_VARIABLE_AGGREGATION_SUM = 1, TFC_VARIABLE_AGGREGATION_MEAN = 2,
    TFC_VARIABLE_AGGREGATION_ONLY_FIRST_REPLICA = 3
} tfc_variable_aggregation;

typedef struct tfc_dist_variable tfc_dist_variable;
/* tf.Variable(initial_value, trainable, name, synchronization, aggregation) under strategy.scope(), in
 * cross-replica context (collective across workers: every worker creates its variables in the same order).
 *   AUTO, ON_WRITE, NONE: a MirroredVariable. One copy per worker (local replicas share it: they share the CPU's
 *     memory and every update is synchronous), starting from worker 0's initial value (broadcast).
 *   ON_READ: a SyncOnReadVariable: one copy per local replica, each starting from the initial value; reads in
 *     cross-replica context aggregate the copies of all replicas. INVALID_ARGUMENT when trainable (TensorFlow:
 *     "Synchronization value can be set to VariableSynchronization.ON_READ only for non-trainable variables"). */
TFC_API tfc_dist_variable *tfc_strategy_variable_new(tfc_strategy *s, tfc_tensor *initial_value, bool trainable,
                                                     const char *name, tfc_variable_synchronization synchronization,
                                                     tfc_variable_aggregation aggregation, tfc_status *st);
TFC_API void tfc_dist_variable_free(tfc_dist_variable *v); /* NULL-safe */
/* The copy replica rc reads and writes (rc NULL: local replica 0's), borrowed: read it with tfc_variable_read
 * inside strategy.run (tapes watch it as usual). */
TFC_API tfc_variable *tfc_dist_variable_local(tfc_dist_variable *v, tfc_replica_ctx *rc);
/* variable.assign(value) / assign_add(delta) in replica context; every local replica calls it.
 * MirroredVariable: aggregation NONE is INVALID_ARGUMENT on every replica ("You must specify an aggregation method
 * to update a MirroredVariable in Replica Context..."); SUM and MEAN all-reduce the replicas' values (deltas)
 * over all replicas of all workers and apply the result once; ONLY_FIRST_REPLICA applies replica 0's value.
 * SyncOnReadVariable: each replica updates its own copy. */
TFC_API bool tfc_replica_assign(tfc_replica_ctx *rc, tfc_dist_variable *v, tfc_tensor *value, tfc_status *st);
TFC_API bool tfc_replica_assign_add(tfc_replica_ctx *rc, tfc_dist_variable *v, tfc_tensor *delta, tfc_status *st);
/* variable.read_value() in cross-replica context (a new tensor): MirroredVariable: its value; SyncOnReadVariable:
 * the copies of all replicas of all workers summed (SUM), averaged (MEAN), or replica 0's (ONLY_FIRST_REPLICA,
 * NONE). Collective across workers for SyncOnRead variables. */
TFC_API tfc_tensor *tfc_dist_variable_read(tfc_dist_variable *v, tfc_status *st);

/* ---- input distribution -------------------------------------------------------------------------------- */
/* tf.distribute.InputContext */
typedef struct tfc_input_context {
    int num_input_pipelines;     /* workers */
    int input_pipeline_id;       /* this worker */
    int num_replicas_in_sync;
} tfc_input_context;
/* input_context.get_per_replica_batch_size(global_batch_size): INVALID_ARGUMENT unless divisible ("The
 * `global_batch_size` 10 is not divisible by `num_replicas_in_sync` 4"). Returns -1 on error. */
TFC_API int64_t tfc_input_context_get_per_replica_batch_size(const tfc_input_context *ic, int64_t global_batch_size,
                                                             tfc_status *st);

/* tf.data.experimental.AutoShardPolicy */
typedef enum { TFC_AUTO_SHARD_AUTO = 0, TFC_AUTO_SHARD_DATA = 2, TFC_AUTO_SHARD_OFF = -1 } tfc_auto_shard_policy;

/* How a global batch of B rows is split among `pieces` replicas (TensorFlow's rebatch): piece p gets rows
 * [*begin, *begin + *len), sizes B / pieces with the first B % pieces one larger. */
TFC_API void tfc_distribute_split_batch(int64_t global_batch, int pieces, int piece, int64_t *begin, int64_t *len);

/* A distributed dataset: per step, one batch per local replica. */
typedef struct tfc_dist_dataset tfc_dist_dataset;
typedef struct tfc_dist_iterator tfc_dist_iterator;
/* strategy.experimental_distribute_dataset(dataset): `dataset` yields GLOBAL batches (batch(global_batch_size)
 * last); it is taken. Each global batch is split into num_replicas_in_sync per-replica batches (sizes differ by
 * at most one when it does not divide, the first ones larger) and this worker keeps its replicas' pieces: DATA
 * sharding of the rebatched stream, which keeps global batch s = step s on every worker. AUTO is DATA (tfc
 * cannot yet shard by file: AUTO prints TensorFlow's fallback warning on worker 0 of a multi-worker job); OFF
 * gives every worker every global batch (split over its local replicas only). Components must be batched
 * tensors of a fixed-size dtype (INVALID_ARGUMENT from next otherwise). */
TFC_API tfc_dist_dataset *tfc_strategy_experimental_distribute_dataset(tfc_strategy *s, tfc_dataset *dataset,
                                                                       tfc_auto_shard_policy policy, tfc_status *st);
/* strategy.distribute_datasets_from_function(dataset_fn): dataset_fn is called once per worker with its
 * InputContext and returns a dataset of PER-REPLICA batches (the caller's reference), which the function
 * shards itself; replica i of this worker takes every num_local_replicas-th batch (i, i + n, ...). */
typedef tfc_dataset *(*tfc_dataset_fn)(const tfc_input_context *ic, void *user, tfc_status *st);
/* Returns a distributed dataset owned by the caller (tfc_dist_dataset_free), or NULL with st set (fn's error,
 * or INVALID_ARGUMENT when fn returns no dataset). */
TFC_API tfc_dist_dataset *tfc_strategy_distribute_datasets_from_function(tfc_strategy *s, tfc_dataset_fn fn,
                                                                         void *user, tfc_status *st);
/* Frees a distributed dataset (NULL is a no-op); its iterators must be freed first. */
TFC_API void tfc_dist_dataset_free(tfc_dist_dataset *d);
/* iter(dist_dataset): a new iterator over d owned by the caller (tfc_dist_iterator_free), or NULL with st set
 * (the underlying datasets' iterator errors). */
TFC_API tfc_dist_iterator *tfc_dist_iterator_new(tfc_dist_dataset *d, tfc_status *st);
/* Next step's per-replica components: out[c] receives component c of every local replica. OUT_OF_RANGE at
 * the end (when any local replica runs out, as TensorFlow's synchronous iteration). */
TFC_API bool tfc_dist_iterator_next(tfc_dist_iterator *it, tfc_per_replica *out, int max_components, tfc_status *st);
TFC_API void tfc_dist_iterator_free(tfc_dist_iterator *it);

#ifdef __cplusplus
}
#endif
#endif
