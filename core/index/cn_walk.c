/* SPDX-License-Identifier: Apache-2.0 */
/* Repository listing (see cn_walk.h). */
#include "cn_walk.h"

#include "../plugin/cn_host.h"
#include "../util/cn_git.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../plugin/cn_host.h"
#include "../util/cn_beneath.h"
#include "../util/cn_utf8.h"
#include "cn_header_lang.h"

const char *const cn_walk_default_excludes[] = {
    ".git", ".hg", ".svn", "node_modules", "__pycache__", ".tox", ".nox", ".venv", "venv",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", ".eggs", "*.egg-info", "site-packages",
    "build", "_build", "dist", "target", "vendor", "third_party", ".idea", ".vscode", NULL,
};

typedef struct walk {
    const char *root;
    int rootfd;   /* files are looked at relative to it or to their own directory */
    const cn_walk_opts *opts;
    cn_walk_stats *stats;
    cn_walk_file *files;
    size_t n, cap;
    const cn_lang_entry *c, *cpp; /* cpp: NULL when `.h` is always C */
    size_t c_sources, cpp_sources; /* by extension, selected or not */
} walk;

static bool name_excluded(const walk *w, const char *name, const char *relpath)
{
    if (!w->opts->no_default_excludes)
        for (size_t i = 0; cn_walk_default_excludes[i]; i++)
            if (fnmatch(cn_walk_default_excludes[i], name, 0) == 0) return true;
    if (w->opts->exclude_dirs) {
        /* "docs" or "*.egg-info": any directory of that name; "src/gen":
         * that path from the repository root. */
        for (size_t i = 0; i < w->opts->exclude_dirs->len; i++) {
            const char *x = w->opts->exclude_dirs->items[i];
            size_t xl = strlen(x);
            while (xl > 1 && x[xl - 1] == '/') xl--;
            if (memchr(x, '/', xl) == NULL) {
                char pat[256];
                if (xl >= sizeof pat) continue;
                memcpy(pat, x, xl);
                pat[xl] = '\0';
                if (fnmatch(pat, name, 0) == 0) return true;
            } else if (strncmp(relpath, x, xl) == 0 && (relpath[xl] == '\0' || relpath[xl] == '/')) {
                return true;
            }
        }
    }
    return false;
}

/* Whether any directory on the path is excluded. */
static bool path_excluded(const walk *w, const char *path)
{
    char buf[4096];
    size_t n = strlen(path);
    if (n >= sizeof buf) return false;
    memcpy(buf, path, n + 1);
    for (char *p = buf; (p = strchr(p, '/')) != NULL; p++) {
        char *start;
        *p = '\0';
        start = strrchr(buf, '/');
        if (name_excluded(w, start ? start + 1 : buf, buf)) return true;
        *p = '/';
    }
    return false;
}

bool cn_walk_is_test_path(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    for (const char *p = path; p < base;) {
        const char *e = strchr(p, '/');
        size_t n = (size_t)(e - p);
        if ((n == 4 && strncmp(p, "test", 4) == 0) || (n == 5 && strncmp(p, "tests", 5) == 0) ||
            (n == 7 && strncmp(p, "testing", 7) == 0) || (n == 9 && strncmp(p, "__tests__", 9) == 0))
            return true;
        p = e + 1;
    }
    return fnmatch("test_*.py", base, 0) == 0 || fnmatch("*_test.py", base, 0) == 0 ||
           strcmp(base, "conftest.py") == 0 || fnmatch("*_test.go", base, 0) == 0 ||
           fnmatch("*.test.[jt]s", base, 0) == 0 || fnmatch("*.spec.[jt]s", base, 0) == 0 ||
           fnmatch("*.test.[jt]sx", base, 0) == 0 || fnmatch("*.spec.[jt]sx", base, 0) == 0 ||
           fnmatch("Test*.java", base, 0) == 0 || fnmatch("*Test.java", base, 0) == 0 ||
           fnmatch("test_*.c", base, 0) == 0 || fnmatch("*_test.c", base, 0) == 0 ||
           fnmatch("*_test.rs", base, 0) == 0;
}

static bool language_selected(const walk *w, const cn_lang_entry *lang)
{
    const cn_strv *sel = w->opts->languages;
    return sel == NULL || sel->len == 0 || cn_strv_contains(sel, lang->language);
}

/* Language of a file without a known extension: its "#!" line. */
static const cn_lang_entry *sniff(const walk *w, int dfd, const char *name)
{
    char head[256];
    struct stat st;
    ssize_t k;
    /* O_NONBLOCK and a second look: a FIFO put in the file's place since
     * it was found regular would wait for a writer */
    int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) return NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return NULL;
    }
    k = read(fd, head, sizeof head);
    close(fd);
    if (k < 3) return NULL;
    {
        char *nl = memchr(head, '\n', (size_t)k);
        return cn_langs_by_shebang(w->opts->langs, head, nl ? (size_t)(nl - head) : (size_t)k);
    }
}

/* Whether a path git listed names a file inside the root, with its stat
 * in *st (st_mode 0: not there).  Git's index comes with the repository
 * and can be crafted to list "../x", "/etc/x" or "link/x" with `link` a
 * symbolic link to a directory outside; such a path is counted in
 * stats->outside, logged, and left out; it does not fail the walk. */
static bool git_path_inside(walk *w, const char *rel, struct stat *st)
{
    const char *slash = strrchr(rel, '/');
    int dfd = w->rootfd, rc = cn_beneath_check(rel);

    st->st_mode = 0;
    if (rc == 0 && slash != NULL) {
        /* its directory beneath the root, through no link; the file
         * itself may be one (git tracks links): it is then not regular */
        char *dir = cn_strndup(rel, (size_t)(slash - rel));
        rc = dfd = dir ? cn_open_beneath(w->rootfd, dir, O_PATH | O_DIRECTORY)
                       : cn_error_set(CN_ENOMEM, "out of memory");
        free(dir);
    }
    if (rc >= 0) {
        if (fstatat(dfd, slash ? slash + 1 : rel, st, AT_SYMLINK_NOFOLLOW) != 0) st->st_mode = 0;
        if (dfd != w->rootfd) close(dfd);
        return true;
    }
    if (rc != CN_EDENIED && rc != CN_EINVAL) {
        cn_error_clear();   /* gone or unreadable: not a file to index */
        return true;
    }
    if (w->stats->outside++ < 10)
        cn_log(CN_LOG_WARNING, "compile", "%s: git lists '%s', which leads outside the "
               "repository; not indexed (%s)", w->root, rel, cn_error_last()->message);
    cn_error_clear();
    return false;
}

/* The file at repository path rel, found as `name` in the directory dfd
 * (the root and rel, or its own directory's and its base name);
 * dirs_checked: its directories were found not excluded on the way. */
static int consider(walk *w, const char *rel, int dfd, const char *name, bool dirs_checked)
{
    struct stat st;
    const cn_lang_entry *lang;
    const char *base = strrchr(rel, '/');
    uint64_t max = w->opts->max_file_bytes ? w->opts->max_file_bytes : CN_WALK_DEFAULT_MAX;
    bool c_header;

    w->stats->listed++;
    /* such a name could forge lines of the contract or drive the terminal
     * it is printed on: never indexed, so never printed */
    if (!cn_utf8_is_plain_name(rel)) {
        w->stats->odd_name++;
        return 0;
    }
    if (!dirs_checked && path_excluded(w, rel)) {
        w->stats->excluded++;
        return 0;
    }
    if (!dirs_checked && !git_path_inside(w, rel, &st)) return 0;
    if (dirs_checked && fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) st.st_mode = 0;
    if (!S_ISREG(st.st_mode)) {
        w->stats->not_regular++;
        return 0;
    }
    lang = cn_langs_by_path(w->opts->langs, rel);
    base = base ? base + 1 : rel;
    if (lang == NULL && strchr(base, '.') == NULL) lang = sniff(w, dfd, name);
    {
        const char *dot = strrchr(base, '.');
        bool header = dot != NULL && strcmp(dot, ".h") == 0;
        c_header = w->cpp != NULL && lang != NULL && lang == w->c && header;
        if (lang != NULL && lang == w->c && !header) w->c_sources++;
        if (lang != NULL && lang == w->cpp) w->cpp_sources++;
    }
    /* a `.h` may turn out C++: settled once every file is listed */
    if (lang == NULL || (!language_selected(w, lang) && !(c_header && language_selected(w, w->cpp)))) {
        w->stats->no_language++;
        return 0;
    }
    if ((uint64_t)st.st_size > max) {
        w->stats->too_large++;
        return 0;
    }
    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 256;
        cn_walk_file *p = realloc(w->files, cap * sizeof *p);
        if (p == NULL) return cn_error_set(CN_ENOMEM, "out of memory listing files");
        w->files = p;
        w->cap = cap;
    }
    w->files[w->n].path = cn_strdup(rel);
    if (w->files[w->n].path == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    w->files[w->n].lang = lang;
    w->files[w->n].size = (uint64_t)st.st_size;
    w->files[w->n].stamp = (cn_file_stamp){(uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec,
                                           (uint64_t)st.st_ctim.tv_sec * 1000000000u + (uint64_t)st.st_ctim.tv_nsec,
                                           (uint64_t)st.st_ino, (uint64_t)st.st_dev};
    w->files[w->n].is_test = cn_walk_is_test_path(rel);
    w->files[w->n].c_header = c_header;
    w->n++;
    w->stats->selected++;
    return 0;
}

/* `git ls-files` in root, NUL-separated in *out; 1 when git is not there
 * or fails (then a plain walk lists the files). */
static int git_listing(const char *root, char **out, size_t *len)
{
    /* root holds .git, so it is the work tree, whatever core.worktree in
     * the repository's config says */
    char *work_tree = cn_strprintf("--work-tree=%s", root);
    const char *args[] = {work_tree, "ls-files", "-z", "--cached", "--others", "--exclude-standard", NULL};
    int status = -1, rc;

    *out = NULL;
    *len = 0;
    if (work_tree == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    rc = cn_git_capture(root, false, args, 0, out, len, &status);
    free(work_tree);
    if (rc < 0) {
        if (cn_error_last()->code == CN_ENOMEM) return CN_ENOMEM;
        /* git there but stopped or refused: say why the listing differs */
        if (cn_error_last()->code == CN_ETIMEOUT || cn_error_last()->code == CN_EDENIED)
            cn_log(CN_LOG_WARNING, NULL, "%s; listing the directory instead", cn_error_last()->message);
        cn_error_clear();
        return 1;
    }
    if (status != 0) {
        free(*out);
        *out = NULL;
        return 1;
    }
    return 0;
}

/* `git ls-files` in root; 1 when root is not a git checkout, or git is
 * not there or fails (then the plain walk lists the files). */
static int walk_git(walk *w)
{
    char *out = NULL;
    const char *prev = NULL;
    size_t len = 0;
    int rc = git_listing(w->root, &out, &len);

    if (rc != 0) return rc;
    w->stats->used_git = true;
    rc = 0;
    for (size_t i = 0; i < len && rc == 0;) {
        const char *p = out + i;
        size_t n = strnlen(p, len - i);
        /* a path with a merge conflict is listed once per stage, one
         * after another: it is one file */
        if (n > 0 && (prev == NULL || strcmp(prev, p) != 0)) rc = consider(w, p, w->rootfd, p, false);
        prev = p;
        i += n + 1;
    }
    free(out);
    return rc;
}

static int walk_dir(walk *w, const char *rel, int depth)
{
    DIR *d = NULL;
    struct dirent *de;
    int rc = 0, fd;

    if (depth > 64) return 0;  /* deeper than any real tree: a loop we cannot see */
    /* not through a symbolic link put in the directory's place since it
     * was listed */
    fd = openat(w->rootfd, rel[0] ? rel : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (fd >= 0 && (d = fdopendir(fd)) == NULL) close(fd);
    if (d == NULL) return rel[0] ? 0 : cn_error_set(CN_EIO, "%s: cannot read: %s", w->root, strerror(errno));
    while (rc == 0 && (de = readdir(d)) != NULL) {
        char *child;
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
        child = rel[0] ? cn_path_join(rel, de->d_name) : cn_strdup(de->d_name);
        if (child == NULL) {
            rc = cn_error_set(CN_ENOMEM, "out of memory");
            break;
        }
        if (de->d_type == DT_DIR) {
            if (name_excluded(w, de->d_name, child)) w->stats->excluded++;
            else rc = walk_dir(w, child, depth + 1);
        } else if (de->d_type == DT_REG || de->d_type == DT_UNKNOWN) {
            struct stat st;
            if (de->d_type == DT_UNKNOWN && fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                S_ISDIR(st.st_mode)) {
                if (name_excluded(w, de->d_name, child)) w->stats->excluded++;
                else rc = walk_dir(w, child, depth + 1);
            } else {
                rc = consider(w, child, dirfd(d), de->d_name, true);
            }
        } else {
            w->stats->listed++;
            w->stats->not_regular++;  /* symlinks are not followed */
        }
        free(child);
    }
    closedir(d);
    return rc;
}

/* Whether the `.h` at rel reads as C++: its first CN_HEADER_SNIFF_BYTES,
 * read beneath the root (unreadable: C, as the extension says). */
static bool header_is_cpp(const walk *w, const char *rel, char *buf)
{
    size_t got = 0;
    int fd = cn_open_beneath(w->rootfd, rel, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        cn_error_clear();
        return false;
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        while (got < CN_HEADER_SNIFF_BYTES) {
            ssize_t k = read(fd, buf + got, CN_HEADER_SNIFF_BYTES - got);
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) break;
            got += (size_t)k;
        }
    }
    close(fd);
    return cn_header_looks_cpp(buf, got);
}

/* Settles each `.h` as C or C++ (cn_header_lang.h); a header whose
 * language is not selected leaves the listing. */
static int choose_header_langs(walk *w)
{
    size_t out = 0;
    char *buf = NULL;
    if (w->cpp != NULL && (w->c_sources > 0) == (w->cpp_sources > 0)) {
        buf = malloc(CN_HEADER_SNIFF_BYTES);
        if (buf == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < w->n; i++) {
        cn_walk_file *f = &w->files[i];
        if (f->c_header) {
            bool cpp;
            if (w->cpp_sources > 0 && w->c_sources == 0) cpp = true;
            else if (w->c_sources > 0 && w->cpp_sources == 0) cpp = false;
            else cpp = buf != NULL && header_is_cpp(w, f->path, buf);
            f->lang = cpp ? w->cpp : w->c;
            if (!language_selected(w, f->lang)) {
                free(f->path);
                w->stats->selected--;
                w->stats->no_language++;
                continue;
            }
        }
        w->files[out++] = *f;
    }
    w->n = out;
    free(buf);
    return 0;
}

static int file_cmp(const void *a, const void *b)
{
    return strcmp(((const cn_walk_file *)a)->path, ((const cn_walk_file *)b)->path);
}

int cn_walk(const char *root, const cn_walk_opts *opts, cn_walk_file **files, size_t *n,
            cn_walk_stats *stats)
{
    walk w;
    struct stat st;
    int rc = 1;

    *files = NULL;
    *n = 0;
    memset(stats, 0, sizeof *stats);
    if (stat(root, &st) != 0 || !S_ISDIR(st.st_mode))
        return cn_error_set(CN_ENOTFOUND, "%s is not a directory", root);
    memset(&w, 0, sizeof w);
    w.root = root;
    w.opts = opts;
    w.stats = stats;
    w.c = cn_langs_find(opts->langs, "c");
    w.cpp = cn_langs_find(opts->langs, "cpp");
    /* only a C++ backend that can load takes headers */
    if (w.c == NULL || w.cpp == NULL || w.cpp->reason != NULL) w.cpp = NULL;
    if ((w.rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        return cn_error_set(CN_EIO, "%s: cannot read: %s", root, strerror(errno));
    if (!opts->no_git) {
        char *dotgit = cn_path_join(root, ".git");
        if (dotgit && stat(dotgit, &st) == 0) rc = walk_git(&w);
        free(dotgit);
    }
    if (rc == 1) {
        /* not a git checkout (or git unusable): start over with a plain walk */
        cn_walk_free(w.files, w.n);
        w.files = NULL;
        w.n = w.cap = 0;
        memset(stats, 0, sizeof *stats);
        w.c_sources = w.cpp_sources = 0;
        rc = walk_dir(&w, "", 0);
    }
    if (rc == 0) rc = choose_header_langs(&w);
    close(w.rootfd);
    if (rc < 0) {
        cn_walk_free(w.files, w.n);
        return rc;
    }
    if (w.n > 1) qsort(w.files, w.n, sizeof *w.files, file_cmp);
    *files = w.files;
    *n = w.n;
    return 0;
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int cn_walk_git_paths(const char *root, cn_strv *paths)
{
    struct stat st;
    char *dotgit = cn_path_join(root, ".git"), *out = NULL;
    size_t len = 0;
    int rc;

    if (dotgit == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    rc = stat(dotgit, &st) == 0 ? git_listing(root, &out, &len) : 1;
    free(dotgit);
    for (size_t i = 0; rc == 0 && i < len;) {
        size_t n = strnlen(out + i, len - i);
        if (n > 0 && cn_strv_push(paths, out + i) < 0) rc = CN_ENOMEM;
        i += n + 1;
    }
    free(out);
    if (rc == 0 && paths->len > 1) qsort(paths->items, paths->len, sizeof *paths->items, str_cmp);
    return rc;
}

void cn_walk_free(cn_walk_file *files, size_t n)
{
    for (size_t i = 0; i < n; i++) free(files[i].path);
    free(files);
}
