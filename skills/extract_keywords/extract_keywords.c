/* SPDX-License-Identifier: Apache-2.0 */
/* extract_keywords: the search terms of a problem statement, picked by a
 * chat model with structured output ({"keywords": [string]}) and cleaned
 * here: strings only, trimmed, without repeats (case-insensitive, first
 * spelling kept), at most max_keywords. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include <codenib/skill.h>

#include "cn_skill_util.h"

#define MAX_KEYWORDS 200
#define MAX_KEYWORD_LEN 256

static const char system_prompt[] =
    "You pick search terms out of problem statements about a software repository: bug reports, "
    "feature requests, failing tests. Someone will look for each term in the repository's code, "
    "so keep only words that are likely to appear there literally.";

static const char instructions[] =
    "List the terms of the problem statement below that are most useful to find the code "
    "involved, most useful first:\n"
    "- file paths and file names, both as written and the bare name (src/http/client.py and "
    "client.py);\n"
    "- function and method names (parse_header, run_validators);\n"
    "- class names and module or package names;\n"
    "- precise technical terms: error and exception names, configuration keys, command-line "
    "options, messages quoted in the statement.\n"
    "Prefer the exact spelling of the statement. Leave out stopwords, generic programming words "
    "(function, class, error, value, bug, fix, code, test) and whole sentences.\n";

/* ------------------------------------------------------------ request --- */

/* response_format: {"keywords": [string]}, strict. */
static cn_json *keywords_format(const cn_json_services *J)
{
    static const char *const required[] = {"keywords", NULL};
    cn_json *props = J->new_object(), *kw = J->new_object(), *item = J->new_object();

    J->object_set(item, "type", J->new_string("string"));
    J->object_set(kw, "type", J->new_string("array"));
    J->object_set(kw, "items", item);
    J->object_set(kw, "description", J->new_string("search terms, most useful first"));
    J->object_set(props, "keywords", kw);
    return cn_su_json_schema_format(J, "keyword_extraction", cn_su_schema_object(J, props, required));
}

static char *request(const cn_host *h, const char *statement, size_t max)
{
    size_t len = sizeof instructions + strlen(statement) + 128;
    char *user = h->alloc(len), *text;

    if (user == NULL) return NULL;
    snprintf(user, len, "%sGive at most %zu terms.\n\nProblem statement:\n%s", instructions, max, statement);
    text = cn_su_chat_request(h, system_prompt, user, keywords_format(h->json));
    h->free(user);
    return text;
}

/* ------------------------------------------------------------ cleaning --- */

static int same_ci(const char *a, size_t alen, const char *b)
{
    if (strlen(b) != alen) return 0;
    for (size_t i = 0; i < alen; i++)
        if (tolower((unsigned char)a[i]) != tolower((unsigned char)b[i])) return 0;
    return 1;
}

/* Trims whitespace, then one pair of quotes or backticks around the term
 * (models like to write `name`), then whitespace again. */
static const char *trim(const char *s, size_t *len)
{
    size_t n = strlen(s);
    for (int pass = 0; pass < 2; pass++) {
        while (n > 0 && isspace((unsigned char)*s)) s++, n--;
        while (n > 0 && isspace((unsigned char)s[n - 1])) n--;
        if (pass == 0 && n >= 2 && s[0] == s[n - 1] && (s[0] == '`' || s[0] == '"' || s[0] == '\'')) s++, n -= 2;
    }
    *len = n;
    return s;
}

static int has_keyword(const cn_json_services *J, const cn_json *out, const char *s, size_t n)
{
    for (size_t i = 0; i < J->array_length(out); i++)
        if (same_ci(s, n, J->get_string(J->array_get(out, i)))) return 1;
    return 0;
}

static cn_json *clean(const cn_json_services *J, const cn_json *raw, size_t max)
{
    cn_json *out = J->new_array();
    for (size_t i = 0; i < J->array_length(raw) && J->array_length(out) < max; i++) {
        const char *s = J->get_string(J->array_get(raw, i));
        size_t n = 0;
        if (s == NULL) continue;
        s = trim(s, &n);
        /* an empty term, or a paragraph rather than a term */
        if (n == 0 || n > MAX_KEYWORD_LEN || memchr(s, '\n', n) != NULL) continue;
        if (!has_keyword(J, out, s, n)) J->array_append(out, J->new_string_len(s, n));
    }
    return out;
}

/* ------------------------------------------------------------ answer --- */

/* The "keywords" array of the answer (a reference of its own), or *kw
 * NULL when the answer has none. */
static int keywords_of(const cn_host *h, const char *content, cn_json **kw, cn_error *err)
{
    const cn_json_services *J = h->json;
    cn_json *root, *arr;
    int rc = cn_su_answer_object(h, content, &root, err);

    *kw = NULL;
    if (rc < 0) return rc;
    arr = J->object_get(root, "keywords");
    if (J->type(arr) == CN_JSON_ARRAY) *kw = J->get(arr);
    J->put(root);
    return 0;
}

static int answer(const cn_host *h, const cn_su_answer *a, size_t max, char **result_json, cn_error *err)
{
    cn_json *kw, *out;
    int rc = keywords_of(h, a->content, &kw, err);

    if (rc < 0) return rc;
    if (kw == NULL)
        return cn_su_answer_error(h, a, "", "is not a keyword object {\"keywords\": [...]}",
                                  " (does the model support structured output (response_format json_schema)?)",
                                  err);
    out = h->json->new_object();
    h->json->object_set(out, "keywords", clean(h->json, kw, max));
    h->json->put(kw);
    return cn_su_emit(h, out, result_json, err);
}

/* ------------------------------------------------------------ the run --- */

static int ek_run(const cn_host *h, const cn_skill_context *ctx, const cn_json *args, char **result_json,
                  cn_error *err)
{
    const char *statement = cn_su_arg_str(h, args, "problem_statement");
    int64_t max = cn_su_arg_int(h, args, "max_keywords", 20);
    cn_su_answer a;
    char *req;
    size_t n;
    int rc;

    if ((rc = h->context_require(h, ctx, CN_NEEDS_CHAT, err)) < 0) return rc;
    if ((rc = cn_su_require_model(h, err)) < 0) return rc;
    if (statement == NULL) return h->error_set(err, CN_EINVAL, "argument 'problem_statement' must be a string");
    if (max < 1 || max > MAX_KEYWORDS)
        return h->error_set(err, CN_EINVAL, "argument 'max_keywords' must be between 1 and %d, got %lld",
                            MAX_KEYWORDS, (long long)max);
    (void)trim(statement, &n);
    if (n == 0) {
        /* nothing to extract from: no model call */
        cn_json *out = h->json->new_object();
        h->json->object_set(out, "keywords", h->json->new_array());
        return cn_su_emit(h, out, result_json, err);
    }
    if ((req = request(h, statement, (size_t)max)) == NULL) return h->error_set(err, CN_ENOMEM, "out of memory");
    rc = cn_su_chat_ask(h, ctx, req, "extract keywords", "", &a, err);
    h->free(req);
    if (rc < 0) return rc;
    rc = answer(h, &a, (size_t)max, result_json, err);
    h->json->put(a.msg);
    return rc;
}

static int ek_create(const cn_host *host, const cn_skill_context *ctx, cn_executor **out, cn_error *err)
{
    return cn_su_simple_executor(host, ctx, ek_run, out, err);
}

CN_SKILL_DEFINE(extract_keywords, "extract_keywords", "0.1.0", ek_create);
