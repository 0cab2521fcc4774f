/* tfc_attr <-> AttrValue, and the arena that owns decoded attr values. */
#include <stdio.h>
#include <string.h>

#include "core/tensor_internal.h"
#include "proto/proto_internal.h"

/* ---- arena ---- */

typedef struct chunk { struct chunk *next; size_t used, cap; _Alignas(16) unsigned char mem[]; } chunk;
struct tfc_pb_arena {
    chunk *head;
    tfc_tensor **tensors;
    size_t n_tensors, cap_tensors;
};

tfc_pb_arena *tfc_pb_arena_new(void) { return tfc_calloc(1, sizeof(tfc_pb_arena)); }

void tfc_pb_arena_free(tfc_pb_arena *a) {
    if (!a) return;
    for (chunk *c = a->head, *next; c; c = next) {
        next = c->next;
        tfc_free(c);
    }
    for (size_t i = 0; i < a->n_tensors; i++) tfc_tensor_unref(a->tensors[i]);
    tfc_free(a->tensors);
    tfc_free(a);
}

void *tfc_pb_arena_alloc(tfc_pb_arena *a, size_t size) {
    size = (size + 15) & ~(size_t)15;
    if (!size) size = 16;
    if (!a->head || a->head->cap - a->head->used < size) {
        size_t cap = size > 16384 ? size : 16384;
        if (cap > SIZE_MAX - sizeof(chunk)) return NULL;
        chunk *c = tfc_malloc(sizeof(chunk) + cap);
        if (!c) return NULL;
        c->used = 0;
        c->cap = cap;
        c->next = a->head;
        a->head = c;
    }
    void *p = a->head->mem + a->head->used;
    a->head->used += size;
    return p;
}

char *tfc_pb_arena_strndup(tfc_pb_arena *a, const char *s, size_t n) {
    char *p = n < SIZE_MAX ? tfc_pb_arena_alloc(a, n + 1) : NULL;
    if (!p) return NULL;
    if (n) memcpy(p, s, n);
    p[n] = 0;
    return p;
}

bool tfc_pb_arena_keep_tensor(tfc_pb_arena *a, tfc_tensor *t) {
    if (a->n_tensors == a->cap_tensors) {
        size_t cap = a->cap_tensors ? 2 * a->cap_tensors : 16;
        tfc_tensor **p = tfc_realloc(a->tensors, cap * sizeof *p);
        if (!p) return false;
        a->tensors = p;
        a->cap_tensors = cap;
    }
    a->tensors[a->n_tensors++] = t;
    return true;
}

/* ---- kinds ---- */

const char *tfc_pb_attr_value_kind(const Tensorflow__AttrValue *v) {
    switch (v->value_case) {
    case TENSORFLOW__ATTR_VALUE__VALUE_S: return "string";
    case TENSORFLOW__ATTR_VALUE__VALUE_I: return "int";
    case TENSORFLOW__ATTR_VALUE__VALUE_F: return "float";
    case TENSORFLOW__ATTR_VALUE__VALUE_B: return "bool";
    case TENSORFLOW__ATTR_VALUE__VALUE_TYPE: return "type";
    case TENSORFLOW__ATTR_VALUE__VALUE_SHAPE: return "shape";
    case TENSORFLOW__ATTR_VALUE__VALUE_TENSOR: return "tensor";
    case TENSORFLOW__ATTR_VALUE__VALUE_FUNC: return "func";
    case TENSORFLOW__ATTR_VALUE__VALUE_PLACEHOLDER: return "placeholder";
    case TENSORFLOW__ATTR_VALUE__VALUE_LIST: {
        const Tensorflow__AttrValue__ListValue *l = v->list;
        const struct { size_t n; const char *kind; } f[] = {
            {l->n_s, "list(string)"}, {l->n_i, "list(int)"},       {l->n_f, "list(float)"},
            {l->n_b, "list(bool)"},   {l->n_type, "list(type)"},   {l->n_shape, "list(shape)"},
            {l->n_tensor, "list(tensor)"}, {l->n_func, "list(func)"},
        };
        const char *kind = "list";
        for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
            if (f[i].n) {
                if (strcmp(kind, "list")) return "list(mixed)";
                kind = f[i].kind;
            }
        return kind; /* "list": an empty list, which fits every list kind */
    }
    default: return "none";
    }
}

const char *tfc_pb_attr_kind_name(tfc_attr_kind k) {
    switch (k) {
    case TFC_ATTR_INT: return "int";
    case TFC_ATTR_FLOAT: return "float";
    case TFC_ATTR_BOOL: return "bool";
    case TFC_ATTR_TYPE: return "type";
    case TFC_ATTR_STRING: return "string";
    case TFC_ATTR_SHAPE: return "shape";
    case TFC_ATTR_TENSOR: return "tensor";
    case TFC_ATTR_LIST_INT: return "list(int)";
    case TFC_ATTR_LIST_FLOAT: return "list(float)";
    case TFC_ATTR_LIST_TYPE: return "list(type)";
    case TFC_ATTR_LIST_STRING: return "list(string)";
    case TFC_ATTR_LIST_SHAPE: return "list(shape)";
    case TFC_ATTR_FUNC: return "func";
    case TFC_ATTR_LIST_FUNC: return "list(func)";
    default: return "none";
    }
}

/* ---- decoding ---- */

#define ATTR_ERR(...) tfc_status_set(st, TFC_INVALID_ARGUMENT, __VA_ARGS__)

static bool check_dtype(int dt, const char *name, const char *where, tfc_status *st) {
    char b[32];
    if (tfc_pb_dtype_is_data(dt) || dt == TFC_RESOURCE) return true;
    return ATTR_ERR("%s: attr '%s': %s is not a dtype tfc supports", where, name, tfc_pb_dtype_str(dt, b, sizeof b));
}

static bool shape_ints(const Tensorflow__TensorShapeProto *p, const char *name, const char *where, tfc_pb_arena *ar,
                       const int64_t **ints, int *n, tfc_shape *shape, tfc_status *st) {
    char what[160];
    snprintf(what, sizeof what, "%s: attr '%s'", where, name);
    tfc_shape s;
    if (!tfc_pb_shape_from_proto(p, &s, what, st)) return false;
    if (shape) *shape = s;
    if (!ints) return true;
    int64_t *d = tfc_pb_arena_alloc(ar, sizeof(int64_t) * (s.rank > 0 ? (size_t)s.rank : 1));
    if (!d) return tfc_status_oom(st, what, sizeof(int64_t) * TFC_MAX_RANK);
    if (s.rank > 0) memcpy(d, s.dims, sizeof(int64_t) * (size_t)s.rank);
    *ints = d;
    *n = s.rank;
    return true;
}

bool tfc_pb_attr_from_proto(const Tensorflow__AttrValue *v, const char *name, tfc_pb_arena *ar,
                            size_t max_tensor_bytes, const char *where, tfc_attr *out, tfc_status *st) {
    memset(out, 0, sizeof *out);
    out->name = name;
    switch (v->value_case) {
    case TENSORFLOW__ATTR_VALUE__VALUE_S:
        out->kind = TFC_ATTR_STRING;
        if (v->s.len > INT32_MAX) return ATTR_ERR("%s: attr '%s': string of %zu bytes", where, name, v->s.len);
        out->n = (int)v->s.len; /* the byte length: string attrs may hold binary (config_proto) */
        if (!(out->v.s = tfc_pb_arena_strndup(ar, (const char *)v->s.data, v->s.len)))
            return tfc_status_oom(st, where, v->s.len);
        break;
    case TENSORFLOW__ATTR_VALUE__VALUE_I: out->kind = TFC_ATTR_INT; out->v.i = v->i; break;
    case TENSORFLOW__ATTR_VALUE__VALUE_F: out->kind = TFC_ATTR_FLOAT; out->v.f = v->f; break;
    case TENSORFLOW__ATTR_VALUE__VALUE_B: out->kind = TFC_ATTR_BOOL; out->v.b = v->b != 0; break;
    case TENSORFLOW__ATTR_VALUE__VALUE_TYPE:
        if (!check_dtype(v->type, name, where, st)) return false;
        out->kind = TFC_ATTR_TYPE;
        out->v.type = (tfc_dtype)v->type;
        break;
    case TENSORFLOW__ATTR_VALUE__VALUE_SHAPE:
        out->kind = TFC_ATTR_SHAPE;
        return shape_ints(v->shape, name, where, ar, &out->v.ints, &out->n, NULL, st);
    case TENSORFLOW__ATTR_VALUE__VALUE_TENSOR: {
        char what[160];
        snprintf(what, sizeof what, "%s: attr '%s'", where, name);
        tfc_tensor *t = tfc_pb_tensor_from_proto(v->tensor, max_tensor_bytes, what, st);
        if (!t) return false;
        if (!tfc_pb_arena_keep_tensor(ar, t)) {
            tfc_tensor_unref(t);
            return tfc_status_oom(st, what, sizeof t);
        }
        out->kind = TFC_ATTR_TENSOR;
        out->v.tensor = t;
        break;
    }
    case TENSORFLOW__ATTR_VALUE__VALUE_FUNC:
        if (v->func->n_attr)
            return tfc_status_set(st, TFC_UNIMPLEMENTED, "%s: attr '%s': function '%s' instantiated with %zu attrs is "
                                  "not supported", where, name, v->func->name, v->func->n_attr);
        out->kind = TFC_ATTR_FUNC;
        if (!(out->v.s = tfc_pb_arena_strndup(ar, v->func->name, strlen(v->func->name))))
            return tfc_status_oom(st, where, strlen(v->func->name));
        break;
    case TENSORFLOW__ATTR_VALUE__VALUE_LIST: {
        const Tensorflow__AttrValue__ListValue *l = v->list;
        const char *kind = tfc_pb_attr_value_kind(v);
        size_t n = l->n_s + l->n_i + l->n_f + l->n_b + l->n_type + l->n_shape + l->n_tensor + l->n_func;
        if (!strcmp(kind, "list(mixed)")) return ATTR_ERR("%s: attr '%s': list with more than one kind of value", where, name);
        if (n > INT32_MAX) return ATTR_ERR("%s: attr '%s': list of %zu values", where, name, n);
        out->n = (int)n;
        size_t each = l->n_shape ? sizeof(tfc_shape) : 8;
        void *mem = tfc_pb_arena_alloc(ar, n * each);
        if (!mem) return tfc_status_oom(st, where, n * each);
        if (l->n_b || l->n_tensor)
            return tfc_status_set(st, TFC_UNIMPLEMENTED, "%s: attr '%s': %s attrs are not supported", where, name, kind);
        if (l->n_s || l->n_func) {
            const char **s = mem;
            for (size_t i = 0; i < n; i++) {
                const char *src = l->n_s ? (const char *)l->s[i].data : l->func[i]->name;
                size_t len = l->n_s ? l->s[i].len : strlen(l->func[i]->name);
                if (l->n_func && l->func[i]->n_attr)
                    return tfc_status_set(st, TFC_UNIMPLEMENTED, "%s: attr '%s': function '%s' instantiated with attrs "
                                          "is not supported", where, name, src);
                if (!(s[i] = tfc_pb_arena_strndup(ar, src, len))) return tfc_status_oom(st, where, len);
            }
            out->kind = l->n_s ? TFC_ATTR_LIST_STRING : TFC_ATTR_LIST_FUNC;
            out->v.strs = s;
        } else if (l->n_f) {
            double *f = mem;
            for (size_t i = 0; i < n; i++) f[i] = l->f[i];
            out->kind = TFC_ATTR_LIST_FLOAT;
            out->v.floats = f;
        } else if (l->n_type) {
            tfc_dtype *t = mem;
            for (size_t i = 0; i < n; i++) {
                if (!check_dtype(l->type[i], name, where, st)) return false;
                t[i] = (tfc_dtype)l->type[i];
            }
            out->kind = TFC_ATTR_LIST_TYPE;
            out->v.types = t;
        } else if (l->n_shape) {
            tfc_shape *s = mem;
            for (size_t i = 0; i < n; i++)
                if (!shape_ints(l->shape[i], name, where, ar, NULL, NULL, &s[i], st)) return false;
            out->kind = TFC_ATTR_LIST_SHAPE;
            out->v.shapes = s;
        } else { /* list(int), and the empty list */
            int64_t *iv = mem;
            for (size_t i = 0; i < n; i++) iv[i] = l->i[i];
            out->kind = TFC_ATTR_LIST_INT;
            out->v.ints = iv;
        }
        break;
    }
    case TENSORFLOW__ATTR_VALUE__VALUE_PLACEHOLDER:
        return tfc_status_set(st, TFC_UNIMPLEMENTED, "%s: attr '%s' is a placeholder for the function attr '%s' "
                              "(polymorphic functions are not supported)", where, name, v->placeholder);
    default:
        return ATTR_ERR("%s: attr '%s' has no value", where, name);
    }
    return true;
}

/* ---- encoding ---- */

static void *pb_calloc(size_t n, size_t size, bool *ok) {
    if (!n) return NULL;
    void *p = tfc_calloc(n, size);
    if (!p) *ok = false;
    return p;
}

static bool dup_bytes(ProtobufCBinaryData *b, const char *s, size_t n) {
    b->data = tfc_malloc(n ? n : 1);
    if (!b->data) return false;
    if (n) memcpy(b->data, s, n);
    b->len = n;
    return true;
}

static Tensorflow__NameAttrList *func_proto(const char *name) {
    Tensorflow__NameAttrList *f = tfc_malloc(sizeof *f);
    if (!f) return NULL;
    tensorflow__name_attr_list__init(f);
    if (!(f->name = tfc_strdup(name))) {
        tfc_free(f);
        return NULL;
    }
    return f;
}

Tensorflow__AttrValue *tfc_pb_attr_to_proto(const tfc_attr *a, tfc_status *st) {
    const char *name = a->name ? a->name : "?";
    Tensorflow__AttrValue *v = tfc_malloc(sizeof *v);
    if (!v) return tfc_status_oom(st, name, sizeof *v), NULL;
    tensorflow__attr_value__init(v);
    bool ok = true;
    const bool is_list = a->kind >= TFC_ATTR_LIST_INT && a->kind != TFC_ATTR_FUNC;
    if (is_list && (a->n < 0 || (a->n > 0 && !a->v.ints))) {
        tfc_pb_free(v);
        return ATTR_ERR("attr '%s': list of %d values without data", name, a->n), NULL;
    }
    const size_t n = is_list ? (size_t)a->n : 0;
    switch (a->kind) {
    case TFC_ATTR_INT: v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_I; v->i = a->v.i; break;
    case TFC_ATTR_FLOAT: v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_F; v->f = (float)a->v.f; break;
    case TFC_ATTR_BOOL: v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_B; v->b = a->v.b; break;
    case TFC_ATTR_TYPE: v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_TYPE; v->type = (Tensorflow__DataType)a->v.type; break;
    case TFC_ATTR_STRING:
        v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_S;
        if (!a->v.s) break;
        ok = dup_bytes(&v->s, a->v.s, a->n > 0 ? (size_t)a->n : strlen(a->v.s));
        break;
    case TFC_ATTR_SHAPE: {
        tfc_shape s;
        if (a->n > TFC_MAX_RANK || (a->n > 0 && !a->v.ints)) {
            tfc_pb_free(v);
            return ATTR_ERR("attr '%s': shape of rank %d", name, a->n), NULL;
        }
        s.rank = a->n < 0 ? -1 : a->n;
        for (int i = 0; i < a->n; i++) s.dims[i] = a->v.ints[i];
        v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_SHAPE;
        if (!(v->shape = tfc_pb_shape_to_proto(&s, st))) goto fail;
        break;
    }
    case TFC_ATTR_TENSOR: {
        char what[96];
        snprintf(what, sizeof what, "attr '%s'", name);
        v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_TENSOR;
        if (!(v->tensor = tfc_pb_tensor_to_proto(a->v.tensor, what, st))) goto fail;
        break;
    }
    case TFC_ATTR_FUNC:
        v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_FUNC;
        ok = a->v.s && (v->func = func_proto(a->v.s));
        break;
    default: {
        if (!is_list) {
            tfc_pb_free(v);
            return ATTR_ERR("attr '%s' has no value", name), NULL;
        }
        Tensorflow__AttrValue__ListValue *l = tfc_malloc(sizeof *l);
        if (!l) goto oom;
        tensorflow__attr_value__list_value__init(l);
        v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_LIST;
        v->list = l;
        switch (a->kind) {
        case TFC_ATTR_LIST_INT:
            if ((l->i = pb_calloc(n, sizeof *l->i, &ok))) memcpy(l->i, a->v.ints, n * sizeof *l->i);
            if (ok) l->n_i = n;
            break;
        case TFC_ATTR_LIST_FLOAT:
            if ((l->f = pb_calloc(n, sizeof *l->f, &ok)))
                for (size_t i = 0; i < n; i++) l->f[i] = (float)a->v.floats[i];
            if (ok) l->n_f = n;
            break;
        case TFC_ATTR_LIST_TYPE:
            if ((l->type = pb_calloc(n, sizeof *l->type, &ok)))
                for (size_t i = 0; i < n; i++) l->type[i] = (Tensorflow__DataType)a->v.types[i];
            if (ok) l->n_type = n;
            break;
        case TFC_ATTR_LIST_STRING:
            if ((l->s = pb_calloc(n, sizeof *l->s, &ok)))
                for (; l->n_s < n && ok; l->n_s++)
                    ok = a->v.strs[l->n_s] && dup_bytes(&l->s[l->n_s], a->v.strs[l->n_s], strlen(a->v.strs[l->n_s]));
            break;
        case TFC_ATTR_LIST_FUNC:
            if ((l->func = pb_calloc(n, sizeof *l->func, &ok)))
                for (size_t i = 0; i < n && ok; i++) {
                    Tensorflow__NameAttrList *f = a->v.strs[i] ? func_proto(a->v.strs[i]) : NULL;
                    if (f) l->func[l->n_func++] = f;
                    else ok = false;
                }
            break;
        case TFC_ATTR_LIST_SHAPE:
            if ((l->shape = pb_calloc(n, sizeof *l->shape, &ok)))
                for (; l->n_shape < n; l->n_shape++)
                    if (!(l->shape[l->n_shape] = tfc_pb_shape_to_proto(&a->v.shapes[l->n_shape], st))) goto fail;
            break;
        default: break;
        }
    }
    }
    if (ok) return v;
oom:
    tfc_status_oom(st, name, sizeof *v);
fail:
    tfc_pb_free(v);
    return NULL;
}
