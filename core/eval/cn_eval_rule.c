/* SPDX-License-Identifier: Apache-2.0 */
/* Which files of a commit `codenib eval` indexes: the source files of the
 * languages a backend exists for (or those asked for with --languages),
 * minus tests and documentation.
 *
 * Benchmarks of localization score the places a fix changes in the
 * product's code; the tests a fix adds and the docs it touches are left out
 * of their gold, so an index that holds them only offers wrong answers.
 * One rule serves every language: test and doc directories at any depth,
 * and the test file names each language's conventions use.  For Python it
 * keeps the dataset's historical rule (LocAgent's) and adds only the doc
 * directories. */
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "cn_eval_run.h"
#include "../index/cn_langs.h"

/* ---------------------------------------------------------- languages -- */

void cn_eval_langs_free(cn_eval_langs *l)
{
    if (l == NULL) return;
    cn_strv_free(&l->names);
    cn_strv_free(&l->exts);
    memset(l, 0, sizeof *l);
}

int cn_eval_langs_add(cn_eval_langs *l, const char *name, const char *const *exts, size_t n)
{
    int rc = cn_strv_contains(&l->names, name) ? 0 : cn_strv_push(&l->names, name);
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (!cn_strv_contains(&l->exts, exts[i])) rc = cn_strv_push(&l->exts, exts[i]);
    return rc < 0 ? cn_error_set(CN_ENOMEM, "out of memory") : 0;
}

char *cn_eval_langs_names(const cn_eval_langs *l)
{
    cn_buf b = CN_BUF_INIT;
    for (size_t i = 0; i < l->names.len; i++) cn_buf_printf(&b, "%s%s", i ? ", " : "", l->names.items[i]);
    if (b.oom) {
        cn_buf_free(&b);
        return NULL;
    }
    return b.data ? cn_buf_steal(&b) : cn_strdup("");
}

/* The usable backends, each named once (a broken package is no backend). */
static int add_entry(cn_eval_langs *out, const cn_lang_entry *e)
{
    return cn_eval_langs_add(out, e->language, (const char *const *)e->extensions.items, e->extensions.len);
}

int cn_eval_langs_load(const char *only, cn_eval_langs *out)
{
    cn_langs langs;
    cn_strv want = CN_STRV_INIT;
    int rc;

    memset(out, 0, sizeof *out);
    memset(&langs, 0, sizeof langs);
    if ((rc = cn_langs_discover(&langs)) < 0) return rc;
    if (only != NULL && cn_strv_split(&want, only, ',') < 0) rc = cn_error_set(CN_ENOMEM, "out of memory");
    for (size_t i = 0; rc == 0 && only != NULL && i < want.len; i++) {
        const cn_lang_entry *e = cn_langs_find(&langs, want.items[i]);
        if (e == NULL || e->reason != NULL || e->extensions.len == 0) {
            cn_eval_langs all;
            char *known;
            memset(&all, 0, sizeof all);
            for (size_t j = 0; j < langs.len; j++)
                if (langs.items[j].reason == NULL && langs.items[j].extensions.len > 0) add_entry(&all, &langs.items[j]);
            known = cn_eval_langs_names(&all);
            rc = cn_error_set(CN_EINVAL, "no language backend named '%s' (known: %s)", want.items[i],
                              known && *known ? known : "none: is the plugin path right?");
            free(known);
            cn_eval_langs_free(&all);
        } else {
            rc = add_entry(out, e);
        }
    }
    if (only != NULL && rc == 0 && want.len == 0) rc = cn_error_set(CN_EINVAL, "--languages names no language");
    for (size_t i = 0; rc == 0 && only == NULL && i < langs.len; i++)
        if (langs.items[i].reason == NULL) rc = add_entry(out, &langs.items[i]);
    if (rc == 0 && out->exts.len == 0)
        rc = cn_error_set(CN_ENOTFOUND, "no language backend found (CODENIB_PLUGINS_PATH, or build the lang-* plugins)");
    cn_strv_free(&want);
    cn_langs_free(&langs);
    if (rc < 0) cn_eval_langs_free(out);
    return rc;
}

/* --------------------------------------------------------------- rule -- */

static bool component_in(const char *s, size_t n, const char *const *words)
{
    for (; *words; words++)
        if (strlen(*words) == n && memcmp(s, *words, n) == 0) return true;
    return false;
}

/* Directories that hold tests, their data, or documentation, whatever the
 * language (Java's src/test/, JavaScript's __tests__/, Go's testdata/, Ruby
 * and JavaScript's spec/, ...). */
static const char *const skipped_dirs[] = {
    "test", "tests", "testing", "__tests__", "__mocks__", "__snapshots__", "__fixtures__", "spec", "specs",
    "testdata", "test_data", "test-data", "testsuite", "e2e", "doc", "docs", "documentation", "man", NULL};

static bool ends_with(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

/* A test file by its name: `stem` is the basename without its extension
 * (`ext`, with the dot). */
static bool is_test_name(const char *base, const char *stem, size_t n, const char *ext)
{
    /* Python: pytest's discovery, as the dataset had it.  Only that:
     * "run_tests.py" or "reporter_for_tests.py" are tools, not tests */
    if (strcasecmp(ext, ".py") == 0)
        return strncmp(base, "test_", 5) == 0 || ends_with(stem, n, "_test") || strcmp(base, "conftest.py") == 0;
    /* Java and Kotlin (JUnit, Surefire and Failsafe's patterns) */
    if (strcasecmp(ext, ".java") == 0 || strcasecmp(ext, ".kt") == 0) {
        if (ends_with(stem, n, "Test") || ends_with(stem, n, "Tests") || ends_with(stem, n, "IT") ||
            ends_with(stem, n, "TestCase"))
            return true;
        if (n > 4 && strncmp(stem, "Test", 4) == 0 && stem[4] >= 'A' && stem[4] <= 'Z') return true;
    }
    /* JavaScript and TypeScript (Jest, Mocha, Vitest): a.test.js, a.spec.ts */
    if (ends_with(stem, n, ".test") || ends_with(stem, n, ".spec")) return true;
    /* everyone else, Go's _test.go and C++'s _unittest.cc included */
    return ends_with(stem, n, "_test") || ends_with(stem, n, "-test") || ends_with(stem, n, "_tests") ||
           ends_with(stem, n, "_unittest");
}

bool cn_eval_is_test_or_doc(const char *path)
{
    const char *base, *p, *slash, *dot;

    if (path == NULL) return true;
    base = strrchr(path, '/');
    base = base ? base + 1 : path;
    for (p = path; p < base; p = slash + 1) {
        slash = strchr(p, '/');
        if (component_in(p, (size_t)(slash - p), skipped_dirs)) return true;
    }
    dot = strrchr(base, '.');
    if (dot == NULL || dot == base) return false;
    return is_test_name(base, base, (size_t)(dot - base), dot);
}

bool cn_eval_is_indexed(const cn_eval_langs *l, const char *path)
{
    const char *base, *dot;
    bool known = false;

    if (l == NULL || path == NULL) return false;
    base = strrchr(path, '/');
    base = base ? base + 1 : path;
    dot = strrchr(base, '.');
    if (dot == NULL || dot == base) return false;
    for (size_t i = 0; i < l->exts.len && !known; i++) known = strcasecmp(l->exts.items[i], dot) == 0;
    if (!known) return false;
    /* declaration stubs (.pyi, .d.ts) repeat an API without its bodies:
     * a second, empty home for every name */
    if (strcasecmp(dot, ".pyi") == 0 || (dot - base > 2 && strncasecmp(dot - 2, ".d.ts", 5) == 0)) return false;
    return !cn_eval_is_test_or_doc(path);
}

bool cn_eval_is_licence(const char *path)
{
    const char *base;

    if (path == NULL) return false;
    base = strrchr(path, '/');
    return cn_is_licence_name(base ? base + 1 : path) && !cn_eval_is_test_or_doc(path);
}
