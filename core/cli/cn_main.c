/* SPDX-License-Identifier: Apache-2.0 */
/* `codenib`: entry point and subcommand dispatch. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cn_cli.h"
#include "config/cn_config.h"

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
          "  config   show the merged configuration and where each value came from\n"
          "\n"
          "Skills are found, in this order, in: the build tree (when run from it),\n"
          "each directory of CODENIB_SKILLS_PATH (colon-separated), the installed skills\n"
          "directory, and $CODENIB_HOME/skills (default ~/.codenib/skills).\n"
          "\n"
          "Environment:\n"
          "  CODENIB_SKILLS_PATH  extra skill directories, searched before the installed ones\n"
          "  CODENIB_PLUGINS_PATH extra backend plugin directories, likewise\n"
          "  CODENIB_HOME         per-user state and indexes (default: skills and plugins in\n"
          "                       ~/.codenib, indexes in $XDG_CACHE_HOME/codenib or, when\n"
          "                       it already holds them, ~/.codenib)\n"
          "  XDG_CONFIG_HOME      holds codenib/config.yaml (default ~/.config), read after\n"
          "                       $(sysconfdir)/codenib/config.yaml; see 'codenib config'\n"
          "  CODENIB_LOG          debug, info, warning (default) or error\n"
          "  CODENIB_MODEL        chat model for `query` and model-backed skills (none: offline)\n"
          "  CODENIB_BASE_URL, OPENAI_BASE_URL, CODENIB_API_KEY, OPENAI_API_KEY\n"
          "                       the OpenAI-compatible endpoint and its key\n"
          "  CODENIB_LIBCURL      the libcurl to load for HTTP (default: the one built against)\n"
          "  CODENIB_PARSE_TIMEOUT_SCALE  multiplies the time a file's parse may take\n"
          "                       (5 s + 10 us a byte; a parse that overruns it fails the file)\n"
          "  CODENIB_GIT_TIMEOUT  seconds a git command may take before it is stopped (default 30)\n"
          "\n"
          "Run 'codenib COMMAND --help' (or 'codenib help COMMAND') for the options of a\n"
          "command; every option that takes a value accepts --option=value as well.\n",
          f);
}

/* The configuration files and the environment, for every command: a
 * malformed file stops the command with its file:line rather than running
 * with settings the user did not mean. */
static void drop_config(void)
{
    cn_config_set_current(NULL);
}

static int load_config(void)
{
    cn_config *c = NULL;
    const cn_strv *w;
    if (cn_config_load(&c) < 0 || cn_config_export_env(c) < 0) {
        cn_config_free(c);
        return cn_cli_fail();
    }
    w = cn_config_warnings(c);
    for (size_t i = 0; w != NULL && i < w->len; i++) fprintf(stderr, "codenib: warning: %s\n", w->items[i]);
    cn_config_set_current(c);
    atexit(drop_config);
    return CN_EXIT_OK;
}

static bool is_command(const char *cmd);
static int dispatch(const char *cmd, int argc, char **argv);

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
    if (cn_cli_split_long_options(&argc, &argv) < 0) return cn_cli_fail();
    cmd = argv[1];
    /* `codenib help CMD` is `codenib CMD --help` */
    if (strcmp(cmd, "help") == 0 && argc >= 3 && is_command(argv[2])) {
        char *help_argv[] = {argv[0], argv[2], (char *)"--help", NULL};
        argc = 3;
        argv = help_argv;
        cmd = argv[1];
        return dispatch(cmd, argc, argv);
    }
    if (strcmp(cmd, "help") == 0 && argc >= 3) {
        fprintf(stderr, "codenib help: '%s' is not a command.\n\n", argv[2]);
        usage(stderr);
        return CN_EXIT_USAGE;
    }
    if (cn_cli_is_help(cmd) || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return CN_EXIT_OK;
    }
    /* --version as the only argument of any command, too */
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0 ||
        (argc == 3 && is_command(cmd) && strcmp(argv[2], "--version") == 0)) {
        printf("codenib %s (skill ABI %d.%d)\n", CN_VERSION_STRING, CN_ABI_MAJOR, CN_ABI_MINOR);
        return CN_EXIT_OK;
    }
    return dispatch(cmd, argc, argv);
}

static bool is_command(const char *cmd)
{
    static const char *const commands[] = {"config", "skills", "run", "compile", "status", "plugins",
                                           "query", "eval", "mcp", "lsp"};
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(cmd, commands[i]) == 0) return true;
    return false;
}

static int dispatch(const char *cmd, int argc, char **argv)
{
    int rc;
    if ((rc = load_config()) != CN_EXIT_OK) return rc;
    if (strcmp(cmd, "config") == 0) return cn_cmd_config(argc - 1, argv + 1);
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
