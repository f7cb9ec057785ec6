/* SPDX-License-Identifier: Apache-2.0 */
/* Deferred fsync (cn_fsync_dir_begin / cn_fsync_defer / cn_fsync_dir_finish):
 * files written into a registered directory are in place at once and
 * synced by its thread; a failure is reported by finish, naming the file;
 * other directories are not affected. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cn_util.h"
#include "tap.h"

static bool has(const char *path, const char *want)
{
    char *text = NULL;
    bool same = cn_file_read(path, 1 << 20, &text, NULL) == 0 && strcmp(text, want) == 0;
    free(text);
    return same;
}

int main(void)
{
    char base[] = "/tmp/cn-fsync-XXXXXX", dir[300], other[300], path[400];
    int fds[2];

    if (mkdtemp(base) == NULL) return 1;
    snprintf(dir, sizeof dir, "%s/build", base);
    snprintf(other, sizeof other, "%s/other", base);
    mkdir(dir, 0755);
    mkdir(other, 0755);

    ok(cn_fsync_dir_begin(dir) == 0, "a directory is registered");
    for (int i = 0; i < 20; i++) {
        char body[32];
        snprintf(path, sizeof path, "%s/f%d.json", dir, i);
        snprintf(body, sizeof body, "{\"i\": %d}", i);
        if (cn_file_write_atomic(path, body, strlen(body)) < 0) break;
    }
    snprintf(path, sizeof path, "%s/f19.json", dir);
    ok(has(path, "{\"i\": 19}"), "a file written there is in place before the syncs are done");
    snprintf(path, sizeof path, "%s/x.json", other);
    ok(cn_file_write_atomic(path, "{}", 2) == 0 && has(path, "{}"), "another directory is written as before");
    {
        int fd = open(path, O_RDONLY);
        ok(!cn_fsync_defer(fd, path), "its files are not taken over");
        close(fd);
    }
    ok(cn_fsync_dir_finish(dir) == 0, "finish: every file synced");
    snprintf(path, sizeof path, "%s/f0.json", dir);
    ok(has(path, "{\"i\": 0}"), "and the files are whole");
    ok(cn_fsync_dir_finish(dir) == 0, "finishing twice is harmless");
    ok(cn_fsync_dir_finish(other) == 0, "finishing a directory never begun is harmless");

    /* a file that cannot be synced (a pipe: fsync fails with EINVAL) */
    ok(cn_fsync_dir_begin(dir) == 0 && pipe(fds) == 0, "registered again");
    snprintf(path, sizeof path, "%s/pipe.bin", dir);
    ok(cn_fsync_defer(fds[0], path), "its fds are taken over");
    close(fds[1]);
    ok(cn_fsync_dir_finish(dir) == CN_EIO, "finish reports the failed fsync");
    has_str(cn_error_last()->message, "pipe.bin: fsync failed", "naming the file");

    snprintf(path, sizeof path, "rm -rf '%s'", base);
    if (system(path) != 0) diag("could not remove %s", base);
    return tap_done();
}
