/* Devices and their kernel tables (device.h). tfc has one device today, the host CPU; a device is a row of
 * static data plus a table with one list of kernel registrations per op index, read without locks (a list
 * head goes from one registration to a newer one, published with release order; registrations are never
 * freed) and written under a mutex. */
#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/tensor_internal.h"
#include "device/device.h"

static const tfc_allocator cpu_allocator = {
    .name = "cpu",
    .alloc = tfc_aligned_alloc,
    .free = tfc_aligned_free,
    .bytes_in_use = tfc_tensor_bytes_in_use,
    .peak_bytes = tfc_tensor_bytes_peak,
    .alloc_count = tfc_tensor_alloc_count,
    .reset_peak = tfc_tensor_bytes_reset_peak,
};

tfc_device tfc_cpu_device = {
    .allocator = &cpu_allocator,
    .type = "CPU",
    .index = 0,
    .name = "/job:localhost/replica:0/task:0/device:CPU:0",
    .logical_name = "/device:CPU:0",
    .physical_name = "/physical_device:CPU:0",
};
static tfc_device *const devices[] = {&tfc_cpu_device};
#define N_DEVICES ((int)(sizeof devices / sizeof devices[0]))
static pthread_mutex_t table_mu = PTHREAD_MUTEX_INITIALIZER;

static bool type_is(const char *a, const char *b, size_t n) {
    if (strlen(b) != n) return false;
    for (size_t i = 0; i < n; i++)
        if (toupper((unsigned char)a[i]) != b[i]) return false;
    return true;
}

static int list(const char *device_type, const tfc_device **out, int max) {
    int n = 0;
    for (int i = 0; i < N_DEVICES; i++) {
        if (device_type && !type_is(device_type, devices[i]->type, strlen(device_type))) continue;
        if (out && n < max) out[n] = devices[i];
        n++;
    }
    return n;
}

int tfc_list_physical_devices(const char *device_type, const tfc_device **out, int max) {
    return list(device_type, out, max);
}

int tfc_list_logical_devices(const char *device_type, const tfc_device **out, int max) {
    return list(device_type, out, max);
}

const tfc_device *tfc_device_find(const char *name) {
    if (!name) return NULL;
    const char *p = name;
    static const char job[] = "/job:localhost/replica:0/task:0";
    if (!strncmp(p, job, sizeof job - 1)) p += sizeof job - 1;
    if (!strncmp(p, "/device:", 8)) p += 8;
    else if (!strncmp(p, "/physical_device:", 17)) p += 17;
    else if (*p == '/') p++;
    const char *colon = strchr(p, ':');
    if (!colon || colon == p || !colon[1]) return NULL;
    char *end = NULL;
    long idx = strtol(colon + 1, &end, 10);
    if (*end || !isdigit((unsigned char)colon[1])) return NULL;
    for (int i = 0; i < N_DEVICES; i++)
        if (type_is(p, devices[i]->type, (size_t)(colon - p)) && idx == devices[i]->index) return devices[i];
    return NULL;
}

const char *tfc_device_name(const tfc_device *d) { return d->name; }
const char *tfc_device_logical_name(const tfc_device *d) { return d->logical_name; }
const char *tfc_device_physical_name(const tfc_device *d) { return d->physical_name; }
const char *tfc_device_type(const tfc_device *d) { return d->type; }

const tfc_device *tfc_tensor_device(const tfc_tensor *t) {
    return t && t->device ? t->device : &tfc_cpu_device;
}

tfc_device_memory_info tfc_device_get_memory_info(const tfc_device *d) {
    tfc_device_memory_info m = {0};
    if (!d || !d->allocator) return m;
    m.current = d->allocator->bytes_in_use();
    m.peak = d->allocator->peak_bytes();
    m.allocs = d->allocator->alloc_count();
    return m;
}

void tfc_device_reset_memory_stats(const tfc_device *d) {
    if (d && d->allocator) d->allocator->reset_peak();
}

/* ---- kernel tables ---- */
static tfc_device *device_of_type(const char *type) {
    for (int i = 0; i < N_DEVICES; i++)
        if (!strcmp(devices[i]->type, type ? type : "CPU")) return devices[i];
    return NULL;
}

bool tfc_kernel_register_def(const tfc_kernel_def *def, tfc_status *st) {
    tfc_registry_init();
    if (!def || !def->op || !def->compute)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "kernel_register: %s needs an op name and a compute function",
                              def && def->op ? def->op : "a kernel");
    tfc_device *d = device_of_type(def->device);
    if (!d) return tfc_status_set(st, TFC_UNIMPLEMENTED, "kernel_register: unknown device %s", def->device);
    const tfc_op *op = tfc_op_lookup(def->op);
    if (!op) return tfc_status_set(st, TFC_NOT_FOUND, "kernel_register: op %s is not registered", def->op);
    if (def->n_dtypes < 0 || def->n_dtypes > TFC_KERNEL_MAX_DTYPES)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "kernel_register: %s: %d dtypes is outside [0, %d]", def->op,
                              def->n_dtypes, TFC_KERNEL_MAX_DTYPES);
    int ta = -1;
    if (def->type_attr) {
        ta = tfc_op_attr_index(op, def->type_attr);
        if (ta < 0 || op->attrs[ta].kind != TFC_ATTR_TYPE)
            return tfc_status_set(st, TFC_NOT_FOUND, "kernel_register: op %s has no type attr '%s'", def->op,
                                  def->type_attr);
    }
    tfc_kernel_entry *e = calloc(1, sizeof *e); /* lives as long as the process, like the op it serves */
    if (!e) return tfc_status_oom(st, "kernel registration", sizeof *e);
    e->compute = def->compute;
    e->create = def->create;
    e->destroy = def->destroy;
    e->type_attr = ta;
    e->n_dtypes = def->n_dtypes;
    memcpy(e->dtypes, def->dtypes, (size_t)def->n_dtypes * sizeof(tfc_dtype));
    pthread_mutex_lock(&table_mu);
    e->next = atomic_load_explicit(&d->kernels[op->index], memory_order_relaxed);
    atomic_store_explicit(&d->kernels[op->index], e, memory_order_release);
    pthread_mutex_unlock(&table_mu);
    tfc_status_clear(st);
    return true;
}

bool tfc_kernel_register(const char *op_name, const char *device, tfc_kernel_fn fn, tfc_status *st) {
    const tfc_kernel_def def = {.op = op_name, .device = device, .compute = fn};
    return tfc_kernel_register_def(&def, st);
}

bool tfc_op_has_kernel(const tfc_op *op, const char *device) {
    const tfc_device *d = device_of_type(device);
    return d && op && tfc_device_kernel(d, op, NULL) != NULL;
}

bool tfc_device_supports_op(const tfc_device *d, const char *op_name, tfc_dtype dtype) {
    const tfc_op *op = d && op_name ? tfc_op_lookup(op_name) : NULL;
    if (!op) return false;
    int first_type = -1;
    for (int a = 0; a < op->n_attrs && first_type < 0; a++)
        if (op->attrs[a].kind == TFC_ATTR_TYPE) first_type = a;
    if (dtype != TFC_INVALID_DTYPE && first_type >= 0) {
        /* the op itself must allow the dtype */
        const tfc_attr_spec *s = &op->attrs[first_type];
        bool allowed = s->n_types == 0;
        for (int i = 0; i < s->n_types && !allowed; i++) allowed = s->types[i] == dtype;
        if (!allowed) return false;
    }
    for (const tfc_kernel_entry *e = atomic_load_explicit(&d->kernels[op->index], memory_order_acquire); e;
         e = e->next)
        if (e->type_attr != first_type || tfc_kernel_entry_admits(e, dtype)) return true;
    return false;
}
