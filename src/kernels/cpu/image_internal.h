/* Internal: image kernels shared between the files of the image family (image.c holds the table). */
#ifndef TFC_KERNELS_CPU_IMAGE_INTERNAL_H
#define TFC_KERNELS_CPU_IMAGE_INTERNAL_H

#include "kernels/cpu/kernels.h"

bool tfc_image_resize_bilinear(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_image_resize_nearest(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_image_resize_bilinear_grad(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_image_resize_nearest_grad(tfc_kernel_ctx *k, tfc_status *st);
/* DecodePng, DecodeJpeg and DecodeImage: one kernel that sniffs the format, as TensorFlow's
 * DecodeImageV2Op (each op decodes PNG and JPEG alike). */
bool tfc_image_decode(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_image_encode_png(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_image_encode_jpeg(tfc_kernel_ctx *k, tfc_status *st);

#endif
