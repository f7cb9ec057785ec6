/* SPDX-License-Identifier: Apache-2.0 */
/* The offline planner end to end: the fixture repositories of
 * tests/fixtures/planner compiled in process with the real Python backend,
 * the build tree's skills, fixed questions, and the rendered contract
 * compared exactly with <name>.expected; then the degraded runs (no graph,
 * lsp_route not allowed, no retrieval at all, an empty question). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/cn_planner.h"
#include "index/cn_compile.h"
#include "tap.h"

static char tmpdir[512];

static const char *const q_bugreport =
    "apply_discount returns a negative total when the coupon is bigger than the cart subtotal; "
    "checkout should never charge less than zero.";
static const char *const q_traceback =
    "Loading a CSV fails:\n"
    "Traceback (most recent call last):\n"
    "  File \"etl/loader.py\", line 5, in load\n"
    "    rows = read_rows(path)\n"
    "  File \"etl/reader.py\", line 12, in read_rows\n"
    "    return [parse_line(line) for line in handle]\n"
    "  File \"etl/reader.py\", line 6, in parse_line\n"
    "    raise ValueError(\"missing delimiter in row\")\n"
    "ValueError: missing delimiter in row\n";
static const char *const q_behaviour =
    "When notes are exported to markdown the tags of each note are missing from the output.";

static char *fixture_path(const char *name, const char *suffix)
{
    const char *src = getenv("CN_SRCDIR");
    cn_buf b = CN_BUF_INIT;
    cn_buf_printf(&b, "%s/tests/fixtures/planner/%s%s", src ? src : ".", name, suffix);
    return cn_buf_steal(&b);
}

/* Compiles a fixture into its own cache (`index`: NULL for the default
 * indexes, else a list such as "bm25" or "bm25,graph,vector") and returns a registry
 * over it with the build tree's skills. */
static cn_registry *open_fixture(const char *name, const char *index)
{
    const char *build = getenv("CN_BUILDDIR");
    char *repo = fixture_path(name, ""), *skills, cache[700];
    cn_compile_opts co;
    cn_compile_result cr;
    cn_registry *reg = NULL;
    int rc;

    static int serial = 0;   /* a cache per call: two compiles never share one */
    snprintf(cache, sizeof cache, "%s/%s-%d", tmpdir, name, ++serial);
    memset(&co, 0, sizeof co);
    co.repo = repo;
    co.cache_dir = cache;
    co.threads = 1;
    if (index != NULL) cn_strv_split(&co.indexes, index, ',');
    rc = cn_compile(&co, &cr);
    cn_strv_free(&co.indexes);
    if (rc < 0) {
        diag("compile %s: %s", name, cn_error_last()->message);
        free(repo);
        return NULL;
    }
    cn_compile_result_free(&cr);
    skills = cn_path_join(build && *build ? build : ".", "_skills");
    rc = cn_registry_new(&reg);
    if (rc == 0) rc = cn_registry_add_root(reg, skills, "build");
    if (rc == 0) rc = cn_registry_set_repo_cache(reg, repo, cache);
    if (rc < 0) {
        diag("registry: %s", cn_error_last()->message);
        cn_registry_free(reg);
        reg = NULL;
    }
    free(skills);
    free(repo);
    return reg;
}

/* The status of the first step of `skill`, or "absent". */
static const char *step_status(const cn_plan *p, const char *skill)
{
    for (size_t i = 0; p->steps && i < json_object_array_length(p->steps); i++) {
        json_object *s = json_object_array_get_idx(p->steps, i), *v;
        if (json_object_object_get_ex(s, "skill", &v) && strcmp(json_object_get_string(v), skill) == 0 &&
            json_object_object_get_ex(s, "status", &v))
            return json_object_get_string(v);
    }
    return "absent";
}

static void check_expected(const char *name, const char *question)
{
    cn_registry *reg = open_fixture(name, NULL);
    char *want = NULL, *got = NULL, *path = fixture_path(name, ".expected"), what[160];
    cn_plan plan;
    int rc;

    snprintf(what, sizeof what, "%s: the planner answers", name);
    if (!ok(reg != NULL, "fixture compiled and registry ready")) {
        free(path);
        return;
    }
    rc = cn_planner_run(reg, question, NULL, &plan);
    if (!ok(rc == 0, what)) diag("%s", cn_error_last()->message);
    if (rc == 0) {
        got = cn_contract_render(&plan.contract);
        if (getenv("CN_PLANNER_SHOW")) {
            diag("%s", plan.answer);
            diag("%s", json_object_to_json_string(plan.files));
            diag("%s", json_object_to_json_string(plan.steps));
        }
        cn_file_read(path, 0, &want, NULL);
        if (want != NULL && strlen(want) > 0 && want[strlen(want) - 1] == '\n') want[strlen(want) - 1] = '\0';
        snprintf(what, sizeof what, "%s: the contract is exactly %s.expected", name, name);
        is_str(got, want, what);
        snprintf(what, sizeof what, "%s: no nested function in Symbols (folded into the outermost)", name);
        ok(got && strstr(got, "tag_line") == NULL && strstr(got, "export_markdown.") == NULL, what);
        snprintf(what, sizeof what, "%s: the answer ends with the contract", name);
        ok(plan.answer && got && strstr(plan.answer, got) != NULL &&
               strncmp(plan.answer + strlen(plan.answer) - strlen(got) - 1, got, strlen(got)) == 0,
           what);
        {
            cn_contract back;
            char *again = NULL;
            if (cn_contract_parse(plan.answer, &back) == 0) again = cn_contract_render(&back);
            snprintf(what, sizeof what, "%s: parsing the answer gives the same contract", name);
            is_str(again, got, what);
            free(again);
            cn_contract_free(&back);
        }
        snprintf(what, sizeof what, "%s: evidence cites path:start-end", name);
        has_str(plan.answer, "Evidence:\n- ", what);
        snprintf(what, sizeof what, "%s: bm25_search ran", name);
        is_str(step_status(&plan, "bm25_search"), "ok", what);
        snprintf(what, sizeof what, "%s: ranked files and symbols as JSON", name);
        ok(json_object_array_length(plan.files) >= plan.contract.files.len &&
               json_object_array_length(plan.symbols) == plan.contract.symbols.len,
           what);
    }
    cn_plan_free(&plan);
    free(got);
    free(want);
    free(path);
    cn_registry_free(reg);
}

/* Compiled with BM25 only: lsp_route and the graph skills fail (recorded),
 * BM25 still answers and the named function still comes first. */
static void check_no_graph(void)
{
    cn_registry *reg = open_fixture("bugreport", "bm25");
    cn_plan plan;
    int rc;
    if (!ok(reg != NULL, "bm25-only fixture ready")) return;
    rc = cn_planner_run(reg, q_bugreport, NULL, &plan);
    if (!ok(rc == 0, "no graph: the planner still answers")) diag("%s", cn_error_last()->message);
    is_str(step_status(&plan, "lsp_route"), "failed", "no graph: lsp_route failed and was recorded");
    is_str(step_status(&plan, "find_callers"), "failed", "no graph: find_callers failed and was recorded");
    is_str(step_status(&plan, "bm25_search"), "ok", "no graph: bm25_search ran");
    if (rc == 0 && plan.contract.symbols.len > 0) {
        is_str(plan.contract.files.items[0], "shop/pricing.py", "no graph: pricing.py is the first file");
        is_str(plan.contract.symbols.items[0], "shop/pricing.py:apply_discount",
               "no graph: apply_discount is the first symbol");
    } else {
        ok(0, "no graph: symbols found");
    }
    cn_plan_free(&plan);
    cn_registry_free(reg);
}

static void check_allow(void)
{
    static const char *const no_route[] = {"bm25_search", "find_callers", "find_callees"};
    static const char *const nothing[] = {"find_callers"};
    cn_registry *reg = open_fixture("bugreport", NULL);
    cn_plan plan;
    int rc;

    if (!ok(reg != NULL, "fixture ready for allow sets")) return;
    cn_registry_set_allow(reg, no_route, 3);
    rc = cn_planner_run(reg, q_bugreport, NULL, &plan);
    ok(rc == 0, "without lsp_route: the planner answers");
    is_str(step_status(&plan, "lsp_route"), "skipped", "without lsp_route: the route is skipped");
    ok(rc == 0 && plan.contract.symbols.len > 0 &&
           strcmp(plan.contract.symbols.items[0], "shop/pricing.py:apply_discount") == 0,
       "without lsp_route: apply_discount still comes first (its name matches the seed)");
    cn_plan_free(&plan);

    cn_registry_set_allow(reg, nothing, 1);
    rc = cn_planner_run(reg, q_bugreport, NULL, &plan);
    is_int(rc, CN_ENOTFOUND, "no retrieval skill allowed: a clear error");
    has_str(cn_error_last()->message, "no retrieval skill could run", "the message says so");
    has_str(cn_error_last()->message, "bm25_search: the skill is not allowed", "and why, per skill");
    ok(plan.steps != NULL && json_object_array_length(plan.steps) >= 2, "the steps still say what was tried");
    cn_plan_free(&plan);

    rc = cn_planner_run(reg, "  \n", NULL, &plan);
    is_int(rc, CN_EINVAL, "an empty question is refused");
    has_str(cn_error_last()->message, "the question is empty", "with a message that says so");
    cn_plan_free(&plan);
    {
        cn_planner_options o;
        cn_planner_options_init(&o);
        is_int(o.max_files * 100 + o.max_symbols, 510, "default limits: 5 files, 10 symbols");
        o.candidates = 0;
        is_int(cn_planner_run(reg, q_bugreport, &o, &plan), CN_EINVAL, "zero candidates is refused");
        cn_plan_free(&plan);
    }
    cn_registry_free(reg);
}

/* With a vector index hybrid_search joins the retrieval (auto), and
 * use_vectors 0 leaves it out. */
static void check_vectors(void)
{
    cn_registry *reg = open_fixture("behaviour", "bm25,graph,vector");
    cn_planner_options o;
    cn_plan plan;
    if (!ok(reg != NULL, "behaviour fixture with vectors ready")) return;
    ok(cn_planner_run(reg, q_behaviour, NULL, &plan) == 0, "vectors: the planner answers");
    is_str(step_status(&plan, "hybrid_search"), "ok", "vectors: hybrid_search ran (auto)");
    ok(plan.contract.files.len > 0 && strcmp(plan.contract.files.items[0], "notes/export.py") == 0,
       "vectors: export.py is still the first file");
    cn_plan_free(&plan);
    cn_planner_options_init(&o);
    o.use_vectors = 0;
    ok(cn_planner_run(reg, q_behaviour, &o, &plan) == 0, "use_vectors 0: the planner answers");
    is_str(step_status(&plan, "hybrid_search"), "absent", "use_vectors 0: no hybrid_search");
    is_str(step_status(&plan, "lsp_route"), "absent", "no identifiers in the question: no route call");
    cn_plan_free(&plan);
    {
        cn_strv seeds = CN_STRV_INIT;
        cn_strv_push(&seeds, "NoteStore.delete");
        o.seeds = &seeds;
        ok(cn_planner_run(reg, q_behaviour, &o, &plan) == 0, "explicit seed: the planner answers");
        is_str(step_status(&plan, "lsp_route"), "ok", "explicit seed: the route ran");
        ok(plan.contract.symbols.len > 0 &&
               strcmp(plan.contract.symbols.items[0], "notes/storage.py:NoteStore.delete") == 0,
           "explicit seed: its symbol comes first");
        cn_plan_free(&plan);
        cn_strv_free(&seeds);
    }
    cn_registry_free(reg);
}

static void check_limits(void)
{
    cn_registry *reg = open_fixture("traceback", NULL);
    cn_planner_options o;
    cn_plan plan;
    char *text;
    if (!ok(reg != NULL, "traceback fixture ready for limits")) return;
    cn_planner_options_init(&o);
    o.max_files = 1;
    o.max_symbols = 2;
    o.max_locations = 1;
    ok(cn_planner_run(reg, q_traceback, &o, &plan) == 0, "limits: the planner answers");
    is_int(plan.contract.files.len, 1, "limits: one file");
    is_int(plan.contract.symbols.len, 2, "limits: two symbols");
    is_int(plan.contract.n_locations, 1, "limits: one location");
    text = cn_contract_render(&plan.contract);
    has_str(text, "Files: etl/reader.py\n", "limits: the file of the failing frame");
    free(text);
    cn_plan_free(&plan);
    cn_registry_free(reg);
}

int main(void)
{
    const char *build = getenv("CN_BUILDDIR");
    char so[1024], *base;
    snprintf(so, sizeof so, "%s/_plugins/lang-python/lang_python.so", build && *build ? build : ".");
    if (access(so, R_OK) != 0) {
        printf("1..0 # SKIP the python backend is not built\n");
        return 0;
    }
    snprintf(tmpdir, sizeof tmpdir, "/tmp/cn-planner-XXXXXX");
    if ((base = mkdtemp(tmpdir)) == NULL) {
        printf("1..0 # SKIP cannot create a temporary directory\n");
        return 0;
    }
    check_expected("bugreport", q_bugreport);
    check_expected("traceback", q_traceback);
    check_expected("behaviour", q_behaviour);
    check_no_graph();
    check_allow();
    check_limits();
    check_vectors();
    {
        cn_buf b = CN_BUF_INIT;
        char *cmd;
        cn_buf_printf(&b, "rm -rf '%s'", tmpdir);
        cmd = cn_buf_steal(&b);
        if (system(cmd) != 0) diag("could not remove %s", tmpdir);
        free(cmd);
    }
    return tap_done();
}
