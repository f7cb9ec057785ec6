/* Helpers shared by the `codenib` subcommands. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cn_cli.h"

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
    fputs(json_object_to_json_string_ext(o, flags), stdout);
    fputc('\n', stdout);
}

bool cn_cli_is_help(const char *arg)
{
    return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}
