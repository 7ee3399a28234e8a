# Thin wrapper over CMake presets. `make demo` and `make test` work on a fresh Debian 12 machine.
SHELL := /bin/bash
DEBIAN_PACKAGES := cmake ninja-build g++ pkg-config python3 libsimdjson-dev libisal-dev \
  libzstd-dev libfmt-dev libcli11-dev libmicrohttpd-dev wrk libgtest-dev libgmock-dev \
  libbenchmark-dev libsqlite3-dev libprotobuf-dev libunwind-dev libdw-dev zlib1g-dev libssl-dev valgrind \
  clang libclang-rt-14-dev chromium \
  python3-dev pybind11-dev python3-pybind11 python3-pytest python3-numpy python3-pandas \
  python3-torch python3-setuptools python3-pip libopenmpi-dev openmpi-bin
JOBS ?= $(shell nproc)

.PHONY: deps build demo test test-asan test-tsan fuzz fuzz-long bench clean format

deps:
	@missing=""; for p in $(DEBIAN_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "make deps: installing Debian packages:$$missing"; \
	  SUDO=""; [ "$$(id -u)" != 0 ] && SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	else echo "make deps: all Debian packages present"; fi

build: deps
	cmake --preset default >/dev/null
	cmake --build --preset default -j $(JOBS)

demo: build
	./build/mlprof demo

test: build
	cd build && ctest --output-on-failure -j $(JOBS)

test-asan: deps
	cmake --preset asan >/dev/null
	cmake --build --preset asan -j $(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j $(JOBS) -LE nosan

# ThreadSanitizer covers the threaded code: the recorder, the parallel import, the rank reduction
# (workers), serve's trace store (single flight, cancellation) and the NVML sampler thread.
TSAN_TESTS = import_paths_test ranks_scale_test serve_store_test nvml_fake_sampler_test analysis_set_test
test-tsan: deps
	cmake --preset tsan >/dev/null
	cmake --build --preset tsan -j $(JOBS) --target $(TSAN_TESTS) $$(cd tests && ls recorder_*_test.cpp | sed 's/\.cpp$$//')
	cd build-tsan && ctest --output-on-failure -j $(JOBS) -E '^layering' -R 'recorder|ParallelImport|RanksScale|TraceStore|SingleFlight|HostCheck|nvml_capture|AnalysisSet'

# Each fuzz target for FUZZ_SECONDS (CI: 30). fuzz-long: every target for hours, on every core
# (new inputs accumulate in build-fuzz/corpus/, crashes in build-fuzz/artifacts/). docs/testing.md.
FUZZ_SECONDS ?= 60
FUZZ_LONG_SECONDS ?= 7200
fuzz: deps
	bash tests/fuzz/run_fuzz.sh $(FUZZ_SECONDS)

fuzz-long: deps
	FUZZ_JOBS=$(JOBS) FUZZ_ENTROPIC=1 bash tests/fuzz/run_fuzz.sh $(FUZZ_LONG_SECONDS)

bench: build
	bash bench/run_all.sh

format:
	clang-format -i $$(git ls-files '*.cpp' '*.h')

clean:
	rm -rf build build-asan build-tsan
