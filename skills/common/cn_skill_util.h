/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers compiled into every skill: the ranked-node result shape shared
 * by all retrieval and navigation skills, argument access and the line
 * gutter.  Skills link nothing of the core; everything here goes through
 * the host table. */
#ifndef CN_SKILL_UTIL_H
#define CN_SKILL_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include <codenib/index.h>
#include <codenib/skill.h>

/* Node kinds by name, as results print them ("file", "class", ...). */
const char *cn_su_kind_name(int kind);
/* The kind of a name, or -1. */
int cn_su_kind_parse(const char *name);
/* "file, class, function, ..." for error messages. */
const char *cn_su_kind_list(void);

/* Fills filter->kinds from a JSON array of kind names (NULL or JSON null:
 * every kind).  An unknown name is CN_EINVAL naming it and the argument. */
int cn_su_kinds_filter(const cn_host *h, const cn_json *kinds, const char *argname,
                       uint32_t *mask, cn_error *err);

/* Text with each line prefixed by its 1-based number ("    12\t..."),
 * numbering from first_line (0-based) + 1; host->alloc'd, NULL on OOM. */
char *cn_su_gutter(const cn_host *h, const char *text, size_t len, uint32_t first_line);

/* How cn_su_node_json renders a node. */
typedef struct cn_su_node_opts {
    int names_only;     /* node_name, type, file, start_line only */
    int content;        /* add "content" (the node's source) */
    int gutter;         /* ... with a line-number gutter */
    int no_score;       /* leave "score" out (navigation results) */
} cn_su_node_opts;

/* The result object of one node: node_name, type, file, node_id,
 * start_line, end_line (0-based here: the host converts) and score.  A
 * node whose text cannot be read keeps content null and says why in
 * content_error.  NULL with err filled when the node does not exist. */
cn_json *cn_su_node_json(const cn_host *h, const struct cn_index *idx, uint32_t node,
                         double score, const cn_su_node_opts *o, cn_error *err);

/* The arguments every search skill shares: query (required), top_k (1 to
 * max_top_k), names_only, return_content (default true),
 * wrap_with_line_numbers, filter_test, path_prefix and kinds. */
typedef struct cn_su_search_args {
    const char *query;
    size_t top_k;
    cn_search_filter filter;
    cn_su_node_opts opts;
} cn_su_search_args;

int cn_su_read_search_args(const cn_host *h, const cn_json *args, int64_t max_top_k,
                           cn_su_search_args *out, cn_error *err);

/* The result array of hits[0, n): one node object each (cn_su_node_json);
 */
int cn_su_hits_emit(const cn_host *h, const struct cn_index *idx, const cn_search_hit *hits, size_t n,
                    const cn_su_node_opts *o, char **result_json, cn_error *err);

/* Adds "content" (the node's source, optionally with a gutter) to each
 * result object of `nodes` (an array of objects with node_id and
 * start_line); a node whose text cannot be read gets content null and
 * content_error. */
void cn_su_add_contents(const cn_host *h, const struct cn_index *idx, cn_json *nodes, int gutter);

/* Runs one LSP capability for a skill: copies the arguments named in
 * `keys` (NULL-terminated; absent ones are left out) and top_k (1 to
 * max_top_k) into the request, calls host->lsp, adds contents when
 * return_content is set, and serializes the provider's answer. */
int cn_su_lsp_run(const cn_host *h, const cn_skill_context *ctx, const cn_json *args,
                  const char *capability, const char *const *keys, int64_t max_top_k,
                  char **result_json, cn_error *err);

/* Index services, checked: fails with a clear message when the host or
 * the context lacks them.  `needs` adds to CN_NEEDS_INDEX. */
int cn_su_require_index(const cn_host *h, const cn_skill_context *ctx, unsigned needs,
                        const cn_index_services **svc, cn_error *err);

/* Argument access on a parsed args object (NULL-safe). */
const char *cn_su_arg_str(const cn_host *h, const cn_json *args, const char *name);
int64_t cn_su_arg_int(const cn_host *h, const cn_json *args, const char *name, int64_t dflt);
int cn_su_arg_bool(const cn_host *h, const cn_json *args, const char *name, int dflt);
double cn_su_arg_double(const cn_host *h, const cn_json *args, const char *name, double dflt);
/* top_k in [1, max], else CN_EINVAL naming the argument. */
int cn_su_arg_top_k(const cn_host *h, const cn_json *args, const char *name, int64_t max,
                    size_t *out, cn_error *err);

/* Serializes v into *result_json (host->alloc) and releases v. */
int cn_su_emit(const cn_host *h, cn_json *v, char **result_json, cn_error *err);

/* A minimal executor for skills whose whole state is host + ctx:
 * run_fn receives them with the parsed arguments. */
typedef int (*cn_su_run_fn)(const cn_host *h, const cn_skill_context *ctx, const cn_json *args,
                            char **result_json, cn_error *err);
int cn_su_simple_executor(const cn_host *host, const cn_skill_context *ctx, cn_su_run_fn fn,
                          cn_executor **out, cn_error *err);

/* Whether text holds nothing but whitespace (len bytes). */
int cn_su_is_blank(const char *s, size_t len);

/* ---- chat-model skills: requests to host->model and their answers ---- */

/* Fails unless the host has a model client (host->model). */
int cn_su_require_model(const cn_host *h, cn_error *err);

/* {"type":"object","properties":properties,"required":[...],
 * "additionalProperties":false}: `properties` is taken over, `required`
 * is a NULL-terminated list of names. */
cn_json *cn_su_schema_object(const cn_json_services *J, cn_json *properties, const char *const *required);

/* A response_format asking for JSON that follows `schema` (taken over),
 * strictly: {"type":"json_schema","json_schema":{name, strict, schema}}. */
cn_json *cn_su_json_schema_format(const cn_json_services *J, const char *name, cn_json *schema);

/* A chat-completions body: a system and a user message, temperature 0
 * and, when not NULL, response_format (taken over).  Serialized
 * (host->alloc); NULL on OOM. */
char *cn_su_chat_request(const cn_host *h, const char *system, const char *user, cn_json *response_format);

/* A chat model's answer message; content is never NULL. */
typedef struct cn_su_answer {
    cn_json *msg;           /* the message: the caller puts it */
    const char *content;    /* its text (borrowed from msg) */
    const char *finish;     /* its finish_reason, or NULL */
} cn_su_answer;

/* Sends request (a chat-completions body) to the context's chat model and
 * reads the answer.  An answer without text is an error naming the
 * refusal if any: "the chat model refused to <task><where>: ...";
 * `where` (may be "") says which request it was. */
int cn_su_chat_ask(const cn_host *h, const cn_skill_context *ctx, const char *request, const char *task,
                   const char *where, cn_su_answer *a, cn_error *err);

/* The JSON object in an answer's text: from its first '{' to its last '}',
 * so a ```json fence or prose around it is tolerated.  *out is NULL when
 * there is none or it does not parse; < 0 only on OOM. */
int cn_su_answer_object(const cn_host *h, const char *content, cn_json **out, cn_error *err);

/* CN_EPARSE: "the chat model's answer<where> <why>: "<its start>"<hint>",
 * saying so when the answer was cut at the token limit. */
int cn_su_answer_error(const cn_host *h, const cn_su_answer *a, const char *where, const char *why,
                       const char *hint, cn_error *err);

#endif /* CN_SKILL_UTIL_H */
