/* The class-name -> from_config table behind tfc_layer_from_config, generated from layer_list.h. */
#include <string.h>

#include "keras/keras_internal.h"
#include "keras/layer_list.h"

/* Each id may be listed more than once (aliases); declaring a function twice is fine in C. */
#define TFC_KERAS_LAYER(cls, id) tfc_layer *tfc_keras_from_config_##id(const cJSON *config, tfc_status *st);
TFC_KERAS_LAYERS
#undef TFC_KERAS_LAYER

static const tfc_layer_registration registry[] = {
#define TFC_KERAS_LAYER(cls, id) {#cls, tfc_keras_from_config_##id},
    TFC_KERAS_LAYERS
#undef TFC_KERAS_LAYER
};

const tfc_layer_registration *tfc_layer_registry_find(const char *class_name) {
    if (!class_name) return NULL;
    for (size_t i = 0; i < sizeof registry / sizeof *registry; i++)
        if (!strcmp(registry[i].class_name, class_name)) return &registry[i];
    return NULL;
}
