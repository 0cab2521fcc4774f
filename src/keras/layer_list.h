/* The layer classes tfc_layer_from_config knows, as an X-macro: TFC_KERAS_LAYER(ClassName, id) where the
 * class's file defines `tfc_layer *tfc_keras_from_config_<id>(const cJSON *config, tfc_status *st)`.
 * Adding a class is one line here (an alias, e.g. Keras 1 names, is another line with the same id). */
#ifndef TFC_KERAS_LAYER_LIST_H
#define TFC_KERAS_LAYER_LIST_H

#define TFC_KERAS_LAYERS                                  \
    TFC_KERAS_LAYER(InputLayer, input_layer)              \
    TFC_KERAS_LAYER(Dense, dense)                         \
    TFC_KERAS_LAYER(Flatten, flatten)                     \
    TFC_KERAS_LAYER(Reshape, reshape)                     \
    TFC_KERAS_LAYER(Dropout, dropout)                     \
    TFC_KERAS_LAYER(Activation, activation)               \
    TFC_KERAS_LAYER(ReLU, relu)                           \
    TFC_KERAS_LAYER(LeakyReLU, leaky_relu)                \
    TFC_KERAS_LAYER(Softmax, softmax)                     \
    TFC_KERAS_LAYER(Embedding, embedding)                 \
    TFC_KERAS_LAYER(Add, add)                             \
    TFC_KERAS_LAYER(Multiply, multiply)                   \
    TFC_KERAS_LAYER(Concatenate, concatenate)             \
    TFC_KERAS_LAYER(Conv2D, conv2d)                       \
    TFC_KERAS_LAYER(Convolution2D, conv2d)                \
    TFC_KERAS_LAYER(DepthwiseConv2D, depthwise_conv2d)    \
    TFC_KERAS_LAYER(MaxPooling2D, max_pooling2d)          \
    TFC_KERAS_LAYER(MaxPool2D, max_pooling2d)             \
    TFC_KERAS_LAYER(AveragePooling2D, average_pooling2d)  \
    TFC_KERAS_LAYER(AvgPool2D, average_pooling2d)         \
    TFC_KERAS_LAYER(GlobalAveragePooling2D, global_average_pooling2d) \
    TFC_KERAS_LAYER(GlobalAvgPool2D, global_average_pooling2d) \
    TFC_KERAS_LAYER(GlobalMaxPooling2D, global_max_pooling2d) \
    TFC_KERAS_LAYER(GlobalMaxPool2D, global_max_pooling2d) \
    TFC_KERAS_LAYER(ZeroPadding2D, zero_padding2d)        \
    TFC_KERAS_LAYER(BatchNormalization, batch_normalization) \
    TFC_KERAS_LAYER(LayerNormalization, layer_normalization) \
    TFC_KERAS_LAYER(Normalization, normalization)         \
    TFC_KERAS_LAYER(CategoryEncoding, category_encoding)  \
    TFC_KERAS_LAYER(Hashing, hashing)                     \
    TFC_KERAS_LAYER(StringLookup, string_lookup)          \
    TFC_KERAS_LAYER(IntegerLookup, integer_lookup)        \
    TFC_KERAS_LAYER(Discretization, discretization)       \
    TFC_KERAS_LAYER(Rescaling, rescaling)                 \
    TFC_KERAS_LAYER(CenterCrop, center_crop)              \
    TFC_KERAS_LAYER(Resizing, resizing)                   \
    TFC_KERAS_LAYER(TextVectorization, text_vectorization) \
    TFC_KERAS_LAYER(RandomFlip, random_flip)              \
    TFC_KERAS_LAYER(RandomContrast, random_contrast) \
    TFC_KERAS_LAYER(SimpleRNN, simple_rnn)                \
    TFC_KERAS_LAYER(LSTM, lstm)                           \
    TFC_KERAS_LAYER(GRU, gru)                             \
    TFC_KERAS_LAYER(Bidirectional, bidirectional)         \
    TFC_KERAS_LAYER(MultiHeadAttention, multi_head_attention) \
    TFC_KERAS_LAYER(Conv1D, conv1d)                       \
    TFC_KERAS_LAYER(Convolution1D, conv1d) \
    TFC_KERAS_LAYER(Conv1DTranspose, conv1d_transpose)    \
    TFC_KERAS_LAYER(Convolution1DTranspose, conv1d_transpose) \
    TFC_KERAS_LAYER(Conv2DTranspose, conv2d_transpose)    \
    TFC_KERAS_LAYER(Convolution2DTranspose, conv2d_transpose) \
    TFC_KERAS_LAYER(UpSampling1D, up_sampling1d)          \
    TFC_KERAS_LAYER(UpSampling2D, up_sampling2d)          \
    TFC_KERAS_LAYER(Cropping1D, cropping1d)               \
    TFC_KERAS_LAYER(Cropping2D, cropping2d)               \
    TFC_KERAS_LAYER(ZeroPadding1D, zero_padding1d)        \
    TFC_KERAS_LAYER(MaxPooling1D, max_pooling1d)          \
    TFC_KERAS_LAYER(MaxPool1D, max_pooling1d)             \
    TFC_KERAS_LAYER(AveragePooling1D, average_pooling1d)  \
    TFC_KERAS_LAYER(AvgPool1D, average_pooling1d)         \
    TFC_KERAS_LAYER(GlobalAveragePooling1D, global_average_pooling1d) \
    TFC_KERAS_LAYER(GlobalAvgPool1D, global_average_pooling1d) \
    TFC_KERAS_LAYER(GlobalMaxPooling1D, global_max_pooling1d) \
    TFC_KERAS_LAYER(GlobalMaxPool1D, global_max_pooling1d) \
    TFC_KERAS_LAYER(Subtract, subtract)                   \
    TFC_KERAS_LAYER(Maximum, maximum)                     \
    TFC_KERAS_LAYER(Minimum, minimum)                     \
    TFC_KERAS_LAYER(Average, average)

#endif
