/* SPDX-License-Identifier: Apache-2.0 */
/* Running a helper program (git) and capturing its standard output. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cn_util.h"

extern char **environ;

int cn_proc_spawn(char *const argv[], char *const envp[], int stdin_fd, pid_t *pid, int *out_fd)
{
    posix_spawn_file_actions_t fa;
    int pipefd[2], rc;

    /* close-on-exec: a helper another thread spawns meanwhile must not hold
     * this pipe open (the child's stdout is a dup2, without the flag) */
    if (pipe2(pipefd, O_CLOEXEC) != 0) return cn_error_set(CN_EIO, "cannot create a pipe: %s", strerror(errno));
    /* the helper stays in our process group: whoever stops codenib with
     * its group (a terminal, `codenib eval` ending an instance) stops the
     * helper too */
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    if (stdin_fd >= 0) posix_spawn_file_actions_adddup2(&fa, stdin_fd, 0);
    else posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    rc = posix_spawnp(pid, argv[0], &fa, NULL, argv, envp ? envp : environ);
    posix_spawn_file_actions_destroy(&fa);
    close(pipefd[1]);
    if (rc != 0) {
        close(pipefd[0]);
        return cn_error_set(CN_ENOTFOUND, "cannot run %s: %s", argv[0], strerror(rc));
    }
    *out_fd = pipefd[0];
    return 0;
}

void cn_proc_kill(pid_t pid)
{
    kill(pid, SIGKILL);
}

int cn_proc_wait(pid_t pid)
{
    int st = 0;
    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR) return -1;
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int cn_proc_run(char *const argv[], const cn_proc_opts *o, char **out, size_t *len, int *status)
{
    static const cn_proc_opts defaults = {NULL, -1, 0, 0};
    cn_buf buf = CN_BUF_INIT;
    char chunk[65536];
    long long deadline;
    int fd, rc, st;
    pid_t pid;

    if (o == NULL) o = &defaults;
    *out = NULL;
    if (len) *len = 0;
    if (status) *status = -1;
    if ((rc = cn_proc_spawn(argv, o->envp, o->stdin_fd, &pid, &fd)) < 0) return rc;
    deadline = o->timeout_ms ? now_ms() + o->timeout_ms : 0;
    for (;;) {
        ssize_t k;
        if (deadline) {
            struct pollfd p = {fd, POLLIN, 0};
            long long left = deadline - now_ms();
            int r = left > 0 ? poll(&p, 1, left > 60000 ? 60000 : (int)left) : 0;
            if (r < 0 && errno == EINTR) continue;
            if (r == 0 && now_ms() < deadline) continue;
            if (r == 0) {
                /* the helper goes; a child it left holding the pipe does
                 * not keep us waiting, as only the helper is reaped */
                cn_proc_kill(pid);
                rc = cn_error_set(CN_ETIMEOUT, "%s took longer than %u s and was stopped", argv[0],
                                  (o->timeout_ms + 999) / 1000);
                break;
            }
        }
        k = read(fd, chunk, sizeof chunk);
        if (k == 0) break;
        if (k < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (o->max_bytes && buf.len + (size_t)k > o->max_bytes) {
            cn_proc_kill(pid);
            rc = cn_error_set(CN_EINVAL, "%s printed more than %zu bytes", argv[0], o->max_bytes);
            break;
        }
        if (cn_buf_append(&buf, chunk, (size_t)k) < 0) {
            cn_proc_kill(pid);
            rc = cn_error_set(CN_ENOMEM, "out of memory");
            break;
        }
    }
    close(fd);
    st = cn_proc_wait(pid);
    if (rc < 0) {
        cn_buf_free(&buf);
        return rc;
    }
    if (status) *status = st;
    if (len) *len = buf.len;
    *out = cn_buf_steal(&buf);
    return *out ? 0 : cn_error_set(CN_ENOMEM, "out of memory");
}
