/* SPDX-License-Identifier: Apache-2.0 */
/* Opening beneath a directory (see cn_beneath.h). */
#include "cn_beneath.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__linux__)
#include <sys/syscall.h>
#if defined(__has_include)
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#define CN_HAVE_OPENAT2_H 1
#endif
#endif
#endif

#include "cn_util.h"

/* Longest component the walk copies (NAME_MAX on every Linux filesystem). */
#define COMPONENT_MAX 255

int cn_beneath_check(const char *rel)
{
    if (rel == NULL || rel[0] == '\0') return cn_error_set(CN_EINVAL, "empty path");
    if (rel[0] == '/')
        return cn_error_set(CN_EDENIED, "'%s': absolute paths are refused; give a path relative "
                                        "to the repository root", rel);
    for (const char *p = rel;;) {
        size_t n = strcspn(p, "/");
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return cn_error_set(CN_EDENIED, "'%s': '..' is refused; paths stay inside the "
                                            "repository", rel);
        if (n == 0 || (n == 1 && p[0] == '.'))
            return cn_error_set(CN_EINVAL, "'%s': an empty or '.' component; give a plain "
                                           "repository-relative path", rel);
        if (n > COMPONENT_MAX)
            return cn_error_set(CN_EINVAL, "'%s': a component longer than %d bytes", rel,
                                COMPONENT_MAX);
        if (p[n] == '\0') return 0;
        p += n + 1;
    }
}

int cn_beneath_clean(const char *relpath, char **rel)
{
    cn_buf b = CN_BUF_INIT;

    *rel = NULL;
    if (relpath != NULL && relpath[0] == '/')
        return cn_error_set(CN_EDENIED, "'%s': absolute paths are refused; give a path relative "
                                        "to the repository root", relpath);
    for (const char *p = relpath ? relpath : ""; *p;) {
        size_t n = strcspn(p, "/");
        if (n == 2 && p[0] == '.' && p[1] == '.') {
            cn_buf_free(&b);
            return cn_error_set(CN_EDENIED, "'%s': '..' is refused; paths stay inside the "
                                            "repository", relpath);
        }
        if (n > 0 && !(n == 1 && p[0] == '.')) {
            if (b.len > 0) cn_buf_putc(&b, '/');
            cn_buf_append(&b, p, n);
        }
        p += n;
        while (*p == '/') p++;
    }
    if (b.oom) {
        cn_buf_free(&b);
        return cn_error_set(CN_ENOMEM, "out of memory");
    }
    *rel = cn_buf_steal(&b);
    return *rel ? 0 : cn_error_set(CN_ENOMEM, "out of memory");
}

/* The error for a failed open of rel (errno e). */
static int open_error(const char *rel, int e)
{
    if (e == ELOOP || e == EXDEV)
        return cn_error_set(CN_EDENIED, "'%s': a symbolic link on the path (it could lead "
                                        "outside the repository); links are not followed; "
                                        "refused", rel);
    if (e == ENOENT || e == ENOTDIR)
        return cn_error_set(CN_ENOTFOUND, "'%s': %s", rel, strerror(e));
    if (e == ENOMEM) return cn_error_set(CN_ENOMEM, "'%s': out of memory", rel);
    return cn_error_set(CN_EIO, "'%s': cannot open: %s", rel, strerror(e));
}

/* O_PATH with O_NOFOLLOW opens a trailing symbolic link itself instead of
 * failing: such a descriptor is refused here. */
static int refuse_link(int fd, const char *rel, int flags)
{
#ifdef O_PATH
    struct stat st;
    if (!(flags & O_PATH)) return fd;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return open_error(rel, e);
    }
    if (S_ISLNK(st.st_mode)) {
        close(fd);
        return open_error(rel, ELOOP);
    }
#else
    (void)rel;
    (void)flags;
#endif
    return fd;
}

int cn_beneath__walk(int rootfd, const char *rel, int flags)
{
    int cur = rootfd, rc;
    const char *p = rel;

    if ((rc = cn_beneath_check(rel)) < 0) return rc;
    for (;;) {
        char name[COMPONENT_MAX + 1];
        size_t n = strcspn(p, "/");
        int fd, e;
        bool last = p[n] == '\0';

        memcpy(name, p, n);
        name[n] = '\0';
        if (last) {
            fd = openat(cur, name, flags | O_NOFOLLOW | O_CLOEXEC);
        } else {
            /* Without O_DIRECTORY, which would turn a link into ENOTDIR:
             * the fstat below tells a link from a file.  O_PATH: a
             * directory that may be searched but not listed is still a
             * way to its files. */
#ifdef O_PATH
            fd = openat(cur, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
#else
            fd = openat(cur, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
#endif
        }
        e = errno;
        if (cur != rootfd) close(cur);
        if (fd < 0) return open_error(rel, e);
        if (last) return refuse_link(fd, rel, flags);
        {
            /* O_PATH | O_NOFOLLOW may hand back the link itself */
            struct stat st;
            int s = fstat(fd, &st);
            if (s != 0 || !S_ISDIR(st.st_mode)) {
                e = s != 0 ? errno : S_ISLNK(st.st_mode) ? ELOOP : ENOTDIR;
                close(fd);
                return open_error(rel, e);
            }
        }
        cur = fd;
        p += n + 1;
    }
}

#if defined(CN_HAVE_OPENAT2_H) && defined(SYS_openat2)
/* Set once the kernel said it has no openat2 (or a filter forbids it): the
 * walk is used from then on.  Atomic: the compiler's threads open files. */
static atomic_int openat2_missing;

/* The descriptor, a negative CN_E* code, or INT32_MIN to fall back. */
static int open_openat2(int rootfd, const char *rel, int flags)
{
    struct open_how how;
    int fd = -1, e = 0;

    if (atomic_load_explicit(&openat2_missing, memory_order_relaxed)) return INT32_MIN;
    memset(&how, 0, sizeof how);
    how.flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC);
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    /* EAGAIN: the kernel saw a concurrent rename and asks for a retry. */
    for (int tries = 0; tries < 4; tries++) {
        fd = (int)syscall(SYS_openat2, rootfd, rel, &how, sizeof how);
        e = errno;
        if (fd >= 0 || e != EAGAIN) break;
    }
    if (fd >= 0) return refuse_link(fd, rel, flags);
    if (e == ENOSYS || e == EPERM) {
        /* ENOSYS: an older kernel; EPERM: a seccomp filter that does not
         * know the call.  Neither is about this path. */
        atomic_store_explicit(&openat2_missing, 1, memory_order_relaxed);
        return INT32_MIN;
    }
    if (e == EAGAIN || e == EINVAL || e == E2BIG) return INT32_MIN;
    return open_error(rel, e);
}
#endif

static int open_any(int rootfd, const char *rel, int flags)
{
#if defined(CN_HAVE_OPENAT2_H) && defined(SYS_openat2)
    int rc = open_openat2(rootfd, rel, flags);
    if (rc != INT32_MIN) return rc;
#endif
    return cn_beneath__walk(rootfd, rel, flags);
}

int cn_open_beneath(int rootfd, const char *rel, int flags)
{
    struct stat st;
    int rc, fd;

    if ((rc = cn_beneath_check(rel)) < 0) return rc;
    if (!(flags & O_DIRECTORY)) return open_any(rootfd, rel, flags);
    /* O_DIRECTORY | O_NOFOLLOW reports a link as ENOTDIR, which would pass
     * for a missing directory: open without it (O_NONBLOCK: a FIFO does
     * not block) and look at what was opened. */
    if ((fd = open_any(rootfd, rel, (flags & ~O_DIRECTORY) | O_NONBLOCK)) < 0) return fd;
    if ((rc = fstat(fd, &st)) != 0 || !S_ISDIR(st.st_mode)) {
        int e = rc != 0 ? errno : S_ISLNK(st.st_mode) ? ELOOP : ENOTDIR;
        close(fd);
        return open_error(rel, e);
    }
    return fd;
}

int cn_fd_read_all(int fd, const char *what, size_t max_bytes, char **out, size_t *len)
{
    struct stat st;
    size_t cap, n = 0;
    char *data;

    *out = NULL;
    if (len) *len = 0;
    if (fstat(fd, &st) != 0) return cn_error_set(CN_EIO, "'%s': cannot stat: %s", what, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return cn_error_set(CN_EIO, "'%s' is not a regular file (a directory, FIFO or device)",
                            what);
    if (max_bytes && (unsigned long long)st.st_size > max_bytes)
        return cn_error_set(CN_EINVAL, "'%s': %lld bytes, over the limit of %zu bytes", what,
                            (long long)st.st_size, max_bytes);
    cap = (size_t)st.st_size + 1;
    if ((data = malloc(cap)) == NULL)
        return cn_error_set(CN_ENOMEM, "'%s': out of memory reading %lld bytes", what,
                            (long long)st.st_size);
    /* The size stat gave; a file that grew since is read to that size,
     * one that shrank to its end. */
    while (n < cap - 1) {
        ssize_t k = read(fd, data + n, cap - 1 - n);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) {
            int e = errno;
            free(data);
            return cn_error_set(CN_EIO, "'%s': read failed: %s", what, strerror(e));
        }
        if (k == 0) break;
        n += (size_t)k;
    }
    data[n] = '\0';
    *out = data;
    if (len) *len = n;
    return 0;
}

int cn_read_beneath(int rootfd, const char *rel, size_t max_bytes, char **out, size_t *len)
{
    /* O_NONBLOCK: a FIFO put in a file's place does not block the open */
    int fd = cn_open_beneath(rootfd, rel, O_RDONLY | O_NONBLOCK), rc;
    *out = NULL;
    if (len) *len = 0;
    if (fd < 0) return fd;
    rc = cn_fd_read_all(fd, rel, max_bytes, out, len);
    close(fd);
    return rc;
}
