/* SPDX-License-Identifier: Apache-2.0 */
/* Whether anything changed below a repository since the last look, from
 * inotify watches on its directories: a served repository asks this
 * before every call and compares its files with its index (a walk and a
 * stat of every file: 10 ms on 1,600 files) only when something did.
 *
 * Conservative by construction: every event in a watched directory counts
 * (a file the index does not cover costs one needless comparison), so does
 * a lost event (queue overflow) or a directory that could not be watched.
 * Where inotify cannot be had (another OS, the watch limit reached, too
 * many directories), cn_watch_open fails and the caller compares every
 * time, as without it. */
#ifndef CN_WATCH_H
#define CN_WATCH_H

#include <stdbool.h>

typedef struct cn_watch cn_watch;

typedef struct cn_watch_opts {
    const char *skip_dir;          /* an absolute directory not to watch (the index's cache), or NULL */
    bool skip_default_excludes;    /* skip what the walk skips by default (node_modules, build, ...) */
    unsigned max_dirs;             /* give up past this many directories; 0: 20,000 */
} cn_watch_opts;

/* Watches every directory below root (not .git, nor symbolic links).
 * CN_EUNSUPPORTED with the reason when it cannot. */
int cn_watch_open(const char *root, const cn_watch_opts *o, cn_watch **out);
/* True when an event arrived since the last call (and drains them). */
bool cn_watch_changed(cn_watch *w);
void cn_watch_close(cn_watch *w);

#endif /* CN_WATCH_H */
