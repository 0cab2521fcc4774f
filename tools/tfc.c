/* The `tfc` command. Subcommands: ops (list registered ops, as browsing tf.raw_ops), graph (tfc_graph.c), checkpoint
 * (tfc_checkpoint.c), saved_model (tfc_saved_model.c), model (tfc_model.c), ps and worker (tfc_ps.c), data
 * (tfc_data.c), serve (tfc_serve.c); --version. */
#include <stdio.h>
#include <string.h>

#include "tfc/tfc.h"
#include "tfc_tools.h"

static int cmd_ops(int argc, char **argv) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_ctx *ctx = tfc_ctx_new(NULL, &st); /* registers kernels */
    if (!ctx) {
        fprintf(stderr, "tfc ops: %s\n", st.msg);
        return 1;
    }
    const char *filter = argc > 0 ? argv[0] : NULL;
    printf("%-40s %-9s %-6s %s\n", "op", "gradient", "kernel", "dtypes");
    for (int i = 0; i < tfc_op_count(); i++) {
        const tfc_op *op = tfc_op_at(i);
        const tfc_op_def *d = tfc_op_get_def(op);
        if (filter && !strstr(d->name, filter)) continue;
        tfc_dtype dts[32];
        int n = tfc_op_dtypes(op, dts, 32);
        printf("%-40s %-9s %-6s ", d->name, tfc_op_has_gradient(op) ? "yes" : d->not_differentiable ? "none" : "no",
               tfc_op_has_kernel(op, "CPU") ? "CPU" : "-");
        for (int k = 0; k < n; k++) printf("%s%s", k ? "," : "", tfc_dtype_name(dts[k]));
        printf("\n");
    }
    tfc_ctx_free(ctx);
    return 0;
}

static void usage(FILE *f) {
    fprintf(f, "usage: tfc <command> [args]\n       tfc --version\n\ncommands:\n"
               "  ops [FILTER]   list registered ops with dtypes and gradients\n");
    tfc_tool_graph_usage(f);
    tfc_tool_checkpoint_usage(f);
    tfc_tool_saved_model_usage(f);
    tfc_tool_model_usage(f);
    tfc_tool_ps_usage(f);
    tfc_tool_data_usage(f);
    tfc_tool_serve_usage(f);
}

int main(int argc, char **argv) {
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "--version")) return printf("tfc %s\n", tfc_version()) < 0;
    if (!strcmp(argv[1], "ops")) return cmd_ops(argc - 2, argv + 2);
    if (!strcmp(argv[1], "graph")) return tfc_tool_graph(argc - 2, argv + 2);
    if (!strcmp(argv[1], "checkpoint")) return tfc_tool_checkpoint(argc - 2, argv + 2);
    if (!strcmp(argv[1], "saved_model")) return tfc_tool_saved_model(argc - 2, argv + 2);
    if (!strcmp(argv[1], "model")) return tfc_tool_model(argc - 2, argv + 2);
    if (!strcmp(argv[1], "ps") || !strcmp(argv[1], "worker")) return tfc_tool_ps(argv[1], argc - 2, argv + 2);
    if (!strcmp(argv[1], "data")) return tfc_tool_data(argc - 2, argv + 2);
    if (!strcmp(argv[1], "serve")) return tfc_tool_serve(argc - 2, argv + 2);
    fprintf(stderr, "tfc: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
