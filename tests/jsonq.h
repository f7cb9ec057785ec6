/* SPDX-License-Identifier: Apache-2.0 */
/* Reading members of a JSON response in the tests: jq_at(o, "a.0.b"),
 * where a number picks an array element. */
#ifndef CN_TEST_JSONQ_H
#define CN_TEST_JSONQ_H

#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

/* The member at a dotted path, or NULL (also for a JSON null). */
static inline json_object *jq_at(json_object *o, const char *path)
{
    char key[64];
    while (o != NULL && *path) {
        size_t n = strcspn(path, ".");
        if (n >= sizeof key) return NULL;
        memcpy(key, path, n);
        key[n] = '\0';
        if (json_object_is_type(o, json_type_array)) o = json_object_array_get_idx(o, (size_t)atoi(key));
        else if (!json_object_object_get_ex(o, key, &o)) return NULL;
        path += n + (path[n] == '.');
    }
    return o;
}

/* An integer member, -999999 when it is not there. */
static inline long long jq_int(json_object *o, const char *path)
{
    json_object *v = jq_at(o, path);
    return v ? json_object_get_int64(v) : -999999;
}

static inline const char *jq_str(json_object *o, const char *path)
{
    json_object *v = jq_at(o, path);
    return v ? json_object_get_string(v) : NULL;
}

#endif /* CN_TEST_JSONQ_H */
