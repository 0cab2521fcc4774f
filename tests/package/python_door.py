"""The Python door as a user gets it from `pip install .` (make python-install-test, make fresh-clone-check):
imports the installed package with its bundled libtfc.so, then runs README.md's Keras-style example (the
```python block that uses tfc.keras), which trains a small classifier, and checks that it learned.
    python_door.py [README.md]"""
import os
import re
import sys
import time

t0 = time.time()
import tfc  # noqa: E402

assert "TFC_LIBRARY" not in os.environ, "unset TFC_LIBRARY: this checks the bundled library"
here = os.path.dirname(os.path.abspath(tfc.__file__))
assert os.path.dirname(tfc.library_path) == here, (tfc.library_path, here)
print("tfc %s from %s" % (tfc.__version__, here))

readme = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                                            "README.md")
block = next(b for b in re.findall(r"```python\n(.*?)```", open(readme, encoding="utf-8").read(), re.S)
             if "from tfc import keras" in b)
scope = {"__name__": "readme"}
exec(compile(block, "README.md", "exec"), scope)
print("README's Keras example: loss %.4f accuracy %.4f, %d epochs (%.1f s with the import)"
      % (scope["loss"], scope["acc"], len(scope["history"]["loss"]), time.time() - t0))
sys.exit(0 if scope["acc"] > 0.9 else 1)
