/* tfc — TF_TString: TensorFlow's 24-byte string element (SMALL/LARGE/OFFSET/VIEW), the element type
 * of TFC_STRING tensors, byte-compatible with tensorflow/core/platform/ctstring_internal.h. */
#ifndef TFC_TSTRING_H
#define TFC_TSTRING_H

#include "tfc/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef union tfc_tstring {
    uint8_t raw[24];
    struct { size_t size_and_type; size_t cap; char *ptr; } large;
    struct { uint32_t size_and_type; uint32_t offset; uint32_t count; } offset;
    struct { size_t size_and_type; const char *ptr; } view;
    struct { uint8_t size_and_type; char str[23]; } small;
} tfc_tstring;

typedef enum { TFC_TSTR_SMALL = 0, TFC_TSTR_LARGE = 1, TFC_TSTR_OFFSET = 2, TFC_TSTR_VIEW = 3 } tfc_tstring_type;

TFC_API void tfc_tstring_init(tfc_tstring *s);              /* empty SMALL string */
TFC_API void tfc_tstring_dealloc(tfc_tstring *s);           /* frees LARGE storage, leaves an empty string */
TFC_API tfc_tstring_type tfc_tstring_get_type(const tfc_tstring *s);
TFC_API size_t tfc_tstring_size(const tfc_tstring *s);
TFC_API size_t tfc_tstring_capacity(const tfc_tstring *s);
TFC_API const char *tfc_tstring_data(const tfc_tstring *s);
/* Copies n bytes into s (SMALL up to 22 bytes, else LARGE). False (RESOURCE_EXHAUSTED) when out of memory. */
TFC_API bool tfc_tstring_copy(tfc_tstring *s, const char *src, size_t n, tfc_status *st);
/* Makes s a non-owning VIEW of src[0..n). */
TFC_API void tfc_tstring_assign_view(tfc_tstring *s, const char *src, size_t n);
/* Assigns src to dst with TensorFlow's rules (LARGE deep-copied, OFFSET becomes VIEW). */
TFC_API bool tfc_tstring_assign(tfc_tstring *dst, const tfc_tstring *src, tfc_status *st);
/* Writable pointer of n bytes: VIEW/OFFSET are first converted to owned storage. NULL when out of memory. */
TFC_API char *tfc_tstring_resize(tfc_tstring *s, size_t n);

#ifdef __cplusplus
}
#endif
#endif
