/* The model's seed generator (Keras 3's SeedGenerator, one per model): an int64 variable [2] = (key, counter).
 * In a training step Dropout reads the pair as the seed of its mask and adds 1 to the counter (tfc_keras_step_rng),
 * so the state is a captured resource of a traced train_function: eager and traced steps draw the same masks, and
 * fit sets it per epoch to (f(seed base, epoch), 0) without a new trace (a resumed fit repeats the masks). */
#include "keras/model_internal.h"
#include "tfc/ops/random.h"

static _Thread_local tfc_variable *step_rng;

tfc_variable *tfc_keras_step_rng(void) { return step_rng; }

void tfc_model_rng_begin(tfc_model *m) { step_rng = TFC_IMPL(m)->rng; }
void tfc_model_rng_end(void) { step_rng = NULL; }

bool tfc_model_rng_ready(tfc_model *m, tfc_status *st) {
    tfc_model_impl *impl = TFC_IMPL(m);
    if (impl->rng) return true;
    /* the key: from the global seed as an op seed is (deterministic under tf.random.set_seed), else random */
    int64_t s1, s2;
    tfc_random_get_seed(m->ctx, TFC_RANDOM_NO_SEED, &s1, &s2);
    uint64_t key = s1 || s2 ? (uint64_t)s1 << 32 ^ (uint64_t)s2 : tfc_model_fresh_seed();
    tfc_tensor *init = tfc_vec_i64((const int64_t[]){(int64_t)key, 0}, 2, st);
    if (!init) return false;
    char name[160];
    snprintf(name, sizeof name, "%s/seed_generator_state", m->base.name);
    impl->rng = tfc_variable_new(m->ctx, init, false, name, st);
    tfc_tensor_unref(init);
    return impl->rng != NULL;
}

bool tfc_model_rng_reset(tfc_model *m, uint64_t key, tfc_status *st) {
    if (!tfc_model_rng_ready(m, st)) return false;
    tfc_tensor *v = tfc_vec_i64((const int64_t[]){(int64_t)key, 0}, 2, st);
    bool ok = v && tfc_variable_assign(m->ctx, TFC_IMPL(m)->rng, v, st);
    tfc_tensor_unref(v);
    return ok;
}

void tfc_model_rng_free(tfc_model *m) {
    tfc_variable_free(TFC_IMPL(m)->rng);
    TFC_IMPL(m)->rng = NULL;
}
