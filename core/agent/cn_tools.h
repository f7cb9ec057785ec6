/* SPDX-License-Identifier: Apache-2.0 */
/* The agent's default tools: read, grep, glob and bash.  Each runs on
 * JSON arguments from the model and returns the text the model sees.
 * Every path is repository-relative and confined to the repository root:
 * absolute paths, ".." components and symbolic links are refused with
 * CN_EDENIED, and files are opened beneath the root's descriptor
 * (cn_beneath.h), so swapping a directory for a link while a call runs
 * leads nowhere.  Every output is capped and every call but bash (which
 * has its own) has a deadline (cn_tools_config). */
#ifndef CN_TOOLS_H
#define CN_TOOLS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "../util/cn_util.h"

typedef struct cn_tools_config {
    const char *root;          /* canonical repository root */
    bool bash_enabled;         /* default false */
    long bash_timeout_ms;      /* default 30000 */
    long call_timeout_ms;      /* wall-clock budget of one read, grep or glob call,
                                * default 5000: grep past it fails with CN_ETIMEOUT,
                                * glob answers with what it matched so far and says so */
    size_t output_cap;         /* bytes, default 30000; longer output is cut with a marker
                                * line saying how much was left out */
    size_t glob_cap;           /* default 200 paths */
    const char *bash_hint;     /* how an operator enables bash, quoted in the refusal;
                                * default "'enable_bash: true' in the harness spec" */
    /* set by a caller that can cancel a call from another thread (the MCP
     * server), NULL otherwise: once *cancel is true, grep and glob stop
     * as at their deadline and bash stops its process group; the call
     * then fails with CN_ECANCELED */
    const atomic_bool *cancel;
    /* when not NULL, set to true when bash stopped a command at its time
     * limit (the call itself succeeds, the status line says so) */
    bool *bash_timed_out;
    long long deadline;        /* set by cn_tool_run for the call under way
                                * (cn_tools__now_ms clock); callers leave it 0 */
} cn_tools_config;

void cn_tools_config_init(cn_tools_config *c, const char *root);

extern const char *const cn_default_tool_names[];   /* "read", "grep", "glob", "bash", NULL */
bool cn_tool_is_default(const char *name);

/* OpenAI function tool {"type":"function","function":{"name","description",
 * "parameters"}}, owned by the caller; NULL for an unknown name. */
json_object *cn_tool_schema(const char *name);
/* The same with the limits of configuration c filled in (bash's timeout
 * maximum); c may be NULL (the defaults). */
json_object *cn_tools_schema(const cn_tools_config *c, const char *name);

/* The file a read call names (its file_path, else its path), borrowed from
 * args; NULL when it names none. */
const char *cn_tool_read_path(json_object *args);

/* Runs one tool; *output (malloc) is the text the model sees.  A refused or
 * failed call returns a negative CN_E* code with cn_error_set() saying what
 * and why (the runner shows that message to the model).  args may be NULL
 * (no arguments); limits left at 0 in the configuration take their
 * defaults.  Unknown tool: CN_ENOTFOUND; a bad argument, or one the
 * tool's schema does not list: CN_EINVAL naming it; a path outside the root or bash while disabled: CN_EDENIED; a
 * pattern too expensive for grep, or a grep past call_timeout_ms:
 * CN_ETIMEOUT.  A bash command
 * that exits non-zero or times out is not a failed call: its status is the
 * last line of the output. */
int cn_tool_run(const cn_tools_config *c, const char *name, json_object *args, char **output);

/* ---- shared by the tool implementations (cn_tool_*.c) ------------------ */

/* Lines longer than this are cut in read and grep output. */
#define CN_TOOLS_LINE_MAX 2000u
/* A file with a NUL byte in its first this-many bytes is binary (git's rule). */
#define CN_TOOLS_BINARY_PROBE 8000u

/* Output with a byte cap: text past the cap is counted, not kept. */
typedef struct cn_tools_out {
    cn_buf buf;
    size_t cap;
    size_t dropped;            /* bytes left out */
} cn_tools_out;

void cn_tools__out_init(cn_tools_out *o, size_t cap);
int cn_tools__out_append(cn_tools_out *o, const char *s, size_t n);
int cn_tools__out_printf(cn_tools_out *o, const char *fmt, ...) CN_PRINTF(2, 3);
bool cn_tools__out_full(const cn_tools_out *o);
/* Appends the cap marker when something was left out and hands the text over. */
int cn_tools__out_finish(cn_tools_out *o, char **output);
/* The same, then footer (may be NULL) on a line of its own, outside the cap:
 * markers that say what was left out must never be cut themselves. */
int cn_tools__out_finish_with(cn_tools_out *o, const char *footer, char **output);
void cn_tools__out_free(cn_tools_out *o);
/* Appends one line of file text (no newline), cut at CN_TOOLS_LINE_MAX
 * with a note of how much was cut; a trailing '\r' is dropped. */
int cn_tools__out_line(cn_tools_out *o, const char *s, size_t n);
/* The same for a line of `total` bytes of which the first `kept` are in s
 * (kept >= total, or kept > CN_TOOLS_LINE_MAX). */
int cn_tools__out_line_part(cn_tools_out *o, const char *s, size_t kept, size_t total);

/* Arguments.  Each names the argument in its CN_EINVAL message. */
int cn_tools__arg_str(json_object *args, const char *key, bool required, const char **out);
/* A string argument known by two names (the reference's and ours: read's
 * file_path and path): either is taken; both with different values is
 * CN_EINVAL naming them. */
int cn_tools__arg_str2(json_object *args, const char *key, const char *alias, bool required,
                       const char **out);
int cn_tools__arg_long(json_object *args, const char *key, long def, long min, long *out);
int cn_tools__arg_bool(json_object *args, const char *key, bool def, bool *out);

/* Opens the repository root as a directory: every file is opened beneath
 * this descriptor. */
int cn_tools__open_root(const cn_tools_config *c);
/* Opens plain path rel ("" = the root itself) beneath rootfd; see
 * cn_open_beneath for the flags and errors. */
int cn_tools__open(int rootfd, const char *rel, int flags);
/* 1 when plain path rel beneath rootfd is a directory, 0 when it is
 * something else, or cn_tools__open's error. */
int cn_tools__is_dir(int rootfd, const char *rel);
/* Whether this call's deadline has passed, or the call was cancelled. */
bool cn_tools__late(const cn_tools_config *c);
/* Whether the bytes look binary (a NUL in the first CN_TOOLS_BINARY_PROBE). */
bool cn_tools__is_binary(const char *data, size_t len);

/* The files below the plain repository-relative directory `dir` ("" =
 * root), relative to the root and sorted by path.  Skips the default
 * excluded directories (.git, node_modules, build outputs, ...), symlinks
 * (never followed) and paths with a control character or invalid UTF-8
 * (which the index leaves out too).  The walk goes by descriptors from
 * rootfd, never through a path string again.  *partial (may be NULL) tells that
 * the call's deadline cut the walk short (the files found so far are
 * kept).  In a git checkout, the files git ignores (.gitignore files at
 * any depth, .git/info/exclude) are left out as the index's walk leaves
 * them out (cn_walk_git_paths). */
int cn_tools__list_files(const cn_tools_config *c, int rootfd, const char *dir, cn_strv *files,
                         bool *partial);
/* Milliseconds on the monotonic clock. */
long long cn_tools__now_ms(void);

int cn_tools__read(const cn_tools_config *c, json_object *args, char **output);
int cn_tools__grep(const cn_tools_config *c, json_object *args, char **output);
int cn_tools__glob(const cn_tools_config *c, json_object *args, char **output);
int cn_tools__bash(const cn_tools_config *c, json_object *args, char **output);

#endif /* CN_TOOLS_H */
