/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for core/config/cn_config.c: the layers (defaults, system
 * file, user file, environment) merged in order with each value's source,
 * per-skill defaults merged parameter by parameter, errors with
 * file:line:col, what goes into the environment, and where indexes live. */
#include "config/cn_config.h"
#include "util/cn_util.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[] = "/tmp/cn-config-XXXXXX";
static char sys_file[700], user_file[700];

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        printf("Bail out! cannot write %s\n", path);
        exit(1);
    }
    fputs(text, f);
    fclose(f);
}

static void clean_env(void)
{
    static const char *const vars[] = {"CODENIB_MODEL", "CODENIB_BASE_URL", "OPENAI_BASE_URL",
                                       "CODENIB_API_KEY", "OPENAI_API_KEY", "CODENIB_HOME",
                                       "XDG_CACHE_HOME", "TEAM_KEY"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) unsetenv(vars[i]);
}

static cn_config *load_ok(const char *what)
{
    cn_config *c = NULL;
    cn_error_clear();
    if (cn_config_load(&c) < 0) diag("%s: %s", what, cn_error_last()->message);
    ok(c != NULL, what);
    return c;
}

static void fails(int code, const char *msg_part, const char *what)
{
    cn_config *c = (cn_config *)&c;
    char label[256];
    int rc;
    cn_error_clear();
    rc = cn_config_load(&c);
    snprintf(label, sizeof label, "%s: code", what);
    is_int(rc, code, label);
    snprintf(label, sizeof label, "%s: message", what);
    has_str(cn_error_last()->message, msg_part, label);
    ok(c == NULL, "out reset on error");
}

static void test_defaults(void)
{
    const char *src;
    cn_config *c = load_ok("loads with no file");
    ok(cn_config_string(c, "model", &src) == NULL, "no model by default (offline)");
    is_str(cn_config_string(c, "vector_store", &src), "vec-flat", "default vector store");
    is_str(src, "default", "its source is the default");
    is_str(cn_config_string(c, "base_url", NULL), "https://api.openai.com/v1", "default base URL");
    cn_config_free(c);
}

static void test_layers(void)
{
    const char *src;
    cn_config *c;
    json_object *d, *v, *j;
    char want[900];

    write_file(sys_file, "model: sys-model\nembedder: sys-embed\nbase_url: http://sys\n"
                         "skills:\n  bm25_search:\n    top_k: 3\n    filter_test: true\n");
    write_file(user_file, "# mine\nembedder: user-embed\nskills:\n  bm25_search: {top_k: 2}\n"
                          "  other: {x: 1}\n");
    c = load_ok("loads both files");
    is_str(cn_config_string(c, "model", &src), "sys-model", "the system file's model stays");
    snprintf(want, sizeof want, "%s:1", sys_file);
    is_str(src, want, "its source is system file:line");
    is_str(cn_config_string(c, "embedder", &src), "user-embed", "the user file wins");
    snprintf(want, sizeof want, "%s:2", user_file);
    is_str(src, want, "its source is user file:line");
    d = cn_config_skill_defaults(c, "bm25_search");
    ok(json_object_object_get_ex(d, "top_k", &v) && json_object_get_int(v) == 2, "per-skill: the user's top_k");
    ok(json_object_object_get_ex(d, "filter_test", &v) && json_object_get_boolean(v),
       "per-skill: the system's other parameter kept (merged by parameter)");
    json_object_put(d);
    d = cn_config_skill_defaults(c, "nobody");
    is_int(json_object_object_length(d), 0, "a skill without defaults: empty");
    json_object_put(d);
    j = cn_config_to_json(c);
    ok(j != NULL && json_object_object_get_ex(j, "files", &v) && json_object_array_length(v) == 2,
       "to_json lists both files");
    has_str(json_object_to_json_string(j), "\"index_home\"", "to_json says where indexes live");
    json_object_put(j);
    cn_config_free(c);

    /* the environment wins over both files */
    setenv("CODENIB_MODEL", "env-model", 1);
    setenv("OPENAI_BASE_URL", "http://openai-env", 1);
    c = load_ok("loads with the environment");
    is_str(cn_config_string(c, "model", &src), "env-model", "CODENIB_MODEL wins");
    is_str(src, "environment CODENIB_MODEL", "and says so");
    is_str(cn_config_string(c, "base_url", &src), "http://openai-env", "OPENAI_BASE_URL wins over files");
    setenv("CODENIB_BASE_URL", "http://codenib-env", 1);
    cn_config_free(c);
    c = load_ok("loads with both base URL variables");
    is_str(cn_config_string(c, "base_url", &src), "http://codenib-env", "CODENIB_BASE_URL wins over OPENAI_BASE_URL");
    cn_config_free(c);
    setenv("CODENIB_MODEL", "", 1);
    c = load_ok("an empty variable");
    is_str(cn_config_string(c, "model", NULL), "sys-model", "an empty CODENIB_MODEL is unset");
    cn_config_free(c);
    clean_env();
}

static void test_export_env(void)
{
    cn_config *c;
    write_file(sys_file, "model: m1\nbase_url: http://b1\napi_key_env: TEAM_KEY\n");
    unlink(user_file);
    setenv("TEAM_KEY", "k-123", 1);
    c = load_ok("loads for export");
    is_int(cn_config_export_env(c), 0, "export_env");
    is_str(getenv("CODENIB_MODEL"), "m1", "model exported");
    is_str(getenv("CODENIB_BASE_URL"), "http://b1", "base URL exported");
    is_str(getenv("CODENIB_API_KEY"), "k-123", "the key api_key_env names exported");
    cn_config_free(c);
    clean_env();
    setenv("CODENIB_MODEL", "mine", 1);
    setenv("OPENAI_API_KEY", "their-key", 1);
    setenv("TEAM_KEY", "k-123", 1);
    c = load_ok("loads with the environment set");
    cn_config_export_env(c);
    is_str(getenv("CODENIB_MODEL"), "mine", "a set variable is not overwritten");
    ok(getenv("CODENIB_API_KEY") == NULL, "no key exported over OPENAI_API_KEY");
    cn_config_free(c);
    clean_env();
    write_file(sys_file, "api_key_env: TEAM_KEY\n");
    c = load_ok("loads, key variable unset");
    cn_config_export_env(c);
    ok(getenv("CODENIB_API_KEY") == NULL, "an unset key variable exports nothing");
    ok(getenv("CODENIB_BASE_URL") == NULL, "the default base URL is not exported");
    cn_config_free(c);
    clean_env();
}

static void test_errors(void)
{
    char want[900];
    cn_config *c;
    unlink(sys_file);
    write_file(user_file, "model: [open\n");
    snprintf(want, sizeof want, "%s:2:1: YAML syntax error", user_file);
    fails(CN_EPARSE, want, "syntax error");
    write_file(user_file, "embedder: 7\n");
    snprintf(want, sizeof want, "%s:1:11: embedder must be a string, not int", user_file);
    fails(CN_ETYPE, want, "wrong type");
    write_file(user_file, "- a\n");
    fails(CN_ETYPE, "the configuration must be a mapping", "a list");
    write_file(user_file, "skills:\n  bm25_search: 5\n");
    snprintf(want, sizeof want, "%s:2:16: a skill's entry under skills must be a mapping", user_file);
    fails(CN_ETYPE, want, "a skill entry no mapping");
    write_file(user_file, "skills: nope\n");
    fails(CN_ETYPE, "skills must be a mapping", "skills no mapping");
    write_file(user_file, "a: 1\na: 2\n");
    fails(CN_EPARSE, "duplicate", "duplicate key");
    write_file(user_file, "\x01\xff\x00");
    fails(CN_EPARSE, user_file, "binary garbage");
    unlink(user_file);
    if (mkfifo(user_file, 0600) == 0) {
        fails(CN_EIO, "not a regular file", "a FIFO is refused, not opened");
        unlink(user_file);
    }
    mkdir(user_file, 0755);
    fails(CN_EIO, "not a regular file", "a directory is refused");
    rmdir(user_file);
    write_file(user_file, "");
    c = load_ok("an empty file is fine");
    cn_config_free(c);
    write_file(user_file, "model:\nskills:\n");
    c = load_ok("empty values are fine");
    ok(cn_config_string(c, "model", NULL) == NULL, "an empty model is not set");
    cn_config_free(c);
    write_file(user_file, "futuristic: 1\nmodel: m\n");
    c = load_ok("an unknown setting loads");
    ok(c && cn_config_warnings(c)->len == 1, "with one warning");
    if (c && cn_config_warnings(c)->len) has_str(cn_config_warnings(c)->items[0], "unknown setting 'futuristic'", "naming it");
    is_str(cn_config_string(c, "model", NULL), "m", "and the rest is read");
    cn_config_free(c);
    unlink(user_file);
}

static void test_index_home(void)
{
    char *h = NULL, want[900], old[900];
    const char *src;
    clean_env();
    setenv("CODENIB_HOME", "/somewhere/cn", 1);
    is_int(cn_config_index_home(&h, &src), 0, "CODENIB_HOME");
    is_str(h, "/somewhere/cn", "CODENIB_HOME wins");
    free(h);
    unsetenv("CODENIB_HOME");
    setenv("XDG_CACHE_HOME", "/xdg/cache", 1);
    is_int(cn_config_index_home(&h, &src), 0, "XDG_CACHE_HOME");
    is_str(h, "/xdg/cache/codenib", "under XDG_CACHE_HOME");
    free(h);
    unsetenv("XDG_CACHE_HOME");
    cn_config_index_home(&h, &src);
    snprintf(want, sizeof want, "%s/.cache/codenib", root);
    is_str(h, want, "default ~/.cache/codenib");
    free(h);
    snprintf(old, sizeof old, "%s/.codenib", root);
    mkdir(old, 0755);
    snprintf(want, sizeof want, "%s/.codenib/repositories", root);
    mkdir(want, 0755);
    cn_config_index_home(&h, &src);
    is_str(h, old, "an older ~/.codenib holding indexes is kept");
    has_str(src, "older", "and says why");
    free(h);
    rmdir(want);
    rmdir(old);
    unsetenv("HOME");
    is_int(cn_config_index_home(&h, &src), CN_EINVAL, "no HOME nor CODENIB_HOME: an error");
    setenv("HOME", root, 1);
}

static void test_current(void)
{
    cn_config *c = load_ok("loads for current");
    ok(cn_config_current() == NULL, "no current configuration until set");
    cn_config_set_current(c);
    ok(cn_config_current() == c, "set");
    cn_config_set_current(NULL);
    ok(cn_config_current() == NULL, "reset (and freed)");
}

int main(void)
{
    char d[600];
    if (mkdtemp(root) == NULL) {
        printf("Bail out! mkdtemp\n");
        return 1;
    }
    snprintf(d, sizeof d, "%s/etc", root);
    mkdir(d, 0755);
    snprintf(d, sizeof d, "%s/etc/codenib", root);
    mkdir(d, 0755);
    snprintf(sys_file, sizeof sys_file, "%s/config.yaml", d);
    snprintf(d, sizeof d, "%s/xdg", root);
    mkdir(d, 0755);
    snprintf(d, sizeof d, "%s/xdg/codenib", root);
    mkdir(d, 0755);
    snprintf(user_file, sizeof user_file, "%s/config.yaml", d);
    snprintf(d, sizeof d, "%s/etc", root);
    setenv("CODENIB_SYSCONFDIR", d, 1);
    snprintf(d, sizeof d, "%s/xdg", root);
    setenv("XDG_CONFIG_HOME", d, 1);
    setenv("HOME", root, 1);
    clean_env();

    test_defaults();
    test_layers();
    test_export_env();
    test_errors();
    test_index_home();
    test_current();

    unlink(sys_file);
    unlink(user_file);
    snprintf(d, sizeof d, "rm -rf '%s'", root);
    if (system(d) != 0) diag("could not remove %s", root);
    return tap_done();
}
