"""The Python door as a user gets it from `pip install .` (make python-install-test): imported from the installed
package with its bundled libtfc.so, it trains a small Keras-style classifier and checks that it learned."""
import os
import sys
import time

import numpy as np

t0 = time.time()
import tfc  # noqa: E402
from tfc import keras  # noqa: E402

assert "TFC_LIBRARY" not in os.environ, "unset TFC_LIBRARY: this checks the bundled library"
here = os.path.dirname(os.path.abspath(tfc.__file__))
assert os.path.dirname(tfc.library_path) == here, (tfc.library_path, here)
print("tfc %s from %s" % (tfc.__version__, here))

# Three Gaussian blobs in 4-D; a Dense(16, relu) -> Dense(3, softmax) model, as tf.keras would write it.
rng = np.random.default_rng(0)
centers = rng.normal(0, 3, (3, 4)).astype(np.float32)
y = rng.integers(0, 3, 600).astype(np.int32)
x = (centers[y] + rng.normal(0, 1, (600, 4))).astype(np.float32)
tfc.set_seed(1)
model = keras.Sequential([keras.layer_from_config("Dense", {"units": 16, "activation": "relu",
                                                            "batch_input_shape": [None, 4]}),
                          keras.layer_from_config("Dense", {"units": 3, "activation": "softmax"})])
model.compile(optimizer=("Adam", {"learning_rate": 0.01}), loss="sparse_categorical_crossentropy",
              metrics=["accuracy"])
model.fit(x, y, batch_size=32, epochs=10)
loss, acc = model.evaluate(x, y)
print("loss %.4f accuracy %.4f (%.1f s)" % (loss, acc, time.time() - t0))
sys.exit(0 if acc > 0.9 else 1)
