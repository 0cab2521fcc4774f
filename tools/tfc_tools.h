/* The `tfc` command's subcommands, one file each (tools/tfc_<name>.c). */
#ifndef TFC_TOOLS_H
#define TFC_TOOLS_H

#include <stdbool.h>
#include <stdio.h>

#include "tfc/serving.h"
#include "tfc/tensor.h"

/* `tfc graph ...`: argv[0] is the action ("show"). Returns the process exit code. */
int tfc_tool_graph(int argc, char **argv);
void tfc_tool_graph_usage(FILE *f);
/* `tfc graph run ...` (argv after "run"). */
int tfc_tool_graph_run(int argc, char **argv);
/* `tfc checkpoint inspect ...` (tfc_checkpoint.c). */
int tfc_tool_checkpoint(int argc, char **argv);
void tfc_tool_checkpoint_usage(FILE *f);

/* `tfc saved_model show|run ...` (tfc_saved_model.c) and `tfc model run ...` (tfc_model.c). */
int tfc_tool_saved_model(int argc, char **argv);
void tfc_tool_saved_model_usage(FILE *f);
int tfc_tool_model(int argc, char **argv);
void tfc_tool_model_usage(FILE *f);
/* Loads the SavedModel in dir (tag_set: comma-separated tags), feeds signature `key` from --inputs / --input_exprs
 * strings (modified) and writes each output to outdir/<key>.npy (outdir may be NULL: print only). Exit code. */
int tfc_tool_run_signature(const char *prog, const char *dir, const char *tag_set, const char *key, char *inputs,
                           char *exprs, const char *outdir, bool overwrite);

/* saved_model_cli's argument syntax (tfc_feeds.c). */
typedef struct tfc_tool_pair {
    const char *key, *value;
} tfc_tool_pair;
/* Splits 'k=v;k2=v2' (s modified) into out; -1 (message printed) for a malformed entry or more than max. */
int tfc_tool_parse_pairs(char *s, tfc_tool_pair *out, int max, const char *prog, const char *flag);
/* A number or nested list of numbers ("[[1, 2.5], [3, 4]]", True/False), or np.ones(shape) / np.zeros(shape),
 * as a tensor of dtype. */
tfc_tensor *tfc_tool_parse_literal(const char *expr, tfc_dtype dtype, tfc_status *st);
/* Fills paths[o] = outdir/keys[o].npy, refusing existing files without overwrite, and creates outdir. */
bool tfc_tool_output_paths(const char *prog, const char *outdir, const char *const *keys, int n, bool overwrite,
                           char (*paths)[4096]);

/* The Keras-file row of `tfc model run` (tfc_model_keras.c): whether path names a .keras / .h5 file, and the run
 * (inputs is modified). Exit code. */
bool tfc_tool_is_keras_file(const char *path);
int tfc_tool_run_keras_model(const char *path, char *inputs, const char *outdir, bool overwrite);

/* `tfc ps ...` / `tfc worker ...` (job "ps" or "worker"; argv after the job). */
int tfc_tool_ps(const char *job, int argc, char **argv);
/* `tfc serve ...` (tfc_serve.c): tensorflow_model_server's flags. */
int tfc_tool_serve(int argc, char **argv);
void tfc_tool_serve_usage(FILE *f);
/* The parsed `tfc serve` command line: the model server's options. */
typedef struct tfc_tool_serve_flags {
    tfc_model_server_opts opts;
} tfc_tool_serve_flags;
void tfc_tool_ps_usage(FILE *f);

/* `tfc data dispatcher|worker ...` (tfc_data.c; argv after "data"). */
int tfc_tool_data(int argc, char **argv);
void tfc_tool_data_usage(FILE *f);

#endif
