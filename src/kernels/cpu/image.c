/* CPU kernel table of the image family: codecs in image_codec.c, resizing in image_resize.c. */
#include "kernels/cpu/image_internal.h"

const tfc_kernel_reg tfc_cpu_kernels_image[] = {
    {"DecodePng", tfc_image_decode},
    {"DecodeJpeg", tfc_image_decode},
    {"DecodeImage", tfc_image_decode},
    {"EncodePng", tfc_image_encode_png},
    {"EncodeJpeg", tfc_image_encode_jpeg},
    {"ResizeBilinear", tfc_image_resize_bilinear},
    {"ResizeBilinearGrad", tfc_image_resize_bilinear_grad},
    {"ResizeNearestNeighbor", tfc_image_resize_nearest},
    {"ResizeNearestNeighborGrad", tfc_image_resize_nearest_grad},
    {NULL, NULL},
};
