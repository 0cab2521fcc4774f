/* The object half of a saved model: the SavedObjectGraph TensorFlow 2's loader rebuilds Python objects from (a root
 * object whose children are the variables, by name, and `signatures`, a signature map of bare concrete functions
 * with their structured input and output signatures and the variables they capture), and the TrackableObjectGraph
 * stored in variables/ under _CHECKPOINTABLE_OBJECT_GRAPH, through which the loader finds each variable's value
 * ("<escaped name>/.ATTRIBUTES/VARIABLE_VALUE"). Messages are built from pieces of one arena and packed here. */
#include <stdio.h>
#include <string.h>

#include "proto/proto_internal.h"
#include "proto/saved_object_graph.pb-c.h"
#include "proto/struct.pb-c.h"
#include "proto/trackable_object_graph.pb-c.h"
#include "saved_model/sm_save_objects.h"

typedef struct {
    void **p;             /* plain allocations */
    size_t n, cap;
    void **shapes;        /* protobuf-c TensorShapeProtos (tfc_pb_free) */
    size_t n_shapes, cap_shapes;
    bool failed;
} arena;

/* tfc_pb_shape_to_proto, freed with the arena. */
static Tensorflow__TensorShapeProto *shape(arena *a, const tfc_shape *s, tfc_status *st) {
    if (a->failed) return NULL;
    if (a->n_shapes == a->cap_shapes) {
        size_t c = a->cap_shapes ? 2 * a->cap_shapes : 64;
        void **np = tfc_realloc(a->shapes, c * sizeof *np);
        if (!np) return a->failed = true, NULL;
        a->shapes = np, a->cap_shapes = c;
    }
    Tensorflow__TensorShapeProto *p = tfc_pb_shape_to_proto(s, st);
    if (!p) return a->failed = true, NULL;
    return a->shapes[a->n_shapes++] = p;
}

static void *get(arena *a, size_t size) {
    if (a->failed) return NULL;
    if (a->n == a->cap) {
        size_t c = a->cap ? 2 * a->cap : 64;
        void **np = tfc_realloc(a->p, c * sizeof *np);
        if (!np) return a->failed = true, NULL;
        a->p = np, a->cap = c;
    }
    void *m = tfc_calloc(1, size ? size : 1);
    if (!m) return a->failed = true, NULL;
    return a->p[a->n++] = m;
}

static char *str(arena *a, const char *s) {
    char *d = get(a, strlen(s) + 1);
    if (d) strcpy(d, s);
    return d ? d : (char *)protobuf_c_empty_string;
}

static void arena_free(arena *a) {
    for (size_t i = 0; i < a->n_shapes; i++) tfc_pb_free(a->shapes[i]);
    tfc_free(a->shapes);
    for (size_t i = 0; i < a->n; i++) tfc_free(a->p[i]);
    tfc_free(a->p);
}

/* A message of the arena, initialised to its defaults. */
static void *made(void *m, const ProtobufCMessageDescriptor *d) {
    if (m) protobuf_c_message_init(d, m);
    return m;
}
#define NEW(a, T, desc) ((T *)made(get((a), sizeof(T)), &(desc)))

/* A checkpoint key's path part: '.' -> "..", '/' -> ".S" (TensorFlow's escaping of local names). */
void tfc_sm_checkpoint_key(const char *name, char *out, size_t size) {
    size_t n = 0;
    for (const char *p = name; *p && n + 3 < size; p++) {
        if (*p == '.') out[n++] = '.', out[n++] = '.';
        else if (*p == '/') out[n++] = '.', out[n++] = 'S';
        else out[n++] = *p;
    }
    snprintf(out + n, size - n, "/.ATTRIBUTES/VARIABLE_VALUE");
}

static Tensorflow__StructuredValue *spec_value(arena *a, const char *name, const tfc_tensor_spec *ts, tfc_status *st) {
    Tensorflow__StructuredValue *v = NEW(a, Tensorflow__StructuredValue, tensorflow__structured_value__descriptor);
    Tensorflow__TensorSpecProto *s = NEW(a, Tensorflow__TensorSpecProto, tensorflow__tensor_spec_proto__descriptor);
    Tensorflow__TensorShapeProto *sh = shape(a, &ts->shape, st);
    if (!v || !s || !sh) return NULL;
    s->name = str(a, name);
    s->shape = sh;
    s->dtype = (Tensorflow__DataType)ts->dtype;
    v->kind_case = TENSORFLOW__STRUCTURED_VALUE__KIND_TENSOR_SPEC_VALUE;
    v->tensor_spec_value = s;
    return v;
}

/* {key: TensorSpec(name=key)} for n keys. */
static Tensorflow__StructuredValue *dict_of_specs(arena *a, const char *const *keys, const tfc_tensor_spec *specs, int n,
                                                  tfc_status *st) {
    Tensorflow__StructuredValue *v = NEW(a, Tensorflow__StructuredValue, tensorflow__structured_value__descriptor);
    Tensorflow__DictValue *d = NEW(a, Tensorflow__DictValue, tensorflow__dict_value__descriptor);
    Tensorflow__DictValue__FieldsEntry **f = get(a, ((size_t)n + 1) * sizeof *f);
    if (!v || !d || !f) return NULL;
    for (int i = 0; i < n; i++) {
        if (!(f[i] = NEW(a, Tensorflow__DictValue__FieldsEntry, tensorflow__dict_value__fields_entry__descriptor))) return NULL;
        f[i]->key = str(a, keys[i]);
        if (!(f[i]->value = spec_value(a, keys[i], &specs[i], st))) return NULL;
    }
    d->n_fields = (size_t)n, d->fields = f;
    v->kind_case = TENSORFLOW__STRUCTURED_VALUE__KIND_DICT_VALUE;
    v->dict_value = d;
    return v;
}

static bool sorted(const char *const *k, int n) {
    for (int i = 1; i < n; i++)
        if (strcmp(k[i - 1], k[i]) >= 0) return false;
    return true;
}

bool tfc_sm_object_graphs(tfc_variable *const *vars, const char *const *names, int n_vars, const tfc_sm_sig_objects *sigs,
                          int n_sigs, uint8_t **og_bytes, size_t *og_size, uint8_t **ckpt_bytes, size_t *ckpt_size,
                          tfc_status *st) {
    *og_bytes = *ckpt_bytes = NULL;
    /* what TensorFlow's structured signatures can say: keys in flattening (sorted) order, variables as captures */
    for (int s = 0; s < n_sigs; s++) {
        if (!sorted(sigs[s].in_keys, sigs[s].n_in) || !sorted(sigs[s].out_keys, sigs[s].n_out)) return true;
        for (int c = 0; c < sigs[s].n_caps; c++)
            if (sigs[s].bound[c] < 0) return true;
    }
    arena a = {0};
    const int n_nodes = 1 + n_vars + 1 + n_sigs; /* root, variables, signature map, signatures */
    Tensorflow__SavedObjectGraph og = TENSORFLOW__SAVED_OBJECT_GRAPH__INIT;
    Tensorflow__TrackableObjectGraph tg = TENSORFLOW__TRACKABLE_OBJECT_GRAPH__INIT;
    og.nodes = get(&a, (size_t)n_nodes * sizeof *og.nodes);
    tg.nodes = get(&a, ((size_t)n_vars + 1) * sizeof *tg.nodes);
    og.concrete_functions = get(&a, ((size_t)n_sigs + 1) * sizeof *og.concrete_functions);
    Tensorflow__VersionDef *ver = NEW(&a, Tensorflow__VersionDef, tensorflow__version_def__descriptor);
    if (ver) ver->producer = 1, ver->min_consumer = 1;
    for (int i = 0; i < n_nodes && !a.failed; i++)
        if ((og.nodes[i] = NEW(&a, Tensorflow__SavedObject, tensorflow__saved_object__descriptor))) og.n_nodes++;
    for (int i = 0; i <= n_vars && !a.failed; i++)
        if ((tg.nodes[i] = NEW(&a, Tensorflow__TrackableObjectGraph__TrackableObject,
                               tensorflow__trackable_object_graph__trackable_object__descriptor)))
            tg.n_nodes++;
    Tensorflow__TrackableObjectGraph__TrackableObject__ObjectReference **oc =
        get(&a, ((size_t)n_vars + 2) * sizeof *oc), **tc = get(&a, ((size_t)n_vars + 1) * sizeof *tc),
        **sc = get(&a, ((size_t)n_sigs + 1) * sizeof *sc);
    if (a.failed) goto oom;
    /* root */
    Tensorflow__SavedUserObject *root = NEW(&a, Tensorflow__SavedUserObject, tensorflow__saved_user_object__descriptor);
    Tensorflow__SavedUserObject *map = NEW(&a, Tensorflow__SavedUserObject, tensorflow__saved_user_object__descriptor);
    if (!root || !map) goto oom;
    root->identifier = str(&a, "_generic_user_object"), root->version = ver;
    map->identifier = str(&a, "signature_map"), map->version = ver;
    og.nodes[0]->kind_case = TENSORFLOW__SAVED_OBJECT__KIND_USER_OBJECT, og.nodes[0]->user_object = root;
    og.nodes[1 + n_vars]->kind_case = TENSORFLOW__SAVED_OBJECT__KIND_USER_OBJECT, og.nodes[1 + n_vars]->user_object = map;
    /* variables: children of both roots, their values under the escaped name */
    for (int v = 0; v < n_vars; v++) {
        Tensorflow__SavedVariable *sv = NEW(&a, Tensorflow__SavedVariable, tensorflow__saved_variable__descriptor);
        oc[v] = NEW(&a, Tensorflow__TrackableObjectGraph__TrackableObject__ObjectReference,
                    tensorflow__trackable_object_graph__trackable_object__object_reference__descriptor);
        tc[v] = NEW(&a, Tensorflow__TrackableObjectGraph__TrackableObject__ObjectReference,
                    tensorflow__trackable_object_graph__trackable_object__object_reference__descriptor);
        Tensorflow__TrackableObjectGraph__TrackableObject__SerializedTensor *at =
            NEW(&a, Tensorflow__TrackableObjectGraph__TrackableObject__SerializedTensor,
                tensorflow__trackable_object_graph__trackable_object__serialized_tensor__descriptor);
        void **ats = get(&a, sizeof(void *));
        if (!sv || !oc[v] || !tc[v] || !at || !ats) goto oom;
        sv->dtype = (Tensorflow__DataType)tfc_variable_dtype(vars[v]);
        if (!(sv->shape = shape(&a, tfc_variable_shape(vars[v]), st))) goto fail;
        sv->trainable = tfc_variable_trainable(vars[v]);
        sv->name = str(&a, names[v]);
        og.nodes[1 + v]->kind_case = TENSORFLOW__SAVED_OBJECT__KIND_VARIABLE, og.nodes[1 + v]->variable = sv;
        oc[v]->node_id = tc[v]->node_id = 1 + v;
        oc[v]->local_name = tc[v]->local_name = str(&a, names[v]);
        char key[1200];
        tfc_sm_checkpoint_key(names[v], key, sizeof key);
        at->name = str(&a, "VARIABLE_VALUE"), at->full_name = str(&a, names[v]), at->checkpoint_key = str(&a, key);
        ats[0] = at;
        tg.nodes[1 + v]->n_attributes = 1, tg.nodes[1 + v]->attributes = (void *)ats;
    }
    oc[n_vars] = NEW(&a, Tensorflow__TrackableObjectGraph__TrackableObject__ObjectReference,
                     tensorflow__trackable_object_graph__trackable_object__object_reference__descriptor);
    if (!oc[n_vars]) goto oom;
    oc[n_vars]->node_id = 1 + n_vars, oc[n_vars]->local_name = str(&a, "signatures");
    og.nodes[0]->n_children = (size_t)n_vars + 1, og.nodes[0]->children = oc;
    tg.nodes[0]->n_children = (size_t)n_vars, tg.nodes[0]->children = tc;
    /* signatures: bare concrete functions called with keyword arguments */
    for (int s = 0; s < n_sigs; s++) {
        const tfc_sm_sig_objects *g = &sigs[s];
        const int id = 2 + n_vars + s;
        Tensorflow__SavedBareConcreteFunction *bf =
            NEW(&a, Tensorflow__SavedBareConcreteFunction, tensorflow__saved_bare_concrete_function__descriptor);
        Tensorflow__SavedObjectGraph__ConcreteFunctionsEntry *ce =
            NEW(&a, Tensorflow__SavedObjectGraph__ConcreteFunctionsEntry, tensorflow__saved_object_graph__concrete_functions_entry__descriptor);
        Tensorflow__SavedConcreteFunction *cf = NEW(&a, Tensorflow__SavedConcreteFunction, tensorflow__saved_concrete_function__descriptor);
        Tensorflow__StructuredValue *args = NEW(&a, Tensorflow__StructuredValue, tensorflow__structured_value__descriptor);
        Tensorflow__StructuredValue *both = NEW(&a, Tensorflow__StructuredValue, tensorflow__structured_value__descriptor);
        Tensorflow__TupleValue *empty = NEW(&a, Tensorflow__TupleValue, tensorflow__tuple_value__descriptor);
        Tensorflow__TupleValue *pair = NEW(&a, Tensorflow__TupleValue, tensorflow__tuple_value__descriptor);
        Tensorflow__StructuredValue **pv = get(&a, 2 * sizeof *pv);
        char **kw = get(&a, ((size_t)g->n_in + 1) * sizeof *kw);
        int32_t *bound = get(&a, ((size_t)g->n_caps + 1) * sizeof *bound);
        sc[s] = NEW(&a, Tensorflow__TrackableObjectGraph__TrackableObject__ObjectReference,
                    tensorflow__trackable_object_graph__trackable_object__object_reference__descriptor);
        if (!bf || !ce || !cf || !args || !both || !empty || !pair || !pv || !kw || !bound || !sc[s]) goto oom;
        bf->concrete_function_name = str(&a, g->fname);
        for (int i = 0; i < g->n_in; i++) kw[i] = str(&a, g->in_keys[i]);
        bf->n_argument_keywords = (size_t)g->n_in, bf->argument_keywords = kw;
        og.nodes[id]->kind_case = TENSORFLOW__SAVED_OBJECT__KIND_BARE_CONCRETE_FUNCTION;
        og.nodes[id]->bare_concrete_function = bf;
        sc[s]->node_id = id, sc[s]->local_name = str(&a, g->key);
        for (int c = 0; c < g->n_caps; c++) bound[c] = 1 + g->bound[c];
        cf->n_bound_inputs = (size_t)g->n_caps, cf->bound_inputs = bound;
        /* canonicalized_input_signature: ((), {key: TensorSpec}) */
        args->kind_case = TENSORFLOW__STRUCTURED_VALUE__KIND_TUPLE_VALUE, args->tuple_value = empty;
        if (!(pv[1] = dict_of_specs(&a, g->in_keys, g->in_specs, g->n_in, st))) goto fail;
        pv[0] = args;
        pair->n_values = 2, pair->values = pv;
        both->kind_case = TENSORFLOW__STRUCTURED_VALUE__KIND_TUPLE_VALUE, both->tuple_value = pair;
        cf->canonicalized_input_signature = both;
        if (!(cf->output_signature = dict_of_specs(&a, g->out_keys, g->out_specs, g->n_out, st))) goto fail;
        ce->key = str(&a, g->fname), ce->value = cf;
        og.concrete_functions[og.n_concrete_functions++] = ce;
    }
    og.nodes[1 + n_vars]->n_children = (size_t)n_sigs, og.nodes[1 + n_vars]->children = sc;
    if (a.failed) goto oom;
    bool ok = tfc_pb_pack(&og.base, og_bytes, og_size, "SavedObjectGraph", st) &&
              tfc_pb_pack(&tg.base, ckpt_bytes, ckpt_size, "TrackableObjectGraph", st);
    arena_free(&a);
    if (!ok) {
        tfc_free(*og_bytes), tfc_free(*ckpt_bytes);
        *og_bytes = *ckpt_bytes = NULL;
    }
    return ok;
oom:
    tfc_status_oom(st, "SavedObjectGraph", 256);
fail:
    if (st->code == TFC_OK) tfc_status_oom(st, "SavedObjectGraph", 256);
    arena_free(&a);
    return false;
}
