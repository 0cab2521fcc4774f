/* The op families. Each family file (src/ops/<fam>_ops.c) defines tfc_op_def values and a NULL-terminated
 * array `tfc_ops_<fam>` listing them: adding an op is one definition plus one line in its family's array,
 * adding a family is one line here. The registry, `tfc ops` and the registry-driven tests iterate it. */
#ifndef TFC_OPS_OP_LIST_H
#define TFC_OPS_OP_LIST_H

#define TFC_OP_FAMILIES \
    TFC_OP_FAMILY(math) \
    TFC_OP_FAMILY(reduction) \
    TFC_OP_FAMILY(linalg) \
    TFC_OP_FAMILY(array) \
    TFC_OP_FAMILY(indexing) \
    TFC_OP_FAMILY(nn) \
    TFC_OP_FAMILY(conv) \
    TFC_OP_FAMILY(fused) \
    TFC_OP_FAMILY(fused_pool) \
    TFC_OP_FAMILY(random) \
    TFC_OP_FAMILY(resource) \
    TFC_OP_FAMILY(training) \
    TFC_OP_FAMILY(parsing) \
    TFC_OP_FAMILY(image) \
    TFC_OP_FAMILY(string) \
    TFC_OP_FAMILY(graph) \
    TFC_OP_FAMILY(functional) \
    TFC_OP_FAMILY(control_flow) \
    TFC_OP_FAMILY(lookup) \

#endif
