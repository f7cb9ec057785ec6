/* SPDX-License-Identifier: Apache-2.0 */
/* A query's answer as a ranked prediction (files, modules, entities), named
 * the way the dataset's gold is: LocAgent's "path.py:Class.method", with a
 * constructor standing for its class.
 *
 * Offline answers carry ranked "files" and "symbols" lists (richer than
 * the contract, which is cut from them); agent answers carry only the
 * contract the model wrote.  Either way the order is kept: the scorer's
 * Acc@k reads the first k items. */
#include <stdlib.h>

#include "cn_eval_run.h"
#include "../agent/cn_contract.h"

static void pred_clear(cn_eval_pred *p)
{
    free(p->instance_id);
    for (int l = 0; l < CN_EVAL_LEVELS; l++) cn_strv_free(&p->found[l]);
    cn_strv_free(&p->locations);
    memset(p, 0, sizeof *p);
}

/* Appends s[0..n) unless it is listed already. */
static int push_unique(cn_strv *v, const char *s, size_t n)
{
    char *copy = cn_strndup(s, n);
    if (copy == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    if (cn_strv_contains(v, copy)) {
        free(copy);
        return 0;
    }
    return cn_strv_push_owned(v, copy) < 0 ? cn_error_set(CN_ENOMEM, "out of memory") : 0;
}

/* The string of item i of a list: the item itself, or its `key` member. */
static const char *item_string(json_object *list, size_t i, const char *key)
{
    json_object *it = json_object_array_get_idx(list, i), *v = NULL;
    if (json_object_is_type(it, json_type_string)) return json_object_get_string(it);
    if (key != NULL && json_object_object_get_ex(it, key, &v) && json_object_is_type(v, json_type_string))
        return json_object_get_string(v);
    return NULL;
}

static json_object *array_member(json_object *o, const char *key)
{
    json_object *v = NULL;
    if (o == NULL || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_array))
        return NULL;
    return v;
}

/* "path:Class.__init__" -> "path:Class" (LocAgent folds a constructor into
 * its class).  Returns the length of the entity to keep, or 0 when the
 * symbol names no file or no name. */
static size_t entity_len(const char *sym, size_t *path_len)
{
    static const char init[] = ".__init__";
    size_t n = strlen(sym), p = cn_contract_symbol_path_len(sym);

    *path_len = p;
    if (p == 0 || p + 1 >= n) return 0;
    if (n > p + 1 + (sizeof init - 1) && memcmp(sym + n - (sizeof init - 1), init, sizeof init - 1) == 0)
        n -= sizeof init - 1;
    return n;
}

static int add_entity(cn_eval_pred *out, const char *sym)
{
    size_t path_len, n, top;
    const char *name, *dot;
    cn_buf module = CN_BUF_INIT;
    int rc;

    if (sym == NULL || (n = entity_len(sym, &path_len)) == 0) return 0;
    if ((rc = push_unique(&out->found[CN_EVAL_FUNCTION], sym, n)) < 0) return rc;
    name = sym + path_len + 1;
    dot = memchr(name, '.', n - path_len - 1);
    top = dot ? (size_t)(dot - name) : n - path_len - 1;
    cn_buf_append(&module, sym, path_len + 1);
    cn_buf_append(&module, name, top);
    rc = module.oom ? cn_error_set(CN_ENOMEM, "out of memory")
                    : push_unique(&out->found[CN_EVAL_MODULE], module.data, module.len);
    cn_buf_free(&module);
    return rc;
}

/* A whole number member, or -1. */
static long line_member(json_object *o, const char *key)
{
    json_object *v = NULL;
    if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int)) return -1;
    return (long)json_object_get_int64(v);
}

/* "path:START-END" of a list item {path, start_line, end_line}; an item
 * without a path or a first line (a whole file) gives none. */
static int add_location(cn_strv *v, json_object *item)
{
    const char *path;
    json_object *p = NULL;
    long start, end;
    char *text;
    int rc = 0;

    if (!json_object_is_type(item, json_type_object) || !json_object_object_get_ex(item, "path", &p) ||
        !json_object_is_type(p, json_type_string) || *(path = json_object_get_string(p)) == '\0' ||
        (start = line_member(item, "start_line")) < 1)
        return 0;
    if ((end = line_member(item, "end_line")) < start) end = start;
    if ((text = cn_strprintf("%s:%ld-%ld", path, start, end)) == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    rc = push_unique(v, text, strlen(text));
    free(text);
    return rc;
}

/* Files first (ranked), then symbols (ranked), then the contract's
 * locations, each read from the best source the answer has. */
static int convert(json_object *result, cn_eval_pred *out)
{
    json_object *contract = NULL, *files, *syms, *locs;
    cn_strv *ff = &out->found[CN_EVAL_FILE], *fe = &out->found[CN_EVAL_FUNCTION];
    const char *s;
    int rc;

    if (result == NULL) return 0;
    if (json_object_object_get_ex(result, "contract", &contract) && !json_object_is_type(contract, json_type_object))
        contract = NULL;
    if ((files = array_member(result, "files")) == NULL) files = array_member(contract, "files");
    if ((syms = array_member(result, "symbols")) == NULL) syms = array_member(contract, "symbols");
    locs = array_member(contract, "locations");

    for (size_t i = 0; files && i < json_object_array_length(files); i++)
        if ((s = item_string(files, i, "path")) != NULL && *s && (rc = push_unique(ff, s, strlen(s))) < 0) return rc;
    for (size_t i = 0; syms && i < json_object_array_length(syms); i++)
        if ((rc = add_entity(out, item_string(syms, i, "symbol"))) < 0 ||
            (rc = add_location(&out->locations, json_object_array_get_idx(syms, i))) < 0)
            return rc;
    /* the files of the entities, in entity order */
    for (size_t i = 0; i < fe->len; i++)
        if ((rc = push_unique(ff, fe->items[i], cn_contract_symbol_path_len(fe->items[i]))) < 0) return rc;
    for (size_t i = 0; locs && i < json_object_array_length(locs); i++)
        if ((s = item_string(locs, i, "path")) != NULL && *s && (rc = push_unique(ff, s, strlen(s))) < 0) return rc;
    /* then the contract's ranges the symbols did not give */
    for (size_t i = 0; locs && i < json_object_array_length(locs); i++)
        if ((rc = add_location(&out->locations, json_object_array_get_idx(locs, i))) < 0) return rc;
    return 0;
}

int cn_eval_pred_empty(const char *instance_id, cn_eval_pred *out)
{
    memset(out, 0, sizeof *out);
    if (instance_id == NULL || *instance_id == '\0')
        return cn_error_set(CN_EINVAL, "eval prediction: no instance_id");
    if ((out->instance_id = cn_strdup(instance_id)) == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    return 0;
}

int cn_eval_pred_from_result(const char *instance_id, json_object *result, cn_eval_pred *out)
{
    int rc = cn_eval_pred_empty(instance_id, out);
    if (rc == 0 && (rc = convert(result, out)) < 0) pred_clear(out);
    return rc;
}
