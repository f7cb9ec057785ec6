/* SPDX-License-Identifier: Apache-2.0 */
/* `codenib run`: invoke one skill directly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cn_cli.h"
#include "llm/cn_llm.h"

static void run_usage(FILE *f)
{
    fputs("usage: codenib run ID [--args JSON] [--params JSON] [--repo DIR [--cache-dir D]]\n"
          "                      [--model M [--base-url URL]] [--rerank-model M [--rerank-base-url URL]]\n"
          "                      [--max-output N] [--pretty]\n"
          "\n"
          "Invokes skill ID once and prints its JSON result.\n"
          "\n"
          "  --args JSON    the arguments, as a model would pass them (default {}): values\n"
          "                 are coerced to the declared types and line numbers are 1-based;\n"
          "                 '-' reads them from standard input\n"
          "  --params JSON  caller parameters applied before the arguments (overrides the\n"
          "                 skill's config.yaml defaults)\n"
          "  --repo DIR     the repository the skill works on (its compiled index, when\n"
          "                 there is one, comes with it)\n"
          "  --cache-dir D  take the index from D (as given to `codenib compile`)\n"
          "  --model M      chat model for skills that need one (llm_rerank,\n"
          "                 extract_keywords); default $CODENIB_MODEL, none when unset\n"
          "  --base-url URL OpenAI-compatible endpoint of the chat model (default\n"
          "                 $CODENIB_BASE_URL, $OPENAI_BASE_URL, https://api.openai.com/v1);\n"
          "                 the key comes from $CODENIB_API_KEY or $OPENAI_API_KEY\n"
          "  --rerank-model M  model of a /rerank endpoint (crossencoder_rerank); default\n"
          "                 $CODENIB_RERANK_MODEL\n"
          "  --rerank-base-url URL  its endpoint (default $CODENIB_RERANK_BASE_URL, then as\n"
          "                 --base-url)\n"
          "  --max-output N bound of the result, in bytes (default 30000, as a model or\n"
          "                 MCP client gets it): a longer one keeps the first results\n"
          "                 that fit, and a line on standard error says what was left\n"
          "                 out and how to get it (the offset of the next page, the\n"
          "                 arguments that narrow the call); 0: no bound\n"
          "  --pretty       indent the JSON result\n"
          "  -h, --help     this text\n"
          "\n"
          "Exit status: 0 on success, 1 when the skill fails (the reason is printed on\n"
          "standard error), 2 on a usage error.\n",
          f);
}

/* {"model": M, "base_url": U} with the members that were given. */
static char *model_config(const char *model, const char *base_url)
{
    json_object *o = json_object_new_object();
    char *s;
    if (model) json_object_object_add(o, "model", json_object_new_string(model));
    if (base_url) json_object_object_add(o, "base_url", json_object_new_string(base_url));
    s = cn_strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(o);
    return s;
}

static int set_models(cn_registry *reg, const char *model, const char *base_url, const char *rr_model,
                      const char *rr_base_url)
{
    int rc = 0;
    if (model != NULL || base_url != NULL) {
        char *cfg = model_config(model, base_url);
        rc = cfg ? cn_registry_set_model(reg, CN_LLM_CHAT, cfg) : cn_error_set(CN_ENOMEM, "out of memory");
        free(cfg);
    }
    if (rc == 0 && (rr_model != NULL || rr_base_url != NULL)) {
        char *cfg = model_config(rr_model, rr_base_url ? rr_base_url : base_url);
        rc = cfg ? cn_registry_set_model(reg, CN_LLM_RERANK, cfg) : cn_error_set(CN_ENOMEM, "out of memory");
        free(cfg);
    }
    return rc == 0 ? cn_registry_models_from_env(reg) : rc;
}

static char *read_stdin(void)
{
    cn_buf b = CN_BUF_INIT;
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, stdin)) > 0) {
        if (cn_buf_append(&b, chunk, n) < 0) break;
        if (b.len > 64u * 1024u * 1024u) {
            cn_buf_free(&b);
            cn_error_set(CN_EINVAL, "arguments on standard input exceed 64 MiB");
            return NULL;
        }
    }
    return cn_buf_steal(&b);
}

/* The skill's result as text bounded by cap (0: none), with the note
 * that says what was cut (NULL when nothing was). */
static int run_capped(cn_registry *reg, const char *id, const char *args_json, const char *params_json, size_t cap,
                      char **text, char **note)
{
    json_object *args = NULL, *params = NULL, *res = NULL;
    const cn_skill_entry *e;
    int rc = cn_json_parse(args_json, "arguments", &args);
    if (rc == 0 && params_json != NULL) rc = cn_json_parse(params_json, "overrides", &params);
    if (rc == 0) rc = cn_registry_invoke(reg, id, args, params, &res);
    if (rc == 0) {
        e = cn_registry_find(reg, id);
        rc = cn_result_text(e ? e->meta : NULL, res, args, cap, text, note);
    }
    json_object_put(res);
    json_object_put(args);
    json_object_put(params);
    return rc;
}

int cn_cmd_run(int argc, char **argv)
{
    const char *id = NULL, *args = NULL, *params = NULL, *repo = NULL, *cache = NULL;
    const char *model = NULL, *base_url = NULL, *rr_model = NULL, *rr_base_url = NULL;
    char *stdin_args = NULL, *result = NULL, *note = NULL;
    bool pretty = false, ended = false;
    size_t cap = CN_RESULT_CAP_DEFAULT;
    cn_registry *reg = NULL;
    int rc;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        cn_cli_arg_kind kind = cn_cli_arg(a, &ended);
        if (kind == CN_CLI_END_OF_OPTIONS) {
            continue;
        } else if (kind == CN_CLI_OPERAND) {
            if (id != NULL) return cn_cli_usage_error("run", "unexpected argument '%s'", a);
            id = a;
        } else if (cn_cli_is_help(a)) {
            run_usage(stdout);
            return CN_EXIT_OK;
        } else if (strcmp(a, "--args") == 0 && i + 1 < argc) {
            args = argv[++i];
        } else if (strcmp(a, "--params") == 0 && i + 1 < argc) {
            params = argv[++i];
        } else if (strcmp(a, "--repo") == 0 && i + 1 < argc) {
            repo = argv[++i];
        } else if (strcmp(a, "--cache-dir") == 0 && i + 1 < argc) {
            cache = argv[++i];
        } else if (strcmp(a, "--model") == 0 && i + 1 < argc) {
            model = argv[++i];
        } else if (strcmp(a, "--base-url") == 0 && i + 1 < argc) {
            base_url = argv[++i];
        } else if (strcmp(a, "--rerank-model") == 0 && i + 1 < argc) {
            rr_model = argv[++i];
        } else if (strcmp(a, "--rerank-base-url") == 0 && i + 1 < argc) {
            rr_base_url = argv[++i];
        } else if (strcmp(a, "--max-output") == 0 && i + 1 < argc) {
            long n = 0;
            if (strcmp(argv[++i], "0") != 0 && (rc = cn_cli_max_output("run", argv[i], &n)) != 0) return rc;
            cap = (size_t)n;
        } else if (strcmp(a, "--pretty") == 0) {
            pretty = true;
        } else {
            return cn_cli_usage_error("run", "unknown option '%s' (or it lacks its value)", a);
        }
    }
    if (id == NULL) return cn_cli_usage_error("run", "which skill? give its ID");
    if (args != NULL && strcmp(args, "-") == 0) {
        if ((stdin_args = read_stdin()) == NULL) return cn_cli_fail();
        args = stdin_args;
    }
    if (cn_cli_open_registry(&reg) < 0) {
        free(stdin_args);
        return cn_cli_fail();
    }
    if (cache != NULL && repo == NULL) {
        cn_registry_free(reg);
        free(stdin_args);
        return cn_cli_usage_error("run", "--cache-dir needs --repo");
    }
    rc = repo ? cn_registry_set_repo_cache(reg, repo, cache) : 0;
    if (rc == 0) rc = set_models(reg, model, base_url, rr_model, rr_base_url);
    if (rc == 0) rc = run_capped(reg, id, args ? args : "{}", params, cap, &result, &note);
    if (rc == 0 && pretty) {
        json_object *o = json_tokener_parse(result);
        cn_cli_print_json(o, true);
        json_object_put(o);
    } else if (rc == 0) {
        printf("%s\n", result);
    }
    if (rc == 0 && note != NULL) fprintf(stderr, "codenib run: %s\n", note);
    free(result);
    free(note);
    free(stdin_args);
    cn_registry_free(reg);
    return rc < 0 ? cn_cli_fail() : CN_EXIT_OK;
}
