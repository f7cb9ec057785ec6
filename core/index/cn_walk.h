/* SPDX-License-Identifier: Apache-2.0 */
/* Listing the files of a repository to index: git-aware in a git checkout
 * (tracked plus untracked-not-ignored files), a plain directory walk
 * elsewhere; default and user exclusions; language by extension or
 * shebang (a `.h` as C or C++: cn_header_lang.h); test files classified. */
#ifndef CN_WALK_H
#define CN_WALK_H

#include <stdbool.h>
#include <stdint.h>

#include "../util/cn_util.h"
#include "cn_filerec.h"
#include "cn_langs.h"

typedef struct cn_walk_file {
    char *path;              /* repository-relative, '/'-separated */
    const cn_lang_entry *lang;
    uint64_t size;
    cn_file_stamp stamp;
    bool is_test;
    bool c_header;           /* a `.h`, C or C++ (cn_header_lang.h) */
} cn_walk_file;

typedef struct cn_walk_stats {
    size_t listed;           /* every path seen */
    size_t selected;
    size_t excluded;         /* under an excluded directory */
    size_t no_language;      /* no backend for it, or not a selected language */
    size_t too_large;
    size_t not_regular;      /* symlinks, submodules, deleted files */
    size_t odd_name;         /* a control character or invalid UTF-8 in the path */
    bool used_git;
    size_t outside;          /* paths git listed that lead outside the root
                              * ("..", absolute, through a symbolic link):
                              * logged and left out */
} cn_walk_stats;

typedef struct cn_walk_opts {
    const cn_langs *langs;
    const cn_strv *exclude_dirs;   /* directory names or repo-relative paths */
    const cn_strv *languages;      /* only these; NULL or empty = all */
    bool no_default_excludes;
    bool no_git;                   /* force a plain walk */
    uint64_t max_file_bytes;       /* 0 = CN_WALK_DEFAULT_MAX */
} cn_walk_opts;

#define CN_WALK_DEFAULT_MAX (2u * 1024u * 1024u)

/* Lists the files below `root` (sorted by path).  Errors name the root. */
int cn_walk(const char *root, const cn_walk_opts *opts, cn_walk_file **files, size_t *n,
            cn_walk_stats *stats);
void cn_walk_free(cn_walk_file *files, size_t n);

/* The paths the walk takes from git in a git checkout `root` (tracked,
 * and untracked but not ignored by .gitignore files at any depth,
 * and .git/info/exclude), sorted with strcmp,
 * appended to *paths: 0, or 1 when root is not a git checkout or git
 * cannot list it (nothing appended), or CN_ENOMEM.  The agent's grep and
 * glob leave out what this leaves out. */
int cn_walk_git_paths(const char *root, cn_strv *paths);

/* The directory names excluded by default (NULL-terminated). */
extern const char *const cn_walk_default_excludes[];
/* Whether a repository-relative path names a test file: a directory
 * test/tests/testing/__tests__ on its path, or a name like test_*.py,
 * *_test.py, conftest.py, *_test.go, *.test.js, *.spec.ts, Test*.java. */
bool cn_walk_is_test_path(const char *path);

#endif /* CN_WALK_H */
