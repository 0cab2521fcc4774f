/* Custom layer classes for loading: keras.saving.register_keras_serializable / custom_objects. A process-wide
 * table of (class name -> constructor from config JSON) that tfc_layer_from_config consults for names the
 * built-in registry (layer_registry.c) does not know. */
#include <pthread.h>
#include <string.h>

#include "keras/keras_internal.h"
#include "tfc/keras/saving.h"

#define MAX_CUSTOM 64

typedef struct {
    char name[128];
    tfc_custom_layer_fn fn;
    void *user;
} custom_entry;

static custom_entry table[MAX_CUSTOM];
static int n_table;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

bool tfc_keras_register_layer(const char *class_name, tfc_custom_layer_fn from_config, void *user, tfc_status *st) {
    if (!class_name || !*class_name || strlen(class_name) >= sizeof table[0].name)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "register_keras_serializable: bad class name");
    pthread_mutex_lock(&lock);
    int i = 0;
    while (i < n_table && strcmp(table[i].name, class_name) != 0) i++;
    bool ok = true;
    if (!from_config) { /* unregister */
        if (i < n_table) table[i] = table[--n_table];
    } else if (i == n_table && n_table == MAX_CUSTOM) {
        ok = tfc_status_set(st, TFC_RESOURCE_EXHAUSTED, "register_keras_serializable: more than %d custom classes",
                            MAX_CUSTOM);
    } else {
        if (i == n_table) n_table++;
        snprintf(table[i].name, sizeof table[i].name, "%s", class_name);
        table[i].fn = from_config;
        table[i].user = user;
    }
    pthread_mutex_unlock(&lock);
    if (ok) tfc_status_clear(st);
    return ok;
}

tfc_layer *tfc_keras_custom_layer_from_config(const char *class_name, const cJSON *config, bool *found,
                                              tfc_status *st) {
    /* "package>Name" (Keras 3's registered_name) finds "Name" too */
    const char *gt = strrchr(class_name, '>');
    tfc_custom_layer_fn fn = NULL;
    void *user = NULL;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < n_table && !fn; i++)
        if (!strcmp(table[i].name, class_name) || (gt && !strcmp(table[i].name, gt + 1))) {
            fn = table[i].fn;
            user = table[i].user;
        }
    pthread_mutex_unlock(&lock);
    *found = fn != NULL;
    if (!fn) return NULL;
    char *js = cJSON_PrintUnformatted(config);
    if (!js) {
        tfc_status_oom(st, "config", 0);
        return NULL;
    }
    tfc_layer *l = fn(js, user, st);
    cJSON_free(js);
    if (!l && st->code == TFC_OK)
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "custom layer %s: from_config returned no layer", class_name);
    return l;
}
