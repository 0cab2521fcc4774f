/* get_config of Sequential and Functional models in Keras 2's dialect (tf.keras 2.4); the way back,
 * tfc_model_from_config, is in model_config.c.
 *   Sequential: {"name", "layers": [{"class_name", "config"}, ...]} (the InputLayer first once known)
 *   Functional: {"name", "trainable", "layers": [{"class_name", "config", "name", "inbound_nodes"}, ...],
 *                "input_layers": [[name, node, tensor], ...], "output_layers": [...]}
 * Node indices count only the nodes of the layer that belong to this model (Keras's node_conversion_map). */
#include <string.h>

#include "keras/model_internal.h"

static void clear_object(cJSON *o) {
    while (o->child) cJSON_Delete(cJSON_DetachItemViaPointer(o, o->child));
}

static cJSON *layer_entry(const tfc_layer *l, tfc_status *st) {
    cJSON *cfg = tfc_layer_config_json(l, st);
    if (!cfg) return NULL;
    cJSON *e = cJSON_CreateObject();
    if (!e || !cJSON_AddStringToObject(e, "class_name", l->cls->class_name) || !cJSON_AddItemToObject(e, "config", cfg)) {
        if (!e || !cJSON_GetObjectItemCaseSensitive(e, "config")) cJSON_Delete(cfg);
        cJSON_Delete(e);
        tfc_status_oom(st, "get_config", 0);
        return NULL;
    }
    return e;
}

bool tfc_keras_sequential_get_config(const tfc_layer *l, void *vcfg, tfc_status *st) {
    const tfc_model_impl *impl = (const tfc_model_impl *)l;
    cJSON *cfg = vcfg;
    clear_object(cfg);
    cJSON *layers = cJSON_CreateArray();
    if (!cJSON_AddStringToObject(cfg, "name", l->name) || !layers || !cJSON_AddItemToObject(cfg, "layers", layers)) {
        cJSON_Delete(layers);
        return tfc_status_oom(st, "get_config", 0);
    }
    if (impl->seq_input) {
        cJSON *e = layer_entry(impl->seq_input, st);
        if (!e) return false;
        cJSON_AddItemToArray(layers, e);
    }
    for (int i = 0; i < l->n_sublayers; i++) {
        cJSON *e = layer_entry(l->sublayers[i], st);
        if (!e) return false;
        cJSON_AddItemToArray(layers, e);
    }
    return true;
}

/* The index of node among the layer's nodes that belong to this model. */
static int model_node_index(const tfc_model *m, const tfc_knode *node) {
    const tfc_layer *l = node->layer;
    /* Keras numbers the nodes of a model built on its own inputs from 1 (functional.py's _should_skip_first_node) */
    int k = l->is_model && ((const tfc_model *)l)->kind != TFC_MODEL_SUBCLASSED && ((const tfc_model *)l)->n_inputs > 0;
    for (int i = 0; i < l->n_nodes; i++) {
        bool in_model = false;
        for (int j = 0; j < m->n_order && !in_model; j++) in_model = m->order[j] == l->nodes[i];
        if (l->nodes[i] == node) return k;
        if (in_model) k++;
    }
    return 0;
}

static cJSON *tensor_ref(const tfc_model *m, const tfc_ktensor *k, bool with_kwargs) {
    cJSON *r = cJSON_CreateArray();
    if (!r) return NULL;
    cJSON_AddItemToArray(r, cJSON_CreateString(k->node->layer->name));
    cJSON_AddItemToArray(r, cJSON_CreateNumber(model_node_index(m, k->node)));
    cJSON_AddItemToArray(r, cJSON_CreateNumber(k->index));
    if (with_kwargs) cJSON_AddItemToArray(r, cJSON_CreateObject());
    if (cJSON_GetArraySize(r) != (with_kwargs ? 4 : 3)) {
        cJSON_Delete(r);
        return NULL;
    }
    return r;
}

bool tfc_keras_functional_get_config(const tfc_layer *l, void *vcfg, tfc_status *st) {
    const tfc_model *m = (const tfc_model *)l;
    cJSON *cfg = vcfg;
    clear_object(cfg);
    cJSON *layers = cJSON_CreateArray(), *ins = cJSON_CreateArray(), *outs = cJSON_CreateArray();
    bool ok = layers && ins && outs && cJSON_AddStringToObject(cfg, "name", l->name) &&
              cJSON_AddBoolToObject(cfg, "trainable", l->trainable);
    if (ok) {
        cJSON_AddItemToObject(cfg, "layers", layers);
        cJSON_AddItemToObject(cfg, "input_layers", ins);
        cJSON_AddItemToObject(cfg, "output_layers", outs);
    } else {
        cJSON_Delete(layers);
        cJSON_Delete(ins);
        cJSON_Delete(outs);
        return tfc_status_oom(st, "get_config", 0);
    }
    for (int i = 0; i < l->n_sublayers; i++) {
        const tfc_layer *sub = l->sublayers[i];
        cJSON *e = layer_entry(sub, st);
        if (!e) return false;
        cJSON_AddItemToArray(layers, e);
        cJSON *inbound = cJSON_CreateArray();
        if (!inbound || !cJSON_AddStringToObject(e, "name", sub->name)) {
            cJSON_Delete(inbound);
            return tfc_status_oom(st, "get_config", 0);
        }
        cJSON_AddItemToObject(e, "inbound_nodes", inbound);
        for (int n = 0; n < sub->n_nodes; n++) {
            const tfc_knode *node = sub->nodes[n];
            bool in_model = false;
            for (int j = 0; j < m->n_order && !in_model; j++) in_model = m->order[j] == node;
            if (!in_model || node->n_in == 0) continue;
            cJSON *refs = cJSON_CreateArray();
            if (!refs) return tfc_status_oom(st, "get_config", 0);
            cJSON_AddItemToArray(inbound, refs);
            for (int k = 0; k < node->n_in; k++) {
                cJSON *r = tensor_ref(m, node->in[k], true);
                if (!r) return tfc_status_oom(st, "get_config", 0);
                cJSON_AddItemToArray(refs, r);
            }
        }
    }
    for (int i = 0; i < m->n_inputs; i++) {
        cJSON *r = tensor_ref(m, m->inputs[i], false);
        if (!r) return tfc_status_oom(st, "get_config", 0);
        cJSON_AddItemToArray(ins, r);
    }
    for (int i = 0; i < m->n_outputs; i++) {
        cJSON *r = tensor_ref(m, m->outputs[i], false);
        if (!r) return tfc_status_oom(st, "get_config", 0);
        cJSON_AddItemToArray(outs, r);
    }
    return true;
}
