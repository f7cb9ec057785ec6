/* SPDX-License-Identifier: Apache-2.0 */
/* `codenib plugins list`: the backend plugins (language parsers,
 * embedders, vector stores, LSP providers) found on the plugin search path,
 * with their state. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cn_cli.h"
#include "index/cn_langs.h"
#include "plugin/cn_backends.h"
#include "plugin/cn_search_path.h"

static void plugins_usage(FILE *f)
{
    fputs("usage: codenib plugins list [--json] [--verbose]\n"
          "\n"
          "Lists the backend plugins (language parsers, embedders, vector stores, LSP\n"
          "providers) found, in this order, in: the\n"
          "build tree (when run from it), each directory of CODENIB_PLUGINS_PATH, the\n"
          "installed plugins directory, and $CODENIB_HOME/plugins.  Each is opened and\n"
          "checked; a broken one is listed with the reason, and the exit status is then 1\n"
          "(the listing is printed all the same).\n",
          f);
}

int cn_cmd_plugins(int argc, char **argv)
{
    bool json = false, verbose = false, ended = false;
    cn_langs langs = {0};
    cn_backends backs = {0};
    const char *sub = argc > 1 ? argv[1] : NULL;

    if (sub == NULL || cn_cli_is_help(sub)) {
        plugins_usage(sub ? stdout : stderr);
        return sub ? CN_EXIT_OK : CN_EXIT_USAGE;
    }
    if (strcmp(sub, "list") != 0) return cn_cli_usage_error("plugins", "'%s' is not a plugins command", sub);
    for (int i = 2; i < argc; i++) {
        cn_cli_arg_kind kind = cn_cli_arg(argv[i], &ended);
        if (kind == CN_CLI_END_OF_OPTIONS) continue;
        if (kind == CN_CLI_OPERAND) return cn_cli_usage_error("plugins list", "unexpected argument '%s'", argv[i]);
        if (strcmp(argv[i], "--json") == 0) json = true;
        else if (strcmp(argv[i], "--verbose") == 0 || strcmp(argv[i], "-v") == 0) verbose = true;
        else if (cn_cli_is_help(argv[i])) {
            plugins_usage(stdout);
            return CN_EXIT_OK;
        } else return cn_cli_usage_error("plugins list", "unexpected argument '%s'", argv[i]);
    }
    if (cn_langs_discover(&langs) < 0 || cn_backends_discover(&backs) < 0) {
        cn_langs_free(&langs);
        cn_backends_free(&backs);
        return cn_cli_fail();
    }
    for (size_t i = 0; i < backs.len; i++) {
        const cn_backend_descriptor *d;
        if (cn_backends_open(&backs.items[i], &d) < 0) cn_error_clear();
    }
    for (size_t i = 0; i < langs.len; i++) {
        const cn_lang_descriptor *d;
        if (cn_langs_open(&langs.items[i], &d) < 0) cn_error_clear();
    }
    if (json) {
        json_object *a = json_object_new_array();
        for (size_t i = 0; i < langs.len; i++) {
            const cn_lang_entry *e = &langs.items[i];
            json_object *o = json_object_new_object(), *ext = json_object_new_array();
            for (size_t k = 0; k < e->extensions.len; k++)
                json_object_array_add(ext, json_object_new_string(e->extensions.items[k]));
            json_object_object_add(o, "plugin_id", json_object_new_string(e->plugin_id));
            json_object_object_add(o, "kind", json_object_new_string("language"));
            json_object_object_add(o, "language", json_object_new_string(e->language));
            json_object_object_add(o, "state", json_object_new_string(e->desc ? "loaded" : "failed"));
            json_object_object_add(o, "version", e->desc ? json_object_new_string(e->desc->version) : NULL);
            json_object_object_add(o, "extensions", ext);
            json_object_object_add(o, "abi", e->desc ? cn_abi_json(e->desc->abi_major, e->desc->abi_minor) : NULL);
            json_object_object_add(o, "source", json_object_new_string(e->source));
            json_object_object_add(o, "dir", json_object_new_string(e->dir));
            json_object_object_add(o, "reason", e->reason ? json_object_new_string(e->reason) : NULL);
            json_object_array_add(a, o);
        }
        for (size_t i = 0; i < backs.len; i++) {
            const cn_backend_entry *e = &backs.items[i];
            json_object *o = json_object_new_object();
            json_object_object_add(o, "plugin_id", json_object_new_string(e->id));
            json_object_object_add(o, "kind", json_object_new_string(cn_backend_kind_name(e->kind)));
            json_object_object_add(o, "state", json_object_new_string(e->desc ? "loaded" : "failed"));
            json_object_object_add(o, "abi", e->desc ? cn_abi_json(e->desc->abi_major, e->desc->abi_minor) : NULL);
            json_object_object_add(o, "version", e->desc ? json_object_new_string(e->desc->version) : NULL);
            json_object_object_add(o, "source", json_object_new_string(e->source));
            json_object_object_add(o, "dir", json_object_new_string(e->dir));
            json_object_object_add(o, "reason", e->reason ? json_object_new_string(e->reason) : NULL);
            json_object_array_add(a, o);
        }
        for (size_t i = 0; i < backs.problems.len; i++) {
            json_object *o = json_object_new_object();
            json_object_object_add(o, "state", json_object_new_string("failed"));
            json_object_object_add(o, "reason", json_object_new_string(backs.problems.items[i]));
            json_object_array_add(a, o);
        }
        for (size_t i = 0; i < langs.problems.len; i++) {
            json_object *o = json_object_new_object();
            json_object_object_add(o, "state", json_object_new_string("failed"));
            json_object_object_add(o, "reason", json_object_new_string(langs.problems.items[i]));
            json_object_array_add(a, o);
        }
        cn_cli_print_json(a, false);
        json_object_put(a);
    } else {
        if (verbose) {
            cn_strv dirs = CN_STRV_INIT, labels = CN_STRV_INIT;
            if (cn_search_path("plugins", "CODENIB_PLUGINS_PATH", &dirs, &labels) == 0) {
                printf("Search path (first hit of a language wins):\n");
                for (size_t i = 0; i < dirs.len; i++) {
                    struct stat st;
                    printf("  %-22s %s%s\n", labels.items[i], dirs.items[i],
                           stat(dirs.items[i], &st) == 0 ? "" : "  (absent)");
                }
                printf("\n");
            }
            cn_strv_free(&dirs);
            cn_strv_free(&labels);
        }
        if (langs.len == 0 && langs.problems.len == 0)
            printf("No language backends found: run scripts/fetch-grammars.sh, then configure and "
                   "build (configure says which backends it builds and why not).\n");
        else
            printf("%-16s %-12s %-8s %-40s %s\n", "PLUGIN", "LANGUAGE", "STATE", "VERSION", "SOURCE");
        for (size_t i = 0; i < langs.len; i++) {
            const cn_lang_entry *e = &langs.items[i];
            printf("%-16s %-12s %-8s %-40s %s\n", e->plugin_id, e->language, e->desc ? "loaded" : "failed",
                   e->desc ? e->desc->version : "-", e->source);
            if (verbose) {
                printf("    dir: %s\n", e->dir);
                if (e->desc) printf("    abi: built for %u.%u; codenib speaks %d.%d\n", e->desc->abi_major,
                                    e->desc->abi_minor, CN_ABI_MAJOR, CN_ABI_MINOR);
                printf("    extensions:");
                for (size_t k = 0; k < e->extensions.len; k++) printf(" %s", e->extensions.items[k]);
                printf("\n");
            }
            if (e->reason) printf("    reason: %s\n", e->reason);
        }
        for (size_t i = 0; i < langs.problems.len; i++) printf("(broken)         reason: %s\n", langs.problems.items[i]);
        if (backs.len) printf("\n%-16s %-12s %-8s %-40s %s\n", "PLUGIN", "KIND", "STATE", "VERSION", "SOURCE");
        for (size_t i = 0; i < backs.len; i++) {
            const cn_backend_entry *e = &backs.items[i];
            printf("%-16s %-12s %-8s %-40s %s\n", e->id, cn_backend_kind_name(e->kind), e->desc ? "loaded" : "failed",
                   e->desc ? e->desc->version : "-", e->source);
            if (verbose) printf("    dir: %s\n", e->dir);
            if (verbose && e->desc)
                printf("    abi: built for %u.%u; codenib speaks %d.%d\n", e->desc->abi_major, e->desc->abi_minor,
                       CN_ABI_MAJOR, CN_ABI_MINOR);
            if (e->reason) printf("    reason: %s\n", e->reason);
        }
        for (size_t i = 0; i < backs.problems.len; i++) printf("(broken)         reason: %s\n", backs.problems.items[i]);
    }
    {
        /* a plugin that failed to load is an error of the installation:
         * scripts and package checks see it in the exit status */
        size_t bad = langs.problems.len + backs.problems.len;
        for (size_t i = 0; i < langs.len; i++) bad += langs.items[i].desc == NULL;
        for (size_t i = 0; i < backs.len; i++) bad += backs.items[i].desc == NULL;
        if (bad) fprintf(stderr, "codenib plugins list: %zu plugin%s failed to load (see the reasons above)\n", bad,
                         bad == 1 ? "" : "s");
        cn_langs_free(&langs);
        cn_backends_free(&backs);
        return bad ? CN_EXIT_FAIL : CN_EXIT_OK;
    }
}
