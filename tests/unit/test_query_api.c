/* SPDX-License-Identifier: Apache-2.0 */
/* cn_query(), the public form of `codenib query`: where the index comes
 * from (exactly one source), and an offline answer with its contract. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include <codenib/codenib.h>

#include "tap.h"
#include "util/cn_util.h"

static cn_query_options opts(void)
{
    cn_query_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = (uint32_t)sizeof o;
    return o;
}

static void test_sources(void)
{
    cn_query_options o = opts();
    char *res = (char *)"untouched";

    is_int(cn_query(&o, "where?", &res), CN_EINVAL, "no source: refused");
    has_str(cn_last_error()->message, "exactly one of", "... saying a query needs exactly one source");
    ok(res == NULL, "... and no result");
    o.repo_path = ".";
    o.manifest_path = "x/repo_manifest.json";
    is_int(cn_query(&o, "where?", &res), CN_EINVAL, "two sources: refused");
    has_str(cn_last_error()->message, "(2 given)", "... counting them");
    o = opts();
    o.manifest_path = "x/repo_manifest.json";
    o.cache_dir = "/tmp";
    is_int(cn_query(&o, "where?", &res), CN_EINVAL, "a cache directory without a repository: refused");
    o = opts();
    o.struct_size = 8;
    o.repo_path = ".";
    is_int(cn_query(&o, "where?", &res), CN_EINVAL, "a truncated options struct: refused");
    has_str(cn_last_error()->message, "struct_size", "... naming struct_size");
    is_int(cn_query(NULL, "where?", &res), CN_EINVAL, "no options: refused");
}

static void test_offline(const char *builddir, const char *srcdir)
{
    char tmpl[] = "/tmp/cn-query-api.XXXXXX", cmd[4096], *tmp = mkdtemp(tmpl), *res = NULL, *repo, *cache;
    cn_query_options o = opts();
    json_object *j, *v;

    if (tmp == NULL) {
        ok(0, "temporary directory");
        return;
    }
    repo = cn_path_join(tmp, "repo");
    cache = cn_path_join(tmp, "cache");
    snprintf(cmd, sizeof cmd, "cp -R '%s/tests/fixtures/graph/python' '%s'", srcdir, repo);
    ok(system(cmd) == 0, "fixture repository copied");
    o.repo_path = repo;
    o.cache_dir = cache;
    o.no_compile = 1;
    is_int(cn_query(&o, "where is ConnectionPool._check?", &res), CN_ENOTFOUND,
           "no_compile on a repository never compiled: not found");
    o.no_compile = 0;
    is_int(cn_query(&o, "ConnectionPool._check fails on an int size", &res), 0,
           "a repository is compiled on first use and answered offline");
    j = json_tokener_parse(res ? res : "null");
    is_str(json_object_object_get_ex(j, "mode", &v) ? json_object_get_string(v) : NULL, "offline", "mode offline");
    ok(json_object_object_get_ex(j, "contract", &v) && json_object_object_get_ex(v, "files", &v) &&
           json_object_array_length(v) > 0 && strcmp(json_object_get_string(json_object_array_get_idx(v, 0)),
                                                     "pkg/pool.py") == 0,
       "the contract's first file is pkg/pool.py");
    has_str(json_object_object_get_ex(j, "answer", &v) ? json_object_get_string(v) : NULL,
            "Symbols: pkg/pool.py:ConnectionPool._check", "the answer names the method");
    json_object_put(j);
    cn_free(res);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0) diag("could not remove %s", tmp);
    free(repo);
    free(cache);
    (void)builddir;
}

int main(void)
{
    const char *b = getenv("CN_BUILDDIR"), *s = getenv("CN_SRCDIR");
    char *py;
    test_sources();
    if (b == NULL || s == NULL) {
        diag("CN_BUILDDIR / CN_SRCDIR not set: the offline run is left out");
        return tap_done();
    }
    py = cn_path_join(b, "_plugins/lang-python/lang_python.so");
    if (access(py, R_OK) == 0) test_offline(b, s);
    else diag("the python backend was not built: the offline run is left out");
    free(py);
    return tap_done();
}
