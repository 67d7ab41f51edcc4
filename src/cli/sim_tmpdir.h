/* SPDX-License-Identifier: MIT */
/* The temporary --out of `sim --report` without --out: made under $TMPDIR, removed at the
 * end of the run and when SIGINT, SIGTERM or SIGHUP ends it (docs/report.md). */
#ifndef ECOSCHED_CLI_SIM_TMPDIR_H
#define ECOSCHED_CLI_SIM_TMPDIR_H

#include <stddef.h>

/* Makes the directory "$TMPDIR/ecosched-sim-XXXXXX" (/tmp without TMPDIR; mode 0700) into
 * out (cap bytes) and guards it: from then on SIGINT, SIGTERM and SIGHUP (those not ignored)
 * remove it with all in it, then end the process by the same signal as before (its default
 * action: exit status 128 + its number in a shell). One directory per process. 0, or -errno
 * of mkdtemp (out holds the name tried). *watch_err: 0, or the errno that kept the watcher
 * from starting (the directory is then only removed at the end). */
int eco_cli__tmpdir_make(char *out, size_t cap, int *watch_err);

/* Removes the guarded directory and all in it, symbolic links not followed, once (here or on
 * a signal, whichever comes first); a warning on stderr when it cannot, unless quiet. The
 * signals stay with the watcher, which still ends the process by them. */
void eco_cli__tmpdir_remove(int quiet);

#endif
