/* The Keras layer base (tf.keras.layers.Layer): naming, refcounted floating ownership, weights in Keras's
 * order, build-on-first-call with input-spec checks, regularization losses and get_config. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "eager/context_internal.h"
#include "keras/keras_internal.h"
#include "tfc/keras/mixed_precision.h"

/* ---- names --------------------------------------------------------------------------------------------- */

/* Keras's per-graph uid map (backend.get_uid / unique_object_name share it); here one per process. */
static pthread_mutex_t uid_lock = PTHREAD_MUTEX_INITIALIZER;
static struct uid_entry { char *prefix; int64_t count; } *uids;
static int n_uids, cap_uids;

int64_t tfc_keras_get_uid(const char *prefix) {
    int64_t r = 1;
    pthread_mutex_lock(&uid_lock);
    int i = 0;
    while (i < n_uids && strcmp(uids[i].prefix, prefix) != 0) i++;
    if (i < n_uids) {
        r = ++uids[i].count;
    } else {
        if (n_uids == cap_uids) {
            int cap = cap_uids ? cap_uids * 2 : 16;
            struct uid_entry *u = tfc_realloc(uids, (size_t)cap * sizeof *u);
            if (u) uids = u, cap_uids = cap;
        }
        char *p = n_uids < cap_uids ? tfc_strdup(prefix) : NULL;
        if (p) uids[n_uids++] = (struct uid_entry){p, 1};
    }
    pthread_mutex_unlock(&uid_lock);
    return r;
}

void tfc_keras_clear_session(void) {
    pthread_mutex_lock(&uid_lock);
    for (int i = 0; i < n_uids; i++) tfc_free(uids[i].prefix);
    tfc_free(uids);
    uids = NULL;
    n_uids = cap_uids = 0;
    pthread_mutex_unlock(&uid_lock);
}

/* Keras 2's generic_utils.to_snake_case: re.sub('(.)([A-Z][a-z0-9]+)', r'\1_\2'), then
 * re.sub('([a-z])([A-Z])', r'\1_\2'), lowercased; a leading '_' gets the prefix "private". */
void tfc_keras_snake_case(const char *name, char *buf, size_t size) {
    if (!size) return;
    char a[256], b[512];
    size_t n = strlen(name), k = 0;
    if (n > 255) n = 255;
#define IS_UP(c) ((c) >= 'A' && (c) <= 'Z')
#define IS_LO(c) ((c) >= 'a' && (c) <= 'z')
#define IS_LD(c) (IS_LO(c) || ((c) >= '0' && (c) <= '9'))
    for (size_t i = 0; i < n;) {
        if (i + 2 < n && IS_UP(name[i + 1]) && IS_LD(name[i + 2])) {
            size_t j = i + 3;
            while (j < n && IS_LD(name[j])) j++;
            a[k++] = name[i];
            a[k++] = '_';
            for (size_t t = i + 1; t < j && k < sizeof a - 1; t++) a[k++] = name[t];
            i = j;
        } else {
            a[k++] = name[i++];
        }
        if (k >= sizeof a - 3) break;
    }
    a[k] = 0;
    size_t m = 0;
    for (size_t i = 0; i < k;) {
        if (i + 1 < k && IS_LO(a[i]) && IS_UP(a[i + 1])) {
            b[m++] = a[i];
            b[m++] = '_';
            b[m++] = a[i + 1];
            i += 2;
        } else {
            b[m++] = a[i++];
        }
    }
    b[m] = 0;
    for (size_t i = 0; i < m; i++)
        if (IS_UP(b[i])) b[i] = (char)(b[i] - 'A' + 'a');
#undef IS_UP
#undef IS_LO
#undef IS_LD
    snprintf(buf, size, "%s%s", b[0] == '_' ? "private" : "", b);
}

char *tfc_keras_shape_str(const tfc_shape *s, char *buf, size_t size) {
    if (!size) return buf;
    if (!s || s->rank < 0) {
        snprintf(buf, size, "<unknown>");
        return buf;
    }
    size_t k = (size_t)snprintf(buf, size, "(");
    for (int i = 0; i < s->rank && k < size; i++) {
        if (s->dims[i] < 0) k += (size_t)snprintf(buf + k, size - k, "%sNone", i ? ", " : "");
        else k += (size_t)snprintf(buf + k, size - k, "%s%lld", i ? ", " : "", (long long)s->dims[i]);
    }
    if (k < size) snprintf(buf + k, size - k, s->rank == 1 ? ",)" : ")");
    return buf;
}

/* ---- lifetime ------------------------------------------------------------------------------------------ */

tfc_layer *tfc_layer_alloc(const tfc_layer_class *cls, const char *name) {
    if (!cls || cls->size < sizeof(tfc_layer)) return NULL;
    tfc_layer *l = tfc_calloc(1, cls->size);
    if (!l) return NULL;
    l->cls = cls;
    atomic_init(&l->refcount, 1);
    l->floating = true;
    l->trainable = true;
    const tfc_policy gp = tfc_mixed_precision_global_policy();
    tfc_layer_set_policy(l, &gp);
    if (name && *name) {
        l->name = tfc_strdup(name);
    } else {
        char base[128], full[160];
        tfc_keras_snake_case(cls->class_name ? cls->class_name : "layer", base, sizeof base);
        int64_t uid = tfc_keras_get_uid(base) - 1; /* unique_object_name(zero_based=True) */
        if (uid > 0) snprintf(full, sizeof full, "%s_%lld", base, (long long)uid);
        else snprintf(full, sizeof full, "%s", base);
        l->name = tfc_strdup(full);
    }
    if (!l->name) {
        tfc_free(l);
        return NULL;
    }
    return l;
}

void tfc_layer_apply_common(tfc_layer *l, const char *name, tfc_flag trainable, tfc_dtype dtype,
                            const char *dtype_policy, const int64_t *input_shape, int input_rank) {
    if (!l) return;
    if (name && *name && strcmp(name, l->name) != 0) {
        char *n = tfc_strdup(name);
        if (n) {
            tfc_free(l->name);
            l->name = n;
        }
    }
    l->trainable = TFC_FLAG(trainable, true);
    tfc_policy p;
    tfc_status pst = TFC_STATUS_INIT;
    if (dtype_policy) {
        if (tfc_policy_init(&p, dtype_policy, &pst)) tfc_layer_set_policy(l, &p);
        else l->compute_dtype = TFC_INVALID_DTYPE, snprintf(l->policy, sizeof l->policy, "%s", dtype_policy);
    } else if (dtype != TFC_INVALID_DTYPE && tfc_policy_init(&p, tfc_dtype_name(dtype), &pst)) {
        tfc_layer_set_policy(l, &p);
    }
    if (input_shape) {
        int rank = input_rank;
        if (rank == 0)
            while (rank < TFC_MAX_RANK && input_shape[rank] != 0) rank++;
        if (rank < 0) rank = 0;
        if (input_rank != 0 || rank > 0) {
            if (rank > TFC_MAX_RANK - 1) rank = TFC_MAX_RANK - 1;
            l->has_input_shape = true;
            l->input_shape.rank = rank + 1;
            l->input_shape.dims[0] = -1;
            for (int i = 0; i < rank; i++) l->input_shape.dims[i + 1] = input_shape[i] < 0 ? -1 : input_shape[i];
        }
    }
}

tfc_layer *tfc_layer_new_common(const tfc_layer_class *cls, const char *name, tfc_flag trainable, tfc_dtype dtype,
                                const char *dtype_policy, const int64_t *input_shape, int input_rank) {
    tfc_layer *l = tfc_layer_alloc(cls, name);
    if (l) tfc_layer_apply_common(l, NULL, trainable, dtype, dtype_policy, input_shape, input_rank);
    return l;
}

tfc_layer *tfc_layer_ref(tfc_layer *l) {
    if (l) atomic_fetch_add(&l->refcount, 1);
    return l;
}

tfc_layer *tfc_layer_take(tfc_layer *l) {
    if (!l) return NULL;
    if (l->floating) l->floating = false;
    else tfc_layer_ref(l);
    return l;
}

static void knode_free(tfc_knode *n) {
    if (!n) return;
    for (int i = 0; i < n->n_out; i++) tfc_free(n->out[i]);
    tfc_free(n->out);
    tfc_free(n->in);
    tfc_free(n);
}

void tfc_layer_unref(tfc_layer *l) {
    if (!l || atomic_fetch_sub(&l->refcount, 1) != 1) return;
    if (l->cls->destroy) l->cls->destroy(l);
    for (int i = 0; i < l->n_weights; i++) {
        tfc_variable_free(l->weights[i].var);
        tfc_free(l->weights[i].name);
    }
    tfc_free(l->weights);
    for (int i = 0; i < l->n_sublayers; i++) tfc_layer_unref(l->sublayers[i]);
    tfc_free(l->sublayers);
    for (int i = 0; i < l->n_nodes; i++) knode_free(l->nodes[i]);
    tfc_free(l->nodes);
    tfc_tensor_unref(l->activity_loss);
    tfc_free(l->name);
    tfc_free(l);
}

bool tfc_layer_track(tfc_layer *parent, tfc_layer *child, tfc_status *st) {
    if (!parent || !child) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "tfc_layer_track: NULL layer");
    if (parent == child)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\" cannot track itself", parent->name);
    if (parent->n_sublayers == parent->cap_sublayers) {
        int cap = parent->cap_sublayers ? parent->cap_sublayers * 2 : 8;
        tfc_layer **s = tfc_realloc(parent->sublayers, (size_t)cap * sizeof *s);
        if (!s) return tfc_status_oom(st, "tfc_layer_track", (size_t)cap * sizeof *s);
        parent->sublayers = s;
        parent->cap_sublayers = cap;
    }
    parent->sublayers[parent->n_sublayers++] = tfc_layer_take(child);
    tfc_status_clear(st);
    return true;
}

/* ---- accessors ----------------------------------------------------------------------------------------- */

const char *tfc_layer_name(const tfc_layer *l) { return l ? l->name : NULL; }
const char *tfc_layer_class_name(const tfc_layer *l) { return l ? l->cls->class_name : NULL; }
bool tfc_layer_built(const tfc_layer *l) { return l && l->built; }
bool tfc_layer_trainable(const tfc_layer *l) { return l && l->trainable; }

void tfc_layer_set_trainable(tfc_layer *l, bool trainable) {
    if (!l) return;
    l->trainable = trainable;
    for (int i = 0; i < l->n_sublayers; i++) tfc_layer_set_trainable(l->sublayers[i], trainable);
}

/* ---- weights ------------------------------------------------------------------------------------------- */

tfc_variable *tfc_layer_add_weight(tfc_layer *l, tfc_ctx *ctx, const char *name, const tfc_shape *shape,
                                   tfc_dtype dtype, const tfc_initializer *init, const tfc_regularizer *reg,
                                   bool trainable, tfc_status *st) {
    if (!l || !ctx || !name || !shape) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "add_weight: NULL argument");
        return NULL;
    }
    if (dtype == TFC_INVALID_DTYPE) dtype = l->dtype;
    for (int i = 0; i < l->n_weights; i++)
        if (strcmp(l->weights[i].name, name) == 0) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\" already has a weight named \"%s\"", l->name, name);
            return NULL;
        }
    if (l->n_weights == l->cap_weights) {
        int cap = l->cap_weights ? l->cap_weights * 2 : 4;
        tfc_weight *w = tfc_realloc(l->weights, (size_t)cap * sizeof *w);
        if (!w) {
            tfc_status_oom(st, "add_weight", (size_t)cap * sizeof *w);
            return NULL;
        }
        l->weights = w;
        l->cap_weights = cap;
    }
    char *wname = tfc_strdup(name);
    size_t vlen = strlen(l->name) + strlen(name) + 4;
    char *vname = tfc_malloc(vlen);
    if (!wname || !vname) {
        tfc_free(wname);
        tfc_free(vname);
        tfc_status_oom(st, "add_weight", vlen);
        return NULL;
    }
    snprintf(vname, vlen, "%s/%s:0", l->name, name);
    tfc_variable *v = NULL;
    if (tfc_scope_begin(ctx, st)) {
        tfc_tensor *value = tfc_initializer_sample(ctx, init ? init : tfc_initializer_of(.name = "zeros"), shape,
                                                   dtype, st);
        if (value) v = tfc_variable_new(ctx, value, trainable, vname, st);
        tfc_scope_end(ctx); /* the variable holds its own reference to the value */
    }
    tfc_free(vname);
    if (!v) {
        tfc_free(wname);
        if (st->code != TFC_OK && !strstr(st->msg, l->name)) {
            char msg[sizeof st->msg];
            snprintf(msg, sizeof msg, "%s", st->msg);
            tfc_status_set(st, st->code, "Layer \"%s\", weight \"%s\": %s", l->name, name, msg);
        }
        return NULL;
    }
    l->weights[l->n_weights++] = (tfc_weight){
        .var = v, .name = wname, .reg = reg ? *reg : (tfc_regularizer){0}, .has_reg = reg != NULL, .trainable = trainable};
    if (!l->ctx) l->ctx = ctx;
    tfc_status_clear(st);
    return v;
}

const tfc_weight *tfc_layer_find_weight(const tfc_layer *l, const tfc_variable *v) {
    if (!l) return NULL;
    for (int i = 0; i < l->n_weights; i++)
        if (l->weights[i].var == v) return &l->weights[i];
    for (int i = 0; i < l->n_sublayers; i++) {
        const tfc_weight *w = tfc_layer_find_weight(l->sublayers[i], v);
        if (w) return w;
    }
    return NULL;
}

/* A growing list that drops duplicates (shared layers), as Keras's _dedup_weights. */
typedef struct {
    tfc_variable **out;
    int max, n;
} wlist;

static void wl_add(wlist *w, tfc_variable *v) {
    int lim = w->n < w->max ? w->n : w->max;
    for (int i = 0; i < lim; i++)
        if (w->out[i] == v) return;
    if (w->n < w->max) w->out[w->n] = v;
    w->n++;
}

enum { W_TRAINABLE, W_NON_TRAINABLE, W_ALL };

static void collect(const tfc_layer *l, int which, wlist *w);

static void collect_own(const tfc_layer *l, bool trainable, wlist *w) {
    for (int i = 0; i < l->n_weights; i++)
        if (l->weights[i].trainable == trainable) wl_add(w, l->weights[i].var);
}

/* Keras: trainable_weights = own trainable + children's trainable (none when frozen); non_trainable_weights =
 * own non-trainable + children's non-trainable, or, when frozen, all own weights + children's weights;
 * weights = trainable_weights + non_trainable_weights. Models put their layers first and their own last. */
static void collect(const tfc_layer *l, int which, wlist *w) {
    if (which == W_ALL) {
        if (l->is_model) {
            for (int i = 0; i < l->n_sublayers; i++) collect(l->sublayers[i], W_ALL, w);
            collect_own(l, true, w);
            collect_own(l, false, w);
            return;
        }
        collect(l, W_TRAINABLE, w);
        collect(l, W_NON_TRAINABLE, w);
        return;
    }
    if (which == W_TRAINABLE) {
        if (!l->trainable) return;
        if (!l->is_model) collect_own(l, true, w);
        for (int i = 0; i < l->n_sublayers; i++) collect(l->sublayers[i], W_TRAINABLE, w);
        if (l->is_model) collect_own(l, true, w);
        return;
    }
    if (l->trainable) {
        if (!l->is_model) collect_own(l, false, w);
        for (int i = 0; i < l->n_sublayers; i++) collect(l->sublayers[i], W_NON_TRAINABLE, w);
        if (l->is_model) collect_own(l, false, w);
    } else {
        if (!l->is_model) collect_own(l, true, w), collect_own(l, false, w);
        for (int i = 0; i < l->n_sublayers; i++) collect(l->sublayers[i], W_ALL, w);
        if (l->is_model) collect_own(l, true, w), collect_own(l, false, w);
    }
}

static int collect_public(const tfc_layer *l, int which, tfc_variable **out, int max) {
    if (!l) return 0;
    tfc_variable *tmp_one;
    wlist w = {.out = out, .max = out ? max : 0};
    /* Deduplication needs the list itself; without an output buffer count into a scratch array. */
    if (!out || max <= 0) {
        int total = 0;
        wlist probe = {.out = &tmp_one, .max = 0};
        collect(l, which, &probe);
        total = probe.n;
        if (total == 0) return 0;
        tfc_variable **buf = tfc_malloc((size_t)total * sizeof *buf);
        if (!buf) return total;
        wlist full = {.out = buf, .max = total};
        collect(l, which, &full);
        int n = full.n;
        tfc_free(buf);
        return n;
    }
    collect(l, which, &w);
    if (w.n > max) {
        /* Duplicates past `max` were not detected; recount exactly. */
        tfc_variable **buf = tfc_malloc((size_t)w.n * sizeof *buf);
        if (!buf) return w.n;
        wlist full = {.out = buf, .max = w.n};
        collect(l, which, &full);
        memcpy(out, buf, (size_t)max * sizeof *out);
        int n = full.n;
        tfc_free(buf);
        return n;
    }
    return w.n;
}

int tfc_layer_weights(const tfc_layer *l, tfc_variable **out, int max) { return collect_public(l, W_ALL, out, max); }
int tfc_layer_trainable_weights(const tfc_layer *l, tfc_variable **out, int max) {
    return collect_public(l, W_TRAINABLE, out, max);
}
int tfc_layer_non_trainable_weights(const tfc_layer *l, tfc_variable **out, int max) {
    return collect_public(l, W_NON_TRAINABLE, out, max);
}

/* All weights as a freshly allocated array (caller frees); *n gets the count. NULL with n = 0 when none. */
static tfc_variable **all_weights(const tfc_layer *l, int *n, tfc_status *st) {
    *n = tfc_layer_weights(l, NULL, 0);
    if (*n == 0) return NULL;
    tfc_variable **v = tfc_malloc((size_t)*n * sizeof *v);
    if (!v) {
        tfc_status_oom(st, "layer weights", (size_t)*n * sizeof *v);
        *n = -1;
        return NULL;
    }
    *n = tfc_layer_weights(l, v, *n);
    return v;
}

int64_t tfc_layer_count_params(const tfc_layer *l) {
    tfc_status st = TFC_STATUS_INIT;
    int n;
    tfc_variable **v = all_weights(l, &n, &st);
    int64_t total = 0;
    for (int i = 0; i < n; i++) {
        int64_t e = 0;
        if (tfc_shape_num_elements(tfc_variable_shape(v[i]), &e, NULL, &st)) total += e;
    }
    tfc_free(v);
    return total;
}

int tfc_layer_get_weights(const tfc_layer *l, tfc_tensor **out, int max, tfc_status *st) {
    if (!l) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "get_weights: NULL layer");
        return -1;
    }
    int n;
    tfc_variable **v = all_weights(l, &n, st);
    if (n < 0) return -1;
    int k = 0;
    for (; k < n && k < max && out; k++) {
        if (!(out[k] = tfc_tensor_copy(tfc_variable_value(v[k]), st))) {
            for (int j = 0; j < k; j++) tfc_tensor_unref(out[j]), out[j] = NULL;
            tfc_free(v);
            return -1;
        }
    }
    tfc_free(v);
    tfc_status_clear(st);
    return n;
}

bool tfc_layer_set_weights(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *w, int n, tfc_status *st) {
    if (!l || !ctx || (n > 0 && !w)) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "set_weights: NULL argument");
    int have;
    tfc_variable **v = all_weights(l, &have, st);
    if (have < 0) return false;
    bool ok = true;
    if (n != have) {
        ok = tfc_status_set(st, TFC_INVALID_ARGUMENT,
                            "You called `set_weights(weights)` on layer \"%s\" with a weight list of length %d, but "
                            "the layer was expecting %d weights.",
                            l->name, n, have);
    }
    for (int i = 0; ok && i < n; i++) {
        const tfc_weight *wt = tfc_layer_find_weight(l, v[i]);
        if (!w[i]) {
            ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "set_weights on layer \"%s\": weight %d is NULL", l->name, i);
        } else if (!tfc_shape_equal(tfc_variable_shape(v[i]), tfc_tensor_shape(w[i]))) {
            ok = tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                "Layer %s weight shape %s is not compatible with provided weight shape %s (weight "
                                "\"%s\")",
                                l->name, TFC_KSHP(tfc_variable_shape(v[i])), TFC_KSHP(tfc_tensor_shape(w[i])),
                                wt ? wt->name : tfc_variable_name(v[i]));
        } else if (tfc_variable_dtype(v[i]) != tfc_tensor_dtype(w[i])) {
            ok = tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                "Layer %s weight \"%s\" has dtype %s, but the provided weight has dtype %s", l->name,
                                wt ? wt->name : tfc_variable_name(v[i]), tfc_dtype_name(tfc_variable_dtype(v[i])),
                                tfc_dtype_name(tfc_tensor_dtype(w[i])));
        }
    }
    for (int i = 0; ok && i < n; i++) ok = tfc_variable_assign(ctx, v[i], w[i], st);
    tfc_free(v);
    if (ok) tfc_status_clear(st);
    return ok;
}

bool tfc_keras_expect_inputs(const tfc_layer *l, int n_in, int n, tfc_status *st) {
    if (n_in == n) return true;
    return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\" expects %d input(s), but it received %d input tensors",
                          l->name, n, n_in);
}

bool tfc_keras_same_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out, tfc_status *st) {
    if (!tfc_keras_expect_inputs(l, n_in, 1, st)) return false;
    out[0] = in[0];
    *n_out = 1;
    return true;
}

/* ---- build and call ------------------------------------------------------------------------------------ */

bool tfc_layer_check_activation(const tfc_layer *l, const char *activation, tfc_status *st) {
    if (tfc_activation_valid(activation)) return true;
    return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Unknown activation function: %s (layer \"%s\")", activation,
                          l->name);
}

static void default_spec(tfc_input_spec *spec, const tfc_shape *s) {
    memset(spec, 0, sizeof *spec);
    spec->ndim = s->rank;
    for (int d = 1; d < s->rank; d++)
        if (s->dims[d] >= 0) {
            spec->axes[spec->n_axes] = d;
            spec->values[spec->n_axes++] = s->dims[d];
        }
}

bool tfc_layer_ensure_built(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st) {
    if (!l) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "build: NULL layer");
    if (l->built) return true;
    if (!ctx) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": build needs a context", l->name);
    if (l->compute_dtype == TFC_INVALID_DTYPE) { /* the constructor's dtype_policy was not a policy */
        tfc_policy p;
        return tfc_policy_init(&p, l->policy, st);
    }
    if (n_in < 0 || n_in > TFC_KERAS_MAX_IO)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": %d inputs (at most %d supported)", l->name,
                              n_in, TFC_KERAS_MAX_IO);
    int n_before = l->n_weights;
    tfc_ctx *ctx_before = l->ctx;
    l->ctx = ctx;
    l->has_input_spec = false;
    bool ok = tfc_scope_begin(ctx, st);
    if (ok) {
        ok = !l->cls->build || l->cls->build(l, ctx, in, n_in, st);
        tfc_scope_end(ctx);
    }
    if (!ok) {
        /* Leave the layer as it was, so that a corrected call can build it. */
        for (int i = n_before; i < l->n_weights; i++) {
            tfc_variable_free(l->weights[i].var);
            tfc_free(l->weights[i].name);
        }
        l->n_weights = n_before;
        l->ctx = ctx_before;
        l->has_input_spec = false;
        return false;
    }
    l->n_build_shapes = n_in;
    for (int i = 0; i < n_in; i++) {
        l->build_shapes[i] = in[i];
        if (!l->has_input_spec) default_spec(&l->input_spec[i], &in[i]);
    }
    l->has_input_spec = true;
    l->built = true;
    tfc_status_clear(st);
    return true;
}

bool tfc_layer_build(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st) {
    if (!l || (n_in > 0 && !in)) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "build: NULL argument");
    if (!l->built && l->cls->compute_output_shape) {
        tfc_shape out[TFC_KERAS_MAX_IO];
        int n_out = TFC_KERAS_MAX_IO;
        if (!l->cls->compute_output_shape(l, in, n_in, out, &n_out, st)) return false;
    }
    return tfc_layer_ensure_built(l, ctx, in, n_in, st) && tfc_layer_check_inputs(l, in, n_in, st);
}

static bool spec_error(const tfc_layer *l, int i, tfc_status *st, const char *what) {
    char built[TFC_SHAPE_STR] = "";
    if (i < l->n_build_shapes) tfc_keras_shape_str(&l->build_shapes[i], built, sizeof built);
    return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                          "Input %d of layer \"%s\" is incompatible with the layer: %s (layer built for input shape %s)",
                          i, l->name, what, built);
}

bool tfc_layer_check_inputs(const tfc_layer *l, const tfc_shape *in, int n_in, tfc_status *st) {
    if (!l->built) return true;
    if (n_in != l->n_build_shapes)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\" expects %d input(s), but it received %d input tensors",
                              l->name, l->n_build_shapes, n_in);
    for (int i = 0; i < n_in; i++) {
        const tfc_input_spec *sp = &l->input_spec[i];
        const tfc_shape *s = &in[i];
        char what[200];
        if (s->rank < 0) continue;
        if (sp->ndim >= 0 && s->rank != sp->ndim) {
            snprintf(what, sizeof what, "expected ndim=%d, found ndim=%d. Full shape received: %s", sp->ndim, s->rank,
                     TFC_KSHP(s));
            return spec_error(l, i, st, what);
        }
        if (sp->min_ndim > 0 && s->rank < sp->min_ndim) {
            snprintf(what, sizeof what, "expected min_ndim=%d, found ndim=%d. Full shape received: %s", sp->min_ndim,
                     s->rank, TFC_KSHP(s));
            return spec_error(l, i, st, what);
        }
        for (int a = 0; a < sp->n_axes; a++) {
            int ax = sp->axes[a] < 0 ? sp->axes[a] + s->rank : sp->axes[a];
            if (ax < 0 || ax >= s->rank) continue;
            if (s->dims[ax] >= 0 && sp->values[a] >= 0 && s->dims[ax] != sp->values[a]) {
                snprintf(what, sizeof what,
                         "expected axis %d of input shape to have value %lld, but received input with shape %s",
                         sp->axes[a], (long long)sp->values[a], TFC_KSHP(s));
                return spec_error(l, i, st, what);
            }
        }
    }
    return true;
}

/* Puts t in the innermost scope when it is not there yet (class calls may return a new reference to an input). */
static bool own_in_scope(tfc_ctx *ctx, tfc_tensor *t, tfc_status *st) {
    if (!t || ctx->n_scopes == 0) return true;
    tfc_scope *s = &ctx->scopes[ctx->n_scopes - 1];
    for (int64_t i = s->n - 1; i >= 0; i--)
        if (s->items[i] == t) return true;
    return tfc_scope_track(ctx, t, st);
}

/* Keras's activity regularizer: regularizer(output) / batch_size, per output, summed. */
static bool add_activity_loss(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *out, int n_out, tfc_status *st) {
    tfc_tensor_unref(l->activity_loss);
    l->activity_loss = NULL;
    tfc_tensor *sum = NULL;
    for (int i = 0; i < n_out; i++) {
        if (!out[i] || !tfc_dtype_is_floating(tfc_tensor_dtype(out[i]))) continue;
        tfc_tensor *loss = tfc_regularizer_apply(ctx, &l->activity_reg, out[i], st);
        if (!loss) return false;
        double batch = tfc_tensor_rank(out[i]) > 0 ? (double)tfc_tensor_dim(out[i], 0) : 1.0;
        tfc_tensor *b = tfc_scalar_f32((float)batch, st);
        if (!b) return false;
        tfc_tensor *mean = tfc_emit(ctx, "RealDiv", (tfc_tensor *[]){loss, b}, 2, NULL, 0, st);
        tfc_tensor_unref(b);
        if (!mean) return false;
        sum = sum ? tfc_emit(ctx, "AddV2", (tfc_tensor *[]){sum, mean}, 2, NULL, 0, st) : mean;
        if (!sum) return false;
    }
    l->activity_loss = tfc_tensor_ref(sum);
    return true;
}

bool tfc_layer_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                    bool training, tfc_status *st) {
    if (!l || !ctx || !in || n_in < 1 || !out || n_out < 1)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "tfc_layer_call: NULL or empty argument");
    for (int i = 0; i < n_out; i++) out[i] = NULL;
    if (n_in > TFC_KERAS_MAX_IO)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": %d inputs (at most %d supported)", l->name,
                              n_in, TFC_KERAS_MAX_IO);
    tfc_shape shapes[TFC_KERAS_MAX_IO];
    for (int i = 0; i < n_in; i++) {
        if (!in[i]) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": input %d is NULL", l->name, i);
        shapes[i] = *tfc_tensor_shape(in[i]);
    }
    if (!l->built && l->cls->compute_output_shape) {
        /* Validates the inputs (rank, compatible shapes) before any weight is created. */
        tfc_shape o[TFC_KERAS_MAX_IO];
        int no = TFC_KERAS_MAX_IO;
        if (!l->cls->compute_output_shape(l, shapes, n_in, o, &no, st)) return false;
    }
    if (!tfc_layer_ensure_built(l, ctx, shapes, n_in, st) || !tfc_layer_check_inputs(l, shapes, n_in, st))
        return false;
    if (!l->cls->call) return tfc_status_set(st, TFC_UNIMPLEMENTED, "Layer \"%s\" has no call", l->name);
    if (!tfc_scope_begin(ctx, st)) return false;
    tfc_tensor *cin[TFC_KERAS_MAX_IO];
    bool ok = true;
    /* Keras autocasts floating inputs to the layer's compute dtype. */
    for (int i = 0; i < n_in && ok; i++) {
        cin[i] = in[i];
        tfc_dtype dt = tfc_tensor_dtype(in[i]), cd = l->compute_dtype;
        if (!l->no_autocast && tfc_dtype_is_floating(dt) && tfc_dtype_is_floating(cd) && dt != cd) {
            tfc_attr a = TFC_ATTR_T("DstT", cd);
            ok = (cin[i] = tfc_emit(ctx, "Cast", &in[i], 1, &a, 1, st)) != NULL;
        }
    }
    if (ok) ok = l->cls->call(l, ctx, cin, n_in, out, n_out, training, st);
    for (int i = 0; i < n_out && ok; i++)
        if (!out[i]) ok = tfc_status_set(st, TFC_INTERNAL, "Layer \"%s\" produced no output %d", l->name, i);
    for (int i = 0; i < n_out; i++)
        if (!own_in_scope(ctx, out[i], ok ? st : NULL)) ok = false, out[i] = NULL;
    if (ok && l->has_activity_reg) ok = add_activity_loss(l, ctx, out, n_out, st);
    if (!ok) {
        tfc_scope_end(ctx);
        for (int i = 0; i < n_out; i++) out[i] = NULL;
        return false;
    }
    if (!tfc_scope_end_keep(ctx, out, n_out, st)) {
        for (int i = 0; i < n_out; i++) out[i] = NULL;
        return false;
    }
    tfc_status_clear(st);
    return true;
}

tfc_tensor *tfc_layer_call1(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *x, bool training, tfc_status *st) {
    tfc_tensor *y = NULL;
    return tfc_layer_call(l, ctx, &x, 1, &y, 1, training, st) ? y : NULL;
}

/* ---- losses -------------------------------------------------------------------------------------------- */

static tfc_tensor *reduce_all(tfc_ctx *ctx, const char *op, tfc_tensor *x, tfc_status *st) {
    int rank = tfc_tensor_rank(x);
    int32_t axes[TFC_MAX_RANK];
    for (int i = 0; i < rank; i++) axes[i] = i;
    tfc_tensor *ax = tfc_vec_i32(axes, rank, st);
    if (!ax) return NULL;
    tfc_tensor *r = tfc_emit(ctx, op, (tfc_tensor *[]){x, ax}, 2, NULL, 0, st);
    tfc_tensor_unref(ax);
    return r;
}

tfc_tensor *tfc_regularizer_apply(tfc_ctx *ctx, const tfc_regularizer *reg, tfc_tensor *w, tfc_status *st) {
    tfc_tensor *x = w, *total = NULL;
    if (tfc_tensor_dtype(w) != TFC_FLOAT) {
        tfc_attr a = TFC_ATTR_T("DstT", TFC_FLOAT);
        if (!(x = tfc_emit(ctx, "Cast", &w, 1, &a, 1, st))) return NULL;
    }
    for (int k = 0; k < 2; k++) {
        double c = k == 0 ? reg->l1 : reg->l2;
        if (c == 0) continue;
        tfc_tensor *e = tfc_emit(ctx, k == 0 ? "Abs" : "Square", &x, 1, NULL, 0, st);
        tfc_tensor *s = e ? reduce_all(ctx, "Sum", e, st) : NULL;
        tfc_tensor *cs = s ? tfc_scalar_f32((float)c, st) : NULL;
        tfc_tensor *term = cs ? tfc_emit(ctx, "Mul", (tfc_tensor *[]){cs, s}, 2, NULL, 0, st) : NULL;
        tfc_tensor_unref(cs);
        if (!term) return NULL;
        total = total ? tfc_emit(ctx, "AddV2", (tfc_tensor *[]){total, term}, 2, NULL, 0, st) : term;
        if (!total) return NULL;
    }
    if (!total) {
        tfc_tensor *z = tfc_scalar_f32(0.0f, st);
        if (!z) return NULL;
        total = tfc_emit(ctx, "Identity", &z, 1, NULL, 0, st);
        tfc_tensor_unref(z);
    }
    return total;
}

static bool add_reg_losses(tfc_layer *l, tfc_ctx *ctx, tfc_tensor **sum, tfc_status *st) {
    for (int i = 0; i < l->n_weights; i++) {
        if (!l->weights[i].has_reg) continue;
        tfc_tensor *w = tfc_variable_read(ctx, l->weights[i].var, st);
        tfc_tensor *r = w ? tfc_regularizer_apply(ctx, &l->weights[i].reg, w, st) : NULL;
        if (!r) return false;
        *sum = *sum ? tfc_emit(ctx, "AddV2", (tfc_tensor *[]){*sum, r}, 2, NULL, 0, st) : r;
        if (!*sum) return false;
    }
    if (l->activity_loss) {
        tfc_tensor *a = l->activity_loss;
        *sum = *sum ? tfc_emit(ctx, "AddV2", (tfc_tensor *[]){*sum, a}, 2, NULL, 0, st)
                    : tfc_emit(ctx, "Identity", &a, 1, NULL, 0, st);
        if (!*sum) return false;
    }
    for (int i = 0; i < l->n_sublayers; i++)
        if (!add_reg_losses(l->sublayers[i], ctx, sum, st)) return false;
    return true;
}

tfc_tensor *tfc_layer_regularization_loss(tfc_layer *l, tfc_ctx *ctx, tfc_status *st) {
    if (!l || !ctx) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "regularization_loss: NULL argument");
        return NULL;
    }
    if (!tfc_scope_begin(ctx, st)) return NULL;
    tfc_tensor *sum = NULL;
    bool ok = add_reg_losses(l, ctx, &sum, st);
    if (!ok || !sum) {
        tfc_scope_end(ctx);
        if (ok) tfc_status_clear(st);
        return NULL;
    }
    if (!tfc_scope_end_keep(ctx, &sum, 1, st)) return NULL;
    tfc_status_clear(st);
    return sum;
}

/* ---- config -------------------------------------------------------------------------------------------- */

/* "dtype": the variable dtype's name for a plain policy, Keras's serialized Policy for a mixed one. */
bool tfc_policy_config_add(cJSON *cfg, const tfc_layer *l) {
    if (!tfc_layer_policy_mixed(l)) return cJSON_AddStringToObject(cfg, "dtype", tfc_dtype_name(l->dtype)) != NULL;
    cJSON *d = cJSON_AddObjectToObject(cfg, "dtype"), *c = d ? cJSON_CreateObject() : NULL;
    if (!c) return false;
    return cJSON_AddStringToObject(d, "module", "keras.mixed_precision") &&
           cJSON_AddStringToObject(d, "class_name", "Policy") && cJSON_AddItemToObject(d, "config", c) &&
           cJSON_AddStringToObject(c, "name", l->policy) && cJSON_AddNullToObject(d, "registered_name");
}

cJSON *tfc_layer_config_json(const tfc_layer *l, tfc_status *st) {
    if (!l) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "get_config: NULL layer");
        return NULL;
    }
    cJSON *cfg = cJSON_CreateObject();
    bool ok = cfg && cJSON_AddStringToObject(cfg, "name", l->name) && cJSON_AddBoolToObject(cfg, "trainable", l->trainable) &&
              tfc_policy_config_add(cfg, l);
    if (ok && l->has_input_shape) {
        cJSON *s = tfc_json_shape(&l->input_shape);
        ok = s && cJSON_AddItemToObject(cfg, "batch_input_shape", s);
    }
    if (!ok) {
        cJSON_Delete(cfg);
        tfc_status_oom(st, "get_config", 0);
        return NULL;
    }
    if (l->cls->get_config && !l->cls->get_config(l, cfg, st)) {
        cJSON_Delete(cfg);
        if (st->code == TFC_OK) tfc_status_oom(st, "get_config", 0);
        return NULL;
    }
    tfc_status_clear(st);
    return cfg;
}

char *tfc_layer_get_config(const tfc_layer *l, tfc_status *st) {
    cJSON *cfg = tfc_layer_config_json(l, st);
    if (!cfg) return NULL;
    char *r = tfc_json_print(cfg);
    cJSON_Delete(cfg);
    if (!r) tfc_status_oom(st, "get_config", 0);
    return r;
}

tfc_layer *tfc_layer_from_config(const char *class_name, const char *config_json, tfc_status *st) {
    if (!class_name) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "from_config: NULL class name");
        return NULL;
    }
    cJSON *cfg = cJSON_Parse(config_json ? config_json : "{}");
    if (!cfg || !cJSON_IsObject(cfg)) {
        cJSON_Delete(cfg);
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "from_config(%s): the config is not a JSON object", class_name);
        return NULL;
    }
    tfc_layer *l = tfc_layer_from_config_json(class_name, cfg, st);
    cJSON_Delete(cfg);
    return l;
}

tfc_layer *tfc_layer_from_config_json(const char *class_name, const cJSON *config, tfc_status *st) {
    const tfc_layer_registration *r = tfc_layer_registry_find(class_name);
    if (!r) {
        bool found = false;
        tfc_layer *l = config && cJSON_IsObject(config)
                           ? tfc_keras_custom_layer_from_config(class_name, config, &found, st) : NULL;
        if (!found)
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "Unknown layer: '%s'. Please ensure you are using a "
                           "`keras.utils.custom_object_scope` and that this object is included in the scope "
                           "(tfc_keras_register_layer).", class_name);
        else if (l)
            tfc_status_clear(st);
        return l;
    }
    if (!config || !cJSON_IsObject(config)) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "from_config(%s): the config is not a JSON object", class_name);
        return NULL;
    }
    tfc_layer_common_cfg c;
    if (!tfc_json_get_common(config, &c, st)) return NULL;
    tfc_layer *l = r->from_config(config, st);
    if (!l) {
        if (st->code == TFC_OK) tfc_status_oom(st, "from_config", 0);
        return NULL;
    }
    /* batch_input_shape's batch dim is the one common key the constructor options cannot carry. */
    if (l->has_input_shape && c.batch_size >= 0) l->input_shape.dims[0] = c.batch_size;
    tfc_status_clear(st);
    return l;
}

/* ---- symbolic Keras tensors ---------------------------------------------------------------------------- */

static tfc_knode *add_node(tfc_layer *l, tfc_ktensor *const *in, int n_in, const tfc_shape *out_shapes, int n_out,
                           tfc_dtype dtype, tfc_status *st) {
    if (l->n_nodes == l->cap_nodes) {
        int cap = l->cap_nodes ? l->cap_nodes * 2 : 2;
        tfc_knode **nodes = tfc_realloc(l->nodes, (size_t)cap * sizeof *nodes);
        if (!nodes) {
            tfc_status_oom(st, "layer node", (size_t)cap * sizeof *nodes);
            return NULL;
        }
        l->nodes = nodes;
        l->cap_nodes = cap;
    }
    tfc_knode *n = tfc_calloc(1, sizeof *n);
    if (!n || (n_in && !(n->in = tfc_calloc((size_t)n_in, sizeof *n->in))) ||
        !(n->out = tfc_calloc((size_t)n_out, sizeof *n->out))) {
        knode_free(n);
        tfc_status_oom(st, "layer node", 0);
        return NULL;
    }
    n->layer = l;
    n->n_in = n_in;
    for (int i = 0; i < n_in; i++) n->in[i] = in[i];
    for (int i = 0; i < n_out; i++) {
        if (!(n->out[i] = tfc_calloc(1, sizeof(tfc_ktensor)))) {
            knode_free(n);
            tfc_status_oom(st, "layer node", 0);
            return NULL;
        }
        n->n_out = i + 1;
        *n->out[i] = (tfc_ktensor){.node = n, .index = i, .shape = out_shapes[i], .dtype = dtype};
    }
    n->index = l->n_nodes;
    l->nodes[l->n_nodes++] = n;
    return n;
}

tfc_ktensor *tfc_input_new(const tfc_input_opts *opts) {
    tfc_input_opts o = opts ? *opts : (tfc_input_opts){0};
    tfc_input_layer_opts lo = {.name = o.name, .dtype = o.dtype, .batch_size = o.batch_size,
                               .input_rank = o.rank};
    memcpy(lo.input_shape, o.shape, sizeof lo.input_shape);
    if (o.rank == 0) {
        int r = 0;
        while (r < TFC_MAX_RANK && o.shape[r] != 0) r++;
        if (r == 0) lo.input_rank = -1; /* tf.keras.Input(shape=()) */
    }
    tfc_layer *l = tfc_layers_input_layer_new(&lo);
    if (!l) return NULL;
    tfc_status st = TFC_STATUS_INIT;
    tfc_knode *n = add_node(l, NULL, 0, &l->input_shape, 1, l->dtype, &st);
    if (!n) {
        tfc_layer_unref(l);
        return NULL;
    }
    return n->out[0];
}

tfc_ktensor *tfc_layer_apply(tfc_layer *l, tfc_ktensor *const *in, int n_in, tfc_status *st) {
    if (!l || !in || n_in < 1) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "tfc_layer_apply: NULL or empty argument");
        return NULL;
    }
    if (n_in > TFC_KERAS_MAX_IO) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": %d inputs (at most %d supported)", l->name, n_in,
                       TFC_KERAS_MAX_IO);
        return NULL;
    }
    tfc_shape shapes[TFC_KERAS_MAX_IO];
    for (int i = 0; i < n_in; i++) {
        if (!in[i]) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": input %d is NULL", l->name, i);
            return NULL;
        }
        shapes[i] = in[i]->shape;
    }
    if (!l->cls->compute_output_shape) {
        tfc_status_set(st, TFC_UNIMPLEMENTED, "Layer \"%s\" (%s) cannot be called on Keras tensors: no compute_output_shape",
                       l->name, l->cls->class_name);
        return NULL;
    }
    if (!tfc_layer_check_inputs(l, shapes, n_in, st)) return NULL;
    tfc_shape out[TFC_KERAS_MAX_IO];
    int n_out = TFC_KERAS_MAX_IO;
    if (!l->cls->compute_output_shape(l, shapes, n_in, out, &n_out, st)) return NULL;
    if (n_out < 1 || n_out > TFC_KERAS_MAX_IO) {
        tfc_status_set(st, TFC_INTERNAL, "Layer \"%s\": compute_output_shape gave %d outputs", l->name, n_out);
        return NULL;
    }
    /* Layers whose weights already live in a context are built now; the others are built by the model
     * constructed on these tensors (tfc_model_new has the context). */
    if (!l->built && l->ctx && !tfc_layer_ensure_built(l, l->ctx, shapes, n_in, st)) return NULL;
    tfc_dtype dt = l->keeps_input_dtype && !tfc_dtype_is_floating(in[0]->dtype) ? in[0]->dtype : l->compute_dtype;
    tfc_knode *n = add_node(l, in, n_in, out, n_out, dt, st);
    if (!n) return NULL;
    tfc_status_clear(st);
    return n->out[0];
}

int tfc_ktensor_siblings(const tfc_ktensor *k, tfc_ktensor **out, int max) {
    if (!k) return 0;
    for (int i = 0; i < k->node->n_out && i < max && out; i++) out[i] = k->node->out[i];
    return k->node->n_out;
}

const tfc_shape *tfc_ktensor_shape(const tfc_ktensor *k) { return k ? &k->shape : NULL; }
tfc_dtype tfc_ktensor_dtype(const tfc_ktensor *k) { return k ? k->dtype : TFC_INVALID_DTYPE; }
tfc_layer *tfc_ktensor_layer(const tfc_ktensor *k) { return k ? k->node->layer : NULL; }
