/* Random kernels: TensorFlow's PhiloxRandomOp and RandomUniformIntOp on the CPU, bit-exact.
 *
 * Output elements are produced in groups; group g of a fixed-sample distribution uses the g-th 128-bit
 * sample after the call's base state (so the fill can be split across threads in any way), and each
 * group of TruncatedNormal (which rejects samples) starts at its own reserved window of 256 samples per
 * output element. Per call the stream advances by 256 samples per output element, as TensorFlow reserves. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/philox.h"
#include "kernels/cpu/kernels.h"

#define RESERVED_PER_OUTPUT 256

/* ---- generator state: one per kernel instance ----------------------------------------------------
 * TensorFlow's random kernel owns a Philox generator seeded from its (seed, seed2) attrs and advances it by
 * 256 samples per output element on every call; eager caches one kernel per (op, attrs) in the context, so
 * two calls of tf.raw_ops.RandomUniform with the same seeds continue one stream and tf.random.set_seed
 * (which clears that cache) restarts it. tfc's random kernels are instances (device/device.h) whose state is
 * that generator: eager/kernel_cache.c gives the same lifetime, a graph node owns its own. */
typedef struct {
    pthread_mutex_t mu; /* a graph may run one node from several calls at once */
    tfc_philox gen;
} rng_state;

static uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Nondeterministic 64-bit seeds for (seed, seed2) = (0, 0). */
static uint64_t random_seed64(void) {
    static _Atomic uint64_t counter;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t c = atomic_fetch_add(&counter, 1);
    return mix64((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ ((uint64_t)getpid() << 48) ^
                 (c * 0x9E3779B97F4A7C15ull) ^ (uint64_t)(uintptr_t)&counter);
}

static bool rng_create(tfc_kernel_ctx *k, void **state, tfc_status *st) {
    rng_state *r = tfc_malloc(sizeof *r);
    if (!r) return tfc_status_oom(st, "random generator", sizeof *r);
    const int64_t seed = tfc_attrs_int(k->attrs, "seed", 0), seed2 = tfc_attrs_int(k->attrs, "seed2", 0);
    if (seed == 0 && seed2 == 0) tfc_philox_init(&r->gen, random_seed64(), random_seed64());
    else tfc_philox_init(&r->gen, (uint64_t)seed, (uint64_t)seed2);
    pthread_mutex_init(&r->mu, NULL);
    *state = r;
    return true;
}

static void rng_destroy(void *state) {
    rng_state *r = state;
    if (!r) return;
    pthread_mutex_destroy(&r->mu);
    tfc_free(r);
}

/* The generator state for this call; the instance's copy advances by `reserve` samples. */
static tfc_philox reserve_samples(rng_state *r, uint64_t reserve) {
    pthread_mutex_lock(&r->mu);
    tfc_philox g = r->gen;
    tfc_philox_skip(&r->gen, reserve);
    pthread_mutex_unlock(&r->mu);
    return g;
}

/* a compute function registered as a plain kernel (without rng_create) has no generator */
static bool no_state(const tfc_kernel_ctx *k, tfc_status *st) {
    return tfc_status_set(st, TFC_INTERNAL, "%s: kernel run without its instance's generator", k->op->name);
}

/* ---- distributions ----------------------------------------------------------------------------------- */
typedef enum { DIST_UNIFORM, DIST_NORMAL, DIST_TRUNCATED, DIST_INT } dist_kind;

typedef struct {
    dist_kind kind;
    tfc_dtype dt;
    tfc_philox base;
    void *out;
    int64_t n;
    int group;           /* outputs per group */
    int64_t lo;          /* RandomUniformInt */
    uint64_t range;
} fill_job;

static inline void store_f(tfc_dtype dt, void *out, int64_t i, float v) {
    if (dt == TFC_FLOAT) ((float *)out)[i] = v;
    else if (dt == TFC_HALF) ((tfc_half *)out)[i] = tfc_half_from_float(v);
    else ((tfc_bfloat16 *)out)[i] = tfc_bfloat16_from_float(v);
}

/* TruncatedNormal reads one word at a time (TensorFlow's SingleSampleAdapter). */
typedef struct {
    tfc_philox *g;
    uint32_t buf[4];
    int used;
} single_sampler;

static inline uint32_t single_next(single_sampler *s) {
    if (s->used == 4) {
        tfc_philox_next(s->g, s->buf);
        s->used = 0;
    }
    return s->buf[s->used++];
}

/* One group of TruncatedNormal outputs (4 for 32-bit and narrower types, 2 for double): normals with
 * |x| >= 2 are rejected. */
static void truncated_group(tfc_philox *g, tfc_dtype dt, float *f, double *d) {
    single_sampler s = {.g = g, .used = 4};
    int idx = 0;
    if (dt == TFC_DOUBLE) {
        while (idx < 2) {
            uint32_t x0 = single_next(&s), x1 = single_next(&s), x2 = single_next(&s), x3 = single_next(&s);
            double r[2];
            tfc_philox_box_muller_d(x0, x1, x2, x3, &r[0], &r[1]);
            for (int i = 0; i < 2 && idx < 2; i++)
                if (fabs(r[i]) < 2.0) d[idx++] = r[i];
        }
        return;
    }
    while (idx < 4) {
        uint32_t x0 = single_next(&s), x1 = single_next(&s);
        float r[2];
        tfc_philox_box_muller_f(x0, x1, &r[0], &r[1]);
        for (int i = 0; i < 2 && idx < 4; i++)
            if (fabsf(r[i]) < 2.0f) f[idx++] = r[i];
    }
}

/* float32 uniforms of PX_LANES consecutive samples (4 PX_LANES outputs, in sample order) from gen, which
 * advances by PX_LANES: the Philox rounds of tfc_philox_next run on the counters side by side in vector lanes
 * (the 32x32 -> 64-bit products as vector multiplies), bit for bit what PX_LANES calls of tfc_philox_next and
 * tfc_philox_u32_to_float give. 64 lanes (4 independent chains of 16 under AVX-512) hide the rounds' latency:
 * 2.4x faster than 16. Dropout's mask is a RandomUniform over the whole activation: one scalar call per 4
 * outputs took 3.5% of a Keras CNN training step. */
#define PX_LANES 64
TFC_SIMD_CLONES static void uniform_f32_lanes(tfc_philox *gen, float *restrict out) {
    uint32_t c0[PX_LANES], c1[PX_LANES], c2[PX_LANES], c3[PX_LANES];
    for (int l = 0; l < PX_LANES; l++) {
        c0[l] = gen->ctr[0], c1[l] = gen->ctr[1], c2[l] = gen->ctr[2], c3[l] = gen->ctr[3];
        if (++gen->ctr[0] == 0 && ++gen->ctr[1] == 0 && ++gen->ctr[2] == 0) gen->ctr[3]++;
    }
    uint32_t k0 = gen->key[0], k1 = gen->key[1];
    for (int r = 0; r < 10; r++) {
        for (int l = 0; l < PX_LANES; l++) {
            const uint64_t p0 = (uint64_t)0xD2511F53u * c0[l], p1 = (uint64_t)0xCD9E8D57u * c2[l];
            const uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1[l] ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3[l] ^ k1;
            c1[l] = (uint32_t)p1;
            c3[l] = (uint32_t)p0;
            c0[l] = n0;
            c2[l] = n2;
        }
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    for (int l = 0; l < PX_LANES; l++) {
        const uint32_t w[4] = {c0[l], c1[l], c2[l], c3[l]};
        for (int i = 0; i < 4; i++) {
            const uint32_t v = (127u << 23) | (w[i] & 0x7fffffu); /* tfc_philox_u32_to_float */
            float f;
            memcpy(&f, &v, 4);
            out[4 * l + i] = f - 1.0f;
        }
    }
}

static void fill_groups(void *arg, int64_t g0, int64_t g1) {
    const fill_job *j = arg;
    tfc_philox gen = j->base;
    if (j->kind != DIST_TRUNCATED) tfc_philox_skip(&gen, (uint64_t)g0);
    if (j->kind == DIST_UNIFORM && j->dt == TFC_FLOAT) /* whole runs of PX_LANES full groups; the rest below */
        for (; g0 + PX_LANES <= g1 && (g0 + PX_LANES) * j->group <= j->n; g0 += PX_LANES)
            uniform_f32_lanes(&gen, (float *)j->out + g0 * j->group);
    for (int64_t g = g0; g < g1; g++) {
        int64_t off = g * j->group;
        int m = (int)(j->n - off < j->group ? j->n - off : j->group);
        uint32_t w[4];
        float f[4];
        double d[2];
        if (j->kind == DIST_TRUNCATED) {
            tfc_philox tg = j->base;
            tfc_philox_skip(&tg, (uint64_t)g * (uint64_t)(j->group * RESERVED_PER_OUTPUT / 4));
            truncated_group(&tg, j->dt, f, d);
        } else {
            tfc_philox_next(&gen, w);
        }
        switch (j->kind) {
        case DIST_UNIFORM:
            if (j->dt == TFC_DOUBLE) {
                d[0] = tfc_philox_u64_to_double(w[0], w[1]);
                d[1] = tfc_philox_u64_to_double(w[2], w[3]);
            } else {
                for (int i = 0; i < 4; i++)
                    f[i] = j->dt == TFC_FLOAT      ? tfc_philox_u32_to_float(w[i])
                           : j->dt == TFC_HALF     ? tfc_philox_u16_to_half_value(w[i])
                                                   : tfc_philox_u16_to_bf16_value(w[i]);
            }
            break;
        case DIST_NORMAL:
            if (j->dt == TFC_DOUBLE) {
                tfc_philox_box_muller_d(w[0], w[1], w[2], w[3], &d[0], &d[1]);
            } else {
                tfc_philox_box_muller_f(w[0], w[1], &f[0], &f[1]);
                tfc_philox_box_muller_f(w[2], w[3], &f[2], &f[3]);
            }
            break;
        case DIST_TRUNCATED: break;
        case DIST_INT:
            if (j->dt == TFC_INT32) {
                int32_t *o = (int32_t *)j->out + off;
                /* lo + (bits % range) in unsigned arithmetic: lo < 0 < hi may exceed int32 in between. */
                for (int i = 0; i < m; i++) o[i] = (int32_t)(uint32_t)((uint32_t)j->lo + w[i] % (uint32_t)j->range);
            } else {
                int64_t *o = (int64_t *)j->out + off;
                for (int i = 0; i < m; i++) {
                    uint64_t bits = (uint64_t)w[2 * i] | ((uint64_t)w[2 * i + 1] << 32);
                    o[i] = (int64_t)((uint64_t)j->lo + bits % j->range);
                }
            }
            continue;
        }
        if (j->dt == TFC_DOUBLE) {
            for (int i = 0; i < m; i++) ((double *)j->out)[off + i] = d[i];
        } else {
            for (int i = 0; i < m; i++) store_f(j->dt, j->out, off + i, f[i]);
        }
    }
}

static bool random_fill(tfc_kernel_ctx *k, dist_kind kind, tfc_status *st) {
    tfc_tensor *o = k->out[0];
    fill_job j = {.kind = kind, .dt = o->dtype, .out = o->data, .n = o->num_elements};
    if (kind == DIST_INT) {
        const tfc_tensor *lo = k->in[1], *hi = k->in[2];
        if (j.dt == TFC_INT32) {
            j.lo = *(const int32_t *)lo->data;
            j.range = (uint32_t)*(const int32_t *)hi->data - (uint32_t)j.lo;
        } else {
            j.lo = *(const int64_t *)lo->data;
            j.range = (uint64_t)*(const int64_t *)hi->data - (uint64_t)j.lo;
        }
        j.group = j.dt == TFC_INT32 ? 4 : 2;
    } else if (j.dt != TFC_FLOAT && j.dt != TFC_DOUBLE && j.dt != TFC_HALF && j.dt != TFC_BFLOAT16) {
        return tfc_kernel_unimplemented(k, j.dt, st);
    } else {
        j.group = j.dt == TFC_DOUBLE ? 2 : 4;
    }
    /* uint64 product: TensorFlow multiplies in int64 too (wrapping only beyond 2^55 elements). */
    uint64_t reserve = (uint64_t)j.n * RESERVED_PER_OUTPUT;
    if (!k->state) return no_state(k, st);
    j.base = reserve_samples(k->state, reserve);
    if (j.n == 0) return true;
    int64_t groups = (j.n + j.group - 1) / j.group;
    int64_t cost = kind == DIST_UNIFORM || kind == DIST_INT ? 60 : kind == DIST_NORMAL ? 300 : 400;
    tfc_parallel_for(k->pool, groups, cost, fill_groups, &j);
    return true;
}

static bool random_uniform(tfc_kernel_ctx *k, tfc_status *st) { return random_fill(k, DIST_UNIFORM, st); }
static bool random_standard_normal(tfc_kernel_ctx *k, tfc_status *st) { return random_fill(k, DIST_NORMAL, st); }
static bool truncated_normal(tfc_kernel_ctx *k, tfc_status *st) { return random_fill(k, DIST_TRUNCATED, st); }
static bool random_uniform_int(tfc_kernel_ctx *k, tfc_status *st) { return random_fill(k, DIST_INT, st); }

/* ---- _TfcDropout / _TfcDropoutGrad (see src/ops/random_ops.c) ---------------------------------------
 * The uniforms are RandomUniform's for x's shape: drawn from the generator state of RandomUniform with the
 * same attrs (seed, seed2, dtype and the shape's index type, int32 unless a dim needs int64, as the Keras
 * layer builds it), so a fused call and an unfused one continue the same stream. Each chunk of up to
 * 4 PX_LANES uniforms is drawn into a buffer on the stack and applied at once: one pass over x instead of
 * RandomUniform, GreaterEqual, Cast, Mul and Mul (five passes and three temporaries of x's size). */
typedef struct {
    tfc_philox base;
    const void *x;
    void *y;
    bool *mask;
    int64_t n;
    double rate, scale; /* as T: float32 rounds them once */
    bool dbl;
} dropout_job;

/* y = (x * scale) * (keep ? 1 : 0), the products of the unfused Mul ops (so -0, NaN and inf as they give) */
TFC_SIMD_CLONES static void dropout_apply_f32(const float *restrict u, const float *restrict x, float *restrict y,
                                              bool *restrict m, int64_t len, float rate, float scale) {
    for (int64_t i = 0; i < len; i++) {
        const float keep = u[i] >= rate ? 1.0f : 0.0f;
        y[i] = x[i] * scale * keep;
        m[i] = keep != 0.0f;
    }
}

static void dropout_groups(void *arg, int64_t g0, int64_t g1) {
    const dropout_job *j = arg;
    tfc_philox gen = j->base;
    tfc_philox_skip(&gen, (uint64_t)g0);
    if (j->dbl) { /* 2 uniforms per sample (tfc_philox_u64_to_double) */
        const double *x = j->x;
        double *y = j->y;
        for (int64_t g = g0; g < g1; g++) {
            uint32_t w[4];
            tfc_philox_next(&gen, w);
            const double u[2] = {tfc_philox_u64_to_double(w[0], w[1]), tfc_philox_u64_to_double(w[2], w[3])};
            for (int64_t i = 2 * g; i < 2 * g + 2 && i < j->n; i++) {
                const bool keep = u[i - 2 * g] >= j->rate;
                y[i] = x[i] * j->scale * (keep ? 1.0 : 0.0);
                j->mask[i] = keep;
            }
        }
        return;
    }
    const float *x = j->x;
    float *y = j->y;
    float u[4 * PX_LANES];
    while (g0 < g1) {
        const int64_t off = 4 * g0;
        int64_t len;
        if (g0 + PX_LANES <= g1 && (g0 + PX_LANES) * 4 <= j->n) {
            uniform_f32_lanes(&gen, u);
            len = 4 * PX_LANES;
            g0 += PX_LANES;
        } else {
            uint32_t w[4];
            tfc_philox_next(&gen, w);
            for (int i = 0; i < 4; i++) u[i] = tfc_philox_u32_to_float(w[i]);
            len = j->n - off < 4 ? j->n - off : 4;
            g0++;
        }
        dropout_apply_f32(u, x + off, y + off, j->mask + off, len, (float)j->rate, (float)j->scale);
    }
}

static bool tfc_dropout(tfc_kernel_ctx *k, tfc_status *st) {
    const tfc_tensor *x = k->in[0];
    if (x->dtype != TFC_FLOAT && x->dtype != TFC_DOUBLE) return tfc_kernel_unimplemented(k, x->dtype, st);
    const double rate = tfc_attrs_float(k->attrs, "rate", 0), scale = 1.0 / (1.0 - rate);
    dropout_job j = {.x = x->data, .y = k->out[0]->data, .mask = k->out[1]->data, .n = x->num_elements,
                     .rate = rate, .scale = scale, .dbl = x->dtype == TFC_DOUBLE};
    const uint64_t reserve = (uint64_t)j.n * RESERVED_PER_OUTPUT;
    if (k->instance_of) { /* eager: RandomUniform's instance with these seeds, in the context's cache */
        tfc_dtype tidx = TFC_INT32; /* the Keras layer's shape vector (eager/ops_random.c shape_tensor) */
        for (int i = 0; i < x->shape.rank; i++)
            if (x->shape.dims[i] > INT32_MAX) tidx = TFC_INT64;
        const tfc_op *ru = tfc_op_lookup("RandomUniform");
        if (!ru) return tfc_status_set(st, TFC_INTERNAL, "_TfcDropout: RandomUniform is not registered");
        tfc_attrs ra = {.op = ru, .n = ru->n_attrs};
        const char *names[4] = {"seed", "seed2", "dtype", "T"};
        const tfc_attr vals[4] = {TFC_ATTR_I("seed", tfc_attrs_int(k->attrs, "seed", 0)),
                                  TFC_ATTR_I("seed2", tfc_attrs_int(k->attrs, "seed2", 0)),
                                  TFC_ATTR_T("dtype", x->dtype), TFC_ATTR_T("T", tidx)};
        for (int i = 0; i < 4; i++) {
            const int a = tfc_op_attr_index(ru, names[i]);
            if (a < 0) return tfc_status_set(st, TFC_INTERNAL, "_TfcDropout: RandomUniform has no attr %s", names[i]);
            ra.a[a] = vals[i];
            ra.a[a].name = ru->attrs[a].name;
        }
        tfc_kernel_inst *inst = k->instance_of(k->ctx, ru, &ra, &tidx, 1, st);
        if (!inst) return false;
        j.base = reserve_samples(inst->state, reserve);
        tfc_kernel_inst_unref(inst);
    } else {
        if (!k->state) return no_state(k, st);
        j.base = reserve_samples(k->state, reserve);
    }
    if (j.n == 0) return true;
    const int group = j.dbl ? 2 : 4;
    tfc_parallel_for(k->pool, (j.n + group - 1) / group, 80, dropout_groups, &j);
    return true;
}

/* _TfcDropoutSeeded: the generator a fresh _TfcDropout with (seed, seed2) = (seed[0] ^ mix(salt), seed[1]) starts
 * from (no state kept between calls). */
static bool tfc_dropout_seeded(tfc_kernel_ctx *k, tfc_status *st) {
    const tfc_tensor *x = k->in[0], *seed = k->in[1];
    if (x->dtype != TFC_FLOAT && x->dtype != TFC_DOUBLE) return tfc_kernel_unimplemented(k, x->dtype, st);
    if (seed->dtype != TFC_INT64 || seed->shape.rank != 1 || seed->num_elements != 2)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "_TfcDropoutSeeded: seed must be an int64 vector of 2 elements");
    const double rate = tfc_attrs_float(k->attrs, "rate", 0), scale = 1.0 / (1.0 - rate);
    const int64_t salt = tfc_attrs_int(k->attrs, "salt", 0), *s = seed->data;
    dropout_job j = {.x = x->data, .y = k->out[0]->data, .mask = k->out[1]->data, .n = x->num_elements,
                     .rate = rate, .scale = scale, .dbl = x->dtype == TFC_DOUBLE};
    tfc_philox_init(&j.base, (uint64_t)s[0] ^ (salt ? mix64((uint64_t)salt) : 0), (uint64_t)s[1]);
    if (j.n == 0) return true;
    const int group = j.dbl ? 2 : 4;
    tfc_parallel_for(k->pool, (j.n + group - 1) / group, 80, dropout_groups, &j);
    return true;
}

typedef struct {
    const void *dy;
    const bool *mask;
    void *dx;
    double scale;
    bool dbl;
} dropout_grad_job;

TFC_SIMD_CLONES static void dropout_grad_rows(void *arg, int64_t b, int64_t e) {
    const dropout_grad_job *j = arg;
    if (j->dbl) {
        const double *dy = j->dy;
        double *dx = j->dx;
        for (int64_t i = b; i < e; i++) dx[i] = dy[i] * (double)j->mask[i] * j->scale;
        return;
    }
    const float *restrict dy = j->dy;
    const uint8_t *restrict m = (const uint8_t *)j->mask; /* (bool loads did not vectorise) */
    float *restrict dx = j->dx;
    const float scale = (float)j->scale;
    /* the mask as a conversion (bool is 0 or 1), not a select: GCC made the select a branch on each random
     * mask byte (mispredicted half the time: 6% of a CNN training step) */
    for (int64_t i = b; i < e; i++) dx[i] = dy[i] * (float)m[i] * scale;
}

static bool tfc_dropout_grad(tfc_kernel_ctx *k, tfc_status *st) {
    const tfc_tensor *dy = k->in[0];
    if (dy->dtype != TFC_FLOAT && dy->dtype != TFC_DOUBLE) return tfc_kernel_unimplemented(k, dy->dtype, st);
    const double rate = tfc_attrs_float(k->attrs, "rate", 0);
    dropout_grad_job j = {.dy = dy->data, .mask = k->in[1]->data, .dx = k->out[0]->data, .scale = 1.0 / (1.0 - rate),
                          .dbl = dy->dtype == TFC_DOUBLE};
    tfc_parallel_for(k->pool, dy->num_elements, 2, dropout_grad_rows, &j);
    return true;
}

const tfc_kernel_reg tfc_cpu_kernels_random[] = {
    {"_TfcDropoutGrad", tfc_dropout_grad},
    {"_TfcDropoutSeeded", tfc_dropout_seeded},
    {NULL, NULL},
};

#define RNG_KERNEL(name, fn) {.op = name, .device = "CPU", .compute = fn, .create = rng_create, .destroy = rng_destroy}
const tfc_kernel_def tfc_cpu_kernel_defs_random[] = {
    RNG_KERNEL("_TfcDropout", tfc_dropout),
    RNG_KERNEL("RandomUniform", random_uniform),
    RNG_KERNEL("RandomStandardNormal", random_standard_normal),
    RNG_KERNEL("TruncatedNormal", truncated_normal),
    RNG_KERNEL("RandomUniformInt", random_uniform_int),
    {.op = NULL},
};
