/* Image codecs: PNG through libpng, JPEG through libjpeg(-turbo), with TensorFlow's conversions
 * (tensorflow/core/lib/png/png_io.cc, lib/jpeg/jpeg_mem.cc, kernels/image/decode_image_op.cc):
 *   - every decode op sniffs the format from the magic bytes and decodes PNG and JPEG alike;
 *   - PNG: the same libpng transformations as TensorFlow (alpha added/stripped/taken from tRNS, palettes
 *     expanded, 16-bit sources stripped to their high byte for uint8, 8-bit sources widened to 16 bits as
 *     v * 257, RGB->gray with libpng's 0.299/0.587 weights), so the pixels are bit-identical;
 *   - JPEG: libjpeg with TensorFlow's flags (IFAST DCT unless DecodeJpeg asks INTEGER_ACCURATE, fancy
 *     upsampling, 1/ratio scaling), CMYK converted to RGB, truncated data recovered only on request;
 *   - uint16 output of 8-bit data is v * 256 for JPEG and BMP, float output v * (1/255) or v * (1/65535);
 *   - BMP (DecodeImage only): TensorFlow's reader of uncompressed 8-, 24- and 32-bit files.
 * libpng and libjpeg report errors by longjmp: every decoder keeps its state in a struct reached through a
 * pointer, so nothing the setjmp function reads is clobbered, and corrupt data yields INVALID_ARGUMENT
 * naming the op and what failed, never a crash. */
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>
#include <png.h>

#include "kernels/cpu/image_internal.h"

typedef enum { FMT_UNKNOWN, FMT_PNG, FMT_JPEG, FMT_GIF, FMT_BMP, FMT_WEBP } img_format;

static img_format classify(const unsigned char *d, size_t n) {
    if (n >= 3 && !memcmp(d, "\xff\xd8\xff", 3)) return FMT_JPEG;
    if (n >= 8 && !memcmp(d, "\x89PNG\r\n\x1a\n", 8)) return FMT_PNG;
    if (n >= 4 && !memcmp(d, "GIF8", 4)) return FMT_GIF;
    if (n >= 2 && !memcmp(d, "BM", 2)) return FMT_BMP;
    if (n > 12 && !memcmp(d, "RIFF", 4) && !memcmp(d + 8, "WEBP", 4)) return FMT_WEBP;
    return FMT_UNKNOWN;
}

static bool bad(const tfc_kernel_ctx *k, tfc_status *st, const char *fmt, const char *detail) {
    char m[200];
    snprintf(m, sizeof m, fmt, detail ? detail : "");
    return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: %s", k->op->name, m);
}

/* ---- PNG ------------------------------------------------------------------------------------------- */

typedef struct {
    png_structp png;
    png_infop info;
    const unsigned char *data;
    size_t left;
    char err[128];
    png_uint_32 width, height;
    int bit_depth, color_type, channels, passes;
    bool synth16; /* 8-bit source, 16-bit output: widen after reading */
} png_dec;

static void png_on_error(png_structp png, png_const_charp msg) {
    png_dec *d = png_get_error_ptr(png);
    snprintf(d->err, sizeof d->err, "%s", msg);
    png_longjmp(png, 1);
}
static void png_on_warning(png_structp png, png_const_charp msg) { (void)png, (void)msg; }

static void png_read_mem(png_structp png, png_bytep out, size_t n) {
    png_dec *d = png_get_io_ptr(png);
    if (n > d->left) png_error(png, "Read beyond the end of the PNG data");
    memcpy(out, d->data, n);
    d->data += n;
    d->left -= n;
}

/* libpng's memory: a decode allocates its structs, row buffers and zlib's state and 32 KiB window (~45 KiB in
 * about ten blocks) and frees them all at the end. Blocks too large for malloc's per-thread caches cost more
 * there than decoding a small image, so each thread keeps the blocks freed last (at most PNG_CACHE_BLOCKS of at
 * most PNG_CACHE_BYTES together, the oldest going first) and hands them out again for the same sizes; a thread's
 * blocks are freed when it exits. Off under AddressSanitizer, so that use-after-free stays detectable. */
#define PNG_CACHE_BLOCKS 16
#define PNG_CACHE_BYTES ((size_t)256 << 10)

typedef struct {
    int n;
    size_t bytes;
    void *p[PNG_CACHE_BLOCKS]; /* blocks as malloc returned them, each headed by its size */
} png_cache;

typedef union {
    size_t size;
    max_align_t align;
} png_block_hdr;

#if defined(__SANITIZE_ADDRESS__)
static const bool png_cache_on = false;
#else
static const bool png_cache_on = true;
#endif
static _Thread_local png_cache tls_png_cache;
static pthread_key_t png_cache_key;
static bool png_cache_key_ok;
static pthread_once_t png_cache_once = PTHREAD_ONCE_INIT;
static _Thread_local bool png_cache_registered;

static void png_cache_release(void *arg) {
    png_cache *c = arg;
    for (int i = 0; i < c->n; i++) free(c->p[i]);
    c->n = 0;
    c->bytes = 0;
}

static void png_cache_key_make(void) {
    png_cache_key_ok = pthread_key_create(&png_cache_key, png_cache_release) == 0;
}

static png_voidp png_cache_malloc(png_structp png, png_alloc_size_t size) {
    (void)png;
    png_cache *c = &tls_png_cache;
    for (int i = c->n - 1; i >= 0; i--) {
        png_block_hdr *h = c->p[i];
        if (h->size == size) {
            memmove(c->p + i, c->p + i + 1, (size_t)(c->n - i - 1) * sizeof c->p[0]); /* keep the age order */
            c->n--;
            c->bytes -= size;
            return h + 1;
        }
    }
    if (size > SIZE_MAX - sizeof(png_block_hdr)) return NULL;
    png_block_hdr *h = malloc(sizeof *h + size);
    if (!h) return NULL;
    h->size = size;
    return h + 1;
}

static void png_cache_free(png_structp png, png_voidp ptr) {
    (void)png;
    if (!ptr) return;
    png_block_hdr *h = (png_block_hdr *)ptr - 1;
    png_cache *c = &tls_png_cache;
    if (png_cache_on && !png_cache_registered) { /* the thread's blocks go when it exits */
        pthread_once(&png_cache_once, png_cache_key_make);
        png_cache_registered = png_cache_key_ok && pthread_setspecific(png_cache_key, c) == 0;
    }
    if (!png_cache_registered || h->size > PNG_CACHE_BYTES) {
        free(h);
        return;
    }
    /* the oldest blocks make room (sizes that vary from image to image, such as a chunk's buffer, age out) */
    int drop = 0;
    size_t bytes = c->bytes;
    while (drop < c->n && (c->n - drop >= PNG_CACHE_BLOCKS || bytes + h->size > PNG_CACHE_BYTES))
        bytes -= ((png_block_hdr *)c->p[drop++])->size;
    for (int i = 0; i < drop; i++) free(c->p[i]);
    memmove(c->p, c->p + drop, (size_t)(c->n - drop) * sizeof c->p[0]);
    c->n -= drop;
    c->bytes = bytes + h->size;
    c->p[c->n++] = h;
}

static void png_dec_free(png_dec *d) {
    if (d->png) png_destroy_read_struct(&d->png, d->info ? &d->info : NULL, NULL);
    d->png = NULL;
    d->info = NULL;
}

/* Reads the header and sets up TensorFlow's transformations for `channels` (0 = the image's own) of
 * `bits` (8 or 16) bits. False with d->err set on corrupt data. */
static bool png_dec_init(png_dec *d, int channels, int bits) {
    d->channels = channels;
    d->png = png_create_read_struct_2(PNG_LIBPNG_VER_STRING, d, png_on_error, png_on_warning, NULL, png_cache_malloc,
                                      png_cache_free);
    if (!d->png) {
        snprintf(d->err, sizeof d->err, "out of memory");
        return false;
    }
    if (setjmp(png_jmpbuf(d->png))) {
        png_dec_free(d);
        return false;
    }
    d->info = png_create_info_struct(d->png);
    if (!d->info) png_error(d->png, "out of memory");
    png_set_read_fn(d->png, d, png_read_mem);
    png_read_info(d->png, d->info);
    png_get_IHDR(d->png, d->info, &d->width, &d->height, &d->bit_depth, &d->color_type, NULL, NULL, NULL);
    if (d->width == 0 || d->height == 0) png_error(d->png, "invalid dimensions");
    const bool trns = png_get_valid(d->png, d->info, PNG_INFO_tRNS) != 0;
    if (d->channels == 0)
        d->channels = d->color_type == PNG_COLOR_TYPE_PALETTE ? (trns ? 4 : 3) : png_get_channels(d->png, d->info);
    const bool alpha = (d->color_type & PNG_COLOR_MASK_ALPHA) != 0;
    if ((d->channels & 1) == 0) { /* alpha wanted */
        if (!alpha) {
            if (trns) png_set_tRNS_to_alpha(d->png);
            else png_set_add_alpha(d->png, (png_uint_32)((1 << d->bit_depth) - 1), PNG_FILLER_AFTER);
        }
    } else if (alpha || trns) {
        png_set_strip_alpha(d->png);
    }
    if (d->bit_depth > 8 && bits <= 8) png_set_strip_16(d->png);
    d->synth16 = d->bit_depth <= 8 && bits == 16;
    png_set_packing(d->png);
    d->passes = png_set_interlace_handling(d->png);
    if (bits > 8) {
        const uint16_t one = 1;
        if (*(const unsigned char *)&one == 1) png_set_swap(d->png); /* little-endian host */
    }
    if (d->color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(d->png);
    const bool want_gray = d->channels < 3, is_gray = !(d->color_type & PNG_COLOR_MASK_COLOR);
    if (is_gray && d->bit_depth < 8) png_set_expand_gray_1_2_4_to_8(d->png);
    if (want_gray && !is_gray) png_set_rgb_to_gray(d->png, 1, 0.299, 0.587);
    if (!want_gray && is_gray) png_set_gray_to_rgb(d->png);
    png_read_update_info(d->png, d->info);
    return true;
}

/* Reads every pass of every row into out (rows `stride` bytes apart) and the trailing chunks. */
static bool png_dec_finish(png_dec *d, unsigned char *out, size_t stride) {
    if (setjmp(png_jmpbuf(d->png))) {
        png_dec_free(d);
        return false;
    }
    for (int p = 0; p < d->passes; p++)
        for (png_uint_32 y = 0; y < d->height; y++) png_read_row(d->png, out + (size_t)y * stride, NULL);
    png_read_end(d->png, d->info);
    png_dec_free(d);
    if (d->synth16) { /* widen each row in place, from its end: v -> v * 257 (v << 8 | v) */
        const size_t n = (size_t)d->width * (size_t)d->channels;
        for (png_uint_32 y = 0; y < d->height; y++) {
            unsigned char *row = out + (size_t)y * stride;
            uint16_t *w = (uint16_t *)row;
            for (size_t i = n; i-- > 0;) w[i] = (uint16_t)(row[i] * 257u);
        }
    }
    return true;
}

static bool decode_png(tfc_kernel_ctx *k, const unsigned char *data, size_t n, int channels, tfc_dtype dt,
                       tfc_status *st) {
    png_dec *d = tfc_calloc(1, sizeof *d); /* on the heap: longjmp leaves it intact */
    if (!d) return tfc_status_oom(st, k->op->name, sizeof *d);
    d->data = data;
    d->left = n;
    const int bits = dt == TFC_UINT8 ? 8 : 16;
    bool ok = false;
    uint16_t *tmp = NULL;
    if (!png_dec_init(d, channels, bits)) {
        bad(k, st, "Invalid PNG. Failed to initialize decoder.%s", "");
        goto done;
    }
    const int64_t w = d->width, h = d->height, c = d->channels;
    if (w >= (1LL << 27) || h >= (1LL << 27) || w * h >= (1LL << 29)) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: PNG size too large for int: %lld by %lld", k->op->name,
                       (long long)w, (long long)h);
        goto done;
    }
    if (!tfc_kernel_alloc_output(k, 0, (int64_t[]){h, w, c}, 3, st)) goto done;
    const size_t stride = (size_t)(w * c) * (bits / 8);
    unsigned char *dst = k->out[0]->data;
    if (dt == TFC_FLOAT && !(dst = (unsigned char *)(tmp = tfc_malloc((size_t)h * stride)))) {
        tfc_status_oom(st, k->op->name, (size_t)h * stride);
        goto done;
    }
    if (!png_dec_finish(d, dst, stride)) {
        char m[64];
        snprintf(m, sizeof m, "%zu", n);
        bad(k, st, "Invalid PNG data, size %s", m);
        goto done;
    }
    if (dt == TFC_FLOAT) {
        const float scale = (float)(1.0 / 65535.0);
        float *o = k->out[0]->data;
        for (int64_t i = 0; i < h * w * c; i++) o[i] = (float)tmp[i] * scale;
    }
    ok = true;
done:
    png_dec_free(d);
    tfc_free(tmp);
    tfc_free(d);
    return ok;
}

/* ---- JPEG ------------------------------------------------------------------------------------------ */

typedef struct {
    struct jpeg_error_mgr pub;
    jmp_buf jmp;
    char msg[JMSG_LENGTH_MAX];
} jpeg_err;

static void jpeg_on_error(j_common_ptr cinfo) {
    jpeg_err *e = (jpeg_err *)cinfo->err;
    (*cinfo->err->format_message)(cinfo, e->msg);
    longjmp(e->jmp, 1);
}
static void jpeg_quiet(j_common_ptr cinfo) { (void)cinfo; }
static void jpeg_fail(j_common_ptr cinfo, const char *msg) {
    jpeg_err *e = (jpeg_err *)cinfo->err;
    snprintf(e->msg, sizeof e->msg, "%s", msg);
    longjmp(e->jmp, 1);
}

/* A memory source with TensorFlow's truncation rules: running out of data is an error unless recovery was
 * asked for, in which case one fake EOI marker is supplied (libjpeg then completes the scan). */
typedef struct {
    struct jpeg_source_mgr pub;
    const JOCTET *data;
    size_t len;
    bool recover, eoi_given;
} jpeg_src;

static const JOCTET fake_eoi[2] = {0xFF, JPEG_EOI};

static void src_init(j_decompress_ptr cinfo) { (void)cinfo; }
static boolean src_fill(j_decompress_ptr cinfo) {
    jpeg_src *s = (jpeg_src *)cinfo->src;
    if (s->len == 0) ERREXIT(cinfo, JERR_INPUT_EMPTY);
    if (s->recover && !s->eoi_given) {
        WARNMS(cinfo, JWRN_JPEG_EOF);
        s->pub.next_input_byte = fake_eoi;
        s->pub.bytes_in_buffer = 2;
        s->eoi_given = true;
        return TRUE;
    }
    ERREXIT(cinfo, JERR_FILE_READ);
    return FALSE;
}
static void src_skip(j_decompress_ptr cinfo, long n) {
    jpeg_src *s = (jpeg_src *)cinfo->src;
    if (n <= 0) return;
    if ((size_t)n > s->pub.bytes_in_buffer) {
        s->pub.next_input_byte += s->pub.bytes_in_buffer;
        s->pub.bytes_in_buffer = 0;
    } else {
        s->pub.next_input_byte += n;
        s->pub.bytes_in_buffer -= (size_t)n;
    }
}
static void src_term(j_decompress_ptr cinfo) { (void)cinfo; }

typedef struct {
    struct jpeg_decompress_struct cinfo;
    jpeg_err err;
    jpeg_src src;
    bool created;
    /* flags */
    int components, ratio;
    bool fancy, recover;
    float acceptable;
    J_DCT_METHOD dct;
    /* results */
    tfc_kernel_ctx *k;
    tfc_status *st;
    bool alloc_failed;
    unsigned char *out; /* [h, w, components] uint8 */
    unsigned char *tmp;
    int64_t width, height, rows_read;
} jpeg_dec;

/* Decodes into d->out (allocated by d->alloc once the size is known). False on failure (d->err.msg says
 * why when libjpeg failed). */
static bool jpeg_run(jpeg_dec *d, unsigned char *(*alloc)(jpeg_dec *, int64_t, int64_t, int)) {
    struct jpeg_decompress_struct *ci = &d->cinfo;
    ci->err = jpeg_std_error(&d->err.pub);
    d->err.pub.error_exit = jpeg_on_error;
    d->err.pub.output_message = jpeg_quiet;
    if (setjmp(d->err.jmp)) return false;
    jpeg_create_decompress(ci);
    d->created = true;
    ci->src = &d->src.pub;
    d->src.pub.init_source = src_init;
    d->src.pub.fill_input_buffer = src_fill;
    d->src.pub.skip_input_data = src_skip;
    d->src.pub.resync_to_restart = jpeg_resync_to_restart;
    d->src.pub.term_source = src_term;
    d->src.pub.next_input_byte = d->src.data;
    d->src.pub.bytes_in_buffer = d->src.len;
    jpeg_read_header(ci, TRUE);
    if (d->components == 0) d->components = ci->num_components < 3 ? ci->num_components : 3;
    const bool cmyk_src = ci->jpeg_color_space == JCS_CMYK || ci->jpeg_color_space == JCS_YCCK;
    if (d->components == 1) ci->out_color_space = JCS_GRAYSCALE;
    else if (d->components == 3) ci->out_color_space = cmyk_src ? JCS_CMYK : JCS_RGB;
    else jpeg_fail((j_common_ptr)ci, "invalid number of components");
    ci->do_fancy_upsampling = d->fancy ? TRUE : FALSE;
    ci->scale_num = 1;
    ci->scale_denom = (unsigned)d->ratio;
    ci->dct_method = d->dct;
    jpeg_calc_output_dimensions(ci);
    const int64_t total = (int64_t)ci->output_height * ci->output_width * ci->num_components;
    if (ci->output_width == 0 || ci->output_height == 0 || total >= (1LL << 29))
        jpeg_fail((j_common_ptr)ci, "invalid or too large image size");
    jpeg_start_decompress(ci);
    d->width = ci->output_width;
    d->height = ci->output_height;
    const bool use_cmyk = ci->out_color_space == JCS_CMYK;
    if ((use_cmyk && ci->output_components != 4) || (!use_cmyk && ci->output_components != d->components))
        jpeg_fail((j_common_ptr)ci, "unexpected number of output components");
    if (!(d->out = alloc(d, d->height, d->width, d->components))) jpeg_fail((j_common_ptr)ci, "allocation failed");
    const size_t stride = (size_t)(d->width * d->components);
    if (use_cmyk && !(d->tmp = tfc_malloc((size_t)d->width * 4))) {
        d->alloc_failed = tfc_status_oom(d->st, d->k->op->name, (size_t)d->width * 4) || true;
        jpeg_fail((j_common_ptr)ci, "out of memory");
    }
    bool truncated = false;
    d->rows_read = d->height;
    unsigned char *line = d->out;
    while (ci->output_scanline < ci->output_height) {
        JSAMPROW row = use_cmyk ? d->tmp : line;
        JDIMENSION got = jpeg_read_scanlines(ci, &row, 1);
        if (got == 0) {
            if (!d->recover) {
                d->rows_read = ci->output_scanline;
                truncated = true;
            } else {
                for (JDIMENSION y = ci->output_scanline; y < ci->output_height; y++, line += stride) {
                    if (y == 0) memset(line, 0, stride);
                    else memcpy(line, line - stride, stride);
                }
                ci->output_scanline = ci->output_height;
            }
            break;
        }
        if (use_cmyk) { /* Adobe writes inverted CMYK */
            for (int64_t i = 0; i < d->width; i++) {
                const int c = d->tmp[4 * i], m = d->tmp[4 * i + 1], y = d->tmp[4 * i + 2], kk = d->tmp[4 * i + 3];
                if (ci->saw_Adobe_marker) {
                    line[3 * i] = (unsigned char)(kk * c / 255);
                    line[3 * i + 1] = (unsigned char)(kk * m / 255);
                    line[3 * i + 2] = (unsigned char)(kk * y / 255);
                } else {
                    line[3 * i] = (unsigned char)((255 - kk) * (255 - c) / 255);
                    line[3 * i + 1] = (unsigned char)((255 - kk) * (255 - m) / 255);
                    line[3 * i + 2] = (unsigned char)((255 - kk) * (255 - y) / 255);
                }
            }
        }
        line += stride;
    }
    if (truncated) jpeg_abort((j_common_ptr)ci);
    else jpeg_finish_decompress(ci);
    const float fraction = d->height == 0 ? 1.0f : (float)d->rows_read / (float)d->height;
    const float need = d->acceptable < 1.0f ? d->acceptable : 1.0f;
    if (fraction < need) {
        snprintf(d->err.msg, sizeof d->err.msg, "only %lld of %lld rows could be read", (long long)d->rows_read,
                 (long long)d->height);
        return false;
    }
    if (d->rows_read < d->height) memset(d->out + (size_t)d->rows_read * stride, 0, (size_t)(d->height - d->rows_read) * stride);
    return true;
}

static unsigned char *jpeg_alloc(jpeg_dec *d, int64_t h, int64_t w, int c) {
    tfc_kernel_ctx *k = d->k;
    const tfc_dtype dt = !strcmp(k->op->name, "DecodeJpeg") ? TFC_UINT8 : tfc_attrs_type(k->attrs, "dtype", TFC_UINT8);
    if (!tfc_kernel_alloc_output(k, 0, (int64_t[]){h, w, c}, 3, d->st)) {
        d->alloc_failed = true;
        return NULL;
    }
    if (dt == TFC_UINT8) return k->out[0]->data;
    unsigned char *p = tfc_malloc((size_t)(h * w * c));
    if (!p) {
        tfc_status_oom(d->st, k->op->name, (size_t)(h * w * c));
        d->alloc_failed = true;
    }
    return p;
}

static bool decode_jpeg(tfc_kernel_ctx *k, const unsigned char *data, size_t n, int channels, tfc_dtype dt,
                        tfc_status *st) {
    if (channels == 4) return bad(k, st, "JPEG does not support 4 channels%s", "");
    jpeg_dec *d = tfc_calloc(1, sizeof *d);
    if (!d) return tfc_status_oom(st, k->op->name, sizeof *d);
    d->k = k;
    d->st = st;
    d->components = channels;
    d->ratio = 1;
    d->fancy = true;
    d->acceptable = 1.0f;
    d->dct = JDCT_IFAST; /* TensorFlow's choice for "" */
    if (!strcmp(k->op->name, "DecodeJpeg")) {
        d->ratio = (int)tfc_attrs_int(k->attrs, "ratio", 1);
        d->fancy = tfc_attrs_bool(k->attrs, "fancy_upscaling", true);
        d->recover = tfc_attrs_bool(k->attrs, "try_recover_truncated", false);
        d->acceptable = (float)tfc_attrs_float(k->attrs, "acceptable_fraction", 1.0);
        if (!strcmp(tfc_attrs_string(k->attrs, "dct_method", ""), "INTEGER_ACCURATE")) d->dct = JDCT_ISLOW;
    }
    d->src.data = data;
    d->src.len = n;
    d->src.recover = d->recover;
    bool ok = jpeg_run(d, jpeg_alloc);
    if (d->created) jpeg_destroy_decompress(&d->cinfo);
    tfc_free(d->tmp);
    if (!ok) {
        if (!d->alloc_failed)
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: jpeg::Uncompress failed. Invalid JPEG data or crop window. (%s)",
                           k->op->name, d->err.msg[0] ? d->err.msg : "decoding failed");
    } else if (dt != TFC_UINT8) {
        const int64_t cnt = d->height * d->width * d->components;
        if (dt == TFC_UINT16) {
            uint16_t *o = k->out[0]->data;
            for (int64_t i = 0; i < cnt; i++) o[i] = (uint16_t)(d->out[i] * 256u);
        } else {
            const float scale = (float)(1.0 / 255.0);
            float *o = k->out[0]->data;
            for (int64_t i = 0; i < cnt; i++) o[i] = (float)d->out[i] * scale;
        }
    }
    if (dt != TFC_UINT8) tfc_free(d->out);
    tfc_free(d);
    return ok;
}

/* ---- BMP: TensorFlow's reader of uncompressed 8/24/32-bit files (DecodeImage only) ------------------- */

static int32_t le32(const unsigned char *p) { return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24); }

static bool decode_bmp(tfc_kernel_ctx *k, const unsigned char *d, size_t n, int channels, tfc_dtype dt, tfc_status *st) {
    const char *op = k->op->name;
    if (channels == 1)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: `channels` must be 0, 3 or 4 for BMP, but got 1", op);
    if (strcmp(op, "DecodeImage"))
        return bad(k, st, "Trying to decode BMP format using a wrong op. Use `decode_bmp` or `decode_image` instead. Op used: %s", op);
    if (n < 32)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "%s: Incomplete bmp content, requires at least 32 bytes to find the header size, width, "
                              "height, and bpp, got %zu bytes", op, n);
    const int32_t header = le32(d + 10), width = le32(d + 18), height = le32(d + 22);
    const int bpp = (int16_t)(d[28] | d[29] << 8), img_c = bpp / 8;
    if (img_c != 1 && img_c != 3 && img_c != 4)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "%s: Number of channels inherent in the image must be 1, 3 or 4, was %d", op, img_c);
    const int out_c = channels ? channels : img_c;
    if (width <= 0) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: Width must be positive", op);
    if (height == 0) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: Height must be nonzero", op);
    if (header < 0) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: header size must be nonnegative", op);
    const int64_t h = height < 0 ? -(int64_t)height : height;
    if ((int64_t)width * h >= INT32_MAX / 8)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: Total possible pixel bytes must be less than 2^30", op);
    const int64_t row = ((int64_t)img_c * width + 3) / 4 * 4;
    const int64_t diff = (int64_t)n - header - row * h;
    if (diff != 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "%s: Input size should match (header_size + row_size * abs_height) but they differ by %lld",
                              op, (long long)diff);
    if (!tfc_kernel_alloc_output(k, 0, (int64_t[]){h, width, out_c}, 3, st)) return false;
    const unsigned char *px = d + header;
    const int64_t cnt = h * width * out_c;
    unsigned char *out = dt == TFC_UINT8 ? k->out[0]->data : tfc_malloc((size_t)cnt);
    if (!out) return tfc_status_oom(st, op, (size_t)cnt);
    for (int64_t y = 0; y < h; y++) {
        const unsigned char *src = px + (height < 0 ? y : h - 1 - y) * row; /* bottom-up unless height < 0 */
        unsigned char *dst = out + y * width * out_c;
        for (int64_t x = 0; x < width; x++, src += img_c, dst += out_c) {
            if (img_c == 1) {
                for (int c = 0; c < (out_c == 1 ? 1 : 3); c++) dst[c] = src[0];
            } else { /* BGR(A) -> RGB(A) */
                dst[0] = src[2], dst[1] = src[1], dst[2] = src[0];
            }
            if (out_c == 4) dst[3] = img_c == 4 ? src[3] : 255;
        }
    }
    if (dt == TFC_UINT16) {
        for (int64_t i = 0; i < cnt; i++) ((uint16_t *)k->out[0]->data)[i] = (uint16_t)(out[i] * 256u);
    } else if (dt == TFC_FLOAT) {
        const float scale = (float)(1.0 / 255.0);
        for (int64_t i = 0; i < cnt; i++) ((float *)k->out[0]->data)[i] = (float)out[i] * scale;
    }
    if (dt != TFC_UINT8) tfc_free(out);
    return true;
}

/* ---- the decode kernel ----------------------------------------------------------------------------- */

bool tfc_image_decode(tfc_kernel_ctx *k, tfc_status *st) {
    const char *op = k->op->name;
    size_t n = 0;
    const unsigned char *data = (const unsigned char *)tfc_tensor_string(k->in[0], 0, &n);
    if (!data || n == 0) return bad(k, st, "Input is empty.%s", "");
    if (n > INT32_MAX) {
        char m[32];
        snprintf(m, sizeof m, "%zu", n);
        return bad(k, st, "Input contents are too large for int: %s", m);
    }
    const int channels = (int)tfc_attrs_int(k->attrs, "channels", 0);
    const tfc_dtype dt = !strcmp(op, "DecodeJpeg") ? TFC_UINT8 : tfc_attrs_type(k->attrs, "dtype", TFC_UINT8);
    switch (classify(data, n)) {
    case FMT_JPEG: return decode_jpeg(k, data, n, channels, dt, st);
    case FMT_PNG: return decode_png(k, data, n, channels, dt, st);
    case FMT_GIF:
        return tfc_status_set(st, TFC_UNIMPLEMENTED, "%s: GIF images are not supported by tfc (built without giflib)", op);
    case FMT_BMP: return decode_bmp(k, data, n, channels, dt, st);
    case FMT_WEBP: return tfc_status_set(st, TFC_UNIMPLEMENTED, "%s: WebP images are not supported by tfc", op);
    default: return bad(k, st, "Unknown image file format. One of JPEG, JPEG XL, PNG, GIF, BMP, WebP required.%s", "");
    }
}

/* ---- EncodePng ------------------------------------------------------------------------------------- */

typedef struct {
    png_structp png;
    png_infop info;
    unsigned char *buf;
    size_t len, cap;
    bool oom;
    char err[128];
} png_enc;

static void png_write_mem(png_structp png, png_bytep data, size_t n) {
    png_enc *e = png_get_io_ptr(png);
    if (e->len + n > e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 4096;
        while (cap < e->len + n) cap *= 2;
        unsigned char *p = tfc_realloc(e->buf, cap);
        if (!p) {
            e->oom = true;
            png_error(png, "out of memory");
        }
        e->buf = p;
        e->cap = cap;
    }
    memcpy(e->buf + e->len, data, n);
    e->len += n;
}
static void png_flush_mem(png_structp png) { (void)png; }
static void png_enc_error(png_structp png, png_const_charp msg) {
    png_enc *e = png_get_error_ptr(png);
    snprintf(e->err, sizeof e->err, "%s", msg);
    png_longjmp(png, 1);
}

/* One image [h, w, c] (rows of w*c elements of `bits` bits) to PNG bytes in e->buf. */
static bool png_encode_one(png_enc *e, const unsigned char *img, int64_t h, int64_t w, int c, int bits, int level) {
    if (h == 0 || w == 0) return false;
    e->png = png_create_write_struct(PNG_LIBPNG_VER_STRING, e, png_enc_error, png_on_warning);
    if (!e->png) return false;
    if (setjmp(png_jmpbuf(e->png))) {
        png_destroy_write_struct(&e->png, e->info ? &e->info : NULL);
        return false;
    }
    e->info = png_create_info_struct(e->png);
    if (!e->info) png_error(e->png, "out of memory");
    static const int types[] = {PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB,
                                PNG_COLOR_TYPE_RGB_ALPHA};
    png_set_write_fn(e->png, e, png_write_mem, png_flush_mem);
    png_set_compression_level(e->png, level < 0 ? -1 /* Z_DEFAULT_COMPRESSION */ : level);
    png_set_compression_mem_level(e->png, 9 /* MAX_MEM_LEVEL */);
    png_set_IHDR(e->png, e->info, (png_uint_32)w, (png_uint_32)h, bits, types[c - 1], PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(e->png, e->info);
    if (bits > 8) {
        const uint16_t one = 1;
        if (*(const unsigned char *)&one == 1) png_set_swap(e->png);
    }
    const size_t stride = (size_t)(w * c) * (size_t)(bits / 8);
    for (int64_t y = 0; y < h; y++) png_write_row(e->png, (png_const_bytep)(img + (size_t)y * stride));
    png_write_end(e->png, NULL);
    png_destroy_write_struct(&e->png, &e->info);
    return true;
}

bool tfc_image_encode_png(tfc_kernel_ctx *k, tfc_status *st) {
    const tfc_tensor *x = k->in[0];
    const int r = x->shape.rank;
    const int64_t h = x->shape.dims[r - 3], w = x->shape.dims[r - 2], c = x->shape.dims[r - 1];
    const int bits = x->dtype == TFC_UINT16 ? 16 : 8;
    const int level = (int)tfc_attrs_int(k->attrs, "compression", -1);
    const size_t img_bytes = (size_t)(h * w * c) * (size_t)(bits / 8);
    const int64_t n = k->out[0]->num_elements;
    tfc_tstring *out = k->out[0]->data;
    char failed[160] = "";
    size_t fl = 0;
    png_enc *e = tfc_calloc(1, sizeof *e);
    if (!e) return tfc_status_oom(st, "EncodePng", sizeof *e);
    bool ok = true;
    for (int64_t i = 0; i < n; i++) {
        e->len = 0;
        e->png = NULL;
        e->info = NULL;
        if (!png_encode_one(e, (const unsigned char *)x->data + (size_t)i * img_bytes, h, w, (int)c, bits, level)) {
            if (e->oom) {
                ok = tfc_status_oom(st, "EncodePng", e->cap * 2);
                break;
            }
            if (fl < sizeof failed - 24) fl += (size_t)snprintf(failed + fl, sizeof failed - fl, "%s%lld", fl ? ", " : "", (long long)i);
            continue;
        }
        if (!tfc_tstring_copy(&out[i], (const char *)e->buf, e->len, st)) {
            ok = false;
            break;
        }
    }
    tfc_free(e->buf);
    tfc_free(e);
    if (ok && fl)
        return tfc_status_set(st, TFC_INTERNAL, "EncodePng: PNG encoding failed at the following flattened batch indices: %s",
                              failed);
    return ok;
}

/* ---- EncodeJpeg (TensorFlow's jpeg::Compress settings) ------------------------------------------------ */

typedef struct {
    struct jpeg_compress_struct cinfo;
    jpeg_err err;
    unsigned char *out;
    unsigned long out_len;
    bool created;
} jpeg_enc;

static bool jpeg_encode_run(jpeg_enc *e, const tfc_kernel_ctx *k, const unsigned char *img, int64_t h, int64_t w, int c) {
    struct jpeg_compress_struct *ci = &e->cinfo;
    ci->err = jpeg_std_error(&e->err.pub);
    e->err.pub.error_exit = jpeg_on_error;
    e->err.pub.output_message = jpeg_quiet;
    if (setjmp(e->err.jmp)) return false;
    if (h <= 0 || w <= 0 || h * w >= (1LL << 29)) return false;
    jpeg_create_compress(ci);
    e->created = true;
    jpeg_mem_dest(ci, &e->out, &e->out_len);
    ci->image_width = (JDIMENSION)w;
    ci->image_height = (JDIMENSION)h;
    ci->input_components = c;
    ci->in_color_space = c == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(ci);
    if (tfc_attrs_bool(k->attrs, "optimize_size", false)) ci->optimize_coding = TRUE;
    ci->density_unit = !strcmp(tfc_attrs_string(k->attrs, "density_unit", "in"), "cm") ? 2 : 1;
    ci->X_density = (UINT16)tfc_attrs_int(k->attrs, "x_density", 300);
    ci->Y_density = (UINT16)tfc_attrs_int(k->attrs, "y_density", 300);
    jpeg_set_quality(ci, (int)tfc_attrs_int(k->attrs, "quality", 95), TRUE);
    if (tfc_attrs_bool(k->attrs, "progressive", false)) jpeg_simple_progression(ci);
    if (!tfc_attrs_bool(k->attrs, "chroma_downsampling", true))
        for (int i = 0; i < ci->num_components; i++) ci->comp_info[i].h_samp_factor = ci->comp_info[i].v_samp_factor = 1;
    jpeg_start_compress(ci, TRUE);
    const char *xmp = tfc_attrs_string(k->attrs, "xmp_metadata", "");
    if (*xmp) { /* APP1: the XMP namespace, a NUL, the packet */
        static const char ns[] = "http://ns.adobe.com/xap/1.0/";
        const size_t nl = sizeof ns, ml = strlen(xmp);
        if (nl + ml > 65533) jpeg_fail((j_common_ptr)ci, "xmp_metadata too long");
        JOCTET *pkt = tfc_malloc(nl + ml);
        if (!pkt) jpeg_fail((j_common_ptr)ci, "out of memory");
        memcpy(pkt, ns, nl);
        memcpy(pkt + nl, xmp, ml);
        jpeg_write_marker(ci, JPEG_APP0 + 1, pkt, (unsigned)(nl + ml));
        tfc_free(pkt);
    }
    while (ci->next_scanline < ci->image_height) {
        JSAMPROW row = (JSAMPROW)(img + (size_t)ci->next_scanline * (size_t)(w * c));
        jpeg_write_scanlines(ci, &row, 1);
    }
    jpeg_finish_compress(ci);
    return true;
}

bool tfc_image_encode_jpeg(tfc_kernel_ctx *k, tfc_status *st) {
    const tfc_tensor *x = k->in[0];
    jpeg_enc *e = tfc_calloc(1, sizeof *e);
    if (!e) return tfc_status_oom(st, "EncodeJpeg", sizeof *e);
    bool ok = jpeg_encode_run(e, k, x->data, x->shape.dims[0], x->shape.dims[1], (int)x->shape.dims[2]);
    if (e->created) jpeg_destroy_compress(&e->cinfo);
    if (ok) ok = tfc_tstring_copy(k->out[0]->data, (const char *)e->out, e->out_len, st);
    else tfc_status_set(st, TFC_INTERNAL, "EncodeJpeg: JPEG encoding failed%s%s%s", e->err.msg[0] ? " (" : "",
                        e->err.msg, e->err.msg[0] ? ")" : "");
    free(e->out); /* allocated by libjpeg's memory destination */
    tfc_free(e);
    return ok;
}
