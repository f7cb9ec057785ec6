/* SPDX-License-Identifier: Apache-2.0 */
/* `codenib skills test DIR`: one skill package checked on its own, as its
 * author or a distribution's packager runs it before shipping -- the
 * config.yaml read and validated, the shared object opened and its ABI and
 * id checked, an executor created, then each example the config declares
 * (`examples:`) run in a repository of its own files, with its
 * expectations checked.  Nothing else on the search path is loaded. */
#include <errno.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cn_cli.h"
#include "index/cn_compile.h"
#include "plugin/cn_host.h"
#include "plugin/cn_meta.h"

typedef struct tester {
    bool json;
    json_object *checks;  /* [{name, ok, detail}] */
    int passed, failed;
} tester;

static void record(tester *t, const char *name, bool ok, const char *detail)
{
    json_object *c = json_object_new_object();
    json_object_object_add(c, "name", json_object_new_string(name));
    json_object_object_add(c, "ok", json_object_new_boolean(ok));
    json_object_object_add(c, "detail", detail ? json_object_new_string(detail) : NULL);
    json_object_array_add(t->checks, c);
    if (ok) t->passed++;
    else t->failed++;
    if (!t->json) {
        printf("%-5s %s", ok ? "ok" : "FAIL", name);
        if (detail && *detail) printf(": %s", detail);
        printf("\n");
    }
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    if (flag == FTW_DP) rmdir(path);
    else unlink(path);
    return 0;
}

static void rm_tree(const char *dir)
{
    if (dir != NULL) nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The example's repository: its files under <tmp>/repo. */
static int write_files(const char *repo, json_object *files)
{
    int rc;
    if (mkdir(repo, 0700) < 0) return cn_error_set(CN_EIO, "cannot create %s: %s", repo, strerror(errno));
    if (files == NULL) return 0;
    json_object_object_foreach(files, rel, text) {
        char *path = cn_path_join(repo, rel), *slash;
        const char *s = json_object_get_string(text);
        if (path == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
        rc = 0;
        if ((slash = strrchr(path, '/')) != NULL) { /* its directory, as cn_mkdirs makes it */
            *slash = '\0';
            rc = cn_mkdirs(path);
            *slash = '/';
        }
        if (rc == 0) rc = cn_file_write_atomic(path, s, strlen(s));
        free(path);
        if (rc < 0) return rc;
    }
    return 0;
}

static bool needs_index(const cn_skill_meta *m)
{
    return m->n_index_requirements > 0;
}

/* Compiles the example repository into <tmp>/cache when the skill reads
 * an index, then points the registry at it. */
static int prepare_repo(cn_registry *reg, const cn_skill_meta *m, const char *repo, const char *cache)
{
    if (needs_index(m)) {
        cn_compile_opts co;
        cn_compile_result res;
        int rc;
        memset(&co, 0, sizeof co);
        memset(&res, 0, sizeof res);
        co.repo = repo;
        co.cache_dir = cache;
        rc = cn_compile(&co, &res);
        cn_compile_result_free(&res);
        if (rc < 0) return cn_error_prefix("compiling the example repository");
    }
    return cn_registry_set_repo_cache(reg, repo, cache);
}

static const char *example_name(json_object *ex, size_t i, char *buf, size_t size)
{
    json_object *n;
    if (json_object_object_get_ex(ex, "name", &n)) snprintf(buf, size, "example %zu \"%s\"", i + 1,
                                                            json_object_get_string(n));
    else snprintf(buf, size, "example %zu", i + 1);
    return buf;
}

/* Runs one example and records what came of it. */
static void run_example(tester *t, cn_registry *reg, const cn_skill_meta *m, json_object *ex, size_t i,
                        const char *tmp)
{
    char name[256], *repo = NULL, *cache = NULL, *dir = NULL, *text = NULL;
    json_object *args = NULL, *files = NULL, *expect = NULL, *contains = NULL, *want_err = NULL, *res = NULL;
    bool expect_error = false;
    cn_buf why = CN_BUF_INIT;
    int rc;

    example_name(ex, i, name, sizeof name);
    json_object_object_get_ex(ex, "args", &args);
    json_object_object_get_ex(ex, "files", &files);
    if (json_object_object_get_ex(ex, "expect", &expect)) {
        json_object_object_get_ex(expect, "contains", &contains);
        if (json_object_object_get_ex(expect, "error", &want_err)) expect_error = json_object_get_boolean(want_err);
    }
    {
        cn_buf b = CN_BUF_INIT;
        cn_buf_printf(&b, "%s/ex%zu", tmp, i + 1);
        dir = cn_buf_steal(&b);
    }
    repo = dir ? cn_path_join(dir, "repo") : NULL;
    cache = dir ? cn_path_join(dir, "cache") : NULL;
    if (repo == NULL || cache == NULL) rc = cn_error_set(CN_ENOMEM, "out of memory");
    else if (mkdir(dir, 0700) < 0) rc = cn_error_set(CN_EIO, "cannot create %s: %s", dir, strerror(errno));
    else rc = write_files(repo, files);
    if (rc == 0) rc = prepare_repo(reg, m, repo, cache);
    if (rc < 0) {
        cn_buf_printf(&why, "could not set up its repository: %s", cn_error_last()->message);
        record(t, name, false, why.data);
        goto out;
    }
    rc = cn_registry_invoke(reg, m->skill_id, args, NULL, &res);
    if (rc < 0) {
        if (expect_error) {
            record(t, name, true, "failed as expected");
        } else {
            cn_buf_printf(&why, "the skill failed: %s", cn_error_last()->message);
            record(t, name, false, why.data);
        }
        goto out;
    }
    text = cn_json_text(res, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    if (expect_error) {
        cn_buf_printf(&why, "expected an error, got a result: %.200s", text ? text : "");
        record(t, name, false, why.data);
        goto out;
    }
    for (size_t k = 0; contains && k < json_object_array_length(contains); k++) {
        const char *want = json_object_get_string(json_object_array_get_idx(contains, k));
        if (text == NULL || strstr(text, want) == NULL) {
            cn_buf_printf(&why, "the result lacks '%s': %.300s", want, text ? text : "");
            record(t, name, false, why.data);
            goto out;
        }
    }
    record(t, name, true, NULL);
out:
    cn_error_clear();
    cn_buf_free(&why);
    free(text);
    json_object_put(res);
    free(repo);
    free(cache);
    free(dir);
}

static void test_usage(FILE *f)
{
    fputs("usage: codenib skills test DIR [--json]\n"
          "\n"
          "Checks one skill package on its own: config.yaml is read and validated,\n"
          "the shared object opens and declares this codenib's ABI and the package's\n"
          "id, an executor is created, and each example of config.yaml's `examples:`\n"
          "runs in a repository of its own files (compiled first when the skill reads\n"
          "an index) with its expectations checked.  Nothing else is loaded.\n"
          "\n"
          "  --json   one JSON object: package, skill_id, checks, warnings, passed, failed\n"
          "\n"
          "Exit status: 0 when every check passed, 1 when one failed, 2 on bad usage.\n",
          f);
}

int cn_cmd_skills_test(int argc, char **argv)
{
    tester t = {false, NULL, 0, 0};
    const char *dir = NULL;
    char tmpl[4096], buf[512];
    const char *tmpdir = getenv("TMPDIR");
    char *tmp = NULL;
    cn_registry *reg = NULL;
    cn_skill_entry *e = NULL;
    json_object *warnings = json_object_new_array();
    struct stat st;
    bool ended = false;
    int rc;

    for (int i = 1; i < argc; i++) {
        if (!ended && strcmp(argv[i], "--") == 0) ended = true;
        else if (!ended && strcmp(argv[i], "--json") == 0) t.json = true;
        else if (!ended && cn_cli_is_help(argv[i])) {
            test_usage(stdout);
            json_object_put(warnings);
            return CN_EXIT_OK;
        } else if (!ended && argv[i][0] == '-') {
            json_object_put(warnings);
            return cn_cli_usage_error("skills test", "unknown option '%s'", argv[i]);
        } else if (dir == NULL) dir = argv[i];
        else {
            json_object_put(warnings);
            return cn_cli_usage_error("skills test", "one package directory, not also '%s'", argv[i]);
        }
    }
    if (dir == NULL) {
        json_object_put(warnings);
        return cn_cli_usage_error("skills test", "which package? give its directory");
    }
    if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
        json_object_put(warnings);
        cn_error_set(CN_ENOTFOUND, "skills test: %s is not a directory", dir);
        return cn_cli_fail();
    }
    t.checks = json_object_new_array();
    if (!t.json) printf("codenib skills test: %s\n", dir);

    /* 1. config.yaml (and skill.md), in a registry of this package alone */
    if ((rc = cn_registry_new(&reg)) < 0 || (rc = cn_registry_add_package(reg, dir, "test")) < 0) {
        record(&t, "config.yaml", false, cn_error_last()->message);
        goto done;
    }
    e = reg->n_entries > 0 ? reg->entries[0] : NULL;
    if (e == NULL || e->meta == NULL) {
        record(&t, "config.yaml", false, e && e->reason ? e->reason : "the package could not be read");
        goto done;
    }
    snprintf(buf, sizeof buf, "skill %s %s (%s), %zu input%s, %zu example%s", e->id,
             e->meta->version ? e->meta->version : "(no version)", cn_skill_type_name(e->meta->skill_type),
             e->meta->n_inputs, e->meta->n_inputs == 1 ? "" : "s",
             e->meta->examples ? json_object_array_length(e->meta->examples) : 0,
             e->meta->examples && json_object_array_length(e->meta->examples) == 1 ? "" : "s");
    record(&t, "config.yaml", true, buf);
    for (size_t w = 0; w < e->meta->warnings.len; w++) {
        json_object_array_add(warnings, json_object_new_string(e->meta->warnings.items[w]));
        if (!t.json) printf("warn  %s\n", e->meta->warnings.items[w]);
    }
    if (e->meta->skill_doc == NULL || e->meta->skill_doc[0] == '\0') {
        json_object_array_add(warnings, json_object_new_string("no skill.md: the model gets only config.yaml's description"));
        if (!t.json) printf("warn  no skill.md: the model gets only config.yaml's description\n");
    }

    /* 2. the shared object */
    if (cn_registry_open(reg, e) < 0) {
        record(&t, "shared object", false, e->reason ? e->reason : cn_error_last()->message);
        goto done;
    }
    snprintf(buf, sizeof buf, "%s.so, built for ABI %u.%u (codenib %d.%d)", e->meta->library, e->built_abi_major,
             e->built_abi_minor, CN_ABI_MAJOR, CN_ABI_MINOR);
    record(&t, "shared object", true, buf);

    /* 3. an executor, in an empty repository */
    {
        const char *base = tmpdir && *tmpdir ? tmpdir : "/tmp";
        snprintf(tmpl, sizeof tmpl, "%s/codenib-skills-test.XXXXXX", base);
        tmp = mkdtemp(tmpl);
    }
    if (tmp == NULL) {
        snprintf(buf, sizeof buf, "cannot create a temporary directory: %s", strerror(errno));
        record(&t, "executor", false, buf);
        goto done;
    }
    {
        char *empty = cn_path_join(tmp, "empty");
        rc = empty && mkdir(empty, 0700) == 0 ? cn_registry_set_repo_cache(reg, empty, NULL) : CN_EIO;
        if (rc == 0) rc = cn_registry_load(reg, e);
        free(empty);
        record(&t, "executor", rc == 0, rc == 0 ? "created" : (e->reason ? e->reason : cn_error_last()->message));
        cn_error_clear();
        if (rc < 0) goto done;
    }
    cn_registry_models_from_env(reg);
    cn_error_clear();

    /* 4. the examples */
    if (e->meta->examples == NULL || json_object_array_length(e->meta->examples) == 0) {
        json_object_array_add(warnings, json_object_new_string("config.yaml declares no examples: nothing was run"));
        if (!t.json) printf("warn  config.yaml declares no examples: nothing was run\n");
    } else {
        for (size_t i = 0; i < json_object_array_length(e->meta->examples); i++)
            run_example(&t, reg, e->meta, json_object_array_get_idx(e->meta->examples, i), i, tmp);
    }

done:
    if (t.json) {
        json_object *o = json_object_new_object();
        json_object_object_add(o, "package", json_object_new_string(dir));
        json_object_object_add(o, "skill_id", e ? json_object_new_string(e->id) : NULL);
        json_object_object_add(o, "checks", json_object_get(t.checks));
        json_object_object_add(o, "warnings", json_object_get(warnings));
        json_object_object_add(o, "passed", json_object_new_int(t.passed));
        json_object_object_add(o, "failed", json_object_new_int(t.failed));
        cn_cli_print_json(o, false);
        json_object_put(o);
    } else {
        printf("\n%d passed, %d failed, %zu warning%s\n", t.passed, t.failed, json_object_array_length(warnings),
               json_object_array_length(warnings) == 1 ? "" : "s");
    }
    cn_registry_free(reg);
    rm_tree(tmp);
    json_object_put(t.checks);
    json_object_put(warnings);
    return t.failed == 0 ? CN_EXIT_OK : CN_EXIT_FAIL;
}
