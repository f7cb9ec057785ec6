/* SPDX-License-Identifier: Apache-2.0 */
/* `codenib mcp`: the MCP server (core/serve/cn_mcp.c) over stdio -- one JSON-RPC
 * message a line in, one a line out, the log on standard error. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cn_cli.h"
#include "serve/cn_frame.h"
#include "serve/cn_mcp.h"

static void mcp_usage(FILE *f)
{
    fputs("usage: codenib mcp [--repo DIR] [--cache-dir D] [--index LIST] [--skills A,B]\n"
          "                   [--no-compile] [--enable-bash] [--tool-timeout MS]\n"
          "                   [--max-output N] [--tools LIST | --profile P]\n"
          "                   [--workers N] [--quiet]\n"
          "\n"
          "Serves one repository to a coding agent over the Model Context Protocol, on\n"
          "standard input and output (one JSON-RPC message a line; the log goes to\n"
          "standard error).  The tools: `locate` (the offline planner's answer: Files,\n"
          "Symbols, Locations and the evidence), read, grep and glob over the repository,\n"
          "and every installed skill whose index and model are there (bm25_search,\n"
          "find_callers, lsp_definition, ...; the others are named on standard error).\n"
          "The repository is compiled on the first call that needs its index, and\n"
          "compiled again (only what changed) whenever its files changed since.\n"
          "\n"
          "  --repo DIR     the repository (default: the current directory)\n"
          "  --cache-dir D  where its index lives (as for `codenib compile`)\n"
          "  --index LIST   what a compile builds, as for `codenib compile --index`\n"
          "                 (default: what the index recorded when it was compiled,\n"
          "                 vector backends included)\n"
          "  --skills A,B   offer only these skills (locate and the default tools stay)\n"
          "  --no-compile   never compile: serve the index as it is, stale or not\n"
          "  --enable-bash  offer the bash tool (a shell in the repository, with a time limit)\n"
          "  --tool-timeout MS  time limit of one read, grep or glob call (default 5000):\n"
          "                 glob then answers with what it found so far, grep fails\n"
          "  --max-output N bound of one tool result, in bytes (so at most N characters;\n"
          "                 default 30000): a longer one keeps the first results that\n"
          "                 fit and says what it left out and how to get it (the\n"
          "                 offset of the next page, the arguments that narrow the call)\n"
          "  --tools LIST   offer only these of the server's own tools, comma-separated:\n"
          "                 locate, read, grep, glob, bash (bash also needs\n"
          "                 --enable-bash); skills are chosen with --skills\n"
          "  --profile P    full (the default: every tool) or skills-only (locate and\n"
          "                 the skills, for a client with its own read, grep, glob and\n"
          "                 shell)\n"
          "  --workers N    tool calls run at once (default 4, 1 to 64); ping,\n"
          "                 initialize and tools/list are answered while they run, and\n"
          "                 notifications/cancelled stops the call it names\n"
          "  --quiet        no log on standard error\n"
          "  -h, --help     this text\n"
          "\n"
          "A client's configuration, for example:\n"
          "  {\"mcpServers\": {\"codenib\": {\"command\": \"codenib\",\n"
          "                              \"args\": [\"mcp\", \"--repo\", \"/path/to/repo\"]}}}\n"
          "\n"
          "Exit status: 0 when standard input ends, 1 when the server cannot start or\n"
          "cannot write, 2 on a usage error.\n",
          f);
}

static int send_line(const char *line, void *out)
{
    return cn_frame_write_line(out, line);
}

static bool blank(const cn_buf *b)
{
    for (size_t i = 0; i < b->len; i++)
        if (b->data[i] != ' ' && b->data[i] != '\t' && b->data[i] != '\r') return false;
    return true;
}

int cn_cmd_mcp(int argc, char **argv)
{
    cn_mcp_options o;
    cn_mcp *s = NULL;
    cn_buf line = CN_BUF_INIT;
    FILE *out;
    cn_cli_serve c = {NULL, NULL, NULL, false, false};
    bool ended = false;
    const char *profile = NULL;
    long workers = CN_MCP_WORKERS_DEFAULT;
    int rc;

    memset(&o, 0, sizeof o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        cn_cli_arg_kind kind = cn_cli_arg(a, &ended);
        if (kind == CN_CLI_END_OF_OPTIONS) {
            continue;
        } else if (kind == CN_CLI_OPERAND) {
            return cn_cli_serve_bad_arg("mcp", a);
        } else if (cn_cli_is_help(a)) {
            mcp_usage(stdout);
            return CN_EXIT_OK;
        } else if (cn_cli_serve_option(argc, argv, &i, &c)) {
            continue;
        } else if (strcmp(a, "--skills") == 0 && i + 1 < argc) {
            o.skills = argv[++i];
        } else if (strcmp(a, "--enable-bash") == 0) {
            o.enable_bash = true;
        } else if (strcmp(a, "--tool-timeout") == 0 && i + 1 < argc) {
            char *end;
            long n = strtol(argv[++i], &end, 10);
            if (*end != '\0' || n < 1 || n > 3600000)
                return cn_cli_usage_error("mcp", "--tool-timeout takes milliseconds from 1 to 3600000, "
                                                 "not '%s'", argv[i]);
            o.tool_timeout_ms = n;
        } else if (strcmp(a, "--tools") == 0 && i + 1 < argc) {
            o.tools = argv[++i];
        } else if (strcmp(a, "--profile") == 0 && i + 1 < argc) {
            profile = argv[++i];
            if (strcmp(profile, "full") != 0 && strcmp(profile, "skills-only") != 0)
                return cn_cli_usage_error("mcp", "--profile is full or skills-only, not '%s'", profile);
        } else if (strcmp(a, "--workers") == 0 && i + 1 < argc) {
            char *end;
            workers = strtol(argv[++i], &end, 10);
            if (argv[i][0] == '\0' || *end != '\0' || workers < 1 || workers > CN_MCP_WORKERS_MAX)
                return cn_cli_usage_error("mcp", "--workers takes a number from 1 to %d, not '%s'",
                                          CN_MCP_WORKERS_MAX, argv[i]);
        } else if (strcmp(a, "--max-output") == 0 && i + 1 < argc) {
            long n;
            if ((rc = cn_cli_max_output("mcp", argv[++i], &n)) != 0) return rc;
            o.max_output = (size_t)n;
        } else {
            return cn_cli_serve_bad_arg("mcp", a);
        }
    }
    if (c.indexes != NULL && (rc = cn_cli_check_indexes("mcp", c.indexes)) != 0) return rc;
    if (profile != NULL && o.tools != NULL)
        return cn_cli_usage_error("mcp", "--tools and --profile both choose the tools: give one");
    /* skills-only: what a client with its own file and shell tools lacks */
    if (profile != NULL && strcmp(profile, "skills-only") == 0) o.tools = CN_MCP_LOCATE;
    o.repo = c.repo ? c.repo : ".";
    o.cache_dir = c.cache_dir;
    o.indexes = c.indexes;
    o.no_compile = c.no_compile;
    o.log = c.quiet ? NULL : cn_cli_serve_log;
    o.log_data = (void *)"mcp";
    if (cn_mcp_new(&o, &s) < 0) return cn_cli_fail();

    if (cn_cli_protocol_stdout(&out) < 0) {
        cn_mcp_free(s);
        return cn_cli_fail();
    }
    if (cn_mcp_start(s, (unsigned)workers, send_line, out) < 0) {
        cn_mcp_free(s);
        fclose(out);
        return cn_cli_fail();
    }
    if (!c.quiet) cn_cli_serve_log("serving on standard input and output", (void *)"mcp");

    while ((rc = cn_frame_read_line(stdin, CN_FRAME_MAX_MESSAGE, &line)) > 0) {
        if (rc == 2) {
            rc = cn_mcp_send(s, CN_FRAME_TOO_LONG_REPLY);
        } else if (blank(&line)) {
            continue;
        } else {
            rc = cn_mcp_submit(s, line.data, line.len);
        }
        if (rc < 0) break;
    }
    cn_buf_free(&line);
    /* the end of input: the calls under way are answered first; the
     * output gone: they are stopped */
    if (cn_mcp_stop(s, rc < 0) < 0 && rc >= 0) rc = -1;
    cn_mcp_free(s);
    if (fclose(out) != 0 && rc >= 0) rc = cn_error_set(CN_EIO, "cannot write to standard output: %s", strerror(errno));
    if (rc < 0) return cn_cli_fail();
    if (ferror(stdin)) {
        cn_error_set(CN_EIO, "cannot read standard input: %s", strerror(errno));
        return cn_cli_fail();
    }
    return CN_EXIT_OK;
}
