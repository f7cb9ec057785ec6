/* SPDX-License-Identifier: Apache-2.0 */
/* Running git on a repository codenib does not trust (see cn_git.h). */
#include "cn_git.h"

#include <stdlib.h>
#include <string.h>

#include "cn_util.h"

extern char **environ;

#define GIT_TIMEOUT_DEFAULT_MS 30000u

/* Settings given on git's command line, which win over every config file
 * the repository has (and its include.path files).  Why each: */
static const char *const fixed_config[] = {
    "core.fsmonitor=false",       /* a command run on every index read */
    "core.hooksPath=/dev/null",   /* post-index-change and any other hook */
    "core.untrackedCache=false",  /* would have git rewrite the index */
    "core.splitIndex=false",      /* likewise */
    "submodule.recurse=false",    /* a submodule has a config of its own */
    "diff.external=",             /* a command, should anything diff */
    "protocol.allow=never",       /* a partial clone fetches missing objects
                                   * on demand, through transports that can
                                   * run commands (ext::, sshCommand) */
    "core.quotePath=off",         /* names as they are, for -z output */
    NULL,
};

/* Environment settings; every GIT_* variable of ours is dropped first
 * (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE, GIT_CONFIG_PARAMETERS,
 * GIT_EXTERNAL_DIFF, ... would point git elsewhere or run something). */
static const char *const fixed_env[] = {
    "GIT_CONFIG_NOSYSTEM=1",
    "GIT_CONFIG_GLOBAL=/dev/null",
    "GIT_ATTR_NOSYSTEM=1",
    "GIT_TERMINAL_PROMPT=0",
    "GIT_OPTIONAL_LOCKS=0",
    "GIT_PAGER=cat",
    NULL,
};

unsigned cn_git_timeout_ms(void)
{
    const char *s = getenv("CODENIB_GIT_TIMEOUT");
    char *end;
    double v;
    if (s == NULL || *s == '\0') return GIT_TIMEOUT_DEFAULT_MS;
    v = strtod(s, &end);
    if (*end != '\0' || !(v > 0) || v > 86400) return GIT_TIMEOUT_DEFAULT_MS;
    return (unsigned)(v * 1000 + 0.5) ? (unsigned)(v * 1000 + 0.5) : 1;
}

/* A NULL-terminated copy of v's pointers (the strings stay v's). */
static char **as_argv(const cn_strv *v)
{
    char **a = calloc(v->len + 1, sizeof *a);
    if (a != NULL)
        for (size_t i = 0; i < v->len; i++) a[i] = v->items[i];
    return a;
}

static int make_env(cn_strv *env)
{
    for (char **e = environ; e && *e; e++)
        if (strncmp(*e, "GIT_", 4) != 0 && cn_strv_push(env, *e) < 0) return CN_ENOMEM;
    for (size_t i = 0; fixed_env[i]; i++)
        if (cn_strv_push(env, fixed_env[i]) < 0) return CN_ENOMEM;
    return 0;
}

/* git, where it runs, and the fixed settings. */
static int base_argv(cn_strv *a, const char *where, bool git_dir)
{
    if (cn_strv_push(a, "git") < 0) return CN_ENOMEM;
    if (git_dir) {
        if (cn_strv_push_owned(a, cn_strprintf("--git-dir=%s", where)) < 0) return CN_ENOMEM;
    } else if (cn_strv_push(a, "-C") < 0 || cn_strv_push(a, where) < 0) {
        return CN_ENOMEM;
    }
    if (cn_strv_push(a, "--no-optional-locks") < 0) return CN_ENOMEM;
    for (size_t i = 0; fixed_config[i]; i++)
        if (cn_strv_push(a, "-c") < 0 || cn_strv_push(a, fixed_config[i]) < 0) return CN_ENOMEM;
    return 0;
}

/* Adds "-c filter.NAME.clean=" and the like for every filter driver the
 * repository's config names: a driver .gitattributes selects then has no
 * command, and is not required, so git reads the file as it is.  Listing
 * the keys runs nothing (git config only reads files). */
static int disable_filters(cn_strv *a, char **envp, const char *where, unsigned timeout_ms)
{
    cn_strv q = {0};
    cn_strv seen = {0};
    char **qa = NULL, *out = NULL;
    size_t len = 0;
    int status = -1, rc;
    cn_proc_opts o = {envp, -1, timeout_ms, 1u << 20};

    if ((rc = base_argv(&q, where, false)) < 0 || (rc = cn_strv_push(&q, "config")) < 0 ||
        (rc = cn_strv_push(&q, "-z")) < 0 || (rc = cn_strv_push(&q, "--name-only")) < 0 ||
        (rc = cn_strv_push(&q, "--get-regexp")) < 0 || (rc = cn_strv_push(&q, "^filter\\.")) < 0 ||
        (qa = as_argv(&q)) == NULL) {
        rc = cn_error_set(CN_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = cn_proc_run(qa, &o, &out, &len, &status)) < 0) goto out;
    /* 1: no such key; anything else: a config git cannot read, which the
     * command itself would fail on too */
    if (status != 0 && status != 1) {
        rc = cn_error_set(CN_EIO, "git config exited with %d (not a directory git can read?)", status);
        goto out;
    }
    for (size_t i = 0; status == 0 && i < len && rc == 0;) {
        char *key = out + i, *first, *last;
        size_t n = strnlen(key, len - i);
        i += n + 1;  /* the output is NUL-terminated past len too */
        /* "filter.<driver>.<variable>": the driver may hold dots */
        first = strchr(key, '.');
        last = strrchr(key, '.');
        if (first == NULL || last == first) continue;
        *last = '\0';
        if (cn_strv_contains(&seen, first + 1)) continue;
        if (strchr(first + 1, '=') != NULL) {
            /* "-c" cannot name it: refuse rather than let it run */
            rc = cn_error_set(CN_EDENIED, "the repository's config names a filter driver \"%s\" that cannot be "
                                          "switched off; git is not run there", first + 1);
            break;
        }
        static const char *const vars[] = {"clean=", "smudge=", "process=", "required=false"};
        if ((rc = cn_strv_push(&seen, first + 1)) < 0) break;
        for (size_t k = 0; k < 4 && rc == 0; k++)
            if ((rc = cn_strv_push(a, "-c")) == 0) rc = cn_strv_push_owned(a, cn_strprintf("%s.%s", key, vars[k]));
    }
out:
    free(out);
    free(qa);
    cn_strv_free(&q);
    cn_strv_free(&seen);
    return rc;
}

void cn_git_cmd_free(cn_git_cmd *cmd)
{
    if (cmd->argv)
        for (char **p = cmd->argv; *p; p++) free(*p);
    if (cmd->envp)
        for (char **p = cmd->envp; *p; p++) free(*p);
    free(cmd->argv);
    free(cmd->envp);
    free(cmd->what);
    memset(cmd, 0, sizeof *cmd);
}

/* Moves v's strings into a NULL-terminated array. */
static char **steal_argv(cn_strv *v)
{
    char **a = as_argv(v);
    if (a != NULL) {
        free(v->items);
        memset(v, 0, sizeof *v);
    }
    return a;
}

int cn_git_prepare(const char *where, bool git_dir, const char *const args[], cn_git_cmd *cmd)
{
    cn_strv a = {0}, env = {0};
    int rc;

    memset(cmd, 0, sizeof *cmd);
    cmd->timeout_ms = cn_git_timeout_ms();
    {
        /* named by its subcommand, after any global options */
        size_t i = 0;
        while (args[i] && args[i][0] == '-') i++;
        cmd->what = cn_strprintf("git %s in %s", args[i] ? args[i] : "", where);
    }
    if (cmd->what == NULL || make_env(&env) < 0 || (cmd->envp = steal_argv(&env)) == NULL ||
        base_argv(&a, where, git_dir) < 0) {
        rc = cn_error_set(CN_ENOMEM, "out of memory");
        goto fail;
    }
    /* the commands run on a bare mirror (rev-parse, ls-tree, cat-file
     * --batch) convert nothing; in a work tree, status hashes files */
    if (!git_dir && (rc = disable_filters(&a, cmd->envp, where, cmd->timeout_ms)) < 0) {
        cn_error_prefix("%s", cmd->what);
        goto fail;
    }
    for (size_t i = 0; args[i]; i++)
        if (cn_strv_push(&a, args[i]) < 0) {
            rc = cn_error_set(CN_ENOMEM, "out of memory");
            goto fail;
        }
    if ((cmd->argv = steal_argv(&a)) == NULL) {
        rc = cn_error_set(CN_ENOMEM, "out of memory");
        goto fail;
    }
    return 0;
fail:
    cn_strv_free(&a);
    cn_strv_free(&env);
    cn_git_cmd_free(cmd);
    return rc;
}

int cn_git_capture(const char *where, bool git_dir, const char *const args[], size_t max_bytes, char **out,
                   size_t *len, int *status)
{
    cn_git_cmd cmd;
    cn_proc_opts o;
    int rc;

    *out = NULL;
    if (len) *len = 0;
    if (status) *status = -1;
    if ((rc = cn_git_prepare(where, git_dir, args, &cmd)) < 0) return rc;
    o = (cn_proc_opts){cmd.envp, -1, cmd.timeout_ms, max_bytes};
    if ((rc = cn_proc_run(cmd.argv, &o, out, len, status)) < 0) {
        if (rc == CN_ETIMEOUT)
            rc = cn_error_set(rc, "%s took longer than %.1f s and was stopped (a FIFO or a hook in the repository?); "
                                  "CODENIB_GIT_TIMEOUT sets the limit",
                              cmd.what, cmd.timeout_ms / 1000.0);
        else if (rc != CN_ENOMEM)
            cn_error_prefix("%s", cmd.what);
    }
    cn_git_cmd_free(&cmd);
    return rc;
}
