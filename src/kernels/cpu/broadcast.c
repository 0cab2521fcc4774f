#include "core/size_check.h"
#include "kernels/cpu/broadcast.h"

void tfc_bcast_init(tfc_bcast *bc, const tfc_shape *a, const tfc_shape *b, const tfc_shape *out) {
    int r = out->rank;
    int64_t ad[TFC_MAX_RANK], bd[TFC_MAX_RANK];
    for (int i = 0; i < r; i++) {
        int ia = i - (r - a->rank), ib = i - (r - b->rank);
        ad[i] = ia >= 0 ? a->dims[ia] : 1;
        bd[i] = ib >= 0 ? b->dims[ib] : 1;
    }
    bc->same = tfc_shape_equal(a, out) && tfc_shape_equal(b, out);
    /* Merge adjacent dims that broadcast the same way, so [2,3,4]+[2,3,4] becomes one dim of 24. */
    int m = 0;
    int64_t od[TFC_MAX_RANK], ma[TFC_MAX_RANK], mb[TFC_MAX_RANK];
    for (int i = 0; i < r; i++) {
        if (out->dims[i] == 1) continue;
        bool ab = ad[i] == 1, bb = bd[i] == 1;
        if (m > 0 && ((ma[m - 1] == 1) == ab) && ((mb[m - 1] == 1) == bb) && ((od[m - 1] != 1))) {
            od[m - 1] = tfc_dims_product((int64_t[]){od[m - 1], out->dims[i]}, 0, 2);
            ma[m - 1] = ab ? 1 : od[m - 1];
            mb[m - 1] = bb ? 1 : od[m - 1];
        } else {
            od[m] = out->dims[i];
            ma[m] = ab ? 1 : od[m];
            mb[m] = bb ? 1 : od[m];
            m++;
        }
    }
    if (m == 0) {
        od[0] = 1;
        ma[0] = mb[0] = 1;
        m = 1;
    }
    bc->rank = m;
    int64_t sa = 1, sb = 1;
    for (int i = m - 1; i >= 0; i--) {
        bc->out_dims[i] = od[i];
        bc->a_strides[i] = ma[i] == 1 && od[i] != 1 ? 0 : sa;
        bc->b_strides[i] = mb[i] == 1 && od[i] != 1 ? 0 : sb;
        sa *= ma[i];
        sb *= mb[i];
    }
    bc->inner = od[m - 1];
    bc->rows = 1;
    for (int i = 0; i < m - 1; i++) bc->rows *= od[i];
    bc->a_inner = bc->a_strides[m - 1] ? 1 : 0;
    bc->b_inner = bc->b_strides[m - 1] ? 1 : 0;
}

void tfc_bcast_row(const tfc_bcast *bc, int64_t r, int64_t *a_off, int64_t *b_off) {
    int64_t ao = 0, bo = 0;
    for (int i = bc->rank - 2; i >= 0; i--) {
        int64_t d = bc->out_dims[i];
        int64_t idx = r % d;
        r /= d;
        ao += idx * bc->a_strides[i];
        bo += idx * bc->b_strides[i];
    }
    *a_off = ao;
    *b_off = bo;
}
