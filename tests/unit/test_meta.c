/* SPDX-License-Identifier: Apache-2.0 */
/* Skill metadata: every config.yaml field, defaults, and errors that name
 * file:line:column and the field. */
#include <stdlib.h>
#include <string.h>

#include "plugin/cn_meta.h"
#include "plugin/cn_yaml.h"
#include "tap.h"

static char *fixture(const char *name)
{
    const char *src = getenv("CN_SRCDIR");
    cn_buf b = CN_BUF_INIT;
    cn_buf_printf(&b, "%s/tests/fixtures/plugins/%s", src ? src : ".", name);
    return cn_buf_steal(&b);
}

/* Parses YAML text as a config named "cfg.yaml"; returns the rc. */
static int from_yaml(const char *text, cn_skill_meta **out)
{
    return cn_meta_from_yaml_string(text, strlen(text), "cfg.yaml", out);
}

static void expect_error(const char *yaml, const char *needle, const char *what)
{
    cn_skill_meta *m = NULL;
    int rc = from_yaml(yaml, &m);
    ok(rc == CN_EPARSE, what);
    has_str(cn_error_last()->message, needle, what);
    cn_meta_free(m);
}

static void test_fixture_good(void)
{
    char *dir = fixture("fx_good");
    cn_skill_meta *m = NULL;
    const cn_input_spec *in;

    is_int(cn_meta_load_dir(dir, &m), 0, "fx_good loads");
    if (m == NULL) {
        diag("%s", cn_error_last()->message);
        free(dir);
        return;
    }
    is_str(m->skill_id, "fx_good", "skill_id");
    ok(m->skill_type == CN_SKILL_CUSTOM, "skill_type custom");
    ok(m->cost == CN_COST_LOW, "cost low");
    ok(m->cacheable, "cacheable defaults to true");
    ok(!m->async_capable, "async_capable defaults to false");
    is_str(m->version, "0.0.1", "version");
    is_int(m->abi_major, 1, "abi major");
    is_int(m->abi_minor, 0, "abi minor");
    is_str(m->library, "fx_good", "library defaults to the id");
    is_int(m->n_inputs, 8, "eight inputs");
    in = cn_meta_input(m, "text");
    ok(in && in->required && !in->has_default, "text is required (no default)");
    is_str(in ? in->description : NULL, "Any text; echoed back.", "input description");
    in = cn_meta_input(m, "line");
    ok(in && in->is_line_number && !in->required && in->has_default && in->default_value == NULL,
       "line: line number, optional, default null");
    in = cn_meta_input(m, "count");
    ok(in && json_object_get_int(in->default_value) == 1, "count default 1");
    in = cn_meta_input(m, "mode");
    ok(in && in->type->kind == CN_T_ENUM && in->enum_values.len == 2, "mode is an enum of two");
    {
        char *t = in ? cn_type_to_string(in->type) : NULL;
        is_str(t, "Literal['fast', 'slow']", "enum has a canonical form");
        free(t);
    }
    {
        json_object *c = NULL;
        ok(json_object_object_get_ex(m->defaults, "count", &c) && json_object_get_int(c) == 2,
           "defaults: count 2");
    }
    is_str(m->outputs.type_hint, "Dict[str, Any]", "output type");
    is_int(m->outputs.line_fields.len, 3, "default line fields");
    has_str(m->skill_doc, "Echo fixture", "skill.md read");
    is_str(m->description, m->skill_doc, "description is the skill doc");
    is_int(m->warnings.len, 0, "no warnings");
    {
        json_object *j = cn_meta_to_json(m);
        json_object *v = NULL;
        ok(json_object_object_get_ex(j, "skill_type", &v) && strcmp(json_object_get_string(v), "custom") == 0,
           "to_json skill_type");
        ok(json_object_object_get_ex(j, "inputs", &v) && json_object_array_length(v) == 8, "to_json inputs");
        ok(json_object_object_get_ex(j, "index_requirements", &v) && json_object_array_length(v) == 0,
           "to_json index_requirements");
        ok(json_object_object_get_ex(j, "cost", &v) && strcmp(json_object_get_string(v), "low") == 0,
           "to_json cost");
        json_object_put(j);
    }
    cn_meta_free(m);
    free(dir);
}

static void test_fixture_errors(void)
{
    char *dir = fixture("fx_bad_yaml");
    cn_skill_meta *m = NULL;
    int rc = cn_meta_load_dir(dir, &m);
    ok(rc == CN_EPARSE && m == NULL, "malformed YAML is refused");
    has_str(cn_error_last()->message, "fx_bad_yaml/config.yaml:", "message names the file");
    free(dir);

    dir = fixture("fx_bad_field");
    rc = cn_meta_load_dir(dir, &m);
    ok(rc == CN_EPARSE, "a bad field is refused");
    has_str(cn_error_last()->message, "fx_bad_field/config.yaml:6:15: inputs[0] (top_k).required: "
                                      "expected true or false",
            "message names file:line:col and the field");
    free(dir);

    dir = fixture("does_not_exist");
    rc = cn_meta_load_dir(dir, &m);
    ok(rc == CN_ENOTFOUND, "a missing package directory is not found");
    free(dir);
}

static void test_rules(void)
{
    cn_skill_meta *m = NULL;

    expect_error("skill_type: custom\n", "skill_id: missing", "skill_id is required");
    expect_error("skill_id: 'bad id!'\n", "cfg.yaml:1:11: skill_id: 'bad id!' is not a valid id",
                 "invalid id");
    expect_error("skill_id: x\nskill_type: searching\n",
                 "cfg.yaml:2:13: skill_type: 'searching' is not one of retrieval, expand, rerank, "
                 "transform, custom",
                 "unknown skill type");
    expect_error("skill_id: x\ncost: expensive\n", "cfg.yaml:2:7: cost: 'expensive' is not one of low",
                 "unknown cost");
    expect_error("skill_id: x\ninputs:\n  - name: a\n  - name: a\n", "input 'a' is declared twice",
                 "duplicate input");
    expect_error("skill_id: x\ninputs:\n  - name: k\n    type_hint: int\n    default: lots\n",
                 "cfg.yaml:5:14: inputs[0] (k): default does not fit the type: argument 'k': "
                 "expected int",
                 "default must fit its type");
    expect_error("skill_id: x\ninputs:\n  - name: k\n    type_hint: List[int\n",
                 "cfg.yaml:4:16: inputs[0] (k): type hint 'List[int'", "bad type hint");
    expect_error("skill_id: x\ninputs:\n  - name: l\n    type_hint: str\n    is_line_number: true\n",
                 "is_line_number needs an int input", "line numbers must be ints");
    expect_error("skill_id: x\nlibrary: ../evil\n", "library: '../evil' must be a file name",
                 "library cannot leave the package");
    expect_error("skill_id: x\nabi: one\n", "abi: expected \"MAJOR.MINOR\"", "bad abi");
    expect_error("skill_id: x\ninputs: {a: 1}\n", "inputs: expected a list of input specs",
                 "inputs must be a list");
    expect_error("skill_id: x\ninputs:\n  - type_hint: int\n", "inputs[0]: missing 'name'",
                 "inputs need names");
    expect_error("skill_id: x\ninputs:\n  - name: k\n    type_hint: int\ndefaults:\n  k: many\n",
                 "cfg.yaml:6:6: defaults: argument 'k': expected int", "defaults must fit types");
    expect_error("skill_id: x\nindex_requirements:\n  - scope: repo\n",
                 "index_requirements[0]: missing 'type'", "index requirement needs a type");
    expect_error("- just\n- a list\n", "expected a mapping of skill fields", "top level must be a mapping");

    /* defaults and shorthands */
    is_int(from_yaml("skill_id: x\n"
                     "outputs: List[QueriedNode]\n"
                     "index_requirements:\n  - bm25\n  - {type: graph, max_age_seconds: 60, required: false}\n"
                     "resources: [gpu]\ndependencies: bm25_search\n"
                     "operator: bm25.retrieve\nasync_capable: true\ncacheable: false\n"
                     "newfield: 1\n",
                     &m),
           0, "shorthand forms parse");
    if (m) {
        is_str(m->outputs.type_hint, "List[QueriedNode]", "outputs shorthand");
        ok(m->skill_type == CN_SKILL_CUSTOM && m->cost == CN_COST_MEDIUM, "type custom, cost medium by default");
        is_int(m->n_index_requirements, 2, "two index requirements");
        is_str(m->index_requirements[0].type, "bm25", "string requirement");
        is_str(m->index_requirements[0].scope, "repo", "scope defaults to repo");
        ok(m->index_requirements[0].required && m->index_requirements[0].max_age_seconds < 0,
           "required, no age limit by default");
        ok(!m->index_requirements[1].required && m->index_requirements[1].max_age_seconds == 60,
           "mapping requirement");
        ok(m->resources.len == 1 && m->dependencies.len == 1, "string lists (scalar accepted)");
        is_str(m->operator_name, "bm25.retrieve", "operator");
        ok(m->async_capable && !m->cacheable, "flags");
        is_int(m->warnings.len, 1, "unknown field warns");
        has_str(m->warnings.len ? m->warnings.items[0] : "", "cfg.yaml:11:11: unknown field 'newfield' ignored",
                "warning names the place");
        is_int(m->abi_major, -1, "abi absent");
        cn_meta_free(m);
    }
    is_int(from_yaml("skill_id: x\ninputs:\n  - name: q\n  - name: k\n    default: 3\n", &m), 0,
           "minimal inputs");
    if (m) {
        is_str(m->inputs[0].type_hint, "Any", "type hint defaults to Any");
        ok(m->inputs[0].required, "no default: required");
        ok(!m->inputs[1].required, "a default makes an input optional");
        cn_meta_free(m);
    }
    is_int(from_yaml("skill_id: x\nskill_type: retrieve\nabi: 1\n", &m), 0, "aliases");
    if (m) {
        ok(m->skill_type == CN_SKILL_RETRIEVAL, "retrieve is retrieval");
        ok(m->abi_major == 1 && m->abi_minor == 0, "abi: 1 is 1.0");
        cn_meta_free(m);
    }
}

static void test_names(void)
{
    char *s = cn_skill_symbol_name("my-skill.v2");
    is_str(s, "cn_skill_descriptor_my_skill_v2", "symbol name maps punctuation to _");
    free(s);
    ok(cn_skill_id_valid("bm25_search"), "bm25_search is a valid id");
    ok(!cn_skill_id_valid(""), "empty id invalid");
    ok(!cn_skill_id_valid("a/b"), "slash invalid");
    ok(!cn_skill_id_valid("-x"), "leading dash invalid");
}

int main(void)
{
    test_fixture_good();
    test_fixture_errors();
    test_rules();
    test_names();
    return tap_done();
}
