"""MultiHeadAttention: tfc against tf_keras on random configurations drawn fresh every run (the seed is printed;
TFC_TEST_SEED=<n> replays a run): same weights (Keras's [dim, heads, head_dim] kernels), outputs, attention scores,
gradients with respect to every input and weight, masks (attention_mask, use_causal_mask), configs and errors."""
import numpy as np
import pytest

from conftest import assert_close, random_array, tf, tfc
from test_keras_layers import assert_config_equal, clear_sessions, norm, pick, rand_bool, require_layer

tf_keras = pytest.importorskip("tf_keras")
K = tfc.keras

# Keys tf_keras >= 2.13 adds to MultiHeadAttention's config that TensorFlow 2.4's Keras did not write.
NEWER_KEYS = ("query_shape", "key_shape", "value_shape", "softmax_robust_masking")


def old_config(cfg):
    return {k: v for k, v in norm(cfg).items() if k not in NEWER_KEYS}


def _sum_weighted(lib, ys, ogs):
    if lib is tf:
        return tf.add_n([tf.reduce_sum(y * o) for y, o in zip(ys, ogs)])
    total = None
    for y, o in zip(ys, ogs):
        t = tfc.raw_ops.Sum(input=y * tfc.constant(o), axis=tfc.constant(np.arange(o.ndim, dtype=np.int32)))
        total = t if total is None else total + t
    return total


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_multi_head_attention_matches_keras(dtype, rng):
    require_layer("MultiHeadAttention")
    for _ in range(8):
        kw = {"num_heads": int(rng.integers(1, 4)), "key_dim": int(rng.integers(1, 5))}
        if rand_bool(rng, 0.3):
            kw["value_dim"] = int(rng.integers(1, 5))
        if rand_bool(rng, 0.3):
            kw["use_bias"] = False
        if rand_bool(rng, 0.3):
            kw["output_shape"] = int(rng.integers(1, 6))
        b, tq, tk = int(rng.integers(1, 4)), int(rng.integers(1, 5)), int(rng.integers(1, 5))
        dq, dv = int(rng.integers(1, 6)), int(rng.integers(1, 6))
        with_key, with_mask = rand_bool(rng), rand_bool(rng, 0.4)
        causal, scores = rand_bool(rng, 0.3), rand_bool(rng, 0.4)
        with_key = with_key or with_mask  # tfc takes the mask as the 4th input, after an explicit key
        if causal:
            tk = tq
        dk = int(rng.integers(1, 6)) if with_key else dv
        clear_sessions()
        tl = tf_keras.layers.MultiHeadAttention(dtype=dtype, **kw)
        q = random_array(rng, (b, tq, dq), dtype, -2, 2)
        v = random_array(rng, (b, tk, dv), dtype, -2, 2)
        k = random_array(rng, (b, tk, dk), dtype, -2, 2)
        mask = rng.random((b, tq, tk)) < 0.7 if with_mask else None
        if mask is not None:
            mask[:, :, 0] = True
        ins = [tf.constant(x) for x in ([q, v, k] if with_key else [q, v])]
        call_kw = {"attention_mask": None if mask is None else tf.constant(mask), "use_causal_mask": causal,
                   "return_attention_scores": scores}
        tl(ins[0], ins[1], key=ins[2] if with_key else None, **call_kw)  # builds
        tl.set_weights([random_array(rng, w.shape.as_list(), dtype, -0.8, 0.8) for w in tl.weights])
        with tf.GradientTape() as tape:
            tape.watch(ins)
            ys = tl(ins[0], ins[1], key=ins[2] if with_key else None, **call_kw)
            ys = list(ys) if scores else [ys]
            ogs = [random_array(rng, y.shape.as_list(), dtype) for y in ys]
            loss = _sum_weighted(tf, ys, ogs)
        want_g = tape.gradient(loss, ins + list(tl.trainable_weights))
        cfg = old_config(tl.get_config())
        # Keras's call arguments are options of the tfc layer (extra from_config keys, never in get_config)
        ml = K.layer_from_config("MultiHeadAttention", dict(cfg, use_causal_mask=causal,
                                                            return_attention_scores=scores))
        m_ins = [tfc.constant(x) for x in ([q, v, k] if with_key else [q, v])]
        if mask is not None:
            m_ins.append(tfc.constant(mask))
        ml.build([tuple(x.shape) for x in m_ins])
        what = "MultiHeadAttention(%s) q %s v %s key=%s mask=%s causal=%s scores=%s %s" % (
            kw, q.shape, v.shape, with_key, with_mask, causal, scores, dtype)
        assert_config_equal(old_config(ml.get_config()), cfg, what)
        assert [w.shape for w in ml.get_weights()] == [tuple(w.shape) for w in tl.get_weights()], what
        ml.set_weights(tl.get_weights())
        with tfc.GradientTape() as tape2:
            tape2.watch(m_ins)
            got = ml(m_ins, n_outputs=len(ys))
            got = list(got) if scores else [got]
            gl = _sum_weighted(tfc, got, ogs)
        got_g = tape2.gradient(gl, m_ins[:len(ins)] + ml.trainable_weights)
        rtol, atol = (1e-4, 1e-5) if dtype == "float32" else (1e-9, 1e-10)
        for i, (a, w) in enumerate(zip(got, ys)):
            assert_close(a.numpy(), w.numpy(), rtol=rtol, atol=atol, msg="%s output %d: " % (what, i))
        for i, (a, w) in enumerate(zip(got_g, want_g)):
            assert_close(a.numpy(), tf.convert_to_tensor(w).numpy(), rtol=rtol, atol=atol,
                         msg="%s gradient %d: " % (what, i))


def test_multi_head_attention_weight_names_and_errors():
    require_layer("MultiHeadAttention")
    clear_sessions()
    ml = K.layer_from_config("MultiHeadAttention", {"num_heads": 2, "key_dim": 3})
    ml.build([(2, 4, 5), (2, 6, 7)])
    assert [w.name for w in ml.weights] == ["multi_head_attention/%s/%s:0" % (p, n)
                                            for p in ("query", "key", "value", "attention_output")
                                            for n in ("kernel", "bias")]
    assert ml.get_config()["attention_axes"] == [1]
    with pytest.raises(tfc.InvalidArgumentError, match="num_heads"):
        K.layer_from_config("MultiHeadAttention", {"num_heads": 0, "key_dim": 3}).build([(2, 4, 5), (2, 6, 7)])
    with pytest.raises(tfc.InvalidArgumentError, match="query"):
        K.layer_from_config("MultiHeadAttention", {"num_heads": 1, "key_dim": 3}).build([(2, 5), (2, 6, 7)])
    with pytest.raises(tfc.InvalidArgumentError, match="disagree"):
        K.layer_from_config("MultiHeadAttention", {"num_heads": 1, "key_dim": 3}).build([(2, 4, 5), (3, 6, 7)])
