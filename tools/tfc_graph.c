/* `tfc graph show GRAPH.pb` (and the dispatch to `tfc graph run`, tfc_graph_run.c): a GraphDef's nodes (name = Op(inputs) and the attrs that say what flows),
 * its inputs (placeholders) and outputs (data outputs no node reads), and its function library. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfc/graphdef.h"
#include "tfc_tools.h"

static void print_attr(tfc_graphdef *g, int fn, int64_t i, const char *name) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_attr a;
    if (!tfc_graphdef_node_attr(g, fn, i, name, &a, &st)) {
        printf(" %s=<%s>", name, tfc_code_name(st.code));
        return;
    }
    char sb[TFC_SHAPE_STR];
    switch (a.kind) {
    case TFC_ATTR_INT: printf(" %s=%lld", name, (long long)a.v.i); break;
    case TFC_ATTR_FLOAT: printf(" %s=%g", name, a.v.f); break;
    case TFC_ATTR_BOOL: printf(" %s=%s", name, a.v.b ? "true" : "false"); break;
    case TFC_ATTR_TYPE: printf(" %s=%s", name, tfc_dtype_name(a.v.type)); break;
    case TFC_ATTR_STRING: /* binary attrs (config_proto) and long ones are summarised */
        if ((size_t)a.n != strlen(a.v.s) || a.n > 40) printf(" %s=<%d bytes>", name, a.n);
        else printf(" %s=\"%s\"", name, a.v.s);
        break;
    case TFC_ATTR_SHAPE: {
        tfc_shape s = {.rank = a.n};
        for (int k = 0; k < a.n; k++) s.dims[k] = a.v.ints[k];
        printf(" %s=%s", name, tfc_shape_str(&s, sb, sizeof sb));
        break;
    }
    case TFC_ATTR_TENSOR:
        printf(" %s=<%s %s>", name, tfc_dtype_name(tfc_tensor_dtype(a.v.tensor)),
               tfc_shape_str(tfc_tensor_shape(a.v.tensor), sb, sizeof sb));
        break;
    case TFC_ATTR_FUNC: printf(" %s=%s", name, a.v.s); break;
    case TFC_ATTR_LIST_TYPE:
        printf(" %s=[", name);
        for (int k = 0; k < a.n; k++) printf("%s%s", k ? "," : "", tfc_dtype_name(a.v.types[k]));
        printf("]");
        break;
    case TFC_ATTR_LIST_FUNC:
        printf(" %s=[", name);
        for (int k = 0; k < a.n; k++) printf("%s%s", k ? "," : "", a.v.strs[k]);
        printf("]");
        break;
    default: break; /* lists of ints, floats, strings, shapes: layout detail, not shown */
    }
}

/* The attrs that say what a node computes on (dtypes, shapes, values, functions); '_'-prefixed ones are
 * TensorFlow's annotations and are left out. */
static bool shown(const char *attr) {
    static const char *const names[] = {"T", "dtype", "shape", "value", "Tin", "Tout", "f", "then_branch",
                                        "else_branch", "cond", "body", "branches", "N", "Tidx", "DstT", "SrcT",
                                        "transpose_a", "transpose_b", "padding", "data_format", "strides", "axis"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(names[i], attr)) return true;
    return false;
}

static void print_nodes(tfc_graphdef *g, int fn, const char *indent) {
    const int64_t n = tfc_graphdef_num_nodes(g, fn);
    for (int64_t i = 0; i < n; i++) {
        tfc_graphdef_node_info nd;
        tfc_graphdef_node(g, fn, i, &nd);
        printf("%s%s = %s(", indent, nd.name, nd.op);
        for (int k = 0; k < nd.n_inputs; k++) printf("%s%s", k ? ", " : "", nd.inputs[k]);
        printf(")");
        for (int k = 0; k < nd.n_attrs; k++) {
            const char *an = tfc_graphdef_node_attr_name(g, fn, i, k);
            if (shown(an)) print_attr(g, fn, i, an);
        }
        if (nd.n_outputs < 0) printf("  [op not registered in tfc]");
        if (nd.device[0]) printf("  @%s", nd.device);
        printf("\n");
    }
}

/* Outputs: data outputs of the graph's nodes that no node reads (what a caller fetches). */
static void print_outputs(tfc_graphdef *g) {
    const int64_t n = tfc_graphdef_num_nodes(g, TFC_GRAPHDEF_TOP);
    int64_t total = 0;
    for (int64_t i = 0; i < n; i++) {
        tfc_graphdef_node_info nd;
        tfc_graphdef_node(g, TFC_GRAPHDEF_TOP, i, &nd);
        if (nd.n_outputs > 0) total += nd.n_outputs;
    }
    /* a bitmap over (node, output) pairs, offsets per node */
    int64_t *off = calloc((size_t)n + 1, sizeof *off);
    unsigned char *used = calloc((size_t)total + 1, 1);
    if (!off || !used) {
        free(off);
        free(used);
        printf("outputs: (out of memory)\n");
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        tfc_graphdef_node_info nd;
        tfc_graphdef_node(g, TFC_GRAPHDEF_TOP, i, &nd);
        off[i + 1] = off[i] + (nd.n_outputs > 0 ? nd.n_outputs : 0);
    }
    for (int64_t i = 0; i < n; i++) {
        tfc_graphdef_node_info nd;
        tfc_graphdef_node(g, TFC_GRAPHDEF_TOP, i, &nd);
        for (int k = 0; k < nd.n_inputs; k++) {
            const char *in = nd.inputs[k];
            if (in[0] == '^') continue;
            const char *colon = strrchr(in, ':');
            char name[512];
            size_t len = colon ? (size_t)(colon - in) : strlen(in);
            if (len >= sizeof name) continue;
            memcpy(name, in, len);
            name[len] = 0;
            int64_t src = tfc_graphdef_find_node(g, TFC_GRAPHDEF_TOP, name), idx = colon ? atoll(colon + 1) : 0;
            if (src >= 0 && idx < off[src + 1] - off[src]) used[off[src] + idx] = 1;
        }
    }
    printf("outputs:");
    int shown_any = 0;
    for (int64_t i = 0; i < n; i++) {
        tfc_graphdef_node_info nd;
        tfc_graphdef_node(g, TFC_GRAPHDEF_TOP, i, &nd);
        for (int64_t k = 0; k < off[i + 1] - off[i]; k++)
            if (!used[off[i] + k]) {
                printf(" %s:%lld", nd.name, (long long)k);
                shown_any = 1;
            }
    }
    printf("%s\n", shown_any ? "" : " (none)");
    free(off);
    free(used);
}

static int graph_show(const char *path) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_graphdef_opts opts = {.allow_unknown_ops = true};
    tfc_graphdef *g = tfc_graphdef_read(path, &opts, &st);
    if (!g) {
        fprintf(stderr, "tfc graph show: %s: %s\n", tfc_code_name(st.code), st.msg);
        return 1;
    }
    int producer, min_consumer;
    tfc_graphdef_versions(g, &producer, &min_consumer);
    const int64_t n = tfc_graphdef_num_nodes(g, TFC_GRAPHDEF_TOP);
    printf("graph %s: %lld nodes, %d functions, producer %d\n", path, (long long)n, tfc_graphdef_num_functions(g),
           producer);
    printf("inputs:");
    int n_inputs = 0;
    for (int64_t i = 0; i < n; i++) {
        tfc_graphdef_node_info nd;
        tfc_graphdef_node(g, TFC_GRAPHDEF_TOP, i, &nd);
        if (strcmp(nd.op, "Placeholder") && strcmp(nd.op, "PlaceholderWithDefault")) continue;
        printf(" %s", nd.name);
        n_inputs++;
    }
    printf("%s\n", n_inputs ? "" : " (none)");
    print_outputs(g);
    printf("nodes:\n");
    print_nodes(g, TFC_GRAPHDEF_TOP, "  ");
    for (int f = 0; f < tfc_graphdef_num_functions(g); f++) {
        tfc_graphdef_function_info fi;
        tfc_graphdef_function(g, f, &fi);
        printf("function %s(", fi.name);
        for (int k = 0; k < fi.n_inputs; k++) {
            tfc_graphdef_arg a;
            tfc_graphdef_function_arg(g, f, false, k, &a, NULL);
            printf("%s%s: %s", k ? ", " : "", a.name, a.type ? tfc_dtype_name(a.type) : "(attr)");
        }
        printf(") -> (");
        for (int k = 0; k < fi.n_outputs; k++) {
            tfc_graphdef_arg a;
            const char *ret;
            tfc_graphdef_function_arg(g, f, true, k, &a, &ret);
            printf("%s%s: %s = %s", k ? ", " : "", a.name, a.type ? tfc_dtype_name(a.type) : "(attr)", ret ? ret : "?");
        }
        printf("): %lld nodes\n", (long long)fi.n_nodes);
        print_nodes(g, f, "  ");
    }
    tfc_graphdef_free(g);
    return 0;
}

void tfc_tool_graph_usage(FILE *f) {
    fprintf(f, "  graph show GRAPH.pb   list a GraphDef's nodes, ops, inputs, outputs and functions\n"
               "  graph run GRAPH.pb --inputs 'x=x.npy;y=y.npy' --outputs 'out,out2:1' --outdir DIR [--overwrite]\n"
               "                       run a GraphDef on .npy inputs, writing DIR/<output>.npy\n");
}

int tfc_tool_graph(int argc, char **argv) {
    if (argc >= 2 && !strcmp(argv[0], "show")) return graph_show(argv[1]);
    if (argc >= 1 && !strcmp(argv[0], "run")) return tfc_tool_graph_run(argc - 1, argv + 1);
    tfc_tool_graph_usage(stderr);
    return 2;
}
