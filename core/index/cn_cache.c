/* SPDX-License-Identifier: Apache-2.0 */
/* A cache directory's own entries, used only as codenib made them (see
 * cn_cache.h). */
#include "cn_cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/cn_util.h"
#include "cn_compile.h"

/* A generation holds a few files and the vectors' store directory: deeper
 * than this, it is not one codenib made, and what is below stays. */
#define MAX_DEPTH 16

bool cn_cache_is_generation(const char *name)
{
    return strncmp(name, "gen-", 4) == 0 && name[4] != '\0' && strchr(name, '/') == NULL;
}

static bool is_tmp(const char *name)
{
    return cn_str_has_suffix(name, ".tmp");
}

int cn_cache_dir_open(const char *cache, int *dfd)
{
    *dfd = open(cache, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (*dfd < 0) return cn_error_set(CN_EIO, "cannot open the cache directory %s: %s", cache, strerror(errno));
    return 0;
}

/* What is wrong with entry `st` where codenib keeps `want` ("d" a
 * directory, "l" a symbolic link, "f" a regular file with one link); NULL
 * when nothing is.  Always of this user: another's entry was not made by
 * this codenib, whatever it is. */
static const char *wrong_with(const struct stat *st, char want, char *buf, size_t size)
{
    if (S_ISLNK(st->st_mode) && want != 'l') return "a symbolic link";
    if (want == 'd' && !S_ISDIR(st->st_mode)) return "not a directory";
    if (want == 'l' && !S_ISLNK(st->st_mode)) return "not a symbolic link";
    if (want == 'f' && !S_ISREG(st->st_mode)) return "not a regular file";
    if (st->st_uid != geteuid()) {
        snprintf(buf, size, "owned by user %lu, not by this one (%lu)", (unsigned long)st->st_uid,
                 (unsigned long)geteuid());
        return buf;
    }
    if (want == 'f' && st->st_nlink != 1) {
        snprintf(buf, size, "a file with %lu names (hard links)", (unsigned long)st->st_nlink);
        return buf;
    }
    return NULL;
}

static int refuse(const char *cache, const char *name, const char *what)
{
    return cn_error_set(CN_EDENIED, "%s/%s is %s: codenib did not make it, and neither follows, writes nor removes "
                                    "such an entry in its cache; remove or move it yourself, then run again",
                        cache, name, what);
}

/* Checks entry `name` against `want` (see wrong_with); absent is fine. */
static int check_entry(int dfd, const char *cache, const char *name, char want)
{
    struct stat st;
    char buf[96];
    const char *what;
    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return errno == ENOENT ? 0 : cn_error_set(CN_EIO, "%s/%s: %s", cache, name, strerror(errno));
    return (what = wrong_with(&st, want, buf, sizeof buf)) != NULL ? refuse(cache, name, what) : 0;
}

int cn_cache_check(int dfd, const char *cache)
{
    int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc = 0;
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    struct dirent *de;

    if (d == NULL) {
        rc = cn_error_set(CN_EIO, "cannot read the cache directory %s: %s", cache, strerror(errno));
        if (fd >= 0) close(fd);
        return rc;
    }
    while (rc == 0 && (de = readdir(d)) != NULL) {
        const char *n = de->d_name;
        if (cn_cache_is_generation(n)) rc = check_entry(dfd, cache, n, 'd');
        else if (strcmp(n, "current") == 0 || strcmp(n, "current.tmp") == 0) rc = check_entry(dfd, cache, n, 'l');
        else if (strcmp(n, "lock") == 0) rc = check_entry(dfd, cache, n, 'f');
    }
    closedir(d);
    return rc;
}

int cn_cache_lock_open(int dfd, const char *cache, int *out)
{
    struct stat st;
    char buf[96];
    const char *what;
    int fd, rc;

    *out = -1;
    /* before opening: opening a device or a FIFO may itself do something */
    if ((rc = check_entry(dfd, cache, "lock", 'f')) < 0) return rc;
    fd = openat(dfd, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
    if (fd < 0) {
        if (errno == ELOOP) return refuse(cache, "lock", "a symbolic link");
        return cn_error_set(CN_EIO, "%s/lock: cannot open: %s", cache, strerror(errno));
    }
    /* and again on what was opened: it may have been swapped in between */
    what = fstat(fd, &st) != 0 ? strerror(errno) : wrong_with(&st, 'f', buf, sizeof buf);
    if (what != NULL) {
        rc = refuse(cache, "lock", what);
        close(fd);
        return rc;
    }
    *out = fd;
    return 0;
}

/* Empties the directory open as `fd` (closed here), relative to it: a
 * subdirectory is opened O_NOFOLLOW and emptied in turn, anything else
 * (a link included) unlinked -- never anything it points to. */
static int empty_dir(int fd, int depth)
{
    DIR *d = fdopendir(fd);
    struct dirent *de;
    int rc = 0;

    if (d == NULL) {
        close(fd);
        return -1;
    }
    while ((de = readdir(d)) != NULL) {
        const char *n = de->d_name;
        bool dir = de->d_type == DT_DIR;
        if (strcmp(n, ".") == 0 || strcmp(n, "..") == 0) continue;
        if (de->d_type == DT_UNKNOWN) {   /* some file systems do not say */
            struct stat st;
            dir = fstatat(dirfd(d), n, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
        }
        if (dir) {
            int sub = openat(dirfd(d), n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
            if (sub >= 0 && depth < MAX_DEPTH) {
                if (empty_dir(sub, depth + 1) < 0) rc = -1;
            } else if (sub >= 0) {
                close(sub);
            }
            if (unlinkat(dirfd(d), n, AT_REMOVEDIR) != 0 && errno != ENOENT) rc = -1;
        } else if (unlinkat(dirfd(d), n, 0) != 0 && errno != ENOENT) {
            rc = -1;
        }
    }
    closedir(d);
    return rc;
}

int cn_cache_remove(int dfd, const char *cache, const char *name)
{
    struct stat st;
    char buf[96];
    const char *what;
    int fd, rc;

    if ((rc = check_entry(dfd, cache, name, 'd')) < 0) return rc;
    fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return 0;
        if (errno == ELOOP || errno == ENOTDIR) return refuse(cache, name, "not a directory");
        return cn_error_set(CN_EIO, "cannot open %s/%s: %s", cache, name, strerror(errno));
    }
    what = fstat(fd, &st) != 0 ? strerror(errno) : wrong_with(&st, 'd', buf, sizeof buf);
    if (what != NULL) {
        rc = refuse(cache, name, what);
        close(fd);
        return rc;
    }
    if (empty_dir(fd, 0) < 0 || (unlinkat(dfd, name, AT_REMOVEDIR) != 0 && errno != ENOENT))
        return cn_error_set(CN_EIO, "cannot remove %s/%s: %s", cache, name, errno ? strerror(errno) : "not empty");
    return 0;
}

int cn_cache_current(const char *cache_dir, char **index_dir)
{
    char link[PATH_MAX], *cur = cn_path_join(cache_dir, "current");
    ssize_t n;
    struct stat st;
    char buf[96];
    const char *what;

    *index_dir = NULL;
    if (cur == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    n = readlink(cur, link, sizeof link - 1);
    free(cur);
    if (n <= 0) {
        /* `current` there, but not a link: not codenib's */
        if (n < 0 && errno == EINVAL) return refuse(cache_dir, "current", "not a symbolic link");
        return cn_error_set(CN_ENOTFOUND, "nothing compiled in %s yet", cache_dir);
    }
    link[n] = '\0';
    if ((size_t)n == sizeof link - 1) link[0] = '\0';   /* cut short: not a name codenib writes */
    /* codenib points it at one of its published generations, by name */
    if (!cn_cache_is_generation(link) || is_tmp(link))
        return cn_error_set(CN_EDENIED, "%s/current points at '%s', which is not a generation of the cache: codenib "
                                        "did not write it; remove the link, then compile again",
                            cache_dir, link);
    if ((*index_dir = cn_path_join(cache_dir, link)) == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    {
        int e = lstat(*index_dir, &st) != 0 ? errno : 0;
        int rc = 0;
        what = e == 0 ? wrong_with(&st, 'd', buf, sizeof buf) : NULL;
        if (e == ENOENT)
            rc = cn_error_set(CN_ECORRUPT, "%s: the generation %s/current names is missing: the index is damaged; "
                                           "compile again", *index_dir, cache_dir);
        else if (e != 0)
            rc = cn_error_set(CN_EIO, "%s: %s", *index_dir, strerror(e));
        else if (what != NULL)
            rc = refuse(cache_dir, link, what);
        if (rc == 0) return 0;
        free(*index_dir);
        *index_dir = NULL;
        return rc;
    }
}
