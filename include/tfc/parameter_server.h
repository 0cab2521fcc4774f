/* tfc — tf.distribute.Server, tf.distribute.experimental.ParameterServerStrategy and
 * tf.distribute.experimental.coordinator.ClusterCoordinator: asynchronous training with variables on
 * parameter-server (ps) tasks, steps run on worker tasks, scheduled by a coordinator (the chief).
 *
 * CLUSTER. Tasks come from TF_CONFIG (tfc_cluster_resolve; see tf_config.md): jobs "chief" (the coordinator),
 * "worker" and "ps". Every ps and worker task runs a server (tfc_server_new, or the `tfc ps` / `tfc worker`
 * commands, or the program itself); the coordinator talks to them. Messages travel over nng's REQ/REP on TCP
 * (protocol "nng"; TensorFlow's "grpc" is accepted as a synonym since the cluster spec names it by default).
 *
 * FUNCTIONS ON WORKERS. A scheduled function is a C function of the same program, registered by name on every
 * task (tfc_remote_function_register) before the worker's server starts: the coordinator sends the name and the
 * argument tensors, the worker runs it and sends the outputs back. Shipping serialised graph functions can come
 * later; registering by name needs nothing the program does not have, works for any C code (not only what a
 * graph can express), and keeps the worker's binary and the coordinator's in step.
 *
 * VARIABLES. Variables are created through the strategy (tfc_ps_variable_new) in the same order on every task
 * that uses them: creation is "create if absent", so a worker running the same program attaches to the
 * coordinator's variables (placement is round-robin and deterministic). Reads and updates go to the owning ps
 * task. A variable with a partitioner is sharded along axis 0 (a ShardedVariable, shards "name/part_<i>");
 * the first dim0 % n shards get one row more, as TensorFlow.
 *
 * EXACTLY ONCE. Every scheduled closure has a step id; updates a function makes carry message ids derived
 * from its step id and their order within the step, and ps tasks answer a repeated id from a cache instead of
 * applying it again. So a step retried after its worker died, a request resent by the transport, or a
 * duplicated message updates each variable once. (A retried step's updates that the dead attempt already made
 * keep the dead attempt's values.)
 *
 * FAILURES. A worker that cannot be reached within the timeout (killed, preempted) has its closure re-queued
 * for the other workers; its coordinator thread keeps probing it and uses it again when it answers. A function
 * that fails with UNAVAILABLE (a ps task did not answer) makes join/fetch/schedule return UNAVAILABLE. Timeouts
 * are bounded (timeout_seconds, 0 = 30 s).
 *
 * OWNERSHIP. Tensors returned are new references owned by the caller; inputs are borrowed. */
#ifndef TFC_PARAMETER_SERVER_H
#define TFC_PARAMETER_SERVER_H

#include "tfc/distribute.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- functions that workers run ------------------------------------------------------------------------ */
#define TFC_REMOTE_MAX_OUTPUTS 16
/* A function a coordinator can schedule: args are borrowed; it stores up to TFC_REMOTE_MAX_OUTPUTS new
 * tensors in outputs and their count in *n_outputs (0 in), and returns false with st set on failure. */
typedef bool (*tfc_remote_function)(tfc_tensor *const *args, int n_args, tfc_tensor **outputs, int *n_outputs,
                                    void *user, tfc_status *st);
/* Registers fn under name (at most 127 bytes) for this process's worker server and for the coordinator's
 * checks. Registering a name again replaces it. RESOURCE_EXHAUSTED past 256 functions. */
TFC_API bool tfc_remote_function_register(const char *name, tfc_remote_function fn, void *user, tfc_status *st);

/* A dataset function for ClusterCoordinator.create_per_worker_dataset: builds the dataset of worker
 * `worker_index` (a new reference owned by the caller), or NULL with st set. */
typedef tfc_dataset *(*tfc_remote_dataset_fn)(int worker_index, void *user, tfc_status *st);
/* Registers a dataset function under name, as tfc_remote_function_register (a separate name space). */
TFC_API bool tfc_remote_dataset_register(const char *name, tfc_remote_dataset_fn fn, void *user, tfc_status *st);
/* next(iterator) inside a function running on a worker: `handle` is the per-worker iterator argument
 * (tfc_coordinator_create_per_worker_iterator) the function was given; writes the next element's components of
 * this worker's iterator into out, as tfc_iterator_next (OUT_OF_RANGE "End of sequence" at the end). ABORTED
 * when this worker does not hold the iterator (it restarted): the coordinator then re-creates it and runs the
 * closure again. */
TFC_API bool tfc_per_worker_iterator_next(const tfc_tensor *handle, tfc_tensor **out, int max_out, tfc_status *st);

/* ---- tf.distribute.Server ----------------------------------------------------------------------------- */
typedef struct tfc_server tfc_server;
/* tf.distribute.Server(cluster_spec, job_name, task_index, protocol, start=True): serves task `task_index` of
 * `job_name` ("ps" or "worker") at its cluster address on a background thread. A ps server holds variables; a
 * worker server runs registered functions. protocol: NULL, "nng" or "grpc" (see CLUSTER); others
 * INVALID_ARGUMENT. INVALID_ARGUMENT for a job or task missing from the cluster, UNAVAILABLE when the address
 * cannot be listened on. */
TFC_API tfc_server *tfc_server_new(const tfc_cluster *cluster_spec, const char *job_name, int task_index,
                                   const char *protocol, tfc_status *st);
/* The address this server listens on ("host:port", borrowed). */
TFC_API const char *tfc_server_target(const tfc_server *s);
/* Server.join(): blocks until the server is stopped (tfc_server_stop, or a stop request from a client). */
TFC_API bool tfc_server_join(tfc_server *s, tfc_status *st);
/* Asks the server to stop serving (returns at once; join waits). */
TFC_API void tfc_server_stop(tfc_server *s);
/* Stops and frees (NULL-safe). */
TFC_API void tfc_server_free(tfc_server *s);
/* Sends a stop request to the task at host_port; UNAVAILABLE when it does not answer within timeout_seconds. */
TFC_API bool tfc_server_stop_remote(const char *host_port, double timeout_seconds, tfc_status *st);

/* ---- variable partitioners (tf.distribute.experimental.partitioners) ----------------------------------- */
typedef enum { TFC_PARTITION_NONE = 0, TFC_PARTITION_FIXED = 1, TFC_PARTITION_MIN_SIZE = 2,
               TFC_PARTITION_MAX_SIZE = 3 } tfc_partitioner_kind;
typedef struct tfc_variable_partitioner {
    tfc_partitioner_kind kind;
    int64_t num_shards;         /* FIXED */
    int64_t shard_bytes;        /* MIN_SIZE: min_shard_bytes (256 KiB); MAX_SIZE: max_shard_bytes */
    int64_t max_shards;         /* MIN_SIZE: default 1; MAX_SIZE: 0 = no limit */
    int64_t bytes_per_string;   /* 16 */
} tfc_variable_partitioner;
/* FixedShardsPartitioner(num_shards). */
TFC_API tfc_variable_partitioner tfc_fixed_shards_partitioner(int64_t num_shards);
/* MinSizePartitioner(min_shard_bytes, max_shards, bytes_per_string). */
TFC_API tfc_variable_partitioner tfc_min_size_partitioner(int64_t min_shard_bytes, int64_t max_shards,
                                                          int64_t bytes_per_string);
/* MaxSizePartitioner(max_shard_bytes, max_shards, bytes_per_string). */
TFC_API tfc_variable_partitioner tfc_max_size_partitioner(int64_t max_shard_bytes, int64_t max_shards,
                                                          int64_t bytes_per_string);
/* The number of shards along axis 0 the partitioner gives a variable of this shape and dtype (>= 1; 1 for a
 * scalar or a NULL/NONE partitioner), as the partitioner's __call__ returns in its first element. */
TFC_API int64_t tfc_partitioner_num_shards(const tfc_variable_partitioner *p, const int64_t *dims, int rank,
                                           tfc_dtype dtype);

/* ---- ParameterServerStrategy --------------------------------------------------------------------------- */
typedef struct tfc_ps_strategy tfc_ps_strategy;
typedef struct tfc_ps_variable tfc_ps_variable;
/* ParameterServerStrategy(cluster_resolver, variable_partitioner): cluster must have a "ps" job (INVALID_ARGUMENT
 * otherwise); it is borrowed and must outlive the strategy. partitioner may be NULL (copied); timeout_seconds
 * bounds every request (0 = 30 s). */
TFC_API tfc_ps_strategy *tfc_parameter_server_strategy_new(const tfc_cluster *cluster,
                                                           const tfc_variable_partitioner *partitioner,
                                                           double timeout_seconds, tfc_status *st);
TFC_API void tfc_ps_strategy_free(tfc_ps_strategy *s); /* frees its variables; NULL-safe */
TFC_API int tfc_ps_strategy_num_ps(const tfc_ps_strategy *s);
TFC_API int tfc_ps_strategy_num_workers(const tfc_ps_strategy *s);
/* Test hook: requests to ps tasks, and those of a ClusterCoordinator created afterwards to workers, go through a
 * fault-injecting wrapper: each request is duplicated with probability dup (as when a reply is lost and the
 * request resent) and delayed up to max_delay_ms with probability delay. Call before creating variables. */
TFC_API void tfc_ps_strategy_inject_faults(tfc_ps_strategy *s, uint32_t seed, double dup, double delay,
                                           int max_delay_ms);

/* tf.Variable(initial_value, name=name) created under strategy.scope(): placed on the next ps task round-robin,
 * or sharded by the strategy's partitioner (each shard on the next task). Owned by the strategy. name must be
 * unique (1..100 bytes). If the ps task already holds the variable (another task of the same program created it)
 * this attaches to it: INVALID_ARGUMENT when its dtype or shape differ. dtypes: float32, float64, int32, int64. */
TFC_API tfc_ps_variable *tfc_ps_variable_new(tfc_ps_strategy *s, const char *name, const tfc_tensor *initial_value,
                                             tfc_status *st);
/* The variable's name (borrowed). */
TFC_API const char *tfc_ps_variable_name(const tfc_ps_variable *v);
TFC_API int tfc_ps_variable_num_shards(const tfc_ps_variable *v);
/* The ps task index holding shard i. */
TFC_API int tfc_ps_variable_shard_task(const tfc_ps_variable *v, int i);
/* The rows (axis 0) of shard i. */
TFC_API int64_t tfc_ps_variable_shard_rows(const tfc_ps_variable *v, int i);
/* variable.read_value(): the whole value (shards concatenated). */
TFC_API tfc_tensor *tfc_ps_variable_read(tfc_ps_variable *v, tfc_status *st);
/* variable.assign(value) / assign_add(delta): value of the variable's dtype and shape (INVALID_ARGUMENT). */
TFC_API bool tfc_ps_variable_assign(tfc_ps_variable *v, const tfc_tensor *value, tfc_status *st);
TFC_API bool tfc_ps_variable_assign_add(tfc_ps_variable *v, const tfc_tensor *delta, tfc_status *st);
/* SGD's update applied on the owning ps task (tf.keras.optimizers.SGD without momentum):
 * variable -= learning_rate * gradient. */
TFC_API bool tfc_ps_variable_apply_sgd(tfc_ps_variable *v, const tfc_tensor *gradient, double learning_rate,
                                       tfc_status *st);

/* Checkpointing (tf.train.Checkpoint of the strategy's variables, in tfc's own layout, not TensorFlow's bundle
 * format): save writes every variable's whole value (shards concatenated) to dir/<name>.npy ('/' in names as
 * '.'; the folder is created; each file written under a temporary name and renamed); restore assigns every
 * variable of the strategy from such files, so a checkpoint restores onto any number of ps tasks and any
 * partitioning (the job's restart after a ps task failed). NOT_FOUND for a missing file, INVALID_ARGUMENT for a
 * dtype or shape that differs, UNAVAILABLE when a ps task does not answer. */
TFC_API bool tfc_ps_strategy_save(tfc_ps_strategy *s, const char *dir, tfc_status *st);
TFC_API bool tfc_ps_strategy_restore(tfc_ps_strategy *s, const char *dir, tfc_status *st);

/* ---- ClusterCoordinator --------------------------------------------------------------------------------- */
typedef struct tfc_coordinator tfc_coordinator;
typedef struct tfc_remote_value tfc_remote_value;
/* ClusterCoordinator(strategy): starts one thread per worker task. The strategy must outlive it. */
TFC_API tfc_coordinator *tfc_cluster_coordinator_new(tfc_ps_strategy *s, tfc_status *st);
/* schedule(fn, args): queues the registered function `fn_name` with copies of args; returns at once with a
 * RemoteValue owned by the coordinator. NOT_FOUND for an unregistered name; the coordinator's error (e.g.
 * UNAVAILABLE after a ps task failed) if one is pending. */
TFC_API tfc_remote_value *tfc_coordinator_schedule(tfc_coordinator *c, const char *fn_name, tfc_tensor *const *args,
                                                   int n_args, tfc_status *st);
/* join(): waits until every scheduled function has run; returns the first error a function raised (then clears
 * it, as TensorFlow). */
TFC_API bool tfc_coordinator_join(tfc_coordinator *c, tfc_status *st);
/* done(): whether every scheduled function has finished (an error also makes it true). */
TFC_API bool tfc_coordinator_done(tfc_coordinator *c);
/* RemoteValue.fetch(): waits for the value and returns output i (a new reference), or the function's error;
 * CANCELLED when the closure was cancelled by an earlier error. */
TFC_API tfc_tensor *tfc_remote_value_fetch(tfc_remote_value *v, int i, tfc_status *st);
/* The number of outputs (after the value is ready; -1 before). */
TFC_API int tfc_remote_value_num_outputs(tfc_remote_value *v);
/* iter(create_per_worker_dataset(dataset_fn)): every worker builds the registered dataset function's dataset
 * and an iterator over it, before the next closure it runs (and again, from the start, after it restarts, as
 * TensorFlow re-creates per-worker resources). Returns the iterator handle (an int64 scalar, owned by the
 * caller) to pass as a schedule argument; functions read it with tfc_per_worker_iterator_next. NOT_FOUND for an
 * unregistered name; RESOURCE_EXHAUSTED past 64 per-worker datasets. */
TFC_API tfc_tensor *tfc_coordinator_create_per_worker_iterator(tfc_coordinator *c, const char *dataset_fn_name,
                                                               tfc_status *st);
/* Counts since the coordinator started: closures executed, and attempts re-queued after a worker failed. */
TFC_API void tfc_coordinator_stats(const tfc_coordinator *c, int64_t *executed, int64_t *requeued);
/* Cancels closures still queued, waits for those running (at most the timeout), stops the threads and frees
 * the coordinator and its RemoteValues (NULL-safe). Call join first to run everything. */
TFC_API void tfc_coordinator_free(tfc_coordinator *c);

#ifdef __cplusplus
}
#endif

#endif
