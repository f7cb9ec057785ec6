/* SPDX-License-Identifier: Apache-2.0 */
/* YAML -> json-c reader that remembers where every value came from, so
 * that configuration errors can name file:line:column. */
#ifndef CN_YAML_H
#define CN_YAML_H

#include <json-c/json.h>

/* Parses the first document of a YAML file into a json-c tree (mappings ->
 * objects, sequences -> arrays, scalars resolved as YAML 1.1 plain scalars
 * are by PyYAML's safe loader: null, bool, int, float, else string; quoted
 * and block scalars and !!str stay strings).  An empty file gives an empty
 * object.  Errors (syntax, duplicate key, more than one document, alias to an
 * unknown anchor, unreadable file) set the thread-local error with
 * "path:line:col: ..." and return CN_EPARSE or CN_EIO. */
int cn_yaml_load_file(const char *path, json_object **out);
/* Same, from memory; `origin` is used in messages in place of the path. */
int cn_yaml_load_string(const char *text, size_t len, const char *origin,
                        json_object **out);

/* Where a value of a tree produced above started (1-based).  Returns 0 and
 * fills line/col, or -1 when the value carries no position (JSON null, or a
 * tree that did not come from YAML). */
int cn_yaml_mark(json_object *value, int *line, int *col);

#endif /* CN_YAML_H */
