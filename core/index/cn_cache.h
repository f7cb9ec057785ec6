/* SPDX-License-Identifier: Apache-2.0 */
/* The entries codenib keeps in a repository's cache directory -- its
 * generations (gen-*), the `current` link naming the one served, the
 * compile lock -- used only as codenib made them.  The cache directory
 * itself may be a link (the user's --cache-dir, their choice), but nothing
 * inside it is followed: entries are opened and removed relative to the
 * directory's descriptor with O_NOFOLLOW, and one that is not what codenib
 * makes (a link, another user's, a file where a directory belongs) is
 * refused with CN_EDENIED, naming it and what to do, never written
 * through, truncated or emptied. */
#ifndef CN_CACHE_H
#define CN_CACHE_H

#include <stdbool.h>

/* Whether `name` is a generation's name ("gen-" and no '/'), published
 * (no ".tmp" suffix) or not. */
bool cn_cache_is_generation(const char *name);

/* Opens the cache directory for the calls below (O_DIRECTORY; the path
 * itself may be a link). */
int cn_cache_dir_open(const char *cache, int *dfd);

/* Checks every entry codenib owns in the cache directory: each gen-* a
 * directory of this user (not a link), `current` and `current.tmp`
 * symbolic links, `lock` a regular file of this user with one link.
 * Other names are not codenib's and are left alone.  CN_EDENIED naming the
 * first entry that fails. */
int cn_cache_check(int dfd, const char *cache);

/* Opens, creating it when absent, the lock file: refused (CN_EDENIED) when
 * it is a link, not a regular file, another user's or has other links. */
int cn_cache_lock_open(int dfd, const char *cache, int *fd);

/* Removes generation `name` and everything below it, relative to dfd,
 * following no link (a link inside is removed, not its target).  Refuses
 * (CN_EDENIED) an entry that is not a directory of this user; absent is
 * not an error. */
int cn_cache_remove(int dfd, const char *cache, const char *name);

#endif /* CN_CACHE_H */
