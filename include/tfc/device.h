/* tfc — devices (TensorFlow's tf.config.list_physical_devices / list_logical_devices, tensor.device).
 * A device owns an allocator and a kernel table keyed by (op, dtype constraint); tfc has the host CPU device
 * today, and the table's layout leaves room for others (CUDA). Devices live as long as the process: the
 * pointers below are borrowed and never freed. */
#ifndef TFC_DEVICE_H
#define TFC_DEVICE_H

#include "tfc/op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The devices of type `device_type` ("CPU", "GPU"; NULL for all), as tf.config.list_physical_devices:
 * fills out[0 .. min(count, max)) and returns the count (0 for a type tfc has no device of). */
TFC_API int tfc_list_physical_devices(const char *device_type, const tfc_device **out, int max);
/* The logical devices of type `device_type` (NULL for all), as tf.config.list_logical_devices: one per
 * physical device today. Fills out like tfc_list_physical_devices and returns the count. */
TFC_API int tfc_list_logical_devices(const char *device_type, const tfc_device **out, int max);
/* The device named `name`, in any of TensorFlow's spellings: "/job:localhost/replica:0/task:0/device:CPU:0",
 * "/device:CPU:0", "CPU:0", "/cpu:0" (case-insensitive type), "/physical_device:CPU:0"; NULL when no device
 * has that name. */
TFC_API const tfc_device *tfc_device_find(const char *name);
/* The full name, as tensor.device reports it: "/job:localhost/replica:0/task:0/device:CPU:0". */
TFC_API const char *tfc_device_name(const tfc_device *d);
/* The logical device's name, as LogicalDevice.name: "/device:CPU:0". */
TFC_API const char *tfc_device_logical_name(const tfc_device *d);
/* The physical device's name, as PhysicalDevice.name: "/physical_device:CPU:0". */
TFC_API const char *tfc_device_physical_name(const tfc_device *d);
/* The device type, as device_type: "CPU". */
TFC_API const char *tfc_device_type(const tfc_device *d);
/* True when d has a kernel for op `op_name` accepting dtype `dtype` for the op's first type attr
 * (TFC_INVALID_DTYPE: any dtype). False for an unknown op. A kernel without a dtype constraint counts as
 * supporting every dtype the op allows (it may still answer UNIMPLEMENTED for one it lacks when called). */
TFC_API bool tfc_device_supports_op(const tfc_device *d, const char *op_name, tfc_dtype dtype);
/* The device holding t's data (tensor.device): the CPU device for every tensor today. */
TFC_API const tfc_device *tfc_tensor_device(const tfc_tensor *t);

/* Counters of a device allocator, in bytes (allocs: a count). */
typedef struct tfc_device_memory_info {
    int64_t current;
    int64_t peak;
    int64_t allocs;
} tfc_device_memory_info;
/* The device allocator's counters (tf.config.experimental.get_memory_info's 'current' and 'peak'): tensor data
 * allocated through the device's allocator, which every tensor a kernel or tfc_tensor_new makes uses (data
 * wrapped from caller memory is not counted). current: bytes held now; peak: the most held at once since the
 * process started or the last tfc_device_reset_memory_stats; allocs: allocations made since the process
 * started. All zero for a NULL device. Safe from any thread (the counters are process-wide atomics). */
TFC_API tfc_device_memory_info tfc_device_get_memory_info(const tfc_device *d);
/* tf.config.experimental.reset_memory_stats: peak becomes current (NULL: nothing). */
TFC_API void tfc_device_reset_memory_stats(const tfc_device *d);

#ifdef __cplusplus
}
#endif
#endif
