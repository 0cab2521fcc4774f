/* Internal: the recurrent layers' shared layout (SimpleRNN, LSTM, GRU): recurrent.c runs the time loop,
 * recurrent_cells.c the per-step cell math, recurrent_config.c the Keras configs. */
#ifndef TFC_KERAS_LAYERS_RECURRENT_H
#define TFC_KERAS_LAYERS_RECURRENT_H

#include "keras/keras_internal.h"
#include "tfc/keras/recurrent.h"

typedef enum { TFC_RNN_SIMPLE, TFC_RNN_LSTM, TFC_RNN_GRU } tfc_rnn_kind;

typedef struct tfc_rnn {
    tfc_layer base;
    tfc_rnn_kind kind;
    int64_t units;
    char activation[32], recurrent_activation[32];
    bool use_bias, unit_forget_bias, reset_after;
    tfc_kinit kernel_init, recurrent_init, bias_init;
    tfc_regularizer kernel_reg, recurrent_reg, bias_reg;
    bool has_kernel_reg, has_recurrent_reg, has_bias_reg;
    double dropout, recurrent_dropout;
    bool return_sequences, return_state, go_backwards, stateful, unroll, time_major;
    int64_t implementation;
    tfc_variable *kernel, *recurrent_kernel, *bias; /* owned by base.weights */
} tfc_rnn;

/* The values one call reads once: the weights (in the compute dtype) and the recurrent dropout mask. */
typedef struct tfc_rnn_step_ctx {
    tfc_tensor *recurrent_kernel; /* [units, G*units] */
    tfc_tensor *rk_zr, *rk_h;     /* GRU without reset_after: its [units, 2*units] and [units, units] column blocks */
    tfc_tensor *recurrent_bias;   /* GRU with reset_after and a bias: [G*units] */
    tfc_tensor *rec_mask;         /* recurrent dropout mask [batch, units] or NULL */
    tfc_tensor *one;              /* scalar 1 of the compute dtype (GRU) */
} tfc_rnn_step_ctx;

/* Gates per cell (1, 4, 3) and states (1; LSTM 2). */
int tfc_rnn_gates(const tfc_rnn *r);
int tfc_rnn_n_states(const tfc_rnn *r);
/* The cell's name in weight names: "simple_rnn_cell", "lstm_cell", "gru_cell". */
const char *tfc_rnn_cell_name(const tfc_rnn *r);
/* Creates kernel, recurrent_kernel and bias for `features` inputs (LSTM's unit_forget_bias included). */
bool tfc_rnn_cell_build(tfc_rnn *r, tfc_ctx *ctx, int64_t features, tfc_status *st);
/* Prepares sc (weights read through the tape; caller releases sc->one). */
bool tfc_rnn_step_prepare(tfc_rnn *r, tfc_ctx *ctx, tfc_rnn_step_ctx *sc, tfc_status *st);
/* One time step: xk = x_t @ kernel (+ input bias) [batch, G*units]; states (h, and c for LSTM) are replaced by
 * the new ones (scope-owned op outputs). */
bool tfc_rnn_cell_step(tfc_rnn *r, tfc_ctx *ctx, const tfc_rnn_step_ctx *sc, tfc_tensor *xk, tfc_tensor **states,
                       tfc_status *st);

/* Config (recurrent_config.c): the class keys of get_config, and from_config into opts. */
bool tfc_rnn_get_config(const tfc_layer *l, void *cfg, tfc_status *st);
/* Reads every recurrent key of cfg into o; init/reg storage must outlive the constructor call. */
typedef struct tfc_rnn_cfg_store {
    tfc_initializer ki, ri, bi;
    char kn[32], rn[32], bn[32];
    tfc_regularizer kr, rr, br, ar;
} tfc_rnn_cfg_store;
bool tfc_rnn_opts_from_config(const cJSON *cfg, const char *cls, tfc_rnn_layer_opts *o, tfc_rnn_cfg_store *s,
                              tfc_status *st);
/* Whether l is a SimpleRNN, LSTM or GRU layer (recurrent.c). */
bool tfc_rnn_is(const tfc_layer *l);
/* The layer constructor behind the three public ones (recurrent.c). */
tfc_layer *tfc_rnn_new(tfc_rnn_kind kind, const tfc_rnn_layer_opts *o);

#endif
