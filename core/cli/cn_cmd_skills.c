/* SPDX-License-Identifier: Apache-2.0 */
/* `codenib skills`: list, show, schema, check-flow. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cn_cli.h"

static void skills_usage(FILE *f)
{
    fputs("usage: codenib skills list [--json] [--verbose]\n"
          "       codenib skills show ID [--json]\n"
          "       codenib skills schema [--allow ID,...] [--exclude ID,...]\n"
          "       codenib skills check-flow FROM TO [INPUT]\n"
          "       codenib skills test DIR [--json]\n"
          "\n"
          "  list        every skill package found, with its state (discovered, loaded,\n"
          "              failed, duplicate) and, for a broken one, the reason; exit\n"
          "              status 1 when a package failed to load\n"
          "              --verbose also prints the search path and every metadata field\n"
          "  show        one skill's metadata and its model-facing description\n"
          "  schema      the OpenAI function-calling tools for the skills (JSON); --allow\n"
          "              keeps only the listed ids, --exclude then drops ids\n"
          "  check-flow  whether FROM's output type can feed an input of TO (INPUT, or any)\n"
          "  test        one package on its own: config, shared object, executor, and its\n"
          "              declared examples run (`codenib skills test --help`)\n"
          "\n"
          "Options:\n"
          "  --json      machine-readable output\n"
          "  --verbose   more detail\n"
          "  -h, --help  this text\n",
          f);
}

static void print_search_path(void)
{
    cn_strv dirs = CN_STRV_INIT, labels = CN_STRV_INIT;
    if (cn_registry_search_path(&dirs, &labels) == 0) {
        printf("Search path (first hit of an id wins):\n");
        for (size_t i = 0; i < dirs.len; i++) {
            struct stat st;
            bool there = stat(dirs.items[i], &st) == 0 && S_ISDIR(st.st_mode);
            printf("  %-20s %s%s\n", labels.items[i], dirs.items[i], there ? "" : "  (absent)");
        }
        printf("\n");
    }
    cn_strv_free(&dirs);
    cn_strv_free(&labels);
}

static int cmd_list(int argc, char **argv)
{
    bool json = false, verbose = false, ended = false;
    cn_registry *reg = NULL;
    size_t ok = 0, unusable = 0, bad = 0;

    for (int i = 1; i < argc; i++) {
        cn_cli_arg_kind kind = cn_cli_arg(argv[i], &ended);
        if (kind == CN_CLI_END_OF_OPTIONS) continue;
        if (kind == CN_CLI_OPERAND) return cn_cli_usage_error("skills list", "unexpected argument '%s'", argv[i]);
        if (strcmp(argv[i], "--json") == 0) json = true;
        else if (strcmp(argv[i], "--verbose") == 0 || strcmp(argv[i], "-v") == 0) verbose = true;
        else if (cn_cli_is_help(argv[i])) {
            skills_usage(stdout);
            return CN_EXIT_OK;
        } else return cn_cli_usage_error("skills list", "unexpected argument '%s'", argv[i]);
    }
    if (cn_cli_open_registry(&reg) < 0) return cn_cli_fail();
    cn_registry_verify_all(reg);
    /* a package that failed to load makes the exit status 1, the listing
     * printed all the same (a shadowed duplicate is not a failure) */
    for (size_t i = 0; i < reg->n_entries; i++) bad += reg->entries[i]->state == CN_STATE_FAILED;
    if (json) {
        json_object *o = cn_registry_list(reg, verbose);
        cn_cli_print_json(o, false);
        json_object_put(o);
        cn_registry_free(reg);
        return bad ? CN_EXIT_FAIL : CN_EXIT_OK;
    }
    if (verbose) print_search_path();
    if (reg->n_entries == 0) {
        printf("No skills found. Run 'codenib skills list --verbose' to see where codenib looks.\n");
    } else {
        printf("%-24s %-10s %-11s %-8s %s\n", "SKILL", "TYPE", "STATE", "COST", "SOURCE");
    }
    for (size_t i = 0; i < reg->n_entries; i++) {
        const cn_skill_entry *e = reg->entries[i];
        const char *type = e->meta ? cn_skill_type_name(e->meta->skill_type) : "-";
        const char *cost = e->meta ? cn_cost_name(e->meta->cost) : "-";
        printf("%-24s %-10s %-11s %-8s %s\n", e->id, type, cn_skill_state_name(e->state), cost,
               e->source ? e->source : "-");
        if (verbose && e->dir) printf("    dir: %s\n", e->dir);
        if (verbose && e->dir) {
            printf("    abi: ");
            if (e->built_abi_major > 0) printf("built for %u.%u", e->built_abi_major, e->built_abi_minor);
            else printf("built for ? (not opened)");
            if (e->meta && e->meta->abi_major >= 0) printf(", declares %d.%d", e->meta->abi_major, e->meta->abi_minor);
            printf("; codenib speaks %d.%d\n", CN_ABI_MAJOR, CN_ABI_MINOR);
        }
        if (e->reason) printf("    reason: %s\n", e->reason);
        if (verbose && e->meta)
            for (size_t w = 0; w < e->meta->warnings.len; w++)
                printf("    warning: %s\n", e->meta->warnings.items[w]);
        if (e->state == CN_STATE_FAILED || e->state == CN_STATE_DUPLICATE) unusable++;
        else ok++;
    }
    if (reg->n_entries) printf("\n%zu usable, %zu not usable\n", ok, unusable);
    if (bad) fprintf(stderr, "codenib skills list: %zu skill package%s failed to load (see the reasons above)\n", bad,
                     bad == 1 ? "" : "s");
    cn_registry_free(reg);
    return bad ? CN_EXIT_FAIL : CN_EXIT_OK;
}

static int cmd_show(int argc, char **argv)
{
    bool json = false, ended = false;
    const char *id = NULL;
    cn_registry *reg = NULL;
    cn_skill_entry *e;

    for (int i = 1; i < argc; i++) {
        cn_cli_arg_kind kind = cn_cli_arg(argv[i], &ended);
        if (kind == CN_CLI_END_OF_OPTIONS) continue;
        if (kind == CN_CLI_OPERAND) {
            if (id != NULL) return cn_cli_usage_error("skills show", "unexpected argument '%s'", argv[i]);
            id = argv[i];
        } else if (strcmp(argv[i], "--json") == 0) json = true;
        else if (cn_cli_is_help(argv[i])) {
            skills_usage(stdout);
            return CN_EXIT_OK;
        } else return cn_cli_usage_error("skills show", "unknown option '%s'", argv[i]);
    }
    if (id == NULL) return cn_cli_usage_error("skills show", "which skill? give its ID");
    if (cn_cli_open_registry(&reg) < 0) return cn_cli_fail();
    e = cn_registry_find(reg, id);
    if (e == NULL) {
        cn_registry_free(reg);
        cn_error_set(CN_ENOTFOUND, "no skill '%s' (see 'codenib skills list')", id);
        return cn_cli_fail();
    }
    if (e->state == CN_STATE_DISCOVERED) {
        /* show is the place to see whether a skill really starts */
        (void)cn_registry_load(reg, e);
        cn_error_clear();
    }
    if (json) {
        json_object *o = cn_entry_json(e, true);
        cn_cli_print_json(o, true);
        json_object_put(o);
    } else {
        const cn_skill_meta *m = e->meta;
        printf("%s (%s)\n", e->id, cn_skill_state_name(e->state));
        if (e->dir) printf("  directory: %s\n", e->dir);
        if (e->reason) printf("  reason:    %s\n", e->reason);
        if (m) {
            printf("  type:      %s\n  cost:      %s\n  cacheable: %s\n", cn_skill_type_name(m->skill_type),
                   cn_cost_name(m->cost), m->cacheable ? "yes" : "no");
            if (m->version) printf("  version:   %s\n", m->version);
            if (m->operator_name) printf("  operator:  %s\n", m->operator_name);
            if (m->planner) printf("  planner:   %s (the offline planner calls it)\n", m->planner);
            printf("  output:    %s%s%s\n", m->outputs.type_hint,
                   m->outputs.description && *m->outputs.description ? " - " : "",
                   m->outputs.description ? m->outputs.description : "");
            printf("  inputs:\n");
            for (size_t i = 0; i < m->n_inputs; i++) {
                const cn_input_spec *in = &m->inputs[i];
                printf("    %-18s %-22s %s", in->name, in->type_hint, in->required ? "required" : "optional");
                if (in->has_default) {
                    printf(", default %s", json_object_to_json_string_ext(in->default_value, JSON_C_TO_STRING_PLAIN));
                }
                if (in->is_line_number) printf(", 1-based line");
                printf("\n");
                if (in->description && *in->description) printf("        %s\n", in->description);
            }
            for (size_t i = 0; i < m->n_index_requirements; i++)
                printf("  needs index: %s (%s)%s\n", m->index_requirements[i].type,
                       m->index_requirements[i].scope,
                       m->index_requirements[i].required ? "" : ", optional");
            for (size_t w = 0; w < m->warnings.len; w++) printf("  warning: %s\n", m->warnings.items[w]);
            if (m->skill_doc && *m->skill_doc) printf("\n%s%s", m->skill_doc,
                                                      cn_str_has_suffix(m->skill_doc, "\n") ? "" : "\n");
        }
    }
    cn_registry_free(reg);
    return CN_EXIT_OK;
}

static int cmd_schema(int argc, char **argv)
{
    cn_strv allow = CN_STRV_INIT, exclude = CN_STRV_INIT;
    cn_registry *reg = NULL;
    json_object *tools;
    int rc = CN_EXIT_OK;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cn_cli_is_help(a)) {
            skills_usage(stdout);
            rc = -1;
            break;
        } else if ((strcmp(a, "--allow") == 0 || strcmp(a, "--exclude") == 0) && i + 1 < argc) {
            cn_strv_split(strcmp(a, "--allow") == 0 ? &allow : &exclude, argv[++i], ',');
        } else if (strncmp(a, "--allow=", 8) == 0) {
            cn_strv_split(&allow, a + 8, ',');
        } else if (strncmp(a, "--exclude=", 10) == 0) {
            cn_strv_split(&exclude, a + 10, ',');
        } else {
            rc = cn_cli_usage_error("skills schema", "unexpected argument '%s'", a);
            break;
        }
    }
    if (rc != CN_EXIT_OK) {
        cn_strv_free(&allow);
        cn_strv_free(&exclude);
        return rc < 0 ? CN_EXIT_OK : rc;
    }
    if (cn_cli_open_registry(&reg) < 0) {
        cn_strv_free(&allow);
        cn_strv_free(&exclude);
        return cn_cli_fail();
    }
    for (size_t i = 0; i < allow.len; i++) {
        if (cn_registry_find(reg, allow.items[i]) == NULL)
            fprintf(stderr, "codenib: warning: --allow names '%s', which is not a skill\n", allow.items[i]);
    }
    cn_registry_verify_all(reg);
    tools = cn_registry_tools(reg, &allow, &exclude);
    cn_cli_print_json(tools, true);
    json_object_put(tools);
    cn_registry_free(reg);
    cn_strv_free(&allow);
    cn_strv_free(&exclude);
    return CN_EXIT_OK;
}

static int cmd_check_flow(int argc, char **argv)
{
    cn_registry *reg = NULL;
    const char *pos[3] = {NULL, NULL, NULL};
    int n = 0, rc;

    for (int i = 1; i < argc; i++) {
        if (cn_cli_is_help(argv[i])) {
            skills_usage(stdout);
            return CN_EXIT_OK;
        }
        if (n == 3) return cn_cli_usage_error("skills check-flow", "unexpected argument '%s'", argv[i]);
        pos[n++] = argv[i];
    }
    if (n < 2) return cn_cli_usage_error("skills check-flow", "give FROM and TO skill ids");
    if (cn_cli_open_registry(&reg) < 0) return cn_cli_fail();
    rc = cn_registry_check_flow(reg, pos[0], pos[1], pos[2]);
    cn_registry_free(reg);
    if (rc < 0) return cn_cli_fail();
    printf("ok: the output of %s fits %s%s%s\n", pos[0], pos[1], pos[2] ? "." : "", pos[2] ? pos[2] : "");
    return CN_EXIT_OK;
}

int cn_cmd_skills(int argc, char **argv)
{
    const char *sub = argc > 1 ? argv[1] : NULL;
    if (sub == NULL) {
        skills_usage(stderr);
        return CN_EXIT_USAGE;
    }
    if (cn_cli_is_help(sub)) {
        skills_usage(stdout);
        return CN_EXIT_OK;
    }
    if (strcmp(sub, "list") == 0) return cmd_list(argc - 1, argv + 1);
    if (strcmp(sub, "show") == 0) return cmd_show(argc - 1, argv + 1);
    if (strcmp(sub, "schema") == 0) return cmd_schema(argc - 1, argv + 1);
    if (strcmp(sub, "check-flow") == 0) return cmd_check_flow(argc - 1, argv + 1);
    if (strcmp(sub, "test") == 0) return cn_cmd_skills_test(argc - 1, argv + 1);
    return cn_cli_usage_error("skills", "'%s' is not a skills command", sub);
}
