# tfc — top-level driver. On a fresh Debian machine (as root, or with sudo):
#   make demo   set up and run the main example
#   make test   set up, build (release + ASan/UBSan), run the C tests and the Python conformance tests
#   make bench  tfc against OpenBLAS, TensorFlow, PyTorch and ONNX Runtime (QUICK=1: a reduced run)
# Other targets: build, asan, ctest, ctest-asan, conformance, conformance-asan, deps, venv, clean.

BUILD   := build
REL     := $(BUILD)/rel
ASAN    := $(BUILD)/asan
VENV    := $(BUILD)/venv
PY      := $(VENV)/bin/python
PYTHON  ?= python3
JOBS    ?= $(shell nproc)
PYTEST_ARGS ?= -q

DEB_PACKAGES := build-essential cmake pkg-config libopenblas-dev zlib1g-dev libhdf5-dev libcjson-dev libpng-dev \
                libjpeg62-turbo-dev protobuf-c-compiler libprotobuf-c-dev dataset-fashion-mnist python3-venv
PY_PACKAGES  := pytest numpy tensorflow-cpu tf-keras
PY_MODULES   := pytest numpy tensorflow tf_keras
BENCH_PY_PACKAGES := torch onnxruntime onnx
BENCH_PY_MODULES  := torch onnxruntime onnx

.PHONY: all demo test bench build asan conformance conformance-asan ctest ctest-asan deps venv clean

all: build

# Debian packages, installed only when dpkg says one is missing (skipped on systems without dpkg).
deps:
	@command -v dpkg >/dev/null || exit 0; \
	missing=""; \
	for p in $(DEB_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  sudo=""; [ "$$(id -u)" -eq 0 ] || sudo=sudo; \
	  $$sudo apt-get update && \
	  DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y --no-install-recommends $$missing; \
	fi

# Python virtual environment for the conformance tests (TensorFlow is the reference).
venv: deps
	@[ -x $(PY) ] || $(PYTHON) -m venv $(VENV)
	@$(PY) -c "import importlib.util as u, sys; sys.exit(any(u.find_spec(m) is None for m in '$(PY_MODULES)'.split()))" || \
	  { $(PY) -m pip install -q --upgrade pip && \
	    { $(PY) -m pip install -q $(PY_PACKAGES) || $(PY) -m pip install -q pytest numpy tensorflow tf-keras; }; }

build: deps
	cmake -S . -B $(REL) -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build $(REL) -j $(JOBS)

asan: deps
	cmake -S . -B $(ASAN) -DTFC_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
	cmake --build $(ASAN) -j $(JOBS)

ctest: build
	cd $(REL) && ctest --output-on-failure -j $(JOBS)

ctest-asan: asan
	cd $(ASAN) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j $(JOBS)

conformance: build venv
	TFC_LIBRARY=$(CURDIR)/$(REL)/libtfc.so $(PY) -m pytest $(PYTEST_ARGS) tests/conformance

# The conformance tests against the sanitizer build (leak checking off: Python and TensorFlow keep memory).
conformance-asan: asan venv
	LD_PRELOAD="$$(cc -print-file-name=libasan.so) $$(cc -print-file-name=libubsan.so)" \
	ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
	TFC_LIBRARY=$(CURDIR)/$(ASAN)/libtfc.so $(PY) -m pytest $(PYTEST_ARGS) tests/conformance

test: ctest ctest-asan conformance

# The main example, examples/fashion_mnist.c (Keras's convnet on Fashion-MNIST); only it and libtfc are built.
# DEMO_EPOCHS=n overrides its 15 epochs; DEMO_PRECISION=mixed_bfloat16 (or mixed_float16) trains under that
# Keras mixed precision policy. The last line printed is test_accuracy=0.XXXX.
demo: deps
	cmake -S . -B $(REL) -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build $(REL) -j $(JOBS) --target fashion_mnist
	cd $(REL) && DEMO_PRECISION=$(DEMO_PRECISION) ./examples/fashion_mnist $(DEMO_EPOCHS)

# The peers go into the same virtual environment (PyPI's torch wheel is the large CUDA build; it runs on the CPU).
# Only the library is built: the benchmark needs nothing else.
bench: deps venv
	cmake -S . -B $(REL) -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build $(REL) -j $(JOBS) --target tfc
	@$(PY) -c "import importlib.util as u, sys; sys.exit(any(u.find_spec(m) is None for m in '$(BENCH_PY_MODULES)'.split()))" || \
	  $(PY) -m pip install -q $(BENCH_PY_PACKAGES)
	cmake -S bench -B $(BUILD)/bench -DCMAKE_BUILD_TYPE=Release -DTFC_BUILD_DIR=$(CURDIR)/$(REL) >/dev/null
	cmake --build $(BUILD)/bench -j $(JOBS)
	$(PY) bench/bench.py --worker $(BUILD)/bench/tfc_bench $(if $(QUICK),--quick)

clean:
	rm -rf $(REL) $(ASAN)
