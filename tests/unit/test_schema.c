/* SPDX-License-Identifier: Apache-2.0 */
/* OpenAI function-calling schemas of skills, the tools list filtered by
 * allow/exclude, and the dataflow check between skills. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/cn_meta.h"
#include "plugin/cn_registry.h"
#include "plugin/cn_yaml.h"
#include "tap.h"

static cn_skill_meta *from_yaml(const char *text)
{
    cn_skill_meta *m = NULL;
    if (cn_meta_from_yaml_string(text, strlen(text), "cfg.yaml", &m) < 0)
        diag("metadata: %s", cn_error_last()->message);
    return m;
}

/* Plain JSON text of a value, released with free(). */
static char *text_of(json_object *o)
{
    return strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
}

static void set_doc(cn_skill_meta *m, const char *doc)
{
    free(m->skill_doc);
    m->skill_doc = strdup(doc);
}

static const char finder_yaml[] =
    "skill_id: finder\n"
    "skill_type: retrieval\n"
    "description: Config description.\n"
    "defaults:\n"
    "  path: src\n"
    "inputs:\n"
    "  - name: query\n"
    "    type_hint: str\n"
    "    required: true\n"
    "    description: What to look for.\n"
    "  - name: top_k\n"
    "    type_hint: int\n"
    "    default: 5\n"
    "  - name: line\n"
    "    type_hint: Optional[int]\n"
    "    required: false\n"
    "    is_line_number: true\n"
    "    description: Where to start.\n"
    "  - name: end\n"
    "    type_hint: Optional[int]\n"
    "    required: false\n"
    "    is_line_number: true\n"
    "  - name: tags\n"
    "    type_hint: List[str]\n"
    "    required: false\n"
    "  - name: mode\n"
    "    type_hint: str\n"
    "    enum: [fast, exact]\n"
    "    default: fast\n"
    "  - name: path\n"
    "    type_hint: str\n"
    "    required: true\n"
    "    description: Directory to search.\n"
    "outputs:\n"
    "  type_hint: List[QueriedNode]\n";

#define FINDER_PARAMS                                                                         \
    "\"parameters\":{\"type\":\"object\",\"properties\":{"                                    \
    "\"query\":{\"type\":\"string\",\"description\":\"What to look for.\"},"                  \
    "\"top_k\":{\"type\":\"integer\",\"default\":5},"                                         \
    "\"line\":{\"type\":[\"integer\",\"null\"],\"description\":\"Where to start. (1-based line number)\"}," \
    "\"end\":{\"type\":[\"integer\",\"null\"],\"description\":\"(1-based line number)\"},"     \
    "\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"                           \
    "\"mode\":{\"type\":\"string\",\"enum\":[\"fast\",\"exact\"],\"default\":\"fast\"},"      \
    "\"path\":{\"type\":\"string\",\"description\":\"Directory to search.\",\"default\":\"src\"}" \
    "},\"required\":[\"query\"],\"additionalProperties\":false}"

static void test_tool_schema(void)
{
    cn_skill_meta *m = from_yaml(finder_yaml);
    json_object *tool;
    char *s;

    ok(m != NULL, "finder metadata parses");
    if (m == NULL) return;
    is_str(m->skill_doc, "", "cn_meta_from_json leaves skill_doc empty");

    tool = cn_skill_tool_schema(m);
    s = text_of(tool);
    is_str(s,
           "{\"type\":\"function\",\"function\":{\"name\":\"finder\","
           "\"description\":\"Config description.\"," FINDER_PARAMS "}}",
           "whole tool schema, description from config");
    free(s);
    json_object_put(tool);

    /* skill.md wins over config's description. */
    set_doc(m, "Finds things.\n\nUse it well.");
    tool = cn_skill_tool_schema(m);
    s = text_of(tool);
    is_str(s,
           "{\"type\":\"function\",\"function\":{\"name\":\"finder\","
           "\"description\":\"Finds things.\\n\\nUse it well.\"," FINDER_PARAMS "}}",
           "whole tool schema, description from skill_doc");
    free(s);
    json_object_put(tool);

    /* The schema is built fresh each time: the metadata is not changed. */
    is_str(m->description, "Config description.", "description field untouched");
    ok(json_object_object_length(m->defaults) == 1, "defaults untouched");
    cn_meta_free(m);
}

static void test_tool_schema_minimal(void)
{
    cn_skill_meta *m = from_yaml("skill_id: bare\n");
    json_object *tool;
    char *s;

    ok(m != NULL, "bare metadata parses");
    if (m == NULL) return;
    tool = cn_skill_tool_schema(m);
    s = text_of(tool);
    is_str(s,
           "{\"type\":\"function\",\"function\":{\"name\":\"bare\",\"description\":\"\","
           "\"parameters\":{\"type\":\"object\",\"properties\":{},\"required\":[],\"additionalProperties\":false}}}",
           "no inputs, no description");
    free(s);
    json_object_put(tool);
    cn_meta_free(m);

    /* A `defaults` entry for an input that already has its own default:
     * the `defaults` entry is what the skill gets (it overrides the
     * input's own), so it is what the schema shows; and a required input
     * named in `defaults` is not required. */
    m = from_yaml("skill_id: both\n"
                  "defaults: {k: 9, name: x}\n"
                  "inputs:\n"
                  "  - {name: k, type_hint: int, default: 3}\n"
                  "  - {name: name, type_hint: str}\n"
                  "  - {name: flag, type_hint: bool}\n");
    ok(m != NULL, "both metadata parses");
    if (m == NULL) return;
    tool = cn_skill_tool_schema(m);
    s = text_of(json_object_object_get(json_object_object_get(tool, "function"), "parameters"));
    is_str(s,
           "{\"type\":\"object\",\"properties\":{"
           "\"k\":{\"type\":\"integer\",\"default\":9},"
           "\"name\":{\"type\":\"string\",\"default\":\"x\"},"
           "\"flag\":{\"type\":\"boolean\"}},"
           "\"required\":[\"flag\"],\"additionalProperties\":false}",
           "defaults: required dropped, default shown");
    free(s);
    json_object_put(tool);
    cn_meta_free(m);
}

/* ---- registry tools ------------------------------------------------------ */

static int empty_fn(void *data, const char *args_json, char **result_json, cn_error *err)
{
    (void)data;
    (void)args_json;
    (void)err;
    *result_json = strdup("{}");
    return 0;
}

static int reg_simple(cn_registry *reg, const char *id, const char *doc)
{
    char meta[256];
    snprintf(meta, sizeof meta,
             "{\"skill_id\":\"%s\",\"inputs\":[{\"name\":\"q\",\"type_hint\":\"str\"}]}", id);
    return cn_registry_register(reg, meta, doc, empty_fn, NULL, NULL);
}

/* The tool names of a tools array, comma-separated (static buffer). */
static const char *names(json_object *tools)
{
    static char buf[256];
    buf[0] = '\0';
    for (size_t i = 0; i < json_object_array_length(tools); i++) {
        json_object *fn = json_object_object_get(json_object_array_get_idx(tools, i), "function");
        if (i) strcat(buf, ",");
        strcat(buf, json_object_get_string(json_object_object_get(fn, "name")));
    }
    return buf;
}

static void expect_tools(const cn_registry *reg, const char *allow_csv, const char *exclude_csv,
                         const char *want, const char *what)
{
    cn_strv allow = CN_STRV_INIT, exclude = CN_STRV_INIT;
    json_object *tools;

    if (allow_csv) cn_strv_split(&allow, allow_csv, ',');
    if (exclude_csv) cn_strv_split(&exclude, exclude_csv, ',');
    tools = cn_registry_tools(reg, allow_csv ? &allow : NULL, exclude_csv ? &exclude : NULL);
    is_str(names(tools), want, what);
    json_object_put(tools);
    cn_strv_free(&allow);
    cn_strv_free(&exclude);
}

static void test_registry_tools(void)
{
    cn_registry *reg = NULL;
    const char *ids_bc[] = {"b", "c"};
    const char *ids_c[] = {"c"};
    json_object *tools;
    char *json = NULL;

    is_int(cn_registry_new(&reg), 0, "registry created");
    if (reg == NULL) return;
    is_int(reg_simple(reg, "a", "Skill A."), 0, "register a");
    is_int(reg_simple(reg, "b", NULL), 0, "register b");
    is_int(reg_simple(reg, "c", "Skill C."), 0, "register c");
    is_int(reg_simple(reg, "b", "Another b."), CN_EEXISTS, "a second b is a duplicate");
    reg_simple(reg, "read", "Collides with the default tool.");

    expect_tools(reg, NULL, NULL, "a,b,c", "no filters: every usable skill, in order");
    expect_tools(reg, "", "", "a,b,c", "empty filters: every skill");
    expect_tools(reg, "a,c", NULL, "a,c", "allow {a,c}");
    expect_tools(reg, "c,a", NULL, "a,c", "allow order does not reorder the tools");
    expect_tools(reg, NULL, "b", "a,c", "exclude {b}");
    expect_tools(reg, "a,b", "b", "a", "allow {a,b} then exclude {b}");
    expect_tools(reg, "b", "b", "", "allow and exclude the same skill: nothing");
    expect_tools(reg, "zzz", NULL, "", "allow of an unknown id: nothing");
    expect_tools(reg, NULL, "read", "a,b,c", "excluding a failed entry changes nothing");

    tools = cn_registry_tools(reg, NULL, NULL);
    {
        json_object *fn = json_object_object_get(json_object_array_get_idx(tools, 0), "function");
        is_str(json_object_get_string(json_object_object_get(fn, "description")), "Skill A.",
               "registered doc is the tool description");
        fn = json_object_object_get(json_object_array_get_idx(tools, 1), "function");
        is_str(json_object_get_string(json_object_object_get(fn, "description")), "",
               "no doc: empty description (the duplicate's doc is not used)");
    }
    json_object_put(tools);

    /* Registry-level sets, then the extra filters on top of them. */
    is_int(cn_registry_set_allow(reg, ids_bc, 2), 0, "set_allow {b,c}");
    expect_tools(reg, NULL, NULL, "b,c", "registry allow {b,c}");
    expect_tools(reg, "a,b", NULL, "b", "registry allow {b,c} and extra allow {a,b}");
    is_int(cn_registry_set_exclude(reg, ids_c, 1), 0, "set_exclude {c}");
    expect_tools(reg, NULL, NULL, "b", "registry allow {b,c} exclude {c}");
    is_int(cn_registry_tools_json(reg, &json), 0, "tools_json");
    is_str(json,
           "[{\"type\":\"function\",\"function\":{\"name\":\"b\",\"description\":\"\","
           "\"parameters\":{\"type\":\"object\",\"properties\":{\"q\":{\"type\":\"string\"}},"
           "\"required\":[\"q\"],\"additionalProperties\":false}}}]",
           "tools_json text");
    cn_free(json);
    is_int(cn_registry_set_allow(reg, NULL, 0), 0, "allow cleared");
    expect_tools(reg, NULL, NULL, "a,b", "registry exclude {c} only");
    ok(!cn_registry_enabled(reg, "c"), "c is not enabled");
    ok(cn_registry_enabled(reg, "a"), "a is enabled");
    is_int(cn_registry_set_exclude(reg, NULL, 0), 0, "exclude cleared");
    expect_tools(reg, NULL, NULL, "a,b,c", "filters cleared: every skill again");

    cn_registry_free(reg);
}

/* ---- dataflow ------------------------------------------------------------ */

static void test_check_flow(void)
{
    cn_registry *reg = NULL;
    const char *msg;

    is_int(cn_registry_new(&reg), 0, "registry for dataflow");
    if (reg == NULL) return;
    is_int(cn_registry_register(reg,
                                "{\"skill_id\":\"search\",\"skill_type\":\"retrieval\","
                                "\"inputs\":[{\"name\":\"query\",\"type_hint\":\"str\"}],"
                                "\"outputs\":{\"type_hint\":\"List[QueriedNode]\"}}",
                                NULL, empty_fn, NULL, NULL),
           0, "register search");
    is_int(cn_registry_register(reg,
                                "{\"skill_id\":\"rerank\",\"skill_type\":\"rerank\","
                                "\"inputs\":[{\"name\":\"query\",\"type_hint\":\"str\"},"
                                "{\"name\":\"nodes\",\"type_hint\":\"List[QueriedNode]\"}],"
                                "\"outputs\":{\"type_hint\":\"List[QueriedNode]\"}}",
                                NULL, empty_fn, NULL, NULL),
           0, "register rerank");
    is_int(cn_registry_register(reg,
                                "{\"skill_id\":\"summarise\",\"skill_type\":\"transform\","
                                "\"inputs\":[{\"name\":\"texts\",\"type_hint\":\"List[str]\"}],"
                                "\"outputs\":\"str\"}",
                                NULL, empty_fn, NULL, NULL),
           0, "register summarise");

    is_int(cn_registry_check_flow(reg, "search", "rerank", "nodes"), 0,
           "search -> rerank.nodes fits");
    is_int(cn_registry_check_flow(reg, "search", "rerank", NULL), 0,
           "search -> rerank (some input) fits");
    is_int(cn_registry_check_flow(reg, "rerank", "rerank", "nodes"), 0,
           "rerank -> rerank.nodes fits");

    is_int(cn_registry_check_flow(reg, "search", "summarise", "texts"), CN_ETYPE,
           "search -> summarise.texts: CN_ETYPE");
    msg = cn_error_last()->message;
    has_str(msg, "search -> summarise.texts", "mismatch names both ends");
    has_str(msg, "List[QueriedNode] does not fit List[str]", "mismatch names both types");
    has_str(msg, "QueriedNode is not str", "mismatch names the innermost mismatch");

    is_int(cn_registry_check_flow(reg, "search", "summarise", NULL), CN_ETYPE,
           "search -> summarise (any input): CN_ETYPE");
    msg = cn_error_last()->message;
    has_str(msg, "the output of search (List[QueriedNode]) fits no input of summarise",
            "any-input mismatch: summary");
    has_str(msg, "texts (", "any-input mismatch: names the input");

    is_int(cn_registry_check_flow(reg, "search", "rerank", "query"), CN_ETYPE,
           "search -> rerank.query (str): CN_ETYPE");
    is_int(cn_registry_check_flow(reg, "summarise", "search", "query"), 0,
           "summarise (str) -> search.query fits");

    is_int(cn_registry_check_flow(reg, "search", "rerank", "bogus"), CN_ENOTFOUND,
           "nonexistent input: CN_ENOTFOUND");
    is_str(cn_error_last()->message, "skill 'rerank' has no input 'bogus'",
           "nonexistent input: message");
    is_int(cn_registry_check_flow(reg, "nosuch", "rerank", "nodes"), CN_ENOTFOUND,
           "nonexistent source skill: CN_ENOTFOUND");
    has_str(cn_error_last()->message, "no skill 'nosuch'", "nonexistent source: message");
    is_int(cn_registry_check_flow(reg, "search", "nosuch", NULL), CN_ENOTFOUND,
           "nonexistent target skill: CN_ENOTFOUND");
    has_str(cn_error_last()->message, "no skill 'nosuch'", "nonexistent target: message");

    cn_registry_free(reg);
}

int main(void)
{
    test_tool_schema();
    test_tool_schema_minimal();
    test_registry_tools();
    test_check_flow();
    return tap_done();
}
