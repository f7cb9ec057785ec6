/* SPDX-License-Identifier: Apache-2.0 */
/* `codenib config show`: the merged configuration (files, environment,
 * defaults) and where each value came from. */
#include <stdio.h>
#include <string.h>

#include "cn_cli.h"
#include "config/cn_config.h"

static void config_usage(FILE *f)
{
    fputs("usage: codenib config show [--json]\n"
          "\n"
          "Prints the settings codenib runs with and where each came from.  Later\n"
          "layers win: built-in defaults, $(sysconfdir)/codenib/config.yaml\n"
          "(CODENIB_SYSCONFDIR replaces $(sysconfdir)), $XDG_CONFIG_HOME/codenib/config.yaml\n"
          "(default ~/.config), the environment (CODENIB_MODEL, CODENIB_BASE_URL,\n"
          "OPENAI_BASE_URL), then a command's own flags (--model, --embedder, ...).\n"
          "\n"
          "Settings: model, base_url, api_key_env (the variable holding the API key),\n"
          "embedder, vector_store (default backends of a vector index), and skills:\n"
          "a mapping of skill ids to parameter defaults that override the package's.\n"
          "index_home is where indexes are kept.\n",
          f);
}

static void print_entry(const char *key, json_object *e)
{
    json_object *v = NULL, *s = NULL;
    json_object_object_get_ex(e, "value", &v);
    json_object_object_get_ex(e, "source", &s);
    printf("%-24s %-32s (%s)\n", key,
           v == NULL ? "-" : json_object_is_type(v, json_type_string) ? json_object_get_string(v)
                                                                     : json_object_to_json_string(v),
           json_object_get_string(s));
}

static void print_text(json_object *o)
{
    json_object *skills = NULL, *files = NULL;
    json_object_object_foreach(o, key, e) {
        if (strcmp(key, "skills") == 0 || strcmp(key, "files") == 0) continue;
        print_entry(key, e);
    }
    json_object_object_get_ex(o, "skills", &skills);
    json_object_object_foreach(skills, id, params) {
        json_object_object_foreach(params, pk, pe) {
            char name[512];
            snprintf(name, sizeof name, "skills.%s.%s", id, pk);
            print_entry(name, pe);
        }
    }
    json_object_object_get_ex(o, "files", &files);
    printf("files read:%s\n", json_object_array_length(files) ? "" : " none");
    for (size_t i = 0; i < json_object_array_length(files); i++)
        printf("  %s\n", json_object_get_string(json_object_array_get_idx(files, i)));
}

int cn_cmd_config(int argc, char **argv)
{
    bool json = false, ended = false;
    const char *sub = argc > 1 ? argv[1] : NULL;
    cn_config *own = NULL;
    const cn_config *c = cn_config_current();
    json_object *o;

    if (sub == NULL || cn_cli_is_help(sub)) {
        config_usage(sub ? stdout : stderr);
        return sub ? CN_EXIT_OK : CN_EXIT_USAGE;
    }
    if (strcmp(sub, "show") != 0) return cn_cli_usage_error("config", "'%s' is not a config command", sub);
    for (int i = 2; i < argc; i++) {
        cn_cli_arg_kind kind = cn_cli_arg(argv[i], &ended);
        if (kind == CN_CLI_END_OF_OPTIONS) continue;
        if (kind == CN_CLI_OPTION && strcmp(argv[i], "--json") == 0) json = true;
        else if (kind == CN_CLI_OPTION && cn_cli_is_help(argv[i])) {
            config_usage(stdout);
            return CN_EXIT_OK;
        } else return cn_cli_usage_error("config show", "unexpected argument '%s'", argv[i]);
    }
    if (c == NULL) {
        if (cn_config_load(&own) < 0) return cn_cli_fail();
        c = own;
    }
    if ((o = cn_config_to_json(c)) == NULL) {
        cn_config_free(own);
        cn_error_set(CN_ENOMEM, "out of memory");
        return cn_cli_fail();
    }
    if (json) cn_cli_print_json(o, true);
    else print_text(o);
    json_object_put(o);
    cn_config_free(own);
    return CN_EXIT_OK;
}
