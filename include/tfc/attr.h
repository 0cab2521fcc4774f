/* tfc — op attributes as passed to tfc_execute (TensorFlow's AttrValue kinds). A caller passes an array
 * of tfc_attr; attrs the op defines but the caller omits take the op's default, and type attrs ("T",
 * "Tidx", "N", ...) are inferred from the inputs when omitted. Strings and lists are borrowed for the
 * duration of the call only. */
#ifndef TFC_ATTR_H
#define TFC_ATTR_H

#include "tfc/dtype.h"
#include "tfc/shape.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tfc_tensor tfc_tensor;

typedef enum {
    TFC_ATTR_NONE = 0,
    TFC_ATTR_INT,       /* v.i */
    TFC_ATTR_FLOAT,     /* v.f */
    TFC_ATTR_BOOL,      /* v.b */
    TFC_ATTR_TYPE,      /* v.type */
    TFC_ATTR_STRING,    /* v.s (NUL-terminated) */
    TFC_ATTR_SHAPE,     /* v.ints with n dims; n = -1 for unknown rank */
    TFC_ATTR_TENSOR,    /* v.tensor */
    TFC_ATTR_LIST_INT,  /* v.ints, n */
    TFC_ATTR_LIST_FLOAT,/* v.floats, n */
    TFC_ATTR_LIST_TYPE, /* v.types, n */
    TFC_ATTR_LIST_STRING, /* v.strs, n */
    TFC_ATTR_LIST_SHAPE, /* v.shapes, n (a shape of rank -1 is unknown) */
    TFC_ATTR_FUNC,      /* v.s: the name of a function in the graph's library (TensorFlow's func attr) */
    TFC_ATTR_LIST_FUNC, /* v.strs, n: function names (Case's branches) */
} tfc_attr_kind;

typedef struct tfc_attr {
    const char *name;
    tfc_attr_kind kind;
    int n;
    union {
        int64_t i;
        double f;
        bool b;
        tfc_dtype type;
        const char *s;
        const int64_t *ints;
        const double *floats;
        const tfc_dtype *types;
        const char *const *strs;
        const tfc_tensor *tensor;
        const tfc_shape *shapes;
    } v;
} tfc_attr;

#define TFC_ATTR_I(nm, x) ((tfc_attr){.name = (nm), .kind = TFC_ATTR_INT, .v.i = (x)})
#define TFC_ATTR_F(nm, x) ((tfc_attr){.name = (nm), .kind = TFC_ATTR_FLOAT, .v.f = (x)})
#define TFC_ATTR_B(nm, x) ((tfc_attr){.name = (nm), .kind = TFC_ATTR_BOOL, .v.b = (x)})
#define TFC_ATTR_T(nm, x) ((tfc_attr){.name = (nm), .kind = TFC_ATTR_TYPE, .v.type = (x)})
#define TFC_ATTR_S(nm, x) ((tfc_attr){.name = (nm), .kind = TFC_ATTR_STRING, .v.s = (x)})
#define TFC_ATTR_INTS(nm, p, cnt) ((tfc_attr){.name = (nm), .kind = TFC_ATTR_LIST_INT, .n = (cnt), .v.ints = (p)})
#define TFC_ATTR_FLOATS(nm, p, cnt) ((tfc_attr){.name = (nm), .kind = TFC_ATTR_LIST_FLOAT, .n = (cnt), .v.floats = (p)})
#define TFC_ATTR_SHAPES(nm, p, cnt) ((tfc_attr){.name = (nm), .kind = TFC_ATTR_LIST_SHAPE, .n = (cnt), .v.shapes = (p)})
#define TFC_ATTR_FN(nm, x) ((tfc_attr){.name = (nm), .kind = TFC_ATTR_FUNC, .v.s = (x)})
#define TFC_ATTR_SHAPE_(nm, p, cnt) ((tfc_attr){.name = (nm), .kind = TFC_ATTR_SHAPE, .n = (cnt), .v.ints = (p)})

/* Resolved attribute set of one op call: every attr of the op def present (defaults filled, type attrs
 * inferred). Read it with the getters below; they return the default `dflt` when the attr is absent or of
 * another kind. Owned by the framework; valid during kernel, shape and gradient functions. */
typedef struct tfc_attrs tfc_attrs;
/* The attr named `name` (borrowed, valid as long as `a`), or NULL when absent. Scalar getters: the value of an int,
 * float, bool, type or string attr, or `dflt` when it is absent or of another kind (strings are borrowed). */
TFC_API const tfc_attr *tfc_attrs_find(const tfc_attrs *a, const char *name);
TFC_API int64_t tfc_attrs_int(const tfc_attrs *a, const char *name, int64_t dflt);
TFC_API double tfc_attrs_float(const tfc_attrs *a, const char *name, double dflt);
TFC_API bool tfc_attrs_bool(const tfc_attrs *a, const char *name, bool dflt);
TFC_API tfc_dtype tfc_attrs_type(const tfc_attrs *a, const char *name, tfc_dtype dflt);
TFC_API const char *tfc_attrs_string(const tfc_attrs *a, const char *name, const char *dflt);
/* List attrs: returns the element pointer and sets *n (0 and NULL when absent). */
TFC_API const int64_t *tfc_attrs_ints(const tfc_attrs *a, const char *name, int *n);
TFC_API const double *tfc_attrs_floats(const tfc_attrs *a, const char *name, int *n);
TFC_API const tfc_shape *tfc_attrs_shapes(const tfc_attrs *a, const char *name, int *n);
/* Number of attrs in the set, and the i-th of them (borrowed; NULL when i is outside [0, count)), in the op def's
 * order. */
TFC_API int tfc_attrs_count(const tfc_attrs *a);
TFC_API const tfc_attr *tfc_attrs_at(const tfc_attrs *a, int i);

#ifdef __cplusplus
}
#endif
#endif
