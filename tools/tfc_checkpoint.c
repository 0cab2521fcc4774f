/* `tfc checkpoint inspect`: TensorFlow's inspect_checkpoint tool (python -m
 * tensorflow.python.tools.inspect_checkpoint). Without --tensor_name or --all_tensors it prints the checkpoint's
 * debug string ("name (DT_FLOAT) [2,3]" per tensor); --all_tensor_names lists "tensor: N (float32) [2, 3]"
 * lines, --all_tensors adds each value, --tensor_name N prints one; then "# Total number of params: K". Values
 * print as numpy's str of the array. */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfc/tfc.h"
#include "tfc_tools.h"

void tfc_tool_checkpoint_usage(FILE *f) {
    fprintf(f, "  checkpoint inspect --file_name PREFIX [--tensor_name N] [--all_tensors] [--all_tensor_names]\n"
               "                 print a checkpoint's tensors, as TensorFlow's inspect_checkpoint\n");
}

/* DataType_Name of TensorFlow's enum. */
static const char *dt_enum_name(int dt) {
    static const char *const names[] = {
        "DT_INVALID", "DT_FLOAT", "DT_DOUBLE", "DT_INT32", "DT_UINT8", "DT_INT16", "DT_INT8", "DT_STRING",
        "DT_COMPLEX64", "DT_INT64", "DT_BOOL", "DT_QINT8", "DT_QUINT8", "DT_QINT32", "DT_BFLOAT16", "DT_QINT16",
        "DT_QUINT16", "DT_UINT16", "DT_COMPLEX128", "DT_HALF", "DT_RESOURCE", "DT_VARIANT", "DT_UINT32", "DT_UINT64",
        "DT_FLOAT8_E5M2", "DT_FLOAT8_E4M3FN", "DT_FLOAT8_E4M3FNUZ", "DT_FLOAT8_E4M3B11FNUZ", "DT_FLOAT8_E5M2FNUZ",
        "DT_INT4", "DT_UINT4", "DT_INT2"};
    return dt >= 0 && dt < (int)(sizeof names / sizeof *names) ? names[dt] : "DT_INVALID";
}

/* tf.DType.name: "float32", "string", ... */
static const char *dt_py_name(int dt) {
    static const char *const names[] = {
        "invalid", "float32", "float64", "int32", "uint8", "int16", "int8", "string", "complex64", "int64", "bool",
        "qint8", "quint8", "qint32", "bfloat16", "qint16", "quint16", "uint16", "complex128", "float16", "resource",
        "variant", "uint32", "uint64", "float8_e5m2", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e4m3b11fnuz",
        "float8_e5m2fnuz", "int4", "uint4", "int2"};
    return dt >= 0 && dt < (int)(sizeof names / sizeof *names) ? names[dt] : "invalid";
}

/* ---- numpy's str(array) ----
 * Floats in the shortest form that reads back as the same value (numpy's dragon4 "unique" mode), with a
 * trailing "." for integral values, all elements padded to one width; scientific notation when the largest
 * magnitude is >= 1e16 or the smallest non-zero < 1e-4; rows wrap at 75 columns; arrays over 1000 elements show
 * 3 items at each edge around "...". */
typedef struct {
    const tfc_tensor *t;
    tfc_dtype dt;
    bool sci, floating;
    int lpad, rpad, width;
    int sci_digits; /* scientific mode: fraction digits of every mantissa (the most any element needs, <= 8) */
    int exp_digits; /* scientific mode: exponent digits of every element (at least 2) */
    const tfc_shape *shape;
    bool summarize;
} np_fmt;

static bool is_float(tfc_dtype dt) { return tfc_dtype_is_floating(dt); }

static double elem(const np_fmt *f, int64_t i) { return tfc_tensor_get_f64(f->t, i); }

/* Shortest %.*g (or %.*e) digits that round-trip at the dtype's precision. */
static int shortest_prec(double v, tfc_dtype dt, bool sci) {
    char buf[64];
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, sizeof buf, sci ? "%.*e" : "%.*g", sci ? p - 1 : p, v);
        double r = strtod(buf, NULL);
        bool same = dt == TFC_DOUBLE     ? r == v
                    : dt == TFC_FLOAT    ? (float)r == (float)v
                    : dt == TFC_HALF     ? tfc_half_to_float(tfc_half_from_float((float)r)) == (float)v
                                         : tfc_bfloat16_to_float(tfc_bfloat16_from_float((float)r)) == (float)v;
        if (same) return p;
    }
    return 17;
}

/* Python's repr of bytes: b'...' (b"..." when the bytes hold ' but no "), into a new buffer. */
static char *bytes_repr(const char *s, size_t len) {
    bool dq = memchr(s, '\'', len) && !memchr(s, '"', len);
    char q = dq ? '"' : '\'';
    char *out = malloc(4 * len + 4), *o = out;
    if (!out) return NULL;
    *o++ = 'b';
    *o++ = q;
    for (size_t k = 0; k < len; k++) {
        unsigned char c = (unsigned char)s[k];
        if (c == (unsigned char)q || c == '\\') o += sprintf(o, "\\%c", c);
        else if (c == '\n') o += sprintf(o, "\\n");
        else if (c == '\t') o += sprintf(o, "\\t");
        else if (c == '\r') o += sprintf(o, "\\r");
        else if (c < 32 || c >= 127) o += sprintf(o, "\\x%02x", c);
        else *o++ = (char)c;
    }
    *o++ = q;
    *o = 0;
    return out;
}

/* Drops trailing zeros of a fixed-point mantissa's fraction ("0.50000" -> "0.5", "2.000" -> "2."). */
static void trim_zeros(char *m) {
    char *dot = strchr(m, '.');
    if (!dot) return;
    char *e = m + strlen(m);
    while (e > dot + 1 && e[-1] == '0') *--e = 0;
}

#define NP_PRECISION 8 /* numpy's default printoptions precision (floatmode "maxprec") */

static void fmt_elem(const np_fmt *f, int64_t i, char *out, size_t n) {
    if (f->dt == TFC_STRING) { /* see padded_elem */
        out[0] = 0;
        return;
    }
    double v = elem(f, i);
    if (f->dt == TFC_BOOL) {
        snprintf(out, n, "%s", v != 0 ? "True" : "False");
        return;
    }
    if (!f->floating) {
        if (f->dt == TFC_INT64) snprintf(out, n, "%" PRId64, ((const int64_t *)tfc_tensor_data(f->t))[i]);
        else snprintf(out, n, "%.0f", v);
        return;
    }
    if (isnan(v)) {
        snprintf(out, n, "nan");
        return;
    }
    if (isinf(v)) {
        snprintf(out, n, "%sinf", v < 0 ? "-" : "");
        return;
    }
    if (f->sci) {
        char m[64];
        snprintf(m, sizeof m, "%.*e", f->sci_digits, v);
        char *e = strchr(m, 'e');
        *e = 0;
        int ex = atoi(e + 1);
        snprintf(out, n, "%s%se%c%0*d", m, strchr(m, '.') ? "" : ".", ex < 0 ? '-' : '+', f->exp_digits, abs(ex));
        return;
    }
    int p = shortest_prec(v, f->dt, false);
    char g[96];
    snprintf(g, sizeof g, "%.*g", p, v);
    char *e = strchr(g, 'e');
    int decimals = 0;
    if (e) decimals = p - 1 - atoi(e + 1); /* %g chose exponent form for a value numpy prints positionally */
    else if (strchr(g, '.')) decimals = (int)strlen(strchr(g, '.') + 1);
    if (e || decimals > NP_PRECISION) {
        snprintf(g, sizeof g, "%.*f", decimals > NP_PRECISION ? NP_PRECISION : decimals > 0 ? decimals : 0, v);
        trim_zeros(g);
    }
    snprintf(out, n, "%s%s", g, strchr(g, '.') ? "" : ".");
}

/* Chars before the decimal point (floats), or the whole width (others). */
static void split_widths(const np_fmt *f, const char *s, int *left, int *right) {
    const char *dot = f->floating ? strchr(s, '.') : NULL;
    *left = dot ? (int)(dot - s) : (int)strlen(s);
    *right = dot ? (int)strlen(dot) : 0;
}

/* The element padded as numpy aligns a column: floats on the decimal point, numbers and bools to the right,
 * strings not at all. */
static char *padded_elem(const np_fmt *f, int64_t i) {
    if (f->dt == TFC_STRING) {
        size_t len;
        const char *s = tfc_tensor_string(f->t, i, &len);
        return bytes_repr(s, len);
    }
    char raw[128];
    fmt_elem(f, i, raw, sizeof raw);
    char *out = malloc(256);
    if (!out) return NULL;
    if (f->floating && !isfinite(elem(f, i))) { /* right-aligned in the whole column */
        snprintf(out, 256, "%*s", f->lpad + f->rpad, raw);
        return out;
    }
    int l, r;
    split_widths(f, raw, &l, &r);
    snprintf(out, 256, "%*s%s%*s", f->lpad - l, "", raw, f->floating ? f->rpad - r : 0, "");
    return out;
}

/* Whether element i is printed: with summarization, numpy formats (and shows) only the 3 leading and trailing
 * items of each dimension longer than 6. */
static bool shown(const np_fmt *f, int64_t i) {
    if (!f->summarize) return true;
    for (int d = f->shape->rank - 1; d >= 0; d--) {
        int64_t n = f->shape->dims[d], k = i % n;
        if (n > 6 && k >= 3 && k < n - 3) return false;
        i /= n;
    }
    return true;
}

static void np_prepare(np_fmt *f) {
    int64_t n = tfc_tensor_num_elements(f->t);
    f->floating = is_float(f->dt);
    f->summarize = n > 1000;
    if (f->floating) {
        double mx = 0, mn = INFINITY;
        for (int64_t i = 0; i < n; i++) {
            if (!shown(f, i)) continue;
            double a = fabs(elem(f, i));
            if (!isfinite(a)) continue;
            if (a > mx) mx = a;
            if (a != 0 && a < mn) mn = a;
        }
        /* numpy: 10^min(8, finfo(dtype).precision) */
        double cutoff = f->dt == TFC_HALF ? 1e3 : f->dt == TFC_BFLOAT16 ? 1e2 : f->dt == TFC_FLOAT ? 1e6 : 1e8;
        f->sci = mn != INFINITY && (mx >= cutoff || mn < 1e-4 || mx / mn > 1e3);
        f->exp_digits = 2;
        for (int64_t i = 0; f->sci && i < n; i++) {
            double v = elem(f, i);
            if (!shown(f, i) || !isfinite(v)) continue;
            int d = shortest_prec(v, f->dt, true) - 1;
            if (d > NP_PRECISION) d = NP_PRECISION;
            if (d > f->sci_digits) f->sci_digits = d;
            if (v != 0 && fabs(log10(fabs(v))) >= 99.5) f->exp_digits = 3;
        }
    }
    char buf[128];
    bool nonfinite = false, neginf = false;
    for (int64_t i = 0; f->dt != TFC_STRING && i < n; i++) {
        if (!shown(f, i)) continue;
        if (f->floating && !isfinite(elem(f, i))) {
            nonfinite = true;
            neginf = neginf || elem(f, i) < 0;
            continue;
        }
        fmt_elem(f, i, buf, sizeof buf);
        int l, r;
        split_widths(f, buf, &l, &r);
        if (l > f->lpad) f->lpad = l;
        if (r > f->rpad) f->rpad = r;
    }
    if (f->dt == TFC_BOOL) f->lpad = 5; /* numpy prints " True" in arrays */
    if (nonfinite) { /* room for "nan" / "-inf" */
        int need = 3 + (neginf ? 1 : 0) - f->rpad;
        if (f->lpad < need) f->lpad = need;
    }
    f->width = f->lpad + (f->floating ? f->rpad : 0);
}

/* Output with numpy's line handling: an element's right padding is held back and dropped when a line ends
 * there (numpy strips each wrapped line). */
typedef struct {
    int col, pending;
} np_out;

static void out_text(np_out *o, const char *s) {
    if (o->pending) printf("%*s", o->pending, "");
    o->col += o->pending + (int)strlen(s);
    o->pending = 0;
    fputs(s, stdout);
}

static void out_newlines(np_out *o, int n, int indent) {
    o->pending = 0;
    for (int k = 0; k < n; k++) putchar('\n');
    printf("%*s", indent, "");
    o->col = indent;
}

/* One word of the last dimension: wrapped as numpy's _extendLine (line width 75, less one for each enclosing
 * bracket and one for the closing bracket of this row). */
static void out_word(np_out *o, const char *w, bool first, int indent) {
    int len = (int)strlen(w);
    if (!first) {
        if (o->col + o->pending + 1 + len > 74 - indent) out_newlines(o, 1, indent + 1);
        else out_text(o, " ");
    }
    size_t n = strlen(w);
    while (n && w[n - 1] == ' ') n--;
    char *t = malloc(n + 1);
    if (!t) return;
    memcpy(t, w, n);
    t[n] = 0;
    out_text(o, t);
    o->pending = len - (int)n;
    free(t);
}

static void print_block(const np_fmt *f, int dim, int64_t base, int64_t stride, int indent, np_out *o) {
    int64_t n = f->shape->dims[dim];
    int64_t inner = stride / (n ? n : 1);
    bool lastdim = dim == f->shape->rank - 1;
    out_text(o, "[");
    for (int64_t i = 0; i < n; i++) {
        if (f->summarize && n > 6 && i == 3) {
            if (lastdim) {
                out_word(o, "...", false, indent);
            } else { /* a row of its own, separated as the rows around it */
                out_newlines(o, f->shape->rank - 1 - dim, indent + 1);
                out_text(o, "...");
            }
            i = n - 3;
        }
        if (lastdim) {
            char *buf = padded_elem(f, base + i);
            if (!buf) continue;
            out_word(o, buf, i == 0, indent);
            free(buf);
        } else {
            if (i > 0) out_newlines(o, f->shape->rank - 1 - dim, indent + 1);
            print_block(f, dim + 1, base + i * inner, inner, indent + 1, o);
        }
    }
    out_text(o, "]");
}

/* str() of a numpy float scalar: the shortest round-trip digits, positional ("1.0", "0.0001") for 1e-4 <= |v| <
 * 10^(precision+1) (1e16 for float64, 1e7 float32, 1e4 float16) or 0, else scientific ("1e+07", "5e-05"). */
static void scalar_float(const np_fmt *f, char *out, size_t n) {
    double v = elem(f, 0), a = fabs(v);
    if (isnan(v) || isinf(v)) {
        snprintf(out, n, "%s", isnan(v) ? "nan" : v < 0 ? "-inf" : "inf");
        return;
    }
    double cutoff = f->dt == TFC_DOUBLE ? 1e16 : f->dt == TFC_FLOAT ? 1e7 : f->dt == TFC_HALF ? 1e4 : 1e3;
    if (v == 0 || (a >= 1e-4 && a < cutoff)) {
        int p = shortest_prec(v, f->dt, false);
        char g[400];
        snprintf(g, sizeof g, "%.*g", p, v);
        char *e = strchr(g, 'e');
        if (e) {
            int decimals = p - 1 - atoi(e + 1);
            snprintf(g, sizeof g, "%.*f", decimals > 0 ? decimals : 0, v);
        }
        snprintf(out, n, "%.60s%s", g, strchr(g, '.') ? "" : ".0");
        return;
    }
    int p = shortest_prec(v, f->dt, true);
    char m[64];
    snprintf(m, sizeof m, "%.*e", p - 1, v);
    char *e = strchr(m, 'e');
    *e = 0;
    int ex = atoi(e + 1);
    snprintf(out, n, "%se%c%02d", m, ex < 0 ? '-' : '+', abs(ex));
}

static void print_array(const tfc_tensor *t) {
    np_fmt f = {.t = t, .dt = tfc_tensor_dtype(t), .shape = tfc_tensor_shape(t)};
    np_prepare(&f);
    if (f.shape->rank == 0) {
        char buf[128];
        if (f.floating) scalar_float(&f, buf, sizeof buf);
        else fmt_elem(&f, 0, buf, sizeof buf);
        char *str = f.dt == TFC_STRING ? padded_elem(&f, 0) : NULL;
        printf("%s\n", str ? str : buf);
        free(str);
        return;
    }
    if (tfc_tensor_num_elements(t) == 0) { /* numpy prints every empty array as [] */
        printf("[]\n");
        return;
    }
    np_out o = {0};
    print_block(&f, 0, 0, tfc_tensor_num_elements(t), 0, &o);
    putchar('\n');
}

/* sep "," for TensorShape::DebugString ("[4,3]"), ", " for a Python list ("[4, 3]"). */
static void print_shape(const tfc_shape *s, const char *sep) {
    putchar('[');
    for (int i = 0; i < s->rank; i++) printf("%s%" PRId64, i ? sep : "", s->dims[i]);
    putchar(']');
}

/* "tensor: NAME (float32) [4, 3]" */
static void print_tensor_line(const tfc_checkpoint_reader *r, const char *name) {
    tfc_status st = TFC_STATUS_INIT;
    int dt = 0;
    tfc_shape s = {0};
    tfc_checkpoint_reader_info(r, name, &dt, &s, &st);
    printf("tensor: %s (%s) ", name, dt_py_name(dt));
    print_shape(&s, ", ");
    putchar('\n');
}

/* Matches --name=value or --name value; *i advances past what was used. */
static bool flag_value(int argc, char **argv, int *i, const char *name, const char **out) {
    size_t n = strlen(name);
    const char *a = argv[*i];
    if (strncmp(a, "--", 2) != 0 || strncmp(a + 2, name, n) != 0) return false;
    if (a[2 + n] == '=') {
        *out = a + 3 + n;
        return true;
    }
    if (a[2 + n] == 0 && *i + 1 < argc) {
        *out = argv[++*i];
        return true;
    }
    return false;
}

static bool flag_bool(const char *a, const char *name, bool *out) {
    size_t n = strlen(name);
    if (strncmp(a, "--", 2) != 0 || strncmp(a + 2, name, n) != 0) return false;
    const char *v = a + 2 + n;
    if (!*v) return *out = true;
    if (strcmp(v, "=true") == 0 || strcmp(v, "=True") == 0 || strcmp(v, "=1") == 0) return *out = true;
    if (strcmp(v, "=false") == 0 || strcmp(v, "=False") == 0 || strcmp(v, "=0") == 0) return !(*out = false);
    return false;
}

static int inspect(int argc, char **argv) {
    const char *file_name = NULL, *tensor_name = "";
    bool all_tensors = false, all_names = false;
    for (int i = 0; i < argc; i++) {
        if (flag_value(argc, argv, &i, "file_name", &file_name) || flag_value(argc, argv, &i, "tensor_name", &tensor_name) ||
            flag_bool(argv[i], "all_tensors", &all_tensors) || flag_bool(argv[i], "all_tensor_names", &all_names))
            continue;
        fprintf(stderr, "tfc checkpoint inspect: unknown argument '%s'\n", argv[i]);
        return 2;
    }
    if (!file_name || !*file_name) {
        fprintf(stderr, "Usage: tfc checkpoint inspect --file_name=checkpoint_file_name [--tensor_name=tensor_to_print] "
                        "[--all_tensors] [--all_tensor_names]\n");
        return 1;
    }
    tfc_status st = TFC_STATUS_INIT;
    tfc_checkpoint_reader *r = tfc_checkpoint_reader_new(file_name, &st);
    if (!r) {
        printf("%s\n", st.msg);
        return 1;
    }
    int rc = 0;
    int64_t n = tfc_checkpoint_reader_size(r);
    if (all_tensors || all_names) {
        for (int64_t i = 0; i < n; i++) {
            const char *name = tfc_checkpoint_reader_name(r, i);
            print_tensor_line(r, name);
            if (!all_tensors) continue;
            tfc_tensor *t = tfc_checkpoint_reader_get_tensor(r, name, &st);
            if (t) print_array(t);
            else if (st.code == TFC_UNIMPLEMENTED) printf("<not convertible to a numpy dtype>\n");
            else {
                printf("%s\n", st.msg);
                rc = 1;
            }
            tfc_tensor_unref(t);
        }
    } else if (!*tensor_name) {
        for (int64_t i = 0; i < n; i++) {
            const char *name = tfc_checkpoint_reader_name(r, i);
            int dt;
            tfc_shape s;
            tfc_checkpoint_reader_info(r, name, &dt, &s, &st);
            printf("%s (%s) ", name, dt_enum_name(dt));
            print_shape(&s, ",");
            putchar('\n');
        }
        putchar('\n');
    } else if (!tfc_checkpoint_reader_has_tensor(r, tensor_name)) {
        printf("Tensor %s not found in checkpoint\n", tensor_name);
        tfc_checkpoint_reader_free(r);
        return 0;
    } else {
        print_tensor_line(r, tensor_name);
        tfc_tensor *t = tfc_checkpoint_reader_get_tensor(r, tensor_name, &st);
        if (t) print_array(t);
        else {
            printf("%s\n", st.msg);
            rc = 1;
        }
        tfc_tensor_unref(t);
    }
    /* "# Total number of params": the element counts of every tensor (1 for scalars, the object graph too) */
    int64_t total = 0;
    for (int64_t i = 0; i < n; i++) {
        tfc_shape s;
        int64_t k = 1;
        if (tfc_checkpoint_reader_info(r, tfc_checkpoint_reader_name(r, i), NULL, &s, &st) &&
            tfc_shape_num_elements(&s, &k, "tensor", &st))
            total += k;
    }
    printf("# Total number of params: %" PRId64 "\n", total);
    tfc_checkpoint_reader_free(r);
    return rc;
}

int tfc_tool_checkpoint(int argc, char **argv) {
    if (argc >= 1 && strcmp(argv[0], "inspect") == 0) return inspect(argc - 1, argv + 1);
    fprintf(stderr, "usage:\n");
    tfc_tool_checkpoint_usage(stderr);
    return 2;
}
