"""Keras training: tfc's optimizers, learning-rate schedules, losses, metrics and training loop against tf_keras
(Keras 2 API), on random data drawn fresh every run (seed printed; TFC_TEST_SEED=<n> replays).

- Optimizers: the same variables and gradients give the same variables (and slot variables) after every
  apply_gradients, for each optimizer in both Keras dialects -- tf_keras.optimizers.legacy.* (TensorFlow 2.4's
  OptimizerV2, what tfc follows by default) and tf_keras.optimizers.* (the Keras 2.11+ family, selected by
  "is_legacy_optimizer": false in the config) -- with clipnorm / clipvalue / global_clipnorm and with
  ExponentialDecay / PiecewiseConstantDecay / CosineDecay schedules.
- Losses: values and gradients w.r.t. y_pred with sample weights, for every reduction.
- Metrics: results accumulated over several weighted batches.
- Models: a Dense MLP and a small CNN (Conv2D + MaxPooling2D + Flatten + Dense) with identical weights and
  batches give per-step losses within 1e-4 (relative) of tf_keras for 50 train_on_batch steps, per optimizer;
  fit / evaluate / predict agree.
"""
import json

import numpy as np
import pytest

from conftest import assert_close, need, random_array, tf, tfc

tf_keras = pytest.importorskip("tf_keras")
K = tfc.keras

STEPS = 50
LOSS_RTOL = 1e-4


def norm(v):
    """Plain JSON values; module/registered_name (tf_keras >= 2.13 only) dropped."""
    if isinstance(v, dict):
        return {k: norm(x) for k, x in v.items() if k not in ("module", "registered_name")}
    if isinstance(v, np.ndarray):
        return norm(v.tolist())
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, (list, tuple)):
        return [norm(x) for x in v]
    return v


def serialize_opt(opt):
    return norm(tf_keras.optimizers.serialize(opt))


# ---- optimizers -----------------------------------------------------------------------------------------------

# name: (class, kwargs). Learning rates large enough that 50 steps move the weights visibly.
OPTIMIZERS = {
    "sgd": ("SGD", {"learning_rate": 0.05}),
    "sgd_momentum": ("SGD", {"learning_rate": 0.05, "momentum": 0.9}),
    "sgd_nesterov": ("SGD", {"learning_rate": 0.05, "momentum": 0.9, "nesterov": True}),
    "adam": ("Adam", {"learning_rate": 0.01}),
    "adam_amsgrad": ("Adam", {"learning_rate": 0.01, "amsgrad": True}),
    "adamw": ("AdamW", {"learning_rate": 0.01, "weight_decay": 0.05}),
    "rmsprop": ("RMSprop", {"learning_rate": 0.01}),
    "rmsprop_centered": ("RMSprop", {"learning_rate": 0.01, "centered": True}),
    "rmsprop_momentum": ("RMSprop", {"learning_rate": 0.01, "momentum": 0.5}),
    "adagrad": ("Adagrad", {"learning_rate": 0.05}),
    "adamax": ("Adamax", {"learning_rate": 0.01}),
    "nadam": ("Nadam", {"learning_rate": 0.01}),
}
DIALECTS = ["legacy", "new"]
CLIPS = [None, "clipnorm", "clipvalue", "global_clipnorm"]
SCHEDULES = [None, "ExponentialDecay", "PiecewiseConstantDecay", "CosineDecay"]


def make_schedule(kind, lr, rng):
    s = tf_keras.optimizers.schedules
    if kind == "ExponentialDecay":
        return s.ExponentialDecay(lr, decay_steps=int(rng.integers(2, 10)), decay_rate=float(rng.uniform(0.5, 0.95)),
                                  staircase=bool(rng.random() < 0.5))
    if kind == "PiecewiseConstantDecay":
        b = sorted(int(x) for x in rng.choice(np.arange(1, 30), size=2, replace=False))
        return s.PiecewiseConstantDecay(b, [lr, lr * 0.5, lr * 0.1])
    if kind == "CosineDecay":
        return s.CosineDecay(lr, decay_steps=int(rng.integers(10, 40)), alpha=float(rng.uniform(0, 0.3)))
    return lr


def make_tf_optimizer(variant, dialect, rng, clip=None, schedule=None):
    """(tf_keras optimizer, description); skips when tf_keras lacks the class in that dialect."""
    cls, kw = OPTIMIZERS[variant]
    kw = dict(kw)
    if clip == "clipnorm":
        kw["clipnorm"] = float(rng.uniform(0.1, 1.0))
    elif clip == "clipvalue":
        kw["clipvalue"] = float(rng.uniform(0.05, 0.5))
    elif clip == "global_clipnorm":
        kw["global_clipnorm"] = float(rng.uniform(0.1, 1.0))
    if schedule and not (cls == "Nadam" and dialect == "legacy"):  # legacy Nadam rejects schedules (ValueError)
        kw["learning_rate"] = make_schedule(schedule, kw["learning_rate"], rng)
    mod = tf_keras.optimizers.legacy if dialect == "legacy" else tf_keras.optimizers
    if not hasattr(mod, cls):
        pytest.skip("tf_keras has no %s optimizer %s to compare with" % (dialect, cls))
    return getattr(mod, cls)(**kw), "%s %s(%s)" % (dialect, cls, kw)


def tf_opt_variables(opt):
    v = opt.variables
    return list(v() if callable(v) else v)


def check_optimizer(tf_opt, what, rng, steps=20, shapes=((3, 4), (4,), (2, 1, 3))):
    """apply_gradients with the same random gradients: variables and optimizer state match after each step."""
    init = [random_array(rng, s, "float32") for s in shapes]
    tvars = [tf.Variable(v) for v in init]
    cvars = [tfc.Variable(v) for v in init]
    copt = K.optimizer_from_config(serialize_opt(tf_opt))
    for step in range(steps):
        grads = [random_array(rng, s, "float32", -2, 2) for s in shapes]
        if step % 7 == 3:  # an occasional zero gradient component exercises clipping/accumulator edge cases
            grads[0][0] = 0
        tf_opt.apply_gradients(zip([tf.constant(g) for g in grads], tvars))
        copt.apply_gradients(zip(grads, cvars))
        for i, (a, b) in enumerate(zip(cvars, tvars)):
            assert_close(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6, msg="%s step %d variable %d: " % (what, step, i))
    assert copt.iterations == steps
    want = [np.asarray(v.numpy()) for v in tf_opt_variables(tf_opt)]
    got = [np.asarray(v.numpy()) for v in copt.variables]
    assert [g.shape for g in got] == [w.shape for w in want], "%s: optimizer variables %s, tf_keras %s" % (
        what, [g.shape for g in got], [w.shape for w in want])
    for i, (g, w) in enumerate(zip(got, want)):
        assert_close(g, w, rtol=1e-5, atol=1e-6, msg="%s optimizer variable %d: " % (what, i))
    return copt


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("variant", sorted(OPTIMIZERS))
def test_optimizer_updates_match_keras(variant, dialect, rng):
    need("tfc_optimizer_from_config", "tfc_optimizer_apply_gradients")
    tf_opt, what = make_tf_optimizer(variant, dialect, rng)
    print(what)
    check_optimizer(tf_opt, what, rng)


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("clip", CLIPS[1:])
def test_optimizer_clipping_matches_keras(clip, dialect, rng):
    """Each clipping option with a random optimizer (gradients large enough to be clipped)."""
    need("tfc_optimizer_from_config", "tfc_optimizer_apply_gradients")
    variant = str(rng.choice([v for v in sorted(OPTIMIZERS) if v != "adamw" or dialect == "new"]))
    tf_opt, what = make_tf_optimizer(variant, dialect, rng, clip=clip)
    print(what)
    check_optimizer(tf_opt, what, rng)


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("schedule", SCHEDULES[1:])
def test_optimizer_schedules_match_keras(schedule, dialect, rng):
    """Learning-rate schedules (serialized inside the optimizer config) with a random optimizer."""
    need("tfc_optimizer_from_config", "tfc_optimizer_apply_gradients")
    variant = str(rng.choice([v for v in sorted(OPTIMIZERS)
                              if dialect == "new" or v not in ("adamw", "nadam")]))
    tf_opt, what = make_tf_optimizer(variant, dialect, rng, schedule=schedule)
    print(what)
    steps = 30
    copt = check_optimizer(tf_opt, what, rng, steps=steps)
    sched = tf_keras.optimizers.schedules.deserialize(tf_opt.get_config()["learning_rate"])
    want = float(sched(steps))
    if K.available("tfc_optimizer_learning_rate"):
        assert abs(copt.learning_rate - want) <= 1e-6 * max(1.0, abs(want)), "%s: learning rate %r, tf_keras %r" % (
            what, copt.learning_rate, want)


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("variant", sorted(OPTIMIZERS))
def test_optimizer_config_matches_keras(variant, dialect, rng):
    """get_config of an optimizer made from tf_keras's config equals tf_keras's (both dialects)."""
    need("tfc_optimizer_from_config", "tfc_optimizer_get_config")
    tf_opt, what = make_tf_optimizer(variant, dialect, rng, clip=str(rng.choice(CLIPS[1:])) if rng.random() < 0.5
                                     else None, schedule=str(rng.choice(SCHEDULES[1:])) if rng.random() < 0.3 else None)
    copt = K.optimizer_from_config(serialize_opt(tf_opt))
    want = norm(tf_opt.get_config())
    got = norm(copt.get_config())
    if isinstance(want.get("learning_rate"), float) and isinstance(got.get("learning_rate"), float):
        # both keep the rate in float32 (legacy) or report its float32 value (new)
        assert np.float32(got.pop("learning_rate")) == np.float32(want.pop("learning_rate")), what
    want = json.loads(json.dumps(want, default=str))
    assert got == want, "%s: get_config\n tfc     %s\n tf_keras %s" % (what, got, want)


# ---- losses --------------------------------------------------------------------------------------------------

REDUCTIONS = ["auto", "sum_over_batch_size", "sum", "none"]
LOSSES = ["MeanSquaredError", "MeanAbsoluteError", "Huber", "BinaryCrossentropy", "CategoricalCrossentropy",
          "SparseCategoricalCrossentropy", "KLDivergence"]


def loss_case(name, rng):
    """(kwargs, y_true, y_pred) for a loss class: shapes [batch, classes] or [batch, d, classes]."""
    batch, classes = int(rng.integers(1, 6)), int(rng.integers(2, 6))
    shape = (batch, classes) if rng.random() < 0.7 else (batch, int(rng.integers(1, 4)), classes)
    kw = {}
    if name in ("BinaryCrossentropy", "CategoricalCrossentropy", "SparseCategoricalCrossentropy"):
        kw["from_logits"] = bool(rng.random() < 0.5)
    if name in ("BinaryCrossentropy", "CategoricalCrossentropy") and rng.random() < 0.6:
        kw["label_smoothing"] = float(np.round(rng.uniform(0, 0.3), 3))
    if name == "Huber" and rng.random() < 0.7:
        kw["delta"] = float(np.round(rng.uniform(0.2, 2.0), 3))
    logits = kw.get("from_logits", False)
    if name == "BinaryCrossentropy":
        y_true = (rng.random(shape) < 0.5).astype(np.float32)
        y_pred = random_array(rng, shape, "float32", -4, 4) if logits else random_array(rng, shape, "float32", 0.02, 0.98)
    elif name == "CategoricalCrossentropy":
        y_true = np.eye(classes, dtype=np.float32)[rng.integers(0, classes, size=shape[:-1])]
        y_pred = random_array(rng, shape, "float32", -3, 3) if logits else random_array(rng, shape, "float32", 0.05, 1)
    elif name == "SparseCategoricalCrossentropy":
        y_true = rng.integers(0, classes, size=shape[:-1]).astype([np.int64, np.int32, np.float32][int(rng.integers(0, 3))])
        y_pred = random_array(rng, shape, "float32", -3, 3) if logits else random_array(rng, shape, "float32", 0.05, 1)
        if not logits:
            y_pred = (y_pred / y_pred.sum(-1, keepdims=True)).astype(np.float32)
    elif name == "KLDivergence":
        y_true = random_array(rng, shape, "float32", 0.01, 1)
        y_true /= y_true.sum(-1, keepdims=True)
        y_pred = random_array(rng, shape, "float32", 0.01, 1)
        y_pred /= y_pred.sum(-1, keepdims=True)
    else:
        y_true = random_array(rng, shape, "float32", -2, 2)
        y_pred = random_array(rng, shape, "float32", -2, 2)
    return kw, y_true, y_pred


def sample_weight_for(rng, per_sample_shape):
    r = rng.random()
    if r < 0.25:
        return None
    if r < 0.4:
        return np.float32(rng.uniform(0, 2))
    if r < 0.8:
        return random_array(rng, per_sample_shape[:1], "float32", 0, 2)
    return random_array(rng, per_sample_shape, "float32", 0, 2)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", LOSSES)
def test_loss_matches_keras(name, reduction, rng):
    need("tfc_loss_from_config", "tfc_loss_call")
    for _ in range(4):
        kw, y_true, y_pred = loss_case(name, rng)
        tl = getattr(tf_keras.losses, name)(reduction=reduction, **kw)
        per_sample = tuple(y_pred.shape[:-1])
        sw = sample_weight_for(rng, per_sample)
        what = "%s(%s, reduction=%s) y_pred %s sample_weight %s" % (name, kw, reduction, y_pred.shape,
                                                                    None if sw is None else np.shape(sw))
        print(what)
        ml = K.loss_from_config(norm(tf_keras.losses.serialize(tl)))
        yp_tf = tf.constant(y_pred)
        with tf.GradientTape() as tape:
            tape.watch(yp_tf)
            want = tl(tf.constant(y_true), yp_tf, sample_weight=None if sw is None else tf.constant(sw))
        og = random_array(rng, want.shape.as_list(), "float32")
        want_g = tape.gradient(want, yp_tf, output_gradients=tf.constant(og))
        yp = tfc.constant(y_pred)
        with tfc.GradientTape() as ctape:
            ctape.watch(yp)
            got = ml(y_true, yp, sample_weight=sw)
        got_g = ctape.gradient(got, yp, output_gradients=tfc.constant(og))
        assert_close(got, want, rtol=1e-5, atol=1e-6, msg="%s value: " % what)
        assert_close(got_g, want_g, rtol=1e-4, atol=1e-6, msg="%s gradient: " % what)
        if K.available("tfc_loss_get_config"):
            assert norm(ml.get_config()) == norm(tl.get_config()), what


# ---- metrics -------------------------------------------------------------------------------------------------

METRICS = ["Accuracy", "BinaryAccuracy", "CategoricalAccuracy", "SparseCategoricalAccuracy",
           "TopKCategoricalAccuracy", "MeanSquaredError", "Precision", "Recall", "AUC", "Mean"]


def metric_case(name, rng):
    """(kwargs, batch generator(rng) -> (y_true, y_pred))."""
    kw = {}
    classes = int(rng.integers(2, 6))
    if name == "BinaryAccuracy" and rng.random() < 0.5:
        kw["threshold"] = float(np.round(rng.uniform(0.2, 0.8), 2))
    if name in ("Precision", "Recall") and rng.random() < 0.5:
        kw["thresholds"] = float(np.round(rng.uniform(0.2, 0.8), 2))
    if name == "TopKCategoricalAccuracy":
        kw["k"] = int(rng.integers(1, classes + 1))
    if name == "AUC":
        if rng.random() < 0.6:
            kw["num_thresholds"] = int(rng.integers(3, 300))
        if rng.random() < 0.5:
            kw["curve"] = "PR"

    def batch(r):
        n = int(r.integers(1, 9))
        if name == "Accuracy":
            yt = r.integers(0, 3, size=(n, 1)).astype(np.float32)
            yp = np.where(r.random((n, 1)) < 0.6, yt, r.integers(0, 3, size=(n, 1))).astype(np.float32)
            return yt, yp
        if name in ("BinaryAccuracy", "Precision", "Recall", "AUC"):
            shape = (n, 1) if r.random() < 0.5 else (n, int(r.integers(1, 4)))
            yt = (r.random(shape) < 0.5).astype(np.float32)
            yp = np.clip(yt * 0.4 + r.random(shape) * 0.6, 0, 1).astype(np.float32)
            return yt, yp
        if name in ("CategoricalAccuracy", "TopKCategoricalAccuracy"):
            yt = np.eye(classes, dtype=np.float32)[r.integers(0, classes, size=n)]
            return yt, r.random((n, classes)).astype(np.float32)
        if name == "SparseCategoricalAccuracy":
            yt = r.integers(0, classes, size=(n, 1) if r.random() < 0.5 else (n,)).astype(np.float32)
            return yt, r.random((n, classes)).astype(np.float32)
        if name == "MeanSquaredError":
            shape = (n, int(r.integers(1, 4)))
            return random_array(r, shape, "float32", -2, 2), random_array(r, shape, "float32", -2, 2)
        if name == "Mean":
            return None, random_array(r, (n,), "float32", -3, 3)
        raise AssertionError(name)
    return kw, batch


@pytest.mark.parametrize("name", METRICS)
def test_metric_accumulates_like_keras(name, rng):
    need("tfc_metric_from_config", "tfc_metric_update_state", "tfc_metric_result")
    for _ in range(3):
        kw, batch = metric_case(name, rng)
        tm = getattr(tf_keras.metrics, name)(**kw)
        mm = K.metric_from_config(norm(tf_keras.metrics.serialize(tm)))
        what = "%s(%s)" % (name, kw)
        print(what)
        for b in range(int(rng.integers(2, 6))):
            yt, yp = batch(rng)
            sw = None
            if rng.random() < 0.5:
                sw = random_array(rng, (yp.shape[0],), "float32", 0, 2)
            if name == "Mean":
                tm.update_state(yp, sample_weight=sw)
            else:
                tm.update_state(yt, yp, sample_weight=sw)
            mm.update_state(yt, yp, sample_weight=sw)
            want = float(tm.result())
            assert abs(mm.result() - want) <= 1e-5 * max(1.0, abs(want)), "%s batch %d: %r, tf_keras %r" % (
                what, b, mm.result(), want)
        mm.reset_state()
        tm.reset_state()
        assert mm.result() == float(tm.result()) == 0.0
        assert mm.name == tm.name, what
        if K.available("tfc_metric_get_config"):
            assert norm(mm.get_config()) == norm(tm.get_config()), "%s: get_config %s, tf_keras %s" % (
                what, mm.get_config(), norm(tm.get_config()))


# ---- models ---------------------------------------------------------------------------------------------------

def mlp(out_units, out_activation, in_dim=8):
    return tf_keras.Sequential([tf_keras.layers.Dense(16, activation="relu", input_shape=(in_dim,)),
                                tf_keras.layers.Dense(12, activation="tanh"),
                                tf_keras.layers.Dense(out_units, activation=out_activation)])


def cnn(out_units, out_activation):
    inp = tf_keras.Input((8, 8, 2))
    x = tf_keras.layers.Conv2D(4, 3, activation="relu")(inp)
    x = tf_keras.layers.MaxPooling2D()(x)
    x = tf_keras.layers.Flatten()(x)
    out = tf_keras.layers.Dense(out_units, activation=out_activation)(x)
    return tf_keras.Model(inp, out)


def twin(tm):
    """The tfc model rebuilt from tf_keras's JSON, with tf_keras's weights."""
    need("tfc_model_from_config", "tfc_model_set_weights")
    mm = K.model_from_json(tm.to_json())
    mm.set_weights(tm.get_weights())
    return mm


def data_for(kind, rng, n):
    x = random_array(rng, (n, 8) if kind == "mlp" else (n, 8, 8, 2), "float32", -1, 1)
    y = np.eye(3, dtype=np.float32)[rng.integers(0, 3, size=n)]
    return x, y


def _kinks(kind, weights, x):
    """The first layer's pre-activations z = x W + b of an mlp()/cnn() model with `weights` (float64) and, for
    the CNN, its ReLU outputs grouped by 2x2 pooling window [n, 3, 3, 4 channels, 4 positions]."""
    w, b = np.asarray(weights[0], np.float64), np.asarray(weights[1], np.float64)
    x = np.asarray(x, np.float64)
    if kind == "mlp":
        return x @ w + b, None
    n = x.shape[0]
    patches = np.stack([x[:, i:i + 6, j:j + 6, :] for i in range(3) for j in range(3)], axis=3)
    z = patches.reshape(n, 6, 6, 18) @ w.reshape(18, -1) + b
    win = np.maximum(z, 0).reshape(n, 3, 2, 3, 2, -1).transpose(0, 1, 3, 5, 2, 4).reshape(n, 3, 3, -1, 4)
    return z, win


def unambiguous_batch(kind, rng, n, tf_weights, tfc_weights):
    """data_for(kind, rng, n), redrawn while a ReLU input or the top two values of a MaxPool window sit
    closer to their kink than the two models' weights can tell apart: there the two float32 trainings may
    take different sides (TensorFlow's MaxPool sends a tie's gradient to the first maximum; a 1e-7 weight
    difference moves it), and Adam turns the different gradient into a 0.1 * learning_rate step. The
    margin is 8x the models' largest pre-activation difference, at least 1e-6."""
    for _ in range(100):
        x, y = data_for(kind, rng, n)
        z0, win0 = _kinks(kind, tf_weights, x)
        z1, _ = _kinks(kind, tfc_weights, x)
        margin = max(1e-6, 8 * float(np.abs(z0 - z1).max()))
        ambiguous = np.abs(z0).min() < margin
        if win0 is not None:
            top = np.sort(win0, axis=-1)
            gap = np.where(top[..., 3] > 0, top[..., 3] - top[..., 2], np.inf)
            ambiguous = ambiguous or gap.min() < margin
        if not ambiguous:
            return x, y
    raise AssertionError("no batch without a ReLU/MaxPool near-tie in 100 draws (margin %g)" % margin)


def assert_losses_close(got, want, what, exact_steps=None, drift_rtol=2e-3):
    """Losses within LOSS_RTOL. With exact_steps, only the first exact_steps are held to it and later ones to
    drift_rtol: two float32 trainings that sum in different orders drift apart slowly even on batches that
    unambiguous_batch() keeps away from ReLU and MaxPool kinks."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    rtol = np.full(got.shape, LOSS_RTOL)
    if exact_steps is not None:
        rtol[exact_steps:] = drift_rtol
    bad = np.abs(got - want) > rtol * np.maximum(np.abs(want), 1e-3)
    assert not bad.any(), "%s: step %d loss %r, tf_keras %r (all: tfc %s, tf_keras %s)" % (
        what, int(np.argmax(bad)), got[bad][0], want[bad][0], got.tolist(), want.tolist())


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("variant", sorted(OPTIMIZERS))
@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_training_steps_match_keras(kind, variant, dialect, rng):
    """50 train_on_batch steps on the same batches: per-step losses within 1e-4 of tf_keras's for the first 10
    steps and 2e-3 after (see assert_losses_close), weights within 5e-3 at the end, with a clipping option and
    a schedule drawn at random."""
    need("tfc_model_compile", "tfc_model_train_on_batch")
    clip = CLIPS[int(rng.integers(0, len(CLIPS)))]
    schedule = SCHEDULES[int(rng.integers(0, len(SCHEDULES)))]
    tf_opt, what = make_tf_optimizer(variant, dialect, rng, clip=clip, schedule=schedule)
    what = "%s %s" % (kind, what)
    print(what)
    tm = (mlp if kind == "mlp" else cnn)(3, None)
    mm = twin(tm)
    mm.compile(optimizer=serialize_opt(tf_opt), loss=("CategoricalCrossentropy", {"from_logits": True}))
    # tf_keras's Keras 2.11+ Nadam keeps its u_product bookkeeping in a Python counter read inside tf.cond, so
    # its traced train step (tf.function) diverges from its own eager updates; tfc follows the eager ones.
    eager = variant == "nadam" and dialect == "new"
    tm.compile(optimizer=tf_opt, loss=tf_keras.losses.CategoricalCrossentropy(from_logits=True), run_eagerly=eager)
    got, want = [], []
    for _ in range(STEPS):
        x, y = unambiguous_batch(kind, rng, 8, tm.get_weights(), mm.get_weights())
        want.append(float(tm.train_on_batch(x, y)))
        got.append(float(mm.train_on_batch(x, y)))
    assert_losses_close(got, want, what, exact_steps=10)
    for i, (a, b) in enumerate(zip(mm.get_weights(), tm.get_weights())):
        assert_close(a, b, rtol=5e-3, atol=5e-4, msg="%s weight %d after %d steps: " % (what, i, STEPS))


LOSS_SETUPS = {  # loss: (output units, output activation, labels)
    "mse": (3, None, "dense"), "mae": (3, None, "dense"), "huber": (3, None, "dense"),
    "bce_logits": (3, None, "binary"), "bce_probs": (3, "sigmoid", "binary"),
    "cce_smoothing": (3, "softmax", "onehot"), "scce": (3, None, "sparse"), "kld": (3, "softmax", "dist"),
}


def loss_setup(name, rng):
    units, act, labels = LOSS_SETUPS[name]
    tl = {"mse": lambda: tf_keras.losses.MeanSquaredError(),
          "mae": lambda: tf_keras.losses.MeanAbsoluteError(),
          "huber": lambda: tf_keras.losses.Huber(delta=float(rng.uniform(0.3, 1.5))),
          "bce_logits": lambda: tf_keras.losses.BinaryCrossentropy(from_logits=True,
                                                                     label_smoothing=float(rng.uniform(0, 0.2))),
          "bce_probs": lambda: tf_keras.losses.BinaryCrossentropy(),
          "cce_smoothing": lambda: tf_keras.losses.CategoricalCrossentropy(label_smoothing=float(rng.uniform(0, .3))),
          "scce": lambda: tf_keras.losses.SparseCategoricalCrossentropy(from_logits=True),
          "kld": lambda: tf_keras.losses.KLDivergence()}[name]()
    return units, act, labels, tl


def labels_for(kind, rng, n):
    if kind == "dense":
        return random_array(rng, (n, 3), "float32", -1, 1)
    if kind == "binary":
        return (rng.random((n, 3)) < 0.5).astype(np.float32)
    if kind == "onehot":
        return np.eye(3, dtype=np.float32)[rng.integers(0, 3, size=n)]
    if kind == "sparse":
        return rng.integers(0, 3, size=(n,)).astype(np.int32)
    d = rng.random((n, 3)).astype(np.float32) + 0.05
    return d / d.sum(-1, keepdims=True)


@pytest.mark.parametrize("name", sorted(LOSS_SETUPS))
def test_training_with_losses_and_sample_weights(name, rng):
    """Each loss in a compiled MLP, with per-sample weights on some steps."""
    need("tfc_model_compile", "tfc_model_train_on_batch")
    units, act, labels, tl = loss_setup(name, rng)
    tm = mlp(units, act)
    mm = twin(tm)
    tf_opt = tf_keras.optimizers.legacy.SGD(learning_rate=0.05, momentum=0.5)
    mm.compile(optimizer=serialize_opt(tf_opt), loss=norm(tf_keras.losses.serialize(tl)))
    tm.compile(optimizer=tf_opt, loss=tl)
    got, want = [], []
    for step in range(STEPS // 2):
        x = random_array(rng, (8, 8), "float32")
        y = labels_for(labels, rng, 8)
        sw = random_array(rng, (8,), "float32", 0, 2) if step % 2 else None
        want.append(float(tm.train_on_batch(x, y, sample_weight=sw)))
        got.append(float(mm.train_on_batch(x, y, sample_weight=sw)))
    assert_losses_close(got, want, "loss %s (%s)" % (name, tl.get_config()))


def compiled_pair(rng, metrics):
    tm = mlp(3, "softmax")
    mm = twin(tm)
    tf_opt = tf_keras.optimizers.legacy.Adam(learning_rate=0.01)
    mm.compile(optimizer=serialize_opt(tf_opt), loss="categorical_crossentropy", metrics=metrics)
    tm.compile(optimizer=tf_opt, loss="categorical_crossentropy", metrics=metrics)
    return tm, mm


def test_fit_evaluate_predict_match_keras(rng):
    """fit (no shuffle, 3 epochs, a partial last batch) gives the same history; evaluate and predict agree."""
    need("tfc_model_fit_n", "tfc_model_evaluate_n", "tfc_model_predict")
    metrics = ["accuracy", "mse"]
    tm, mm = compiled_pair(rng, metrics)
    n = int(rng.integers(20, 60))
    x, y = data_for("mlp", rng, n)
    bs = int(rng.integers(4, 16))
    th = tm.fit(x, y, batch_size=bs, epochs=3, shuffle=False, verbose=0).history
    mh = mm.fit(x, y, batch_size=bs, epochs=3, shuffle=False)
    assert mm.metrics_names == tm.metrics_names
    assert sorted(mh) == sorted(th), "history keys %s, tf_keras %s" % (sorted(mh), sorted(th))
    for k in th:
        assert_losses_close(mh[k], th[k], "history[%r]" % k)
    xe, ye = data_for("mlp", rng, int(rng.integers(5, 40)))
    assert_losses_close(mm.evaluate(xe, ye, batch_size=bs), tm.evaluate(xe, ye, batch_size=bs, verbose=0),
                        "evaluate")
    assert_close(mm.predict(xe, batch_size=bs), tm.predict(xe, batch_size=bs, verbose=0), rtol=1e-4, atol=1e-5)
    assert_close(mm.predict_on_batch(xe), tm.predict_on_batch(xe), rtol=1e-4, atol=1e-5)
    assert_losses_close(mm.test_on_batch(xe, ye), tm.test_on_batch(xe, ye), "test_on_batch")


def test_fit_with_validation_and_sample_weights(rng):
    need("tfc_model_fit_n")
    tm, mm = compiled_pair(rng, ["accuracy"])
    n = 40
    x, y = data_for("mlp", rng, n)
    sw = random_array(rng, (n,), "float32", 0.1, 2)
    vx, vy = data_for("mlp", rng, 12)
    th = tm.fit(x, y, batch_size=8, epochs=2, shuffle=False, sample_weight=sw, validation_data=(vx, vy),
                verbose=0).history
    mh = mm.fit(x, y, batch_size=8, epochs=2, shuffle=False, sample_weight=sw, validation_data=(vx, vy))
    assert sorted(mh) == sorted(th)
    for k in th:
        assert_losses_close(mh[k], th[k], "history[%r]" % k)
    th = tm.fit(x, y, batch_size=8, epochs=1, shuffle=False, validation_split=0.25, verbose=0).history
    mh = mm.fit(x, y, batch_size=8, epochs=1, shuffle=False, validation_split=0.25)
    for k in th:
        assert_losses_close(mh[k], th[k], "validation_split history[%r]" % k)


@pytest.mark.parametrize("name", METRICS[:-1])
def test_compiled_metrics_match_keras(name, rng):
    """Metric objects in compile: train_on_batch / test_on_batch results accumulate (reset_metrics=False)."""
    need("tfc_model_compile", "tfc_model_train_on_batch")
    kw, _ = metric_case(name, rng)
    if name in ("Accuracy",):
        pytest.skip("Accuracy compares exact values; a softmax model never predicts labels exactly")
    tm_metric = getattr(tf_keras.metrics, name)(**kw)
    tm = mlp(3, "softmax")
    mm = twin(tm)
    tf_opt = tf_keras.optimizers.legacy.SGD(learning_rate=0.1)
    sparse = name == "SparseCategoricalAccuracy"
    loss = "sparse_categorical_crossentropy" if sparse else "categorical_crossentropy"
    mm.compile(optimizer=serialize_opt(tf_opt), loss=loss, metrics=[norm(tf_keras.metrics.serialize(tm_metric))])
    tm.compile(optimizer=tf_opt, loss=loss, metrics=[tm_metric])
    for step in range(6):
        x, y = data_for("mlp", rng, 8)
        if sparse:
            y = np.argmax(y, -1).astype(np.int32)
        want = tm.train_on_batch(x, y, reset_metrics=False)
        got = mm.train_on_batch(x, y, reset_metrics=False)
        assert_losses_close(got, want, "%s(%s) step %d" % (name, kw, step))


def test_summary_lists_layers_and_params(rng):
    need("tfc_model_summary")
    tm = cnn(3, "softmax")
    mm = twin(tm)
    text = mm.summary(print_fn=False)
    lines = []
    tm.summary(print_fn=lines.append)
    for layer in tm.layers:
        assert layer.name in text, "summary lacks layer %s:\n%s" % (layer.name, text)
    total = tm.count_params()
    assert ("{:,}".format(total) in text) or (str(total) in text), text
    assert mm.count_params() == total
