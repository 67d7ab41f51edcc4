# SPDX-License-Identifier: MIT
# `make demo` and `make check` install what is missing (scripts/setup.sh demo|check), build
# and run; without make, `sh scripts/bootstrap.sh demo|check` installs make first.
JOBS ?= 2
BUILD ?= build
ASAN_BUILD ?= build-asan


PREFIX ?= /usr/local
DESTDIR ?=

.PHONY: all deps test-deps install build build-asan demo check test test-asan bench clean format

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

check: test test-asan

bench: build
	@sh bench/run.sh $(BUILD)

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)

# Installs under $(PREFIX) (default /usr/local), staged under $(DESTDIR) when set; the unit
# file names $(PREFIX)/bin/ecoschedd (docs/install.md).
install: build
	@cmake -S . -B $(BUILD) -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)
	@DESTDIR=$(DESTDIR) cmake --install $(BUILD)
