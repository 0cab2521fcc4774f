/* `tfc graph run GRAPH.pb --inputs 'a=a.npy;b=b.npy' --outputs 'y,z:1' --outdir DIR [--overwrite]`: imports a
 * GraphDef (with its function library) into the graph IR, feeds its Placeholders from .npy files and writes
 * the requested outputs to DIR/<output>.npy (':' and '/' in the name become '_'), with saved_model_cli's
 * flag spellings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "graph/exec.h"
#include "graph/graphdef_io.h"
#include "graph/trace.h"
#include "tfc/graphdef.h"
#include "tfc/npy.h"
#include "tfc_tools.h"

#define MAX_NAMES 256

/* Splits s (modified) at sep into at most max parts; returns the count, -1 when over max. */
static int split(char *s, char sep, char **parts, int max) {
    int n = 0;
    for (char *p = s; p && *p;) {
        char *next = strchr(p, sep);
        if (next) *next++ = 0;
        if (*p) {
            if (n == max) return -1;
            parts[n++] = p;
        }
        p = next;
    }
    return n;
}

static int fail(const char *what, const tfc_status *st) {
    fprintf(stderr, "tfc graph run: %s: %s: %s\n", what, tfc_code_name(st->code), st->msg);
    return 1;
}

int tfc_tool_graph_run(int argc, char **argv) {
    const char *path = NULL, *outdir = NULL;
    char *inputs_arg = NULL, *outputs_arg = NULL;
    bool overwrite = false;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--inputs") && i + 1 < argc) inputs_arg = argv[++i];
        else if (!strcmp(argv[i], "--outputs") && i + 1 < argc) outputs_arg = argv[++i];
        else if (!strcmp(argv[i], "--outdir") && i + 1 < argc) outdir = argv[++i];
        else if (!strcmp(argv[i], "--overwrite")) overwrite = true;
        else if (argv[i][0] != '-' && !path) path = argv[i];
        else {
            fprintf(stderr, "tfc graph run: unknown or incomplete argument '%s'\n", argv[i]);
            return 2;
        }
    }
    if (!path || !outputs_arg || !outdir) {
        fprintf(stderr, "usage: tfc graph run GRAPH.pb --inputs 'x=x.npy;y=y.npy' --outputs 'out,out2:1' --outdir DIR "
                        "[--overwrite]\n");
        return 2;
    }
    char *in_keys[MAX_NAMES], *outs[MAX_NAMES];
    int n_in = inputs_arg ? split(inputs_arg, ';', in_keys, MAX_NAMES) : 0;
    int n_out = split(outputs_arg, ',', outs, MAX_NAMES);
    if (n_in < 0 || n_out <= 0) {
        fprintf(stderr, "tfc graph run: between 1 and %d outputs and at most %d inputs\n", MAX_NAMES, MAX_NAMES);
        return 2;
    }
    char *in_files[MAX_NAMES];
    for (int i = 0; i < n_in; i++) {
        char *eq = strchr(in_keys[i], '=');
        if (!eq || eq == in_keys[i] || !eq[1]) {
            fprintf(stderr, "tfc graph run: --inputs entry '%s' is not <input_key>=<filename>\n", in_keys[i]);
            return 2;
        }
        *eq = 0;
        in_files[i] = eq + 1;
    }
    /* output files first: refuse to clobber before any work (saved_model_cli's --overwrite) */
    char (*files)[1024] = calloc((size_t)n_out, sizeof *files);
    if (!files) return 1;
    for (int o = 0; o < n_out; o++) {
        char name[512];
        snprintf(name, sizeof name, "%s", outs[o]);
        for (char *p = name; *p; p++)
            if (*p == ':' || *p == '/') *p = '_';
        snprintf(files[o], sizeof files[o], "%s/%s.npy", outdir, name);
        struct stat sb;
        if (!overwrite && stat(files[o], &sb) == 0) {
            fprintf(stderr, "tfc graph run: output file %s already exists (use --overwrite)\n", files[o]);
            free(files);
            return 1;
        }
    }
    int rc = 1;
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *in[MAX_NAMES] = {0}, *out[MAX_NAMES] = {0};
    tfc_graphdef *gd = NULL;
    tfc_ctx *ctx = tfc_ctx_new(NULL, &st);
    if (!ctx) {
        fail("context", &st);
        goto done;
    }
    if (!(gd = tfc_graphdef_read(path, NULL, &st))) {
        fail(path, &st);
        goto done;
    }
    tfc_flib *lib = tfc_ctx_flib(ctx, &st);
    tfc_gfunc *fn = NULL;
    if (!lib || !tfc_graphdef_import_library(gd, lib, &st) ||
        !(fn = tfc_graphdef_import_graph(gd, lib, "__tfc_graph_run", (const char *const *)outs, n_out, &st))) {
        fail(path, &st);
        goto done;
    }
    /* every Placeholder fed, in argument order; no key that is not one */
    for (int i = 0; i < n_in; i++) {
        bool known = false;
        for (int a = 0; a < fn->n_args && !known; a++) known = !strcmp(fn->body->nodes[fn->arg_nodes[a]]->name, in_keys[i]);
        if (!known) {
            fprintf(stderr, "tfc graph run: --inputs key '%s' is not a Placeholder of the graph\n", in_keys[i]);
            goto done;
        }
    }
    if (fn->n_args > MAX_NAMES) {
        fprintf(stderr, "tfc graph run: the graph has more than %d Placeholders\n", MAX_NAMES);
        goto done;
    }
    for (int a = 0; a < fn->n_args; a++) {
        const char *name = fn->body->nodes[fn->arg_nodes[a]]->name;
        int k = -1;
        for (int i = 0; i < n_in; i++)
            if (!strcmp(in_keys[i], name)) k = i;
        if (k < 0) {
            fprintf(stderr, "tfc graph run: the graph's Placeholder '%s' is not fed (--inputs '%s=FILE.npy')\n", name,
                    name);
            goto done;
        }
        if (!(in[a] = tfc_npy_read(in_files[k], &st))) {
            fail(in_files[k], &st);
            goto done;
        }
    }
    tfc_exec *x = tfc_exec_get(ctx, fn, &st);
    if (!x || !tfc_exec_run(ctx, x, in, fn->n_args, out, &st)) {
        fail("run", &st);
        goto done;
    }
    for (int o = 0; o < n_out; o++)
        if (!tfc_npy_write(out[o], files[o], &st)) {
            fail(outs[o], &st);
            goto done;
        }
    rc = 0;
done:
    for (int i = 0; i < MAX_NAMES; i++) {
        tfc_tensor_unref(in[i]);
        tfc_tensor_unref(out[i]);
    }
    tfc_graphdef_free(gd);
    tfc_ctx_free(ctx);
    free(files);
    return rc;
}
