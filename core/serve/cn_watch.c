/* SPDX-License-Identifier: Apache-2.0 */
/* inotify watches on a repository's directories (see cn_watch.h). */
#include "cn_watch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../index/cn_walk.h"
#include "../util/cn_util.h"

#ifdef __linux__
#include <sys/inotify.h>
#endif

#define DEFAULT_MAX_DIRS 20000u

struct cn_watch {
    int fd;
};

#ifdef __linux__

/* What changes a file or the list of files: not reads, not opens. */
#define MASK                                                                                                  \
    (IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB |          \
     IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW)

static bool skipped_name(const char *name, const cn_watch_opts *o)
{
    if (strcmp(name, ".git") == 0) return true;
    if (!o->skip_default_excludes) return false;
    for (size_t i = 0; cn_walk_default_excludes[i]; i++)
        if (fnmatch(cn_walk_default_excludes[i], name, 0) == 0) return true;
    return false;
}

static bool is_dir(int dfd, const struct dirent *d)
{
    struct stat st;
    if (d->d_type == DT_DIR) return true;
    if (d->d_type != DT_UNKNOWN) return false;
    return fstatat(dfd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

/* Adds a watch on every directory below root, breadth first. */
static int add_all(int ifd, const char *root, const cn_watch_opts *o)
{
    cn_strv todo = CN_STRV_INIT;
    unsigned max = o->max_dirs ? o->max_dirs : DEFAULT_MAX_DIRS;
    int rc = cn_strv_push(&todo, root) < 0 ? CN_ENOMEM : 0;

    for (size_t i = 0; rc == 0 && i < todo.len; i++) {
        const char *dir = todo.items[i];
        int dfd;
        DIR *d;
        struct dirent *e;
        if (todo.len > max) {
            rc = cn_error_set(CN_EUNSUPPORTED, "%s has more than %u directories to watch", root, max);
            break;
        }
        if (inotify_add_watch(ifd, dir, MASK) < 0) {
            rc = cn_error_set(CN_EUNSUPPORTED, "cannot watch %s: %s%s", dir, strerror(errno),
                              errno == ENOSPC ? " (the inotify watch limit, fs.inotify.max_user_watches)" : "");
            break;
        }
        if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 || (d = fdopendir(dfd)) == NULL) {
            if (dfd >= 0) close(dfd);
            continue;   /* gone or unreadable: its watch says when that changes */
        }
        while (rc == 0 && (e = readdir(d)) != NULL) {
            char *sub;
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
            if (skipped_name(e->d_name, o) || !is_dir(dfd, e)) continue;
            if ((sub = cn_path_join(dir, e->d_name)) == NULL) {
                rc = CN_ENOMEM;
                break;
            }
            if (o->skip_dir != NULL && strcmp(sub, o->skip_dir) == 0) {
                free(sub);
                continue;
            }
            if (cn_strv_push_owned(&todo, sub) < 0) rc = CN_ENOMEM;
        }
        closedir(d);
    }
    cn_strv_free(&todo);
    if (rc == CN_ENOMEM && cn_error_last()->code != CN_ENOMEM) cn_error_set(CN_ENOMEM, "out of memory");
    return rc;
}

int cn_watch_open(const char *root, const cn_watch_opts *o, cn_watch **out)
{
    cn_watch_opts none = {NULL, false, 0};
    cn_watch *w;
    int rc;

    *out = NULL;
    if ((w = calloc(1, sizeof *w)) == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    if ((w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) < 0) {
        free(w);
        return cn_error_set(CN_EUNSUPPORTED, "inotify is not available: %s", strerror(errno));
    }
    if ((rc = add_all(w->fd, root, o ? o : &none)) < 0) {
        cn_watch_close(w);
        return rc;
    }
    *out = w;
    return 0;
}

bool cn_watch_changed(cn_watch *w)
{
    char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
    bool changed = false;
    for (;;) {
        ssize_t n = read(w->fd, buf, sizeof buf);
        if (n > 0) {
            changed = true;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        /* EAGAIN: drained; anything else: unknown, so changed */
        if (n == 0 || errno != EAGAIN) changed = true;
        return changed;
    }
}

void cn_watch_close(cn_watch *w)
{
    if (w == NULL) return;
    if (w->fd >= 0) close(w->fd);
    free(w);
}

#else /* !__linux__ */

int cn_watch_open(const char *root, const cn_watch_opts *o, cn_watch **out)
{
    (void)o;
    *out = NULL;
    return cn_error_set(CN_EUNSUPPORTED, "watching %s needs inotify (Linux)", root);
}

bool cn_watch_changed(cn_watch *w)
{
    (void)w;
    return true;
}

void cn_watch_close(cn_watch *w)
{
    free(w);
}

#endif
