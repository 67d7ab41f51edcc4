#!/bin/sh
# SPDX-License-Identifier: MIT
# The README's two commands, exactly as written, in a bare Debian 12 root: debootstrap
# --variant=minbase bookworm plus git and ca-certificates, the repository cloned into
# /root/ecosched (/root mode 0700), /proc, /sys and /dev mounted. Logs everything and prints
# one summary line per command. Not run by CI (minutes of downloads and two full builds).
# Usage (root): sh scripts/fresh-root-test.sh [REPO [BRANCH]]   (default: this checkout, its branch)
# Environment: ECO_FRESH_DIR (the root, default /var/tmp/ecosched-fresh-root, removed first),
# ECO_FRESH_CACHE (tarball of the bare root, made on the first run, reused after),
# ECO_FRESH_LOG (log directory), ECO_FRESH_MIRROR, KEEP_ROOT=1 (keep the root afterwards).
set -u
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (debootstrap, chroot, mount)"
command -v debootstrap >/dev/null || skip "debootstrap not installed"
HERE=$(cd "$(dirname "$0")/.." && pwd)
REPO="${1:-$HERE}"
BRANCH="${2:-$(git -C "$REPO" rev-parse --abbrev-ref HEAD)}"
DIR="${ECO_FRESH_DIR:-/var/tmp/ecosched-fresh-root}"
CACHE="${ECO_FRESH_CACHE:-/var/tmp/ecosched-bookworm-minbase-git.tar.gz}"
LOG="${ECO_FRESH_LOG:-/var/tmp/ecosched-fresh-root-logs}"
MIRROR="${ECO_FRESH_MIRROR:-http://deb.debian.org/debian}"
PATH_IN=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
say() { echo "fresh-root: $*" | tee -a "$LOG/summary.txt"; }

cleanup() {
    # processes the commands left in the root (daemons of tests), by PID
    for p in /proc/[0-9]*; do
        [ "$(readlink "$p/root" 2>/dev/null)" = "$DIR" ] && kill -KILL "${p#/proc/}" 2>/dev/null
    done
    sleep 1
    for m in dev sys proc; do
        mountpoint -q "$DIR/$m" 2>/dev/null && umount -R -l "$DIR/$m"
    done
    [ -n "${KEEP_ROOT:-}" ] || rm -rf "$DIR"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

mkdir -p "$LOG"
: >"$LOG/summary.txt"
rm -rf "$DIR"
mkdir -p "$DIR"
t0=$(date +%s)
if [ -f "$CACHE" ]; then
    tar -C "$DIR" -xzf "$CACHE" || { say "cannot unpack $CACHE"; exit 1; }
    say "bare root from $CACHE"
else
    debootstrap --variant=minbase bookworm "$DIR" "$MIRROR" >"$LOG/debootstrap.log" 2>&1 ||
        { say "debootstrap failed (log: $LOG/debootstrap.log)"; exit 1; }
    cp /etc/resolv.conf "$DIR/etc/resolv.conf"
    chroot "$DIR" /usr/bin/env -i PATH=$PATH_IN DEBIAN_FRONTEND=noninteractive sh -c \
        'apt-get update -qq && apt-get install -y -qq --no-install-recommends git ca-certificates &&
         apt-get clean' >"$LOG/git.log" 2>&1 || { say "installing git failed"; exit 1; }
    tar -C "$DIR" -czf "$CACHE" . && say "bare root made in $(($(date +%s) - t0)) s, cached in $CACHE"
fi
cp /etc/resolv.conf "$DIR/etc/resolv.conf"
mount -t proc proc "$DIR/proc" && mount -t sysfs sysfs "$DIR/sys" &&
    mount --rbind /dev "$DIR/dev" && mount --make-rslave "$DIR/dev" ||
    { say "mounting /proc, /sys, /dev failed"; exit 1; }

chmod 0700 "$DIR/root"
git clone -q --branch "$BRANCH" "$REPO" "$DIR/root/ecosched" ||
    { say "git clone $REPO $BRANCH failed"; exit 1; }
say "clone of $REPO branch $BRANCH at $(git -C "$DIR/root/ecosched" log --oneline -1)"

# the README's two commands: the lines of its first sh block, comments cut
sed -n '/^```sh$/,/^```$/{/^```/d;p;}' "$HERE/README.md" | sed 's/#.*//; s/ *$//' |
    grep -v '^$' | head -2 >"$LOG/commands.txt"
[ "$(wc -l <"$LOG/commands.txt")" -eq 2 ] || { say "README: two commands not found"; exit 1; }
status=0
i=0
while IFS= read -r cmd; do
    i=$((i + 1))
    t=$(date +%s)
    chroot "$DIR" /usr/bin/env -i PATH=$PATH_IN HOME=/root TERM=dumb USER=root LOGNAME=root \
        sh -c "cd /root/ecosched && $cmd" >"$LOG/command$i.log" 2>&1 </dev/null
    rc=$?
    [ $rc -eq 0 ] || status=1
    say "'$cmd': $([ $rc -eq 0 ] && echo ok || echo FAILED) (exit $rc, $(($(date +%s) - t)) s, log $LOG/command$i.log)"
    [ $rc -eq 0 ] || tail -30 "$LOG/command$i.log"
done <"$LOG/commands.txt"
say "done in $(($(date +%s) - t0)) s"
exit $status
