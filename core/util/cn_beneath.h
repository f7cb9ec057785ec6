/* SPDX-License-Identifier: Apache-2.0 */
/* Opening a repository file without ever leaving the repository.
 *
 * A path string checked and then opened can be raced: a directory on it
 * swapped for a symbolic link between the check and the open leads the
 * open outside the root.  These functions resolve a repository-relative
 * path beneath an open directory (the root's descriptor) in one step the
 * kernel checks (openat2 with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS) or,
 * where the kernel lacks openat2, component by component from the root's
 * descriptor with O_NOFOLLOW.  No symbolic link is ever followed, on the
 * way or at the end: one inside the repository is refused like one that
 * leaves it. */
#ifndef CN_BENEATH_H
#define CN_BENEATH_H

#include <stddef.h>

/* Whether rel has the shape of a repository-relative path: not empty, not
 * absolute, no empty, "." or ".." component, no trailing '/'.  0, or
 * CN_EDENIED / CN_EINVAL with a message naming rel. */
int cn_beneath_check(const char *rel);

/* A caller's repository-relative path made plain (malloc'd in *rel): "./"
 * and "." components, repeated and trailing '/' dropped; "" (the root)
 * for NULL, "" or ".".  Absolute paths and ".." are CN_EDENIED. */
int cn_beneath_clean(const char *relpath, char **rel);

/* Opens rel (cn_beneath_check's shape) beneath the directory rootfd with
 * `flags` (O_RDONLY, O_DIRECTORY, O_NONBLOCK, O_PATH, ...; O_NOFOLLOW and
 * O_CLOEXEC are added).  Returns the descriptor, or a negative CN_E* code
 * with cn_error_set() naming rel: CN_EDENIED for a symbolic link on the
 * way or at the end or a way out of the root, CN_ENOTFOUND when a
 * component is missing or not a directory, CN_EIO otherwise. */
int cn_open_beneath(int rootfd, const char *rel, int flags);

/* Reads the regular file rel beneath rootfd whole (NUL-terminated, like
 * cn_file_read).  A FIFO or device is refused (CN_EINVAL) without
 * blocking (CN_EIO, as a directory is); a file over max_bytes (0: no
 * limit) is CN_EINVAL. */
int cn_read_beneath(int rootfd, const char *rel, size_t max_bytes, char **out, size_t *len);

/* Reads an open regular file whole; `what` names it in errors. */
int cn_fd_read_all(int fd, const char *what, size_t max_bytes, char **out, size_t *len);

/* The component-by-component walk cn_open_beneath falls back to without
 * openat2; for the tests, which check both ways. */
int cn_beneath__walk(int rootfd, const char *rel, int flags);

#endif /* CN_BENEATH_H */
