/* Running a helper program (git) and capturing its standard output. */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cn_util.h"

extern char **environ;

int cn_proc_capture(char *const argv[], size_t max_bytes, char **out, size_t *len, int *status)
{
    posix_spawn_file_actions_t fa;
    int pipefd[2], st = 0, rc = 0;
    pid_t pid;
    cn_buf buf = CN_BUF_INIT;
    char chunk[65536];
    ssize_t k;

    *out = NULL;
    if (len) *len = 0;
    if (status) *status = -1;
    /* close-on-exec: a helper another thread spawns meanwhile must not hold
     * this pipe open (the child's stdout is a dup2, without the flag) */
    if (pipe2(pipefd, O_CLOEXEC) != 0) return cn_error_set(CN_EIO, "cannot create a pipe: %s", strerror(errno));
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addclose(&fa, pipefd[0]);
    rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(pipefd[1]);
    if (rc != 0) {
        close(pipefd[0]);
        return cn_error_set(CN_ENOTFOUND, "cannot run %s: %s", argv[0], strerror(rc));
    }
    while ((k = read(pipefd[0], chunk, sizeof chunk)) != 0) {
        if (k < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (max_bytes && buf.len + (size_t)k > max_bytes) {
            rc = cn_error_set(CN_EINVAL, "%s printed more than %zu bytes", argv[0], max_bytes);
            break;
        }
        if (cn_buf_append(&buf, chunk, (size_t)k) < 0) {
            rc = CN_ENOMEM;
            break;
        }
    }
    close(pipefd[0]);
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    if (rc < 0) {
        cn_buf_free(&buf);
        return rc;
    }
    if (status) *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    if (len) *len = buf.len;
    *out = cn_buf_steal(&buf);
    return *out ? 0 : cn_error_set(CN_ENOMEM, "out of memory");
}
