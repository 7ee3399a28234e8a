# Thin wrapper over CMake presets. `make demo` and `make test` work on a fresh Debian 12 machine.
SHELL := /bin/bash
# What building the binary and running `make demo` need (docs/install.md).
DEPS_BUILD := cmake ninja-build g++ pkg-config libsimdjson-dev libisal-dev libzstd-dev libfmt-dev \
  libcli11-dev libmicrohttpd-dev libsqlite3-dev libprotobuf-dev libunwind-dev libdw-dev zlib1g-dev \
  libssl-dev
# What the test suite, the sanitizer and fuzz runs, the benchmarks, the Python module and
# `make package` add (`make deps-test`).
DEPS_TEST := python3 python3-dev pybind11-dev python3-pybind11 python3-pytest python3-numpy \
  python3-pandas python3-torch python3-setuptools python3-pip python3-venv python3-wheel \
  libgtest-dev libgmock-dev libbenchmark-dev wrk valgrind clang libclang-rt-14-dev chromium \
  libopenmpi-dev openmpi-bin dpkg-dev python3-jsonschema
JOBS ?= $(shell nproc)

.PHONY: deps deps-test build demo test test-asan test-tsan fuzz fuzz-long bench package clean format

# Installs the missing ones of $(1) (apt-get, through sudo when not root) and says which.
define apt_install
	@missing=""; for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "make $@: installing Debian packages:$$missing"; \
	  SUDO=""; [ "$$(id -u)" != 0 ] && SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	else echo "make $@: all Debian packages present"; fi
endef

deps:
	$(call apt_install,$(DEPS_BUILD))

deps-test: deps
	$(call apt_install,$(DEPS_TEST))

build: deps
	cmake --preset default >/dev/null
	cmake --build --preset default -j $(JOBS)

# Only the binary (and the capture library `mlprof run` injects): no tests, no Python module.
# A fresh tree is configured with the demo preset: -O2 like the default one (the same machine
# code) but no debug info, a third less compiling (docs/install.md); a later `make test`
# reconfigures build/ with debug info and compiles again. A configured build/ is used as it is.
demo: deps
	[ -f build/CMakeCache.txt ] || cmake --preset demo >/dev/null
	cmake --build build -j $(JOBS) --target mlprof
	./build/mlprof demo

test: deps-test
	cmake --preset default >/dev/null
	cmake --build --preset default -j $(JOBS)
	cd build && ctest --output-on-failure -j $(JOBS)

test-asan: deps-test
	cmake --preset asan >/dev/null
	cmake --build --preset asan -j $(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j $(JOBS) -LE nosan

# ThreadSanitizer covers the threaded code: the recorder, the parallel import, the rank reduction
# (workers), serve's trace store (single flight, cancellation) and the NVML sampler thread.
TSAN_TESTS = import_paths_test ranks_scale_test serve_store_test nvml_fake_sampler_test analysis_set_test
test-tsan: deps-test
	cmake --preset tsan >/dev/null
	cmake --build --preset tsan -j $(JOBS) --target $(TSAN_TESTS) $$(cd tests && ls recorder_*_test.cpp | sed 's/\.cpp$$//')
	cd build-tsan && ctest --output-on-failure -j $(JOBS) -E '^layering' -R 'recorder|ParallelImport|RanksScale|TraceStore|SingleFlight|HostCheck|nvml_capture|AnalysisSet'

# Each fuzz target for FUZZ_SECONDS (CI: 30). fuzz-long: every target for hours, on every core
# (new inputs accumulate in build-fuzz/corpus/, crashes in build-fuzz/artifacts/). docs/testing.md.
FUZZ_SECONDS ?= 60
FUZZ_LONG_SECONDS ?= 7200
fuzz: deps-test
	bash tests/fuzz/run_fuzz.sh $(FUZZ_SECONDS)

fuzz-long: deps-test
	FUZZ_JOBS=$(JOBS) FUZZ_ENTROPIC=1 bash tests/fuzz/run_fuzz.sh $(FUZZ_LONG_SECONDS)

bench: deps-test build
	bash bench/run_all.sh

# Debian packages (cmake/package.cmake) from a build of their own: Release with debug info,
# stripped, for a portable CPU baseline (PACKAGE_MARCH; simdjson and ISA-L pick faster kernels at
# run time), without MPI. Then tests/packaging/check_deb.sh checks them (contents, Depends, and
# the extracted tree running `mlprof demo`).
PACKAGE_MARCH ?= x86-64-v2
package: deps
	$(call apt_install,dpkg-dev python3)
	cmake -S . -B build-package -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr \
	  -DMLPROF_MARCH=$(PACKAGE_MARCH) -DMLPROF_WITH_MPI=OFF -DMLPROF_BUILD_TESTS=OFF \
	  -DMLPROF_BUILD_BENCH=OFF -DMLPROF_BUILD_PYTHON=OFF >/dev/null
	cmake --build build-package -j $(JOBS)
	cd build-package && cpack -G DEB
	bash tests/packaging/check_deb.sh build-package build-package --portable

format:
	clang-format -i $$(git ls-files '*.cpp' '*.h')

clean:
	rm -rf build build-asan build-tsan build-package
