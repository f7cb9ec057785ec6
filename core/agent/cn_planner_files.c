/* SPDX-License-Identifier: Apache-2.0 */
/* The offline planner's whole-file signal (see cn_planner.h).
 *
 * Everything else the planner ranks is a node: a function, a class, a
 * file's top-level lines.  An issue often describes a file's subject as a
 * whole (a card, a resolver, a command's options) in words spread over
 * many of its functions, none of which matches well alone.  BM25 over
 * whole files sees that; fused with the node-based file ranking by rank
 * (not by score, which live on different scales), it lifts the files both
 * agree on and costs nothing when they agree already. */
#include "cn_planner.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../index/cn_bm25.h"
#include "../index/cn_index.h"
#include "../index/cn_nodes.h"
#include "../util/cn_beneath.h"

/* Reciprocal rank fusion: 1/(K + rank) for the node-based ranking plus
 * W_FILE_BM25/(K + rank) for the whole-file one.  A small K keeps the top
 * of each list apart; the whole-file list weighs less, since it knows
 * nothing of the names, paths and call graph the other one uses.  From
 * the multilingual and Python development sets (bench/README.md). */
#define FUSE_K 5.0
#define W_FILE_BM25 0.7
/* A file whose first lines say it was generated (a parser from a
 * grammar, protobuf stubs, a lexer) keeps this share of its score unless
 * the question names it: the change belongs in its source, and its long
 * tables of every name in the grammar match any question.  Only the files
 * that can still reach the answer are looked at. */
#define GENERATED_SHARE 0.5
/* A file in a language that has under MINOR_SHARE of the repository's
 * non-test files (fmt's Python support scripts beside its C++, a
 * TypeScript project's JavaScript build files) keeps MINOR_KEEP of its
 * score unless the question names it: issues are about the language the
 * project is written in.  At 10% it moves nothing on the multilingual
 * development set; at 40% it takes fmt's scripts out of the top five
 * (bench/README.md).  An aside file keeps ASIDE_KEEP after the fusion as
 * it does before it (cn_pl_rank_files), or whole-file BM25 lifts the
 * documentation and examples that repeat the question's words back.  A
 * file under a directory with a licence of its own (code copied in from
 * another project, cn_pl_file_is_vendored) keeps VENDORED_KEEP. */
#define VENDORED_KEEP 0.5
#define MINOR_SHARE 0.4
#define MINOR_KEEP 0.5
#define ASIDE_KEEP 0.5
#define GENERATED_CHECKED 40
#define GENERATED_HEAD 2048

typedef struct file_hit {
    const char *path;
    double score;
} file_hit;

static int cmp_hits(const void *a, const void *b)
{
    const file_hit *x = a, *y = b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return strcmp(x->path, y->path);
}

int cn_pl_file_bm25(const struct cn_index *idx, const char *question, size_t top_k, cn_strv *out)
{
    uint32_t n_files, n_docs, n_groups = 0, *group_of = NULL, *file_of_group = NULL;
    double *scores = NULL;
    file_hit *hits = NULL;
    size_t n_hits = 0;
    bool all_tests = true;
    int rc = 0;

    if (idx == NULL || idx->bm25 == NULL || idx->nodes == NULL || question == NULL) return 0;
    n_files = cn_nodes_file_count(idx->nodes);
    n_docs = cn_bm25_doc_count(idx->bm25);
    if (n_files == 0 || n_docs == 0) return 0;
    group_of = malloc((size_t)n_docs * sizeof *group_of);
    file_of_group = malloc((size_t)n_files * sizeof *file_of_group);
    if (group_of == NULL || file_of_group == NULL) goto oom;
    for (uint32_t f = 0; f < n_files && all_tests; f++) {
        cn_file_view fv;
        if (cn_nodes_file(idx->nodes, f, &fv) == 0 && !fv.is_test) all_tests = false;
    }
    memset(group_of, 0xff, (size_t)n_docs * sizeof *group_of);
    /* a file's nodes are numbered contiguously from its file node */
    for (uint32_t f = 0; f < n_files; f++) {
        cn_file_view fv;
        if (cn_nodes_file(idx->nodes, f, &fv) != 0 || (fv.is_test && !all_tests)) continue;
        for (uint32_t d = fv.node; d < n_docs && d - fv.node < fv.n_nodes; d++) group_of[d] = n_groups;
        file_of_group[n_groups++] = f;
    }
    if (n_groups == 0) goto out;
    if ((scores = malloc((size_t)n_groups * sizeof *scores)) == NULL ||
        (hits = malloc((size_t)n_groups * sizeof *hits)) == NULL)
        goto oom;
    if ((rc = cn_bm25_group_scores(idx->bm25, question, group_of, n_groups, scores)) < 0) goto out;
    for (uint32_t g = 0; g < n_groups; g++) {
        cn_file_view fv;
        if (!(scores[g] > 0) || cn_nodes_file(idx->nodes, file_of_group[g], &fv) != 0) continue;
        hits[n_hits].path = fv.path;
        hits[n_hits++].score = scores[g];
    }
    qsort(hits, n_hits, sizeof *hits, cmp_hits);
    for (size_t i = 0; i < n_hits && i < top_k; i++)
        if (cn_strv_push(out, hits[i].path) < 0) goto oom;
    goto out;
oom:
    rc = cn_error_set(CN_ENOMEM, "planner: out of memory (whole-file bm25)");
out:
    free(group_of);
    free(file_of_group);
    free(scores);
    free(hits);
    return rc;
}

/* The markers generators leave in a file's first lines, lowercased:
 * Go's "Code generated ... DO NOT EDIT.", "@generated" (protobuf, Facebook
 * tools), "generated by" (flex, SWIG, protoc), Bison's banner. */
static const char *const generated_marks[] = {
    "code generated", "do not edit", "@generated", "generated by", "auto-generated",
    "autogenerated", "automatically generated", "a bison parser",
};

/* The lowercased names of the licence files ("LICENSE", "COPYING.txt",
 * "ICU-license.html") among the entries of `dir` beneath rootfd ("" is the
 * root itself), pushed to *out.  A directory that cannot be opened (gone,
 * a link) has none. */
static void licence_files(int rootfd, const char *dir, cn_strv *out)
{
    int fd = *dir ? cn_open_beneath(rootfd, dir, O_RDONLY | O_DIRECTORY)
                  : openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d;
    struct dirent *e;

    if (fd < 0 || (d = fdopendir(fd)) == NULL) {
        if (fd >= 0) close(fd);
        cn_error_clear();
        return;
    }
    while ((e = readdir(d)) != NULL) {
        char low[128];
        size_t n = strlen(e->d_name);
        if (n >= sizeof low || !cn_is_licence_name(e->d_name)) continue;
        for (size_t i = 0; i <= n; i++) low[i] = (char)tolower((unsigned char)e->d_name[i]);
        if (!cn_strv_contains(out, low)) cn_strv_push(out, low);
    }
    closedir(d);
}

int cn_pl_file_is_vendored(int rootfd, const char *path, const cn_strv *root_licences)
{
    char dir[4096];
    size_t n = strlen(path);
    if (n >= sizeof dir) return 0;
    memcpy(dir, path, n + 1);
    /* every proper ancestor but the root, innermost first */
    for (char *slash = strrchr(dir, '/'); slash != NULL; slash = strrchr(dir, '/')) {
        cn_strv here = CN_STRV_INIT;
        int own = 0;
        *slash = '\0';
        licence_files(rootfd, dir, &here);
        for (size_t i = 0; i < here.len && !own; i++)
            own = root_licences == NULL || !cn_strv_contains(root_licences, here.items[i]);
        cn_strv_free(&here);
        if (own) return 1;
    }
    return 0;
}

void cn_pl_root_licences(int rootfd, cn_strv *out)
{
    licence_files(rootfd, "", out);
}

int cn_pl_file_is_generated(int rootfd, const char *path)
{
    char head[GENERATED_HEAD + 1];
    struct stat st;
    ssize_t n;
    int fd = cn_open_beneath(rootfd, path, O_RDONLY | O_NONBLOCK);

    if (fd < 0) {
        cn_error_clear();   /* gone since the compile, or a link: not ours to judge */
        return 0;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (n = read(fd, head, GENERATED_HEAD)) <= 0) {
        close(fd);
        return 0;
    }
    close(fd);
    for (ssize_t i = 0; i < n; i++) head[i] = head[i] == '\0' ? ' ' : (char)tolower((unsigned char)head[i]);
    head[n] = '\0';
    for (size_t i = 0; i < sizeof generated_marks / sizeof generated_marks[0]; i++)
        if (strstr(head, generated_marks[i]) != NULL) return 1;
    return 0;
}

typedef struct fused {
    json_object *file;
    size_t rank;             /* in the node-based ranking, from 0 */
    double score;
} fused;

static int cmp_fused(const void *a, const void *b)
{
    const fused *x = a, *y = b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static void add_why(json_object *file, const char *text)
{
    json_object *why;
    if (json_object_object_get_ex(file, "why", &why) && json_object_is_type(why, json_type_array))
        json_object_array_add(why, json_object_new_string(text));
}

/* Non-test files per language (at most 64 languages, as the node table). */
typedef struct lang_count {
    const char *lang[64];
    size_t n[64];
    size_t n_langs, total;
} lang_count;

static void count_languages(const cn_nodes *nodes, lang_count *lc)
{
    uint32_t nf = cn_nodes_file_count(nodes);
    memset(lc, 0, sizeof *lc);
    for (uint32_t i = 0; i < nf; i++) {
        cn_file_view f;
        size_t k;
        if (cn_nodes_file(nodes, i, &f) < 0 || f.is_test || f.language == NULL) continue;
        for (k = 0; k < lc->n_langs; k++)
            if (strcmp(lc->lang[k], f.language) == 0) break;
        if (k == lc->n_langs) {
            if (k == sizeof lc->lang / sizeof lc->lang[0]) continue;
            lc->lang[lc->n_langs++] = f.language;
        }
        lc->n[k]++;
        lc->total++;
    }
}

static int is_minor(const cn_nodes *nodes, const lang_count *lc, const char *path)
{
    cn_file_view f;
    if (lc->n_langs < 2 || cn_nodes_find_file(nodes, path, &f) < 0 || f.language == NULL) {
        cn_error_clear();
        return 0;
    }
    for (size_t k = 0; k < lc->n_langs; k++)
        if (strcmp(lc->lang[k], f.language) == 0) return (double)lc->n[k] < MINOR_SHARE * (double)lc->total;
    return 0;   /* a test-only language: the test rules judge it */
}

int cn_pl_language_minor(const cn_nodes *nodes, const char *path)
{
    lang_count lc;
    if (nodes == NULL || path == NULL) return 0;
    count_languages(nodes, &lc);
    return is_minor(nodes, &lc, path);
}

int cn_pl_fuse_files(json_object *files, const cn_strv *whole, const cn_pl_fuse_opts *o)
{
    const char *repo_root = o != NULL ? o->repo_root : NULL;
    const cn_strv *named = o != NULL ? o->named : NULL;
    const cn_nodes *nodes = o != NULL ? o->nodes : NULL;
    int demote_aside = o != NULL && o->demote_aside;
    int vendored = o != NULL && o->vendored, generated = o != NULL && o->generated;
    cn_strv root_licences = CN_STRV_INIT;
    lang_count lc;
    size_t n = json_object_array_length(files);
    int rootfd = -1;
    fused *f;
    json_object *tmp;

    if (n == 0 || ((whole == NULL || whole->len == 0) && (repo_root == NULL || !(generated || vendored)) &&
                   nodes == NULL))
        return 0;   /* nothing to move */
    if ((f = calloc(n, sizeof *f)) == NULL || (tmp = json_object_new_array()) == NULL) {
        free(f);
        return cn_error_set(CN_ENOMEM, "planner: out of memory (file fusion)");
    }
    if (repo_root != NULL) rootfd = open(repo_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (rootfd >= 0 && vendored) cn_pl_root_licences(rootfd, &root_licences);
    if (nodes != NULL) count_languages(nodes, &lc);
    for (size_t i = 0; i < n; i++) {
        json_object *path = NULL;
        const char *p;
        f[i].file = json_object_get(json_object_array_get_idx(files, i));
        f[i].rank = i;
        json_object_object_get_ex(f[i].file, "path", &path);
        if (whole != NULL && whole->len > 0) {
            f[i].score = 1.0 / (FUSE_K + (double)i + 1.0);
        } else {   /* no whole-file ranking: the node-based score stands */
            json_object *v = NULL;
            json_object_object_get_ex(f[i].file, "score", &v);
            f[i].score = json_object_get_double(v);
        }
        p = json_object_get_string(path);
        for (size_t j = 0; p != NULL && whole != NULL && j < whole->len; j++) {
            char buf[64];
            if (strcmp(whole->items[j], p) != 0) continue;
            f[i].score += W_FILE_BM25 / (FUSE_K + (double)j + 1.0);
            snprintf(buf, sizeof buf, "whole-file bm25 #%zu", j + 1);
            add_why(f[i].file, buf);
            break;
        }
        if (p != NULL && !cn_pl_path_mentioned(p, named)) {   /* a named file is never lowered */
            if (rootfd >= 0 && i < GENERATED_CHECKED && generated && cn_pl_file_is_generated(rootfd, p)) {
                f[i].score *= GENERATED_SHARE;
                add_why(f[i].file, "says it was generated");
            }
            if (rootfd >= 0 && i < GENERATED_CHECKED && vendored && cn_pl_file_is_vendored(rootfd, p, &root_licences)) {
                f[i].score *= VENDORED_KEEP;
                add_why(f[i].file, "under a directory with its own licence (vendored code)");
            }
            /* without a whole-file ranking the node-based score, halved already, stands */
            if (demote_aside && whole != NULL && whole->len > 0 && cn_pl_path_is_aside(p))
                f[i].score *= ASIDE_KEEP;   /* its "why" says so already */
            if (nodes != NULL && is_minor(nodes, &lc, p)) {
                f[i].score *= MINOR_KEEP;
                add_why(f[i].file, "in a language the repository seldom uses");
            }
        }
        /* the score the symbols are weighed by (cn_planner.c) is now this one */
        json_object_object_add(f[i].file, "score", json_object_new_double(f[i].score));
    }
    if (rootfd >= 0) close(rootfd);
    cn_strv_free(&root_licences);
    qsort(f, n, sizeof *f, cmp_fused);
    /* the array is rebuilt in the new order: json-c has no in-place sort
     * that keeps references */
    for (size_t i = 0; i < n; i++) json_object_array_add(tmp, f[i].file);
    json_object_array_del_idx(files, 0, n);
    for (size_t i = 0; i < n; i++) json_object_array_add(files, json_object_get(json_object_array_get_idx(tmp, i)));
    json_object_put(tmp);
    free(f);
    return 0;
}
