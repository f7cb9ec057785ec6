/* SPDX-License-Identifier: Apache-2.0 */
/* The glob tool, and the confined file listing that grep shares.  The
 * matcher is cn_glob_match (polynomial whatever the pattern). */
#include "cn_tools.h"

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../index/cn_walk.h"
#include "../util/cn_utf8.h"
#include "../util/cn_beneath.h"
#include "../util/cn_glob.h"

#define MAX_DEPTH 64
#define MAX_PATTERN CN_GLOB_PATTERN_MAX
/* Files matched between two looks at the clock. */
#define CLOCK_EVERY 256

/* ---- listing ------------------------------------------------------------- */

static bool excluded_dir(const char *name)
{
    for (size_t i = 0; cn_walk_default_excludes[i]; i++)
        if (fnmatch(cn_walk_default_excludes[i], name, 0) == 0) return true;
    return false;
}

typedef struct lister {
    const cn_tools_config *c;
    cn_strv *files;
    bool partial;              /* the deadline cut the walk short */
} lister;

/* Lists the directory open as dfd (taken over), known as rel.  Symlinks
 * are not followed (as ripgrep does by default): one that leaves the root
 * must not leak, and one inside only repeats what is listed.  Children are
 * opened relative to dfd with O_NOFOLLOW, so a directory swapped for a
 * link after it was listed is not entered. */
static int list_dir(lister *l, int dfd, const char *rel, int depth)
{
    DIR *d;
    struct dirent *de;
    int rc = 0;

    if (depth > MAX_DEPTH) {
        close(dfd);
        return 0;
    }
    if ((d = fdopendir(dfd)) == NULL) {
        close(dfd);
        return 0;  /* unreadable: nothing to list */
    }
    while (rc == 0 && (de = readdir(d)) != NULL) {
        const char *nm = de->d_name;
        char *r;
        struct stat st;
        if (strcmp(nm, ".") == 0 || strcmp(nm, "..") == 0) continue;
        if (cn_tools__late(l->c)) {
            l->partial = true;
            break;
        }
        r = rel[0] ? cn_path_join(rel, nm) : cn_strdup(nm);
        if (r == NULL) {
            rc = cn_error_set(CN_ENOMEM, "out of memory listing files");
        } else if (fstatat(dirfd(d), nm, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            /* vanished meanwhile */
        } else if (S_ISDIR(st.st_mode)) {
            if (!excluded_dir(nm)) {
                int cfd = openat(dirfd(d), nm, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (cfd >= 0) rc = list_dir(l, cfd, r, depth + 1);
            }
        } else if (S_ISREG(st.st_mode)) {
            rc = cn_strv_push_owned(l->files, r) < 0 ? cn_error_set(CN_ENOMEM, "out of memory") : 0;
            r = NULL;
        }
        free(r);
    }
    closedir(d);
    return rc;
}

/* As the index leaves them out: a control character in a path would forge
 * lines of grep's and glob's output, an ESC drive the reader's terminal. */
static void drop_odd_names(cn_strv *files)
{
    size_t k = 0;
    for (size_t i = 0; i < files->len; i++) {
        if (cn_utf8_is_plain_name(files->items[i])) files->items[k++] = files->items[i];
        else free(files->items[i]);
    }
    files->len = k;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* In a git checkout, what the index's walk leaves out is left out here
 * too: the files git ignores (nested .gitignore files, .git/info/exclude),
 * from the same listing (cn_walk_git_paths).  files is sorted. */
static int keep_git_listed(const cn_tools_config *c, cn_strv *files)
{
    cn_strv git = CN_STRV_INIT;
    size_t k = 0;
    int rc = cn_walk_git_paths(c->root, &git);

    if (rc != 0) {
        cn_strv_free(&git);
        return rc == 1 ? 0 : rc;
    }
    for (size_t i = 0; i < files->len; i++) {
        if (bsearch(&files->items[i], git.items, git.len, sizeof *git.items, cmp_str) != NULL)
            files->items[k++] = files->items[i];
        else
            free(files->items[i]);
    }
    files->len = k;
    cn_strv_free(&git);
    return 0;
}

int cn_tools__list_files(const cn_tools_config *c, int rootfd, const char *dir, cn_strv *files,
                         bool *partial)
{
    lister l = {c, files, false};
    int fd = cn_tools__open(rootfd, dir, O_RDONLY | O_DIRECTORY), rc;
    if (partial) *partial = false;
    if (fd < 0) return fd;
    rc = list_dir(&l, fd, dir, 0);
    if (partial) *partial = l.partial;
    drop_odd_names(files);
    if (rc == 0 && files->len > 1) qsort(files->items, files->len, sizeof *files->items, cmp_str);
    if (rc == 0) rc = keep_git_listed(c, files);
    return rc;
}

/* ---- the tool ------------------------------------------------------------ */

static int check_pattern(const char *pattern)
{
    if (pattern[0] == '\0') return cn_error_set(CN_EINVAL, "argument 'pattern' is empty");
    if (strlen(pattern) > MAX_PATTERN)
        return cn_error_set(CN_EINVAL, "argument 'pattern' is longer than %d bytes", MAX_PATTERN);
    if (pattern[0] == '/')
        return cn_error_set(CN_EDENIED, "glob '%s': absolute patterns are refused; give a "
                                        "pattern relative to the repository root", pattern);
    for (const char *p = pattern; *p;) {
        size_t n = strcspn(p, "/");
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return cn_error_set(CN_EDENIED, "glob '%s': '..' is refused; paths stay inside the "
                                            "repository", pattern);
        p += n;
        while (*p == '/') p++;
    }
    return 0;
}

static int glob_emit(const cn_tools_config *c, const cn_strv *files, size_t base_len,
                     const char *pattern, bool partial, char **output)
{
    cn_tools_out out;
    size_t matched = 0, tried = 0;
    int rc = 0;

    cn_tools__out_init(&out, c->output_cap);
    for (size_t i = 0; i < files->len && rc == 0; i++) {
        const char *p = files->items[i];
        if (++tried % CLOCK_EVERY == 0 && cn_tools__late(c)) {
            partial = true;
            break;
        }
        if (!cn_glob_match(pattern, p + base_len)) continue;
        if (++matched <= c->glob_cap) rc = cn_tools__out_printf(&out, "%s\n", p);
    }
    if (rc == 0) {
        cn_buf note = CN_BUF_INIT;
        if (matched == 0) cn_buf_printf(&note, "No files matched '%s'%s.\n", pattern,
                                        partial ? " so far" : "");
        if (matched > c->glob_cap)
            cn_buf_printf(&note, "[%zu more paths not shown: %zu matched, the first %zu are "
                                 "listed; narrow the pattern or the path]\n",
                          matched - c->glob_cap, matched, c->glob_cap);
        if (partial)
            cn_buf_printf(&note, "[time limit of %ld ms reached: the result is partial, only "
                                 "part of the tree was searched; narrow the path or the "
                                 "pattern]\n", c->call_timeout_ms);
        rc = note.oom ? cn_error_set(CN_ENOMEM, "out of memory")
                      : cn_tools__out_finish_with(&out, note.data, output);
        cn_buf_free(&note);
    }
    cn_tools__out_free(&out);
    return rc;
}

int cn_tools__glob(const cn_tools_config *c, json_object *args, char **output)
{
    const char *pattern, *path;
    char *rel = NULL;
    cn_strv files = CN_STRV_INIT;
    bool partial = false;
    int rc, rootfd = -1;

    if ((rc = cn_tools__arg_str(args, "pattern", true, &pattern)) < 0 ||
        (rc = cn_tools__arg_str(args, "path", false, &path)) < 0)
        return rc;
    if ((rc = check_pattern(pattern)) < 0) return rc;
    while (pattern[0] == '.' && pattern[1] == '/') pattern += 2;
    if ((rc = cn_beneath_clean(path, &rel)) < 0) return rc;
    if ((rootfd = cn_tools__open_root(c)) < 0) {
        rc = rootfd;
    } else if ((rc = cn_tools__is_dir(rootfd, rel)) <= 0) {
        if (rc == 0) rc = cn_error_set(CN_EINVAL, "argument 'path': '%s' is not a directory", path);
    } else if ((rc = cn_tools__list_files(c, rootfd, rel, &files, &partial)) == 0) {
        rc = glob_emit(c, &files, rel[0] ? strlen(rel) + 1 : 0, pattern, partial, output);
    }
    if (rootfd >= 0) close(rootfd);
    cn_strv_free(&files);
    free(rel);
    return rc;
}
