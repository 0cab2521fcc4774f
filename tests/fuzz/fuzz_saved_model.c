/* saved_model.pb bytes through the SavedModel reader and validator, then what loading does with a valid file short
 * of reading variables/: the 'serve' MetaGraphDef is looked up, every MetaGraphDef's graph is detached and validated
 * as a GraphDef (ops tfc lacks allowed, as when loading), and every signature's TensorInfos are walked and re-packed.
 * Limits keep one decoded tensor at 1 MiB. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/graphdef_internal.h"
#include "proto/proto_internal.h"
#include "saved_model/sm_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    tfc_status st = TFC_STATUS_INIT;
    Tensorflow__SavedModel *sm = tfc_sm_parse(data, size, "saved_model.pb", &st);
    if (!sm) {
        if (st.code == TFC_OK || !strstr(st.msg, "saved_model.pb")) abort(); /* a failure names the file */
        return 0;
    }
    Tensorflow__MetaGraphDef *mg = tfc_sm_find_meta_graph(sm, "fuzz", NULL, 0, &st);
    if (!mg && st.code != TFC_NOT_FOUND) abort();
    for (size_t m = 0; m < sm->n_meta_graphs; m++) {
        Tensorflow__MetaGraphDef *g = sm->meta_graphs[m];
        for (size_t i = 0; i < g->n_signature_def; i++) {
            Tensorflow__SignatureDef *sd = g->signature_def[i]->value;
            tfc_sm_sort_tensor_infos(sd->inputs, sd->n_inputs);
            for (size_t k = 0; k < sd->n_inputs; k++)
                if (!tfc_pb_dtype_enum_name(sd->inputs[k]->value->dtype)) abort();
        }
        tfc_graphdef_opts opts = {.max_tensor_bytes = 1 << 20, .allow_unknown_ops = true};
        Tensorflow__GraphDef *gd_pb = g->graph_def;
        g->graph_def = NULL;
        tfc_graphdef *gd = tfc_gd_adopt(gd_pb, &opts, &st);
        if (!gd && st.code == TFC_OK) abort();
        tfc_graphdef_free(gd);
    }
    uint8_t *out;
    size_t n;
    if (!tfc_pb_pack(&sm->base, &out, &n, "SavedModel", &st) && st.code != TFC_RESOURCE_EXHAUSTED) abort();
    if (st.code == TFC_OK) tfc_free(out);
    tfc_pb_free(sm);
    return 0;
}
