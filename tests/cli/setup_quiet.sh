#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/setup.sh installs quietly (issue 30): apt-get and dpkg's lines (about 1,800 on a bare
# Debian) go to a log whose path is printed, not to the terminal; apt-get runs with -qq and
# DEBIAN_FRONTEND=noninteractive (through env, which sudo does not reset); a failed install
# shows the whole log and fails. Stubs stand in for dpkg-query (nothing installed), apt-get
# (a page of output) and sudo, so nothing is installed. Also: make test runs ctest through
# scripts/run_ctest.sh, which prints each skipped test's reason.
set -u
SRC="$2"
T=$(mktemp -d /tmp/ecosched-setupq.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail=0; n=0
check() {
    what="$1"; shift
    n=$((n + 1))
    if ! "$@"; then echo "FAIL: $what"; fail=$((fail + 1)); fi
}
mkdir -p "$T/bin"
printf '#!/bin/sh\nexit 1\n' >"$T/bin/dpkg-query"
cat >"$T/bin/apt-get" <<STUB
#!/bin/sh
echo "\$DEBIAN_FRONTEND \$*" >>"$T/apt.calls"
i=0; while [ \$i -lt 200 ]; do echo "Setting up package-\$i ..."; i=\$((i + 1)); done
exit \${STUB_APT_RC:-0}
STUB
printf '#!/bin/sh\nexec "$@"\n' >"$T/bin/sudo"
chmod +x "$T/bin"/*
(unset DEBIAN_FRONTEND; PATH="$T/bin:$PATH" TMPDIR="$T" sh "$SRC/scripts/setup.sh" demo) \
    >"$T/out" 2>&1
rc=$?
check "setup.sh demo with the stubs exits 0 (got $rc)" [ "$rc" -eq 0 ]
check "at most 5 lines of output, not apt-get's ($(wc -l <"$T/out"))" [ "$(wc -l <"$T/out")" -le 5 ]
log=$(sed -n "s|^setup: apt-get's output goes to \(.*\)$|\1|p" "$T/out")
check "the log's path is printed ('$log')" [ -n "$log" ]
check "the log holds apt-get's output" grep -q "Setting up package-199" "${log:-/nonexistent}"
check "apt-get ran with -qq" sh -c "grep -q ' install ' '$T/apt.calls' && ! grep ' install ' '$T/apt.calls' | grep -vq -- -qq"
check "apt-get ran with DEBIAN_FRONTEND=noninteractive" \
    sh -c "! grep -v '^noninteractive ' '$T/apt.calls' | grep -q ."
rm -f "$T/apt.calls"
(PATH="$T/bin:$PATH" TMPDIR="$T" STUB_APT_RC=100 sh "$SRC/scripts/setup.sh" demo) >"$T/out2" 2>&1
rc=$?
check "a failed apt-get fails setup.sh (got $rc)" [ "$rc" -ne 0 ]
check "... and shows its whole log" grep -q "Setting up package-199" "$T/out2"

# setup.sh check, after it installed packages, still unpacks promtool and prometheus into
# .tools/bin of its checkout (quiet() once overwrote the variable that says demo or check, so a
# machine that lacked packages got no promtool and two failing tests). A copy of the script in
# $T/co, stubs for apt-get download (a file) and dpkg-deb -x (the two binaries).
mkdir -p "$T/co/scripts"
cp "$SRC/scripts/setup.sh" "$T/co/scripts/"
cat >"$T/bin/dpkg-deb" <<'STUB'
#!/bin/sh
[ "$1" = -x ] || exit 2
mkdir -p "$3/usr/bin"
for b in promtool prometheus; do printf '#!/bin/sh\necho "%s, version 2"\n' $b >"$3/usr/bin/$b"; done
chmod +x "$3/usr/bin"/*
STUB
chmod +x "$T/bin/dpkg-deb"
sed -i 's|^exit|case "$*" in *download*) touch prometheus_2_amd64.deb ;; esac\nexit|' "$T/bin/apt-get"
(PATH="$T/bin:$PATH" TMPDIR="$T" sh "$T/co/scripts/setup.sh" check) >"$T/out3" 2>&1
rc=$?
check "setup.sh check with the stubs exits 0 (got $rc: $(tail -n 3 "$T/out3"))" [ "$rc" -eq 0 ]
check "setup.sh check installs packages, then unpacks promtool into .tools/bin" \
    [ -x "$T/co/.tools/bin/promtool" ]
check "... and prometheus" [ -x "$T/co/.tools/bin/prometheus" ]

# make test, test-asan and fuzz-check run ctest through scripts/run_ctest.sh
check "make test uses scripts/run_ctest.sh" \
    [ "$(grep -c 'sh scripts/run_ctest.sh \$(\(BUILD\|ASAN_BUILD\|FUZZ_BUILD\))' "$SRC/Makefile")" -eq 3 ]
if command -v cmake >/dev/null && command -v ctest >/dev/null; then
    mkdir -p "$T/p"
    cat >"$T/p/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.13)
project(p NONE)
enable_testing()
add_test(NAME needs_frob COMMAND sh -c "echo starting; echo 'SKIP: frob not found (apt-get install frob)'; exit 77")
add_test(NAME fine COMMAND sh -c "echo fine")
set_tests_properties(needs_frob PROPERTIES SKIP_RETURN_CODE 77)
CM
    cmake -S "$T/p" -B "$T/p/b" >/dev/null 2>&1
    sh "$SRC/scripts/run_ctest.sh" "$T/p/b" >"$T/ct" 2>&1
    rc=$?
    check "run_ctest.sh exits with ctest's 0 (got $rc)" [ "$rc" -eq 0 ]
    check "run_ctest.sh gives the skipped test's reason" \
        grep -q "^  needs_frob: SKIP: frob not found (apt-get install frob)$" "$T/ct"
    echo 'add_test(NAME broken COMMAND sh -c "exit 3")' >>"$T/p/CMakeLists.txt"
    cmake -S "$T/p" -B "$T/p/b" >/dev/null 2>&1
    sh "$SRC/scripts/run_ctest.sh" "$T/p/b" >"$T/ct2" 2>&1
    rc=$?
    check "run_ctest.sh exits non-zero when a test fails (got $rc)" [ "$rc" -ne 0 ]
else
    echo "note: cmake/ctest not found: run_ctest.sh not run"
fi
echo "setup_quiet: $((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
