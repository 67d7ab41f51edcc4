# SPDX-License-Identifier: MIT
# `make demo` and `make check` install what is missing (scripts/setup.sh demo|check), build
# and run; without make, `sh scripts/bootstrap.sh demo|check` installs make first.
JOBS ?= 2
BUILD ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz


PREFIX ?= /usr/local
DESTDIR ?=

# Quiet when there is little to do: no "Entering directory" of each make cmake's build runs
# (the flag travels to them in MAKEFLAGS), and no "Built target" line per target
# (CMAKE_TARGET_MESSAGES=OFF; the lines of what is compiled stay).
MAKEFLAGS += --no-print-directory
CMAKE_QUIET = -DCMAKE_TARGET_MESSAGES=OFF

.PHONY: all deps test-deps install build build-asan demo check test test-asan fuzz-check bench clean format

all: build

deps:
	@sh scripts/setup.sh demo

test-deps:
	@sh scripts/setup.sh check

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_QUIET) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

build-asan: deps
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DECO_SANITIZE=ON $(CMAKE_QUIET) >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)

demo: build
	@sh scripts/demo.sh $(BUILD)

# ctest --output-on-failure, then each skipped test's reason (scripts/run_ctest.sh)
test: test-deps build
	@sh scripts/run_ctest.sh $(BUILD) -j $(JOBS)

test-asan: test-deps build-asan
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  sh scripts/run_ctest.sh $(ASAN_BUILD) -j $(JOBS)

# The fuzz targets (fuzz/README.md), 10 s each from their seed corpora, where clang can build
# libFuzzer binaries (the fuzz build's ctest says why it skips otherwise); fails on any crash.
fuzz-check: test-deps
	@if command -v clang >/dev/null 2>&1; then \
	  cmake -S . -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=clang -DECO_FUZZ=ON $(CMAKE_QUIET) >/dev/null && \
	  cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_all && \
	  sh scripts/run_ctest.sh $(FUZZ_BUILD) -j $(JOBS); \
	else \
	  echo "fuzz-check: skipped: clang not found (Debian: clang libclang-rt-14-dev; sh scripts/setup.sh check)"; \
	fi

check: test test-asan fuzz-check

bench: build
	@sh bench/run.sh $(BUILD)

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)

# Installs under $(PREFIX) (default /usr/local), staged under $(DESTDIR) when set; the unit
# file names $(PREFIX)/bin/ecoschedd (docs/install.md).
install: build
	@cmake -S . -B $(BUILD) -DCMAKE_INSTALL_PREFIX=$(PREFIX) $(CMAKE_QUIET) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)
	@DESTDIR=$(DESTDIR) cmake --install $(BUILD)
