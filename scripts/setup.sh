#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs the Debian packages ecosched needs, only those missing: `setup.sh demo` the build
# and run-time set (what `make demo` needs), `setup.sh check` that set plus the test tools.
# promtool and the prometheus binary come out of the `prometheus` .deb into .tools/bin: no
# Prometheus service is installed.
set -eu
# Build and run time: the compiler, make, CMake and the libraries the binaries link.
# (libcurl: the CLI's and the SPANK plugin's HTTP client; libmicrohttpd: ecoschedd's server;
# libmunge: ecoschedd's cluster_listen and powerd's --node-auth munge.)
DEMO_PKGS="gcc libc6-dev make cmake pkg-config zlib1g-dev libjansson-dev libsqlite3-dev
libmicrohttpd-dev libcurl4-openssl-dev libglpk-dev libmunge-dev"
# Test only: cmocka (unit tests), curl, socat and jq (daemon tests), chromium (report and live-page
# tests), libslurm-dev (the SPANK plugin and the Slurm test), man-db (`man -l` of the man pages
# in the install test), python3 (the table generators' --check tests), clang-format (the
# format check), mariadb-server and slurmdbd (tests/slurm/sacct.sh runs slurmdbd on a private
# MariaDB, as a site stores Slurm's accounting, to check the jobs' GPU energy in `sacct`). The
# Slurm tests install munge and the other Slurm daemons themselves. (Where systemd runs,
# installing mariadb-server also starts its service; the test never uses it.) clang and
# libclang-rt-14-dev (libFuzzer, the sanitizers' runtimes) build the fuzz targets that
# `make fuzz-check` runs (fuzz/README.md). munge (munged) and openssl (a self-signed
# certificate) for tests/daemon/cluster-auth.sh.
TEST_PKGS="libcmocka-dev curl socat jq chromium libslurm-dev man-db python3 clang-format
mariadb-server slurmdbd clang libclang-rt-14-dev munge openssl"
# promtool (tests/daemon/metrics.sh) and prometheus (tests/daemon/prometheus.sh) are taken from
# this package, unpacked, never installed.
PROMTOOL_DEB=prometheus

what="${1:-check}"
case "$what" in
demo) pkgs="$DEMO_PKGS" ;;
check) pkgs="$DEMO_PKGS $TEST_PKGS" ;;
*) echo "usage: sh scripts/setup.sh demo|check" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
TOOLS="$(pwd)/.tools/bin"

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || {
        echo "setup: not root and no sudo: run as root to install packages" >&2; exit 1; }
    SUDO="sudo"
fi
# apt-get and dpkg print a line or more per package (about 1,800 for `check` on a bare
# system): their output goes to a log whose path is printed, shown whole when a step fails.
# DEBIAN_FRONTEND through env: sudo resets the environment.
export DEBIAN_FRONTEND=noninteractive
APT="$SUDO env DEBIAN_FRONTEND=noninteractive apt-get -qq -o Dpkg::Use-Pty=0"
LOG=""
quiet() { # quiet STEP CMD...: CMD's output into $LOG; on failure the log and exit 1
    if [ -z "$LOG" ]; then
        LOG=$(mktemp "${TMPDIR:-/tmp}/ecosched-setup.XXXXXX.log")
        echo "setup: apt-get's output goes to $LOG"
    fi
    # step, not what: what (demo|check) is read after the install (sh has no local)
    step="$1"; shift
    echo "== $step: $*" >>"$LOG"
    if ! "$@" >>"$LOG" 2>&1; then
        echo "setup: $step failed; its log ($LOG):" >&2
        cat "$LOG" >&2
        exit 1
    fi
}
updated=""
apt_update() {
    [ -n "$updated" ] && return 0
    quiet "apt-get update" $APT update
    updated=1
}

missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "setup: installing missing Debian packages:$missing"
    apt_update
    # shellcheck disable=SC2086
    quiet "apt-get install" $APT install -y --no-install-recommends $missing
    echo "setup: installed:$missing"
fi

# promtool and the Prometheus server binary (tests/daemon/prometheus.sh runs it on a loopback
# port) without installing the package, which starts a service on :9090: the binaries alone,
# out of the package, into .tools/bin (tests look there after PATH).
need_prom=false
command -v promtool >/dev/null || [ -x "$TOOLS/promtool" ] || need_prom=true
command -v prometheus >/dev/null || [ -x "$TOOLS/prometheus" ] || need_prom=true
if [ "$what" = check ] && $need_prom; then
    echo "setup: unpacking promtool and prometheus from the Debian package $PROMTOOL_DEB into .tools/bin"
    apt_update
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    # apt-get download writes into the current directory as the user _apt when it can
    chmod 0777 "$tmp"
    quiet "apt-get download" sh -c 'cd "$1" && apt-get download -qq "$2"' sh "$tmp" "$PROMTOOL_DEB"
    quiet "dpkg-deb -x" dpkg-deb -x "$tmp"/"$PROMTOOL_DEB"_*.deb "$tmp/x"
    mkdir -p "$TOOLS"
    cp "$tmp/x/usr/bin/promtool" "$TOOLS/promtool"
    cp "$tmp/x/usr/bin/prometheus" "$TOOLS/prometheus"
    "$TOOLS/promtool" --version >/dev/null
fi
