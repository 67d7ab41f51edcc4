# SPDX-License-Identifier: MIT
# `make demo` and `make check` install what is missing (scripts/setup.sh demo|check), build
# and run; without make, `sh scripts/bootstrap.sh demo|check` installs make first.
JOBS ?= 2
BUILD ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz


PREFIX ?= /usr/local
DESTDIR ?=

.PHONY: all deps test-deps install build build-asan demo check test test-asan fuzz-check bench clean format

all: build

deps:
	@sh scripts/setup.sh demo

test-deps:
	@sh scripts/setup.sh check

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

build-asan: deps
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DECO_SANITIZE=ON >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)

demo: build
	@sh scripts/demo.sh $(BUILD)

test: test-deps build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-asan: test-deps build-asan
	@cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j $(JOBS)

# The fuzz targets (fuzz/README.md), 10 s each from their seed corpora, where clang can build
# libFuzzer binaries (the fuzz build's ctest says why it skips otherwise); fails on any crash.
fuzz-check: test-deps
	@if command -v clang >/dev/null 2>&1; then \
	  cmake -S . -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=clang -DECO_FUZZ=ON >/dev/null && \
	  cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_all && \
	  cd $(FUZZ_BUILD) && ctest --output-on-failure -j $(JOBS); \
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
	@cmake -S . -B $(BUILD) -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)
	@DESTDIR=$(DESTDIR) cmake --install $(BUILD)
