/* SPDX-License-Identifier: Apache-2.0 */
/* Registry rules: in-process registration, allow/exclude, reserved tool
 * names, duplicates across the search path, typed contexts. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin/cn_registry.h"
#include "tap.h"

static int freed;

static void count_free(void *p)
{
    (void)p;
    freed++;
}

static int echo_fn(void *data, const char *args_json, char **result_json, cn_error *err)
{
    (void)data;
    (void)err;
    *result_json = strdup(args_json);
    return 0;
}

static const char *meta_a =
    "{\"skill_id\": \"alpha\", \"skill_type\": \"retrieval\","
    " \"inputs\": [{\"name\": \"query\", \"type_hint\": \"str\"},"
    "              {\"name\": \"top_k\", \"type_hint\": \"int\", \"default\": 10}],"
    " \"outputs\": {\"type_hint\": \"List[QueriedNode]\"}}";

static void test_inprocess(void)
{
    cn_registry *reg = NULL;
    char *out = NULL;
    int rc;

    is_int(cn_registry_new(&reg), 0, "new registry");
    freed = 0;
    is_int(cn_registry_register(reg, meta_a, "Alpha searches.", echo_fn, NULL, count_free), 0,
           "in-process skill registered");
    is_int(cn_registry_run(reg, "alpha", "{\"query\": \"x\", \"top_k\": \"5\"}", NULL, &out), 0,
           "in-process skill runs");
    is_str(out, "{\"top_k\":5,\"query\":\"x\"}", "arguments resolved and coerced");
    cn_free(out);
    out = NULL;
    is_int(cn_registry_run(reg, "alpha", "{\"query\": 3, \"top_k\": \"five\"}", NULL, &out), CN_ETYPE,
           "bad argument refused");
    has_str(cn_last_error()->message, "argument 'top_k': expected int, got \"five\"", "message names argument, value, type");
    is_int(cn_registry_run(reg, "alpha", "{not json", NULL, &out), CN_EPARSE, "malformed arguments refused");
    has_str(cn_last_error()->message, "arguments is not valid JSON", "malformed arguments message");
    is_int(cn_registry_run(reg, "nope", "{}", NULL, &out), CN_ENOTFOUND, "unknown skill");

    /* duplicate id: the second is kept as a duplicate, its data freed */
    rc = cn_registry_register(reg, meta_a, NULL, echo_fn, NULL, count_free);
    is_int(rc, CN_EEXISTS, "second registration of an id is a duplicate");
    ok(cn_registry_find(reg, "alpha")->state == CN_STATE_INPROCESS, "the first stays");

    /* collision with a default tool name */
    rc = cn_registry_register(reg, "{\"skill_id\": \"bash\"}", NULL, echo_fn, NULL, count_free);
    is_int(rc, 0, "a colliding skill is still listed");
    ok(cn_registry_find(reg, "bash")->state == CN_STATE_FAILED, "but it fails");
    has_str(cn_registry_find(reg, "bash")->reason, "collides with the default tool 'bash'", "naming both");
    {
        const char *names[] = {"read"};
        is_int(cn_registry_set_tool_names(reg, names, 1), 0, "tool names replaced");
        ok(cn_registry_find(reg, "bash")->state == CN_STATE_FAILED, "a failed entry stays failed");
    }
    rc = cn_registry_register(reg, "{\"skill_id\": \"read\"}", NULL, echo_fn, NULL, count_free);
    ok(cn_registry_find(reg, "read")->state == CN_STATE_FAILED, "read collides");

    /* bad metadata: data freed at once */
    freed = 0;
    rc = cn_registry_register(reg, "{\"skill_id\": [5]}", NULL, echo_fn, NULL, count_free);
    is_int(rc, CN_EPARSE, "bad metadata refused");
    is_int(freed, 1, "free_data called when registration fails");
    rc = cn_registry_register(reg, "[1", NULL, echo_fn, NULL, count_free);
    is_int(rc, CN_EPARSE, "malformed metadata refused");
    is_int(freed, 2, "free_data called again");
    rc = cn_registry_register(reg, "{\"skill_id\": \"nofn\"}", NULL, NULL, NULL, count_free);
    is_int(rc, CN_EINVAL, "a skill without a function is refused");
    has_str(cn_last_error()->message, "in-process skill 'nofn' has no function", "saying so");
    is_int(freed, 3, "and its data freed");
    ok(cn_registry_find(reg, "nofn") == NULL, "and it is not listed");

    /* allow / exclude */
    {
        const char *allow[] = {"alpha", "ghost"};
        const char *excl[] = {"alpha"};
        ok(cn_registry_enabled(reg, "alpha"), "no allow set: enabled");
        cn_registry_set_allow(reg, allow, 2);
        ok(cn_registry_enabled(reg, "alpha") && !cn_registry_enabled(reg, "bash"), "allow set applies");
        cn_registry_set_exclude(reg, excl, 1);
        ok(!cn_registry_enabled(reg, "alpha"), "exclude applies after allow");
        is_int(cn_registry_run(reg, "alpha", "{\"query\": \"x\"}", NULL, &out), CN_EDENIED,
               "an excluded skill does not run");
        cn_registry_set_exclude(reg, NULL, 0);
        cn_registry_set_allow(reg, NULL, 0);
        ok(cn_registry_enabled(reg, "bash"), "empty allow set: all enabled");
    }
    freed = 0;
    cn_registry_free(reg);
    /* alpha, its duplicate, bash and read are kept (listed) until the end */
    is_int(freed, 4, "free_data called for every kept in-process entry on free");
}

static char *mkroot(const char *base, const char *name)
{
    char *p = cn_path_join(base, name);
    mkdir(p, 0755);
    return p;
}

static void link_pkg(const char *fx_all, const char *root, const char *pkg)
{
    char *src = cn_path_join(fx_all, pkg), *dst = cn_path_join(root, pkg);
    if (symlink(src, dst) != 0) diag("symlink %s -> %s failed", dst, src);
    free(src);
    free(dst);
}

static void test_search_path(void)
{
    const char *fx = getenv("CN_FIXTURES");
    char tmpl[] = "/tmp/cn-test-registry-XXXXXX";
    char *base, *fx_all, *r1, *r2, *home_skills, *env;
    cn_strv dirs = CN_STRV_INIT, labels = CN_STRV_INIT;
    cn_registry *reg = NULL;
    cn_skill_entry *e;

    if (fx == NULL) {
        /* run outside make check: say so rather than count a pass */
        diag("search-path tests not run: CN_FIXTURES is not set (run through make check)");
        return;
    }
    base = mkdtemp(tmpl);
    fx_all = cn_path_join(fx, "all");
    r1 = mkroot(base, "r1");
    r2 = mkroot(base, "r2");
    {
        char *home = mkroot(base, "home");
        home_skills = mkroot(home, "skills");
        setenv("CODENIB_HOME", home, 1);
        free(home);
    }
    link_pkg(fx_all, r1, "fx_dup_b");
    link_pkg(fx_all, r2, "fx_dup_a");
    link_pkg(fx_all, r2, "fx_good");
    link_pkg(fx_all, home_skills, "fx_create_fails");
    {
        cn_buf b = CN_BUF_INIT;
        cn_buf_printf(&b, "%s:%s", r1, r2);
        env = cn_buf_steal(&b);
    }
    setenv("CODENIB_SKILLS_PATH", env, 1);

    /* make check sets CODENIB_IGNORE_SYSTEM_DIRS: with it the installed
     * directory is left out */
    setenv("CODENIB_IGNORE_SYSTEM_DIRS", "1", 1);
    is_int(cn_registry_search_path(&dirs, &labels), 0, "search path without the system directories");
    {
        bool installed = false;
        for (size_t k = 0; k < labels.len; k++)
            if (strncmp(labels.items[k], "installed", 9) == 0) installed = true;
        ok(!installed && labels.len >= 3 && strcmp(labels.items[labels.len - 1], "user") == 0,
           "CODENIB_IGNORE_SYSTEM_DIRS=1 leaves the installed directory out, keeps the user's");
    }
    cn_strv_free(&dirs);
    cn_strv_free(&labels);
    setenv("CODENIB_IGNORE_SYSTEM_DIRS", "0", 1);

    is_int(cn_registry_search_path(&dirs, &labels), 0, "search path computed");
    {
        size_t i = 0;
        if (dirs.len == 5) i = 1;  /* running from the build tree: it comes first */
        ok(dirs.len >= 4, "at least four search roots");
        is_str(dirs.items[i], r1, "CODENIB_SKILLS_PATH first entry");
        is_str(labels.items[i], "CODENIB_SKILLS_PATH", "labelled");
        is_str(dirs.items[i + 1], r2, "then its second entry");
        is_str(labels.items[i + 2], "installed", "then the installed skills");
        is_str(dirs.items[i + 3], home_skills, "then $CODENIB_HOME/skills");
        is_str(labels.items[i + 3], "user", "labelled user");
    }
    cn_strv_free(&dirs);
    cn_strv_free(&labels);

    is_int(cn_registry_new(&reg), 0, "registry");
    is_int(cn_registry_discover(reg), 0, "discovered");
    e = cn_registry_find(reg, "fx_dup");
    ok(e != NULL && strstr(e->dir, "/r1/") != NULL, "first hit of an id wins across roots");
    ok(e != NULL && strcmp(e->source, "CODENIB_SKILLS_PATH") == 0, "its source is recorded");
    ok(cn_registry_find(reg, "fx_good") != NULL, "second root read");
    ok(cn_registry_find(reg, "fx_create_fails") != NULL, "user directory read");
    {
        size_t dups = 0;
        for (size_t i = 0; i < reg->n_entries; i++)
            if (reg->entries[i]->state == CN_STATE_DUPLICATE) {
                dups++;
                has_str(reg->entries[i]->reason, "/r1/fx_dup_b", "duplicate reason names the winner");
            }
        is_int(dups, 1, "the later fx_dup is reported as a duplicate");
    }

    /* typed contexts: without a repository a file read fails, saying why */
    {
        json_object *args = json_tokener_parse("{\"text\": \"t\", \"file\": \"x\"}"), *res = NULL;
        is_int(cn_registry_invoke(reg, "fx_good", args, NULL, &res), CN_ENOCONTEXT, "no context: refused at run time");
        has_str(cn_error_last()->message, "skill 'fx_good' was run without a context; it needs a repository",
                "saying what is missing");
        {
            cn_skill_context ctx;
            memset(&ctx, 0, sizeof ctx);
            ctx.kind = CN_SKILL_CUSTOM;
            is_int(cn_registry_set_context(reg, &ctx), 0, "custom context set");
            cn_entry_unload(cn_registry_find(reg, "fx_good"));
            is_int(cn_registry_invoke(reg, "fx_good", args, NULL, &res), CN_ENOCONTEXT, "context without repository");
            has_str(cn_error_last()->message, "needs a repository (pass --repo DIR) in its custom context",
                    "naming the context kind");
        }
        {
            cn_skill_context ctx;
            memset(&ctx, 0, sizeof ctx);
            ctx.kind = 42;
            is_int(cn_registry_set_context(reg, &ctx), CN_EINVAL, "unknown context kind refused");
        }
        json_object_put(args);
    }

    cn_registry_free(reg);
    unsetenv("CODENIB_SKILLS_PATH");
    free(env);
    {
        char *cmd = NULL;
        cn_buf b = CN_BUF_INIT;
        cn_buf_printf(&b, "rm -rf '%s'", base);
        cmd = cn_buf_steal(&b);
        if (system(cmd) != 0) diag("could not remove %s", base);
        free(cmd);
    }
    free(fx_all);
    free(r1);
    free(r2);
    free(home_skills);
}

static void test_flow(void)
{
    cn_registry *reg = NULL;
    cn_registry_new(&reg);
    cn_registry_register(reg, meta_a, NULL, echo_fn, NULL, NULL);
    cn_registry_register(reg,
                         "{\"skill_id\": \"ranker\", \"skill_type\": \"rerank\", \"inputs\": ["
                         "{\"name\": \"query\", \"type_hint\": \"str\"},"
                         "{\"name\": \"nodes\", \"type_hint\": \"List[QueriedNode]\"}]}",
                         NULL, echo_fn, NULL, NULL);
    cn_registry_register(reg,
                         "{\"skill_id\": \"joiner\", \"inputs\": [{\"name\": \"texts\", \"type_hint\": \"List[str]\"}]}",
                         NULL, echo_fn, NULL, NULL);
    is_int(cn_registry_check_flow(reg, "alpha", "ranker", "nodes"), 0, "search output feeds a reranker");
    is_int(cn_registry_check_flow(reg, "alpha", "ranker", NULL), 0, "some input of the reranker fits");
    is_int(cn_registry_check_flow(reg, "alpha", "joiner", NULL), CN_ETYPE, "nodes do not fit a list of strings");
    has_str(cn_error_last()->message, "the output of alpha (List[QueriedNode]) fits no input of joiner: texts",
            "mismatch message");
    is_int(cn_registry_check_flow(reg, "alpha", "ranker", "query"), CN_ETYPE, "nodes do not fit a query");
    is_int(cn_registry_check_flow(reg, "alpha", "ranker", "zzz"), CN_ENOTFOUND, "unknown input");
    is_int(cn_registry_check_flow(reg, "ghost", "ranker", NULL), CN_ENOTFOUND, "unknown skill");
    cn_registry_free(reg);
}

int main(void)
{
    test_inprocess();
    test_search_path();
    test_flow();
    return tap_done();
}
