/* SPDX-License-Identifier: Apache-2.0 */
/* The `codenib` command: subcommand entry points and shared helpers. */
#ifndef CN_CLI_H
#define CN_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include <json-c/json.h>

#include "plugin/cn_registry.h"

/* Exit statuses */
#define CN_EXIT_OK 0
#define CN_EXIT_FAIL 1
#define CN_EXIT_USAGE 2

int cn_cmd_skills(int argc, char **argv);
int cn_cmd_skills_test(int argc, char **argv); /* `skills test DIR` (cn_cmd_skills_test.c) */
int cn_cmd_run(int argc, char **argv);
int cn_cmd_compile(int argc, char **argv);
int cn_cmd_status(int argc, char **argv);
int cn_cmd_plugins(int argc, char **argv);
int cn_cmd_query(int argc, char **argv);
int cn_cmd_eval(int argc, char **argv);
int cn_cmd_mcp(int argc, char **argv);
int cn_cmd_lsp(int argc, char **argv);
int cn_cmd_config(int argc, char **argv);

/* `--option=value` becomes `--option value` for every argument before a
 * `--` (as getopt_long reads them), so each command's parser sees one
 * form; argv is replaced when something was split (cn_cli_args.c). */
int cn_cli_split_long_options(int *argc, char ***argv);

/* True when a live progress line (carriage return and erase-line escapes)
 * may be written to fd: a terminal, TERM not "dumb", NO_COLOR unset or
 * empty.  Otherwise commands print no escape sequence at all. */
bool cn_cli_escapes_ok(int fd);

/* Prints "codenib: <message>" for the last error and returns CN_EXIT_FAIL. */
int cn_cli_fail(void);
/* Prints "codenib <cmd>: <message>" and a hint to --help; returns CN_EXIT_USAGE. */
int cn_cli_usage_error(const char *cmd, const char *fmt, ...) CN_PRINTF(2, 3);
/* Creates a registry and discovers skills on the default search path. */
int cn_cli_open_registry(cn_registry **out);
/* Prints a JSON value followed by a newline (valid UTF-8, see cn_json_text). */
void cn_cli_print_json(json_object *o, bool pretty);
/* Prints text that holds repository bytes, followed by a newline, for a
 * terminal: control characters other than newline and tab, and ill-formed
 * UTF-8, print as U+FFFD, so a file's ESC sequence never reaches it. */
void cn_cli_print_text(const char *text);
/* Checks an --index list: 0, or the exit status after the message. */
int cn_cli_check_indexes(const char *cmd, const char *list);
/* Sets standard output aside for a protocol (the MCP and LSP servers):
 * *out writes to it, and file descriptor 1 becomes standard error, so
 * whatever a plugin or library prints cannot corrupt the protocol.  A
 * write to a client that went away fails instead of killing the process. */
int cn_cli_protocol_stdout(FILE **out);
/* The options `codenib mcp` and `codenib lsp` share. */
typedef struct cn_cli_serve {
    const char *repo, *cache_dir, *indexes;
    bool no_compile, quiet;
} cn_cli_serve;
/* Takes argv[*i] (and its value, moving *i past it) when it is one of
 * them: --repo, --cache-dir, --index, --no-compile, --quiet. */
bool cn_cli_serve_option(int argc, char **argv, int *i, cn_cli_serve *o);
/* The usage error for an argument that no option took. */
int cn_cli_serve_bad_arg(const char *cmd, const char *arg);
/* --max-output N: the bound of one tool result in bytes, 1 to 1e9; 0 or a
 * usage error (exit 2) naming `cmd`. */
int cn_cli_max_output(const char *cmd, const char *arg, long *out);
/* A server's log line on standard error, "codenib CMD: line" (data: CMD). */
void cn_cli_serve_log(const char *line, void *cmd);
/* How a subcommand reads an argument in the place of an option (not the
 * value of one): the "--" that ends the options (*ended is set; skip it),
 * an option, or an operand.  Operands: everything after "--", "-" alone,
 * words not starting with '-', and words holding a space -- no option has
 * one, so `codenib query "-x is ignored"` is a question, not a typo. */
typedef enum cn_cli_arg_kind { CN_CLI_END_OF_OPTIONS, CN_CLI_OPTION, CN_CLI_OPERAND } cn_cli_arg_kind;
cn_cli_arg_kind cn_cli_arg(const char *arg, bool *ended);
/* True when argv[i] is -h or --help. */
bool cn_cli_is_help(const char *arg);

#endif /* CN_CLI_H */
