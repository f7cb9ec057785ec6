/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by the `codenib` subcommands. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cn_cli.h"
#include "index/cn_compile.h"
#include "util/cn_utf8.h"

int cn_cli_fail(void)
{
    const cn_error *e = cn_error_last();
    fprintf(stderr, "codenib: error: %s\n", e->message[0] ? e->message : cn_error_code_name(e->code));
    return CN_EXIT_FAIL;
}

int cn_cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "codenib %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'codenib %s --help'.\n", cmd);
    return CN_EXIT_USAGE;
}

int cn_cli_open_registry(cn_registry **out)
{
    int rc = cn_registry_new(out);
    if (rc < 0) return rc;
    rc = cn_registry_discover(*out);
    if (rc < 0) {
        cn_registry_free(*out);
        *out = NULL;
    }
    return rc;
}

void cn_cli_print_json(json_object *o, bool pretty)
{
    int flags = JSON_C_TO_STRING_NOSLASHESCAPE |
                (pretty ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED : JSON_C_TO_STRING_PLAIN);
    char *text = cn_json_text(o, flags);
    /* out of memory here leaves the output empty, which no reader takes
     * for an answer */
    if (text) puts(text);
    free(text);
}

void cn_cli_print_text(const char *text)
{
    char *s = cn_utf8_scrub_dup(text, strlen(text), CN_UTF8_KEEP_LINES);
    if (s) puts(s);
    free(s);
}

cn_cli_arg_kind cn_cli_arg(const char *arg, bool *ended)
{
    if (*ended) return CN_CLI_OPERAND;
    if (strcmp(arg, "--") == 0) {
        *ended = true;
        return CN_CLI_END_OF_OPTIONS;
    }
    if (arg[0] != '-' || arg[1] == '\0' || strpbrk(arg, " \t\n") != NULL) return CN_CLI_OPERAND;
    return CN_CLI_OPTION;
}

bool cn_cli_is_help(const char *arg)
{
    return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

int cn_cli_check_indexes(const char *cmd, const char *list)
{
    cn_strv ids = CN_STRV_INIT;
    int rc = cn_strv_split(&ids, list, ',') < 0 ? cn_error_set(CN_ENOMEM, "out of memory") : 0;
    for (size_t i = 0; rc == 0 && i < ids.len; i++)
        if (!cn_index_name_valid(ids.items[i]))
            rc = cn_cli_usage_error(cmd, "--index: '%s' is no index (known: " CN_INDEX_NAMES ")", ids.items[i]);
    cn_strv_free(&ids);
    return rc < 0 ? cn_cli_fail() : rc;
}

int cn_cli_protocol_stdout(FILE **out)
{
    int fd;
    signal(SIGPIPE, SIG_IGN);   /* a client gone is a write error, not a kill */
    fflush(stdout);
    if ((fd = dup(STDOUT_FILENO)) < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0 || (*out = fdopen(fd, "w")) == NULL) {
        cn_error_set(CN_EIO, "cannot set standard output aside for the protocol: %s", strerror(errno));
        if (fd >= 0) close(fd);
        return CN_EIO;
    }
    (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
    return 0;
}

bool cn_cli_serve_option(int argc, char **argv, int *i, cn_cli_serve *o)
{
    const char *a = argv[*i];
    const char **value = strcmp(a, "--repo") == 0        ? &o->repo
                         : strcmp(a, "--cache-dir") == 0 ? &o->cache_dir
                         : strcmp(a, "--index") == 0     ? &o->indexes
                                                         : NULL;
    if (value != NULL && *i + 1 < argc) {
        *value = argv[++*i];
        return true;
    }
    if (strcmp(a, "--no-compile") == 0) return o->no_compile = true;
    if (strcmp(a, "--quiet") == 0) return o->quiet = true;
    return false;
}

int cn_cli_serve_bad_arg(const char *cmd, const char *a)
{
    return cn_cli_usage_error(cmd, "%s '%s'%s", a[0] == '-' ? "unknown option" : "unexpected argument", a,
                              a[0] == '-' ? " (or it lacks its value)" : " (the repository goes after --repo)");
}

void cn_cli_serve_log(const char *line, void *cmd)
{
    fprintf(stderr, "codenib %s: %s\n", (const char *)cmd, line);
}

int cn_cli_max_output(const char *cmd, const char *arg, long *out)
{
    char *end;
    long n;
    errno = 0;
    n = strtol(arg, &end, 10);
    if (arg[0] == '\0' || *end != '\0' || errno != 0 || n < 1 || n > 1000000000L)
        return cn_cli_usage_error(cmd, "--max-output takes a size in bytes from 1 to 1000000000, not '%s'", arg);
    *out = n;
    return 0;
}
