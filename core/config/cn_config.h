/* SPDX-License-Identifier: Apache-2.0 */
/* The configuration layer: the settings a user or a distribution gives
 * once instead of on every command line.  Later layers win:
 *
 *   1. built-in defaults
 *   2. $(sysconfdir)/codenib/config.yaml   (CODENIB_SYSCONFDIR replaces
 *      $(sysconfdir), for tests and relocated installs)
 *   3. $XDG_CONFIG_HOME/codenib/config.yaml (default ~/.config)
 *   4. the environment variables codenib has always read (CODENIB_MODEL,
 *      CODENIB_BASE_URL / OPENAI_BASE_URL)
 *   5. a command's flags (--model, --embedder, ...), applied by the command
 *
 * A file holds a mapping:
 *
 *   model: gpt-4o-mini            # chat model; none: offline answers
 *   base_url: https://...         # OpenAI-compatible endpoint
 *   api_key_env: MY_TEAM_KEY      # variable holding the key
 *   embedder: embed-local         # default embedder backend
 *   vector_store: vec-flat        # default vector-store backend
 *   skills:                       # per-skill parameter defaults, over the
 *     bm25_search: {top_k: 30}    #   package's own config.yaml defaults
 *
 * Every value remembers where it came from ("path:line", "environment
 * CODENIB_MODEL", "default") for `codenib config show`. */
#ifndef CN_CONFIG_H
#define CN_CONFIG_H

#include <json-c/json.h>

#include "../util/cn_util.h"

typedef struct cn_config cn_config;

/* Reads the layers 1-4 from the files and the environment.  Malformed YAML
 * or a setting of the wrong type fails with CN_EPARSE / CN_ETYPE and a
 * "path:line:col: ..." message; a missing file is no error; an unknown
 * setting is a warning (cn_config_warnings), so a file written for a newer
 * codenib still works.  *out is owned by the caller (cn_config_free). */
int cn_config_load(cn_config **out);
void cn_config_free(cn_config *c);

/* The value of a string setting ("model", "base_url", "api_key_env",
 * "embedder", "vector_store"), or NULL when none is set; *source (may be
 * NULL) receives where it came from.  Borrowed from c. */
const char *cn_config_string(const cn_config *c, const char *key, const char **source);
/* The user's defaults for one skill's parameters, a new object
 * {param: value} (empty when none); NULL on ENOMEM. */
json_object *cn_config_skill_defaults(const cn_config *c, const char *skill_id);
/* Every setting as {key: {"value": v, "source": s}}, skills as
 * {"skills": {id: {param: {"value", "source"}}}}, plus "index_home" and
 * "files" (the files read, in order); a new object, NULL on ENOMEM. */
json_object *cn_config_to_json(const cn_config *c);
/* Non-fatal remarks ("path:line:col: unknown setting 'x'"). */
const cn_strv *cn_config_warnings(const cn_config *c);

/* Puts the settings the rest of codenib reads from the environment into
 * it when the environment does not set them itself (model into
 * CODENIB_MODEL, base_url into CODENIB_BASE_URL, the key named by
 * api_key_env into CODENIB_API_KEY), so the environment keeps its
 * precedence over the files and flags keep theirs over both. */
int cn_config_export_env(const cn_config *c);

/* The process's configuration, loaded by the command's entry point;
 * NULL when none was (a library caller, a unit test): defaults apply.
 * cn_config_set_current takes c and frees the one it replaces. */
const cn_config *cn_config_current(void);
void cn_config_set_current(cn_config *c);

/* The directory per-user state and indexes live under: $CODENIB_HOME;
 * else ~/.codenib when it already holds indexes (older releases put them
 * there); else $XDG_CACHE_HOME/codenib (default ~/.cache/codenib).
 * *out is malloc'd; *source (may be NULL) says which rule chose it.
 * CN_EINVAL when neither CODENIB_HOME nor HOME is set. */
int cn_config_index_home(char **out, const char **source);

#endif /* CN_CONFIG_H */
