/* GraphDef bytes through the reader and validator (both with and without the op-registry check), every
 * node attr decoded, the graph written back; the same bytes as a TensorProto. Limits keep one decoded
 * tensor at 1 MiB so a header's announced size cannot make the fuzzer allocate gigabytes. */
#include <stdint.h>
#include <stdlib.h>

#include "tfc/tfc.h"

static void walk(tfc_graphdef *g, int fn) {
    const int64_t n = tfc_graphdef_num_nodes(g, fn);
    for (int64_t i = 0; i < n; i++) {
        tfc_graphdef_node_info nd;
        if (!tfc_graphdef_node(g, fn, i, &nd)) abort();
        if (tfc_graphdef_find_node(g, fn, nd.name) < 0) abort(); /* every validated node is indexed */
        for (int k = 0; k < nd.n_attrs; k++) {
            tfc_status st = TFC_STATUS_INIT;
            tfc_attr a;
            if (!tfc_graphdef_node_attr(g, fn, i, tfc_graphdef_node_attr_name(g, fn, i, k), &a, &st) && st.code == TFC_OK)
                abort();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    tfc_graphdef_opts opts = {.max_tensor_bytes = 1 << 20, .allow_unknown_ops = size && (data[size - 1] & 1)};
    tfc_status st = TFC_STATUS_INIT;
    tfc_graphdef *g = tfc_graphdef_parse(data, size, &opts, &st);
    if (!g && st.code == TFC_OK) abort(); /* a failure must say why */
    if (g) {
        walk(g, TFC_GRAPHDEF_TOP);
        for (int f = 0; f < tfc_graphdef_num_functions(g); f++) {
            tfc_graphdef_function_info fi;
            if (!tfc_graphdef_function(g, f, &fi)) abort();
            for (int k = 0; k < fi.n_outputs; k++) {
                tfc_graphdef_arg a;
                const char *ret;
                if (!tfc_graphdef_function_arg(g, f, true, k, &a, &ret) || !ret) abort(); /* validated: has a ret */
            }
            walk(g, f);
        }
        void *out;
        size_t n;
        if (!tfc_graphdef_serialize(g, &out, &n, &st)) abort();
        tfc_graphdef *h = tfc_graphdef_parse(out, n, &opts, &st); /* what tfc writes it reads back */
        if (!h || tfc_graphdef_num_nodes(h, TFC_GRAPHDEF_TOP) != tfc_graphdef_num_nodes(g, TFC_GRAPHDEF_TOP)) abort();
        tfc_graphdef_free(h);
        tfc_free(out);
        tfc_graphdef_free(g);
    }
    tfc_tensor *t = tfc_tensor_from_proto(data, size, 1 << 20, &st);
    if (!t && st.code == TFC_OK) abort();
    if (t) {
        void *out;
        size_t n;
        if (tfc_tensor_dtype(t) != TFC_STRING || tfc_tensor_num_elements(t) < 100000) {
            if (!tfc_tensor_to_proto(t, &out, &n, &st)) abort();
            tfc_free(out);
        }
        tfc_tensor_unref(t);
    }
    return 0;
}
