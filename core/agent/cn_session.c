/* SPDX-License-Identifier: Apache-2.0 */
/* The session context of a run -- the repository's primary language, its
 * size and top-level entries, found by a bounded walk -- and the stack
 * trace classifier the compile tables key on. */
#include <ctype.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "cn_agent_support.h"
#include "../index/cn_index.h"

#define WALK_LIMIT 50000 /* entries looked at, at most */
#define WALK_DEPTH 12

static const struct {
    const char *ext, *lang;
} langs[] = {{"py", "python"},   {"pyi", "python"},     {"c", "c"},           {"h", "c"},
             {"cc", "cpp"},      {"cpp", "cpp"},        {"cxx", "cpp"},       {"hpp", "cpp"},
             {"hh", "cpp"},      {"java", "java"},      {"js", "javascript"}, {"mjs", "javascript"},
             {"cjs", "javascript"}, {"jsx", "javascript"}, {"ts", "typescript"}, {"tsx", "typescript"},
             {"go", "go"},       {"rs", "rust"},        {"rb", "ruby"},       {"php", "php"},
             {"cs", "csharp"},   {"kt", "kotlin"},      {"swift", "swift"},   {"scala", "scala"}};
#define N_LANGS (sizeof langs / sizeof langs[0])

static bool skipped_dir(const char *name)
{
    static const char *const skip[] = {"node_modules", "vendor", "third_party", "build", "dist", "target",
                                       "__pycache__", "_build", NULL};
    if (name[0] == '.') return true;
    for (size_t i = 0; skip[i]; i++)
        if (strcmp(name, skip[i]) == 0) return true;
    return false;
}

typedef struct walk {
    long counts[N_LANGS];
    long files, seen;
} walk;

static void count_file(walk *w, const char *name)
{
    const char *dot = strrchr(name, '.');
    w->files++;
    if (dot == NULL) return;
    for (size_t i = 0; i < N_LANGS; i++)
        if (strcmp(dot + 1, langs[i].ext) == 0) {
            w->counts[i]++;
            return;
        }
}

static void walk_dir(walk *w, const char *path, int depth)
{
    DIR *d;
    struct dirent *e;
    if (depth > WALK_DEPTH || (d = opendir(path)) == NULL) return;
    while (w->seen < WALK_LIMIT && (e = readdir(d)) != NULL) {
        struct stat st;
        cn_buf p = CN_BUF_INIT;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        w->seen++;
        cn_buf_printf(&p, "%s/%s", path, e->d_name);
        if (p.data != NULL && lstat(p.data, &st) == 0) {
            if (S_ISDIR(st.st_mode)) {
                if (!skipped_dir(e->d_name)) walk_dir(w, p.data, depth + 1);
            } else if (S_ISREG(st.st_mode) && e->d_name[0] != '.') {
                count_file(w, e->d_name);
            }
        }
        cn_buf_free(&p);
    }
    closedir(d);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int cn_session_scan(const char *root, bool walk_tree, cn_session *s)
{
    walk w;
    DIR *d;
    struct dirent *e;
    size_t best = N_LANGS;

    memset(s, 0, sizeof *s);
    s->symbols = -1;
    if (root == NULL) return 0;
    memset(&w, 0, sizeof w);
    if (walk_tree) walk_dir(&w, root, 0);
    s->files = w.files;
    s->partial = w.seen >= WALK_LIMIT;
    {
        long sums[N_LANGS] = {0}; /* per language, on its first extension */
        for (size_t i = 0; i < N_LANGS; i++)
            for (size_t k = 0; k < N_LANGS; k++)
                if (strcmp(langs[k].lang, langs[i].lang) == 0) sums[i] += w.counts[k];
        for (size_t i = 0; i < N_LANGS; i++)
            if (sums[i] > 0 && (best == N_LANGS || sums[i] > sums[best])) best = i;
    }
    if (best < N_LANGS) s->language = cn_strdup(langs[best].lang);
    if ((d = opendir(root)) != NULL) {
        while ((e = readdir(d)) != NULL) {
            struct stat st;
            cn_buf p = CN_BUF_INIT;
            if (e->d_name[0] == '.') continue;
            cn_buf_printf(&p, "%s/%s", root, e->d_name);
            /* lstat: a link is listed as itself, never followed */
            if (p.data && lstat(p.data, &st) == 0) {
                cn_buf n = CN_BUF_INIT;
                cn_buf_printf(&n, "%s%s", e->d_name, S_ISDIR(st.st_mode) ? "/" : "");
                if (n.data) cn_strv_push_owned(&s->top, cn_buf_steal(&n));
            }
            cn_buf_free(&p);
            if (s->top.len >= 10000) break;
        }
        closedir(d);
        if (s->top.len > 1) qsort(s->top.items, s->top.len, sizeof *s->top.items, by_name);
    }
    return 0;
}

/* The compiled index knows better than the walk: its files per language
 * and its symbol count (the manifest's nodes). Quietly nothing when the
 * manifest cannot be read. */
void cn_session_from_index(cn_session *s, const char *index_dir)
{
    json_object *m = NULL, *ls, *idx, *nodes, *count;
    long total = 0, best_n = 0;
    const char *best = NULL;
    if (index_dir == NULL || cn_index_manifest_read(index_dir, &m) < 0) {
        cn_error_clear();
        return;
    }
    if (json_object_object_get_ex(m, "languages", &ls) && json_object_is_type(ls, json_type_object)) {
        json_object_object_foreach(ls, name, v) {
            json_object *f;
            long n = json_object_object_get_ex(v, "files", &f) ? (long)json_object_get_int64(f) : 0;
            if (n <= 0) continue;
            total += n;
            if (n > best_n) {
                best_n = n;
                best = name;
            }
        }
    }
    if (best != NULL) {
        free(s->language);
        s->language = cn_strdup(best);
        s->files = total;
        s->partial = false;
    }
    if (json_object_object_get_ex(m, "indexes", &idx) && json_object_object_get_ex(idx, "nodes", &nodes) &&
        json_object_object_get_ex(nodes, "count", &count) && json_object_is_type(count, json_type_int))
        s->symbols = (long)json_object_get_int64(count);
    json_object_put(m);
}

void cn_session_free(cn_session *s)
{
    free(s->language);
    cn_strv_free(&s->top);
    memset(s, 0, sizeof *s);
}

const char *cn_session_size_bucket(const cn_session *s)
{
    if (s == NULL || s->files <= 0) return "unknown";
    if (s->files < 200) return "small";
    if (s->files < 2000) return "medium";
    return "large";
}

/* Frames of the common runtimes, one pattern each. */
static const char *const trace_patterns[] = {
    "Traceback \\(most recent call last\\)",                       /* Python */
    "^\\s*File \"[^\"]+\", line \\d+",                              /* Python frame */
    "^\\s*at [\\w$.<>/]+\\((?:[\\w$.-]+\\.(?:java|kt|scala):\\d+|Native Method|Unknown Source)\\)", /* JVM */
    "^\\s*at (?:async )?[^\\s(]+ \\(?[^\\s()]+:\\d+:\\d+\\)?$",      /* JavaScript (V8) */
    "^\\s*at [^\\s()]+\\.(?:js|mjs|cjs|ts):\\d+:\\d+",              /* JavaScript, anonymous */
    "^goroutine \\d+ \\[",                                          /* Go */
    "^\\s+[^\\s]+\\.go:\\d+(?: \\+0x[0-9a-f]+)?$",                  /* Go frame */
    "thread '[^']*' panicked at",                                   /* Rust */
    "^stack backtrace:",                                            /* Rust */
    "^\\s*#\\d+\\s+0x[0-9a-fA-F]+ in ",                             /* C/C++ (gdb, sanitizers) */
    "^\\s*#\\d+\\s+[\\w:~<>]+\\s*\\(.*\\) at [^\\s]+:\\d+",         /* C/C++ (gdb, no address) */
    NULL};

bool cn_has_stacktrace(const char *text)
{
    bool hit = false;
    if (text == NULL || *text == '\0') return false;
    for (size_t i = 0; trace_patterns[i] && !hit; i++) {
        int err = 0;
        PCRE2_SIZE off = 0;
        pcre2_code *re = pcre2_compile((PCRE2_SPTR)trace_patterns[i], PCRE2_ZERO_TERMINATED,
                                       PCRE2_MULTILINE, &err, &off, NULL);
        pcre2_match_data *md;
        if (re == NULL) continue;
        if ((md = pcre2_match_data_create_from_pattern(re, NULL)) != NULL) {
            hit = pcre2_match(re, (PCRE2_SPTR)text, strlen(text), 0, 0, md, NULL) >= 0;
            pcre2_match_data_free(md);
        }
        pcre2_code_free(re);
    }
    return hit;
}
