/* The op fuzzer: random valid and invalid calls of every registered op, read from the registry's spec strings.
 * Inputs get random dtypes (mostly from the allowed sets), random ranks and dims (zero-size dims, and dims of
 * 2^62 and more next to a zero so the tensor still exists), random and extreme values; attrs get defaults,
 * allowed values and extreme numbers. Every call must end in an output or an error status with a message,
 * without a signal or a sanitizer report (ASan/UBSan abort the run), and a known call after it must still give
 * the right numbers. Allocations above 64 MiB fail as out of memory, so a random shape asking for more gives
 * RESOURCE_EXHAUSTED rather than swapping.
 *
 *   TFC_FUZZ_SEED=n      replay a run (the seed is printed at the start and with any failure)
 *   TFC_FUZZ_ITER=i      run only iteration i of that seed (printed with any failure)
 *   TFC_FUZZ_SECONDS=s   run time (default 45 under sanitizers, 12 otherwise)
 *   TFC_FUZZ_OP=name     only that op
 *   TFC_FUZZ_VERBOSE=1   print every call before making it (with the seed of a run that a sanitizer stopped,
 *                        the last line printed is the call that failed)
 *   TFC_FUZZ_SHOW_INTERNAL=1  print the op and message of every INTERNAL error (allowed, but worth a look) */
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/tensor_internal.h"
#include "ops/registry.h"
#include "tfc_test.h"

#if defined(__SANITIZE_ADDRESS__)
#define DEFAULT_SECONDS 45
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DEFAULT_SECONDS 45
#endif
#endif
#ifndef DEFAULT_SECONDS
#define DEFAULT_SECONDS 12
#endif

#define MAX_ELEMS 48 /* largest non-empty input */

/* ---- replayable randomness ---------------------------------------------------------------------------------- */
static uint64_t rng;
static bool show_internal;
static uint64_t next_u64(void) { /* splitmix64 */
    uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static int64_t below(int64_t n) { return n <= 0 ? 0 : (int64_t)(next_u64() % (uint64_t)n); }
static bool chance(int percent) { return below(100) < percent; }

static const tfc_dtype ALL_DT[] = {TFC_FLOAT, TFC_DOUBLE, TFC_INT32, TFC_UINT8, TFC_INT16, TFC_INT8, TFC_STRING,
                                   TFC_INT64, TFC_BOOL, TFC_BFLOAT16, TFC_UINT16, TFC_HALF};
#define N_DT ((int)(sizeof ALL_DT / sizeof ALL_DT[0]))

static const int64_t HUGE_DIMS[] = {(int64_t)1 << 62, (int64_t)1 << 31, INT64_MAX, ((int64_t)1 << 32) + 1,
                                    (int64_t)1 << 40};
static const int64_t EXTREME_INTS[] = {INT64_MAX, INT64_MIN, (int64_t)1 << 62, -((int64_t)1 << 62), INT32_MAX,
                                       INT32_MIN, (int64_t)1 << 31, 1 << 20, -1000, 65536};

static int64_t rand_int_value(void) {
    if (chance(8)) return EXTREME_INTS[below(sizeof EXTREME_INTS / sizeof EXTREME_INTS[0])];
    return below(9) - 3; /* axes, indices, sizes: mostly small, some negative */
}

/* ---- what the current call is, for failure reports ------------------------------------------------------------ */
static char desc[4096];
static size_t desc_n;
static uint64_t run_seed;
static int64_t run_iter = -1;

static void descf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void descf(const char *fmt, ...) {
    if (desc_n >= sizeof desc) return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(desc + desc_n, sizeof desc - desc_n, fmt, ap);
    va_end(ap);
    if (k > 0) desc_n += (size_t)k;
    if (desc_n > sizeof desc) desc_n = sizeof desc;
}

static void report_current(void) {
    char head[160];
    int k = snprintf(head, sizeof head, "\nop fuzzer: failing call: TFC_FUZZ_SEED=%llu TFC_FUZZ_ITER=%lld\n  ",
                     (unsigned long long)run_seed, (long long)run_iter);
    if (write(2, head, (size_t)k) < 0) return;
    if (write(2, desc, strnlen(desc, sizeof desc)) < 0) return;
    if (write(2, "\n", 1) < 0) return;
}

static void on_signal(int sig) {
    report_current();
    signal(sig, SIG_DFL);
    raise(sig);
}

extern void __sanitizer_set_death_callback(void (*cb)(void)) __attribute__((weak));

/* ---- inputs ------------------------------------------------------------------------------------------------ */
static void rand_shape(int64_t *dims, int *rank) {
    int r = chance(70) ? (int)below(4) : (int)below(TFC_MAX_RANK + 1);
    int64_t n = 1;
    bool zero = false;
    for (int i = 0; i < r; i++) {
        dims[i] = chance(12) ? 0 : 1 + below(4);
        if (dims[i] == 0) zero = true;
        n *= dims[i] ? dims[i] : 1;
    }
    /* huge dims only next to a zero (an empty tensor that exists), else keep the tensor small */
    if (zero && chance(50))
        for (int i = 0; i < r; i++)
            if (dims[i] != 0 && chance(50)) dims[i] = HUGE_DIMS[below(sizeof HUGE_DIMS / sizeof HUGE_DIMS[0])];
    while (!zero && n > MAX_ELEMS && r > 0) { /* shrink */
        r--;
        n = 1;
        for (int i = 0; i < r; i++) n *= dims[i];
    }
    *rank = r;
}

static void fill_values(tfc_tensor *t) {
    int64_t n = tfc_tensor_num_elements(t);
    tfc_dtype dt = tfc_tensor_dtype(t);
    void *p = tfc_tensor_mutable_data(t);
    for (int64_t i = 0; i < n; i++) {
        double f = chance(5) ? (chance(50) ? 1e30 : NAN) : (double)(below(13) - 6) * 0.5;
        int64_t v = rand_int_value();
        switch (dt) {
        case TFC_FLOAT: ((float *)p)[i] = (float)f; break;
        case TFC_DOUBLE: ((double *)p)[i] = f; break;
        case TFC_HALF: ((tfc_half *)p)[i] = tfc_half_from_float((float)f); break;
        case TFC_BFLOAT16: ((tfc_bfloat16 *)p)[i] = tfc_bfloat16_from_float((float)f); break;
        case TFC_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
        case TFC_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
        case TFC_INT16: ((int16_t *)p)[i] = (int16_t)v; break;
        case TFC_UINT16: ((uint16_t *)p)[i] = (uint16_t)v; break;
        case TFC_INT32: ((int32_t *)p)[i] = (int32_t)(v < INT32_MIN ? INT32_MIN : v > INT32_MAX ? INT32_MAX : v); break;
        case TFC_INT64: ((int64_t *)p)[i] = v; break;
        case TFC_BOOL: ((bool *)p)[i] = chance(50); break;
        default: break;
        }
    }
}

static const char *const STRINGS[] = {"", "a", "hello", "1.5", "-7", "\xff\xfe", "a,b,,c", "nan", "12345678901234567890",
                                      "longer string that does not fit the small-string buffer"};

/* A random tensor of dtype dt, shape from `shape` when given (else random). NULL when it cannot exist. */
static tfc_tensor *rand_tensor(tfc_dtype dt, const int64_t *shape, int shape_rank, tfc_status *st) {
    int64_t dims[TFC_MAX_RANK];
    int rank;
    if (shape) {
        memcpy(dims, shape, sizeof(int64_t) * (size_t)shape_rank);
        rank = shape_rank;
    } else {
        rand_shape(dims, &rank);
    }
    if (dt == TFC_STRING) {
        int64_t n = 1;
        for (int i = 0; i < rank; i++)
            if (__builtin_mul_overflow(n, dims[i], &n)) return NULL;
        if (n > MAX_ELEMS) return NULL;
        const char *s[MAX_ELEMS + 1];
        size_t len[MAX_ELEMS + 1];
        for (int64_t i = 0; i < n; i++) {
            s[i] = STRINGS[below(sizeof STRINGS / sizeof STRINGS[0])];
            len[i] = strlen(s[i]);
        }
        return tfc_tensor_from_strings(s, len, dims, rank, st);
    }
    tfc_tensor *t = tfc_tensor_new(dt, dims, rank, st);
    if (t && tfc_tensor_num_elements(t) <= MAX_ELEMS) fill_values(t);
    else if (t && tfc_tensor_num_elements(t) > MAX_ELEMS) { /* a shared shape that came out large */
        tfc_tensor_unref(t);
        return NULL;
    }
    return t;
}

static void desc_tensor(const tfc_tensor *t) {
    if (!t) {
        descf("NULL ");
        return;
    }
    descf("%s[", tfc_dtype_name(tfc_tensor_dtype(t)));
    for (int i = 0; i < tfc_tensor_rank(t); i++) descf("%s%lld", i ? "," : "", (long long)tfc_tensor_dim(t, i));
    descf("]");
    int64_t n = tfc_tensor_num_elements(t);
    tfc_dtype dt = tfc_tensor_dtype(t);
    if (n > 0 && n <= 8 && dt != TFC_STRING && dt != TFC_RESOURCE) {
        descf("{");
        for (int64_t i = 0; i < n; i++) descf("%s%.17g", i ? "," : "", tfc_tensor_get_f64(t, i));
        descf("}");
    }
    descf(" ");
}

/* ---- one call ------------------------------------------------------------------------------------------------- */
typedef struct {
    tfc_tensor *in[TFC_MAX_IO];
    tfc_variable *vars[TFC_MAX_IO];
    int n_in, n_made, n_vars; /* inputs passed; made (to release) */
    tfc_attr attrs[TFC_MAX_ATTRS];
    int n_attrs;
    /* attr value storage */
    int64_t ints[TFC_MAX_ATTRS][TFC_MAX_RANK];
    double floats[TFC_MAX_ATTRS][4];
    tfc_dtype types[TFC_MAX_ATTRS][4];
    tfc_shape shapes[TFC_MAX_ATTRS][2];
    const char *strs[TFC_MAX_ATTRS][3];
    tfc_tensor *attr_tensors[TFC_MAX_ATTRS];
} call;

static tfc_dtype pick_dtype(const tfc_attr_spec *a) {
    if (a && a->n_types > 0 && !chance(5)) return a->types[below(a->n_types)];
    return ALL_DT[below(N_DT)];
}

static bool type_attr_used_by_input(const tfc_op *op, int ai) {
    for (int j = 0; j < op->n_in_args; j++)
        if (op->in[j].type_attr == ai || op->in[j].number_attr == ai) return true;
    return false;
}

static void gen_attr(call *c, const tfc_op *op, int ai) {
    const tfc_attr_spec *a = &op->attrs[ai];
    bool inferred = type_attr_used_by_input(op, ai);
    if (inferred && !chance(3)) return;               /* type and number attrs follow the inputs */
    if (a->has_default && chance(45)) return;          /* the default */
    if (!a->has_default && chance(2)) return;          /* a required attr missing */
    tfc_attr *x = &c->attrs[c->n_attrs];
    int k = c->n_attrs;
    *x = (tfc_attr){.name = a->name, .kind = a->kind};
    if (chance(2)) x->name = "no_such_attr";
    switch (a->kind) {
    case TFC_ATTR_INT:
        if (a->has_min && chance(70)) x->v.i = a->min + below(4);
        else x->v.i = rand_int_value();
        break;
    case TFC_ATTR_FLOAT: {
        static const double F[] = {0, 0.5, 1, -1, 1e-7, 1e30, -1e30, INFINITY, NAN, 0.999};
        x->v.f = F[below(10)];
        break;
    }
    case TFC_ATTR_BOOL: x->v.b = chance(50); break;
    case TFC_ATTR_TYPE: x->v.type = pick_dtype(a); break;
    case TFC_ATTR_STRING: {
        static const char *const S[] = {"", "NHWC", "NCHW", "SAME", "VALID", "EXPLICIT", "relu", "bogus", "REFLECT",
                                        "SYMMETRIC", "%s%n"};
        x->v.s = a->n_strs > 0 && chance(85) ? a->strs[below(a->n_strs)] : S[below(11)];
        break;
    }
    case TFC_ATTR_LIST_INT: {
        x->n = chance(50) ? 4 : (int)below(6);
        bool ones = chance(50);
        for (int i = 0; i < x->n; i++) c->ints[k][i] = ones ? 1 + below(2) : rand_int_value();
        x->v.ints = c->ints[k];
        break;
    }
    case TFC_ATTR_LIST_FLOAT:
        x->n = (int)below(4);
        for (int i = 0; i < x->n; i++) c->floats[k][i] = chance(10) ? NAN : (double)(below(9) - 4);
        x->v.floats = c->floats[k];
        break;
    case TFC_ATTR_LIST_TYPE:
        x->n = (int)below(4);
        for (int i = 0; i < x->n; i++) c->types[k][i] = pick_dtype(a);
        x->v.types = c->types[k];
        break;
    case TFC_ATTR_SHAPE: {
        int r;
        rand_shape(c->ints[k], &r);
        x->n = chance(10) ? -1 : r;
        if (chance(10) && r > 0) c->ints[k][0] = -1;
        x->v.ints = c->ints[k];
        break;
    }
    case TFC_ATTR_LIST_SHAPE:
        x->n = (int)below(3);
        for (int i = 0; i < x->n; i++) {
            int r;
            rand_shape(c->shapes[k][i].dims, &r);
            c->shapes[k][i].rank = r;
        }
        x->v.shapes = c->shapes[k];
        break;
    case TFC_ATTR_LIST_STRING:
        x->n = (int)below(3);
        for (int i = 0; i < x->n; i++) c->strs[k][i] = STRINGS[below(sizeof STRINGS / sizeof STRINGS[0])];
        x->v.strs = c->strs[k];
        break;
    case TFC_ATTR_TENSOR: {
        tfc_status st = TFC_STATUS_INIT;
        c->attr_tensors[k] = rand_tensor(ALL_DT[below(N_DT)], NULL, 0, &st);
        x->v.tensor = c->attr_tensors[k];
        if (!x->v.tensor) return;
        break;
    }
    default: return;
    }
    c->n_attrs++;
}

static void desc_attrs(const call *c) {
    for (int i = 0; i < c->n_attrs; i++) {
        const tfc_attr *a = &c->attrs[i];
        descf("%s=", a->name);
        switch (a->kind) {
        case TFC_ATTR_INT: descf("%lld ", (long long)a->v.i); break;
        case TFC_ATTR_FLOAT: descf("%g ", a->v.f); break;
        case TFC_ATTR_BOOL: descf("%d ", a->v.b); break;
        case TFC_ATTR_TYPE: descf("%s ", tfc_dtype_name(a->v.type)); break;
        case TFC_ATTR_STRING: descf("'%s' ", a->v.s); break;
        case TFC_ATTR_LIST_INT:
        case TFC_ATTR_SHAPE:
            descf("[");
            for (int j = 0; j < a->n; j++) descf("%s%lld", j ? "," : "", (long long)a->v.ints[j]);
            descf("]%s ", a->kind == TFC_ATTR_SHAPE && a->n < 0 ? "(unknown rank)" : "");
            break;
        case TFC_ATTR_TENSOR: desc_tensor(a->v.tensor); break;
        default: descf("(list of %d) ", a->n); break;
        }
    }
}

/* Builds inputs for op: per type attr one dtype, per number attr one count, shapes shared or random. */
static bool gen_inputs(call *c, tfc_ctx *ctx, const tfc_op *op) {
    tfc_dtype attr_dt[TFC_MAX_ATTRS];
    int64_t attr_n[TFC_MAX_ATTRS];
    for (int i = 0; i < op->n_attrs; i++) {
        attr_dt[i] = pick_dtype(&op->attrs[i]);
        const tfc_attr_spec *a = &op->attrs[i];
        int64_t lo = a->has_min ? a->min : 0;
        attr_n[i] = lo + below(3);
        if (attr_n[i] > 6) attr_n[i] = 6;
    }
    int64_t base[TFC_MAX_RANK];
    int base_rank;
    rand_shape(base, &base_rank);
    bool shared = chance(60);
    tfc_status st = TFC_STATUS_INIT;
    for (int j = 0; j < op->n_in_args; j++) {
        const tfc_arg_spec *g = &op->in[j];
        int count = 1;
        if (g->kind == TFC_ARG_N_TYPE && g->number_attr >= 0) count = (int)attr_n[g->number_attr];
        if (g->kind == TFC_ARG_TYPE_LIST) count = (int)below(4);
        for (int e = 0; e < count && c->n_in < TFC_MAX_IO - 1; e++) {
            tfc_dtype dt = g->kind == TFC_ARG_FIXED || (g->kind == TFC_ARG_N_TYPE && g->type_attr < 0) ? g->fixed
                           : g->kind == TFC_ARG_TYPE_LIST                                           ? ALL_DT[below(N_DT)]
                           : g->type_attr >= 0                                                      ? attr_dt[g->type_attr]
                                                                                                    : ALL_DT[below(N_DT)];
            if (chance(3)) dt = ALL_DT[below(N_DT)];
            tfc_tensor *t = NULL;
            if (dt == TFC_RESOURCE) {
                tfc_tensor *init = rand_tensor(ALL_DT[below(4)], shared ? base : NULL, base_rank, &st);
                if (!init) return false;
                tfc_variable *v = tfc_variable_new(ctx, init, true, "fuzz", &st);
                tfc_tensor_unref(init);
                if (!v) return false;
                c->vars[c->n_vars++] = v;
                t = tfc_tensor_ref(tfc_variable_handle(v));
            } else {
                bool small_int = (dt == TFC_INT32 || dt == TFC_INT64) && chance(50);
                if (small_int) { /* an index-like input: a scalar or a short vector */
                    int64_t d = below(5);
                    t = rand_tensor(dt, &d, chance(40) ? 0 : 1, &st);
                } else {
                    t = rand_tensor(dt, shared && chance(85) ? base : NULL, base_rank, &st);
                }
            }
            if (!t) {
                int64_t one = 1;
                t = rand_tensor(dt == TFC_RESOURCE ? TFC_FLOAT : dt, &one, 1, &st);
                if (!t) return false;
            }
            c->in[c->n_in++] = t;
            c->n_made = c->n_in;
        }
    }
    c->n_made = c->n_in;
    if (chance(3) && c->n_in > 0) c->n_in--; /* a missing input */
    return true;
}

static void call_free(call *c) {
    for (int i = 0; i < c->n_made; i++) tfc_tensor_unref(c->in[i]);
    for (int i = 0; i < c->n_vars; i++) tfc_variable_free(c->vars[i]);
    for (int i = 0; i < TFC_MAX_ATTRS; i++) tfc_tensor_unref(c->attr_tensors[i]);
}

/* A known call: 1 + 2 = 3 on two elements. */
static bool still_works(tfc_ctx *ctx) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *a = tfc_vec_f32((float[]){1, 2}, 2, &st), *b = tfc_vec_f32((float[]){2, 0.5f}, 2, &st);
    tfc_tensor *y = a && b ? tfc_emit(ctx, "AddV2", (tfc_tensor *[]){a, b}, 2, NULL, 0, &st) : NULL;
    bool ok = y && tfc_tensor_get_f64(y, 0) == 3.0 && tfc_tensor_get_f64(y, 1) == 2.5;
    tfc_tensor_unref(y);
    tfc_tensor_unref(b);
    tfc_tensor_unref(a);
    return ok;
}

typedef struct {
    int64_t calls, ok, errors, by_code[32];
} stats;

static bool run_one(tfc_ctx *ctx, const tfc_op *op, stats *s, bool verbose) {
    call c;
    memset(&c, 0, sizeof c);
    int64_t live = tfc_tensor_live_count();
    desc_n = 0;
    desc[0] = 0;
    bool ok = true;
    if (!gen_inputs(&c, ctx, op)) goto done; /* could not make the inputs (rare): nothing to test */
    for (int i = 0; i < op->n_attrs; i++) gen_attr(&c, op, i);
    descf("%s( ", op->def->name);
    for (int i = 0; i < c.n_in; i++) desc_tensor(c.in[i]);
    descf(") ");
    desc_attrs(&c);
    if (verbose) fprintf(stderr, "[%lld] %s\n", (long long)run_iter, desc);
    tfc_tensor *out[TFC_MAX_IO] = {0};
    tfc_status st = TFC_STATUS_INIT;
    alarm(20);
    int n = tfc_execute_op(ctx, op, c.in, c.n_in, c.attrs, c.n_attrs, out, TFC_MAX_IO, &st);
    alarm(0);
    s->calls++;
    if (n >= 0) {
        s->ok++;
        for (int i = 0; i < n && i < TFC_MAX_IO; i++) {
            if (!out[i] && op->n_out_args > 0) {
                report_current();
                fprintf(stderr, "  output %d missing after a successful call\n", i);
                ok = false;
            }
            tfc_tensor_unref(out[i]);
        }
    } else {
        s->errors++;
        s->by_code[st.code & 31]++;
        if (st.code == TFC_OK || !st.msg[0]) {
            report_current();
            fprintf(stderr, "  failed without a status or message (code %s)\n", tfc_code_name(st.code));
            ok = false;
        } /* INTERNAL is allowed: TensorFlow reports some failures so (EncodePng of an empty image) */
        if (st.code == TFC_INTERNAL && show_internal) fprintf(stderr, "INTERNAL from %s: %s\n", op->def->name, st.msg);
    }
    if (!still_works(ctx)) {
        report_current();
        fprintf(stderr, "  a valid call after it no longer works\n");
        ok = false;
    }
done:
    call_free(&c);
    if (tfc_tensor_live_count() != live) { /* the call kept a tensor alive: a leak */
        report_current();
        fprintf(stderr, "  %lld tensors left alive after the call\n", (long long)(tfc_tensor_live_count() - live));
        ok = false;
    }
    return ok;
}

static uint64_t mix(uint64_t seed, uint64_t i) {
    rng = seed ^ (i * 0xD1B54A32D192ED03ull);
    next_u64();
    return next_u64();
}

int main(void) {
    const char *e = getenv("TFC_FUZZ_SEED");
    run_seed = e ? strtoull(e, NULL, 10) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 16);
    e = getenv("TFC_FUZZ_ITER");
    int64_t only_iter = e ? strtoll(e, NULL, 10) : -1;
    e = getenv("TFC_FUZZ_SECONDS");
    double seconds = e ? atof(e) : DEFAULT_SECONDS;
    const char *only_op = getenv("TFC_FUZZ_OP");
    bool verbose = getenv("TFC_FUZZ_VERBOSE") != NULL;
    show_internal = getenv("TFC_FUZZ_SHOW_INTERNAL") != NULL;
    printf("op fuzzer: seed %llu (replay with TFC_FUZZ_SEED=%llu), %.0f s\n", (unsigned long long)run_seed,
           (unsigned long long)run_seed, seconds);
    fflush(stdout);

    signal(SIGSEGV, on_signal);
    signal(SIGBUS, on_signal);
    signal(SIGFPE, on_signal);
    signal(SIGILL, on_signal);
    signal(SIGABRT, on_signal);
    signal(SIGALRM, on_signal); /* a call that hangs */
    if (__sanitizer_set_death_callback) __sanitizer_set_death_callback(report_current);
    tfc_log_set_min_level(TFC_LOG_ERROR);
    tfc_alloc_set_limit((size_t)64 << 20);

    tfc_status st = TFC_STATUS_INIT;
    tfc_ctx *ctx = tfc_ctx_new(&(tfc_ctx_opts){.intra_op_threads = 2}, &st);
    REQUIRE(ctx);
    int n_ops = tfc_op_count();
    REQUIRE(n_ops > 0);
    const tfc_op *only = only_op ? tfc_op_lookup(only_op) : NULL;
    REQUIRE(!only_op || only);

    stats s = {0};
    int64_t *per_op = calloc((size_t)n_ops, sizeof *per_op);
    REQUIRE(per_op);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int bad = 0;
    for (int64_t it = only_iter >= 0 ? only_iter : 0;; it++) {
        run_iter = it;
        mix(run_seed, (uint64_t)it);
        const tfc_op *op = only ? only : tfc_op_at((int)(it % n_ops));
        if (!op) continue;
        if (!run_one(ctx, op, &s, verbose)) bad++;
        per_op[op->index < n_ops ? op->index : 0]++;
        if (only_iter >= 0 || bad >= 10) break;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if ((double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec) > seconds) break;
    }
    int64_t untested = 0;
    for (int i = 0; i < n_ops && !only && only_iter < 0; i++) untested += per_op[i] == 0;
    free(per_op);
    printf("op fuzzer: %lld calls over %d ops (%lld untested): %lld results, %lld errors (INVALID_ARGUMENT %lld, "
           "UNIMPLEMENTED %lld, RESOURCE_EXHAUSTED %lld, INTERNAL %lld, other %lld); %d failing\n",
           (long long)s.calls, n_ops, (long long)untested, (long long)s.ok, (long long)s.errors,
           (long long)s.by_code[TFC_INVALID_ARGUMENT], (long long)s.by_code[TFC_UNIMPLEMENTED],
           (long long)s.by_code[TFC_RESOURCE_EXHAUSTED], (long long)s.by_code[TFC_INTERNAL],
           (long long)(s.errors - s.by_code[TFC_INVALID_ARGUMENT] - s.by_code[TFC_UNIMPLEMENTED] -
                       s.by_code[TFC_RESOURCE_EXHAUSTED] - s.by_code[TFC_INTERNAL]),
           bad);
    tfc_alloc_set_limit(0);
    tfc_ctx_free(ctx);
    CHECK(bad == 0);
    CHECK(untested == 0);
    TEST_MAIN_END();
}
