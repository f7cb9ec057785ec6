/* SPDX-License-Identifier: Apache-2.0 */
/* Running git on a repository codenib does not trust.
 *
 * A cloned repository's .git/config, hooks and .gitattributes are written
 * by whoever made it: an fsmonitor, a clean/smudge/process filter or a hook
 * named there would run with the user's rights on a plain `git status`.
 * Every git codenib runs goes through here: no inherited GIT_* variables,
 * no system or global config, stdin on /dev/null, fsmonitor, hooks,
 * untracked cache, submodule recursion, transports and every filter driver
 * the repository names turned off, and a time limit (CODENIB_GIT_TIMEOUT
 * seconds, default 30) after which git is killed. */
#ifndef CN_GIT_H
#define CN_GIT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* A prepared git command line and its environment (owned). */
typedef struct cn_git_cmd {
    char **argv;    /* NULL-terminated, for cn_proc_spawn */
    char **envp;    /* NULL-terminated */
    char *what;     /* "git ls-files in /repo", for messages */
    unsigned timeout_ms;
} cn_git_cmd;

/* Builds `git ARGS` run in the work tree `where` (git -C), or, when
 * git_dir, on the git directory `where` (git --git-dir).  In a work tree
 * this asks git (config --get-regexp, which runs nothing) for the filter
 * drivers the repository names, to switch them off. */
int cn_git_prepare(const char *where, bool git_dir, const char *const args[], cn_git_cmd *cmd);
void cn_git_cmd_free(cn_git_cmd *cmd);

/* Prepares and runs git, returning its standard output as cn_proc_run
 * does.  Errors (git missing, over time, too much output) name the command
 * and the repository. */
int cn_git_capture(const char *where, bool git_dir, const char *const args[], size_t max_bytes, char **out,
                   size_t *len, int *status);

/* The time limit of one git run, in milliseconds. */
unsigned cn_git_timeout_ms(void);

#endif /* CN_GIT_H */
