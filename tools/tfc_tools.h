/* The `tfc` command's subcommands, one file each (tools/tfc_<name>.c). */
#ifndef TFC_TOOLS_H
#define TFC_TOOLS_H

#include <stdio.h>

/* `tfc graph ...`: argv[0] is the action ("show"). Returns the process exit code. */
int tfc_tool_graph(int argc, char **argv);
void tfc_tool_graph_usage(FILE *f);
/* `tfc graph run ...` (argv after "run"). */
int tfc_tool_graph_run(int argc, char **argv);

/* `tfc ps ...` / `tfc worker ...` (job "ps" or "worker"; argv after the job). */
int tfc_tool_ps(const char *job, int argc, char **argv);
void tfc_tool_ps_usage(FILE *f);

#endif
