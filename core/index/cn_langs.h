/* SPDX-License-Identifier: Apache-2.0 */
/* Language backends known to this codenib: found on the "plugins" search
 * path (cn_search_path), described by plugin.yaml (read without opening the
 * shared object), opened on first use with the same ABI checks as skills. */
#ifndef CN_LANGS_H
#define CN_LANGS_H

#include <stdbool.h>

#include <codenib/lang.h>

#include "../util/cn_util.h"

typedef struct cn_lang_entry {
    char *language;         /* "python" */
    char *plugin_id;        /* "lang-python" */
    char *dir;
    char *source;           /* search-path label */
    char *library;
    cn_strv extensions;     /* ".py" */
    cn_strv shebangs;       /* "python3" */
    char *reason;           /* why it is unusable, or NULL */
    struct cn_dl *dl;
    const cn_lang_descriptor *desc;
} cn_lang_entry;

typedef struct cn_langs {
    cn_lang_entry *items;
    size_t len;
    cn_strv problems;       /* packages that could not be read, and duplicates */
} cn_langs;

/* Discovers every language package on the plugin search path (build tree,
 * CODENIB_PLUGINS_PATH, installed, user).  Broken packages are kept in
 * `problems` or with a `reason`; only a failure to allocate is an error. */
int cn_langs_discover(cn_langs *langs);
/* Adds the packages below one directory (tests, explicit paths). */
int cn_langs_add_root(cn_langs *langs, const char *root, const char *source);
void cn_langs_free(cn_langs *langs);

/* The language of a repository path by its extension, or NULL. */
const cn_lang_entry *cn_langs_by_path(const cn_langs *langs, const char *path);
/* The language of a "#!" first line (interpreter basename, "env X"), or NULL. */
const cn_lang_entry *cn_langs_by_shebang(const cn_langs *langs, const char *line, size_t len);
const cn_lang_entry *cn_langs_find(const cn_langs *langs, const char *language);

/* Opens the backend's shared object and checks its descriptor.  On failure
 * the entry keeps the reason and the call returns it every time. */
int cn_langs_open(cn_lang_entry *e, const cn_lang_descriptor **out);

#endif /* CN_LANGS_H */
