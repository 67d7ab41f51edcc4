#!/bin/sh
# SPDX-License-Identifier: MIT
# `make` with nothing to do is quiet (issue 30): the Makefile copied beside a stub
# scripts/setup.sh and a stub cmake whose --build runs a nested make, as cmake's Makefile
# generator does, and whose configure records its options: no "Entering directory" line of
# the nested make, and the build configured with CMAKE_TARGET_MESSAGES=OFF (no "Built target"
# line per target).
set -u
SRC="$2"
command -v make >/dev/null || { echo "SKIP: make not found (apt-get install make)"; exit 77; }
T=$(mktemp -d /tmp/ecosched-makeq.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail=0; n=0
check() {
    what="$1"; shift
    n=$((n + 1))
    if ! "$@"; then echo "FAIL: $what"; fail=$((fail + 1)); fi
}
mkdir -p "$T/w/scripts" "$T/bin" "$T/sub"
cp "$SRC/Makefile" "$T/w/Makefile"
printf '#!/bin/sh\nexit 0\n' >"$T/w/scripts/setup.sh"
printf 'all:\n\t@echo nothing to do\n' >"$T/sub/Makefile"
cat >"$T/bin/cmake" <<STUB
#!/bin/sh
case "\$1" in
--build) exec make -C "$T/sub" ;;
*) echo "\$*" >>"$T/configure" ;;
esac
STUB
chmod +x "$T/bin/cmake"
(cd "$T/w" && PATH="$T/bin:$PATH" make) >"$T/out" 2>&1
rc=$?
check "make with the stubs exits 0 (got $rc)" [ "$rc" -eq 0 ]
check "no 'Entering directory' line ($(grep -c 'Entering directory' "$T/out"))" \
    sh -c "! grep -q 'directory' '$T/out'"
check "the build is configured without 'Built target' lines ($(cat "$T/configure" 2>/dev/null))" \
    grep -q -- '-DCMAKE_TARGET_MESSAGES=OFF' "$T/configure"
echo "make_quiet: $((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
