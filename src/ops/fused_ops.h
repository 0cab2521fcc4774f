/* Internal: the fused_ops attr of TensorFlow's fused ops _FusedConv2D and _FusedMatMul (src/ops/fused_ops.c),
 * read by their shape and gradient functions and by their CPU kernels (src/kernels/cpu/fused.c).
 *
 * tfc runs the patterns Keras's Conv2D and Dense layers produce: ["BiasAdd"], optionally followed by one of
 * "Relu", "Relu6", "Elu", "LeakyRelu" (with the leakyrelu_alpha attr), and one argument (the bias). Other
 * fusions TensorFlow's remapper makes (FusedBatchNorm, Add, Sigmoid, Tanh, Gelu, ...) are UNIMPLEMENTED. */
#ifndef TFC_OPS_FUSED_OPS_H
#define TFC_OPS_FUSED_OPS_H

#include "tfc/op.h"

typedef enum { TFC_FUSED_LINEAR, TFC_FUSED_RELU, TFC_FUSED_RELU6, TFC_FUSED_ELU, TFC_FUSED_LEAKY_RELU } tfc_fused_act;

typedef struct tfc_fused_spec {
    tfc_fused_act act; /* after the BiasAdd */
    float alpha;       /* leakyrelu_alpha (a float32 attr) */
} tfc_fused_spec;

/* Reads fused_ops, num_args and leakyrelu_alpha of op `op`. Errors name the op and the value:
 *   INVALID_ARGUMENT  fused_ops empty, or num_args not 1 (the bias)
 *   UNIMPLEMENTED     any other fusion */
bool tfc_fused_spec_read(const char *op, const tfc_attrs *attrs, tfc_fused_spec *fs, tfc_status *st);

/* In the gradient function of a convolution op whose inputs 0 and 1 are the input x and the HWIO filter f
 * and whose attrs hold Conv2D's (strides, padding, dilations, ...): Conv2DBackpropInput(shape(x), f, dz)
 * when `input`, else Conv2DBackpropFilter(x, shape(f), dz). The result belongs to the gradient's scope. */
tfc_tensor *tfc_fused_conv_backprop(tfc_grad_ctx *g, bool input, tfc_tensor *dz, tfc_status *st);

#endif
