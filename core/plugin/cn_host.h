/* SPDX-License-Identifier: Apache-2.0 */
/* Building the cn_host table that the core hands to each plugin. */
#ifndef CN_HOST_IMPL_H
#define CN_HOST_IMPL_H

#include <stdarg.h>

#include <json-c/json.h>

#include <codenib/host.h>
#include <codenib/skill.h>

#include "../util/cn_util.h"

/* What a host table knows about the skill it serves; host_data points
 * here.  All pointers are borrowed from the registry entry. */
typedef struct cn_host_data {
    const char *skill_id;
    const char *skill_dir;
    json_object *defaults;
    const char *repo_root;   /* canonical, or NULL */
} cn_host_data;

/* Fills `host` for one skill.  `data` must outlive the table. */
void cn_host_init(cn_host *host, cn_host_data *data);

const cn_json_services *cn_host_json_services(void);

/* Parses exactly one JSON value (any type; JSON null gives *out == NULL and
 * 0); trailing non-blank text is an error.  Errors set the thread-local
 * error as "<what> is not valid JSON: <reason> at offset N" (CN_EPARSE). */
int cn_json_parse(const char *text, const char *what, json_object **out);
/* The string member `key` of o, NULL when absent or not a string. */
const char *cn_json_str_member(json_object *o, const char *key);
/* The integer member `key` of o, dflt when absent or not an integer. */
long long cn_json_int_member(json_object *o, const char *key, long long dflt);
/* A JSON array of the strings of `v` (NULL: an empty array); NULL on ENOMEM. */
json_object *cn_json_strv(const cn_strv *v);
/* o as text (json-c `flags`, JSON_C_TO_STRING_*), always valid UTF-8: an
 * ill-formed sequence in a string reads U+FFFD, DEL and C1 controls are
 * \u escapes.  What every JSON codenib writes goes through.  malloc'd;
 * NULL (CN_ENOMEM) when out of memory. */
char *cn_json_text(json_object *o, int flags);
const cn_files_services *cn_host_files_services(void);
const cn_text_services *cn_host_text_services(void);
/* The LSP service: the configured provider (CODENIB_LSP_PROVIDER, default
 * lsp-static) over the index of the calling skill's context. */
const struct cn_lsp_services *cn_host_lsp_services(void);

/* Reads the regular file relpath below root, opened beneath the root's
 * descriptor: absolute paths, ".." components and symbolic links (on the
 * way or at the end, inside the root or not) are refused (CN_EDENIED).
 * Used by the files service.  *data is malloc'd and NUL-terminated. */
int cn_confined_read(const char *root, const char *relpath, size_t max_bytes, char **data,
                     size_t *len);

/* Log threshold: messages below it are dropped.  Initialised from
 * CODENIB_LOG (debug, info, warning, error); default warning. */
void cn_log_set_level(int level);
int cn_log_get_level(void);
void cn_log(int level, const char *who, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void cn_logv(int level, const char *who, const char *fmt, va_list ap);

#endif /* CN_HOST_IMPL_H */
