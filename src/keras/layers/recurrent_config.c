/* Keras configs of SimpleRNN, LSTM and GRU (get_config keys and from_config through the layer registry). */
#include <string.h>

#include "keras/layers/recurrent.h"

bool tfc_rnn_get_config(const tfc_layer *l, void *vcfg, tfc_status *st) {
    (void)st;
    const tfc_rnn *r = (const tfc_rnn *)l;
    cJSON *cfg = vcfg;
    bool ok = cJSON_AddBoolToObject(cfg, "return_sequences", r->return_sequences) &&
              cJSON_AddBoolToObject(cfg, "return_state", r->return_state) &&
              cJSON_AddBoolToObject(cfg, "go_backwards", r->go_backwards) &&
              cJSON_AddBoolToObject(cfg, "stateful", r->stateful) && cJSON_AddBoolToObject(cfg, "unroll", r->unroll) &&
              cJSON_AddBoolToObject(cfg, "time_major", r->time_major) &&
              cJSON_AddNumberToObject(cfg, "units", (double)r->units) &&
              cJSON_AddStringToObject(cfg, "activation", tfc_activation_config_name(r->activation));
    if (ok && r->kind != TFC_RNN_SIMPLE)
        ok = cJSON_AddStringToObject(cfg, "recurrent_activation", tfc_activation_config_name(r->recurrent_activation));
    ok = ok && cJSON_AddBoolToObject(cfg, "use_bias", r->use_bias) &&
         tfc_json_add_initializer(cfg, "kernel_initializer", &r->kernel_init.init) &&
         tfc_json_add_initializer(cfg, "recurrent_initializer", &r->recurrent_init.init) &&
         tfc_json_add_initializer(cfg, "bias_initializer", &r->bias_init.init);
    if (ok && r->kind == TFC_RNN_LSTM) ok = cJSON_AddBoolToObject(cfg, "unit_forget_bias", r->unit_forget_bias);
    ok = ok && tfc_json_add_regularizer(cfg, "kernel_regularizer", &r->kernel_reg, r->has_kernel_reg) &&
         tfc_json_add_regularizer(cfg, "recurrent_regularizer", &r->recurrent_reg, r->has_recurrent_reg) &&
         tfc_json_add_regularizer(cfg, "bias_regularizer", &r->bias_reg, r->has_bias_reg) &&
         tfc_json_add_regularizer(cfg, "activity_regularizer", &l->activity_reg, l->has_activity_reg) &&
         cJSON_AddNullToObject(cfg, "kernel_constraint") && cJSON_AddNullToObject(cfg, "recurrent_constraint") &&
         cJSON_AddNullToObject(cfg, "bias_constraint") && cJSON_AddNumberToObject(cfg, "dropout", r->dropout) &&
         cJSON_AddNumberToObject(cfg, "recurrent_dropout", r->recurrent_dropout);
    if (ok && r->kind != TFC_RNN_SIMPLE)
        ok = cJSON_AddNumberToObject(cfg, "implementation", (double)r->implementation) != NULL;
    if (ok && r->kind == TFC_RNN_GRU) ok = cJSON_AddBoolToObject(cfg, "reset_after", r->reset_after) != NULL;
    return ok;
}

static bool get_flag(const cJSON *cfg, const char *key, tfc_flag *out, tfc_status *st) {
    bool v, has;
    if (!tfc_json_get_bool(cfg, key, &v, &has, st)) return false;
    if (has) *out = v ? TFC_YES : TFC_NO;
    return true;
}

bool tfc_rnn_opts_from_config(const cJSON *cfg, const char *cls, tfc_rnn_layer_opts *o, tfc_rnn_cfg_store *s,
                              tfc_status *st) {
    tfc_layer_common_cfg c;
    if (!tfc_json_get_common(cfg, &c, st)) return false;
    memset(o, 0, sizeof *o);
    TFC_COMMON_TO_OPTS(c, *o);
    bool has_units, hk, hr, hb, ha;
    if (!tfc_json_get_i64(cfg, "units", &o->units, &has_units, st)) return false;
    if (!has_units) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: the config has no \"units\"", cls);
    s->ki.name = s->ri.name = s->bi.name = NULL;
    if (!tfc_json_get_str(cfg, "activation", &o->activation, NULL, st) ||
        !tfc_json_get_str(cfg, "recurrent_activation", &o->recurrent_activation, NULL, st) ||
        !get_flag(cfg, "use_bias", &o->use_bias, st) || !get_flag(cfg, "unit_forget_bias", &o->unit_forget_bias, st) ||
        !get_flag(cfg, "reset_after", &o->reset_after, st) ||
        !tfc_json_get_bool(cfg, "return_sequences", &o->return_sequences, NULL, st) ||
        !tfc_json_get_bool(cfg, "return_state", &o->return_state, NULL, st) ||
        !tfc_json_get_bool(cfg, "go_backwards", &o->go_backwards, NULL, st) ||
        !tfc_json_get_bool(cfg, "stateful", &o->stateful, NULL, st) ||
        !tfc_json_get_bool(cfg, "unroll", &o->unroll, NULL, st) ||
        !tfc_json_get_bool(cfg, "time_major", &o->time_major, NULL, st) ||
        !tfc_json_get_f64(cfg, "dropout", &o->dropout, NULL, st) ||
        !tfc_json_get_f64(cfg, "recurrent_dropout", &o->recurrent_dropout, NULL, st) ||
        !tfc_json_get_i64(cfg, "implementation", &o->implementation, NULL, st) ||
        !tfc_json_get_initializer(cfg, "kernel_initializer", &s->ki, s->kn, sizeof s->kn, st) ||
        !tfc_json_get_initializer(cfg, "recurrent_initializer", &s->ri, s->rn, sizeof s->rn, st) ||
        !tfc_json_get_initializer(cfg, "bias_initializer", &s->bi, s->bn, sizeof s->bn, st) ||
        !tfc_json_get_regularizer(cfg, "kernel_regularizer", &s->kr, &hk, st) ||
        !tfc_json_get_regularizer(cfg, "recurrent_regularizer", &s->rr, &hr, st) ||
        !tfc_json_get_regularizer(cfg, "bias_regularizer", &s->br, &hb, st) ||
        !tfc_json_get_regularizer(cfg, "activity_regularizer", &s->ar, &ha, st))
        return false;
    if (s->ki.name) o->kernel_initializer = &s->ki;
    if (s->ri.name) o->recurrent_initializer = &s->ri;
    if (s->bi.name) o->bias_initializer = &s->bi;
    if (hk) o->kernel_regularizer = &s->kr;
    if (hr) o->recurrent_regularizer = &s->rr;
    if (hb) o->bias_regularizer = &s->br;
    if (ha) o->activity_regularizer = &s->ar;
    return true;
}

static tfc_layer *from_config(tfc_rnn_kind kind, const char *cls, const cJSON *cfg, tfc_status *st) {
    tfc_rnn_layer_opts o;
    tfc_rnn_cfg_store s;
    if (!tfc_rnn_opts_from_config(cfg, cls, &o, &s, st)) return NULL;
    tfc_layer *l = tfc_rnn_new(kind, &o);
    if (!l) tfc_status_oom(st, cls, sizeof(tfc_rnn));
    return l;
}

tfc_layer *tfc_keras_from_config_simple_rnn(const cJSON *cfg, tfc_status *st) {
    return from_config(TFC_RNN_SIMPLE, "SimpleRNN", cfg, st);
}
tfc_layer *tfc_keras_from_config_lstm(const cJSON *cfg, tfc_status *st) {
    return from_config(TFC_RNN_LSTM, "LSTM", cfg, st);
}
tfc_layer *tfc_keras_from_config_gru(const cJSON *cfg, tfc_status *st) {
    return from_config(TFC_RNN_GRU, "GRU", cfg, st);
}
