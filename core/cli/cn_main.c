/* SPDX-License-Identifier: Apache-2.0 */
/* `codenib`: entry point and subcommand dispatch. */
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include "cn_cli.h"

static void usage(FILE *f)
{
    fputs("usage: codenib [--version] [--help] COMMAND [ARGS]\n"
          "\n"
          "codenib tells where in a repository a change belongs.\n"
          "\n"
          "Commands:\n"
          "  query    answer where a change belongs: Files / Symbols / Locations\n"
          "  eval     measure localization on a dataset of real issues (Acc@k, report)\n"
          "  compile  compile a repository into indexes (nodes, BM25, symbol graph, vectors)\n"
          "  status   say whether a repository's index is fresh or stale, and why\n"
          "  skills   list, show and describe the installed skills\n"
          "  plugins  list the backend plugins (languages, embedders, vector stores, LSP)\n"
          "  run      invoke one skill with JSON arguments and print its JSON result\n"
          "  mcp      serve a repository to a coding agent over MCP (stdio)\n"
          "  lsp      serve definitions and references to an editor over LSP (stdio)\n"
          "\n"
          "Skills are found, in this order, in: the build tree (when run from it),\n"
          "each directory of CODENIB_SKILLS_PATH (colon-separated), the installed skills\n"
          "directory, and $CODENIB_HOME/skills (default ~/.codenib/skills).\n"
          "\n"
          "Environment:\n"
          "  CODENIB_SKILLS_PATH  extra skill directories, searched before the installed ones\n"
          "  CODENIB_PLUGINS_PATH extra backend plugin directories, likewise\n"
          "  CODENIB_HOME         per-user state (default ~/.codenib)\n"
          "  CODENIB_LOG          debug, info, warning (default) or error\n"
          "  CODENIB_MODEL        chat model for `query` and model-backed skills (none: offline)\n"
          "  CODENIB_BASE_URL, OPENAI_BASE_URL, CODENIB_API_KEY, OPENAI_API_KEY\n"
          "                       the OpenAI-compatible endpoint and its key\n"
          "  CODENIB_LIBCURL      the libcurl to load for HTTP (default: the one built against)\n"
          "  CODENIB_PARSE_TIMEOUT_SCALE  multiplies the time a file's parse may take\n"
          "                       (5 s + 10 us a byte; a parse that overruns it fails the file)\n"
          "  CODENIB_GIT_TIMEOUT  seconds a git command may take before it is stopped (default 30)\n"
          "\n"
          "Run 'codenib COMMAND --help' for the options of a command.\n",
          f);
}

int main(int argc, char **argv)
{
    const char *cmd;

#if defined(M_MMAP_THRESHOLD) && defined(M_TRIM_THRESHOLD)
    /* A short-lived process that builds large arrays one after another
     * (a compile writes each index from a few of them): freed blocks stay
     * with the process for the next one instead of going back to the
     * kernel, whose fresh pages each cost a fault.  A quarter fewer page
     * faults for a one-file re-compile. */
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 128 << 20);
#endif
    if (argc < 2) {
        usage(stderr);
        return CN_EXIT_USAGE;
    }
    cmd = argv[1];
    if (cn_cli_is_help(cmd) || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return CN_EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("codenib %s (skill ABI %d.%d)\n", CN_VERSION_STRING, CN_ABI_MAJOR, CN_ABI_MINOR);
        return CN_EXIT_OK;
    }
    if (strcmp(cmd, "skills") == 0) return cn_cmd_skills(argc - 1, argv + 1);
    if (strcmp(cmd, "run") == 0) return cn_cmd_run(argc - 1, argv + 1);
    if (strcmp(cmd, "compile") == 0) return cn_cmd_compile(argc - 1, argv + 1);
    if (strcmp(cmd, "status") == 0) return cn_cmd_status(argc - 1, argv + 1);
    if (strcmp(cmd, "plugins") == 0) return cn_cmd_plugins(argc - 1, argv + 1);
    if (strcmp(cmd, "query") == 0) return cn_cmd_query(argc - 1, argv + 1);
    if (strcmp(cmd, "eval") == 0) return cn_cmd_eval(argc - 1, argv + 1);
    if (strcmp(cmd, "mcp") == 0) return cn_cmd_mcp(argc - 1, argv + 1);
    if (strcmp(cmd, "lsp") == 0) return cn_cmd_lsp(argc - 1, argv + 1);
    fprintf(stderr, "codenib: '%s' is not a command.\n\n", cmd);
    usage(stderr);
    return CN_EXIT_USAGE;
}
