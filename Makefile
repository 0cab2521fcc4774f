# tfc — top-level driver. On a fresh Debian machine (as root, or with sudo):
#   make demo   set up and run the main example
#   make test   set up, build (release + ASan/UBSan), run the C tests and the Python conformance tests
#   make bench  tfc against OpenBLAS, TensorFlow, PyTorch and ONNX Runtime (QUICK=1: a reduced run)
#   make fuzz   every libFuzzer target for FUZZ_RUNS inputs (default 10^6) on its seed corpus
# Other targets: build, asan, fuzz-build, ctest, ctest-asan, ctest-fuzz, check-sizes, check-layers, conformance,
# conformance-asan, deps, venv, clean;
#   install PREFIX=P, deb, docs, abi-update, python-install-test, conformance-installed, fresh-clone-check
#   (README: Installing, Versions and ABI, Tests of what users get).

BUILD   := build
REL     := $(BUILD)/rel
ASAN    := $(BUILD)/asan
FUZZB   := $(BUILD)/fuzz
FUZZ_RUNS ?= 1000000
FUZZ_SECONDS ?= 5
VENV    := $(BUILD)/venv
PY      := $(VENV)/bin/python
PYTHON  ?= python3
JOBS    ?= $(shell nproc)
PYTEST_ARGS ?= -q

DEB_PACKAGES := build-essential cmake pkg-config libopenblas-dev zlib1g-dev libhdf5-dev libcjson-dev libzip-dev libpng-dev \
                libjpeg62-turbo-dev protobuf-c-compiler libprotobuf-c-dev dataset-fashion-mnist python3-venv \
                clang libclang-rt-dev doxygen dpkg-dev libopenmpi-dev openmpi-bin libnng-dev \
                libmicrohttpd-dev wrk libgrpc-dev
PY_PACKAGES  := pytest numpy tensorflow-cpu tf-keras tensorboard xprof perfetto requests tensorflow-serving-api
PY_MODULES   := pytest numpy tensorflow tf_keras tensorboard xprof perfetto requests tensorflow_serving
BENCH_PY_PACKAGES := torch onnxruntime onnx
BENCH_PY_MODULES  := torch onnxruntime onnx

PREFIX  ?= /usr/local
LIB_TARGETS := tfc tfc_static tfc_cli

.PHONY: all demo test bench build asan fuzz-build conformance conformance-asan ctest ctest-asan ctest-fuzz fuzz \
        check-sizes check-layers deps venv clean install deb docs abi-update python-install-test conformance-installed \
        fresh-clone-check

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
	    { $(PY) -m pip install -q $(PY_PACKAGES) || $(PY) -m pip install -q $(subst tensorflow-cpu,tensorflow,$(PY_PACKAGES)); }; }

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

# libFuzzer targets (tests/fuzz/fuzz_*.c) in their own clang build; ctest-fuzz runs each FUZZ_SECONDS.
fuzz-build: deps
	cmake -S . -B $(FUZZB) -DCMAKE_C_COMPILER=clang -DTFC_FUZZ=ON -DCMAKE_BUILD_TYPE=Debug \
	  -DTFC_FUZZ_SECONDS=$(FUZZ_SECONDS) >/dev/null
	cmake --build $(FUZZB) -j $(JOBS)

ctest-fuzz: fuzz-build
	cd $(FUZZB) && ctest --output-on-failure -j $(JOBS)

# Long runs: FUZZ_RUNS inputs per target (make fuzz FUZZ_RUNS=10000000); prints each target's count and time.
fuzz: fuzz-build
	@bad=0; for f in $(FUZZB)/tests/fuzz/fuzz_*; do \
	  [ -f "$$f" ] && [ -x "$$f" ] || continue; r=$${f##*/fuzz_}; \
	  tests/fuzz/run_fuzz.sh $$f -runs=$(FUZZ_RUNS) tests/fuzz/corpus/$$r $(FUZZB)/tests/fuzz/found/$$r || bad=1; \
	done; exit $$bad

# No raw multiplication of dims outside src/core/size_check.h (the rule is in that header).
check-sizes:
	tools/check_size_arith.sh

# Includes point only down the layer stack (DESIGN §1; the rule and its exceptions are in the script).
check-layers:
	tools/check_layers.sh

test: check-sizes check-layers ctest ctest-asan ctest-fuzz conformance

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
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none \
	  mpirun --oversubscribe --bind-to none --mca btl self,vader -np 2 $(BUILD)/bench/bench_allreduce $(if $(QUICK),5,15)
	$(BUILD)/bench/bench_ps $(if $(QUICK),200,2000)
	cmake --build $(REL) -j $(JOBS) --target tfc_cli
	$(PY) bench/bench_serve.py --tfc $(REL)/tfc $(if $(QUICK),--quick)

# Installs headers, libtfc.so.MAJOR.MINOR.PATCH, libtfc.a, the tfc command, tfc.pc / tfc-static.pc and the CMake
# package (find_package(tfc)) under PREFIX; only the library and the command are built.
install: deps
	cmake -S . -B $(REL) -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build $(REL) -j $(JOBS) --target $(LIB_TARGETS)
	cmake --install $(REL) --prefix $(PREFIX)

# Debian packages libtfcMAJOR, libtfc-dev, tfc-tools in $(REL) (installing into /usr).
deb: deps
	cmake -S . -B $(REL) -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build $(REL) -j $(JOBS) --target $(LIB_TARGETS)
	cd $(REL) && cpack -G DEB
	@ls $(REL)/*.deb

# HTML API reference of the public headers in $(REL)/docs/html (Doxygen; any warning fails).
docs: deps
	cmake -S . -B $(REL) -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build $(REL) --target docs

# Records the exported symbols of libtfc.so in tests/package/libtfc.abi (test abi.symbols): run it after adding
# public functions, and commit the list with them.
abi-update: deps
	cmake -S . -B $(REL) -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build $(REL) -j $(JOBS) --target tfc
	$(PYTHON) tests/package/public_api.py abi-update --src . --build $(REL) --cc "$$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' $(REL)/CMakeCache.txt)" --lib $(REL)/libtfc.so

# A new user's path from a fresh clone of the committed HEAD (tests/package/fresh_clone.sh): make install into a
# temporary prefix, an out-of-tree CMake and pkg-config (static) project, pip install into a fresh venv.
fresh-clone-check:
	bash tests/package/fresh_clone.sh . $(JOBS)

# `pip install .` into a fresh virtual environment (compiles libtfc inside pip's build), then
# tests/package/python_door.py trains a small Keras model from the installed package, outside this tree.
PIP_VENV := $(BUILD)/venv-pip
python-install-test: deps
	rm -rf $(PIP_VENV) && $(PYTHON) -m venv $(PIP_VENV)
	$(PIP_VENV)/bin/python -m pip install -q --upgrade pip
	$(PIP_VENV)/bin/python -m pip install -q .
	cd $(PIP_VENV) && env -u TFC_LIBRARY bin/python $(CURDIR)/tests/package/python_door.py

# The conformance tests against the package `pip install .` installs (its bundled libtfc.so, not python/ of this
# tree): a virtual environment that sees build/venv's TensorFlow through a .pth file, so nothing is downloaded
# twice and build/venv itself is left as it is.
INST_VENV := $(BUILD)/venv-installed
conformance-installed: venv
	rm -rf $(INST_VENV) && $(PY) -m venv $(INST_VENV)
	$(PY) -c "import sysconfig; print(sysconfig.get_paths()['purelib'])" > \
	  "$$($(INST_VENV)/bin/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")/_tfc_build_venv.pth"
	$(INST_VENV)/bin/python -m pip install -q .
	env -u TFC_LIBRARY TFC_CONFORMANCE_INSTALLED=1 $(INST_VENV)/bin/python -m pytest $(PYTEST_ARGS) tests/conformance

clean:
	rm -rf $(REL) $(ASAN) $(FUZZB)
