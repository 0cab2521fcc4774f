/* Keras models: Sequential, Functional (a graph of layer calls over Keras tensors) and subclassed models.
 *
 * A model is a layer whose class runs its graph: a Functional model (and a Sequential model once its input
 * shape is known) keeps its nodes in Keras's execution order (nodes by decreasing depth, computed as
 * functional.py's _map_graph_network does), with each tensor given a slot of a per-call table. Layers are
 * owned by the model (model.layers); a Sequential model also owns the InputLayer its graph starts from. */
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "eager/context_internal.h"
#include "keras/layers/conv2d_pool.h"
#include "keras/model_internal.h"
#include "tfc/ops/array.h"

/* ---- small growable arrays ----------------------------------------------------------------------------- */

typedef struct {
    void **v;
    int n, cap;
} ptrvec;

static bool pv_push(ptrvec *p, void *x, tfc_status *st) {
    if (p->n == p->cap) {
        int cap = p->cap ? p->cap * 2 : 16;
        void **v = tfc_realloc(p->v, (size_t)cap * sizeof *v);
        if (!v) return tfc_status_oom(st, "model graph", (size_t)cap * sizeof *v);
        p->v = v;
        p->cap = cap;
    }
    p->v[p->n++] = x;
    return true;
}

static int pv_find(const ptrvec *p, const void *x) {
    for (int i = 0; i < p->n; i++)
        if (p->v[i] == x) return i;
    return -1;
}

/* ---- classes ------------------------------------------------------------------------------------------- */

static bool seq_build(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st);
static bool seq_output_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out,
                             tfc_status *st);
static bool graph_output_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out,
                               tfc_status *st);
static bool graph_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                       bool training, tfc_status *st);
static void model_destroy(tfc_layer *l);
bool tfc_keras_sequential_get_config(const tfc_layer *l, void *cfg, tfc_status *st);
bool tfc_keras_functional_get_config(const tfc_layer *l, void *cfg, tfc_status *st);

static const tfc_layer_class sequential_class = {
    .class_name = "Sequential",
    .size = sizeof(tfc_model_impl),
    .build = seq_build,
    .compute_output_shape = seq_output_shape,
    .call = graph_call,
    .get_config = tfc_keras_sequential_get_config,
    .destroy = model_destroy,
};

static const tfc_layer_class functional_class = {
    .class_name = "Functional",
    .size = sizeof(tfc_model_impl),
    .compute_output_shape = graph_output_shape,
    .call = graph_call,
    .get_config = tfc_keras_functional_get_config,
    .destroy = model_destroy,
};

bool tfc_layer_is_model(const tfc_layer *l) { return l && l->is_model; }

static tfc_model_impl *model_alloc(tfc_ctx *ctx, const tfc_layer_class *cls, const char *name, tfc_model_kind kind) {
    tfc_model_impl *impl = (tfc_model_impl *)tfc_layer_alloc(cls, name);
    if (!impl) return NULL;
    /* Models belong to their creator (tfc_model_free); a model nested in another is shared by reference. */
    impl->m.base.floating = false;
    impl->m.base.is_model = true;
    /* Keras's Sequential and Functional models do not autocast their inputs (autocast=False): their Inputs
     * conform the inputs and each layer casts for itself, so float64 data keeps float64 through float64
     * layers. Subclassed models autocast, as a Layer. */
    impl->m.base.no_autocast = kind != TFC_MODEL_SUBCLASSED;
    impl->m.base.ctx = ctx;
    impl->m.ctx = ctx;
    impl->m.kind = kind;
    return impl;
}

static void free_graph(tfc_model_impl *impl) {
    tfc_model *m = &impl->m;
    tfc_free(impl->plan);
    tfc_free(impl->in_slots);
    tfc_free(impl->out_slots);
    tfc_free(m->inputs);
    tfc_free(m->outputs);
    tfc_free(m->order);
    impl->plan = NULL;
    impl->in_slots = impl->out_slots = NULL;
    m->inputs = m->outputs = NULL;
    m->order = NULL;
    impl->n_plan = impl->n_slots = 0;
    m->n_inputs = m->n_outputs = m->n_order = 0;
}

static void model_destroy(tfc_layer *l) {
    tfc_model_impl *impl = (tfc_model_impl *)l;
    if (impl->user_cls && impl->user_cls->destroy) impl->user_cls->destroy(l);
    tfc_model_compile_free(&impl->m);
    free_graph(impl);
    tfc_layer_unref(impl->seq_input);
    impl->seq_input = NULL;
}

/* ---- the graph: Keras's _build_map and _map_graph_network ----------------------------------------------- */

typedef struct {
    ptrvec post;      /* nodes, post-order from the outputs (nodes_in_decreasing_depth) */
    ptrvec inprog;
    ptrvec layers;    /* layers in first-traversal order */
    int *layer_index; /* parallel to layers: traversal index (-1 for unconnected inputs) */
} gmap;

static bool build_map(gmap *g, tfc_ktensor *k, int depth_guard, tfc_status *st) {
    tfc_knode *node = k->node;
    if (pv_find(&g->post, node) >= 0) return true;
    if (pv_find(&g->inprog, node) >= 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "The tensor %s at layer \"%s\" is part of a cycle.",
                              TFC_KSHP(&k->shape), node->layer->name);
    if (depth_guard > 100000) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Functional model: graph too deep");
    if (pv_find(&g->layers, node->layer) < 0 && !pv_push(&g->layers, node->layer, st)) return false;
    if (!pv_push(&g->inprog, node, st)) return false;
    for (int i = 0; i < node->n_in; i++)
        if (!build_map(g, node->in[i], depth_guard + 1, st)) return false;
    g->inprog.n--; /* node is the last one pushed: depth-first */
    return pv_push(&g->post, node, st);
}

static char *ktensor_repr(const tfc_ktensor *k, char *buf, size_t size) {
    snprintf(buf, size, "KerasTensor(shape=%s, dtype=%s, created by layer '%s')", TFC_KSHP(&k->shape),
             tfc_dtype_name(k->dtype), k->node->layer->name);
    return buf;
}

static int find_slot(tfc_ktensor **slot_of, int n_slots, const tfc_ktensor *k) {
    for (int i = 0; i < n_slots; i++)
        if (slot_of[i] == k) return i;
    return -1;
}

typedef struct {
    tfc_knode *node;
    int depth, seq;
} node_rec;

static int cmp_nodes(const void *a, const void *b) {
    const node_rec *x = a, *y = b;
    if (x->depth != y->depth) return x->depth > y->depth ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

typedef struct {
    tfc_layer *layer;
    int depth, index, pos;
} layer_rec;

static int cmp_layers(const void *a, const void *b) {
    const layer_rec *x = a, *y = b;
    if (x->depth != y->depth) return x->depth > y->depth ? -1 : 1;
    if (x->index != y->index) return x->index < y->index ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

/* Maps the graph from inputs to outputs: fills impl's plan, slots and the public inputs/outputs/order, and
 * returns model.layers in *layers_out (caller frees the array). */
static bool map_graph(tfc_model_impl *impl, tfc_ktensor *const *inputs, int n_in, tfc_ktensor *const *outputs,
                      int n_out, tfc_layer ***layers_out, int *n_layers_out, tfc_status *st) {
    gmap g = {0};
    node_rec *nodes = NULL;
    layer_rec *lrecs = NULL;
    tfc_ktensor **slot_of = NULL;
    tfc_layer **layers = NULL;
    bool ok = true;
    *layers_out = NULL;
    *n_layers_out = 0;
    for (int i = 0; i < n_out && ok; i++) ok = build_map(&g, outputs[i], 0, st);
    if (!ok) goto done;

    /* depths, walking the post-order backwards (from the outputs) */
    int cap_nodes = g.post.n + n_in;
    nodes = tfc_calloc((size_t)(cap_nodes ? cap_nodes : 1), sizeof *nodes);
    int *layer_depth = NULL;
    int n_lay = g.layers.n;
    lrecs = tfc_calloc((size_t)(n_lay + n_in + 1), sizeof *lrecs);
    layer_depth = tfc_malloc((size_t)(n_lay + n_in + 1) * sizeof *layer_depth);
    if (!nodes || !lrecs || !layer_depth) {
        tfc_free(layer_depth);
        ok = tfc_status_oom(st, "model graph", 0);
        goto done;
    }
    for (int i = 0; i < n_lay + n_in + 1; i++) layer_depth[i] = -1;
    for (int i = 0; i < g.post.n; i++) nodes[i] = (node_rec){.node = g.post.v[i], .depth = -1, .seq = -1};
    int n_nodes = g.post.n, seq = 0;
    for (int i = g.post.n - 1; i >= 0; i--) {
        tfc_knode *node = g.post.v[i];
        if (nodes[i].depth < 0) nodes[i].depth = 0, nodes[i].seq = seq++;
        int depth = nodes[i].depth;
        int li = pv_find(&g.layers, node->layer);
        int prev = layer_depth[li] < 0 ? 0 : layer_depth[li];
        if (prev > depth) depth = prev;
        layer_depth[li] = depth;
        nodes[i].depth = depth;
        for (int j = 0; j < node->n_in; j++) {
            int pi = pv_find(&g.post, node->in[j]->node);
            if (nodes[pi].seq < 0) nodes[pi].seq = seq++;
            int pd = nodes[pi].depth < 0 ? 0 : nodes[pi].depth;
            nodes[pi].depth = depth + 1 > pd ? depth + 1 : pd;
        }
    }
    for (int i = 0; i < n_lay; i++) lrecs[i] = (layer_rec){g.layers.v[i], layer_depth[i], i, i};
    /* inputs that the outputs do not depend on still belong to the model */
    for (int i = 0; i < n_in; i++) {
        tfc_layer *il = inputs[i]->node->layer;
        bool seen = false;
        for (int j = 0; j < n_lay && !seen; j++) seen = lrecs[j].layer == il;
        if (seen) continue;
        lrecs[n_lay] = (layer_rec){il, 0, -1, n_lay};
        n_lay++;
        nodes[n_nodes++] = (node_rec){.node = inputs[i]->node, .depth = 0, .seq = seq++};
    }
    tfc_free(layer_depth);
    qsort(lrecs, (size_t)n_lay, sizeof *lrecs, cmp_layers);
    qsort(nodes, (size_t)n_nodes, sizeof *nodes, cmp_nodes);

    /* every tensor a node needs must be computable from the inputs */
    slot_of = tfc_calloc((size_t)(n_in + 1), sizeof *slot_of);
    int n_slots = 0, cap_slots = n_in + 1;
    if (!slot_of) {
        ok = tfc_status_oom(st, "model graph", 0);
        goto done;
    }
    for (int i = 0; i < n_in; i++) slot_of[n_slots++] = inputs[i];
    tfc_plan_node *plan = tfc_calloc((size_t)(n_nodes ? n_nodes : 1), sizeof *plan);
    if (!plan) {
        ok = tfc_status_oom(st, "model graph", 0);
        goto done;
    }
    char done_names[200] = "";
    size_t done_len = 0;
    for (int i = 0; i < n_nodes && ok; i++) {
        tfc_knode *node = nodes[i].node;
        tfc_plan_node *p = &plan[i];
        p->node = node;
        p->depth = nodes[i].depth;
        p->is_input = node->n_in == 0;
        if (p->is_input) {
            p->out_slot[0] = find_slot(slot_of, n_in, node->out[0]);
            continue;
        }
        for (int j = 0; j < node->n_in; j++) {
            int s = find_slot(slot_of, n_slots, node->in[j]);
            if (s < 0) {
                char kr[160];
                ok = tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                    "Graph disconnected: cannot obtain value for tensor %s at layer \"%s\". The "
                                    "following previous layers were accessed without issue: [%s]",
                                    ktensor_repr(node->in[j], kr, sizeof kr), node->layer->name, done_names);
                break;
            }
            p->in_slot[j] = s;
        }
        for (int j = 0; j < node->n_out && ok; j++) {
            if (n_slots == cap_slots) {
                cap_slots *= 2;
                tfc_ktensor **s = tfc_realloc(slot_of, (size_t)cap_slots * sizeof *s);
                if (!s) {
                    ok = tfc_status_oom(st, "model graph", 0);
                    break;
                }
                slot_of = s;
            }
            p->out_slot[j] = n_slots;
            slot_of[n_slots++] = node->out[j];
        }
        if (ok && done_len + strlen(node->layer->name) + 5 < sizeof done_names)
            done_len += (size_t)snprintf(done_names + done_len, sizeof done_names - done_len, "%s'%s'",
                                         done_len ? ", " : "", node->layer->name);
    }
    int *out_slots = ok ? tfc_malloc((size_t)n_out * sizeof *out_slots) : NULL;
    int *in_slots = ok ? tfc_malloc((size_t)(n_in ? n_in : 1) * sizeof *in_slots) : NULL;
    if (ok && (!out_slots || !in_slots)) ok = tfc_status_oom(st, "model graph", 0);
    for (int i = 0; i < n_out && ok; i++) {
        out_slots[i] = find_slot(slot_of, n_slots, outputs[i]);
        if (out_slots[i] < 0) {
            char kr[160];
            ok = tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                "Graph disconnected: cannot obtain value for output %d, tensor %s (layer \"%s\"), from "
                                "the model's inputs",
                                i, ktensor_repr(outputs[i], kr, sizeof kr), outputs[i]->node->layer->name);
        }
    }
    for (int i = 0; i < n_in && ok; i++) in_slots[i] = i;
    /* layer names are unique within a model (serialisation refers to layers by name) */
    for (int i = 0; i < n_lay && ok; i++) {
        int count = 0;
        for (int j = 0; j < n_lay; j++) count += !strcmp(lrecs[i].layer->name, lrecs[j].layer->name);
        if (count != 1)
            ok = tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                "The name \"%s\" is used %d times in the model. All layer names should be unique.",
                                lrecs[i].layer->name, count);
    }
    tfc_ktensor **m_in = ok ? tfc_malloc((size_t)(n_in ? n_in : 1) * sizeof *m_in) : NULL;
    tfc_ktensor **m_out = ok ? tfc_malloc((size_t)n_out * sizeof *m_out) : NULL;
    tfc_knode **order = ok ? tfc_malloc((size_t)(n_nodes ? n_nodes : 1) * sizeof *order) : NULL;
    layers = ok ? tfc_malloc((size_t)(n_lay ? n_lay : 1) * sizeof *layers) : NULL;
    if (ok && (!m_in || !m_out || !order || !layers)) ok = tfc_status_oom(st, "model graph", 0);
    if (!ok) {
        tfc_free(plan);
        tfc_free(out_slots);
        tfc_free(in_slots);
        tfc_free(m_in);
        tfc_free(m_out);
        tfc_free(order);
        tfc_free(layers);
        layers = NULL;
        goto done;
    }
    free_graph(impl);
    impl->plan = plan;
    impl->n_plan = n_nodes;
    impl->n_slots = n_slots;
    impl->in_slots = in_slots;
    impl->out_slots = out_slots;
    tfc_model *m = &impl->m;
    for (int i = 0; i < n_in; i++) m_in[i] = inputs[i];
    for (int i = 0; i < n_out; i++) m_out[i] = outputs[i];
    for (int i = 0; i < n_nodes; i++) order[i] = nodes[i].node;
    m->inputs = m_in;
    m->outputs = m_out;
    m->order = order;
    m->n_inputs = n_in;
    m->n_outputs = n_out;
    m->n_order = n_nodes;
    for (int i = 0; i < n_lay; i++) layers[i] = lrecs[i].layer;
    *layers_out = layers;
    *n_layers_out = n_lay;
done:
    tfc_free(g.post.v);
    tfc_free(g.inprog.v);
    tfc_free(g.layers.v);
    tfc_free(nodes);
    tfc_free(lrecs);
    tfc_free(slot_of);
    return ok;
}

/* The model's input spec: the rank and the known non-batch dims of each input (Keras checks the inputs of a
 * Functional model against its Input shapes). */
static void set_model_spec(tfc_model_impl *impl) {
    tfc_layer *l = &impl->m.base;
    l->n_build_shapes = impl->m.n_inputs;
    for (int i = 0; i < impl->m.n_inputs && i < TFC_KERAS_MAX_IO; i++) {
        const tfc_shape *s = &impl->m.inputs[i]->shape;
        l->build_shapes[i] = *s;
        tfc_input_spec *sp = &l->input_spec[i];
        memset(sp, 0, sizeof *sp);
        sp->ndim = s->rank;
        for (int d = 1; d < s->rank; d++)
            if (s->dims[d] >= 0) {
                sp->axes[sp->n_axes] = d;
                sp->values[sp->n_axes++] = s->dims[d];
            }
    }
    l->has_input_spec = true;
    l->built = true;
}

/* ---- running the graph --------------------------------------------------------------------------------- */

static bool is_one_of(tfc_tensor *t, tfc_tensor *const *v, int n) {
    for (int i = 0; i < n; i++)
        if (v[i] == t) return true;
    return false;
}

/* The context's keras_fuse_conv_pool switch off (TFC_KERAS_FUSE_CONV_POOL=0) turns the training fusion off
 * (tests and benchmarks compare it with the layer-by-layer ops). */
static bool train_fusion_off(const tfc_ctx *ctx) { return !tfc_ctx_config(ctx)->keras_fuse_conv_pool; }

/* The plan node that may run fused with node p as one op (tfc_conv2d_max_pool_infer when no tape records and
 * not training, tfc_conv2d_max_pool_train under a training step's single non-persistent tape), or -1: p
 * takes and gives one tensor, and exactly one node reads its output, a later one that also takes and gives
 * one tensor, while no model output is p's output. */
static int fusable_reader(const tfc_model_impl *impl, const tfc_ctx *ctx, int p, bool training) {
    const tfc_plan_node *a = &impl->plan[p];
    if (ctx->n_tapes ? !tfc_tape_single_plain(ctx) || train_fusion_off(ctx) : training || impl->tf_ops_only) return -1;
    if (a->is_input || a->node->n_in != 1 || a->node->n_out != 1) return -1;
    const int s = a->out_slot[0];
    int reader = -1;
    for (int q = 0; q < impl->n_plan; q++) {
        if (impl->plan[q].is_input) continue;
        for (int i = 0; i < impl->plan[q].node->n_in; i++)
            if (impl->plan[q].in_slot[i] == s) {
                if (reader >= 0 || q <= p) return -1;
                reader = q;
            }
    }
    for (int i = 0; i < impl->m.n_outputs; i++)
        if (impl->out_slots[i] == s) return -1;
    if (reader < 0 || impl->plan[reader].node->n_in != 1 || impl->plan[reader].node->n_out != 1) return -1;
    return reader;
}

static bool run_plan(tfc_model_impl *impl, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out,
                     int n_out, bool training, tfc_status *st) {
    tfc_model *m = &impl->m;
    tfc_layer *l = &m->base;
    if (n_in != m->n_inputs)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\" expects %d input(s), but it received %d input tensors",
                              l->name, m->n_inputs, n_in);
    if (n_out != m->n_outputs)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Model \"%s\" has %d output(s), but %d were requested", l->name,
                              m->n_outputs, n_out);
    tfc_tensor **vals = tfc_calloc((size_t)(impl->n_slots ? impl->n_slots : 1), sizeof *vals);
    bool *done = vals ? tfc_calloc((size_t)(impl->n_plan ? impl->n_plan : 1), sizeof *done) : NULL; /* (fused) */
    if (!done) {
        tfc_free(vals);
        return tfc_status_oom(st, "model call", 0);
    }
    bool ok = true;
    for (int i = 0; i < n_in && ok; i++) {
        tfc_tensor *t = in[i];
        tfc_dtype want = m->inputs[i]->dtype;
        if (tfc_tensor_dtype(t) != want && want != TFC_INVALID_DTYPE) { /* _conform_to_reference_input */
            tfc_attr a = TFC_ATTR_T("DstT", want);
            ok = (t = tfc_emit(ctx, "Cast", &t, 1, &a, 1, st)) != NULL;
        }
        vals[impl->in_slots[i]] = t;
    }
    for (int p = 0; p < impl->n_plan && ok; p++) {
        const tfc_plan_node *pn = &impl->plan[p];
        if (pn->is_input || done[p]) continue;
        tfc_knode *node = pn->node;
        tfc_tensor *xin[TFC_KERAS_MAX_IO], *xout[TFC_KERAS_MAX_IO];
        for (int j = 0; j < node->n_in; j++) xin[j] = vals[pn->in_slot[j]];
        const int q = fusable_reader(impl, ctx, p, training);
        if (q >= 0) { /* Conv2D -> MaxPooling2D as one op; the reader q is then done */
            tfc_tensor *fy = NULL;
            tfc_layer *cl = node->layer, *pl = impl->plan[q].node->layer;
            ok = ctx->n_tapes ? tfc_conv2d_max_pool_train(cl, pl, ctx, xin[0], &fy, st)
                              : tfc_conv2d_max_pool_infer(cl, pl, ctx, xin[0], &fy, st);
            if (ok && fy) {
                vals[impl->plan[q].out_slot[0]] = fy;
                done[q] = true;
                continue;
            }
            if (!ok) break;
        }
        ok = tfc_layer_call(node->layer, ctx, xin, node->n_in, xout, node->n_out, training, st);
        for (int j = 0; j < node->n_out && ok; j++) vals[pn->out_slot[j]] = xout[j];
    }
    for (int i = 0; i < n_out && ok; i++) {
        tfc_tensor *t = vals[impl->out_slots[i]];
        /* An output that is a model input or repeats another output gets its own tensor, so that the caller
         * owns one reference per output. */
        if (is_one_of(t, in, n_in) || is_one_of(t, out, i)) ok = (t = tfc_emit(ctx, "Identity", &t, 1, NULL, 0, st)) != NULL;
        out[i] = t;
    }
    tfc_free(vals);
    tfc_free(done);
    return ok;
}

static bool graph_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                       bool training, tfc_status *st) {
    tfc_model_impl *impl = (tfc_model_impl *)l;
    if (impl->deferred.code != TFC_OK) return tfc_status_set(st, impl->deferred.code, "%s", impl->deferred.msg);
    if (!impl->plan) return tfc_status_set(st, TFC_FAILED_PRECONDITION, "Model \"%s\" has no graph", l->name);
    return run_plan(impl, ctx, in, n_in, out, n_out, training, st);
}

static bool graph_output_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out,
                               tfc_status *st) {
    tfc_model_impl *impl = (tfc_model_impl *)l;
    tfc_model *m = &impl->m;
    if (!impl->plan) return tfc_status_set(st, TFC_FAILED_PRECONDITION, "Model \"%s\" has no graph", l->name);
    if (!tfc_keras_expect_inputs(l, n_in, m->n_inputs, st)) return false;
    if (m->n_outputs > *n_out)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Model \"%s\" has %d outputs (at most %d supported here)",
                              l->name, m->n_outputs, *n_out);
    tfc_shape *shapes = tfc_calloc((size_t)(impl->n_slots ? impl->n_slots : 1), sizeof *shapes);
    if (!shapes) return tfc_status_oom(st, "compute_output_shape", 0);
    bool ok = true;
    for (int i = 0; i < n_in; i++) shapes[impl->in_slots[i]] = in[i];
    for (int p = 0; p < impl->n_plan && ok; p++) {
        const tfc_plan_node *pn = &impl->plan[p];
        if (pn->is_input) continue;
        tfc_knode *node = pn->node;
        tfc_shape xin[TFC_KERAS_MAX_IO], xout[TFC_KERAS_MAX_IO];
        int no = TFC_KERAS_MAX_IO;
        for (int j = 0; j < node->n_in; j++) xin[j] = shapes[pn->in_slot[j]];
        if (!node->layer->cls->compute_output_shape)
            ok = tfc_status_set(st, TFC_UNIMPLEMENTED, "Layer \"%s\" has no compute_output_shape", node->layer->name);
        else
            ok = tfc_layer_check_inputs(node->layer, xin, node->n_in, st) &&
                 node->layer->cls->compute_output_shape(node->layer, xin, node->n_in, xout, &no, st);
        for (int j = 0; j < node->n_out && j < no && ok; j++) shapes[pn->out_slot[j]] = xout[j];
    }
    for (int i = 0; i < m->n_outputs && ok; i++) out[i] = shapes[impl->out_slots[i]];
    if (ok) *n_out = m->n_outputs;
    tfc_free(shapes);
    return ok;
}

/* ---- Sequential ---------------------------------------------------------------------------------------- */

/* Frees the last node of a layer (added by a call that is being undone). */
static void drop_last_node(tfc_layer *l) {
    if (!l || l->n_nodes == 0) return;
    tfc_knode *n = l->nodes[--l->n_nodes];
    for (int i = 0; i < n->n_out; i++) tfc_free(n->out[i]);
    tfc_free(n->out);
    tfc_free(n->in);
    tfc_free(n);
}

/* Releases a layer the model did not take: floating layers have no other owner. */
static void release_unowned(tfc_layer *l) {
    if (l && l->floating) tfc_layer_unref(l);
}

static bool is_input_layer(const tfc_layer *l) { return l && !strcmp(l->cls->class_name, "InputLayer"); }

/* Creates the Input a Sequential model starts from. */
static tfc_ktensor *make_input(const tfc_shape *shape, tfc_dtype dtype, const char *name, tfc_status *st) {
    tfc_input_opts o = {.dtype = dtype, .name = name};
    if (shape->rank < 1) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Input \"%s\": the input shape must include the batch dimension",
                       name);
        return NULL;
    }
    o.rank = shape->rank - 1;
    for (int i = 1; i < shape->rank; i++) o.shape[i - 1] = shape->dims[i];
    if (o.rank == 0) o.rank = 0; /* shape () -> [batch] */
    o.batch_size = shape->dims[0] > 0 ? shape->dims[0] : 0;
    tfc_ktensor *k = tfc_input_new(&o);
    if (!k) tfc_status_oom(st, "Input", 0);
    return k;
}

/* Calls layer on the Sequential model's current output: builds it (validating the shapes first) and records
 * the node. On failure the layer and the model are unchanged (apart from a build). */
static tfc_ktensor *seq_apply(tfc_model_impl *impl, tfc_layer *layer, tfc_ktensor *x, tfc_status *st) {
    if (!tfc_layer_build(layer, impl->m.ctx, &x->shape, 1, st)) return NULL;
    int before = layer->n_nodes;
    tfc_ktensor *y = tfc_layer_apply(layer, &x, 1, st);
    if (!y) return NULL;
    if (y->node->n_out != 1) {
        while (layer->n_nodes > before) drop_last_node(layer);
        tfc_status_set(st, TFC_INVALID_ARGUMENT,
                       "All layers in a Sequential model should have a single output tensor. For multi-output "
                       "layers, use the functional API. (layer \"%s\")",
                       layer->name);
        return NULL;
    }
    return y;
}

/* Rebuilds the plan of a Sequential model from its input to `out`. */
static bool seq_remap(tfc_model_impl *impl, tfc_ktensor *in, tfc_ktensor *out, tfc_status *st) {
    tfc_layer **layers;
    int n;
    if (!map_graph(impl, &in, 1, &out, 1, &layers, &n, st)) return false;
    tfc_free(layers);
    set_model_spec(impl);
    return true;
}

/* Keras's get_input_shape_and_dtype: the batch input shape a first layer declares. */
static bool layer_input_shape(const tfc_layer *l, tfc_shape *shape, tfc_dtype *dtype) {
    if (l->has_input_shape) {
        *shape = l->input_shape;
        *dtype = l->dtype;
        return true;
    }
    if (l->is_model) {
        const tfc_model *sub = (const tfc_model *)l;
        if (sub->n_inputs == 1) {
            *shape = sub->inputs[0]->shape;
            *dtype = sub->inputs[0]->dtype;
            return true;
        }
    }
    return false;
}

static bool seq_set_input(tfc_model_impl *impl, tfc_ktensor *k, tfc_status *st) {
    tfc_layer *il = tfc_ktensor_layer(k);
    impl->seq_input = tfc_layer_take(il);
    return seq_remap(impl, k, k, st);
}

bool tfc_model_add(tfc_model *m, tfc_layer *layer, tfc_status *st) {
    if (!m || !layer) {
        release_unowned(layer);
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "model.add: NULL argument");
    }
    tfc_model_impl *impl = TFC_IMPL(m);
    tfc_layer *ml = &m->base;
    if (m->kind != TFC_MODEL_SEQUENTIAL) {
        release_unowned(layer);
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "model.add: model \"%s\" is not a Sequential model", ml->name);
    }
    if (impl->deferred.code != TFC_OK) {
        release_unowned(layer);
        return tfc_status_set(st, impl->deferred.code, "%s", impl->deferred.msg);
    }
    if (layer == ml) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "model.add: a model cannot contain itself");
    for (int i = 0; i < ml->n_sublayers; i++)
        if (!strcmp(ml->sublayers[i]->name, layer->name)) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT,
                           "All layers added to a Sequential model should have unique names. Name \"%s\" is already "
                           "the name of a layer in this model. Update the `name` argument to pass a unique name.",
                           layer->name);
            release_unowned(layer);
            return false;
        }
    bool have_input = impl->seq_input != NULL;
    if (is_input_layer(layer)) {
        if (have_input || ml->n_sublayers > 0) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT,
                           "An InputLayer (\"%s\") can only be the first layer of a Sequential model", layer->name);
            release_unowned(layer);
            return false;
        }
        /* The InputLayer object has no node to start a graph from: an Input of the same shape, dtype and name
         * replaces it. */
        tfc_ktensor *k = make_input(&layer->input_shape, layer->dtype, layer->name, st);
        release_unowned(layer);
        return k && seq_set_input(impl, k, st);
    }
    tfc_ktensor *x = NULL;
    if (have_input) {
        x = m->outputs[0];
    } else if (ml->n_sublayers == 0) {
        tfc_shape s;
        tfc_dtype dt;
        if (layer_input_shape(layer, &s, &dt)) {
            char name[300];
            snprintf(name, sizeof name, "%s_input", layer->name);
            tfc_ktensor *k = make_input(&s, dt, name, st);
            if (!k) {
                release_unowned(layer);
                return false;
            }
            if (!seq_set_input(impl, k, st)) {
                release_unowned(layer);
                return false;
            }
            x = k;
        }
    }
    if (!x) { /* input shape not known yet: built on the first batch or by build() */
        if (!tfc_layer_track(ml, layer, st)) {
            release_unowned(layer);
            return false;
        }
        return true;
    }
    tfc_ktensor *y = seq_apply(impl, layer, x, st);
    if (!y) {
        release_unowned(layer);
        return false;
    }
    if (!tfc_layer_track(ml, layer, st)) {
        drop_last_node(layer);
        release_unowned(layer);
        return false;
    }
    if (!seq_remap(impl, m->inputs[0], y, st)) return false;
    tfc_status_clear(st);
    return true;
}

/* Builds the graph of a Sequential model whose layers declared no input shape (first batch or build()). */
static bool seq_build(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st) {
    tfc_model_impl *impl = (tfc_model_impl *)l;
    if (impl->deferred.code != TFC_OK) return tfc_status_set(st, impl->deferred.code, "%s", impl->deferred.msg);
    if (impl->seq_input) return true;
    if (n_in != 1)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Sequential model \"%s\" expects 1 input, but it received %d",
                              l->name, n_in);
    if (l->n_sublayers == 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Sequential model \"%s\" has no layers: add layers before "
                              "building or calling it", l->name);
    char name[300];
    snprintf(name, sizeof name, "%s_input", l->sublayers[0]->name);
    tfc_ktensor *k = make_input(&in[0], impl->build_dtype ? impl->build_dtype : TFC_FLOAT, name, st);
    if (!k) return false;
    tfc_ktensor *x = k;
    int i = 0;
    for (; i < l->n_sublayers; i++) {
        tfc_ktensor *y = seq_apply(impl, l->sublayers[i], x, st);
        if (!y) break;
        x = y;
    }
    if (i < l->n_sublayers) { /* undo: leave the model unbuilt so that a corrected call can build it */
        for (int j = 0; j < i; j++) drop_last_node(l->sublayers[j]);
        tfc_layer_unref(tfc_ktensor_layer(k));
        return false;
    }
    impl->seq_input = tfc_layer_take(tfc_ktensor_layer(k));
    if (!seq_remap(impl, k, x, st)) return false;
    /* tfc_layer_ensure_built sets the spec from the build shapes */
    l->has_input_spec = false;
    return true;
}

static bool seq_output_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out,
                             tfc_status *st) {
    tfc_model_impl *impl = (tfc_model_impl *)l;
    if (impl->deferred.code != TFC_OK) return tfc_status_set(st, impl->deferred.code, "%s", impl->deferred.msg);
    if (!tfc_keras_expect_inputs(l, n_in, 1, st)) return false;
    tfc_shape s = in[0];
    for (int i = 0; i < l->n_sublayers; i++) {
        tfc_layer *sub = l->sublayers[i];
        tfc_shape o[TFC_KERAS_MAX_IO];
        int no = TFC_KERAS_MAX_IO;
        if (!sub->cls->compute_output_shape)
            return tfc_status_set(st, TFC_UNIMPLEMENTED, "Layer \"%s\" has no compute_output_shape", sub->name);
        if (!tfc_layer_check_inputs(sub, &s, 1, st) || !sub->cls->compute_output_shape(sub, &s, 1, o, &no, st))
            return false;
        s = o[0];
    }
    out[0] = s;
    *n_out = 1;
    return true;
}

tfc_model *tfc_sequential_named(tfc_ctx *ctx, tfc_layer *const *layers, const char *name) {
    tfc_model_impl *impl = model_alloc(ctx, &sequential_class, name, TFC_MODEL_SEQUENTIAL);
    if (!impl) {
        for (int i = 0; layers && layers[i]; i++) release_unowned(layers[i]);
        return NULL;
    }
    int i = 0;
    for (; layers && layers[i]; i++)
        if (!tfc_model_add(&impl->m, layers[i], &impl->deferred)) break;
    if (layers && layers[i]) /* the error is kept for later calls; the remaining layers were never taken */
        for (i++; layers[i]; i++) release_unowned(layers[i]);
    return &impl->m;
}

tfc_model *tfc_sequential(tfc_ctx *ctx, tfc_layer *const *layers) { return tfc_sequential_named(ctx, layers, NULL); }

tfc_model *tfc_sequential_n(tfc_ctx *ctx, tfc_layer *const *layers, int n, const char *name, tfc_status *st) {
    const char *shown = name ? name : "sequential";
    if (n < 0 || (n > 0 && !layers)) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Sequential \"%s\": %d layers at %p", shown, n, (const void *)layers);
        return NULL;
    }
    int missing = -1;
    for (int i = 0; i < n && missing < 0; i++)
        if (!layers[i]) missing = i;
    tfc_model_impl *impl = missing < 0 ? model_alloc(ctx, &sequential_class, name, TFC_MODEL_SEQUENTIAL) : NULL;
    if (!impl) {
        for (int i = 0; i < n; i++) release_unowned(layers[i]);
        if (missing >= 0)
            tfc_status_set(st, TFC_RESOURCE_EXHAUSTED,
                           "Sequential \"%s\": layer %d of %d is NULL (its constructor ran out of memory)", shown,
                           missing, n);
        else
            tfc_status_oom(st, "Sequential", sizeof *impl);
        return NULL;
    }
    int i = 0;
    for (; i < n; i++)
        if (!tfc_model_add(&impl->m, layers[i], &impl->deferred)) break;
    for (int j = i + 1; j < n; j++) release_unowned(layers[j]); /* never taken */
    if (impl->deferred.code == TFC_RESOURCE_EXHAUSTED) {
        tfc_status_set(st, TFC_RESOURCE_EXHAUSTED, "%s", impl->deferred.msg);
        tfc_model_free(&impl->m);
        return NULL;
    }
    tfc_status_clear(st);
    return &impl->m;
}

/* ---- Functional ---------------------------------------------------------------------------------------- */

/* Releases the floating layers a failed Functional construction would otherwise leak. */
static void release_graph(tfc_ktensor *const *inputs, int n_in, tfc_ktensor *const *outputs, int n_out) {
    gmap g = {0};
    tfc_status st = TFC_STATUS_INIT;
    for (int i = 0; i < n_out; i++)
        if (outputs[i]) build_map(&g, outputs[i], 0, &st);
    for (int i = 0; i < n_in; i++)
        if (inputs[i] && pv_find(&g.layers, inputs[i]->node->layer) < 0) pv_push(&g.layers, inputs[i]->node->layer, &st);
    /* Collect first: releasing one layer frees nodes that others' nodes point to. */
    for (int i = 0; i < g.layers.n; i++)
        if (!((tfc_layer *)g.layers.v[i])->floating) g.layers.v[i] = NULL;
    for (int i = 0; i < g.layers.n; i++) release_unowned(g.layers.v[i]);
    tfc_free(g.post.v);
    tfc_free(g.inprog.v);
    tfc_free(g.layers.v);
}

tfc_model *tfc_model_new(tfc_ctx *ctx, tfc_ktensor *const *inputs, int n_in, tfc_ktensor *const *outputs,
                         int n_out, const char *name, tfc_status *st) {
    if (!ctx || !inputs || !outputs || n_in < 1 || n_out < 1) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "tf.keras.Model(inputs, outputs): NULL or empty argument");
        return NULL;
    }
    bool ok = true;
    for (int i = 0; i < n_in && ok; i++) {
        if (!inputs[i]) {
            ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "tf.keras.Model: input %d is NULL", i);
        } else if (inputs[i]->node->n_in != 0 || !is_input_layer(inputs[i]->node->layer)) {
            ok = tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                "Functional model inputs must come from `tf.keras.Input` (tfc_input). Here, a tensor "
                                "specified as input %d was generated by layer \"%s\".",
                                i, inputs[i]->node->layer->name);
        }
        for (int j = 0; j < i && ok; j++)
            if (inputs[j] == inputs[i])
                ok = tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                    "The list of inputs passed to the model contains the same input multiple times "
                                    "(input %d and %d). All inputs should only appear once.",
                                    j, i);
    }
    for (int i = 0; i < n_out && ok; i++)
        if (!outputs[i]) ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "tf.keras.Model: output %d is NULL", i);
    if (ok && n_in > TFC_KERAS_MAX_IO)
        ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "tf.keras.Model: %d inputs (at most %d supported)", n_in,
                            TFC_KERAS_MAX_IO);
    if (ok && n_out > TFC_KERAS_MAX_IO)
        ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "tf.keras.Model: %d outputs (at most %d supported)", n_out,
                            TFC_KERAS_MAX_IO);
    if (!ok) {
        release_graph(inputs, n_in, outputs, n_out);
        return NULL;
    }
    char auto_name[64];
    if (!name || !*name) {
        int64_t uid = tfc_keras_get_uid("model") - 1;
        if (uid > 0) snprintf(auto_name, sizeof auto_name, "model_%lld", (long long)uid);
        else snprintf(auto_name, sizeof auto_name, "model");
        name = auto_name;
    }
    tfc_model_impl *impl = model_alloc(ctx, &functional_class, name, TFC_MODEL_FUNCTIONAL);
    if (!impl) {
        tfc_status_oom(st, "tf.keras.Model", sizeof *impl);
        release_graph(inputs, n_in, outputs, n_out);
        return NULL;
    }
    tfc_model *m = &impl->m;
    tfc_layer **layers = NULL;
    int n_layers = 0;
    if (!map_graph(impl, inputs, n_in, outputs, n_out, &layers, &n_layers, st)) {
        release_graph(inputs, n_in, outputs, n_out);
        tfc_layer_unref(&m->base);
        return NULL;
    }
    for (int i = 0; i < n_layers && ok; i++) ok = tfc_layer_track(&m->base, layers[i], st);
    tfc_free(layers);
    /* Weights are created now that a context is known, in execution order; shared layers check the shapes of
     * their later calls against the first. */
    for (int p = 0; p < impl->n_plan && ok; p++) {
        const tfc_plan_node *pn = &impl->plan[p];
        if (pn->is_input) continue;
        tfc_shape shapes[TFC_KERAS_MAX_IO];
        for (int j = 0; j < pn->node->n_in; j++) shapes[j] = pn->node->in[j]->shape;
        ok = tfc_layer_ensure_built(pn->node->layer, ctx, shapes, pn->node->n_in, st) &&
             tfc_layer_check_inputs(pn->node->layer, shapes, pn->node->n_in, st);
    }
    if (!ok) {
        release_graph(inputs, n_in, outputs, n_out);
        tfc_layer_unref(&m->base);
        return NULL;
    }
    set_model_spec(impl);
    tfc_status_clear(st);
    return m;
}

/* ---- subclassed models --------------------------------------------------------------------------------- */

/* Each user class is wrapped once (process-wide) so that the model's own state is released with it and its
 * data sits after the model's private part. */
typedef struct wrapped_class {
    tfc_layer_class cls;
    const tfc_layer_class *user;
    struct wrapped_class *next;
} wrapped_class;

static pthread_mutex_t wrap_lock = PTHREAD_MUTEX_INITIALIZER;
static wrapped_class *wrapped;

#define DATA_ALIGN 16
#define DATA_OFFSET ((sizeof(tfc_model_impl) + DATA_ALIGN - 1) / DATA_ALIGN * DATA_ALIGN)

static bool sub_build(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st) {
    tfc_model_impl *impl = (tfc_model_impl *)l;
    if (impl->user_cls->build && !impl->user_cls->build(l, ctx, in, n_in, st)) return false;
    /* Subclassed models have no input spec of their own: their layers check what they receive. */
    for (int i = 0; i < n_in && i < TFC_KERAS_MAX_IO; i++) l->input_spec[i] = (tfc_input_spec){.ndim = -1};
    l->has_input_spec = true;
    return true;
}

static bool sub_get_config(const tfc_layer *l, void *cfg, tfc_status *st) {
    const tfc_model_impl *impl = (const tfc_model_impl *)l;
    return impl->user_cls->get_config ? impl->user_cls->get_config(l, cfg, st) : true;
}

static const tfc_layer_class *wrap_class(const tfc_layer_class *user) {
    pthread_mutex_lock(&wrap_lock);
    wrapped_class *w = wrapped;
    while (w && w->user != user) w = w->next;
    if (!w && (w = tfc_calloc(1, sizeof *w))) {
        w->user = user;
        w->cls = (tfc_layer_class){
            .class_name = user->class_name ? user->class_name : "Model",
            .size = DATA_OFFSET + user->size,
            .build = sub_build,
            .compute_output_shape = user->compute_output_shape,
            .call = user->call,
            .get_config = sub_get_config,
            .destroy = model_destroy,
        };
        w->next = wrapped;
        wrapped = w;
    }
    pthread_mutex_unlock(&wrap_lock);
    return w ? &w->cls : NULL;
}

tfc_model *tfc_model_subclass_new(tfc_ctx *ctx, const tfc_layer_class *cls, const char *name) {
    if (!cls || !cls->call) return NULL;
    const tfc_layer_class *w = wrap_class(cls);
    if (!w) return NULL;
    tfc_model_impl *impl = model_alloc(ctx, w, name, TFC_MODEL_SUBCLASSED);
    if (!impl) return NULL;
    impl->user_cls = cls;
    impl->data_offset = DATA_OFFSET;
    return &impl->m;
}

void *tfc_model_subclass_data(tfc_model *m) {
    if (!m || m->kind != TFC_MODEL_SUBCLASSED) return NULL;
    return (char *)m + TFC_IMPL(m)->data_offset;
}

tfc_model *tfc_layer_as_model(tfc_layer *l) { return l && l->is_model ? (tfc_model *)l : NULL; }

tfc_layer *tfc_model_track(tfc_model *m, tfc_layer *sublayer) {
    tfc_status st = TFC_STATUS_INIT;
    if (!m || !sublayer) return NULL;
    if (!tfc_layer_track(&m->base, sublayer, &st)) {
        release_unowned(sublayer);
        return NULL;
    }
    return sublayer;
}

size_t tfc_model_base_size(void) { return DATA_OFFSET; }

/* ---- queries ------------------------------------------------------------------------------------------- */

tfc_layer *tfc_model_as_layer(tfc_model *m) { return m ? &m->base : NULL; }

void tfc_model_free(tfc_model *m) {
    if (m) tfc_layer_unref(&m->base);
}

int tfc_model_layers(const tfc_model *m, tfc_layer **out, int max) {
    if (!m) return 0;
    for (int i = 0; i < m->base.n_sublayers && i < max && out; i++) out[i] = m->base.sublayers[i];
    return m->base.n_sublayers;
}

tfc_layer *tfc_model_get_layer(const tfc_model *m, const char *name) {
    if (!m || !name) return NULL;
    for (int i = 0; i < m->base.n_sublayers; i++)
        if (!strcmp(m->base.sublayers[i]->name, name)) return m->base.sublayers[i];
    return NULL;
}

int tfc_model_num_outputs(const tfc_model *m) {
    if (m->kind == TFC_MODEL_FUNCTIONAL) return m->n_outputs;
    return 1;
}

int tfc_model_num_inputs(const tfc_model *m) {
    if (m->kind == TFC_MODEL_FUNCTIONAL) return m->n_inputs;
    return 1;
}

const char *tfc_model_output_name(const tfc_model *m, int i) {
    if (m->kind != TFC_MODEL_SUBCLASSED && i < m->n_outputs) return m->outputs[i]->node->layer->name;
    if (m->kind == TFC_MODEL_SEQUENTIAL && m->base.n_sublayers > 0)
        return m->base.sublayers[m->base.n_sublayers - 1]->name;
    return "output";
}

/* ---- build, call, weights ------------------------------------------------------------------------------ */

bool tfc_model_build(tfc_model *m, const tfc_shape *input_shape, tfc_status *st) {
    if (!m || !input_shape) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "model.build: NULL argument");
    tfc_model_impl *impl = TFC_IMPL(m);
    if (impl->deferred.code != TFC_OK) return tfc_status_set(st, impl->deferred.code, "%s", impl->deferred.msg);
    if (m->kind == TFC_MODEL_SUBCLASSED && !m->base.built) {
        /* Keras builds a subclassed model by calling it on placeholders; here on zeros (batch 1 if unknown). */
        tfc_shape s = *input_shape;
        for (int i = 0; i < s.rank; i++)
            if (s.dims[i] < 0) s.dims[i] = 1;
        if (!tfc_scope_begin(m->ctx, st)) return false;
        tfc_tensor *z = tfc_zeros(m->ctx, TFC_FLOAT, s.dims, s.rank, st);
        tfc_tensor *y[TFC_KERAS_MAX_IO];
        bool ok = z && tfc_layer_call(&m->base, m->ctx, &z, 1, y, 1, false, st);
        tfc_scope_end(m->ctx);
        return ok;
    }
    return tfc_layer_build(&m->base, m->ctx, input_shape, 1, st);
}

/* The dtype of the Input a deferred Sequential model builds for data of dtype dt: the data's, as Keras's
 * _build_graph_network_for_inferred_shape(inputs.shape, inputs.dtype) (each layer then casts floating data
 * to its own dtype). */
static void note_input_dtype(tfc_model_impl *impl, tfc_dtype dt) {
    if (impl->m.kind == TFC_MODEL_SEQUENTIAL && !impl->seq_input) impl->build_dtype = dt;
}

bool tfc_model_forward(tfc_model *m, tfc_tensor *const *x, int n_x, tfc_tensor **y, int n_y, bool training,
                       tfc_status *st) {
    tfc_model_impl *impl = TFC_IMPL(m);
    if (impl->deferred.code != TFC_OK) return tfc_status_set(st, impl->deferred.code, "%s", impl->deferred.msg);
    if (n_x > 0 && x[0]) note_input_dtype(impl, tfc_tensor_dtype(x[0]));
    return tfc_layer_call(&m->base, m->ctx, x, n_x, y, n_y, training, st);
}

tfc_tensor *tfc_model_call(tfc_model *m, tfc_tensor *x, bool training, tfc_status *st) {
    if (!m || !x) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "model(x): NULL argument");
        return NULL;
    }
    tfc_tensor *y = NULL;
    return tfc_model_forward(m, &x, 1, &y, 1, training, st) ? y : NULL;
}

bool tfc_model_call_n(tfc_model *m, tfc_tensor *const *x, int n_x, tfc_tensor **y, int n_y, bool training,
                      tfc_status *st) {
    if (!m || !x || !y || n_x < 1 || n_y < 1) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "model(x): NULL argument");
    return tfc_model_forward(m, x, n_x, y, n_y, training, st);
}

bool tfc_model_prepare_inputs(tfc_model *m, tfc_tensor *const *x, int n_x, tfc_status *st) {
    tfc_model_impl *impl = TFC_IMPL(m);
    if (impl->deferred.code != TFC_OK) return tfc_status_set(st, impl->deferred.code, "%s", impl->deferred.msg);
    int want = tfc_model_num_inputs(m);
    if (n_x != want)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\" expects %d input(s), but it received %d input tensors",
                              m->base.name, want, n_x);
    tfc_shape shapes[TFC_KERAS_MAX_IO];
    for (int i = 0; i < n_x; i++) {
        shapes[i] = *tfc_tensor_shape(x[i]);
        if (shapes[i].rank < 1)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Model \"%s\": input %d is a scalar; inputs are [samples, ...]",
                                  m->base.name, i);
        shapes[i].dims[0] = -1; /* batches of any size */
    }
    if (m->kind == TFC_MODEL_SEQUENTIAL && !impl->seq_input) {
        note_input_dtype(impl, tfc_tensor_dtype(x[0]));
        return tfc_model_build(m, &shapes[0], st);
    }
    if (m->kind == TFC_MODEL_SUBCLASSED) return true;
    for (int i = 0; i < n_x; i++) {
        const tfc_shape *want_s = &m->inputs[i]->shape;
        bool match = shapes[i].rank == want_s->rank;
        for (int d = 1; d < want_s->rank && match; d++)
            match = want_s->dims[d] < 0 || want_s->dims[d] == shapes[i].dims[d];
        if (!match)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                  "Input %d of layer \"%s\" is incompatible with the layer: expected shape=%s, found "
                                  "shape=%s",
                                  i, m->base.name, TFC_KSHP(want_s), TFC_KSHP(&shapes[i]));
    }
    return true;
}

int tfc_model_get_weights(const tfc_model *m, tfc_tensor **out, int max, tfc_status *st) {
    if (!m) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "get_weights: NULL model");
        return -1;
    }
    return tfc_layer_get_weights(&m->base, out, max, st);
}

bool tfc_model_set_weights(tfc_model *m, tfc_tensor *const *w, int n, tfc_status *st) {
    if (!m) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "set_weights: NULL model");
    return tfc_layer_set_weights(&m->base, m->ctx, w, n, st);
}
