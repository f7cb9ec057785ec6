/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers run with a time limit (cn_proc_run): output and status, stdin on
 * /dev/null, a helper that overruns stopped with CN_ETIMEOUT naming it, too
 * much output refused; and
 * cn_file_read refusing a FIFO at once instead of waiting for a writer. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/cn_util.h"
#include "tap.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int run(const char *script, unsigned timeout_ms, size_t max_bytes, char **out, int *status)
{
    char *argv[] = {"sh", "-c", (char *)script, NULL};
    cn_proc_opts o = {NULL, -1, timeout_ms, max_bytes};
    size_t len = 0;
    return cn_proc_run(argv, &o, out, &len, status);
}

int main(void)
{
    char base[] = "/tmp/cn-proc-XXXXXX", fifo[300];
    char *out = NULL;
    int status = -1;
    double t0;

    alarm(120); /* a hang fails the test instead of the whole run */
    if (mkdtemp(base) == NULL) return 1;

    ok(run("echo hello; exit 3", 5000, 0, &out, &status) == 0, "a helper runs");
    is_str(out, "hello\n", "its output");
    is_int(status, 3, "its exit status");
    free(out);

    ok(run("cat", 5000, 0, &out, &status) == 0 && status == 0, "stdin is /dev/null: cat ends at once");
    free(out);

    t0 = now_s();
    is_int(run("exec sleep 60", 300, 0, &out, &status), CN_ETIMEOUT, "a helper that overruns its limit: CN_ETIMEOUT");
    ok(now_s() - t0 < 30, "stopped at the limit, not when it ends");
    has_str(cn_error_last()->message, "sh took longer than 1 s", "the message names the helper and the limit");
    ok(out == NULL, "no output on an error");

    is_int(run("head -c 100000 /dev/zero", 5000, 1000, &out, &status), CN_EINVAL, "output over max_bytes: refused");

    snprintf(fifo, sizeof fifo, "%s/fifo", base);
    if (mkfifo(fifo, 0600) == 0) {
        size_t len = 0;
        t0 = now_s();
        is_int(cn_file_read(fifo, 0, &out, &len), CN_EIO, "cn_file_read on a FIFO: CN_EIO");
        ok(now_s() - t0 < 30, "at once, not waiting for a writer");
        has_str(cn_error_last()->message, "not a regular file", "saying it is not a regular file");
        unlink(fifo);
    } else {
        ok(1, "# SKIP no FIFOs here");
        ok(1, "# SKIP no FIFOs here");
        ok(1, "# SKIP no FIFOs here");
    }
    rmdir(base);
    return tap_done();
}
