/* tf.distribute.experimental.partitioners: FixedShardsPartitioner, MinSizePartitioner, MaxSizePartitioner
 * (parameter_server.h). Each shards axis 0 only. */
#include <math.h>

#include "core/size_check.h"
#include "tfc/parameter_server.h"

tfc_variable_partitioner tfc_fixed_shards_partitioner(int64_t num_shards) {
    return (tfc_variable_partitioner){.kind = TFC_PARTITION_FIXED, .num_shards = num_shards, .bytes_per_string = 16};
}

tfc_variable_partitioner tfc_min_size_partitioner(int64_t min_shard_bytes, int64_t max_shards,
                                                  int64_t bytes_per_string) {
    return (tfc_variable_partitioner){.kind = TFC_PARTITION_MIN_SIZE, .shard_bytes = min_shard_bytes,
                                      .max_shards = max_shards, .bytes_per_string = bytes_per_string};
}

tfc_variable_partitioner tfc_max_size_partitioner(int64_t max_shard_bytes, int64_t max_shards,
                                                  int64_t bytes_per_string) {
    return (tfc_variable_partitioner){.kind = TFC_PARTITION_MAX_SIZE, .shard_bytes = max_shard_bytes,
                                      .max_shards = max_shards, .bytes_per_string = bytes_per_string};
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

int64_t tfc_partitioner_num_shards(const tfc_variable_partitioner *p, const int64_t *dims, int rank,
                                   tfc_dtype dtype) {
    if (!p || p->kind == TFC_PARTITION_NONE || rank < 1 || dims[0] < 1) return 1;
    const int64_t dim0 = dims[0];
    const double elem = dtype == TFC_STRING ? (double)p->bytes_per_string : (double)tfc_dtype_size(dtype);
    double row_elems = 1; /* elements of one slice along axis 0 (as a double: a huge shape rounds, never wraps) */
    for (int i = 1; i < rank; i++) row_elems *= (double)dims[i];
    int64_t n = 1;
    switch (p->kind) {
    case TFC_PARTITION_FIXED:
        n = min64(p->num_shards, dim0);
        break;
    case TFC_PARTITION_MIN_SIZE: { /* min_max_variable_partitioner: ceil(total / min_slice_size) */
        const double total = elem * row_elems * (double)dim0;
        const double parts = ceil(total / (double)(p->shard_bytes > 0 ? p->shard_bytes : 1));
        n = min64(min64(dim0, p->max_shards > 0 ? p->max_shards : 1), parts > 9e18 ? INT64_MAX : (int64_t)parts);
        break;
    }
    case TFC_PARTITION_MAX_SIZE: { /* variable_axis_size_partitioner */
        const double per_slice = elem * row_elems;
        double per_shard = per_slice > 0 ? floor((double)p->shard_bytes / per_slice) : (double)dim0;
        if (per_shard < 1) per_shard = 1;
        n = (int64_t)ceil((double)dim0 / per_shard);
        if (p->max_shards > 0) n = min64(n, p->max_shards);
        break;
    }
    default:
        break;
    }
    return n < 1 ? 1 : n;
}
