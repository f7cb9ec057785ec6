/* SPDX-License-Identifier: Apache-2.0 */
/* The offline planner's own signals, checked on a repository written by
 * the test: name matching (cn_pl_name_matches: fields, rarity, prose and
 * short words ignored, nested definitions left out, interactive output
 * weighed down) and literal matching (cn_pl_literal_matches: verbatim
 * text, the longest whole-word prefix of a message that ends in the
 * user's values, --options, test files and over-common text left out),
 * and the file priors against documentation, examples and benchmarks and
 * against files in a language the repository seldom uses, before and after
 * the whole-file fusion (cn_pl_fuse_files), and against code copied in
 * from another project under a licence of its own. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/cn_planner.h"
#include "index/cn_compile.h"
#include "index/cn_index.h"
#include "tap.h"

static char tmpdir[512];

static void write_file(const char *rel, const char *text)
{
    char path[1024], *slash;
    snprintf(path, sizeof path, "%s/repo/%s", tmpdir, rel);
    for (slash = strchr(path + strlen(tmpdir) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        mkdir(path, 0755);
        *slash = '/';
    }
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void write_repo(void)
{
    cn_buf many = CN_BUF_INIT;
    write_file("pkg/__init__.py", "");
    write_file("pkg/printing/latex.py",
               "class LatexPrinter:\n"
               "    def _print_Poly(self, poly):\n"
               "        return 'poly'\n"
               "\n"
               "    def _print_Sum(self, expr):\n"
               "        return 'sum'\n"
               "\n"
               "    def _use_unicode(self):\n"
               "        return False\n");
    write_file("pkg/printing/pretty.py",
               "class PrettyPrinter:\n"
               "    def _print_Sum(self, expr):\n"
               "        return 'sum'\n"
               "\n"
               "    def _print_Product(self, expr):\n"
               "        return 'product'\n"
               "\n"
               "    def _print_DotProduct(self, expr):\n"
               "        return 'dot'\n");
    write_file("pkg/options.py",
               "class OptionError(Exception):\n"
               "    pass\n"
               "\n"
               "\n"
               "def build_options(domain):\n"
               "    if domain is None:\n"
               "        raise OptionError('expected a valid domain specification, got %s' % domain)\n"
               "    return domain\n"
               "\n"
               "\n"
               "def add_options(parser):\n"
               "    parser.addoption('--collect-only', action='store_true')\n"
               "\n"
               "\n"
               "def the_call_would_fail():\n"
               "    return None\n"
               "\n"
               "\n"
               "def get_x_df():\n"
               "    return 42\n"
               "\n"
               "\n"
               "def outer():\n"
               "    def helper_frobnicate():\n"
               "        return 1\n"
               "    return helper_frobnicate()\n");
    write_file("tests/test_options.py",
               "def test_message():\n"
               "    assert 'expected a valid domain specification, got x'\n");
    for (int i = 0; i < 45; i++)
        cn_buf_printf(&many, "def common_%d():\n    return 'shared boilerplate text'\n\n\n", i);
    write_file("pkg/many.py", many.data);
    /* one JavaScript file beside five Python ones: a minority language */
    write_file("tools/gen_table.js", "function genTable(rows) {\n  return rows.join('|');\n}\n");
    /* a licence at the root; a copied-in library with a licence of its
     * own; a crate that carries the root's licence again */
    write_file("LICENSE", "Apache License 2.0\n");
    write_file("pkg/decnum/ICU-license.html", "<html>ICU License</html>\n");
    write_file("pkg/decnum/num.py", "def dec_add(a, b):\n    return a\n");
    write_file("crate/LICENSE", "Apache License 2.0\n");
    write_file("crate/lib.py", "def crate_entry():\n    return 1\n");
    cn_buf_free(&many);
}

static struct cn_index *compile_repo(void)
{
    char repo[600], cache[600];
    cn_compile_opts co;
    cn_compile_result cr;
    struct cn_index *idx = NULL;

    snprintf(repo, sizeof repo, "%s/repo", tmpdir);
    snprintf(cache, sizeof cache, "%s/cache", tmpdir);
    memset(&co, 0, sizeof co);
    co.repo = repo;
    co.cache_dir = cache;
    co.threads = 1;
    if (cn_compile(&co, &cr) < 0) {
        diag("compile: %s", cn_error_last()->message);
        return NULL;
    }
    cn_compile_result_free(&cr);
    if (cn_index_open_repo(repo, cache, &idx) < 0) diag("open: %s", cn_error_last()->message);
    return idx;
}

static const char *hit_name(json_object *hits, size_t i)
{
    json_object *h = json_object_array_get_idx(hits, i), *v = NULL;
    return h && json_object_object_get_ex(h, "node_name", &v) ? json_object_get_string(v) : NULL;
}

static long long hit_int(json_object *hits, size_t i, const char *key)
{
    json_object *h = json_object_array_get_idx(hits, i), *v = NULL;
    return h && json_object_object_get_ex(h, key, &v) ? (long long)json_object_get_int64(v) : -1;
}

static bool has_hit(json_object *hits, const char *name)
{
    for (size_t i = 0; i < json_object_array_length(hits); i++)
        if (strcmp(hit_name(hits, i), name) == 0) return true;
    return false;
}

static bool any_hit_with(json_object *hits, const char *part)
{
    for (size_t i = 0; i < json_object_array_length(hits); i++)
        if (strstr(hit_name(hits, i), part) != NULL) return true;
    return false;
}

static json_object *names(struct cn_index *idx, const char *q)
{
    json_object *hits = NULL;
    if (cn_pl_name_matches(idx, q, 20, &hits) < 0) diag("names: %s", cn_error_last()->message);
    return hits;
}

static json_object *literals(struct cn_index *idx, const char *q, const char *error, cn_strv *used)
{
    cn_strv errors = CN_STRV_INIT;
    json_object *hits = NULL;
    if (error) cn_strv_push(&errors, error);
    if (cn_pl_literal_matches(idx, q, &errors, 20, &hits, used) < 0) diag("literals: %s", cn_error_last()->message);
    cn_strv_free(&errors);
    return hits;
}

static void test_names(struct cn_index *idx)
{
    json_object *h;

    h = names(idx, "LaTeX printer prints a Poly with the wrong order");
    is_str(hit_name(h, 0), "pkg/printing/latex.py:LatexPrinter._print_Poly",
           "names: the method whose name and class carry the question comes first");
    ok(hit_int(h, 0, "start_line") == 2 && hit_int(h, 0, "end_line") == 3,
       "names: hits count lines from 1, as the retrieval skills' do");
    json_object_put(h);

    h = names(idx, "Product pretty print could be improved");
    is_str(hit_name(h, 0), "pkg/printing/pretty.py:PrettyPrinter._print_Product",
           "names: all of a name explained beats a longer name half explained");
    ok(has_hit(h, "pkg/printing/pretty.py:PrettyPrinter._print_DotProduct"), "names: the partial match still ranks");
    json_object_put(h);

    h = names(idx, "the and should would which there");
    ok(h != NULL && json_object_array_length(h) == 0, "names: English function words match nothing");
    json_object_put(h);

    h = names(idx, "x y 42 df");
    ok(h != NULL && json_object_array_length(h) == 0, "names: short words and numbers match nothing");
    json_object_put(h);

    h = names(idx, "helper frobnicate is slow");
    ok(h != NULL && !any_hit_with(h, "helper_frobnicate"), "names: a function nested in another is no candidate");
    json_object_put(h);

    h = names(idx, "shared boilerplate test message");
    ok(h != NULL && !any_hit_with(h, "tests/"), "names: test files are left out");
    json_object_put(h);

    /* a session's output names nothing: "Sum" printed by the session
     * weighs less than "Poly" in the code the user ran */
    h = names(idx, "Printing is wrong\n```\n>>> latex(Poly(x))\nSum Sum Sum\n```\n");
    is_str(hit_name(h, 0), "pkg/printing/latex.py:LatexPrinter._print_Poly",
           "names: interactive output weighs less than the code typed");
    json_object_put(h);
}

static void test_literals(struct cn_index *idx)
{
    cn_strv used = CN_STRV_INIT;
    json_object *h;

    h = literals(idx, "OptionError raised", "expected a valid domain specification, got RR[y,z]", &used);
    ok(hit_int(h, 0, "start_line") == 5 && hit_int(h, 0, "end_line") == 8,
       "literals: hits count lines from 1 too");
    is_str(hit_name(h, 0), "pkg/options.py:build_options",
           "literals: a message ending in the user's values is found by its prefix");
    ok(json_object_array_length(h) == 1, "literals: only the source holds it (the test file is left out)");
    is_str(used.len ? used.items[0] : NULL, "expected a valid domain specification, got",
           "literals: the prefix used ends at a whole word");
    json_object_put(h);
    cn_strv_free(&used);

    h = literals(idx, "`--collect-only` needs a one char shortcut", NULL, NULL);
    is_str(hit_name(h, 0), "pkg/options.py:add_options", "literals: a quoted --option is found verbatim");
    json_object_put(h);

    h = literals(idx, "pytest --collect-only is long to type", NULL, NULL);
    is_str(hit_name(h, 0), "pkg/options.py:add_options", "literals: an --option in prose too");
    json_object_put(h);

    h = literals(idx, "`no_such.thing[0]` and `other-missing-text`", "nothing like this appears anywhere", NULL);
    ok(h != NULL && json_object_array_length(h) == 0, "literals: text found nowhere gives no hits");
    json_object_put(h);

    h = literals(idx, "`shared boilerplate text` is everywhere", NULL, NULL);
    ok(h != NULL && json_object_array_length(h) == 0, "literals: text held by more than 40 symbols says nothing");
    json_object_put(h);

    h = literals(idx, "plain words only", NULL, NULL);
    ok(h != NULL && json_object_array_length(h) == 0, "literals: no quoted text, no hits");
    json_object_put(h);
}

static json_object *hit(const char *name, const char *file)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "node_name", json_object_new_string(name));
    json_object_object_add(o, "file", json_object_new_string(file));
    json_object_object_add(o, "type", json_object_new_string("function"));
    return o;
}

static const char *file_at(json_object *files, size_t i)
{
    json_object *f = json_object_array_get_idx(files, i), *p = NULL;
    return json_object_object_get_ex(f, "path", &p) ? json_object_get_string(p) : NULL;
}

/* Files under documentation, examples and benchmarks rank below code that
 * scores a little less, unless the question names them. */
static void test_aside(void)
{
    cn_pl_pool pool;
    json_object *hits = json_object_new_array(), *files;
    cn_strv paths = CN_STRV_INIT;
    size_t *order;

    ok(cn_pl_path_is_aside("doc/tutorial/example.py") && cn_pl_path_is_aside("pkg/examples/demo.py") &&
           cn_pl_path_is_aside("asv_bench/benchmarks/io.py") && cn_pl_path_is_aside("docs/conf.py"),
       "aside: doc/, examples/, benchmark trees at any depth");
    ok(!cn_pl_path_is_aside("pkg/doc.py") && !cn_pl_path_is_aside("pkg/docstring/parse.py") &&
           !cn_pl_path_is_aside("docs") && !cn_pl_path_is_aside("sphinx/ext/doctest.py"),
       "aside: not a file named so, nor a directory that only starts so");
    cn_pl_pool_init(&pool);
    json_object_array_add(hits, hit("doc/demo.py:show_units", "doc/demo.py"));
    json_object_array_add(hits, hit("pkg/format.py:format_units", "pkg/format.py"));
    cn_pl_fuse_list(&pool, hits, 1.0, "test");
    cn_pl_score(&pool, NULL, NULL);
    order = cn_pl_order(&pool);
    files = cn_pl_rank_files(&pool, order, NULL, 0);
    is_str(file_at(files, 0), "doc/demo.py", "aside: without the prior the better hit ranks first");
    json_object_put(files);
    files = cn_pl_rank_files(&pool, order, NULL, 1);
    is_str(file_at(files, 0), "pkg/format.py", "aside: with it, the code ranks above the documentation");
    json_object_put(files);
    cn_strv_push(&paths, "doc/demo.py");
    files = cn_pl_rank_files(&pool, order, &paths, 1);
    is_str(file_at(files, 0), "doc/demo.py", "aside: a file the question names is not demoted");
    json_object_put(files);
    cn_strv_free(&paths);
    free(order);
    json_object_put(hits);
    cn_pl_pool_free(&pool);
}

static json_object *file_entry(const char *path, double score)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "path", json_object_new_string(path));
    json_object_object_add(o, "score", json_object_new_double(score));
    json_object_object_add(o, "why", json_object_new_array());
    return o;
}

/* Two files ranked a, b by the nodes and a, b by whole-file BM25 too;
 * returns the first path after cn_pl_fuse_files with `o`. */
static char *fused_first(const char *a, const char *b, const cn_pl_fuse_opts *o)
{
    json_object *files = json_object_new_array();
    cn_strv whole = CN_STRV_INIT;
    char *first;
    json_object_array_add(files, file_entry(a, 2.0));
    json_object_array_add(files, file_entry(b, 1.9));
    cn_strv_push(&whole, a);
    cn_strv_push(&whole, b);
    if (cn_pl_fuse_files(files, &whole, o) < 0) diag("fuse: %s", cn_error_last()->message);
    first = cn_strdup(file_at(files, 0));
    cn_strv_free(&whole);
    json_object_put(files);
    return first;
}

static void fused_first_is(const char *a, const char *b, const cn_pl_fuse_opts *o, const char *want,
                           const char *name)
{
    char *s = fused_first(a, b, o);
    is_str(s, want, name);
    free(s);
}

static void test_vendored(struct cn_index *idx)
{
    char repo[600], link[700], target[700];
    cn_strv rl = CN_STRV_INIT;
    cn_pl_fuse_opts o = {0};
    int rootfd;

    snprintf(repo, sizeof repo, "%s/repo", tmpdir);
    snprintf(link, sizeof link, "%s/linked", repo);
    snprintf(target, sizeof target, "%s/pkg/decnum", repo);
    if (symlink(target, link) != 0) diag("symlink failed");
    rootfd = open(repo, O_RDONLY | O_DIRECTORY);
    cn_pl_root_licences(rootfd, &rl);
    ok(rl.len == 1 && strcmp(rl.items[0], "license") == 0, "vendored: the root's licence files, lowercased");
    ok(cn_pl_file_is_vendored(rootfd, "pkg/decnum/num.py", &rl) == 1,
       "vendored: a file under a directory with a licence of its own");
    ok(cn_pl_file_is_vendored(rootfd, "pkg/options.py", &rl) == 0 && cn_pl_file_is_vendored(rootfd, "LICENSE", &rl) == 0,
       "vendored: not the project's own files");
    ok(cn_pl_file_is_vendored(rootfd, "crate/lib.py", &rl) == 0,
       "vendored: not a crate that carries the root's licence again");
    ok(cn_pl_file_is_vendored(rootfd, "linked/num.py", &rl) == 0, "vendored: no symbolic link is followed");
    close(rootfd);
    cn_strv_free(&rl);

    o.repo_root = idx->repo_root;
    fused_first_is("pkg/decnum/num.py", "pkg/options.py", &o, "pkg/decnum/num.py",
                   "fusion: with the check off the vendored file stays first");
    o.vendored = 1;
    fused_first_is("pkg/decnum/num.py", "pkg/options.py", &o, "pkg/options.py",
                   "fusion: the vendored file drops below the project's own");
}

static void test_fuse_priors(struct cn_index *idx)
{
    cn_strv named = CN_STRV_INIT;
    cn_pl_fuse_opts o = {0};

    ok(cn_pl_language_minor(idx->nodes, "tools/gen_table.js") == 1, "minority: one JavaScript file of eight is minor");
    ok(cn_pl_language_minor(idx->nodes, "pkg/options.py") == 0, "minority: the Python files are not");
    ok(cn_pl_language_minor(idx->nodes, "pkg/absent.c") == 0 && cn_pl_language_minor(NULL, "pkg/options.py") == 0,
       "minority: a path the index lacks, or no index, is not minor");

    fused_first_is("tools/gen_table.js", "pkg/options.py", &o, "tools/gen_table.js",
                   "fusion: with no prior the better file stays first");
    o.nodes = idx->nodes;
    fused_first_is("tools/gen_table.js", "pkg/options.py", &o, "pkg/options.py",
                   "fusion: the minority-language file drops below the Python one");
    cn_strv_push(&named, "gen_table.js");
    o.named = &named;
    fused_first_is("tools/gen_table.js", "pkg/options.py", &o, "tools/gen_table.js",
                   "fusion: not when the question names it");

    memset(&o, 0, sizeof o);
    fused_first_is("doc/demo.py", "pkg/format.py", &o, "doc/demo.py",
                   "fusion: without the aside prior whole-file BM25 keeps the documentation first");
    o.demote_aside = 1;
    fused_first_is("doc/demo.py", "pkg/format.py", &o, "pkg/format.py",
                   "fusion: with it, the code ranks above the documentation after the fusion too");
    o.named = &named;
    cn_strv_push(&named, "doc/demo.py");
    fused_first_is("doc/demo.py", "pkg/format.py", &o, "doc/demo.py",
                   "fusion: a named aside file is not demoted");
    cn_strv_free(&named);
}

int main(void)
{
    const char *base = getenv("TMPDIR");
    struct cn_index *idx;
    char cmd[600];

    snprintf(tmpdir, sizeof tmpdir, "%s/cn_plsig_XXXXXX", base && *base ? base : "/tmp");
    if (mkdtemp(tmpdir) == NULL) {
        printf("Bail out! mkdtemp failed\n");
        return 1;
    }
    test_aside();
    write_repo();
    idx = compile_repo();
    ok(idx != NULL, "the test repository compiles");
    if (idx != NULL) {
        test_names(idx);
        test_literals(idx);
        test_fuse_priors(idx);
        test_vendored(idx);
        cn_index_close(idx);
    }
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) diag("could not remove %s", tmpdir);
    return tap_done();
}
