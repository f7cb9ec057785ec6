/* SPDX-License-Identifier: Apache-2.0 */
/* Tool results bounded for the model or client that reads them.  A client
 * refuses (or a model's context overflows on) a result of a megabyte, so
 * every result leaves here at most `cap` bytes long, and says what it left
 * out and how to ask for the rest. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cn_registry.h"

#define TEXT_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

/* Largest cut <= n that does not split a UTF-8 sequence of s. */
static size_t utf8_floor(const char *s, size_t n)
{
    size_t k = n;
    while (k > 0 && n - k < 3 && ((unsigned char)s[k] & 0xC0) == 0x80) k--;
    return ((unsigned char)s[k] & 0xC0) == 0x80 ? n : k;
}

char *cn_result_cut_text(char *text, size_t cap, const char *how)
{
    size_t n = text ? strlen(text) : 0, keep;
    const char *nl;
    cn_buf b = CN_BUF_INIT;

    if (cap == 0 || n <= cap) return NULL;
    keep = utf8_floor(text, cap);
    /* end at a line when one ends in the last quarter: no line shown half */
    for (nl = text + keep; nl > text + keep - keep / 4 && nl[-1] != '\n'; nl--) {}
    if (nl > text + keep - keep / 4 && nl > text) keep = (size_t)(nl - text);
    text[keep] = '\0';
    cn_buf_printf(&b, "[result cut at %zu bytes: %zu more bytes left out%s%s]", cap, n - keep,
                  how && *how ? "; " : "", how && *how ? how : "");
    return cn_buf_steal(&b);
}

/* "narrow the call: a lower top_k, return_content=false, ..." from the
 * inputs the skill has. */
static void narrowing(const cn_skill_meta *m, cn_buf *b)
{
    static const struct {
        const char *input, *say;
    } ways[] = {
        {"return_content", "return_content=false"},
        {"names_only", "names_only=true"},
        {"include_references", "include_references=false"},
        {"path_prefix", "a path_prefix"},
        {"kinds", "kinds"},
    };
    size_t n = 0;
    if (m == NULL) return;
    if (m->outputs.page_limit) {
        cn_buf_printf(b, "narrow the call: a lower %s", m->outputs.page_limit);
        n++;
    }
    for (size_t i = 0; i < sizeof ways / sizeof ways[0]; i++) {
        if (cn_meta_input(m, ways[i].input) == NULL) continue;
        cn_buf_printf(b, "%s%s", n ? ", " : "narrow the call: ", ways[i].say);
        n++;
    }
    if (n == 0) cn_buf_puts(b, "narrow the call: lower its limits");
}

/* The offset this call was made with (as the model wrote it). */
static long call_offset(const cn_skill_meta *m, json_object *args)
{
    json_object *v = NULL;
    if (m == NULL || m->outputs.page_limit == NULL || args == NULL ||
        !json_object_is_type(args, json_type_object) || !json_object_object_get_ex(args, "offset", &v) || v == NULL)
        return 0;
    if (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_string) ||
        json_object_is_type(v, json_type_double)) {
        long o = (long)json_object_get_int64(v);
        return o > 0 ? o : 0;
    }
    return 0;
}

/* The result with its list cut to k items, as text (a copy: the result is
 * left as it is). */
static char *with_first(json_object *result, json_object *list, size_t k)
{
    json_object *cut = json_object_new_array_ext((int)k), *shell = NULL;
    char *text;
    if (cut == NULL) return NULL;
    for (size_t i = 0; i < k; i++) json_object_array_add(cut, json_object_get(json_object_array_get_idx(list, i)));
    if (list == result) {
        text = cn_json_text(cut, TEXT_FLAGS);
        json_object_put(cut);
        return text;
    }
    if ((shell = json_object_new_object()) == NULL) {
        json_object_put(cut);
        return NULL;
    }
    json_object_object_foreach(result, key, val) {
        if (val == list) json_object_object_add(shell, key, json_object_get(cut));
        else json_object_object_add(shell, key, json_object_get(val));
    }
    json_object_put(cut);
    text = cn_json_text(shell, TEXT_FLAGS);
    json_object_put(shell);
    return text;
}

int cn_result_text(const cn_skill_meta *m, json_object *result, json_object *args, size_t cap, char **text,
                   char **note)
{
    json_object *list = NULL;
    size_t n, lo, hi;
    char *best = NULL;
    cn_buf b = CN_BUF_INIT;

    *note = NULL;
    if ((*text = cn_json_text(result, TEXT_FLAGS)) == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    if (cap == 0 || strlen(*text) <= cap) return 0;

    list = cn_params_result_list(m, result);
    n = list ? json_object_array_length(list) : 0;
    /* the most items that fit: 0 fits when 1 does not, so search 1..n-1 */
    for (lo = 0, hi = n; lo + 1 < hi;) {
        size_t mid = lo + (hi - lo) / 2;
        char *t = with_first(result, list, mid);
        if (t == NULL) {
            free(best);
            return cn_error_set(CN_ENOMEM, "out of memory");
        }
        if (strlen(t) <= cap) {
            free(best);
            best = t;
            lo = mid;
        } else {
            free(t);
            hi = mid;
        }
    }
    if (best != NULL && lo >= 1) {
        long off = call_offset(m, args);
        free(*text);
        *text = best;
        cn_buf_printf(&b, "[result cut to fit %zu bytes: %zu of %zu %s shown", cap, lo, n,
                      m && m->outputs.list_field && list != result ? m->outputs.list_field : "results");
        if (m != NULL && m->outputs.page_limit != NULL)
            cn_buf_printf(&b, "; call again with offset=%ld for the next ones, or ", off + (long)lo);
        else
            cn_buf_puts(&b, "; ");
        narrowing(m, &b);
        cn_buf_puts(&b, "]");
    } else {
        cn_buf how = CN_BUF_INIT;
        free(best);
        narrowing(m, &how);
        if (how.len) cn_buf_puts(&how, "; the JSON above is incomplete");
        *note = cn_result_cut_text(*text, cap, how.data);
        cn_buf_free(&how);
        return *note ? 0 : cn_error_set(CN_ENOMEM, "out of memory");
    }
    if (b.oom || (*note = cn_buf_steal(&b)) == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    return 0;
}
