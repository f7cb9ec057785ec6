/* SPDX-License-Identifier: Apache-2.0 */
/* `codenib eval` scoring: the published dev-set numbers of the reference
 * scorer reproduced exactly, every metric checked against hand-computed
 * values on a small dataset (duplicates, empty levels, missing and
 * replaced predictions), the loaders' errors with file:line, the
 * truncated-last-row rule, and the report files. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "eval/cn_eval.h"
#include "eval/cn_eval_run.h"
#include "util/cn_util.h"
#include "tap.h"

static char tmpdir[64];

static char *tmp_path(const char *name)
{
    return cn_path_join(tmpdir, name);
}

static char *write_tmp(const char *name, const char *text)
{
    char *p = tmp_path(name);
    FILE *f = fopen(p, "wb");
    if (f == NULL) {
        free(p);
        return NULL;
    }
    fputs(text, f);
    fclose(f);
    return p;
}

static char *fixture(const char *name)
{
    const char *src = getenv("CN_SRCDIR");
    cn_buf b = CN_BUF_INIT;
    cn_buf_printf(&b, "%s/tests/fixtures/eval/%s", src ? src : ".", name);
    return cn_buf_steal(&b);
}

/* o["a"]["b"]... for the path "a.b..." as a double, NAN when absent or
 * null.  Repository names keep their slash: "per_repo.owner/name.instances". */
static double num(json_object *o, const char *path)
{
    char buf[256], *save = NULL, *part;

    snprintf(buf, sizeof buf, "%s", path);
    for (part = strtok_r(buf, ".", &save); part && o; part = strtok_r(NULL, ".", &save))
        if (!json_object_object_get_ex(o, part, &o)) return NAN;
    if (o == NULL || part != NULL) return NAN;
    return json_object_get_double(o);
}

static int near_(double got, double want, const char *file, int line, const char *what)
{
    int cond = fabs(got - want) < 1e-12;
    tap_ok_(cond, file, line, what);
    if (!cond) printf("#   got:  %.15g\n#   want: %.15g\n", got, want);
    return cond;
}
#define is_near(got, want, what) near_((got), (want), __FILE__, __LINE__, (what))

static char *fmt4(double v)
{
    static char buf[32];
    snprintf(buf, sizeof buf, "%.4f", v);
    return buf;
}

/* ---- 1. the dev set against the published numbers ---------------------- */

static json_object *dev_metrics;

static void test_dev_set(void)
{
    static const struct {
        const char *path, *want;
    } acc[] = {{"overall.file.acc.1", "0.8000"},     {"overall.file.acc.3", "0.9231"},
               {"overall.file.acc.5", "0.9231"},     {"overall.module.acc.5", "0.7846"},
               {"overall.module.acc.10", "0.8154"}, {"overall.function.acc.5", "0.6923"},
               {"overall.function.acc.10", "0.7385"}};
    char *gold = fixture("dev_gold.jsonl"), *pred = fixture("ref_locagent_claude35_dev.jsonl");
    cn_eval_dataset d;
    cn_eval_preds p;
    bool truncated = true;
    json_object *per_repo;
    long long sum = 0;

    cn_eval_preds_init(&p);
    if (!ok(cn_eval_dataset_load(gold, &d) == 0, "dev gold loads")) diag("%s", cn_error_last()->message);
    if (!ok(cn_eval_preds_load(pred, false, &p, &truncated) == 0, "reference predictions load"))
        diag("%s", cn_error_last()->message);
    ok(!truncated, "reference predictions are complete");
    is_int(d.len, 65, "65 dev instances");
    is_int(p.len, 65, "65 predictions");
    ok(cn_eval_score(&d, &p, &dev_metrics) == 0, "dev set scores");
    for (size_t i = 0; i < sizeof acc / sizeof acc[0]; i++) is_str(fmt4(num(dev_metrics, acc[i].path)), acc[i].want, acc[i].path);
    is_int(num(dev_metrics, "overall.file.n"), 65, "file n = 65");
    is_int(num(dev_metrics, "overall.module.n"), 65, "module n = 65");
    is_int(num(dev_metrics, "overall.function.n"), 65, "function n = 65");
    is_int(num(dev_metrics, "instances"), 65, "instances = 65");
    is_int(num(dev_metrics, "predicted"), 65, "predicted = 65");
    is_int(num(dev_metrics, "per_repo.sympy/sympy.instances"), 33, "sympy/sympy has 33 instances");
    is_int(num(dev_metrics, "per_repo.pytest-dev/pytest.instances"), 8, "pytest-dev/pytest has 8");
    is_int(num(dev_metrics, "per_repo.sphinx-doc/sphinx.instances"), 8, "sphinx-doc/sphinx has 8");
    per_repo = json_object_object_get(dev_metrics, "per_repo");
    if (per_repo) {
        json_object_object_foreach(per_repo, key, val)
        {
            (void)key;
            sum += (long long)num(val, "instances");
        }
    }
    is_int(sum, 65, "per-repository instance counts add up to 65");
    cn_eval_preds_free(&p);
    cn_eval_dataset_free(&d);
    free(gold);
    free(pred);
}

/* ---- 2. every metric by hand ------------------------------------------- */

/* Three instances:
 *   acme__widget-1 (repo from the id): files a.py, b.py; entities a.py:A.f,
 *     a.py:A.g, a.py:h, so modules a.py:A, a.py:h
 *   acme__widget-2: file c.py only (no entities: left out of module and
 *     function)
 *   other__lib-7 (repo given): x.py, x.py:k; no prediction */
static const char *hand_gold =
    "{\"instance_id\": \"acme__widget-1\", \"gt_file_changes\": ["
    "{\"file\": \"a.py\", \"changes\": {\"edited_entities\": [\"a.py:A.f\", \"a.py:A.g\", \"a.py:h\"]}},"
    "{\"file\": \"b.py\", \"changes\": {\"edited_entities\": []}}]}\n"
    "\n"
    "{\"instance_id\": \"acme__widget-2\", \"problem_statement\": \"c breaks\", \"base_commit\": \"abc\","
    " \"gt_file_changes\": [{\"file\": \"c.py\", \"changes\": {}}]}\n"
    "{\"instance_id\": \"other__lib-7\", \"repo\": \"other/lib\", \"gt_file_changes\": ["
    "{\"file\": \"x.py\", \"changes\": {\"edited_entities\": [\"x.py:k\"]}}]}\n";

/* The second row for acme__widget-2 replaces the first; ghost-1 is not in
 * the dataset. */
static const char *hand_pred =
    "{\"instance_id\": \"acme__widget-1\","
    " \"found_files\": [\"b.py\", \"z.py\", \"b.py\", \"a.py\", \"q.py\", \"a.py\"],"
    " \"found_modules\": [\"a.py:A\", \"a.py:A\", \"z.py:Z\", \"a.py:h\"],"
    " \"found_entities\": [\"a.py:A.g\", \"zz\", \"a.py:A.g\", \"a.py:h\", \"y\", \"a.py:A.f\"]}\n"
    "{\"instance_id\": \"acme__widget-2\", \"found_files\": [\"c.py\"]}\n"
    "{\"instance_id\": \"ghost-1\", \"found_files\": [\"a.py\"]}\n"
    "{\"instance_id\": \"acme__widget-2\", \"found_files\": [\"d.py\", \"c.py\"],"
    " \"found_modules\": [\"c.py:M\"], \"found_entities\": null}\n";

static double r(int i) /* 1 / log2(i + 2): the discount of rank i (0-based) */
{
    return 1.0 / log2((double)i + 2.0);
}

static void check_gold(const cn_eval_dataset *d)
{
    const cn_eval_instance *a = &d->items[0], *b = &d->items[1], *c = &d->items[2];

    is_int(d->len, 3, "three instances (blank line skipped)");
    is_str(a->repo, "acme/widget", "repo derived from the instance id");
    is_str(c->repo, "other/lib", "repo taken from the row");
    ok(a->base_commit == NULL && a->problem_statement == NULL, "absent base_commit/problem_statement are NULL");
    is_str(b->problem_statement, "c breaks", "problem_statement kept");
    is_str(b->base_commit, "abc", "base_commit kept");
    is_int(a->gold[CN_EVAL_FILE].len, 2, "two gold files");
    is_str(a->gold[CN_EVAL_FILE].items[1], "b.py", "gold files in order");
    is_int(a->gold[CN_EVAL_MODULE].len, 2, "modules deduplicated");
    is_str(a->gold[CN_EVAL_MODULE].items[0], "a.py:A", "module of a.py:A.f");
    is_str(a->gold[CN_EVAL_MODULE].items[1], "a.py:h", "module of a.py:h");
    is_int(a->gold[CN_EVAL_FUNCTION].len, 3, "three gold entities");
    is_int(b->gold[CN_EVAL_MODULE].len + b->gold[CN_EVAL_FUNCTION].len, 0, "no entities, no modules");
}

static void check_file_level(json_object *m)
{
    /* instance 1, p[:5] = b z b a q against {a, b}:
     *   k=1: rel 1 = min(2,1): hit; k=3: b counted twice, rel 2: hit;
     *   k=5: rel 3 != 2: miss (the reference's rule, duplicates included).
     * instance 2, p = d c against {c}: miss at 1, hit at 3 and 5.
     * instance 3: no prediction, zero everywhere. */
    is_int(num(m, "overall.file.n"), 3, "file n = 3");
    is_near(num(m, "overall.file.acc.1"), 1.0 / 3, "file acc@1");
    is_near(num(m, "overall.file.acc.3"), 2.0 / 3, "file acc@3 (a duplicate counts)");
    is_near(num(m, "overall.file.acc.5"), 1.0 / 3, "file acc@5 (rel over min(|gold|,k) misses)");
    is_near(num(m, "overall.file.recall.1"), 0.5 / 3, "file recall@1");
    is_near(num(m, "overall.file.recall.3"), 1.5 / 3, "file recall@3");
    is_near(num(m, "overall.file.recall.5"), 2.0 / 3, "file recall@5");
    is_near(num(m, "overall.file.ndcg.1"), 1.0 / 3, "file ndcg@1");
    is_near(num(m, "overall.file.ndcg.3"), (1.0 / (1 + r(1)) + r(1)) / 3, "file ndcg@3");
    is_near(num(m, "overall.file.ndcg.5"), ((1 + r(3)) / (1 + r(1)) + r(1)) / 3, "file ndcg@5");
    is_near(num(m, "overall.file.map.1"), 1.0 / 3, "file map@1");
    is_near(num(m, "overall.file.map.3"), (1.0 / 2 + 1.0 / 2) / 3, "file map@3");
    is_near(num(m, "overall.file.map.5"), ((1 + 2.0 / 4) / 2 + 1.0 / 2) / 3, "file map@5");
    is_near(num(m, "overall.file.top.1"), 1.0 / 3, "file top@1");
    is_near(num(m, "overall.file.top.3"), 2.0 / 3, "file top@3");
    is_near(num(m, "overall.file.top.5"), 2.0 / 3, "file top@5");
    is_near(num(m, "overall.file.match"), 2.0 / 3, "file match (a.py past the cut-off counts)");
}

static void check_module_function(json_object *m)
{
    /* Module: instance 2 has no modules, so n = 2.  Instance 1, p = A A Z h
     * against {A, h}: rel 3 != 2 at 5 and 10, both found. */
    double mod_ndcg = (1 + r(3)) / (1 + r(1));
    /* Function: instance 1, p = g zz g h y f against {f, g, h}:
     *   k=5: rel 3 = min(3,5): hit, unique found g, h; k=10: rel 4: miss. */
    double idcg3 = 1 + r(1) + r(2);

    is_int(num(m, "overall.module.n"), 2, "module n = 2 (empty gold left out)");
    is_near(num(m, "overall.module.acc.5"), 0, "module acc@5");
    is_near(num(m, "overall.module.acc.10"), 0, "module acc@10");
    is_near(num(m, "overall.module.recall.5"), 0.5, "module recall@5");
    is_near(num(m, "overall.module.ndcg.10"), mod_ndcg / 2, "module ndcg@10");
    is_near(num(m, "overall.module.map.5"), (1 + 2.0 / 4) / 2 / 2, "module map@5");
    is_near(num(m, "overall.module.top.5"), 0.5, "module top@5");
    is_near(num(m, "overall.module.match"), 0.5, "module match");

    is_int(num(m, "overall.function.n"), 2, "function n = 2");
    is_near(num(m, "overall.function.acc.5"), 0.5, "function acc@5 (duplicate makes the hit)");
    is_near(num(m, "overall.function.acc.10"), 0, "function acc@10");
    is_near(num(m, "overall.function.recall.5"), 2.0 / 3 / 2, "function recall@5 (unique)");
    is_near(num(m, "overall.function.recall.10"), 0.5, "function recall@10");
    is_near(num(m, "overall.function.ndcg.5"), (1 + r(3)) / idcg3 / 2, "function ndcg@5");
    is_near(num(m, "overall.function.ndcg.10"), (1 + r(3) + r(5)) / idcg3 / 2, "function ndcg@10");
    is_near(num(m, "overall.function.map.5"), (1 + 2.0 / 4) / 3 / 2, "function map@5");
    is_near(num(m, "overall.function.map.10"), (1 + 2.0 / 4 + 3.0 / 6) / 3 / 2, "function map@10");
    is_near(num(m, "overall.function.top.10"), 0.5, "function top@10");
    is_near(num(m, "overall.function.match"), 0.5, "function match");
}

static void check_per_repo(json_object *m)
{
    json_object *missing = json_object_object_get(m, "missing");

    is_int(num(m, "instances"), 3, "instances = 3");
    is_int(num(m, "predicted"), 2, "predicted counts dataset instances only");
    ok(missing && json_object_array_length(missing) == 1, "one missing instance");
    if (missing && json_object_array_length(missing) == 1)
        is_str(json_object_get_string(json_object_array_get_idx(missing, 0)), "other__lib-7", "missing lists its id");
    is_int(num(m, "per_repo.acme/widget.instances"), 2, "acme/widget: 2 instances");
    is_int(num(m, "per_repo.acme/widget.levels.file.n"), 2, "acme/widget file n");
    is_int(num(m, "per_repo.acme/widget.levels.module.n"), 1, "acme/widget module n");
    is_near(num(m, "per_repo.acme/widget.levels.file.acc.3"), 1, "acme/widget file acc@3");
    is_near(num(m, "per_repo.acme/widget.levels.function.acc.5"), 1, "acme/widget function acc@5");
    is_int(num(m, "per_repo.other/lib.instances"), 1, "other/lib: 1 instance");
    is_near(num(m, "per_repo.other/lib.levels.file.match"), 0, "other/lib: a missing prediction is a miss");
}

static void test_by_hand(void)
{
    char *gold = write_tmp("hand_gold.jsonl", hand_gold), *pred = write_tmp("hand_pred.jsonl", hand_pred);
    cn_eval_dataset d;
    cn_eval_preds p;
    const cn_eval_pred *w2;
    json_object *m = NULL, *row;
    bool truncated = true;

    cn_eval_preds_init(&p);
    if (!ok(gold && pred && cn_eval_dataset_load(gold, &d) == 0, "hand dataset loads")) {
        diag("%s", cn_error_last()->message);
        free(gold);
        free(pred);
        return;
    }
    check_gold(&d);
    if (!ok(cn_eval_preds_load(pred, false, &p, &truncated) == 0, "hand predictions load"))
        diag("%s", cn_error_last()->message);
    ok(!truncated, "not truncated");
    is_int(p.len, 3, "a repeated instance replaces, not adds");
    w2 = cn_eval_preds_find(&p, "acme__widget-2");
    ok(w2 && w2->found[CN_EVAL_FILE].len == 2 && strcmp(w2->found[CN_EVAL_FILE].items[0], "d.py") == 0,
       "the later row for an instance wins");
    ok(w2 && w2->found[CN_EVAL_FUNCTION].len == 0, "null found_entities is an empty list");
    ok(cn_eval_preds_find(&p, "nope") == NULL, "find of an unknown id");
    row = w2 ? cn_eval_pred_json(w2) : NULL;
    is_str(row ? json_object_to_json_string_ext(row, JSON_C_TO_STRING_PLAIN) : NULL,
           "{\"instance_id\":\"acme__widget-2\",\"found_files\":[\"d.py\",\"c.py\"],"
           "\"found_modules\":[\"c.py:M\"],\"found_entities\":[],\"found_locations\":[]}",
           "a prediction as a JSON row (an older row without found_locations gets an empty list)");
    json_object_put(row);

    if (ok(cn_eval_score(&d, &p, &m) == 0, "hand set scores")) {
        check_file_level(m);
        check_module_function(m);
        check_per_repo(m);
    }
    json_object_put(m);
    cn_eval_preds_free(&p);
    cn_eval_dataset_free(&d);
    free(gold);
    free(pred);
}

/* ---- 3. errors --------------------------------------------------------- */

static void dataset_error(const char *name, const char *text, int code, const char *where, const char *what)
{
    char *path = write_tmp(name, text);
    cn_buf want = CN_BUF_INIT;
    cn_eval_dataset d = {NULL, 0};
    int rc = path ? cn_eval_dataset_load(path, &d) : CN_ERR;

    cn_buf_printf(&want, "%s%s", path ? path : "?", where);
    is_int(rc, code, name);
    has_str(cn_error_last()->message, want.data, "the message names FILE:LINE");
    has_str(cn_error_last()->message, what, "the message says what is wrong");
    ok(d.items == NULL && d.len == 0, "a failed load leaves an empty dataset");
    cn_buf_free(&want);
    free(path);
}

#define ROW(id) "{\"instance_id\": \"" id "\", \"gt_file_changes\": [{\"file\": \"a.py\", \"changes\": {}}]}\n"

static void test_dataset_errors(void)
{
    cn_eval_dataset d;
    char *missing = tmp_path("no_such.jsonl");

    dataset_error("bad_json.jsonl", ROW("a-1") "\n{\"instance_id\": \"a-2\", oops}\n", CN_EPARSE, ":3:", "not JSON");
    dataset_error("dup.jsonl", ROW("a-1") ROW("a-2") ROW("a-1"), CN_EEXISTS, ":3:", "duplicate instance_id \"a-1\"");
    dataset_error("no_id.jsonl", ROW("a-1") "{\"gt_file_changes\": []}\n", CN_EINVAL, ":2:", "instance_id");
    dataset_error("empty_id.jsonl", "{\"instance_id\": \"\", \"gt_file_changes\": []}\n", CN_EINVAL, ":1:",
                  "instance_id");
    dataset_error("gt_object.jsonl", "{\"instance_id\": \"a-1\", \"gt_file_changes\": {\"file\": \"a.py\"}}\n",
                  CN_EINVAL, ":1:", "gt_file_changes");
    dataset_error("gt_missing.jsonl", ROW("a-1") "{\"instance_id\": \"a-2\"}\n", CN_EINVAL, ":2:",
                  "gt_file_changes");
    dataset_error("gt_nochanges.jsonl", "{\"instance_id\": \"a-1\", \"gt_file_changes\": [{\"file\": \"a.py\"}]}\n",
                  CN_EINVAL, ":1:", "gt_file_changes[0]");
    dataset_error("gt_entity.jsonl",
                  "{\"instance_id\": \"a-1\", \"gt_file_changes\": [{\"file\": \"a.py\", \"changes\": "
                  "{\"edited_entities\": [\"a.py:f\", 3]}}]}\n",
                  CN_EINVAL, ":1:", "edited_entities\"[1]");
    dataset_error("not_object.jsonl", "[1, 2]\n", CN_EPARSE, ":1:", "not a JSON object");
    dataset_error("cut.jsonl", ROW("a-1") "{\"instance_id\": \"a-2\", \"gt_fi", CN_EPARSE, ":2:", "cut short");

    is_int(cn_eval_dataset_load(missing, &d), CN_EIO, "a missing dataset is CN_EIO");
    has_str(cn_error_last()->message, missing, "the message names the missing dataset");
    free(missing);
}

static void test_pred_errors(void)
{
    char *cut = write_tmp("cut_pred.jsonl", "{\"instance_id\": \"a-1\", \"found_files\": [\"a.py\"]}\n"
                                            "\n{\"instance_id\": \"a-2\", \"found_fi");
    char *mid = write_tmp("mid_pred.jsonl", "{\"instance_id\": \"a-1\"}\n{\"instance_id\": \"a-2\", \"fo\n"
                                            "{\"instance_id\": \"a-3\"}\n");
    char *last_nl = write_tmp("last_nl_pred.jsonl", "{\"instance_id\": \"a-1\"}\n{\"instance_id\": \"a-2\"\n");
    char *types = write_tmp("types_pred.jsonl", "{\"instance_id\": \"a-1\"}\n"
                                                "{\"instance_id\": \"a-2\", \"found_modules\": [\"m\", null]}\n");
    char *notarr = write_tmp("notarr_pred.jsonl", "{\"instance_id\": \"a-1\", \"found_entities\": \"f\"}\n");
    char *noid = write_tmp("noid_pred.jsonl", "{\"found_files\": []}\n");
    char *missing = tmp_path("no_such_pred.jsonl");
    cn_eval_preds p;
    bool truncated = false;
    int rc;

    cn_eval_preds_init(&p);
    rc = cn_eval_preds_load(cut, false, &p, &truncated);
    is_int(rc, 0, "a cut last line is not an error");
    ok(truncated, "... and is reported as truncated");
    is_int(p.len, 1, "... the rows before it are kept");
    cn_eval_preds_free(&p);
    is_int(cn_eval_preds_load(cut, false, &p, NULL), 0, "truncated may be NULL");
    cn_eval_preds_free(&p);

    truncated = true;
    is_int(cn_eval_preds_load(mid, false, &p, &truncated), CN_EPARSE, "a bad row in the middle is an error");
    has_str(cn_error_last()->message, ":2:", "... with its line");
    cn_eval_preds_free(&p);
    is_int(cn_eval_preds_load(last_nl, false, &p, &truncated), CN_EPARSE,
           "a bad last row that ends with a newline is an error");
    ok(!truncated, "... and not a truncation");
    cn_eval_preds_free(&p);
    is_int(cn_eval_preds_load(types, false, &p, NULL), CN_EINVAL, "a non-string entry is an error");
    has_str(cn_error_last()->message, ":2:", "... with its line");
    has_str(cn_error_last()->message, "found_modules", "... and its key");
    cn_eval_preds_free(&p);
    is_int(cn_eval_preds_load(notarr, false, &p, NULL), CN_EINVAL, "a found list that is not an array");
    has_str(cn_error_last()->message, ":1:", "... with its line");
    cn_eval_preds_free(&p);
    is_int(cn_eval_preds_load(noid, false, &p, NULL), CN_EINVAL, "a prediction without an id");
    cn_eval_preds_free(&p);

    is_int(cn_eval_preds_load(missing, false, &p, NULL), CN_EIO, "a missing file is CN_EIO");
    has_str(cn_error_last()->message, missing, "... naming the path");
    is_int(cn_eval_preds_load(missing, true, &p, &truncated), 0, "a missing file with missing_ok is fine");
    ok(p.len == 0 && !truncated, "... and gives no rows");
    cn_eval_preds_free(&p);

    free(cut);
    free(mid);
    free(last_nl);
    free(types);
    free(notarr);
    free(noid);
    free(missing);
}

/* ---- 4. the report ------------------------------------------------------ */

static char *slurp(const char *dir, const char *name)
{
    char *path = cn_path_join(dir, name), *text = NULL;
    size_t len;
    if (cn_file_read(path, 0, &text, &len) < 0) text = NULL;
    free(path);
    return text;
}

static void test_report(void)
{
    cn_eval_dataset empty = {NULL, 0};
    cn_eval_preds none;
    json_object *nothing = NULL;
    char *dir = tmp_path("report"), *md, *svg, *table;
    cn_eval_row rows[2];
    size_t files = 0;
    DIR *dh;
    struct dirent *e;

    cn_eval_preds_init(&none);
    ok(cn_eval_score(&empty, &none, &nothing) == 0, "an empty dataset scores");
    is_int(num(nothing, "overall.file.n"), 0, "... with n = 0");
    ok(isnan(num(nothing, "overall.file.acc.1")), "... and null values");
    rows[0].name = "dev <ref> & \"co\"";
    rows[0].metrics = dev_metrics;
    rows[1].name = "empty|run";
    rows[1].metrics = nothing;

    table = cn_eval_table_text(rows, 2);
    has_str(table, "file@1  file@3  file@5  module@5  module@10  function@5  function@10", "table header");
    has_str(table, "dev <ref> & \"co\"  0.8000  0.9231  0.9231    0.7846     0.8154      0.6923       0.7385",
            "table row: aligned, four decimals");
    has_str(table, "empty|run", "second row named");
    has_str(table, "      -", "null shown as -");
    free(table);

    if (!ok(cn_eval_report_write(dir, "Dev set <65>", rows, 2) == 0, "report written"))
        diag("%s", cn_error_last()->message);
    md = slurp(dir, "report.md");
    svg = slurp(dir, "acc_at_k.svg");
    ok(md != NULL, "report.md exists");
    ok(svg != NULL, "acc_at_k.svg exists");
    has_str(md, "# Dev set &lt;65&gt;", "title");
    has_str(md, "| name | file@1 | file@3 | file@5 | module@5 | module@10 | function@5 | function@10 |",
            "Acc@k table header");
    has_str(md, "| dev &lt;ref&gt; &amp; \"co\" | 0.8000 | 0.9231 | 0.9231 | 0.7846 | 0.8154 | 0.6923 | 0.7385 |",
            "first row");
    has_str(md, "| empty\\|run | - | - |", "second row, '|' escaped, nulls as -");
    has_str(md, "| Recall@k |", "recall of rows[0]");
    has_str(md, "| nDCG@k |", "nDCG of rows[0]");
    has_str(md, "| MAP@k |", "MAP of rows[0]");
    has_str(md, "| Top-k (any hit) |", "Top-k of rows[0]");
    has_str(md, "| file | 65 |", "Match with n");
    has_str(md, "| repository | instances |", "per-repository table");
    has_str(md, "| sympy/sympy | 33 |", "sympy's row with its count");
    has_str(md, "![Acc@k by level](acc_at_k.svg)", "plot linked");
    ok(svg && strncmp(svg, "<svg", 4) == 0, "svg starts with <svg");
    ok(svg && cn_str_has_suffix(svg, "</svg>\n"), "svg ends with </svg>");
    has_str(svg, ">dev &lt;ref&gt; &amp; &quot;co&quot;</text>", "legend names escaped");
    has_str(svg, ">empty|run</text>", "second legend entry");
    has_str(svg, ">function@10</text>", "x labels");
    has_str(svg, ">0.80</text>", "value above a bar");
    ok(svg && strstr(svg, "<ref>") == NULL, "no raw markup from a name");

    dh = opendir(dir);
    while (dh && (e = readdir(dh)) != NULL)
        if (e->d_name[0] != '.') files++;
    if (dh) closedir(dh);
    is_int(files, 2, "no temporary file left behind");

    /* Rewriting replaces the files in place. */
    ok(cn_eval_report_write(dir, "again", rows, 1) == 0, "report rewritten");
    free(md);
    md = slurp(dir, "report.md");
    ok(md && strstr(md, "empty") == NULL && strstr(md, "# again") != NULL, "the new report replaced the old");

    free(md);
    free(svg);
    free(dir);
    json_object_put(nothing);
}

/* ---- 5. scores by line ranges (the multilingual benchmark) ---------------- */

/* Five instances in two languages; each number below is worked out by hand
 * from the definition (and agrees with the benchmark's mlocscore.py):
 *   r1 C     function [10,19] (10 lines): "15-30" overlaps 5 = half: a match;
 *            changed line 12 is in no location
 *   r2 C     function [1,9] (9 lines): "6-20" overlaps 4 < 4.5: no match;
 *            it holds changed line 7 (a loc-hit); given as an object
 *   r3 Rust  six gold functions: the first five locations match five of
 *            them (function@5: min(6, 5) = 5, a hit), a repeated location
 *            and one in another file add nothing (function@10 needs all
 *            six: a miss); changed line 100 only in the 8th location;
 *            files repeated: the distinct ones count
 *   r4 Rust  no gold function; its row has an error: a miss everywhere
 *   r5 Rust  no prediction at all */
static const char *range_gold =
    "{\"instance_id\": \"acme__c-1\", \"repo\": \"acme/c\", \"base_commit\": \"x\", \"language\": \"C\","
    " \"gold_files\": [\"src/a.c\"], \"gold_functions\": [{\"file\": \"src/a.c\", \"name\": \"f\", \"kind\": \"function\","
    " \"start\": 10, \"end\": 19}], \"changed_lines\": {\"src/a.c\": [12]}, \"gt_file_changes\": []}\n"
    "{\"instance_id\": \"acme__c-2\", \"repo\": \"acme/c\", \"base_commit\": \"x\", \"language\": \"C\","
    " \"gold_files\": [\"src/b.c\"], \"gold_functions\": [{\"file\": \"src/b.c\", \"start\": 1, \"end\": 9}],"
    " \"changed_lines\": {\"src/b.c\": [7]}, \"gt_file_changes\": []}\n"
    "{\"instance_id\": \"acme__rs-3\", \"repo\": \"acme/rs\", \"base_commit\": \"x\", \"language\": \"Rust\","
    " \"gold_files\": [\"src/x.rs\", \"src/z.rs\"], \"gold_functions\": ["
    "{\"file\": \"src/x.rs\", \"start\": 1, \"end\": 2}, {\"file\": \"src/x.rs\", \"start\": 3, \"end\": 4},"
    "{\"file\": \"src/x.rs\", \"start\": 5, \"end\": 6}, {\"file\": \"src/x.rs\", \"start\": 7, \"end\": 8},"
    "{\"file\": \"src/x.rs\", \"start\": 9, \"end\": 10}, {\"file\": \"src/x.rs\", \"start\": 11, \"end\": 12}],"
    " \"changed_lines\": {\"src/x.rs\": [100]}, \"gt_file_changes\": []}\n"
    "{\"instance_id\": \"acme__rs-4\", \"repo\": \"acme/rs\", \"base_commit\": \"x\", \"language\": \"Rust\","
    " \"gold_files\": [\"src/w.rs\"], \"gold_functions\": [], \"changed_lines\": {\"src/w.rs\": [1]},"
    " \"gt_file_changes\": []}\n"
    "{\"instance_id\": \"acme__rs-5\", \"repo\": \"acme/rs\", \"base_commit\": \"x\", \"language\": \"Rust\","
    " \"gold_files\": [\"src/v.rs\"], \"gold_functions\": [{\"file\": \"src/v.rs\", \"start\": 1, \"end\": 5}],"
    " \"changed_lines\": {\"src/v.rs\": [2]}, \"gt_file_changes\": []}\n";

static const char *range_pred =
    "{\"instance_id\": \"acme__c-1\", \"found_files\": [\"src/a.c\"], \"found_locations\": [\"src/a.c:15-30\"]}\n"
    "{\"instance_id\": \"acme__c-2\", \"found_files\": [\"src/zz.c\", \"src/b.c\"],"
    " \"found_locations\": [{\"path\": \"src/b.c\", \"start_line\": 6, \"end_line\": 20}, \"nonsense\", \"src/b.c:5\"]}\n"
    "{\"instance_id\": \"acme__rs-3\", \"found_files\": [\"src/x.rs\", \"src/x.rs\", \"src/q.rs\", \"src/z.rs\"],"
    " \"found_locations\": [\"src/x.rs:1-2\", \"src/x.rs:3-4\", \"src/x.rs:5-6\", \"src/x.rs:7-8\", \"src/x.rs:9-10\","
    " \"src/x.rs:1-2\", \"src/y.rs:11-12\", \"src/x.rs:90-110\"]}\n"
    "{\"instance_id\": \"acme__rs-4\", \"found_files\": [\"src/w.rs\"], \"found_locations\": [\"src/w.rs:1-9\"],"
    " \"error\": \"boom\"}\n";

static void test_ranges(void)
{
    char *gold = write_tmp("range_gold.jsonl", range_gold), *pred = write_tmp("range_pred.jsonl", range_pred);
    cn_eval_dataset d;
    cn_eval_preds p;
    json_object *m = NULL, *loc;
    const cn_eval_pred *c2;
    cn_eval_row row;
    char *table;

    cn_eval_preds_init(&p);
    if (!ok(gold && pred && cn_eval_dataset_load(gold, &d) == 0, "a dataset with range gold loads")) {
        diag("%s", cn_error_last()->message);
        free(gold);
        free(pred);
        return;
    }
    ok(d.items[0].ranged && d.items[0].n_functions == 1 && d.items[0].functions[0].start == 10 &&
           d.items[0].functions[0].end == 19 && strcmp(d.items[0].functions[0].file, "src/a.c") == 0,
       "gold_functions: file, start, end");
    ok(d.items[1].n_changed == 1 && d.items[1].changed[0].n == 1 && d.items[1].changed[0].lines[0] == 7,
       "changed_lines: file and lines");
    is_str(d.items[2].language, "Rust", "language");
    is_int(d.items[2].gold[CN_EVAL_FILE].len, 2, "gold_files are the file gold");
    if (!ok(cn_eval_preds_load(pred, false, &p, NULL) == 0, "predictions with found_locations load"))
        diag("%s", cn_error_last()->message);
    c2 = cn_eval_preds_find(&p, "acme__c-2");
    ok(c2 && c2->locations.len == 2 && strcmp(c2->locations.items[0], "src/b.c:6-20") == 0 &&
           strcmp(c2->locations.items[1], "src/b.c:5") == 0,
       "a location object becomes path:start-end; a string that is no location is left out");
    ok(cn_eval_preds_find(&p, "acme__rs-4") && cn_eval_preds_find(&p, "acme__rs-4")->failed, "a row with an error is failed");
    ok(c2 && !c2->failed, "a row without one is not");
    {
        json_object *j = c2 ? cn_eval_pred_json(c2) : NULL;
        is_str(j ? json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN) : NULL,
               "{\"instance_id\":\"acme__c-2\",\"found_files\":[\"src\\/zz.c\",\"src\\/b.c\"],\"found_modules\":[],"
               "\"found_entities\":[],\"found_locations\":[\"src\\/b.c:6-20\",\"src\\/b.c:5\"]}",
               "found_locations round-trip into the row");
        json_object_put(j);
    }
    if (!ok(cn_eval_score(&d, &p, &m) == 0, "range gold scores")) goto out;
    loc = json_object_object_get(m, "localization");
    ok(loc != NULL, "metrics have a localization block");
    is_near(num(loc, "overall.instances"), 5, "overall: 5 instances");
    is_near(num(loc, "overall.failed"), 2, "overall: 2 failed (an error row, a missing row)");
    is_near(num(loc, "overall.file.n"), 5, "file: every instance counts");
    is_near(num(loc, "overall.file.acc.1"), 2.0 / 5, "file@1 = 2/5");
    is_near(num(loc, "overall.file.acc.3"), 3.0 / 5, "file@3 = 3/5 (distinct files: x, q, z)");
    is_near(num(loc, "overall.file.acc.5"), 3.0 / 5, "file@5 = 3/5");
    is_near(num(loc, "overall.file.acc.10"), 3.0 / 5, "file@10 = 3/5");
    is_near(num(loc, "overall.function.n"), 4, "function: the 4 instances with gold functions");
    is_near(num(loc, "overall.function.acc.5"), 2.0 / 4,
            "function@5 = 2/4 (overlap of exactly half matches, less does not; gold capped at 5)");
    is_near(num(loc, "overall.function.acc.10"), 1.0 / 4, "function@10 = 1/4 (all six needed at 10)");
    is_near(num(loc, "overall.loc.n"), 5, "loc: every instance counts");
    is_near(num(loc, "overall.loc.hit.5"), 1.0 / 5, "loc-hit@5 = 1/5 (only the first five locations count)");
    is_near(num(loc, "per_language.C.file.acc.1"), 1.0 / 2, "C: file@1 = 1/2");
    is_near(num(loc, "per_language.C.function.acc.5"), 1.0 / 2, "C: function@5 = 1/2");
    is_near(num(loc, "per_language.C.loc.hit.5"), 1.0 / 2, "C: loc-hit@5 = 1/2");
    is_near(num(loc, "per_language.Rust.instances"), 3, "Rust: 3 instances");
    is_near(num(loc, "per_language.Rust.failed"), 2, "Rust: 2 failed");
    is_near(num(loc, "per_language.Rust.function.n"), 2, "Rust: 2 with gold functions");
    is_near(num(loc, "per_language.Rust.function.acc.5"), 1.0 / 2, "Rust: function@5 = 1/2");
    is_near(num(loc, "per_language.Rust.function.acc.10"), 0, "Rust: function@10 = 0");
    is_near(num(loc, "per_repo.acme/c.file.acc.3"), 1, "per repository too");
    is_near(num(m, "per_language.Rust.instances"), 3, "the name-based scores are per language too");

    row.name = "ranges";
    row.metrics = m;
    table = cn_eval_table_text(&row, 1);
    has_str(table, "file@10  function@5  function@10  loc-hit@5", "the table has the range columns");
    has_str(table, "0.4000  0.6000  0.6000   0.6000      0.5000       0.2500     0.2000", "and the overall numbers");
    has_str(table, "Rust: ranges (3)", "a per-language line for each language");
    free(table);
    {
        char *dir = tmp_path("range_report"), *md = NULL;
        size_t len;
        ok(cn_eval_report_write(dir, "ranges", &row, 1) == 0, "the range report is written");
        char *path = cn_path_join(dir, "report.md");
        if (path && cn_file_read(path, 0, &md, &len) < 0) md = NULL;
        has_str(md, "| name | file@1 | file@3 | file@5 | file@10 | function@5 | function@10 | loc-hit@5 |",
                "report: the range columns");
        has_str(md, "## Per language: ranges", "report: a per-language table");
        has_str(md, "| C | 2 | 0.5000 | 1.0000 | 1.0000 | 1.0000 | 0.5000 | 0.5000 | 0.5000 |", "report: C's row");
        has_str(md, "## Per repository: ranges", "report: and the per-repository one");
        free(md);
        free(path);
        free(dir);
    }
out:
    json_object_put(m);
    cn_eval_preds_free(&p);
    cn_eval_dataset_free(&d);
    free(gold);
    free(pred);
}

int main(void)
{
    strcpy(tmpdir, "/tmp/cn_eval_score_XXXXXX");
    if (mkdtemp(tmpdir) == NULL) {
        ok(0, "mkdtemp");
        return tap_done();
    }
    test_dev_set();
    test_by_hand();
    test_dataset_errors();
    test_pred_errors();
    test_report();
    test_ranges();
    json_object_put(dev_metrics);
    if (cn_eval_tree_remove(tmpdir) < 0) diag("could not remove %s", tmpdir);
    return tap_done();
}
