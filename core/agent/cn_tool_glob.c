/* The glob tool, and the confined file listing and glob matcher that grep
 * shares. */
#include "cn_tools.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../index/cn_walk.h"
#include "../util/cn_utf8.h"

#define MAX_DEPTH 64
#define MAX_EXPANSIONS 256
#define MAX_PATTERN 1024

/* ---- matching ------------------------------------------------------------ */

/* One segment (up to '/' or the end) of pattern against one of path. */
static bool segment_match(const char *pat, size_t pl, const char *name, size_t nl)
{
    char p[MAX_PATTERN + 1], n[PATH_MAX];
    if (pl > MAX_PATTERN || nl >= sizeof n) return false;
    memcpy(p, pat, pl);
    p[pl] = '\0';
    memcpy(n, name, nl);
    n[nl] = '\0';
    return fnmatch(p, n, 0) == 0;
}

/* pattern without braces against a '/'-separated path. */
static bool match_plain(const char *pat, const char *path)
{
    const char *pe = strchr(pat, '/');
    size_t pl = pe ? (size_t)(pe - pat) : strlen(pat);

    if (pl == 2 && pat[0] == '*' && pat[1] == '*') {
        const char *rest = pe ? pe + 1 : "";
        if (*rest == '\0') return *path != '\0';
        /* '**' spans zero or more whole directories. */
        if (match_plain(rest, path)) return true;
        for (const char *s = strchr(path, '/'); s; s = strchr(s + 1, '/'))
            if (match_plain(rest, s + 1)) return true;
        return false;
    }
    {
        const char *ne = strchr(path, '/');
        size_t nl = ne ? (size_t)(ne - path) : strlen(path);
        if (*path == '\0' || !segment_match(pat, pl, path, nl)) return false;
        if (pe == NULL) return ne == NULL;
        return ne != NULL && match_plain(pe + 1, ne + 1);
    }
}

/* Expands the first {a,b,...} group and matches each alternative. */
static bool match_braces(const char *pat, const char *path, int *budget)
{
    const char *open = NULL, *close = NULL;
    int depth = 0;

    if (--*budget < 0) return false;
    for (const char *s = pat; *s; s++) {
        if (*s == '\\' && s[1]) {
            s++;
        } else if (*s == '{') {
            if (depth++ == 0) open = s;
        } else if (*s == '}' && depth > 0) {
            if (--depth == 0) {
                close = s;
                break;
            }
        }
    }
    if (open == NULL || close == NULL) return match_plain(pat, path);
    {
        size_t pre = (size_t)(open - pat), post = strlen(close + 1);
        const char *alt = open + 1;
        depth = 0;
        for (const char *s = open + 1; s <= close; s++) {
            if (*s == '\\' && s[1]) {
                s++;
                continue;
            }
            if (*s == '{') depth++;
            if (*s == '}' && depth > 0 && s != close) depth--;
            if ((*s == ',' && depth == 0) || s == close) {
                size_t al = (size_t)(s - alt);
                char buf[MAX_PATTERN + 1];
                bool m;
                if (pre + al + post > MAX_PATTERN) return false;
                memcpy(buf, pat, pre);
                memcpy(buf + pre, alt, al);
                memcpy(buf + pre + al, close + 1, post + 1);
                m = match_braces(buf, path, budget);
                if (m) return true;
                alt = s + 1;
            }
        }
    }
    return false;
}

bool cn_tools__glob_match(const char *pattern, const char *path)
{
    int budget = MAX_EXPANSIONS;
    if (strlen(pattern) > MAX_PATTERN) return false;
    return match_braces(pattern, path, &budget);
}

/* ---- listing ------------------------------------------------------------- */

static bool excluded_dir(const char *name)
{
    for (size_t i = 0; cn_walk_default_excludes[i]; i++)
        if (fnmatch(cn_walk_default_excludes[i], name, 0) == 0) return true;
    return false;
}

/* Symlinks are not followed (as ripgrep does by default): one that leaves
 * the root must not leak, and one inside only repeats what is listed. */
static int list_dir(const char *abs, const char *rel, int depth, cn_strv *files)
{
    DIR *d;
    struct dirent *de;
    int rc = 0;

    if (depth > MAX_DEPTH) return 0;
    if ((d = opendir(abs)) == NULL) return 0;  /* unreadable: nothing to list */
    while (rc == 0 && (de = readdir(d)) != NULL) {
        const char *nm = de->d_name;
        char *a, *r;
        struct stat st;
        if (strcmp(nm, ".") == 0 || strcmp(nm, "..") == 0) continue;
        a = cn_path_join(abs, nm);
        r = rel[0] ? cn_path_join(rel, nm) : cn_strdup(nm);
        if (a == NULL || r == NULL) {
            rc = cn_error_set(CN_ENOMEM, "out of memory listing files");
        } else if (lstat(a, &st) != 0) {
            /* vanished meanwhile */
        } else if (S_ISDIR(st.st_mode)) {
            if (!excluded_dir(nm)) rc = list_dir(a, r, depth + 1, files);
        } else if (S_ISREG(st.st_mode)) {
            rc = cn_strv_push_owned(files, r) < 0 ? cn_error_set(CN_ENOMEM, "out of memory") : 0;
            r = NULL;
        }
        free(a);
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

int cn_tools__list_files(const cn_tools_config *c, const char *dir, cn_strv *files)
{
    char *abs = dir[0] ? cn_path_join(c->root, dir) : cn_strdup(c->root);
    int rc;
    if (abs == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    rc = list_dir(abs, dir, 0, files);
    free(abs);
    drop_odd_names(files);
    if (rc == 0 && files->len > 1) qsort(files->items, files->len, sizeof *files->items, cmp_str);
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
                     const char *pattern, char **output)
{
    cn_tools_out out;
    size_t matched = 0;
    int rc = 0;

    cn_tools__out_init(&out, c->output_cap);
    for (size_t i = 0; i < files->len && rc == 0; i++) {
        const char *p = files->items[i];
        if (!cn_tools__glob_match(pattern, p + base_len)) continue;
        if (++matched <= c->glob_cap) rc = cn_tools__out_printf(&out, "%s\n", p);
    }
    if (rc == 0) {
        cn_buf note = CN_BUF_INIT;
        if (matched == 0) cn_buf_printf(&note, "No files matched '%s'.\n", pattern);
        if (matched > c->glob_cap)
            cn_buf_printf(&note, "[%zu more paths not shown: %zu matched, the first %zu are "
                                 "listed; narrow the pattern or the path]\n",
                          matched - c->glob_cap, matched, c->glob_cap);
        rc = note.oom ? cn_error_set(CN_ENOMEM, "out of memory")
                      : cn_tools__out_finish_with(&out, note.data, output);
        cn_buf_free(&note);
    }
    cn_tools__out_free(&out);
    return rc;
}

int cn_tools__glob(const cn_tools_config *c, json_object *args, char **output)
{
    const char *pattern, *path, *rel;
    char *abs = NULL;
    cn_strv files = CN_STRV_INIT;
    struct stat st;
    int rc;

    if ((rc = cn_tools__arg_str(args, "pattern", true, &pattern)) < 0 ||
        (rc = cn_tools__arg_str(args, "path", false, &path)) < 0)
        return rc;
    if ((rc = check_pattern(pattern)) < 0) return rc;
    while (pattern[0] == '.' && pattern[1] == '/') pattern += 2;
    if ((rc = cn_tools__resolve(c, path, &abs, &rel)) < 0) return rc;
    if (stat(abs, &st) != 0 || !S_ISDIR(st.st_mode)) {
        rc = cn_error_set(CN_EINVAL, "argument 'path': '%s' is not a directory", path);
    } else if ((rc = cn_tools__list_files(c, rel, &files)) == 0) {
        rc = glob_emit(c, &files, rel[0] ? strlen(rel) + 1 : 0, pattern, output);
    }
    cn_strv_free(&files);
    free(abs);
    return rc;
}
