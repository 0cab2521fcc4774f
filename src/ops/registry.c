/* Op registry: parses TensorFlow-style op specs once, finds ops by name, resolves the attrs of a call. */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/tensor_internal.h"
#include "ops/op_list.h"
#include "ops/registry.h"

static tfc_op *ops[TFC_MAX_OPS];
static int n_ops;
/* Name -> op, open addressing with linear probing (4x TFC_MAX_OPS slots: never full). Slots are filled under
 * reg_mu and read without it: a slot goes from NULL to its final op once, published with release order. */
#define HASH_SLOTS (4 * TFC_MAX_OPS)
static tfc_op *by_name[HASH_SLOTS];

static uint32_t name_hash(const char *s) { /* FNV-1a */
    uint32_t h = 2166136261u;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static tfc_op *find_hashed(const char *name) {
    for (uint32_t i = name_hash(name) & (HASH_SLOTS - 1);; i = (i + 1) & (HASH_SLOTS - 1)) {
        tfc_op *op = __atomic_load_n(&by_name[i], __ATOMIC_ACQUIRE);
        if (!op || !strcmp(op->def->name, name)) return op;
    }
}
static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t reg_once = PTHREAD_ONCE_INIT;

/* ---- a tiny parser for spec strings ---------------------------------------------------------------- */
typedef struct { const char *p; } cur;

static void skip_ws(cur *c) { while (*c->p && isspace((unsigned char)*c->p)) c->p++; }
static bool eat(cur *c, char ch) {
    skip_ws(c);
    if (*c->p == ch) { c->p++; return true; }
    return false;
}
static bool ident(cur *c, char *out, size_t size) {
    skip_ws(c);
    size_t n = 0;
    while (isalnum((unsigned char)*c->p) || *c->p == '_') {
        if (n + 1 >= size) return false;
        out[n++] = *c->p++;
    }
    out[n] = 0;
    return n > 0;
}
static bool quoted(cur *c, char *out, size_t size) {
    skip_ws(c);
    if (*c->p != '\'') return false;
    c->p++;
    size_t n = 0;
    while (*c->p && *c->p != '\'') {
        if (n + 1 >= size) return false;
        out[n++] = *c->p++;
    }
    if (*c->p != '\'') return false;
    c->p++;
    out[n] = 0;
    return true;
}
static bool number(cur *c, double *out, bool *is_int) {
    skip_ws(c);
    char *end;
    const char *s = c->p;
    double v = strtod(s, &end);
    if (end == s) return false;
    *is_int = true;
    for (const char *q = s; q < end; q++)
        if (*q == '.' || *q == 'e' || *q == 'E' || *q == 'n' || *q == 'i') *is_int = false;
    c->p = end;
    *out = v;
    return true;
}

int tfc_op_attr_index(const tfc_op *op, const char *name) {
    for (int i = 0; i < op->n_attrs; i++) /* (first characters inline: called per attr per op call) */
        if (op->attrs[i].name[0] == name[0] && !strcmp(op->attrs[i].name, name)) return i;
    return -1;
}

static bool parse_attr(tfc_op *op, cur *c, tfc_status *st) {
    tfc_attr_spec *a = &op->attrs[op->n_attrs];
    memset(a, 0, sizeof *a);
    char kind[32];
    if (!ident(c, a->name, sizeof a->name) || !eat(c, ':')) goto bad;
    skip_ws(c);
    if (*c->p == '{') { /* allowed set: types or strings */
        c->p++;
        skip_ws(c);
        if (*c->p == '\'') {
            a->kind = TFC_ATTR_STRING;
            do {
                if (a->n_strs >= 8 || !quoted(c, a->strs[a->n_strs++], sizeof a->strs[0])) goto bad;
            } while (eat(c, ','));
        } else {
            a->kind = TFC_ATTR_TYPE;
            do {
                char tn[32];
                if (a->n_types >= TFC_MAX_ALLOWED || !ident(c, tn, sizeof tn)) goto bad;
                tfc_dtype dt = tfc_dtype_from_name(tn);
                if (!dt) goto bad;
                a->types[a->n_types++] = dt;
            } while (eat(c, ','));
        }
        if (!eat(c, '}')) goto bad;
    } else {
        if (!ident(c, kind, sizeof kind)) goto bad;
        if (!strcmp(kind, "int")) a->kind = TFC_ATTR_INT;
        else if (!strcmp(kind, "float")) a->kind = TFC_ATTR_FLOAT;
        else if (!strcmp(kind, "bool")) a->kind = TFC_ATTR_BOOL;
        else if (!strcmp(kind, "string")) a->kind = TFC_ATTR_STRING;
        else if (!strcmp(kind, "type")) a->kind = TFC_ATTR_TYPE;
        else if (!strcmp(kind, "shape")) a->kind = TFC_ATTR_SHAPE;
        else if (!strcmp(kind, "tensor")) a->kind = TFC_ATTR_TENSOR;
        else if (!strcmp(kind, "func")) a->kind = TFC_ATTR_FUNC;
        else if (!strcmp(kind, "list")) {
            char el[32];
            if (!eat(c, '(')) goto bad;
            skip_ws(c);
            if (*c->p == '{') { /* list({float, int64}): a list(type) with an allowed set */
                c->p++;
                do {
                    char tn[32];
                    if (a->n_types >= TFC_MAX_ALLOWED || !ident(c, tn, sizeof tn)) goto bad;
                    if (!(a->types[a->n_types++] = tfc_dtype_from_name(tn))) goto bad;
                } while (eat(c, ','));
                if (!eat(c, '}')) goto bad;
                strcpy(el, "type");
            } else if (!ident(c, el, sizeof el)) {
                goto bad;
            }
            if (!eat(c, ')')) goto bad;
            if (!strcmp(el, "int")) a->kind = TFC_ATTR_LIST_INT;
            else if (!strcmp(el, "float")) a->kind = TFC_ATTR_LIST_FLOAT;
            else if (!strcmp(el, "type")) a->kind = TFC_ATTR_LIST_TYPE;
            else if (!strcmp(el, "string")) a->kind = TFC_ATTR_LIST_STRING;
            else if (!strcmp(el, "shape")) a->kind = TFC_ATTR_LIST_SHAPE;
            else if (!strcmp(el, "func")) a->kind = TFC_ATTR_LIST_FUNC;
            else goto bad;
        } else goto bad;
    }
    skip_ws(c);
    if (c->p[0] == '>' && c->p[1] == '=') {
        c->p += 2;
        double v;
        bool isint;
        if (!number(c, &v, &isint)) goto bad;
        a->has_min = true;
        a->min = (int64_t)v;
    }
    if (eat(c, '=')) {
        a->has_default = true;
        a->dflt.name = a->name;
        a->dflt.kind = a->kind;
        double v;
        bool isint;
        skip_ws(c);
        switch (a->kind) {
        case TFC_ATTR_INT: if (!number(c, &v, &isint)) goto bad; a->dflt.v.i = (int64_t)v; break;
        case TFC_ATTR_FLOAT: if (!number(c, &v, &isint)) goto bad; a->dflt.v.f = v; break;
        case TFC_ATTR_BOOL: {
            char b[8];
            if (!ident(c, b, sizeof b)) goto bad;
            a->dflt.v.b = !strcmp(b, "true");
            break;
        }
        case TFC_ATTR_STRING:
            if (!quoted(c, a->dflt_str, sizeof a->dflt_str)) goto bad;
            a->dflt.v.s = a->dflt_str;
            break;
        case TFC_ATTR_TYPE: {
            char tn[32];
            if (!ident(c, tn, sizeof tn) || !(a->dflt.v.type = tfc_dtype_from_name(tn))) goto bad;
            break;
        }
        case TFC_ATTR_LIST_INT: case TFC_ATTR_LIST_FLOAT: case TFC_ATTR_LIST_TYPE: case TFC_ATTR_SHAPE:
        case TFC_ATTR_LIST_STRING:
            if (a->kind == TFC_ATTR_SHAPE && !strncmp(c->p, "unknown", 7)) { /* shape = unknown: unknown rank */
                c->p += 7;
                a->dflt.n = -1;
                a->dflt.v.ints = a->dflt_ints;
                break;
            }
            if (!eat(c, '[')) goto bad;
            a->dflt.n = 0;
            if (!eat(c, ']')) {
                do {
                    if (a->dflt.n >= TFC_MAX_RANK || !number(c, &v, &isint)) goto bad;
                    a->dflt_ints[a->dflt.n] = (int64_t)v;
                    if (a->dflt.n < 4) a->dflt_floats[a->dflt.n] = v;
                    a->dflt.n++;
                } while (eat(c, ','));
                if (!eat(c, ']')) goto bad;
            }
            if (a->kind == TFC_ATTR_LIST_FLOAT) a->dflt.v.floats = a->dflt_floats;
            else a->dflt.v.ints = a->dflt_ints;
            break;
        case TFC_ATTR_LIST_SHAPE: /* only the empty list */
            if (!eat(c, '[') || !eat(c, ']')) goto bad;
            a->dflt.n = 0;
            break;
        default: goto bad;
        }
    }
    op->n_attrs++;
    return true;
bad:
    return tfc_status_set(st, TFC_INTERNAL, "op %s: bad attr spec near '%.24s'", op->def->name, c->p);
}

static bool parse_arg(tfc_op *op, cur *c, tfc_arg_spec *a, tfc_status *st) {
    memset(a, 0, sizeof *a);
    a->type_attr = a->number_attr = -1;
    char t1[32], t2[32];
    if (!ident(c, a->name, sizeof a->name) || !eat(c, ':') || !ident(c, t1, sizeof t1)) goto bad;
    if (eat(c, '*')) {
        if (!ident(c, t2, sizeof t2)) goto bad;
        a->kind = TFC_ARG_N_TYPE;
        a->number_attr = tfc_op_attr_index(op, t1);
        if (a->number_attr < 0) goto bad;
        a->type_attr = tfc_op_attr_index(op, t2);
        if (a->type_attr < 0 && !(a->fixed = tfc_dtype_from_name(t2))) goto bad;
        return true;
    }
    int ai = tfc_op_attr_index(op, t1);
    if (ai >= 0) {
        a->type_attr = ai;
        a->kind = op->attrs[ai].kind == TFC_ATTR_LIST_TYPE ? TFC_ARG_TYPE_LIST : TFC_ARG_TYPE_ATTR;
        return true;
    }
    a->kind = TFC_ARG_FIXED;
    if (!(a->fixed = tfc_dtype_from_name(t1))) goto bad;
    return true;
bad:
    return tfc_status_set(st, TFC_INTERNAL, "op %s: bad arg spec near '%.24s'", op->def->name, c->p);
}

bool tfc_op_parse(const tfc_op_def *def, tfc_op *op, tfc_status *st) {
    memset(op, 0, sizeof *op);
    op->def = def;
    cur c = {def->attrs ? def->attrs : ""};
    skip_ws(&c);
    while (*c.p) {
        if (op->n_attrs >= TFC_MAX_ATTRS) return tfc_status_set(st, TFC_INTERNAL, "op %s: too many attrs", def->name);
        if (!parse_attr(op, &c, st)) return false;
        if (!eat(&c, ',') && *c.p) return tfc_status_set(st, TFC_INTERNAL, "op %s: bad attrs '%s'", def->name, c.p);
        skip_ws(&c);
    }
    const char *specs[2] = {def->inputs, def->outputs};
    for (int k = 0; k < 2; k++) {
        cur a = {specs[k] ? specs[k] : ""};
        skip_ws(&a);
        int *n = k ? &op->n_out_args : &op->n_in_args;
        tfc_arg_spec *args = k ? op->out : op->in;
        while (*a.p) {
            if (*n >= TFC_MAX_ARGS) return tfc_status_set(st, TFC_INTERNAL, "op %s: too many args", def->name);
            if (!parse_arg(op, &a, &args[(*n)++], st)) return false;
            if (!eat(&a, ',') && *a.p) return tfc_status_set(st, TFC_INTERNAL, "op %s: bad args '%s'", def->name, a.p);
            skip_ws(&a);
        }
    }
    return true;
}

/* ---- registry ------------------------------------------------------------------------------------------ */
static tfc_op *find_locked(const char *name) { return find_hashed(name); }

static bool register_locked(const tfc_op_def *def, tfc_status *st) {
    if (find_locked(def->name)) return tfc_status_set(st, TFC_ALREADY_EXISTS, "op %s is already registered", def->name);
    if (n_ops >= TFC_MAX_OPS) return tfc_status_set(st, TFC_RESOURCE_EXHAUSTED, "op registry is full");
    tfc_op *op = tfc_malloc(sizeof *op);
    if (!op) return tfc_status_oom(st, "op registry", sizeof *op);
    if (!tfc_op_parse(def, op, st)) {
        tfc_free(op);
        return false;
    }
    op->index = n_ops;
    ops[n_ops] = op;
    uint32_t i = name_hash(def->name) & (HASH_SLOTS - 1);
    while (by_name[i]) i = (i + 1) & (HASH_SLOTS - 1);
    __atomic_store_n(&by_name[i], op, __ATOMIC_RELEASE);
    __atomic_store_n(&n_ops, n_ops + 1, __ATOMIC_RELEASE);
    return true;
}

#define TFC_OP_FAMILY(fam) extern const tfc_op_def *const tfc_ops_##fam[];
TFC_OP_FAMILIES
#undef TFC_OP_FAMILY

static void init_builtin(void) {
    tfc_status st = TFC_STATUS_INIT;
    pthread_mutex_lock(&reg_mu);
#define TFC_OP_FAMILY(fam)                                                                \
    for (const tfc_op_def *const *d = tfc_ops_##fam; *d; d++)                                 \
        if (!register_locked(*d, &st)) tfc_log(TFC_LOG_ERROR, "registering %s: %s", (*d)->name, st.msg);
    TFC_OP_FAMILIES
#undef TFC_OP_FAMILY
    pthread_mutex_unlock(&reg_mu);
}

void tfc_registry_init(void) { pthread_once(&reg_once, init_builtin); }

bool tfc_op_register(const tfc_op_def *def, tfc_status *st) {
    tfc_registry_init();
    pthread_mutex_lock(&reg_mu);
    bool ok = register_locked(def, st);
    pthread_mutex_unlock(&reg_mu);
    return ok;
}

/* A front cache keyed by the address of the name: callers pass string literals ("MatMul"), so the same
 * addresses come back every training step, and a slot found by the address replaces hashing the name byte
 * by byte. A hit is confirmed by comparing the names (an address reused for another string, a buffer, is a
 * miss). Slots hold one op pointer each, loaded and stored atomically by any thread; ops are never freed. */
#define FRONT_SLOTS 512
static tfc_op *front[FRONT_SLOTS];

static uint32_t front_slot(const char *name) {
    uintptr_t u = (uintptr_t)name;
    return (uint32_t)((u ^ (u >> 9) ^ (u >> 18)) & (FRONT_SLOTS - 1));
}

const tfc_op *tfc_op_lookup(const char *name) {
    tfc_registry_init();
    const uint32_t f = front_slot(name);
    tfc_op *op = __atomic_load_n(&front[f], __ATOMIC_ACQUIRE);
    if (op && !strcmp(op->def->name, name)) return op;
    op = find_hashed(name); /* lock-free: see by_name */
    if (op) __atomic_store_n(&front[f], op, __ATOMIC_RELEASE);
    return op;
}

const tfc_op_def *tfc_op_get_def(const tfc_op *op) { return op->def; }
int tfc_op_count(void) {
    tfc_registry_init();
    return __atomic_load_n(&n_ops, __ATOMIC_ACQUIRE);
}
const tfc_op *tfc_op_at(int i) { return i >= 0 && i < tfc_op_count() ? ops[i] : NULL; }
bool tfc_op_has_gradient(const tfc_op *op) { return op->def->grad != NULL; }

static int type_attr_dtypes(const tfc_attr_spec *s, tfc_dtype *out, int max) {
    int n = 0;
    if (s->n_types == 0) {
        static const tfc_dtype all[] = {TFC_FLOAT, TFC_DOUBLE, TFC_HALF, TFC_BFLOAT16, TFC_INT8, TFC_UINT8,
                                        TFC_INT16, TFC_INT32, TFC_INT64, TFC_BOOL, TFC_STRING};
        for (size_t k = 0; k < sizeof all / sizeof all[0] && n < max; k++) out[n++] = all[k];
    } else {
        for (int k = 0; k < s->n_types && n < max; k++) out[n++] = s->types[k];
    }
    return n;
}

int tfc_op_dtypes(const tfc_op *op, tfc_dtype *out, int max) {
    /* The data type attr is "T" by TensorFlow's convention, even when an index arg comes first (Fill's
     * dims: index_type, StridedSliceGrad's shape: Index); otherwise the first arg's type attr. */
    int t = tfc_op_attr_index(op, "T");
    if (t >= 0 && op->attrs[t].kind == TFC_ATTR_TYPE)
        for (int i = 0; i < op->n_in_args + op->n_out_args; i++) {
            const tfc_arg_spec *a = i < op->n_in_args ? &op->in[i] : &op->out[i - op->n_in_args];
            if (a->type_attr == t) return type_attr_dtypes(&op->attrs[t], out, max);
        }
    for (int i = 0; i < op->n_in_args + op->n_out_args; i++) {
        const tfc_arg_spec *a = i < op->n_in_args ? &op->in[i] : &op->out[i - op->n_in_args];
        if (a->type_attr >= 0 && op->attrs[a->type_attr].kind == TFC_ATTR_TYPE)
            return type_attr_dtypes(&op->attrs[a->type_attr], out, max);
    }
    int n = 0;
    for (int i = 0; i < op->n_in_args && n < max; i++)
        if (op->in[i].kind == TFC_ARG_FIXED) {
            bool dup = false;
            for (int k = 0; k < n; k++) dup |= out[k] == op->in[i].fixed;
            if (!dup) out[n++] = op->in[i].fixed;
        }
    return n;
}
