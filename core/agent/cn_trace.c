/* SPDX-License-Identifier: Apache-2.0 */
/* The run trace (JSON Lines), the context ledger (what was offered to the
 * model and what became of it) and totals over runs.  Events are flushed
 * one by one so that a run that crashes still leaves a readable trace. */
#include <errno.h>
#include <stdlib.h>

#include "../plugin/cn_host.h"
#include "cn_agent_support.h"

/* ---- trace --------------------------------------------------------------- */

int cn_trace_open(cn_trace *t, const char *path)
{
    memset(t, 0, sizeof *t);
    if (path == NULL || *path == '\0') return cn_error_set(CN_EINVAL, "trace: no path given");
    t->fp = fopen(path, "w");
    if (t->fp == NULL)
        return cn_error_set(CN_EIO, "trace: cannot open %s for writing (%s); check the directory exists",
                            path, strerror(errno));
    t->path = cn_strdup(path);
    return 0;
}

int cn_trace_event(cn_trace *t, json_object *ev)
{
    char *line;
    int bad;
    if (t == NULL) return 0;
    if (t->collected != NULL && json_object_is_type(ev, json_type_object))
        json_object_array_add(t->collected, json_object_get(ev));
    if (t->fp == NULL) return 0;
    if (!json_object_is_type(ev, json_type_object))
        return cn_error_set(CN_EINVAL, "trace %s: an event must be a JSON object", t->path);
    if ((line = cn_json_text(ev, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)) == NULL)
        return cn_error_prefix("trace %s", t->path);
    bad = fputs(line, t->fp) == EOF || fputc('\n', t->fp) == EOF || fflush(t->fp) != 0;
    free(line);
    if (bad) return cn_error_set(CN_EIO, "trace %s: write failed (%s)", t->path, strerror(errno));
    t->events++;
    return 0;
}

void cn_trace_close(cn_trace *t)
{
    if (t == NULL) return;
    if (t->fp) fclose(t->fp);
    json_object_put(t->collected);
    free(t->path);
    memset(t, 0, sizeof *t);
}

/* ---- ledger -------------------------------------------------------------- */

static const char *const state_names[] = {"offered", "consumed", "expired", "summarized"};

const char *cn_ledger_state_name(cn_ledger_state s)
{
    return (unsigned)s <= CN_LEDGER_SUMMARIZED ? state_names[s] : "?";
}

int cn_ledger_offer(cn_ledger *l, const char *kind, const char *source, const char *ref, int turn,
                    size_t tokens)
{
    cn_ledger_entry *e;
    if (l->len == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        cn_ledger_entry *n = realloc(l->items, cap * sizeof *n);
        if (n == NULL) return cn_error_set(CN_ENOMEM, "context ledger: out of memory");
        l->items = n;
        l->cap = cap;
    }
    e = &l->items[l->len];
    memset(e, 0, sizeof *e);
    e->id = (int)l->len + 1;
    e->kind = cn_strdup(kind ? kind : "context");
    e->source = cn_strdup(source);
    e->ref = cn_strdup(ref);
    e->turn_offered = turn;
    e->tokens = tokens;
    e->state = CN_LEDGER_OFFERED;
    e->turn_changed = -1;
    l->len++;
    return e->id;
}

static int change(cn_ledger *l, int id, int turn, const char *by, cn_ledger_state to)
{
    cn_ledger_entry *e;
    if (id < 1 || (size_t)id > l->len)
        return cn_error_set(CN_ENOTFOUND, "context ledger: no entry %d (there are %zu)", id, l->len);
    e = &l->items[id - 1];
    if (e->state != CN_LEDGER_OFFERED)
        return cn_error_set(CN_EINVAL, "context ledger: entry %d is already %s (turn %d); cannot mark it %s", id,
                            cn_ledger_state_name(e->state), e->turn_changed, cn_ledger_state_name(to));
    e->state = to;
    e->turn_changed = turn;
    free(e->by);
    e->by = cn_strdup(by);
    return 0;
}

int cn_ledger_mark_consumed(cn_ledger *l, int id, int turn, const char *consumer)
{
    return change(l, id, turn, consumer, CN_LEDGER_CONSUMED);
}

int cn_ledger_mark_expired(cn_ledger *l, int id, int turn, const char *reason)
{
    return change(l, id, turn, reason, CN_LEDGER_EXPIRED);
}

int cn_ledger_mark_summarized(cn_ledger *l, int id, int turn, const char *reason)
{
    return change(l, id, turn, reason, CN_LEDGER_SUMMARIZED);
}

cn_ledger_entry *cn_ledger_find_ref(cn_ledger *l, const char *ref)
{
    if (ref == NULL) return NULL;
    for (size_t i = 0; i < l->len; i++)
        if (l->items[i].ref && strcmp(l->items[i].ref, ref) == 0) return &l->items[i];
    return NULL;
}

static json_object *str_or_null(const char *s)
{
    return s ? json_object_new_string(s) : NULL;
}

json_object *cn_ledger_to_json(const cn_ledger *l)
{
    json_object *o = json_object_new_object(), *counts = json_object_new_object();
    json_object *entries = json_object_new_array();
    size_t n[CN_LEDGER_SUMMARIZED + 1] = {0};

    for (size_t i = 0; i < l->len; i++) {
        const cn_ledger_entry *e = &l->items[i];
        json_object *x = json_object_new_object();
        n[e->state]++;
        json_object_object_add(x, "id", json_object_new_int(e->id));
        json_object_object_add(x, "kind", str_or_null(e->kind));
        json_object_object_add(x, "source", str_or_null(e->source));
        json_object_object_add(x, "ref", str_or_null(e->ref));
        json_object_object_add(x, "turn_offered", json_object_new_int(e->turn_offered));
        json_object_object_add(x, "tokens", json_object_new_int64((int64_t)e->tokens));
        json_object_object_add(x, "state", json_object_new_string(cn_ledger_state_name(e->state)));
        json_object_object_add(x, "turn_changed", e->turn_changed < 0 ? NULL : json_object_new_int(e->turn_changed));
        json_object_object_add(x, "by", str_or_null(e->by));
        json_object_array_add(entries, x);
    }
    for (int s = 0; s <= CN_LEDGER_SUMMARIZED; s++)
        json_object_object_add(counts, state_names[s], json_object_new_int64((int64_t)n[s]));
    json_object_object_add(o, "counts", counts);
    json_object_object_add(o, "entries", entries);
    return o;
}

void cn_ledger_free(cn_ledger *l)
{
    for (size_t i = 0; i < l->len; i++) {
        free(l->items[i].kind);
        free(l->items[i].source);
        free(l->items[i].ref);
        free(l->items[i].by);
    }
    free(l->items);
    l->items = NULL;
    l->len = l->cap = 0;
}

/* ---- totals -------------------------------------------------------------- */

void cn_agent_totals_init(cn_agent_totals *t)
{
    t->runs = 0;
    t->turns = -1;
    t->prompt_tokens = t->completion_tokens = t->cached_tokens = -1;
}

static bool usage_int(json_object *usage, const char *key, long long *v)
{
    json_object *x = NULL;
    if (!json_object_object_get_ex(usage, key, &x) || x == NULL) return false;
    if (!json_object_is_type(x, json_type_int) && !json_object_is_type(x, json_type_double)) return false;
    *v = (long long)json_object_get_int64(x);
    return true;
}

static void add_known(long long *total, bool known, long long v)
{
    if (!known) return;
    *total = (*total < 0 ? 0 : *total) + v;
}

void cn_agent_totals_add(cn_agent_totals *t, int turns, json_object *usage)
{
    long long v = 0;
    json_object *details = NULL;
    bool known;

    t->runs++;
    if (turns >= 0) t->turns = (t->turns < 0 ? 0 : t->turns) + turns;
    if (!json_object_is_type(usage, json_type_object)) return;
    known = usage_int(usage, "prompt_tokens", &v);
    add_known(&t->prompt_tokens, known, v);
    known = usage_int(usage, "completion_tokens", &v);
    add_known(&t->completion_tokens, known, v);
    if (json_object_object_get_ex(usage, "prompt_tokens_details", &details) && details != NULL)
        known = usage_int(details, "cached_tokens", &v);
    else
        known = usage_int(usage, "cached_tokens", &v);
    add_known(&t->cached_tokens, known, v);
}

static json_object *known_or_null(long long v)
{
    return v < 0 ? NULL : json_object_new_int64(v);
}

json_object *cn_agent_totals_to_json(const cn_agent_totals *t)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "runs", json_object_new_int64(t->runs));
    json_object_object_add(o, "turns", known_or_null(t->turns));
    json_object_object_add(o, "prompt_tokens", known_or_null(t->prompt_tokens));
    json_object_object_add(o, "completion_tokens", known_or_null(t->completion_tokens));
    json_object_object_add(o, "cached_tokens", known_or_null(t->cached_tokens));
    return o;
}
