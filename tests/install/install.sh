#!/bin/sh
# SPDX-License-Identifier: MIT
# `cmake --install` into a DESTDIR: every file where docs/install.md says (binaries, SPANK
# plugin, systemd unit naming the installed daemon, man pages, docs), the installed binaries
# run --help, and the man pages render with `man -l` without warnings.
# Arguments: BUILD_DIR INSTALL_PREFIX SLURM_PLUGIN_DIR (empty: plugin not built) SOURCE_DIR.
set -u
BUILD="$1"; PREFIX="$2"; PLUGIN_DIR="$3"; SRC="$4"
T=$(mktemp -d /tmp/ecosched-install.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail=0; n=0
check() {
    what="$1"; shift
    n=$((n + 1))
    if ! "$@"; then echo "FAIL: $what"; fail=$((fail + 1)); fi
}
D="$T/root"
DESTDIR="$D" cmake --install "$BUILD" >"$T/install.log" 2>&1; rc=$?
check "cmake --install exits 0 (rc $rc: $(tail -3 "$T/install.log"))" [ "$rc" -eq 0 ]
P="$D$PREFIX"
for f in bin/ecosched bin/ecoschedd; do
    check "$PREFIX/$f installed, executable" [ -x "$P/$f" ]
    check "installed $f --help exits 0" sh -c "'$P/$f' --help >/dev/null 2>&1"
done
if [ -n "$PLUGIN_DIR" ]; then
    check "SPANK plugin in $PLUGIN_DIR/ecosched.so" [ -f "$D$PLUGIN_DIR/ecosched.so" ]
fi
U="$P/lib/systemd/system/ecoschedd.service"
check "unit file in $PREFIX/lib/systemd/system" [ -f "$U" ]
check "the unit starts the installed daemon $PREFIX/bin/ecoschedd" \
    grep -q "^ExecStart=$PREFIX/bin/ecoschedd " "$U"
check "the unit's Documentation= names an installed file" sh -c \
    "d=\$(sed -n 's|^Documentation=.*file://\([^ ]*\).*|\1|p' '$U'); [ -n \"\$d\" ] && [ -f '$D'\"\$d\" ]"
check "the unit keeps the state directory private (StateDirectoryMode=0700)" \
    grep -q "^StateDirectoryMode=0700$" "$U"
check "no unreplaced @VAR@ in the unit" sh -c "! grep -q '@[A-Z_]*@' '$U'"
PU="$P/lib/systemd/system/ecosched-powerd.service"
check "powerd's unit starts the installed $PREFIX/bin/ecosched powerd" \
    grep -q "^ExecStart=$PREFIX/bin/ecosched powerd " "$PU"
check "powerd's unit's Documentation= names an installed file" sh -c \
    "d=\$(sed -n 's|^Documentation=.*file://\([^ ]*\).*|\1|p' '$PU'); [ -n \"\$d\" ] && [ -f '$D'\"\$d\" ]"
check "no unreplaced @VAR@ in powerd's unit" sh -c "! grep -q '@[A-Z_]*@' '$PU'"
check "README.md in $PREFIX/share/doc/ecosched" [ -f "$P/share/doc/ecosched/README.md" ]
check "the daemon docs in $PREFIX/share/doc/ecosched/docs/daemon" \
    [ -f "$P/share/doc/ecosched/docs/daemon/README.md" ]
for m in man1/ecosched.1 man8/ecoschedd.8; do
    check "man page $PREFIX/share/man/$m" [ -f "$P/share/man/$m" ]
done
if command -v man >/dev/null; then
    for m in man1/ecosched.1 man8/ecoschedd.8; do
        MANWIDTH=80 man --warnings -l "$P/share/man/$m" >"$T/man.out" 2>"$T/man.err"; rc=$?
        check "man -l $m renders (rc $rc)" [ "$rc" -eq 0 ]
        check "man -l $m: no warnings ($(head -3 "$T/man.err"))" [ ! -s "$T/man.err" ]
        check "man -l $m has NAME and SYNOPSIS" sh -c "grep -q '^NAME' '$T/man.out' && grep -q '^SYNOPSIS' '$T/man.out'"
    done
else
    echo "FAIL: man not found (Debian package man-db, installed by sh scripts/setup.sh check)"
    fail=$((fail + 1))
fi
echo "install: $((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
