/* Resolving the attrs of an op call (TensorFlow's eager attr inference) and reading resolved attrs. */
#include <stdio.h>
#include <string.h>

#include "core/size_check.h"
#include "core/tensor_internal.h"
#include "ops/registry.h"

static bool kind_compatible(tfc_attr_kind spec, tfc_attr *given) {
    if (spec == given->kind) return true;
    if (spec == TFC_ATTR_FLOAT && given->kind == TFC_ATTR_INT) {
        given->kind = TFC_ATTR_FLOAT;
        given->v.f = (double)given->v.i;
        return true;
    }
    if (spec == TFC_ATTR_SHAPE && given->kind == TFC_ATTR_LIST_INT) {
        given->kind = TFC_ATTR_SHAPE;
        return true;
    }
    if (spec == TFC_ATTR_LIST_INT && given->kind == TFC_ATTR_SHAPE) {
        given->kind = TFC_ATTR_LIST_INT;
        return true;
    }
    /* an empty AttrValue.list carries no element kind (a GraphDef's `list {}` reads as an empty list(int)): it
     * is an empty list of whatever kind the op wants */
    const bool spec_list = spec >= TFC_ATTR_LIST_INT && spec != TFC_ATTR_FUNC;
    if (spec_list && given->n == 0 && given->kind >= TFC_ATTR_LIST_INT && given->kind != TFC_ATTR_FUNC) {
        given->kind = spec;
        return true;
    }
    return false;
}

static const char *kind_name(tfc_attr_kind k) {
    static const char *const n[] = {"none", "int", "float", "bool", "type", "string", "shape", "tensor",
                                    "list(int)", "list(float)", "list(type)", "list(string)", "list(shape)", "func", "list(func)"};
    return (unsigned)k < sizeof n / sizeof n[0] ? n[k] : "?";
}

static bool set_type_attr(const tfc_op *op, tfc_attrs *ra, int idx, tfc_dtype dt, int input_pos, tfc_status *st) {
    tfc_attr *a = &ra->a[idx];
    if (a->kind == TFC_ATTR_TYPE) {
        if (a->v.type != dt)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                  "cannot compute %s as input #%d(zero-based) was expected to be a %s tensor but is a %s tensor",
                                  op->def->name, input_pos, tfc_dtype_name(a->v.type), tfc_dtype_name(dt));
        return true;
    }
    a->name = op->attrs[idx].name;
    a->kind = TFC_ATTR_TYPE;
    a->v.type = dt;
    return true;
}

static bool check_allowed(const tfc_op *op, const tfc_attr_spec *s, const tfc_attr *a, tfc_status *st) {
    char list[256];
    size_t k = 0;
    list[0] = 0;
    if (s->kind == TFC_ATTR_TYPE && s->n_types) {
        for (int i = 0; i < s->n_types; i++)
            if (s->types[i] == a->v.type) return true;
        for (int i = 0; i < s->n_types && k < sizeof list; i++)
            k += (size_t)snprintf(list + k, sizeof list - k, "%s%s", i ? ", " : "", tfc_dtype_name(s->types[i]));
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "%s: value for attr '%s' of %s is not in the list of allowed values: %s", op->def->name,
                              s->name, tfc_dtype_name(a->v.type), list);
    }
    if (s->kind == TFC_ATTR_LIST_TYPE && s->n_types) {
        for (int j = 0; j < a->n; j++) {
            bool ok = false;
            for (int i = 0; i < s->n_types && !ok; i++) ok = s->types[i] == a->v.types[j];
            if (ok) continue;
            for (int i = 0; i < s->n_types && k < sizeof list; i++)
                k += (size_t)snprintf(list + k, sizeof list - k, "%s%s", i ? ", " : "", tfc_dtype_name(s->types[i]));
            return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                  "%s: value for attr '%s' has element %d of type %s, not in the list of allowed values: %s",
                                  op->def->name, s->name, j, tfc_dtype_name(a->v.types[j]), list);
        }
    }
    if (s->kind == TFC_ATTR_STRING && s->n_strs) {
        for (int i = 0; i < s->n_strs; i++)
            if (a->v.s && !strcmp(s->strs[i], a->v.s)) return true;
        for (int i = 0; i < s->n_strs && k < sizeof list; i++)
            k += (size_t)snprintf(list + k, sizeof list - k, "%s\"%s\"", i ? ", " : "", s->strs[i]);
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "%s: value for attr '%s' of \"%s\" is not in the list of allowed values: %s",
                              op->def->name, s->name, a->v.s ? a->v.s : "", list);
    }
    if (s->has_min) {
        int64_t v = s->kind == TFC_ATTR_INT ? a->v.i : a->n;
        if (v < s->min)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: value for attr '%s' of %lld must be at least minimum %lld",
                                  op->def->name, s->name, (long long)v, (long long)s->min);
    }
    return true;
}

/* The error for inputs that do not fit the op's args: says how many the attrs given ask for, e.g.
 * "_FusedMatMul: wrong number of inputs (4 given; 3 expected: 2 single inputs, args: num_args=1)". */
static bool count_error(const tfc_op *op, const int64_t *list_len, int singles, int n_in, tfc_status *st) {
    char lists[256] = "";
    size_t used = 0;
    int64_t expected = singles;
    bool all_known = true;
    for (int a = 0; a < op->n_in_args; a++) {
        const tfc_arg_spec *s = &op->in[a];
        if (s->kind != TFC_ARG_N_TYPE && s->kind != TFC_ARG_TYPE_LIST) continue;
        const char *attr = op->attrs[s->kind == TFC_ARG_N_TYPE ? s->number_attr : s->type_attr].name;
        if (list_len[a] < 0) {
            all_known = false;
            continue;
        }
        if (!tfc_size_add(expected, list_len[a], &expected)) expected = INT64_MAX; /* N = INT64_MAX given */
        int w = snprintf(lists + used, sizeof lists - used, ", %s: %s=%lld", s->name, attr, (long long)list_len[a]);
        if (w > 0) used += (size_t)w < sizeof lists - used ? (size_t)w : sizeof lists - used - 1;
    }
    if (!all_known)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: wrong number of inputs (%d given)", op->def->name, n_in);
    return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: wrong number of inputs (%d given; %lld expected: %d single inputs%s)",
                          op->def->name, n_in, (long long)expected, singles, lists);
}

bool tfc_resolve_call(const tfc_op *op, tfc_tensor *const *in, int n_in, const tfc_attr *attrs, int n_attrs,
                      tfc_attrs *ra, int *n_out, tfc_dtype *out_dtypes, tfc_status *st) {
    const char *name = op->def->name;
    ra->op = op;
    ra->n = op->n_attrs;
    ra->owned = NULL;
    for (int i = 0; i < op->n_attrs; i++) ra->a[i].kind = TFC_ATTR_NONE;
    for (int i = 0; i < n_attrs; i++) {
        int idx = tfc_op_attr_index(op, attrs[i].name ? attrs[i].name : "");
        if (idx < 0)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: unknown attr '%s'", name,
                                  attrs[i].name ? attrs[i].name : "(null)");
        tfc_attr a = attrs[i];
        if (!kind_compatible(op->attrs[idx].kind, &a))
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: attr '%s' must be %s, got %s", name, attrs[i].name,
                                  kind_name(op->attrs[idx].kind), kind_name(attrs[i].kind));
        const bool is_list = a.kind >= TFC_ATTR_LIST_INT && a.kind != TFC_ATTR_FUNC;
        if (((a.kind == TFC_ATTR_STRING || a.kind == TFC_ATTR_FUNC) && !a.v.s) || (is_list && a.n > 0 && !a.v.ints) ||
            (is_list && a.n < 0) || (a.kind == TFC_ATTR_TENSOR && !a.v.tensor))
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: attr '%s' has no value", name, attrs[i].name);
        if (a.kind == TFC_ATTR_LIST_STRING || a.kind == TFC_ATTR_LIST_FUNC)
            for (int k = 0; k < a.n; k++)
                if (!a.v.strs[k])
                    return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: attr '%s' element %d is NULL", name,
                                          attrs[i].name, k);
        a.name = op->attrs[idx].name;
        ra->a[idx] = a;
    }
    for (int i = 0; i < n_in; i++)
        if (!in[i]) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: input #%d is NULL", name, i);

    /* How many inputs belong to list args. */
    int singles = 0, n_lists = 0;
    for (int a = 0; a < op->n_in_args; a++) {
        if (op->in[a].kind == TFC_ARG_TYPE_ATTR || op->in[a].kind == TFC_ARG_FIXED) singles++;
        else n_lists++;
    }
    int rest = n_in - singles;
    if (rest < 0 || (n_lists == 0 && rest != 0)) {
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s expects %d inputs, got %d", name, singles, n_in);
    }
    /* The length of each list arg: its number or list(type) attr when the caller gave one. When several
     * lists have none, a number attr's default decides (_FusedConv2D's host_args: num_host_args = 0), and
     * the lists still unknown share the remaining inputs equally. */
    int64_t list_len[TFC_MAX_ARGS], known = 0;
    int unknown = 0;
    for (int a = 0; a < op->n_in_args; a++) {
        const tfc_arg_spec *s = &op->in[a];
        list_len[a] = -1;
        if (s->kind == TFC_ARG_N_TYPE && ra->a[s->number_attr].kind == TFC_ATTR_INT)
            list_len[a] = ra->a[s->number_attr].v.i;
        else if (s->kind == TFC_ARG_TYPE_LIST && ra->a[s->type_attr].kind == TFC_ATTR_LIST_TYPE)
            list_len[a] = ra->a[s->type_attr].n;
        else if (s->kind == TFC_ARG_N_TYPE || s->kind == TFC_ARG_TYPE_LIST)
            unknown++;
        if (list_len[a] >= 0) known += list_len[a];
    }
    for (int a = 0; a < op->n_in_args && unknown > 1; a++) {
        const tfc_arg_spec *s = &op->in[a];
        if (s->kind == TFC_ARG_N_TYPE && list_len[a] < 0 && op->attrs[s->number_attr].has_default) {
            list_len[a] = op->attrs[s->number_attr].dflt.v.i;
            known += list_len[a];
            unknown--;
        }
    }
    const int64_t share = unknown ? (rest - known) / unknown : 0;
    if (share < 0) goto count;
    int pos = 0;
    for (int a = 0; a < op->n_in_args; a++) {
        const tfc_arg_spec *s = &op->in[a];
        switch (s->kind) {
        case TFC_ARG_FIXED:
            if (pos >= n_in) goto count;
            if (in[pos]->dtype != s->fixed)
                return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                      "cannot compute %s as input #%d(zero-based) was expected to be a %s tensor but is a %s tensor",
                                      name, pos, tfc_dtype_name(s->fixed), tfc_dtype_name(in[pos]->dtype));
            pos++;
            break;
        case TFC_ARG_TYPE_ATTR:
            if (pos >= n_in) goto count;
            if (!set_type_attr(op, ra, s->type_attr, in[pos]->dtype, pos, st)) return false;
            pos++;
            break;
        case TFC_ARG_N_TYPE: {
            tfc_attr *na = &ra->a[s->number_attr];
            if (na->kind != TFC_ATTR_INT) {
                na->name = op->attrs[s->number_attr].name;
                na->kind = TFC_ATTR_INT;
                na->v.i = list_len[a] >= 0 ? list_len[a] : share;
            }
            int64_t cnt = na->v.i;
            if (cnt < 0 || cnt > n_in - pos) goto count; /* a user's N may be INT64_MAX: no pos + cnt */
            for (int64_t k = 0; k < cnt; k++, pos++) {
                if (s->type_attr >= 0) {
                    if (!set_type_attr(op, ra, s->type_attr, in[pos]->dtype, pos, st)) return false;
                } else if (in[pos]->dtype != s->fixed) {
                    return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: input #%d must be %s, got %s", name, pos,
                                          tfc_dtype_name(s->fixed), tfc_dtype_name(in[pos]->dtype));
                }
            }
            break;
        }
        case TFC_ARG_TYPE_LIST: {
            int64_t cnt = list_len[a] >= 0 ? list_len[a] : share;
            tfc_attr *ta = &ra->a[s->type_attr];
            if (pos + cnt > n_in || cnt > TFC_MAX_IO) goto count;
            for (int k = 0; k < cnt; k++) ra->type_lists[k] = in[pos + k]->dtype;
            ta->name = op->attrs[s->type_attr].name;
            ta->kind = TFC_ATTR_LIST_TYPE;
            ta->n = (int)cnt;
            ta->v.types = ra->type_lists;
            pos += cnt;
            break;
        }
        }
    }
    if (pos != n_in) goto count;

    for (int i = 0; i < op->n_attrs; i++) {
        const tfc_attr_spec *s = &op->attrs[i];
        if (ra->a[i].kind == TFC_ATTR_NONE) {
            if (!s->has_default)
                return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: missing attr '%s'", name, s->name);
            ra->a[i] = s->dflt;
        }
        if (!check_allowed(op, s, &ra->a[i], st)) return false;
    }

    int n = 0;
    for (int a = 0; a < op->n_out_args; a++) {
        const tfc_arg_spec *s = &op->out[a];
        int64_t cnt = 1;
        if (s->kind == TFC_ARG_N_TYPE) cnt = ra->a[s->number_attr].v.i;
        if (s->kind == TFC_ARG_TYPE_LIST) cnt = ra->a[s->type_attr].n;
        if (cnt < 0 || cnt > TFC_MAX_IO - n) /* cnt is a user's number (num_split = INT64_MAX): no n + cnt */
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: %lld outputs%s is more than the %d supported", name,
                                  (long long)cnt, n ? " after the others" : "", TFC_MAX_IO);
        for (int64_t k = 0; k < cnt; k++, n++) {
            if (s->kind == TFC_ARG_FIXED || (s->kind == TFC_ARG_N_TYPE && s->type_attr < 0))
                out_dtypes[n] = s->fixed;
            else if (s->kind == TFC_ARG_TYPE_LIST)
                out_dtypes[n] = ra->a[s->type_attr].v.types[k];
            else
                out_dtypes[n] = ra->a[s->type_attr].v.type;
        }
    }
    *n_out = n;
    return true;
count:
    return count_error(op, list_len, singles, n_in, st);
}

/* ---- deep copies for tapes and graphs ---- */
tfc_attrs *tfc_attrs_clone(const tfc_attrs *src) {
    size_t extra = 0;
    for (int i = 0; i < src->n; i++) {
        const tfc_attr *a = &src->a[i];
        switch (a->kind) {
        case TFC_ATTR_STRING: case TFC_ATTR_FUNC: extra += strlen(a->v.s) + 1; break;
        case TFC_ATTR_SHAPE: case TFC_ATTR_LIST_INT: extra += (size_t)(a->n > 0 ? a->n : 0) * 8; break;
        case TFC_ATTR_LIST_FLOAT: extra += (size_t)a->n * 8; break;
        case TFC_ATTR_LIST_TYPE: extra += (size_t)a->n * sizeof(tfc_dtype); break;
        case TFC_ATTR_LIST_SHAPE: extra += (size_t)a->n * sizeof(tfc_shape); break;
        case TFC_ATTR_LIST_STRING: case TFC_ATTR_LIST_FUNC:
            extra += (size_t)a->n * sizeof(char *);
            for (int k = 0; k < a->n; k++) extra += strlen(a->v.strs[k]) + 1;
            break;
        default: break;
        }
        extra = (extra + 7) & ~(size_t)7;
    }
    tfc_attrs *c = tfc_malloc(sizeof *c + extra);
    if (!c) return NULL;
    *c = *src;
    char *p = (char *)(c + 1);
    for (int i = 0; i < src->n; i++) {
        tfc_attr *a = &c->a[i];
        size_t n = 0;
        switch (a->kind) {
        case TFC_ATTR_STRING: case TFC_ATTR_FUNC: n = strlen(a->v.s) + 1; memcpy(p, a->v.s, n); a->v.s = p; break;
        case TFC_ATTR_SHAPE: case TFC_ATTR_LIST_INT:
        case TFC_ATTR_LIST_FLOAT:
            n = (size_t)(a->n > 0 ? a->n : 0) * 8;
            if (n) memcpy(p, a->v.ints, n);
            a->v.ints = (const int64_t *)p;
            break;
        case TFC_ATTR_LIST_TYPE:
            n = (size_t)a->n * sizeof(tfc_dtype);
            if (n) memcpy(p, a->v.types, n);
            a->v.types = (const tfc_dtype *)p;
            break;
        case TFC_ATTR_LIST_SHAPE:
            n = (size_t)a->n * sizeof(tfc_shape);
            if (n) memcpy(p, a->v.shapes, n);
            a->v.shapes = (const tfc_shape *)p;
            break;
        case TFC_ATTR_LIST_STRING: case TFC_ATTR_LIST_FUNC: {
            const char **arr = (const char **)p;
            char *q = p + (size_t)a->n * sizeof(char *);
            for (int k = 0; k < a->n; k++) {
                size_t l = strlen(a->v.strs[k]) + 1;
                memcpy(q, a->v.strs[k], l);
                arr[k] = q;
                q += l;
            }
            a->v.strs = arr;
            n = (size_t)(q - p);
            break;
        }
        case TFC_ATTR_TENSOR:
            tfc_tensor_ref((tfc_tensor *)a->v.tensor);
            break;
        default: break;
        }
        p += (n + 7) & ~(size_t)7;
    }
    c->owned = c;
    return c;
}

void tfc_attrs_free(tfc_attrs *a) {
    if (!a) return;
    for (int i = 0; i < a->n; i++)
        if (a->a[i].kind == TFC_ATTR_TENSOR) tfc_tensor_unref((tfc_tensor *)a->a[i].v.tensor);
    tfc_free(a);
}

/* ---- getters ---- */
const tfc_attr *tfc_attrs_find(const tfc_attrs *a, const char *name) {
    if (!a) return NULL;
    /* (the first characters compared inline: most names differ there, and kernels look attrs up per call) */
    for (int i = 0; i < a->n; i++)
        if (a->a[i].kind != TFC_ATTR_NONE && a->op->attrs[i].name[0] == name[0] && !strcmp(a->op->attrs[i].name, name))
            return &a->a[i];
    return NULL;
}
int64_t tfc_attrs_int(const tfc_attrs *a, const char *name, int64_t dflt) {
    const tfc_attr *x = tfc_attrs_find(a, name);
    return x && x->kind == TFC_ATTR_INT ? x->v.i : dflt;
}
double tfc_attrs_float(const tfc_attrs *a, const char *name, double dflt) {
    const tfc_attr *x = tfc_attrs_find(a, name);
    return x && x->kind == TFC_ATTR_FLOAT ? x->v.f : dflt;
}
bool tfc_attrs_bool(const tfc_attrs *a, const char *name, bool dflt) {
    const tfc_attr *x = tfc_attrs_find(a, name);
    return x && x->kind == TFC_ATTR_BOOL ? x->v.b : dflt;
}
tfc_dtype tfc_attrs_type(const tfc_attrs *a, const char *name, tfc_dtype dflt) {
    const tfc_attr *x = tfc_attrs_find(a, name);
    return x && x->kind == TFC_ATTR_TYPE ? x->v.type : dflt;
}
const char *tfc_attrs_string(const tfc_attrs *a, const char *name, const char *dflt) {
    const tfc_attr *x = tfc_attrs_find(a, name);
    return x && x->kind == TFC_ATTR_STRING ? x->v.s : dflt;
}
const int64_t *tfc_attrs_ints(const tfc_attrs *a, const char *name, int *n) {
    const tfc_attr *x = tfc_attrs_find(a, name);
    if (!x || (x->kind != TFC_ATTR_LIST_INT && x->kind != TFC_ATTR_SHAPE)) {
        *n = 0;
        return NULL;
    }
    *n = x->n;
    return x->v.ints;
}
const double *tfc_attrs_floats(const tfc_attrs *a, const char *name, int *n) {
    const tfc_attr *x = tfc_attrs_find(a, name);
    if (!x || x->kind != TFC_ATTR_LIST_FLOAT) {
        *n = 0;
        return NULL;
    }
    *n = x->n;
    return x->v.floats;
}
const tfc_shape *tfc_attrs_shapes(const tfc_attrs *a, const char *name, int *n) {
    const tfc_attr *x = tfc_attrs_find(a, name);
    if (!x || x->kind != TFC_ATTR_LIST_SHAPE) {
        *n = 0;
        return NULL;
    }
    *n = x->n;
    return x->v.shapes;
}
int tfc_attrs_count(const tfc_attrs *a) { return a ? a->n : 0; }
const tfc_attr *tfc_attrs_at(const tfc_attrs *a, int i) { return a && i >= 0 && i < a->n ? &a->a[i] : NULL; }

/* ---- comparing and hashing resolved attrs (graph CSE, the eager kernel-instance cache) ---- */
static bool tensor_equal(const tfc_tensor *a, const tfc_tensor *b) {
    if (a == b) return true;
    if (a->dtype != b->dtype || !tfc_shape_equal(&a->shape, &b->shape) || a->dtype == TFC_STRING ||
        a->dtype == TFC_RESOURCE || !a->data || !b->data)
        return false;
    return !memcmp(a->data, b->data, tfc_tensor_byte_size(a));
}

/* n counts only for shapes and lists: resolving leaves it unset in scalar attrs */
static bool has_n(tfc_attr_kind k) { return k == TFC_ATTR_SHAPE || (k >= TFC_ATTR_LIST_INT && k != TFC_ATTR_FUNC); }

bool tfc_attr_equal(const tfc_attr *a, const tfc_attr *b) {
    if (a->kind != b->kind || (has_n(a->kind) && a->n != b->n)) return false;
    switch (a->kind) {
    case TFC_ATTR_NONE: return true;
    case TFC_ATTR_INT: return a->v.i == b->v.i;
    case TFC_ATTR_FLOAT: return a->v.f == b->v.f;
    case TFC_ATTR_BOOL: return a->v.b == b->v.b;
    case TFC_ATTR_TYPE: return a->v.type == b->v.type;
    case TFC_ATTR_STRING: case TFC_ATTR_FUNC: return !strcmp(a->v.s, b->v.s);
    case TFC_ATTR_TENSOR: return tensor_equal(a->v.tensor, b->v.tensor);
    case TFC_ATTR_SHAPE: case TFC_ATTR_LIST_INT: case TFC_ATTR_LIST_FLOAT:
        return a->n <= 0 || !memcmp(a->v.ints, b->v.ints, (size_t)a->n * 8);
    case TFC_ATTR_LIST_TYPE: return !a->n || !memcmp(a->v.types, b->v.types, (size_t)a->n * sizeof(tfc_dtype));
    case TFC_ATTR_LIST_SHAPE: return !a->n || !memcmp(a->v.shapes, b->v.shapes, (size_t)a->n * sizeof(tfc_shape));
    case TFC_ATTR_LIST_STRING: case TFC_ATTR_LIST_FUNC:
        for (int i = 0; i < a->n; i++)
            if (strcmp(a->v.strs[i], b->v.strs[i])) return false;
        return true;
    }
    return false;
}

bool tfc_attrs_equal(const tfc_attrs *a, const tfc_attrs *b) {
    if (a->op != b->op || a->n != b->n) return false;
    for (int i = 0; i < a->n; i++)
        if (!tfc_attr_equal(&a->a[i], &b->a[i])) return false;
    return true;
}

static uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x100000001B3ull; }

/* 8 bytes per step (an eager op call hashes its attrs for the kernel cache: strides, dilations and strings,
 * some 100 bytes, cost 460 instructions byte by byte); the shift folds a word's high bits into the low ones a
 * table index reads */
static uint64_t mix_bytes(uint64_t h, const void *p, size_t n) {
    const unsigned char *c = p;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, c + i, 8);
        h = mix(h, w);
        h ^= h >> 29;
    }
    for (; i < n; i++) h = mix(h, c[i]);
    return h;
}

uint64_t tfc_attrs_hash(const tfc_attrs *a) {
    uint64_t h = mix(0xCBF29CE484222325ull, (uint64_t)(uintptr_t)a->op);
    for (int i = 0; i < a->n; i++) {
        const tfc_attr *x = &a->a[i];
        h = mix(mix(h, (uint64_t)x->kind), has_n(x->kind) ? (uint64_t)x->n : 0);
        switch (x->kind) {
        case TFC_ATTR_NONE: break;
        case TFC_ATTR_INT: h = mix(h, (uint64_t)x->v.i); break;
        case TFC_ATTR_FLOAT: h = mix_bytes(h, &x->v.f, sizeof x->v.f); break;
        case TFC_ATTR_BOOL: h = mix(h, x->v.b); break;
        case TFC_ATTR_TYPE: h = mix(h, (uint64_t)x->v.type); break;
        case TFC_ATTR_STRING: case TFC_ATTR_FUNC: h = mix_bytes(h, x->v.s, strlen(x->v.s)); break;
        case TFC_ATTR_TENSOR: h = mix(h, (uint64_t)x->v.tensor->dtype); break; /* equality compares the data */
        case TFC_ATTR_SHAPE: case TFC_ATTR_LIST_INT: case TFC_ATTR_LIST_FLOAT:
            if (x->n > 0) h = mix_bytes(h, x->v.ints, (size_t)x->n * 8);
            break;
        case TFC_ATTR_LIST_TYPE:
            if (x->n > 0) h = mix_bytes(h, x->v.types, (size_t)x->n * sizeof(tfc_dtype));
            break;
        case TFC_ATTR_LIST_SHAPE:
            if (x->n > 0) h = mix_bytes(h, x->v.shapes, (size_t)x->n * sizeof(tfc_shape));
            break;
        case TFC_ATTR_LIST_STRING: case TFC_ATTR_LIST_FUNC:
            for (int k = 0; k < x->n; k++) h = mix_bytes(mix(h, 0), x->v.strs[k], strlen(x->v.strs[k]));
            break;
        }
    }
    return h;
}
