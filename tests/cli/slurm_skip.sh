#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/slurm/slurm.sh skips (exit 77, reason printed) where slurmd cannot start because no
# cgroup filesystem is mounted on /sys/fs/cgroup: run with an empty directory standing in for
# it and stub Slurm commands, it must skip at once instead of starting anything and failing.
# tests/slurm/multihost.sh skips the same way where network namespaces are not allowed (an `ip`
# whose `netns add` fails, as in a container without CAP_SYS_ADMIN).
set -u
ECO="$1"; SRC="$2"
[ "$(id -u)" -eq 0 ] || { echo "SKIP: slurm.sh skips for non-root before the cgroup check"; exit 77; }
T=$(mktemp -d /tmp/ecosched-slurmskip.XXXXXX)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/bin" "$T/nocgroup"
# stubs: the packages look installed, every daemon and client fails at once
printf '#!/bin/sh\necho "install ok installed"\n' >"$T/bin/dpkg-query"
for c in munged slurmctld slurmd sinfo srun sbatch squeue scontrol apt-get; do
    printf '#!/bin/sh\nexit 1\n' >"$T/bin/$c"
done
chmod +x "$T/bin"/*
: >"$T/spank.so"
PATH="$T/bin:$PATH" ECO_TEST_CGROUP_DIR="$T/nocgroup" timeout 60 sh "$SRC/tests/slurm/slurm.sh" \
    "$ECO" "$ECO" "$ECO" "$ECO" "$T/spank.so" "$ECO" "$SRC" >"$T/out" 2>&1
rc=$?
fail=0
[ "$rc" -eq 77 ] ||
    { echo "FAIL: slurm.sh without a cgroup mount: exit $rc, want 77"; fail=$((fail + 1)); }
grep -q "^SKIP: no cgroup filesystem mounted on $T/nocgroup" "$T/out" ||
    { echo "FAIL: the skip does not give the reason:"; cat "$T/out"; fail=$((fail + 1)); }
# multihost.sh: a cgroup mount (/proc stands in: a mount point in a chroot too), `ip netns add`
# refused
printf '#!/bin/sh\n[ "$1 $2" = "netns add" ] && { echo "mount --make-shared /run/netns failed: Operation not permitted" >&2; exit 1; }\nexit 1\n' >"$T/bin/ip"
chmod +x "$T/bin/ip"
PATH="$T/bin:$PATH" ECO_TEST_CGROUP_DIR=/proc timeout 60 sh "$SRC/tests/slurm/multihost.sh" \
    "$ECO" "$ECO" "$ECO" "$ECO" "$T/spank.so" "$ECO" "$SRC" >"$T/out" 2>&1
rc=$?
[ "$rc" -eq 77 ] ||
    { echo "FAIL: multihost.sh without network namespaces: exit $rc, want 77"; fail=$((fail + 1)); }
grep -q "^SKIP: ip netns add not permitted here: mount --make-shared /run/netns failed: Operation not permitted" "$T/out" ||
    { echo "FAIL: multihost.sh's skip does not give the reason:"; cat "$T/out"; fail=$((fail + 1)); }
echo "slurm_skip: $((4 - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
