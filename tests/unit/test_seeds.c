/* SPDX-License-Identifier: Apache-2.0 */
/* Seed extraction, the specificity test, the seed policy and the error
 * strings of a task text (core/agent/cn_seeds.c), with exact lists. */
#include <stdlib.h>
#include <string.h>

#include "agent/cn_seeds.h"
#include "tap.h"

/* "a|b|c" of a list, for one exact comparison per case. */
static char *joined(const cn_strv *v)
{
    cn_buf b = CN_BUF_INIT;
    cn_buf_puts(&b, "");
    for (size_t i = 0; i < v->len; i++) cn_buf_printf(&b, "%s%s", i ? "|" : "", v->items[i]);
    return cn_buf_steal(&b);
}

static void seeds_are(const char *text, const cn_strv *explicit_seeds, size_t limit, const char *want,
                      const char *what)
{
    cn_strv out;
    int n = cn_seeds_extract(text, explicit_seeds, limit, &out);
    char *got = joined(&out);
    is_str(got, want, what);
    is_int(n, (long long)out.len, "the count returned is the list's length");
    free(got);
    cn_strv_free(&out);
}

static void errors_are(const char *text, const char *want, const char *what)
{
    cn_strv out;
    char *got;
    cn_seeds_error_strings(text, 0, &out);
    got = joined(&out);
    is_str(got, want, what);
    free(got);
    cn_strv_free(&out);
}

static const char *const py_trace =
    "Traceback (most recent call last):\n"
    "  File \"pkg/a.py\", line 3, in outer\n"
    "    inner()\n"
    "  File \"pkg/b.py\", line 9, in inner\n"
    "    raise KeyError(\"no such key\")\n"
    "KeyError: 'no such key'\n";

static const char *const java_trace =
    "Exception in thread \"main\" java.lang.NullPointerException\n"
    "\tat com.acme.Service.start(Service.java:42)\n"
    "\tat com.acme.Main.main(Main.java:7)\n";

static void test_extract(void)
{
    cn_strv ex = CN_STRV_INIT;

    seeds_are("Fix `ConnectionPool.get` so it stops leaking", NULL, 0, "ConnectionPool.get", "a backtick name");
    seeds_are("calling `parse_config(path, strict=True)` raises", NULL, 0, "parse_config()",
              "a backtick call keeps the name and ()");
    seeds_are("django.db.models.Q objects compare wrong", NULL, 0, "django.db.models.Q", "a dotted name");
    seeds_are("see src/http/client.py:120 and ./utils.py.", NULL, 0, "src/http/client.py|utils.py",
              "paths, without line suffix, ./ or the full stop");
    seeds_are(py_trace, NULL, 0, "pkg/b.py|inner|pkg/a.py|outer|KeyError",
              "a Python traceback: the raising frame first, path then function");
    seeds_are(java_trace, NULL, 0,
              "com.acme.Service.start|Service.java|com.acme.Main.main|Main.java|java.lang.NullPointerException",
              "a Java stack trace: method and file of each frame");
    seeds_are("The HttpClient retries forever in send_request", NULL, 0, "HttpClient|send_request",
              "CamelCase and snake_case");
    seeds_are("Setting MAX_RETRIES or TIMEOUT has no effect, see the README and the API docs", NULL, 0,
              "MAX_RETRIES|TIMEOUT", "ALLCAPS kept, README and API are stopwords");
    seeds_are("NOTE: The TODO in FIXME is about HTTP and JSON", NULL, 0, "", "only stopwords: no seeds");
    seeds_are("alpha_one beta_two gamma_three delta_four", NULL, 2, "alpha_one|beta_two", "the limit");
    seeds_are("a_1 b_2 c_3 d_4 e_5 f_6 g_7 h_8 i_9 j_10", NULL, 0, "a_1|b_2|c_3|d_4|e_5|f_6|g_7|h_8",
              "limit 0 is the default, 8");
    cn_strv_push(&ex, "Pool.get");
    cn_strv_push(&ex, "  pool.GET ");
    cn_strv_push(&ex, "");
    seeds_are("`Pool.get` and pool_size", &ex, 0, "Pool.get|pool_size",
              "explicit seeds first, deduplicated case-insensitively, blanks skipped");
    cn_strv_free(&ex);
    seeds_are("see https://example.com/foo_bar and www.python.org or example.com about parse_qs", NULL, 0,
              "parse_qs", "URLs and domain names are no seeds");
    seeds_are("e.g. Python 3.8 and numpy 1.2 break np.float64 (i.e. v1.2)", NULL, 0, "np.float64",
              "abbreviations and versions are no seeds");
    seeds_are("thread-safe get_item and non-CamelCase", NULL, 0, "get_item|CamelCase",
              "hyphenated words are read as their parts");
    seeds_are("in pkg/pool.py:ConnectionPool, Base#close and ns::Widget::draw()", NULL, 0,
              "pkg/pool.py:ConnectionPool|Base#close|ns::Widget::draw()", "file:symbol, # and :: names");
    seeds_are("call inner() then `inner`", NULL, 0, "inner", "name() and name are one seed");
    seeds_are(NULL, NULL, 0, "", "NULL text: no seeds");
}

static void test_specific(void)
{
    static const struct {
        const char *seed;
        int want;
    } table[] = {
        {"pkg/pool.py", 1}, {"ns::Widget", 1}, {"Base#close", 1}, {"ConnectionPool.get", 1},
        {"os.path", 0}, {"example.com", 0}, {"www.python.org", 0}, {"setup.py", 1}, {"np.float64", 1},
        {"get_user", 1}, {"getUser", 1}, {"HTTPServer", 1}, {"TIMEOUT", 1}, {"IO", 0}, {"utf8", 0},
        {"Py3", 1}, {"helper", 0}, {"helper()", 0}, {"get_user()", 1}, {"`get_user`", 1}, {"'Pool.get'", 1},
        {"", 0}, {"two words", 0}, {"123", 0}, {"Pool", 0},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        char what[96];
        snprintf(what, sizeof what, "'%s' is %sspecific", table[i].seed, table[i].want ? "" : "not ");
        is_int(cn_seed_is_specific(table[i].seed), table[i].want, what);
    }
    ok(!cn_seed_is_specific(NULL), "NULL is not specific");
}

static void test_filter(void)
{
    cn_strv in = CN_STRV_INIT, out;
    char *got;
    cn_strv_push(&in, "helper");
    cn_strv_push(&in, "get_user");
    cn_strv_push(&in, "os.path");
    cn_strv_push(&in, "Pool.get");

    is_int(cn_seeds_filter(&in, "specific", &out), 2, "specific keeps two");
    got = joined(&out);
    is_str(got, "get_user|Pool.get", "specific keeps the order");
    free(got);
    cn_strv_free(&out);
    is_int(cn_seeds_filter(&in, " Specific ", &out), 2, "the policy ignores case and blanks");
    cn_strv_free(&out);
    is_int(cn_seeds_filter(&in, "all", &out), 4, "all keeps every seed");
    got = joined(&out);
    is_str(got, "helper|get_user|os.path|Pool.get", "all keeps the order");
    free(got);
    cn_strv_free(&out);
    is_int(cn_seeds_filter(&in, NULL, &out), 4, "NULL is all");
    cn_strv_free(&out);
    is_int(cn_seeds_filter(&in, "bogus", &out), CN_EINVAL, "another policy is refused");
    has_str(cn_error_last()->message, "\"specific\"", "the message lists the policies");
    is_int(out.len, 0, "and leaves nothing");
    is_str(cn_seeds_policy_name("ALL"), "all", "policy names are normalised");
    ok(cn_seeds_policy_name("some") == NULL, "an unknown policy has no name");
    cn_strv_free(&in);
}

static void test_errors(void)
{
    errors_are(py_trace, "no such key", "a traceback's message once, the quoted paths left out");
    errors_are("raise ValueError(\"bad value: 3\")\nValueError: bad value: 3\n", "bad value: 3",
               "the message of a raise and of the last line are one");
    errors_are("I don't know why it's 'broken badly' here", "broken badly", "apostrophes are no quotes");
    errors_are("RuntimeError: event loop is closed", "event loop is closed", "the text after SomeError:");
    errors_are("say \"hi\" and 'x'", "", "a quoted word is no message");
    errors_are(NULL, "", "NULL text: nothing");
}

/* Bad input never crashes or overruns: a long identifier, unterminated
 * quotes and backticks, and 20000 bytes of noise made of the characters
 * the scanners look for. */
static void test_robust(void)
{
    static const char alphabet[] = "aZ_09./:#-$()`'\" \n\tFile at Error: x";
    char longname[400], *noise = malloc(20001);
    unsigned state = 12345;
    cn_strv out;
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    longname[3] = '_';
    seeds_are(longname, NULL, 0, "", "a 399-character name is no seed");
    seeds_are("`foo_bar and \"unterminated 'quote", NULL, 0, "foo_bar", "an unterminated backtick is read as text");
    seeds_are("File \"pkg/x.py", NULL, 0, "pkg/x.py", "a cut frame still gives its path token");
    for (size_t i = 0; i < 20000; i++) {
        state = state * 1103515245u + 12345u;
        noise[i] = alphabet[(state >> 16) % (sizeof alphabet - 1)];
    }
    noise[20000] = '\0';
    ok(cn_seeds_extract(noise, NULL, 50, &out) >= 0 && out.len <= 50, "noise: at most the limit");
    for (size_t i = 0; i < out.len; i++)
        if (strlen(out.items[i]) == 0 || strlen(out.items[i]) > 256) ok(0, "noise: a seed out of bounds");
    cn_strv_free(&out);
    ok(cn_seeds_error_strings(noise, 50, &out) >= 0 && out.len <= 50, "noise: error strings at most the limit");
    cn_strv_free(&out);
    free(noise);
}

int main(void)
{
    test_extract();
    test_specific();
    test_filter();
    test_errors();
    test_robust();
    return tap_done();
}
