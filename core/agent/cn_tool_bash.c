/* SPDX-License-Identifier: Apache-2.0 */
/* The bash tool: `/bin/sh -c command` in the repository root, off unless
 * the operator enables it.  The command gets its own process group so
 * that a timeout, or background jobs left behind, can be stopped as a
 * whole: SIGTERM first, SIGKILL after a grace period. */
#include "cn_tools.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* After the shell exits, how long output from processes it left behind is
 * still collected before they are stopped. */
#define STRAGGLER_GRACE_MS 200
/* Between SIGTERM and SIGKILL. */
#define TERM_GRACE_MS 1000
#define POLL_SLICE_MS 50

typedef struct run {
    pid_t pid;
    int fd;                    /* read end of the output pipe, -1 once at EOF */
    bool exited;               /* the shell exited (not yet reaped) */
    bool timed_out;
    bool unknown_status;       /* reaped by someone else (SIGCHLD ignored) */
    cn_tools_out out;
} run;

extern char **environ;

/* Variables a command the model runs must not see: the keys of the model
 * endpoints (what codenib reads, and what config.yaml's api_key_env names
 * is one of these by convention) and anything named like a secret. */
static bool secret_name(const char *kv)
{
    static const char *const suffixes[] = {"_API_KEY", "_TOKEN", "_SECRET", "_PASSWORD"};
    const char *eq = strchr(kv, '=');
    size_t n = eq ? (size_t)(eq - kv) : strlen(kv);
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        size_t m = strlen(suffixes[i]);
        if (n >= m && strncmp(kv + n - m, suffixes[i], m) == 0) return true;
    }
    return false;
}

/* The environment of the command: codenib's own, without the secrets.
 * Made before fork (allocation is not async-signal-safe); NULL when out of
 * memory, and the command is then not run. */
static char **command_env(void)
{
    size_t n = 0, k = 0;
    char **env;
    for (char **e = environ; e && *e; e++) n++;
    if ((env = calloc(n + 1, sizeof *env)) == NULL) return NULL;
    for (char **e = environ; e && *e; e++)
        if (!secret_name(*e)) env[k++] = *e;
    env[k] = NULL;
    return env;
}

static void child_exec(const char *root, const char *command, int out_fd, char **envp)
{
    static const int reset[] = {SIGPIPE, SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGCHLD};
    struct sigaction dfl;
    sigset_t none;
    int nul;

    /* Only async-signal-safe calls between fork and exec.  The host may
     * block or ignore signals; the command starts with the defaults. */
    setpgid(0, 0);
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    for (size_t i = 0; i < sizeof reset / sizeof reset[0]; i++) sigaction(reset[i], &dfl, NULL);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    nul = open("/dev/null", O_RDONLY);
    if (nul < 0 || dup2(nul, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(out_fd, 2) < 0) _exit(126);
    if (chdir(root) != 0) {
        static const char msg[] = "cannot enter the repository root\n";
        if (write(2, msg, sizeof msg - 1) < 0) _exit(126);
        _exit(126);
    }
    /* Descriptors of the host (model connections, index files) stay behind. */
    close_range(3, ~0u, 0);
    execle("/bin/sh", "sh", "-c", command, (char *)NULL, envp);
    _exit(127);
}

/* Appends what the pipe holds; NUL bytes become U+FFFD so the text stays a
 * C string. */
static int drain(run *r)
{
    char chunk[16384];
    ssize_t k = read(r->fd, chunk, sizeof chunk);
    int rc = 0;
    if (k < 0 && (errno == EINTR || errno == EAGAIN)) return 0;
    if (k <= 0) {   /* end of output, or a broken pipe: stop reading */
        close(r->fd);
        r->fd = -1;
        return 0;
    }
    for (ssize_t i = 0, s = 0; i <= k && rc == 0; i++) {
        if (i < k && chunk[i] != '\0') continue;
        rc = cn_tools__out_append(&r->out, chunk + s, (size_t)(i - s));
        if (rc == 0 && i < k) rc = cn_tools__out_append(&r->out, "\xEF\xBF\xBD", 3);
        s = i + 1;
    }
    return rc;
}

/* Waits up to ms for output or the end of the pipe, collecting it. */
static int wait_output(run *r, long long ms)
{
    struct pollfd p;
    int n;
    if (ms < 0) ms = 0;
    if (r->fd < 0) {
        poll(NULL, 0, (int)ms);
        return 0;
    }
    p.fd = r->fd;
    p.events = POLLIN;
    p.revents = 0;
    n = poll(&p, 1, (int)ms);
    if (n > 0) return drain(r);
    return 0;
}

static void check_exit(run *r)
{
    siginfo_t si;
    if (r->exited) return;
    memset(&si, 0, sizeof si);
    /* WNOWAIT leaves the shell a zombie, so its process group id cannot be
     * reused before the group is signalled. */
    if (waitid(P_PID, (id_t)r->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0) {
        if (si.si_pid == r->pid) r->exited = true;
    } else if (errno == ECHILD) {
        r->exited = true;      /* the host ignores SIGCHLD: already reaped */
    }
}

/* Runs until the shell exited and its output ended, or the deadline. */
static int supervise(const cn_tools_config *c, run *r, long timeout_ms)
{
    long long deadline = cn_tools__now_ms() + timeout_ms, grace_end = 0;
    int rc = 0;
    for (;;) {
        long long now = cn_tools__now_ms(), until = deadline;
        check_exit(r);
        if (r->exited && r->fd < 0) break;
        if (r->exited) {
            /* Background jobs still hold the pipe: give them a moment. */
            if (grace_end == 0) grace_end = now + STRAGGLER_GRACE_MS;
            if (now >= grace_end) break;
            if (grace_end < until) until = grace_end;
        }
        if (now >= deadline || (c->cancel != NULL && atomic_load(c->cancel))) {
            /* a cancelled call is stopped as a late one is */
            r->timed_out = true;
            break;
        }
        if (until - now > POLL_SLICE_MS) until = now + POLL_SLICE_MS;
        if ((rc = wait_output(r, until - now)) < 0) break;
    }
    return rc;
}

/* Stops the whole process group: SIGTERM, then SIGKILL after a grace
 * period (at once when the shell already exited), then reaps the shell. */
static int stop_group(run *r, int *status)
{
    int st = 0;
    if (r->timed_out) {
        long long end;
        kill(-r->pid, SIGTERM);
        end = cn_tools__now_ms() + TERM_GRACE_MS;
        while (!r->exited && cn_tools__now_ms() < end) {
            if (wait_output(r, 20) < 0) break;
            check_exit(r);
        }
    }
    kill(-r->pid, SIGKILL);
    for (;;) {
        if (waitpid(r->pid, &st, 0) == r->pid) break;
        if (errno != EINTR) {
            r->unknown_status = true;
            break;
        }
    }
    /* Collect what the pipe still holds. */
    while (r->fd >= 0) {
        struct pollfd p = {r->fd, POLLIN, 0};
        if (poll(&p, 1, 0) <= 0 || drain(r) < 0) break;
    }
    *status = st;
    return 0;
}

static int status_line(cn_buf *b, const run *r, int st, long timeout_ms)
{
    if (r->timed_out)
        return cn_buf_printf(b, "[timed out after %ld ms: the command and the processes it "
                                "started were stopped]\n", timeout_ms);
    if (r->unknown_status) return cn_buf_puts(b, "[exit status unknown]\n");
    if (WIFEXITED(st)) return cn_buf_printf(b, "[exit status %d]\n", WEXITSTATUS(st));
    if (WIFSIGNALED(st))
        return cn_buf_printf(b, "[killed by signal %d (%s)]\n", WTERMSIG(st),
                             strsignal(WTERMSIG(st)));
    return cn_buf_printf(b, "[ended with wait status %d]\n", st);
}

static int spawn(const cn_tools_config *c, const char *command, run *r)
{
    int pfd[2];
    char **envp = command_env();
    if (envp == NULL) return cn_error_set(CN_ENOMEM, "bash: out of memory preparing the environment");
    if (pipe2(pfd, O_CLOEXEC) != 0) {
        free(envp);
        return cn_error_set(CN_EIO, "bash: cannot create a pipe: %s", strerror(errno));
    }
    r->pid = fork();
    if (r->pid < 0) {
        int e = errno;
        close(pfd[0]);
        close(pfd[1]);
        free(envp);
        return cn_error_set(CN_EIO, "bash: cannot start /bin/sh: %s", strerror(e));
    }
    if (r->pid == 0) child_exec(c->root, command, pfd[1], envp);
    free(envp);
    /* Also here, so the group exists before any kill(-pid) whichever
     * process runs first. */
    setpgid(r->pid, r->pid);
    close(pfd[1]);
    r->fd = pfd[0];
    return 0;
}

int cn_tools__bash(const cn_tools_config *c, json_object *args, char **output)
{
    const char *command;
    long timeout_ms;
    run r;
    int rc, st = 0;

    if (!c->bash_enabled)
        return cn_error_set(CN_EDENIED, "bash is disabled; enable it with %s (an operator "
                                        "setting), or use read, grep and glob instead",
                            c->bash_hint);
    if ((rc = cn_tools__arg_str(args, "command", true, &command)) < 0) return rc;
    if (command[0] == '\0') return cn_error_set(CN_EINVAL, "argument 'command' is empty");
    if ((rc = cn_tools__arg_long(args, "timeout", c->bash_timeout_ms, 1, &timeout_ms)) < 0) return rc;
    if (timeout_ms > c->bash_timeout_ms)
        return cn_error_set(CN_EINVAL, "argument 'timeout' must be at most %ld (ms, this server's limit), got %ld",
                            c->bash_timeout_ms, timeout_ms);
    memset(&r, 0, sizeof r);
    r.fd = -1;
    cn_tools__out_init(&r.out, c->output_cap);
    if ((rc = spawn(c, command, &r)) < 0) {
        cn_tools__out_free(&r.out);
        return rc;
    }
    rc = supervise(c, &r, timeout_ms);
    stop_group(&r, &st);
    if (r.timed_out && c->bash_timed_out != NULL) *c->bash_timed_out = true;
    if (r.fd >= 0) close(r.fd);
    if (rc == 0) {
        cn_buf note = CN_BUF_INIT;
        status_line(&note, &r, st, timeout_ms);
        rc = note.oom ? cn_error_set(CN_ENOMEM, "out of memory")
                      : cn_tools__out_finish_with(&r.out, note.data, output);
        cn_buf_free(&note);
    }
    cn_tools__out_free(&r.out);
    return rc;
}
