#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs the Debian packages ecosched needs to build and test, only those missing.
set -eu
PKGS="gcc make cmake pkg-config zlib1g-dev libjansson-dev libcmocka-dev libsqlite3-dev libmicrohttpd-dev libcurl4-openssl-dev curl prometheus libslurm-dev libglpk-dev chromium socat"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "setup: installing missing Debian packages:$missing"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
