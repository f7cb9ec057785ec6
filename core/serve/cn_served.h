/* SPDX-License-Identifier: Apache-2.0 */
/* A repository served to a long-lived client (the MCP and LSP servers):
 * its skills registry, and its index kept up to date with its files --
 * compiled when missing, compiled again (incrementally) when files
 * changed, rebuilt when damaged -- with the skills that cannot run on it
 * (index or model missing) set aside, each with the reason. */
#ifndef CN_SERVED_H
#define CN_SERVED_H

#include <stdbool.h>
#include <stddef.h>

#include "../plugin/cn_registry.h"
#include "../util/cn_util.h"

typedef void (*cn_served_log_fn)(const char *line, void *data);

typedef struct cn_served_options {
    const char *repo;          /* required */
    const char *cache_dir;     /* NULL: the default cache */
    const char *indexes;       /* what a compile builds; NULL: the compiler's default */
    const char *skills;        /* comma-separated allow list, each id checked; NULL: all */
    bool no_compile;           /* serve the index as it is, stale or not */
    cn_served_log_fn log;      /* progress and warnings, a line each; may be NULL */
    void *log_data;
} cn_served_options;

typedef struct cn_served {
    char *repo;                /* canonical repository root */
    char *cache;               /* its cache directory */
    char *indexes;
    bool no_compile;
    cn_served_log_fn log;
    void *log_data;
    cn_registry *reg;
    char *gen;                 /* the generation the registry serves, NULL before the first */
    cn_strv excluded;          /* skills set aside for this generation */
    cn_strv excluded_why;      /* ... and why, in the same order */
    int stage;                 /* the compile stage last logged */
    /* what changed below the repository since the last comparison
     * (cn_watch.h); NULL: compare on every call */
    struct cn_watch *watch;
    bool watch_failed;         /* it could not be had: not tried again */
    bool watch_all;            /* the index covers default-excluded directories too */
} cn_served;

/* Checks the repository, finds the skills (`reserved`: names of the
 * server's own tools, which no skill may take) and the models the
 * environment configures; compiles nothing yet.  Errors name what is
 * wrong (no such repository, a misspelt skill). */
int cn_served_open(cn_served *s, const cn_served_options *o, const char *const *reserved, size_t n_reserved);
void cn_served_close(cn_served *s);

/* Makes the registry serve the repository's current index, compiling it
 * first when it is missing or stale (unless no_compile) and rebuilding it
 * when it is damaged.  The repository is compared with its index (a walk
 * and a stat of every file) only when inotify saw a change below it since
 * the last comparison, or when it cannot watch it: a call on an unchanged
 * repository costs a read(2) that finds nothing. */
int cn_served_refresh(cn_served *s);

/* Runs skill `id` on the refreshed index: *result, or the error of the
 * refresh, of the skill, or why the skill was set aside (CN_ENOCONTEXT). */
int cn_served_invoke(cn_served *s, const char *id, json_object *args, json_object **result);

/* Why skill `id` was set aside, or NULL when it can run. */
const char *cn_served_excluded(const cn_served *s, const char *id);

void cn_served_log(const cn_served *s, const char *fmt, ...) CN_PRINTF(2, 3);

#endif /* CN_SERVED_H */
