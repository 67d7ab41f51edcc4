/* SPDX-License-Identifier: MIT */
/* Fuzz target: the accounting report's readers (src/cli/report_acct.c, docs/report.md):
 * `sacct --json` output and a saved page of ecoschedd's GET /v1/jobs (an object with "next"),
 * then the table printed as text and as HTML. */
#include "fuzz_util.h"
#include "cli/report_acct.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct eco_acct_table *t = NULL;
    struct eco_error err = {{0}};
    if (eco_cli__acct_load(fuzz_file(data, size), &t, &err) < 0) {
        FUZZ_CHECK(!t && err.msg[0]);
        return 0;
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    FUZZ_CHECK(f);
    eco_cli__acct_print(f, t);
    FUZZ_CHECK(eco_cli__acct_html(f, t, "fuzz", "fuzz") == 0);
    fclose(f);
    free(buf);
    eco_cli__acct_free(t);
    return 0;
}
