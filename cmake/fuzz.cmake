# SPDX-License-Identifier: MIT
# The fuzz build (option ECO_FUZZ; fuzz/README.md): every library compiled with libFuzzer's
# coverage instrumentation, AddressSanitizer and UndefinedBehaviorSanitizer. The compiler is
# probed first, so that one without libFuzzer (gcc; clang without libclang-rt-14-dev) gets a
# skipped ctest that says why instead of a failed build (fuzz/CMakeLists.txt).
include(CheckCSourceCompiles)
set(CMAKE_REQUIRED_FLAGS "-fsanitize=fuzzer,address,undefined")
set(CMAKE_REQUIRED_LINK_OPTIONS "-fsanitize=fuzzer,address,undefined")
check_c_source_compiles("
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return (int)(size && data[0] == 0);
}" ECO_FUZZ_WORKS)
unset(CMAKE_REQUIRED_FLAGS)
unset(CMAKE_REQUIRED_LINK_OPTIONS)
if(ECO_FUZZ_WORKS)
  # -O1 -g: libFuzzer's own advice (fast enough, stacks still readable); every UBSan finding
  # aborts, so that libFuzzer keeps the input.
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
                      -fno-omit-frame-pointer -g -O1)
  add_link_options(-fsanitize=address,undefined)
else()
  set(ECO_FUZZ_SKIP "${CMAKE_C_COMPILER_ID} ${CMAKE_C_COMPILER_VERSION} cannot build libFuzzer \
binaries (-fsanitize=fuzzer): configure with -DCMAKE_C_COMPILER=clang; Debian: apt-get install \
clang libclang-rt-14-dev (scripts/setup.sh check)")
  message(STATUS "fuzz targets not built: ${ECO_FUZZ_SKIP}")
endif()
