/* SPDX-License-Identifier: Apache-2.0 */
/* A list of owned strings. */
#include "cn_util.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

int cn_strv_push_owned(cn_strv *v, char *s)
{
    if (s == NULL) return cn_error_set(CN_ENOMEM, "out of memory adding to a string list");
    if (v->len == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 8;
        char **p = realloc(v->items, cap * sizeof *p);
        if (p == NULL) {
            free(s);
            return cn_error_set(CN_ENOMEM, "out of memory adding to a string list");
        }
        v->items = p;
        v->cap = cap;
    }
    v->items[v->len++] = s;
    return 0;
}

int cn_strv_push(cn_strv *v, const char *s)
{
    return cn_strv_push_owned(v, cn_strdup(s));
}

bool cn_strv_contains(const cn_strv *v, const char *s)
{
    for (size_t i = 0; i < v->len; i++)
        if (strcmp(v->items[i], s) == 0) return true;
    return false;
}

int cn_strv_split(cn_strv *v, const char *csv, char sep)
{
    const char *p = csv;
    while (p && *p) {
        const char *end = strchr(p, sep);
        const char *a = p, *b = end ? end : p + strlen(p);
        while (a < b && isspace((unsigned char)*a)) a++;
        while (b > a && isspace((unsigned char)b[-1])) b--;
        if (b > a) {
            int rc = cn_strv_push_owned(v, cn_strndup(a, (size_t)(b - a)));
            if (rc < 0) return rc;
        }
        p = end ? end + 1 : NULL;
    }
    return 0;
}

void cn_strv_free(cn_strv *v)
{
    for (size_t i = 0; i < v->len; i++) free(v->items[i]);
    free(v->items);
    v->items = NULL;
    v->len = v->cap = 0;
}
