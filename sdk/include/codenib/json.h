/* SPDX-License-Identifier: Apache-2.0 */
/* codenib SDK: JSON values handed across the plugin boundary.
 *
 * A cn_json is an opaque value owned by the host.  Plugins build and read
 * values only through the cn_json_services table of their host (no json-c
 * or other library type crosses the boundary).  Ownership rules:
 *   - new_* and parse return a value with one reference, owned by the caller;
 *     release it with put().
 *   - object_set() and array_append() take over the reference of `val`,
 *     even when they fail.
 *   - object_get() and array_get() return borrowed values, valid as long as
 *     their container lives.
 *   - JSON null is represented by NULL: type(NULL) is CN_JSON_NULL and
 *     new_null() returns NULL.
 *   - serialize() returns text allocated with the host allocator: release it
 *     with the host's free(). */
#ifndef CODENIB_JSON_H
#define CODENIB_JSON_H

#include <stddef.h>
#include <stdint.h>

#include <codenib/errors.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cn_json cn_json;

typedef enum cn_json_type {
    CN_JSON_NULL = 0,
    CN_JSON_BOOL = 1,
    CN_JSON_INT = 2,
    CN_JSON_DOUBLE = 3,
    CN_JSON_STRING = 4,
    CN_JSON_ARRAY = 5,
    CN_JSON_OBJECT = 6
} cn_json_type;

/* Flags for serialize(). */
#define CN_JSON_PRETTY 1

typedef int (*cn_json_foreach_fn)(const char *key, cn_json *val, void *data);

typedef struct cn_json_services {
    uint32_t struct_size;

    cn_json *(*parse)(const char *text, cn_error *err);
    char *(*serialize)(const cn_json *val, int flags);
    cn_json *(*get)(cn_json *val);   /* add a reference, returns val */
    void (*put)(cn_json *val);       /* drop a reference */

    cn_json_type (*type)(const cn_json *val);
    cn_json *(*object_get)(const cn_json *obj, const char *key);
    size_t (*object_length)(const cn_json *obj);
    /* Calls fn for each member in insertion order; stops at the first
     * non-zero return and passes it back. */
    int (*object_foreach)(const cn_json *obj, cn_json_foreach_fn fn, void *data);
    size_t (*array_length)(const cn_json *arr);
    cn_json *(*array_get)(const cn_json *arr, size_t index);
    const char *(*get_string)(const cn_json *val);  /* NULL unless a string */
    int64_t (*get_int)(const cn_json *val);         /* 0 unless a number */
    double (*get_double)(const cn_json *val);       /* 0 unless a number */
    int (*get_bool)(const cn_json *val);            /* JSON truthiness */

    cn_json *(*new_object)(void);
    cn_json *(*new_array)(void);
    cn_json *(*new_string)(const char *s);
    cn_json *(*new_string_len)(const char *s, size_t len);
    cn_json *(*new_int)(int64_t v);
    cn_json *(*new_double)(double v);
    cn_json *(*new_bool)(int v);
    cn_json *(*new_null)(void);
    int (*object_set)(cn_json *obj, const char *key, cn_json *val);
    int (*array_append)(cn_json *arr, cn_json *val);
} cn_json_services;

#ifdef __cplusplus
}
#endif

#endif /* CODENIB_JSON_H */
