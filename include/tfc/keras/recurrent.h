/* tfc — Keras recurrent layers (tf.keras.layers.SimpleRNN, LSTM, GRU).
 *
 * Inputs are [batch, timesteps, features] ([timesteps, batch, features] with time_major), float32/float64/float16.
 * Each layer runs its cell over the time steps eagerly (one set of ops per step, recorded on the tape, so gradients
 * flow through time); `unroll` is accepted and kept in the config (it changes nothing in eager execution).
 *
 * Weights follow Keras exactly, so they load from tf-keras files: "<layer>/<cell>/kernel:0" [features, G*units],
 * "<layer>/<cell>/recurrent_kernel:0" [units, G*units], "<layer>/<cell>/bias:0" [G*units] (GRU with reset_after:
 * [2, 3*units], the input bias then the recurrent bias), where <cell> is "simple_rnn_cell" (G = 1), "lstm_cell"
 * (G = 4, gates in Keras's order i, f, c, o) or "gru_cell" (G = 3, gates z, r, h).
 *
 * Outputs: the last output [batch, units], or every step's [batch, timesteps, units] with return_sequences (in
 * processing order: reversed time with go_backwards, as Keras). With return_state the final states follow as
 * extra outputs: h for SimpleRNN and GRU, h then c for LSTM (tfc_layer_call with n_out 2 or 3).
 * initial_state: call the layer with the states as extra inputs after x ([batch, units] each; h then c for
 * LSTM); a layer built with them must be called with them.
 *
 * dropout / recurrent_dropout (training only) drop input features / recurrent state units with one mask per call
 * shared by all time steps and gates, as Keras's implementation=2.
 * Not supported: stateful=True (INVALID_ARGUMENT at build), masks (Masking / mask_zero are not consumed). */
#ifndef TFC_KERAS_RECURRENT_H
#define TFC_KERAS_RECURRENT_H

#include "tfc/keras/layers.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The arguments of SimpleRNN, LSTM and GRU (Keras's names; zero = Keras's default). */
typedef struct {
    TFC_LAYER_COMMON_OPTS;
    int64_t units;
    const char *activation;           /* NULL = "tanh" */
    const char *recurrent_activation; /* NULL = "sigmoid" (LSTM, GRU) */
    tfc_flag use_bias;                /* default yes */
    const tfc_initializer *kernel_initializer;    /* NULL = glorot_uniform */
    const tfc_initializer *recurrent_initializer; /* NULL = orthogonal */
    const tfc_initializer *bias_initializer;      /* NULL = zeros */
    tfc_flag unit_forget_bias;        /* LSTM, default yes: the forget gate's bias starts at 1 */
    const tfc_regularizer *kernel_regularizer, *recurrent_regularizer, *bias_regularizer, *activity_regularizer;
    double dropout, recurrent_dropout; /* fractions in [0, 1) */
    bool return_sequences, return_state, go_backwards, stateful, unroll, time_major;
    tfc_flag reset_after;             /* GRU, default yes (TensorFlow 2's cuDNN-compatible variant) */
    int64_t implementation;           /* LSTM, GRU: 0 = 2; kept in the config only */
} tfc_rnn_layer_opts;

/* tf.keras.layers.SimpleRNN(units, activation="tanh", ...): h_t = activation(x_t @ kernel + h_{t-1} @
 * recurrent_kernel + bias). A new floating layer (release with tfc_layer_unref unless a model takes it), NULL only
 * when out of memory. INVALID_ARGUMENT at build: units <= 0, an input that is not rank 3, an unknown activation,
 * dropout outside [0, 1), stateful=True. */
TFC_API tfc_layer *tfc_layers_simple_rnn_new(const tfc_rnn_layer_opts *o);
#define tfc_layers_simple_rnn(...) tfc_layers_simple_rnn_new(&(tfc_rnn_layer_opts){__VA_ARGS__})

/* tf.keras.layers.LSTM(units, activation="tanh", recurrent_activation="sigmoid", unit_forget_bias=True, ...):
 * i, f, o = recurrent_activation(.), c_t = f * c_{t-1} + i * activation(.), h_t = o * activation(c_t). Same
 * ownership and errors as tfc_layers_simple_rnn_new. */
TFC_API tfc_layer *tfc_layers_lstm_new(const tfc_rnn_layer_opts *o);
#define tfc_layers_lstm(...) tfc_layers_lstm_new(&(tfc_rnn_layer_opts){__VA_ARGS__})

/* tf.keras.layers.GRU(units, reset_after=True, ...): z, r = recurrent_activation(.), candidate
 * activation(x W_h + r * (h W_h' + b_h')) with reset_after (activation(x W_h + (r * h) W_h') without),
 * h_t = z * h_{t-1} + (1 - z) * candidate. Same ownership and errors as tfc_layers_simple_rnn_new. */
TFC_API tfc_layer *tfc_layers_gru_new(const tfc_rnn_layer_opts *o);
#define tfc_layers_gru(...) tfc_layers_gru_new(&(tfc_rnn_layer_opts){__VA_ARGS__})

/* tf.keras.layers.Bidirectional(layer, merge_mode="concat", backward_layer=None): runs `layer` forward and a copy
 * of it (made from its config, go_backwards flipped) backward over the sequence, merging the two outputs with
 * merge_mode "concat" (last axis; default), "sum", "mul", "ave" or "none" (Keras's None: both outputs, forward
 * first). With return_sequences the backward outputs are reversed back into time order first. With return_state
 * the forward layer's states then the backward layer's follow the merged output(s). The sublayers are named
 * "forward_<name>" and "backward_<name>"; their weights "<bidirectional>/forward_<name>/<cell>/kernel:0", ... as
 * Keras names them. Takes the floating reference of `layer` (and of backward_layer when given, which must have
 * the opposite go_backwards) even on failure. NULL when out of memory or when `layer` is NULL; INVALID_ARGUMENT
 * at build for an unknown merge_mode or a layer that is not SimpleRNN, LSTM or GRU. */
typedef struct {
    TFC_LAYER_COMMON_OPTS;
    tfc_layer *layer;
    const char *merge_mode;       /* NULL = "concat" */
    tfc_layer *backward_layer;    /* NULL: a copy of layer */
} tfc_bidirectional_opts;
/* tf.keras.layers.Bidirectional(layer, merge_mode, backward_layer), as described above: a new floating layer that
 * owns both sublayers; NULL when out of memory or o->layer is NULL. Errors surface at build (INVALID_ARGUMENT). */
TFC_API tfc_layer *tfc_layers_bidirectional_new(const tfc_bidirectional_opts *o);
#define tfc_layers_bidirectional(...) tfc_layers_bidirectional_new(&(tfc_bidirectional_opts){__VA_ARGS__})

#ifdef __cplusplus
}
#endif
#endif
