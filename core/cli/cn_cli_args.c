/* SPDX-License-Identifier: Apache-2.0 */
/* Command-line conventions shared by every command: `--option=value` is
 * the same as `--option value` (as getopt_long has it), applied once
 * before a command parses its arguments; and terminal escapes only where a
 * terminal wants them (NO_COLOR, TERM=dumb).  `codenib help CMD` and
 * `codenib CMD --version` are in cn_main.c. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cn_cli.h"

static char **split_argv;   /* what cn_cli_split_long_options made */
static char **split_owned;  /* the option names it cut out, to free */
static size_t split_n_owned;

static void free_split(void)
{
    for (size_t i = 0; i < split_n_owned; i++) free(split_owned[i]);
    free(split_owned);
    free(split_argv);
    split_argv = NULL;
    split_owned = NULL;
    split_n_owned = 0;
}

/* "--name=value" with a name of letters, digits and '-' */
static const char *long_with_value(const char *arg)
{
    const char *p;
    if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0' || arg[2] == '=') return NULL;
    for (p = arg + 2; *p && *p != '='; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-'))
            return NULL;
    return *p == '=' ? p : NULL;
}

int cn_cli_split_long_options(int *argc, char ***argv)
{
    int n = *argc, extra = 0, j = 0;
    bool ended = false;

    for (int i = 0; i < n; i++) {
        if (strcmp((*argv)[i], "--") == 0) break;
        if (long_with_value((*argv)[i])) extra++;
    }
    if (extra == 0) return 0;
    free_split();
    split_argv = calloc((size_t)(n + extra + 1), sizeof *split_argv);
    split_owned = calloc((size_t)extra, sizeof *split_owned);
    if (split_argv == NULL || split_owned == NULL) {
        free_split();
        return cn_error_set(CN_ENOMEM, "out of memory");
    }
    for (int i = 0; i < n; i++) {
        const char *arg = (*argv)[i], *eq = ended ? NULL : long_with_value(arg);
        if (!ended && strcmp(arg, "--") == 0) ended = true;
        if (eq == NULL) {
            split_argv[j++] = (*argv)[i];
            continue;
        }
        if ((split_owned[split_n_owned] = cn_strndup(arg, (size_t)(eq - arg))) == NULL) {
            free_split();
            return cn_error_set(CN_ENOMEM, "out of memory");
        }
        split_argv[j++] = split_owned[split_n_owned++];
        split_argv[j++] = (char *)(eq + 1);
    }
    split_argv[j] = NULL;
    atexit(free_split);
    *argc = j;
    *argv = split_argv;
    return 0;
}

bool cn_cli_escapes_ok(int fd)
{
    const char *term = getenv("TERM"), *no_color = getenv("NO_COLOR");
    if (!isatty(fd)) return false;
    if (term != NULL && strcmp(term, "dumb") == 0) return false;
    return no_color == NULL || no_color[0] == '\0';
}
