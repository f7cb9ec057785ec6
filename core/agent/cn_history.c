/* SPDX-License-Identifier: Apache-2.0 */
/* Chat history with a token budget.  Eviction works on groups: an
 * assistant message that calls tools and the tool results answering it
 * leave together, so the model never sees a result without its call (an
 * API error on every OpenAI-compatible server). */
#include <stdlib.h>

#include "cn_agent_support.h"

void cn_history_init(cn_history *h)
{
    h->items = NULL;
    h->len = 0;
    h->cap = 0;
}

void cn_history_clear(cn_history *h)
{
    for (size_t i = 0; i < h->len; i++) json_object_put(h->items[i]);
    h->len = 0;
}

void cn_history_free(cn_history *h)
{
    cn_history_clear(h);
    free(h->items);
    cn_history_init(h);
}

int cn_history_add(cn_history *h, json_object *msg)
{
    if (!json_object_is_type(msg, json_type_object)) {
        json_object_put(msg);
        return cn_error_set(CN_EINVAL, "chat history: a message must be a JSON object");
    }
    if (h->len == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 16;
        json_object **n = realloc(h->items, cap * sizeof *n);
        if (n == NULL) {
            json_object_put(msg);
            return cn_error_set(CN_ENOMEM, "chat history: out of memory");
        }
        h->items = n;
        h->cap = cap;
    }
    h->items[h->len++] = msg;
    return 0;
}

int cn_history_extend(cn_history *h, json_object *msgs)
{
    if (msgs == NULL) return 0;
    if (!json_object_is_type(msgs, json_type_array))
        return cn_error_set(CN_EINVAL, "chat history: expected an array of messages");
    for (size_t i = 0; i < json_object_array_length(msgs); i++) {
        int rc = cn_history_add(h, json_object_get(json_object_array_get_idx(msgs, i)));
        if (rc < 0) return cn_error_prefix("chat history message %zu", i);
    }
    return 0;
}

json_object *cn_history_messages(const cn_history *h)
{
    json_object *a = json_object_new_array();
    for (size_t i = 0; i < h->len; i++) json_object_array_add(a, json_object_get(h->items[i]));
    return a;
}

static size_t text_chars(json_object *v)
{
    size_t n = 0;
    if (v == NULL) return 0;
    if (json_object_is_type(v, json_type_string)) return (size_t)json_object_get_string_len(v);
    if (json_object_is_type(v, json_type_array)) {
        /* content parts: [{"type":"text","text":...}, ...] */
        for (size_t i = 0; i < json_object_array_length(v); i++) {
            json_object *part = json_object_array_get_idx(v, i), *t = NULL;
            if (json_object_object_get_ex(part, "text", &t)) n += text_chars(t);
        }
        return n;
    }
    return strlen(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
}

size_t cn_tokens_estimate(json_object *message)
{
    json_object *v = NULL;
    size_t chars = 0;

    if (message == NULL) return 0;
    if (json_object_object_get_ex(message, "content", &v)) chars += text_chars(v);
    if (json_object_object_get_ex(message, "tool_call_id", &v)) chars += text_chars(v);
    if (json_object_object_get_ex(message, "tool_calls", &v) && json_object_is_type(v, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(v); i++) {
            json_object *fn = NULL, *x = NULL;
            if (!json_object_object_get_ex(json_object_array_get_idx(v, i), "function", &fn)) continue;
            if (json_object_object_get_ex(fn, "name", &x)) chars += text_chars(x);
            if (json_object_object_get_ex(fn, "arguments", &x)) chars += text_chars(x);
        }
    }
    return 4 + chars / 4;
}

size_t cn_history_tokens(const cn_history *h)
{
    size_t n = 0;
    for (size_t i = 0; i < h->len; i++) n += cn_tokens_estimate(h->items[i]);
    return n;
}

static const char *role_of(json_object *m)
{
    json_object *r = NULL;
    return json_object_object_get_ex(m, "role", &r) ? json_object_get_string(r) : "";
}

static bool has_tool_calls(json_object *m)
{
    json_object *c = NULL;
    return strcmp(role_of(m), "assistant") == 0 && json_object_object_get_ex(m, "tool_calls", &c) &&
           json_object_is_type(c, json_type_array) && json_object_array_length(c) > 0;
}

/* One past the last message of the group starting at i: a tool-calling
 * assistant message takes the tool messages that follow it. */
static size_t group_end(const cn_history *h, size_t i)
{
    size_t j = i + 1;
    if (has_tool_calls(h->items[i]))
        while (j < h->len && strcmp(role_of(h->items[j]), "tool") == 0) j++;
    else if (strcmp(role_of(h->items[i]), "tool") == 0)
        /* a stray tool result (its call already gone): take its siblings */
        while (j < h->len && strcmp(role_of(h->items[j]), "tool") == 0) j++;
    return j;
}

/* Where the protected tail starts: the last `keep` non-system messages,
 * and never fewer than one, since the message just added is what the model
 * must answer (even when it alone exceeds the budget). */
static size_t tail_index(const cn_history *h, size_t keep)
{
    size_t i = h->len, seen = 0;
    if (keep == 0) keep = 1;
    while (i > 0 && seen < keep) {
        i--;
        if (strcmp(role_of(h->items[i]), "system") != 0) seen++;
    }
    return i;
}

int cn_history_trim(cn_history *h, size_t max_tokens, size_t keep_last)
{
    size_t total, tail_start, i = 0, w = 0;
    bool *drop;
    int evicted = 0;

    if (max_tokens == 0 || h->len == 0) return 0;
    total = cn_history_tokens(h);
    if (total <= max_tokens) return 0;
    tail_start = tail_index(h, keep_last);
    drop = calloc(h->len, sizeof *drop);
    if (drop == NULL) return cn_error_set(CN_ENOMEM, "chat history: out of memory");
    while (i < tail_start && total > max_tokens) {
        size_t end;
        if (strcmp(role_of(h->items[i]), "system") == 0) {
            i++;
            continue;
        }
        end = group_end(h, i);
        if (end > tail_start) break;  /* the group reaches into the kept tail */
        for (size_t k = i; k < end; k++) {
            drop[k] = true;
            total -= cn_tokens_estimate(h->items[k]);
        }
        i = end;
    }
    for (size_t k = 0; k < h->len; k++) {
        if (drop[k]) {
            json_object_put(h->items[k]);
            evicted++;
        } else {
            h->items[w++] = h->items[k];
        }
    }
    h->len = w;
    free(drop);
    return evicted;
}
