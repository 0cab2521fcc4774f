/* GraphDef validation: names, ops, attrs, inputs, cycles, function signatures and the library's call
 * graph. Everything is linear in the graph's size: hash maps for names, CSR arrays for edges, Kahn's
 * algorithm for cycles, an iterative DFS for recursion between functions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/graphdef_internal.h"

#define BAD(...) tfc_status_set(st, TFC_INVALID_ARGUMENT, __VA_ARGS__)

typedef struct {
    tfc_graphdef *g;
    tfc_gd_body *b;
    const Tensorflow__FunctionDef *fn; /* NULL: the graph's own nodes */
    int64_t fn_index;
    tfc_name_map args;                 /* function input arg names */
    char where[200];                   /* "" or "function 'f': " */
    int64_t *in_off, *in_idx;          /* CSR: resolved producer of each input (-1: a function arg) */
    /* calls between functions: (caller, callee) pairs */
    int64_t *calls;
    size_t n_calls, cap_calls;
} vctx;

/* TensorFlow's node name syntax: [A-Za-z0-9.][A-Za-z0-9_>./\-]*; function and arg names may also start with
 * '_' (__inference_f_12). */
static bool valid_name_from(const char *s, bool lead_underscore) {
    if (!*s) return false;
    const unsigned char c0 = (unsigned char)*s;
    if (!((c0 >= 'A' && c0 <= 'Z') || (c0 >= 'a' && c0 <= 'z') || (c0 >= '0' && c0 <= '9') || c0 == '.' ||
          (lead_underscore && c0 == '_')))
        return false;
    for (const unsigned char *p = (const unsigned char *)s + 1; *p; p++)
        if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_' || *p == '>' ||
              *p == '.' || *p == '/' || *p == '\\' || *p == '-'))
            return false;
    return true;
}
static bool valid_name(const char *s) { return valid_name_from(s, false); }
static bool valid_fn_name(const char *s) { return valid_name_from(s, true); }

static bool add_call(vctx *v, const char *callee, tfc_status *st) {
    if (v->fn_index < 0) return true;
    int64_t c = tfc_name_map_get(&v->g->fn_names, callee);
    if (c < 0) return true;
    if (v->n_calls + 2 > v->cap_calls) {
        size_t cap = v->cap_calls ? 2 * v->cap_calls : 64;
        int64_t *p = tfc_realloc(v->calls, cap * sizeof *p);
        if (!p) return tfc_status_oom(st, "GraphDef call graph", cap * sizeof *p);
        v->calls = p;
        v->cap_calls = cap;
    }
    v->calls[v->n_calls++] = v->fn_index;
    v->calls[v->n_calls++] = c;
    return true;
}

/* ---- attr values ---- */

static bool check_dtype(vctx *v, const Tensorflow__NodeDef *nd, const char *attr, int dt, tfc_status *st) {
    char b[32];
    if (tfc_pb_dtype_is_data(dt) || dt == TFC_RESOURCE) return true;
    return BAD("%snode '%s' (%s): attr '%s': %s is not a dtype tfc supports", v->where, nd->name, nd->op, attr,
               tfc_pb_dtype_str(dt, b, sizeof b));
}

static bool check_func(vctx *v, const Tensorflow__NodeDef *nd, const char *attr, const Tensorflow__NameAttrList *f,
                       int depth, tfc_status *st);

static bool check_value(vctx *v, const Tensorflow__NodeDef *nd, const char *attr, const Tensorflow__AttrValue *a,
                        int depth, tfc_status *st) {
    char what[256];
    snprintf(what, sizeof what, "%snode '%s' (%s): attr '%s'", v->where, nd->name, nd->op, attr);
    tfc_shape s;
    switch (a->value_case) {
    case TENSORFLOW__ATTR_VALUE__VALUE__NOT_SET: return BAD("%s has no value", what);
    case TENSORFLOW__ATTR_VALUE__VALUE_TYPE: return check_dtype(v, nd, attr, a->type, st);
    case TENSORFLOW__ATTR_VALUE__VALUE_SHAPE: return tfc_pb_shape_from_proto(a->shape, &s, what, st);
    case TENSORFLOW__ATTR_VALUE__VALUE_TENSOR: {
        tfc_tensor *t = tfc_pb_tensor_from_proto(a->tensor, v->g->opts.max_tensor_bytes, what, st);
        tfc_tensor_unref(t);
        return t != NULL;
    }
    case TENSORFLOW__ATTR_VALUE__VALUE_FUNC: return check_func(v, nd, attr, a->func, depth, st);
    case TENSORFLOW__ATTR_VALUE__VALUE_LIST: {
        const Tensorflow__AttrValue__ListValue *l = a->list;
        if (!strcmp(tfc_pb_attr_value_kind(a), "list(mixed)"))
            return BAD("%s: list holds values of more than one kind", what);
        for (size_t i = 0; i < l->n_type; i++)
            if (!check_dtype(v, nd, attr, l->type[i], st)) return false;
        for (size_t i = 0; i < l->n_shape; i++)
            if (!tfc_pb_shape_from_proto(l->shape[i], &s, what, st)) return false;
        for (size_t i = 0; i < l->n_tensor; i++) {
            tfc_tensor *t = tfc_pb_tensor_from_proto(l->tensor[i], v->g->opts.max_tensor_bytes, what, st);
            tfc_tensor_unref(t);
            if (!t) return false;
        }
        for (size_t i = 0; i < l->n_func; i++)
            if (!check_func(v, nd, attr, l->func[i], depth, st)) return false;
        return true;
    }
    default: return true;
    }
}

static bool check_func(vctx *v, const Tensorflow__NodeDef *nd, const char *attr, const Tensorflow__NameAttrList *f,
                       int depth, tfc_status *st) {
    if (depth > TFC_PB_MAX_DEPTH) return BAD("%snode '%s': attr '%s' nests too deeply", v->where, nd->name, attr);
    if (tfc_name_map_get(&v->g->fn_names, f->name) < 0 && !tfc_op_lookup(f->name))
        return tfc_status_set(st, TFC_NOT_FOUND, "%snode '%s' (%s): attr '%s' names function '%s', which is not in "
                              "the graph's library", v->where, nd->name, nd->op, attr, f->name);
    if (!add_call(v, f->name, st)) return false;
    for (size_t i = 0; i < f->n_attr; i++)
        if (f->attr[i]->value && !check_value(v, nd, f->attr[i]->key, f->attr[i]->value, depth + 1, st)) return false;
    return true;
}

/* Does a value of AttrValue kind `have` fit an attr declared as `want`? An empty list fits any list. */
static bool kind_fits(const char *want, const char *have) {
    if (!strcmp(want, have)) return true;
    if (!strcmp(have, "list") && !strncmp(want, "list(", 5)) return true;
    return false;
}

static bool check_attrs(vctx *v, const Tensorflow__NodeDef *nd, const tfc_gd_op *op, tfc_status *st) {
    for (size_t i = 0; i < nd->n_attr; i++) {
        if (!nd->attr[i]->value)
            return BAD("%snode '%s' (%s): attr '%s' has no value", v->where, nd->name, nd->op, nd->attr[i]->key);
        for (size_t k = 0; k < i; k++)
            if (!strcmp(nd->attr[k]->key, nd->attr[i]->key))
                return BAD("%snode '%s' (%s): attr '%s' appears twice", v->where, nd->name, nd->op, nd->attr[i]->key);
        if (!check_value(v, nd, nd->attr[i]->key, nd->attr[i]->value, 0, st)) return false;
    }
    if (!op) return true;
    const int n = tfc_gd_op_num_attrs(op);
    for (int i = 0; i < n; i++) {
        tfc_gd_attr_spec s;
        tfc_gd_op_attr(op, i, &s);
        const Tensorflow__AttrValue *a = tfc_gd_node_attr(nd, s.name);
        if (!a) {
            if (!s.required) continue;
            char desc[200];
            tfc_gd_op_describe(op, desc, sizeof desc);
            return BAD("%sNodeDef missing attr '%s' from %s; NodeDef: {{node %s}}", v->where, s.name, desc, nd->name);
        }
        const char *have = tfc_pb_attr_value_kind(a);
        if (!kind_fits(s.kind, have))
            return BAD("%sAttrValue had value with type '%s' when '%s' expected for attr '%s'; NodeDef: {{node %s}} (%s)",
                       v->where, have, s.kind, s.name, nd->name, nd->op);
        if (!s.reg) continue;
        /* the registry's allowed sets and minimums, checked as tfc_execute checks them */
        const tfc_attr_spec *r = s.reg;
        if (r->kind == TFC_ATTR_TYPE && r->n_types) {
            bool ok = false;
            for (int k = 0; k < r->n_types && !ok; k++) ok = (int)r->types[k] == (int)a->type;
            if (!ok)
                return BAD("%snode '%s' (%s): value for attr '%s' of %s is not in the list of allowed values",
                           v->where, nd->name, nd->op, s.name, tfc_dtype_name((tfc_dtype)a->type));
        }
        if (r->kind == TFC_ATTR_LIST_TYPE && r->n_types && a->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST)
            for (size_t j = 0; j < a->list->n_type; j++) {
                bool ok = false;
                for (int k = 0; k < r->n_types && !ok; k++) ok = (int)r->types[k] == (int)a->list->type[j];
                if (!ok)
                    return BAD("%snode '%s' (%s): attr '%s' element %zu (%s) is not in the list of allowed values",
                               v->where, nd->name, nd->op, s.name, j, tfc_dtype_name((tfc_dtype)a->list->type[j]));
            }
        if (r->kind == TFC_ATTR_STRING && r->n_strs) {
            bool ok = false;
            for (int k = 0; k < r->n_strs && !ok; k++)
                ok = strlen(r->strs[k]) == a->s.len && !memcmp(r->strs[k], a->s.data, a->s.len);
            if (!ok)
                return BAD("%snode '%s' (%s): value for attr '%s' of \"%.*s\" is not in the list of allowed values",
                           v->where, nd->name, nd->op, s.name, (int)(a->s.len > 40 ? 40 : a->s.len),
                           (const char *)a->s.data);
        }
        if (r->has_min && r->kind == TFC_ATTR_INT && a->i < r->min)
            return BAD("%snode '%s' (%s): value for attr '%s' of %lld must be at least minimum %lld", v->where,
                       nd->name, nd->op, s.name, (long long)a->i, (long long)r->min);
    }
    return true;
}

/* ---- inputs ---- */

/* "x:3" -> node "x" (length *nlen), index 3; "x" -> index 0. False for a malformed index. */
static bool split_index(const char *s, size_t *nlen, int64_t *idx) {
    const char *c = strrchr(s, ':');
    *idx = 0;
    *nlen = c ? (size_t)(c - s) : strlen(s);
    if (!c) return true;
    if (!c[1]) return false;
    int64_t k = 0;
    for (const char *p = c + 1; *p; p++) {
        if (*p < '0' || *p > '9' || k > (INT64_MAX - 9) / 10) return false;
        k = k * 10 + (*p - '0');
    }
    *idx = k;
    return true;
}

static int64_t find_n(const tfc_name_map *m, const char *s, size_t n, char *tmp, size_t tmpsize) {
    if (n >= tmpsize) return -1;
    memcpy(tmp, s, n);
    tmp[n] = 0;
    return tfc_name_map_get(m, tmp);
}

/* Resolves one input string of node i to its producer's index (-1 for a function arg). */
static bool resolve_input(vctx *v, const char *who, const char *in, bool control, int64_t *out, tfc_status *st) {
    char tmp[1024];
    const char *ref = control ? in + 1 : in;
    if (!v->fn) { /* "node" or "node:k" */
        size_t nlen;
        int64_t k;
        if (!split_index(ref, &nlen, &k) || nlen == 0 || (control && k))
            return BAD("%s: malformed input '%s'", who, in);
        int64_t src = find_n(&v->b->names, ref, nlen, tmp, sizeof tmp);
        if (src < 0) return BAD("%s: Unknown input node '%s'", who, in);
        if (!control && v->b->n_outputs[src] >= 0 && k >= v->b->n_outputs[src])
            return BAD("%s: Connecting to invalid output %lld of source node %s which has %lld outputs",
                       who, (long long)k, v->b->nodes[src]->name, (long long)v->b->n_outputs[src]);
        *out = src;
        return true;
    }
    /* in a function body: "arg", "node:out_arg:k", "^node" */
    const char *c1 = strchr(ref, ':');
    if (!c1) {
        if (!control && tfc_name_map_get(&v->args, ref) >= 0) {
            *out = -1;
            return true;
        }
        int64_t src = tfc_name_map_get(&v->b->names, ref);
        if (src < 0 || !control)
            return BAD("%s%s: input '%s' is neither an argument of the function nor a node output "
                       "(\"node:out_arg:index\")", v->where, who, in);
        *out = src;
        return true;
    }
    const char *c2 = strchr(c1 + 1, ':');
    size_t alen;
    int64_t k;
    if (control || !c2 || !split_index(c1 + 1, &alen, &k) || c1 == ref || strchr(c2 + 1, ':'))
        return BAD("%s%s: malformed input '%s'", v->where, who, in);
    int64_t src = find_n(&v->b->names, ref, (size_t)(c1 - ref), tmp, sizeof tmp);
    if (src < 0) return BAD("%s%s: Unknown input node '%s'", v->where, who, in);
    const Tensorflow__NodeDef *sd = v->b->nodes[src];
    tfc_gd_op op;
    if (!tfc_gd_op_resolve(v->g, sd->op, &op)) { /* only with allow_unknown_ops */
        *out = src;
        return true;
    }
    const int na = tfc_gd_op_num_args(&op, true);
    for (int a = 0; a < na; a++) {
        const char *aname;
        int64_t cnt;
        if (!tfc_gd_op_arg(&op, sd, true, a, &aname, &cnt, st)) return false;
        if (strlen(aname) != (size_t)(c2 - c1 - 1) || strncmp(aname, c1 + 1, strlen(aname))) continue;
        if (k >= cnt)
            return BAD("%s%s: input '%s' asks for element %lld of output '%s' of %s, which has %lld",
                       v->where, who, in, (long long)k, aname, sd->name, (long long)cnt);
        *out = src;
        return true;
    }
    return BAD("%s%s: input '%s': op %s of node '%s' has no output named '%.*s'", v->where, who, in, sd->op,
               sd->name, (int)(c2 - c1 - 1), c1 + 1);
}

/* ---- cycles ---- */

static bool check_acyclic(vctx *v, tfc_status *st) {
    const size_t n = v->b->n_nodes;
    const int64_t e = v->in_off[n];
    int64_t *indeg = tfc_calloc(n + 1, sizeof *indeg), *out_off = tfc_calloc(n + 1, sizeof *out_off);
    int64_t *out_idx = tfc_malloc((size_t)(e ? e : 1) * sizeof *out_idx), *queue = tfc_malloc((n + 1) * sizeof *queue);
    bool ok = false;
    if (!indeg || !out_off || !out_idx || !queue) {
        tfc_status_oom(st, "GraphDef cycle check", (size_t)e * 8 + n * 24);
        goto done;
    }
    for (int64_t j = 0; j < e; j++)
        if (v->in_idx[j] >= 0) out_off[v->in_idx[j] + 1]++;
    for (size_t i = 0; i < n; i++) out_off[i + 1] += out_off[i];
    for (size_t i = 0; i < n; i++)
        for (int64_t j = v->in_off[i]; j < v->in_off[i + 1]; j++)
            if (v->in_idx[j] >= 0) {
                int64_t src = v->in_idx[j];
                out_idx[out_off[src] + indeg[src + 1]++] = (int64_t)i; /* indeg[] as a fill cursor for now */
            }
    memset(indeg, 0, (n + 1) * sizeof *indeg);
    for (size_t i = 0; i < n; i++)
        for (int64_t j = v->in_off[i]; j < v->in_off[i + 1]; j++) indeg[i] += v->in_idx[j] >= 0;
    size_t head = 0, tail = 0;
    for (size_t i = 0; i < n; i++)
        if (!indeg[i]) queue[tail++] = (int64_t)i;
    while (head < tail) {
        int64_t u = queue[head++];
        for (int64_t j = out_off[u]; j < out_off[u + 1]; j++)
            if (--indeg[out_idx[j]] == 0) queue[tail++] = out_idx[j];
    }
    if (tail == n) { /* the queue's order is a run order: the importer adds nodes in it */
        v->b->order = queue;
        queue = NULL;
        ok = true;
        goto done;
    }
    /* Every node left has a producer left: walking producers n times from one lands on a cycle. */
    int64_t u = -1;
    for (size_t i = 0; i < n && u < 0; i++)
        if (indeg[i]) u = (int64_t)i;
    for (size_t step = 0; step < n; step++)
        for (int64_t j = v->in_off[u]; j < v->in_off[u + 1]; j++)
            if (v->in_idx[j] >= 0 && indeg[v->in_idx[j]]) {
                u = v->in_idx[j];
                break;
            }
    char path[200];
    size_t k = 0;
    int64_t w = u;
    for (int hops = 0; hops < 8; hops++) {
        int wr = snprintf(path + k, sizeof path - k, "%s'%s'", hops ? " <- " : "", v->b->nodes[w]->name);
        if (wr < 0 || (size_t)wr >= sizeof path - k) break;
        k += (size_t)wr;
        int64_t next = -1;
        for (int64_t j = v->in_off[w]; j < v->in_off[w + 1] && next < 0; j++)
            if (v->in_idx[j] >= 0 && indeg[v->in_idx[j]]) next = v->in_idx[j];
        w = next;
        if (w == u || w < 0) break;
    }
    BAD("%sGraph has a cycle: %s%s (%zu of %zu nodes are on or after a cycle)", v->where, path, w == u ? " <- ..." : "",
        n - tail, n);
done:
    tfc_free(indeg);
    tfc_free(out_off);
    tfc_free(out_idx);
    tfc_free(queue);
    return ok;
}

/* ---- one body ---- */

static bool check_signature(vctx *v, tfc_status *st) {
    const Tensorflow__OpDef *s = v->fn->signature;
    const size_t n = s->n_input_arg;
    if (!tfc_name_map_init(&v->args, n, st)) return false;
    for (int out = 0; out < 2; out++) {
        Tensorflow__OpDef__ArgDef **args = out ? s->output_arg : s->input_arg;
        size_t na = out ? s->n_output_arg : s->n_input_arg;
        for (size_t i = 0; i < na; i++) {
            const Tensorflow__OpDef__ArgDef *a = args[i];
            char b[32];
            if (!valid_fn_name(a->name))
                return BAD("%s%s arg %zu has an invalid name '%s'", v->where, out ? "output" : "input", i, a->name);
            if (!out && tfc_name_map_put(&v->args, a->name, (int64_t)i) >= 0)
                return BAD("%sinput arg '%s' appears twice", v->where, a->name);
            if (a->type ? !(tfc_pb_dtype_is_data(a->type) || (int)a->type == TFC_RESOURCE)
                        : !a->type_attr[0] && !a->type_list_attr[0])
                return BAD("%sarg '%s' has %s", v->where, a->name,
                           a->type ? tfc_pb_dtype_str(a->type, b, sizeof b) : "no type and no type attr");
        }
    }
    return true;
}

static bool check_rets(vctx *v, tfc_status *st) {
    const Tensorflow__FunctionDef *f = v->fn;
    const Tensorflow__OpDef *s = f->signature;
    for (size_t i = 0; i < s->n_output_arg; i++) {
        const char *r = NULL;
        for (size_t k = 0; k < f->n_ret && !r; k++)
            if (!strcmp(f->ret[k]->key, s->output_arg[i]->name)) r = f->ret[k]->value;
        if (!r) return BAD("%soutput arg '%s' has no ret entry", v->where, s->output_arg[i]->name);
    }
    for (size_t k = 0; k < f->n_ret; k++) {
        bool known = false;
        for (size_t i = 0; i < s->n_output_arg && !known; i++) known = !strcmp(f->ret[k]->key, s->output_arg[i]->name);
        if (!known) return BAD("%sret '%s' is not an output arg", v->where, f->ret[k]->key);
        char who[160];
        snprintf(who, sizeof who, "ret '%s'", f->ret[k]->key);
        int64_t src;
        if (!resolve_input(v, who, f->ret[k]->value, false, &src, st)) return false;
    }
    for (size_t k = 0; k < f->n_control_ret; k++)
        if (tfc_name_map_get(&v->b->names, f->control_ret[k]->value) < 0)
            return BAD("%scontrol_ret '%s' names no node ('%s')", v->where, f->control_ret[k]->key,
                       f->control_ret[k]->value);
    return true;
}

static bool check_body(vctx *v, tfc_status *st) {
    tfc_gd_body *b = v->b;
    const size_t n = b->n_nodes;
    if (!tfc_name_map_init(&b->names, n, st)) return false;
    if (!(b->n_outputs = tfc_calloc(n + 1, sizeof *b->n_outputs)) || !(b->n_control = tfc_calloc(n + 1, sizeof(int))) ||
        !(v->in_off = tfc_calloc(n + 1, sizeof *v->in_off)))
        return tfc_status_oom(st, "GraphDef", n * 20);
    if (v->fn && !check_signature(v, st)) return false;
    for (size_t i = 0; i < n; i++) {
        const Tensorflow__NodeDef *nd = b->nodes[i];
        if (!valid_name(nd->name)) return BAD("%sNode %zu has an invalid name '%s'", v->where, i, nd->name);
        if (tfc_name_map_put(&b->names, nd->name, (int64_t)i) >= 0)
            return BAD("%sDuplicate node name in graph: '%s'", v->where, nd->name);
        if (nd->n_input > (size_t)INT32_MAX) return BAD("%sNode '%s' has too many inputs", v->where, nd->name);
        v->in_off[i + 1] = v->in_off[i] + (int64_t)nd->n_input;
    }
    if (!(v->in_idx = tfc_malloc((size_t)(v->in_off[n] ? v->in_off[n] : 1) * sizeof *v->in_idx)))
        return tfc_status_oom(st, "GraphDef", (size_t)v->in_off[n] * 8);
    /* ops, attrs, input counts and output counts */
    for (size_t i = 0; i < n; i++) {
        const Tensorflow__NodeDef *nd = b->nodes[i];
        tfc_gd_op op;
        const bool known = tfc_gd_op_resolve(v->g, nd->op, &op);
        if (!known && !v->g->opts.allow_unknown_ops)
            return tfc_status_set(st, TFC_NOT_FOUND, "%sOp type not registered '%s' in binary running on tfc (node "
                                  "'%s'). Make sure the Op and Kernel are registered in the binary running in this "
                                  "process, or that the function is in the graph's library.", v->where, nd->op,
                                  nd->name);
        if (known && op.kind == TFC_GD_OP_FUNCTION && !add_call(v, nd->op, st)) return false;
        if (!check_attrs(v, nd, known ? &op : NULL, st)) return false;
        int data = 0, ctl = 0;
        for (size_t k = 0; k < nd->n_input; k++) {
            if (nd->input[k][0] == '^') ctl++;
            else if (ctl) return BAD("%sNode '%s': data input '%s' follows a control input", v->where, nd->name, nd->input[k]);
            else data++;
        }
        b->n_control[i] = ctl;
        b->n_outputs[i] = -1;
        if (!known) continue;
        int64_t want = 0, outs = 0, cnt;
        const char *aname;
        for (int a = 0; a < tfc_gd_op_num_args(&op, false); a++) {
            if (!tfc_gd_op_arg(&op, nd, false, a, &aname, &cnt, st)) return false;
            want += cnt;
        }
        for (int a = 0; a < tfc_gd_op_num_args(&op, true); a++) {
            if (!tfc_gd_op_arg(&op, nd, true, a, &aname, &cnt, st)) return false;
            outs += cnt;
        }
        if (want != data)
            return BAD("%sNode '%s' (%s): %d data inputs given, the op takes %lld", v->where, nd->name, nd->op, data,
                       (long long)want);
        b->n_outputs[i] = outs;
    }
    for (size_t i = 0; i < n; i++) {
        const Tensorflow__NodeDef *nd = b->nodes[i];
        char who[160];
        snprintf(who, sizeof who, "Node '%s'", nd->name);
        for (size_t k = 0; k < nd->n_input; k++)
            if (!resolve_input(v, who, nd->input[k], nd->input[k][0] == '^', &v->in_idx[v->in_off[i] + (int64_t)k], st))
                return false;
    }
    if (v->fn && !check_rets(v, st)) return false;
    return check_acyclic(v, st);
}

/* ---- the library ---- */

static bool check_recursion(const tfc_graphdef *g, const int64_t *calls, size_t n_pairs, tfc_status *st) {
    const size_t nf = g->n_fns;
    int64_t *off = tfc_calloc(nf + 1, sizeof *off), *adj = tfc_malloc((n_pairs ? n_pairs : 1) * sizeof *adj);
    int64_t *fill = tfc_calloc(nf + 1, sizeof *fill), *stack = tfc_malloc((nf + 1) * 2 * sizeof *stack);
    unsigned char *color = tfc_calloc(nf + 1, 1);
    bool ok = false;
    if (!off || !adj || !fill || !stack || !color) {
        tfc_status_oom(st, "GraphDef call graph", n_pairs * 8 + nf * 41);
        goto done;
    }
    for (size_t p = 0; p < n_pairs; p++) off[calls[2 * p] + 1]++;
    for (size_t i = 0; i < nf; i++) off[i + 1] += off[i];
    for (size_t p = 0; p < n_pairs; p++) adj[off[calls[2 * p]] + fill[calls[2 * p]]++] = calls[2 * p + 1];
    /* iterative DFS: stack of (function, next edge); grey = on the current path */
    for (size_t r = 0; r < nf; r++) {
        if (color[r]) continue;
        size_t sp = 0;
        stack[0] = (int64_t)r;
        stack[1] = off[r];
        color[r] = 1;
        sp = 1;
        while (sp) {
            int64_t f = stack[2 * (sp - 1)], *e = &stack[2 * (sp - 1) + 1];
            if (*e == off[f + 1]) {
                color[f] = 2;
                sp--;
                continue;
            }
            int64_t c = adj[(*e)++];
            if (color[c] == 1) { /* the path from c to f, then back to c */
                char path[200];
                size_t k = 0;
                size_t from = 0;
                while (stack[2 * from] != c) from++;
                for (size_t j = from; j < sp && k < sizeof path; j++) {
                    int w = snprintf(path + k, sizeof path - k, "%s -> ",
                                     g->pb->library->function[stack[2 * j]]->signature->name);
                    if (w > 0) k += (size_t)w;
                }
                if (k < sizeof path) snprintf(path + k, sizeof path - k, "%s", g->pb->library->function[c]->signature->name);
                BAD("function '%s' calls itself (%s); recursive functions are not supported",
                    g->pb->library->function[c]->signature->name, path);
                goto done;
            }
            if (!color[c]) {
                color[c] = 1;
                stack[2 * sp] = c;
                stack[2 * sp + 1] = off[c];
                sp++;
            }
        }
    }
    ok = true;
done:
    tfc_free(off);
    tfc_free(adj);
    tfc_free(fill);
    tfc_free(stack);
    tfc_free(color);
    return ok;
}

static bool check_library(tfc_graphdef *g, tfc_status *st) {
    const Tensorflow__FunctionDefLibrary *lib = g->pb->library;
    if (!lib) return true;
    for (size_t i = 0; i < lib->n_function; i++) {
        const Tensorflow__OpDef *s = lib->function[i]->signature;
        if (!s || !valid_fn_name(s->name))
            return BAD("function %zu of the library has %s name '%s'", i, s ? "an invalid" : "no", s ? s->name : "");
        if (tfc_name_map_get(&g->fn_names, s->name) != (int64_t)i)
            return BAD("function '%s' is defined twice in the library", s->name);
        tfc_gd_op op;
        if (tfc_gd_op_resolve(g, s->name, &op) && op.kind != TFC_GD_OP_FUNCTION)
            return BAD("Cannot add function '%s' because an op with the same name already exists.", s->name);
    }
    for (size_t i = 0; i < lib->n_gradient; i++) {
        const Tensorflow__GradientDef *gd = lib->gradient[i];
        if (tfc_name_map_get(&g->fn_names, gd->function_name) < 0 || tfc_name_map_get(&g->fn_names, gd->gradient_func) < 0)
            return BAD("library gradient %zu ('%s' -> '%s') names a function that is not in the library", i,
                       gd->function_name, gd->gradient_func);
    }
    return true;
}

bool tfc_gd_validate(tfc_graphdef *g, tfc_status *st) {
    g->validated = false;
    if (!check_library(g, st)) return false;
    vctx v = {.g = g};
    bool ok = true;
    for (size_t f = 0; f <= g->n_fns && ok; f++) {
        const bool top = f == g->n_fns;
        v.b = top ? &g->top : &g->fns[f];
        v.fn = top ? NULL : g->pb->library->function[f];
        v.fn_index = top ? -1 : (int64_t)f;
        if (top) v.where[0] = 0;
        else snprintf(v.where, sizeof v.where, "function '%s': ", v.fn->signature->name);
        tfc_name_map_clear(&v.b->names);
        tfc_free(v.b->n_outputs);
        tfc_free(v.b->n_control);
        tfc_free(v.b->order);
        v.b->n_outputs = NULL;
        v.b->n_control = NULL;
        v.b->order = NULL;
        ok = check_body(&v, st);
        tfc_name_map_clear(&v.args);
        tfc_free(v.in_off);
        tfc_free(v.in_idx);
        v.in_off = v.in_idx = NULL;
    }
    if (ok) ok = check_recursion(g, v.calls, v.n_calls / 2, st);
    tfc_free(v.calls);
    if (ok) {
        g->validated = true;
        tfc_status_clear(st);
    }
    return ok;
}
