/* PNG, JPEG and BMP decoding: DecodeImage (which picks the format from the magic bytes) and the format's own op.
 * The first byte picks the channels, the output dtype and JPEG's decoding attributes. */
#include "fuzz_util.h"
#include "tfc/ops/image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    tfc_ctx *ctx = fuzz_ctx();
    if (size < 1) return 0;
    uint8_t k = data[0];
    tfc_tensor *contents = fuzz_string(data + 1, size - 1);
    if (!contents) return 0;
    static const int channels[] = {0, 1, 3, 4};
    static const tfc_dtype dtypes[] = {TFC_UINT8, TFC_UINT16, TFC_FLOAT, TFC_UINT8};
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *img = tfc_decode_image(ctx, contents, channels[k & 3], dtypes[(k >> 2) & 3], &st);
    if (!img && st.code == TFC_OK) abort();
    tfc_tensor_unref(img);
    tfc_status_clear(&st);
    img = tfc_decode_png(ctx, contents, channels[k & 3], (k >> 2) & 1 ? TFC_UINT16 : TFC_UINT8, &st);
    tfc_tensor_unref(img);
    static const int ratios[] = {1, 2, 4, 8};
    tfc_decode_jpeg_attrs ja = {.channels = (k & 3) == 3 ? 3 : (k & 3) == 2 ? 1 : 0, .ratio = ratios[(k >> 4) & 3],
                                .no_fancy_upscaling = (k >> 6) & 1, .try_recover_truncated = k >> 7,
                                .acceptable_fraction = (k >> 7) ? 0.5f : 0.0f,
                                .dct_method = (k >> 2) & 1 ? "INTEGER_ACCURATE" : NULL};
    tfc_status_clear(&st);
    img = tfc_decode_jpeg(ctx, contents, &ja, &st);
    tfc_tensor_unref(img);
    tfc_tensor_unref(contents);
    return 0;
}
