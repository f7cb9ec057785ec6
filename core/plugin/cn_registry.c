/* SPDX-License-Identifier: Apache-2.0 */
/* Registry object: entries, lookup, allow/exclude, reserved tool names,
 * contexts. */
#include "cn_registry.h"

#include "../index/cn_index.h"
#include "../index/cn_vectors.h"
#include "../llm/cn_llm.h"

#include <stdlib.h>
#include <string.h>

static const char *const default_tool_names[] = {"read", "grep", "glob", "bash"};

const char *cn_skill_state_name(cn_skill_state s)
{
    switch (s) {
    case CN_STATE_DISCOVERED: return "discovered";
    case CN_STATE_LOADED: return "loaded";
    case CN_STATE_FAILED: return "failed";
    case CN_STATE_DUPLICATE: return "duplicate";
    case CN_STATE_INPROCESS: return "in-process";
    }
    return "unknown";
}

CN_API int cn_registry_new(cn_registry **out)
{
    cn_registry *reg = calloc(1, sizeof *reg);
    *out = NULL;
    if (reg == NULL) return cn_error_set(CN_ENOMEM, "out of memory creating a registry");
    for (size_t i = 0; i < sizeof default_tool_names / sizeof default_tool_names[0]; i++) {
        if (cn_strv_push(&reg->tool_names, default_tool_names[i]) < 0) {
            cn_registry_free(reg);
            return CN_ENOMEM;
        }
    }
    *out = reg;
    return 0;
}

static void entry_free(cn_skill_entry *e)
{
    if (e == NULL) return;
    cn_entry_unload(e);
    if (e->fn_free) e->fn_free(e->fn_data);
    cn_meta_free(e->meta);
    free(e->id);
    free(e->dir);
    free(e->source);
    free(e->reason);
    free(e);
}

CN_API void cn_registry_free(cn_registry *reg)
{
    if (reg == NULL) return;
    /* Unload in reverse order of registration. */
    for (size_t i = reg->n_entries; i-- > 0;) entry_free(reg->entries[i]);
    free(reg->entries);
    cn_strv_free(&reg->allow);
    cn_strv_free(&reg->exclude);
    cn_strv_free(&reg->tool_names);
    free(reg->repo_root);
    cn_vector_index_close(reg->vectors);
    cn_index_close(reg->index);
    for (size_t i = 0; i < sizeof reg->models / sizeof reg->models[0]; i++) cn_llm_close(reg->models[i]);
    free(reg);
}

cn_skill_entry *cn_registry_find(const cn_registry *reg, const char *id)
{
    for (size_t i = 0; i < reg->n_entries; i++) {
        cn_skill_entry *e = reg->entries[i];
        if (e->state != CN_STATE_DUPLICATE && strcmp(e->id, id) == 0) return e;
    }
    return NULL;
}

bool cn_registry_enabled(const cn_registry *reg, const char *id)
{
    if (reg->has_allow && reg->allow.len > 0 && !cn_strv_contains(&reg->allow, id)) return false;
    return !cn_strv_contains(&reg->exclude, id);
}

/* Marks e FAILED with a formatted reason (the thread-local error too). */
int cn_entry_fail(cn_skill_entry *e, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cn_error_setv(code, fmt, ap);
    va_end(ap);
    free(e->reason);
    e->reason = cn_strdup(cn_error_last()->message);
    e->error_code = code;
    e->state = CN_STATE_FAILED;
    return code;
}

static void check_collision(const cn_registry *reg, cn_skill_entry *e)
{
    if (e->state == CN_STATE_DUPLICATE || !cn_strv_contains(&reg->tool_names, e->id)) return;
    if (e->state == CN_STATE_FAILED && e->error_code == CN_ECONFLICT) return;
    cn_entry_unload(e);
    cn_entry_fail(e, CN_ECONFLICT,
                  "skill '%s' (%s) collides with the default tool '%s': skills and default "
                  "tools share one namespace; rename the skill",
                  e->id, e->dir ? e->dir : "in process", e->id);
}

/* Takes ownership of e.  First hit of an id wins; later ones are kept as
 * DUPLICATE so that `skills list` can report them. */
int cn_registry__append(cn_registry *reg, cn_skill_entry *e)
{
    cn_skill_entry *first;

    if (reg->n_entries == reg->cap) {
        size_t cap = reg->cap ? reg->cap * 2 : 16;
        cn_skill_entry **p = realloc(reg->entries, cap * sizeof *p);
        if (p == NULL) {
            entry_free(e);
            return cn_error_set(CN_ENOMEM, "out of memory adding a skill");
        }
        reg->entries = p;
        reg->cap = cap;
    }
    first = cn_registry_find(reg, e->id);
    if (first != NULL) {
        cn_entry_unload(e);
        free(e->reason);
        cn_error_set(CN_EEXISTS, "skill '%s' at %s is a duplicate of %s (%s): the first one "
                                 "found wins",
                     e->id, e->dir ? e->dir : "in process", first->dir ? first->dir : "in process",
                     first->source ? first->source : "?");
        e->reason = cn_strdup(cn_error_last()->message);
        e->error_code = CN_EEXISTS;
        e->state = CN_STATE_DUPLICATE;
    } else {
        check_collision(reg, e);
    }
    reg->entries[reg->n_entries++] = e;
    return e->state == CN_STATE_DUPLICATE ? CN_EEXISTS : 0;
}

int cn_registry_set_tool_names(cn_registry *reg, const char *const *names, size_t n)
{
    cn_strv fresh = CN_STRV_INIT;
    for (size_t i = 0; i < n; i++) {
        if (cn_strv_push(&fresh, names[i]) < 0) {
            cn_strv_free(&fresh);
            return CN_ENOMEM;
        }
    }
    cn_strv_free(&reg->tool_names);
    reg->tool_names = fresh;
    for (size_t i = 0; i < reg->n_entries; i++) check_collision(reg, reg->entries[i]);
    return 0;
}

int cn_registry_add_inprocess(cn_registry *reg, cn_skill_meta *meta, cn_skill_fn fn, void *data,
                              void (*free_data)(void *))
{
    cn_skill_entry *e = calloc(1, sizeof *e);
    if (e == NULL || fn == NULL) {
        int rc = fn == NULL ? cn_error_set(CN_EINVAL, "in-process skill '%s' has no function",
                                           meta ? meta->skill_id : "?")
                            : cn_error_set(CN_ENOMEM, "out of memory");
        free(e);
        cn_meta_free(meta);
        if (free_data) free_data(data);
        return rc;
    }
    e->meta = meta;
    e->id = cn_strdup(meta->skill_id);
    e->source = cn_strdup("in process");
    e->state = CN_STATE_INPROCESS;
    e->fn = fn;
    e->fn_data = data;
    e->fn_free = free_data;
    if (e->id == NULL || e->source == NULL) {
        entry_free(e);
        return cn_error_set(CN_ENOMEM, "out of memory");
    }
    return cn_registry__append(reg, e);
}

int cn_registry_set_context(cn_registry *reg, const cn_skill_context *ctx)
{
    if (ctx == NULL || ctx->kind < CN_SKILL_RETRIEVAL || ctx->kind > CN_SKILL_CUSTOM)
        return cn_error_set(CN_EINVAL, "context kind %d is not a skill type", ctx ? ctx->kind : -1);
    reg->contexts[ctx->kind] = *ctx;
    reg->contexts[ctx->kind].struct_size = (uint32_t)sizeof(cn_skill_context);
    reg->has_context[ctx->kind] = true;
    return 0;
}

static int set_ids(cn_strv *dst, const char *const *ids, size_t n)
{
    cn_strv fresh = CN_STRV_INIT;
    for (size_t i = 0; i < n; i++) {
        if (ids[i] == NULL) continue;
        if (cn_strv_push(&fresh, ids[i]) < 0) {
            cn_strv_free(&fresh);
            return CN_ENOMEM;
        }
    }
    cn_strv_free(dst);
    *dst = fresh;
    return 0;
}

CN_API int cn_registry_set_allow(cn_registry *reg, const char *const *ids, size_t n)
{
    reg->has_allow = ids != NULL && n > 0;
    return set_ids(&reg->allow, ids, reg->has_allow ? n : 0);
}

CN_API int cn_registry_set_exclude(cn_registry *reg, const char *const *ids, size_t n)
{
    return set_ids(&reg->exclude, ids, ids ? n : 0);
}
