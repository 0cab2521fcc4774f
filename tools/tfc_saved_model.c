/* `tfc saved_model show|run`, TensorFlow's saved_model_cli with its flags:
 *   show --dir D                                  the tag-sets
 *   show --dir D --tag_set serve                  the SignatureDef keys of that MetaGraphDef
 *   show --dir D --tag_set serve --signature_def K  its inputs and outputs (dtype, shape, tensor name), method
 *   show --dir D --all                            every MetaGraphDef's signatures and ops
 *   run --dir D --tag_set serve --signature_def K --inputs 'x=x.npy' [--input_exprs 'y=[1,2]'] --outdir O
 *       [--overwrite]                             runs the signature, writing O/<output_key>.npy
 * `show` reads saved_model.pb only, so it works for models whose ops tfc cannot run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto_internal.h"
#include "saved_model/sm_internal.h"
#include "tfc/npy.h"
#include "tfc_tools.h"

#define MAX_IO 256

typedef struct {
    const char *dir, *tag_set, *signature_def, *outdir;
    char *inputs, *input_exprs;
    bool all, overwrite;
} opts;

static int parse(const char *prog, int argc, char **argv, opts *o) {
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--all")) o->all = true;
        else if (!strcmp(a, "--overwrite")) o->overwrite = true;
        else if (!val) {
            fprintf(stderr, "%s: unknown or incomplete argument '%s'\n", prog, a);
            return 2;
        } else if (!strcmp(a, "--dir")) o->dir = val, i++;
        else if (!strcmp(a, "--tag_set")) o->tag_set = val, i++;
        else if (!strcmp(a, "--signature_def")) o->signature_def = val, i++;
        else if (!strcmp(a, "--outdir")) o->outdir = val, i++;
        else if (!strcmp(a, "--inputs")) o->inputs = argv[++i];
        else if (!strcmp(a, "--input_exprs")) o->input_exprs = argv[++i];
        else {
            fprintf(stderr, "%s: unknown argument '%s'\n", prog, a);
            return 2;
        }
    }
    if (!o->dir) {
        fprintf(stderr, "%s: --dir is required\n", prog);
        return 2;
    }
    return 0;
}

/* Splits a comma-separated tag set (modified in place). */
static int split_tags(char *s, const char **tags, int max) {
    int n = 0;
    for (char *p = strtok(s, ","); p && n < max; p = strtok(NULL, ",")) tags[n++] = p;
    return n;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* The tags of mg sorted and joined by ", " (saved_model_cli's listing). */
static void tag_list(const Tensorflow__MetaGraphDef *mg, bool sorted, char *buf, size_t size) {
    const char *t[64];
    size_t n = mg->meta_info_def->n_tags, w = 0;
    for (size_t i = 0; i < n; i++) t[i] = mg->meta_info_def->tags[i];
    if (sorted) qsort(t, n, sizeof *t, cmp_str);
    buf[0] = 0;
    for (size_t i = 0; i < n && w < size; i++) w += (size_t)snprintf(buf + w, size - w, "%s%s", i ? ", " : "", t[i]);
}

static void print_tensor_info(const Tensorflow__TensorInfo *ti, const char *ind) {
    printf("%s      dtype: %s\n", ind, tfc_pb_dtype_enum_name(ti->dtype));
    printf("%s      shape: ", ind);
    if (ti->tensor_shape && ti->tensor_shape->unknown_rank) {
        printf("unknown_rank\n");
    } else {
        printf("(");
        for (size_t d = 0; ti->tensor_shape && d < ti->tensor_shape->n_dim; d++)
            printf("%s%lld", d ? ", " : "", (long long)ti->tensor_shape->dim[d]->size);
        printf(")\n");
    }
    printf("%s      name: %s\n", ind, ti->encoding_case == TENSORFLOW__TENSOR_INFO__ENCODING_NAME ? ti->name : "");
}

static void print_signature(Tensorflow__SignatureDef *sd, const char *ind) {
    tfc_sm_sort_tensor_infos(sd->inputs, sd->n_inputs);
    tfc_sm_sort_tensor_infos((Tensorflow__SignatureDef__InputsEntry **)sd->outputs, sd->n_outputs);
    printf("%sThe given SavedModel SignatureDef contains the following input(s):\n", ind);
    for (size_t i = 0; i < sd->n_inputs; i++) {
        printf("%s  inputs['%s'] tensor_info:\n", ind, sd->inputs[i]->key);
        print_tensor_info(sd->inputs[i]->value, ind);
    }
    printf("%sThe given SavedModel SignatureDef contains the following output(s):\n", ind);
    for (size_t i = 0; i < sd->n_outputs; i++) {
        printf("%s  outputs['%s'] tensor_info:\n", ind, sd->outputs[i]->key);
        print_tensor_info(sd->outputs[i]->value, ind);
    }
    printf("%sMethod name is: %s\n", ind, sd->method_name ? sd->method_name : "");
}

/* A library function's name; "" for one without a signature (the graph itself is validated only when loaded, so
 * show reads it defensively). */
static const char *fn_name(const Tensorflow__FunctionDefLibrary *lib, size_t f) {
    const Tensorflow__OpDef *sig = lib->function[f]->signature;
    return sig && sig->name ? sig->name : "";
}

/* meta_graph.ops_used_by_graph_def: the ops of the graph and of every function it reaches, as a Python set. */
static void print_ops(const Tensorflow__MetaGraphDef *mg) {
    const Tensorflow__GraphDef *g = mg->graph_def;
    const Tensorflow__FunctionDefLibrary *lib = g->library;
    size_t nf = lib ? lib->n_function : 0, cap = 64, n = 0;
    const char **ops = malloc(cap * sizeof *ops);
    bool *seen_fn = calloc(nf + 1, 1);
    if (!ops || !seen_fn) goto done;
    /* every body's ops, then functions named by PartitionedCall attrs: functions reached are all in the library,
     * and TensorFlow's walk reaches a function only through a used op name, so collect reachable ones first */
    size_t *stack = malloc((nf + 1) * sizeof *stack), sp = 0;
    if (!stack) goto done;
#define USE(op_)                                                                                                     \
    do {                                                                                                             \
        const char *nm_ = (op_);                                                                                     \
        bool have_ = false;                                                                                          \
        for (size_t q_ = 0; q_ < n && !have_; q_++) have_ = !strcmp(ops[q_], nm_);                                   \
        if (!have_) {                                                                                                \
            if (n == cap) {                                                                                          \
                const char **no_ = realloc(ops, 2 * cap * sizeof *ops);                                              \
                if (!no_) goto out;                                                                                  \
                ops = no_, cap *= 2;                                                                                 \
            }                                                                                                        \
            ops[n++] = nm_;                                                                                          \
            for (size_t f_ = 0; f_ < nf; f_++)                                                                       \
                if (!seen_fn[f_] && !strcmp(fn_name(lib, f_), nm_)) seen_fn[f_] = true, stack[sp++] = f_;              \
        }                                                                                                            \
    } while (0)
    for (int pass = -1; pass < 0 || sp;) {
        Tensorflow__NodeDef **nodes = pass < 0 ? g->node : lib->function[stack[--sp]]->node_def;
        size_t nn = pass < 0 ? g->n_node : lib->function[stack[sp]]->n_node_def;
        pass = 0;
        for (size_t i = 0; i < nn; i++) {
            USE(nodes[i]->op);
            if (!strcmp(nodes[i]->op, "PartitionedCall") || !strcmp(nodes[i]->op, "StatefulPartitionedCall"))
                for (size_t k = 0; k < nodes[i]->n_attr; k++)
                    if (!strcmp(nodes[i]->attr[k]->key, "f") && nodes[i]->attr[k]->value &&
                        nodes[i]->attr[k]->value->func)
                        USE(nodes[i]->attr[k]->value->func->name);
        }
    }
#undef USE
out:
    qsort(ops, n, sizeof *ops, cmp_str);
    printf("The MetaGraph with tag set [");
    for (size_t i = 0; i < mg->meta_info_def->n_tags; i++) printf("%s'%s'", i ? ", " : "", mg->meta_info_def->tags[i]);
    printf("] contains the following ops: {");
    for (size_t i = 0, shown = 0; i < n; i++) { /* ops only: functions are walked, not listed */
        bool is_fn = false;
        for (size_t f = 0; f < nf && !is_fn; f++) is_fn = !strcmp(fn_name(lib, f), ops[i]);
        if (!is_fn) printf("%s'%s'", shown++ ? ", " : "", ops[i]);
    }
    printf("}\n");
    free(stack);
done:
    free(ops);
    free(seen_fn);
}

static int cmp_mg(const void *a, const void *b) {
    const Tensorflow__MetaGraphDef *x = *(Tensorflow__MetaGraphDef *const *)a, *y = *(Tensorflow__MetaGraphDef *const *)b;
    for (size_t i = 0; i < x->meta_info_def->n_tags && i < y->meta_info_def->n_tags; i++) {
        int c = strcmp(x->meta_info_def->tags[i], y->meta_info_def->tags[i]);
        if (c) return c;
    }
    return (x->meta_info_def->n_tags > y->meta_info_def->n_tags) - (x->meta_info_def->n_tags < y->meta_info_def->n_tags);
}

static int show(const opts *o) {
    const char *prog = "tfc saved_model show";
    tfc_status st = TFC_STATUS_INIT;
    Tensorflow__SavedModel *sm = tfc_sm_read(o->dir, &st);
    if (!sm) {
        fprintf(stderr, "%s: %s: %s\n", prog, tfc_code_name(st.code), st.msg);
        return 1;
    }
    int rc = 0;
    char buf[2048];
    if (o->all) {
        qsort(sm->meta_graphs, sm->n_meta_graphs, sizeof *sm->meta_graphs, cmp_mg);
        for (size_t m = 0; m < sm->n_meta_graphs; m++) {
            Tensorflow__MetaGraphDef *mg = sm->meta_graphs[m];
            tag_list(mg, false, buf, sizeof buf);
            printf("\nMetaGraphDef with tag-set: '%s' contains the following SignatureDefs:\n", buf);
            tfc_sm_sort_tensor_infos((Tensorflow__SignatureDef__InputsEntry **)mg->signature_def, mg->n_signature_def);
            for (size_t i = 0; i < mg->n_signature_def; i++) {
                printf("\nsignature_def['%s']:\n", mg->signature_def[i]->key);
                print_signature(mg->signature_def[i]->value, "  ");
            }
            print_ops(mg);
        }
    } else if (!o->tag_set) {
        printf("The given SavedModel contains the following tag-sets:\n");
        char (*lists)[512] = calloc(sm->n_meta_graphs, sizeof *lists);
        const char **sorted = calloc(sm->n_meta_graphs + 1, sizeof *sorted);
        for (size_t m = 0; lists && sorted && m < sm->n_meta_graphs; m++) {
            tag_list(sm->meta_graphs[m], true, lists[m], sizeof lists[m]);
            sorted[m] = lists[m];
        }
        if (lists && sorted) qsort(sorted, sm->n_meta_graphs, sizeof *sorted, cmp_str);
        for (size_t m = 0; lists && sorted && m < sm->n_meta_graphs; m++) printf("'%s'\n", sorted[m]);
        free(lists);
        free(sorted);
    } else {
        char tagbuf[1024];
        snprintf(tagbuf, sizeof tagbuf, "%s", o->tag_set);
        const char *tags[64];
        int nt = split_tags(tagbuf, tags, 64);
        Tensorflow__MetaGraphDef *mg = tfc_sm_find_meta_graph(sm, o->dir, tags, nt, &st);
        if (!mg) {
            fprintf(stderr, "%s: %s\n", prog, st.msg);
            rc = 1;
        } else if (!o->signature_def) {
            printf("The given SavedModel MetaGraphDef contains SignatureDefs with the following keys:\n");
            tfc_sm_sort_tensor_infos((Tensorflow__SignatureDef__InputsEntry **)mg->signature_def, mg->n_signature_def);
            for (size_t i = 0; i < mg->n_signature_def; i++) printf("SignatureDef key: \"%s\"\n", mg->signature_def[i]->key);
        } else {
            Tensorflow__SignatureDef *sd = tfc_sm_signature_def(mg, o->signature_def);
            if (!sd) {
                fprintf(stderr, "%s: Could not find signature \"%s\". Please choose from: ", prog, o->signature_def);
                for (size_t i = 0; i < mg->n_signature_def; i++)
                    fprintf(stderr, "%s%s", i ? ", " : "", mg->signature_def[i]->key);
                fprintf(stderr, "\n");
                rc = 1;
            } else {
                print_signature(sd, "");
            }
        }
    }
    tfc_pb_free(sm);
    return rc;
}

int tfc_tool_run_signature(const char *prog, const char *dir, const char *tag_set, const char *key, char *inputs,
                           char *exprs, const char *outdir, bool overwrite) {
    tfc_tool_pair files[MAX_IO], lits[MAX_IO];
    int nf = inputs ? tfc_tool_parse_pairs(inputs, files, MAX_IO, prog, "--inputs") : 0;
    int nl = exprs ? tfc_tool_parse_pairs(exprs, lits, MAX_IO, prog, "--input_exprs") : 0;
    if (nf < 0 || nl < 0) return 2;
    for (int i = 0; i < nf; i++)
        if (strchr(files[i].value, '[')) {
            fprintf(stderr, "%s: --inputs '%s=%s': reading a variable of an .npz file is not supported (use .npy)\n", prog,
                    files[i].key, files[i].value);
            return 2;
        }
    char tagbuf[1024];
    snprintf(tagbuf, sizeof tagbuf, "%s", tag_set ? tag_set : TFC_SAVED_MODEL_SERVE);
    const char *tags[64];
    int nt = split_tags(tagbuf, tags, 64);
    int rc = 1;
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *in[MAX_IO] = {0}, *out[MAX_IO] = {0};
    char (*paths)[4096] = NULL;
    tfc_saved_model *m = NULL;
    tfc_ctx *ctx = tfc_ctx_new(NULL, &st);
    if (!ctx || !(m = tfc_saved_model_load(ctx, dir, tags, nt, &st))) {
        fprintf(stderr, "%s: %s: %s\n", prog, tfc_code_name(st.code), st.msg);
        goto done;
    }
    tfc_saved_model_signature *s = tfc_saved_model_signature_find(m, key);
    if (!s) {
        fprintf(stderr, "%s: Could not find signature \"%s\" in %s\n", prog, key, dir);
        goto done;
    }
    const int n_in = tfc_saved_model_signature_num_inputs(s), n_out = tfc_saved_model_signature_num_outputs(s);
    /* every key named is an input; every input fed once */
    for (int i = 0; i < nf + nl; i++) {
        const tfc_tool_pair *p = i < nf ? &files[i] : &lits[i - nf];
        int k = -1;
        for (int j = 0; j < n_in && k < 0; j++)
            if (!strcmp(tfc_saved_model_signature_input(s, j)->key, p->key)) k = j;
        if (k < 0) {
            fprintf(stderr, "%s: \"%s\" is not a valid input key. Please choose from", prog, p->key);
            for (int j = 0; j < n_in; j++) fprintf(stderr, "%s\"%s\"", j ? ", " : " ", tfc_saved_model_signature_input(s, j)->key);
            fprintf(stderr, ", or use --show option.\n");
            goto done;
        }
        if (in[k]) {
            fprintf(stderr, "%s: input '%s' is fed more than once\n", prog, p->key);
            goto done;
        }
        in[k] = i < nf ? tfc_npy_read(p->value, &st)
                       : tfc_tool_parse_literal(p->value, tfc_saved_model_signature_input(s, k)->dtype, &st);
        if (!in[k]) {
            fprintf(stderr, "%s: input '%s': %s\n", prog, p->key, st.msg);
            goto done;
        }
    }
    for (int j = 0; j < n_in; j++)
        if (!in[j]) {
            fprintf(stderr, "%s: input '%s' is not fed (--inputs '%s=FILE.npy' or --input_exprs '%s=[...]')\n", prog,
                    tfc_saved_model_signature_input(s, j)->key, tfc_saved_model_signature_input(s, j)->key,
                    tfc_saved_model_signature_input(s, j)->key);
            goto done;
        }
    const char *keys[MAX_IO];
    for (int o = 0; o < n_out && o < MAX_IO; o++) keys[o] = tfc_saved_model_signature_output(s, o)->key;
    if (n_out > MAX_IO || !(paths = calloc((size_t)n_out + 1, sizeof *paths))) goto done;
    if (outdir && !tfc_tool_output_paths(prog, outdir, keys, n_out, overwrite, paths)) goto done;
    if (!tfc_saved_model_signature_call(s, in, n_in, out, MAX_IO, &st)) {
        fprintf(stderr, "%s: %s: %s\n", prog, tfc_code_name(st.code), st.msg);
        goto done;
    }
    for (int o = 0; o < n_out; o++) {
        char sb[TFC_SHAPE_STR];
        printf("Result for output key %s:\n%s %s\n", keys[o], tfc_dtype_name(tfc_tensor_dtype(out[o])),
               tfc_shape_str(tfc_tensor_shape(out[o]), sb, sizeof sb));
        if (!outdir) continue;
        if (!tfc_npy_write(out[o], paths[o], &st)) {
            fprintf(stderr, "%s: %s: %s\n", prog, paths[o], st.msg);
            goto done;
        }
        printf("Output %s is saved to %s\n", keys[o], paths[o]);
    }
    rc = 0;
done:
    for (int i = 0; i < MAX_IO; i++) {
        tfc_tensor_unref(in[i]);
        tfc_tensor_unref(out[i]);
    }
    free(paths);
    tfc_saved_model_free(m);
    tfc_ctx_free(ctx);
    return rc;
}

void tfc_tool_saved_model_usage(FILE *f) {
    fprintf(f, "  saved_model show --dir D [--tag_set serve] [--signature_def K] [--all]\n"
               "  saved_model run --dir D --tag_set serve --signature_def K --inputs 'x=x.npy' [--input_exprs 'y=[1,2]']\n"
               "                  --outdir O [--overwrite]   (TensorFlow's saved_model_cli)\n");
}

int tfc_tool_saved_model(int argc, char **argv) {
    opts o = {0};
    if (argc < 1 || (strcmp(argv[0], "show") && strcmp(argv[0], "run"))) {
        tfc_tool_saved_model_usage(stderr);
        return 2;
    }
    const bool run = !strcmp(argv[0], "run");
    int rc = parse(run ? "tfc saved_model run" : "tfc saved_model show", argc - 1, argv + 1, &o);
    if (rc) return rc;
    if (!run) return show(&o);
    if (!o.tag_set || !o.signature_def || (!o.inputs && !o.input_exprs)) {
        fprintf(stderr, "tfc saved_model run: --tag_set, --signature_def and --inputs or --input_exprs are required\n");
        return 2;
    }
    return tfc_tool_run_signature("tfc saved_model run", o.dir, o.tag_set, o.signature_def, o.inputs, o.input_exprs,
                                  o.outdir, o.overwrite);
}
