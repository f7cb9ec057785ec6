/* SPDX-License-Identifier: Apache-2.0 */
/* Confinement against a race (issue #19, item 3): while a child process
 * swaps a directory of the repository for a symbolic link to a directory
 * outside and back (renameat2 RENAME_EXCHANGE: atomic, thousands of times
 * a second), read, grep and glob, and the skills' file service, are
 * called over and over.  None may ever show the outside file or its name:
 * a path checked and then opened by name loses this race; one opened
 * beneath the root's descriptor cannot. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../core/agent/cn_tools.h"
#include "../../core/plugin/cn_host.h"
#include "../../core/util/cn_beneath.h"
#include "tap.h"

#define SECRET "OUTSIDE_SECRET"
#define SECRET_NAME "outside_only_name.txt"

static char base[2048], root[4096];

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f == NULL || fputs(text, f) < 0) {
        printf("Bail out! cannot write %s: %s\n", path, strerror(errno));
        exit(1);
    }
    fclose(f);
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* base/repo/d/f.txt (inside), base/outside/{f.txt, SECRET_NAME} and the
 * link base/spare -> base/outside that the swapper exchanges with d. */
static void make_tree(void)
{
    char tmpl[] = "/tmp/cn-race-XXXXXX", p[8192];
    char *real;
    if (mkdtemp(tmpl) == NULL || (real = realpath(tmpl, NULL)) == NULL) {
        printf("Bail out! mkdtemp: %s\n", strerror(errno));
        exit(1);
    }
    snprintf(base, sizeof base, "%s", real);
    free(real);
    snprintf(root, sizeof root, "%s/repo", base);
    snprintf(p, sizeof p, "%s/repo", base);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/repo/d", base);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/repo/d/f.txt", base);
    put(p, "inside line\n");
    snprintf(p, sizeof p, "%s/outside", base);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/outside/f.txt", base);
    put(p, SECRET " line\n");
    snprintf(p, sizeof p, "%s/outside/" SECRET_NAME, base);
    put(p, SECRET " line\n");
    snprintf(p, sizeof p, "%s/spare", base);
    {
        char target[8192];
        snprintf(target, sizeof target, "%s/outside", base);
        if (symlink(target, p) != 0) {
            printf("Bail out! symlink: %s\n", strerror(errno));
            exit(1);
        }
    }
}

static pid_t start_swapper(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        char d[8192], spare[8192];
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        snprintf(d, sizeof d, "%s/d", root);
        snprintf(spare, sizeof spare, "%s/spare", base);
        for (;;)
            if (renameat2(AT_FDCWD, d, AT_FDCWD, spare, RENAME_EXCHANGE) != 0) _exit(3);
    }
    return pid;
}

static bool leaked(const char *text)
{
    return text != NULL && (strstr(text, SECRET) != NULL || strstr(text, SECRET_NAME) != NULL);
}

int main(void)
{
    static const struct { const char *tool, *args; } calls[] = {
        {"read", "{\"path\":\"d/f.txt\"}"},
        {"grep", "{\"pattern\":\"line\",\"path\":\"d\"}"},
        {"grep", "{\"pattern\":\"line\"}"},
        {"glob", "{\"pattern\":\"**\"}"},
        {"glob", "{\"pattern\":\"*\",\"path\":\"d\"}"},
    };
    cn_tools_config c;
    long long until;
    long n = 0, leaks = 0, inside = 0, max_calls;
    int status = 0;
    pid_t swapper;
    bool valgrind = getenv("CN_VALGRIND") && getenv("CN_VALGRIND")[0];

    make_tree();
    cn_tools_config_init(&c, root);
    swapper = start_swapper();
    if (swapper < 0) {
        printf("Bail out! fork: %s\n", strerror(errno));
        return 1;
    }
    /* bounded in calls and in time, whichever comes first */
    max_calls = valgrind ? 3000 : 60000;
    until = now_ms() + (valgrind ? 20000 : 4000);
    for (; n < max_calls && now_ms() < until; n++) {
        size_t k = (size_t)n % (sizeof calls / sizeof calls[0] + 1);
        char *out = NULL;
        if (k == sizeof calls / sizeof calls[0]) {
            size_t len = 0;
            if (cn_confined_read(root, "d/f.txt", 0, &out, &len) < 0) out = NULL;
        } else {
            json_object *args = json_tokener_parse(calls[k].args);
            if (cn_tool_run(&c, calls[k].tool, args, &out) < 0) out = NULL;
            json_object_put(args);
        }
        cn_error_clear();
        if (leaked(out)) {
            if (leaks++ < 3)
                diag("call %ld (%s) leaked: %.*s", n,
                     k < sizeof calls / sizeof calls[0] ? calls[k].tool : "files service",
                     (int)strcspn(out, "\n"), out);
        }
        if (out && strstr(out, "inside line")) inside++;
        free(out);
    }
    diag("%ld calls, %ld saw the inside file, %ld leaked", n, inside, leaks);
    ok(inside > 0, "calls got through between the swaps");
    is_int(leaks, 0, "no call ever showed the file outside the repository or its name");

    /* The walk cn_open_beneath falls back to without openat2, raced the
     * same way: every open either fails or gets the inside file. */
    {
        int rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        long opened = 0, wrong = 0;
        until = now_ms() + (valgrind ? 5000 : 1500);
        for (long i = 0; i < max_calls && now_ms() < until; i++) {
            char buf[64];
            int fd = cn_beneath__walk(rootfd, "d/f.txt", O_RDONLY);
            ssize_t k;
            cn_error_clear();
            if (fd < 0) continue;
            k = read(fd, buf, sizeof buf - 1);
            close(fd);
            buf[k > 0 ? k : 0] = '\0';
            opened++;
            if (strstr(buf, SECRET)) wrong++;
        }
        close(rootfd);
        diag("fallback walk: %ld opens, %ld outside", opened, wrong);
        ok(opened > 0, "the fallback walk opened the inside file between the swaps");
        is_int(wrong, 0, "the fallback walk never opened the outside file");
    }
    kill(swapper, SIGKILL);
    waitpid(swapper, &status, 0);
    ok(WIFSIGNALED(status), "the swapper ran until stopped (renameat2 works here)");
    {
        char cmd[8300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
        if (system(cmd) != 0) diag("could not remove %s", base);
    }
    return tap_done();
}
