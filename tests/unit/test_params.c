/* SPDX-License-Identifier: Apache-2.0 */
/* Parameter resolution (defaults, overrides, model arguments, coercion,
 * the 1-based/0-based line boundary), result line conversion, and
 * cn_registry_invoke end to end through in-process skills. */
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

/* Parses JSON text known to be valid (test input). */
static json_object *J(const char *text)
{
    enum json_tokener_error e;
    json_object *o = json_tokener_parse_verbose(text, &e);
    if (e != json_tokener_success) diag("bad test JSON: %s", text);
    return o;
}

static const char *plain(json_object *o)
{
    return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
}

/* Resolves and returns rc; *text gets the plain JSON of the result (or
 * NULL), released with free(). */
static int resolve(const cn_skill_meta *m, const char *overrides, const char *args, char **text)
{
    json_object *ov = overrides ? J(overrides) : NULL;
    json_object *ar = args ? J(args) : NULL;
    json_object *out = (json_object *)1;
    int rc = cn_params_resolve(m, ov, ar, &out);

    *text = NULL;
    if (rc == 0) *text = strdup(plain(out));
    else if (out != NULL) diag("resolve failed but *out is not NULL");
    json_object_put(out == (json_object *)1 ? NULL : out);
    json_object_put(ov);
    json_object_put(ar);
    return rc;
}

static void expect_resolved(const cn_skill_meta *m, const char *overrides, const char *args,
                            const char *want, const char *what)
{
    char *text = NULL;
    int rc = resolve(m, overrides, args, &text);
    if (!is_int(rc, 0, what)) diag("%s", cn_error_last()->message);
    is_str(text, want, what);
    free(text);
}

static void expect_refused(const cn_skill_meta *m, const char *overrides, const char *args,
                           int code, const char *needle, const char *what)
{
    char *text = NULL;
    int rc = resolve(m, overrides, args, &text);
    is_int(rc, code, what);
    has_str(cn_error_last()->message, needle, what);
    free(text);
}

/* ---- resolution ---------------------------------------------------------- */

static void test_precedence(void)
{
    cn_skill_meta *m = from_yaml("skill_id: prec\n"
                                 "defaults: {b: 20, c: 20, d: 20}\n"
                                 "inputs:\n"
                                 "  - {name: a, type_hint: int, default: 1}\n"
                                 "  - {name: b, type_hint: int, default: 1}\n"
                                 "  - {name: c, type_hint: int, default: 1}\n"
                                 "  - {name: d, type_hint: int, default: 1}\n");
    ok(m != NULL, "prec metadata");
    if (m == NULL) return;
    expect_resolved(m, "{\"c\": 30, \"d\": 30}", "{\"d\": 40}",
                    "{\"a\":1,\"b\":20,\"c\":30,\"d\":40}",
                    "input default < config defaults < overrides < args");
    expect_resolved(m, NULL, NULL, "{\"a\":1,\"b\":20,\"c\":20,\"d\":20}",
                    "no overrides, no args: defaults");
    expect_resolved(m, "{\"a\": \"7\"}", "{}", "{\"a\":7,\"b\":20,\"c\":20,\"d\":20}",
                    "overrides are coerced too");
    expect_resolved(m, NULL, "{\"a\": 5.0}", "{\"a\":5,\"b\":20,\"c\":20,\"d\":20}",
                    "5.0 for an int becomes 5");
    cn_meta_free(m);
}

static void test_coercion(void)
{
    cn_skill_meta *m = from_yaml("skill_id: co\n"
                                 "inputs:\n"
                                 "  - {name: n, type_hint: int, required: false}\n"
                                 "  - {name: flag, type_hint: bool, required: false}\n"
                                 "  - {name: names, type_hint: 'List[str]', required: false}\n"
                                 "  - {name: ratio, type_hint: float, required: false}\n"
                                 "  - {name: label, type_hint: str, required: false}\n"
                                 "  - {name: mode, type_hint: str, enum: [fast, exact],"
                                 " required: false}\n");
    json_object *args, *out = NULL;

    ok(m != NULL, "co metadata");
    if (m == NULL) return;
    expect_resolved(m, NULL, "{\"n\": \"5\", \"flag\": \"true\", \"names\": \"x\", \"label\": 3}",
                    "{\"n\":5,\"flag\":true,\"names\":[\"x\"],\"label\":\"3\"}",
                    "model arguments coerced: \"5\"->5, \"true\"->true, scalar->list, 3->\"3\"");

    args = J("{\"n\": \"5\", \"flag\": \"false\", \"names\": [1, \"b\"], \"ratio\": \"2.5\"}");
    is_int(cn_params_resolve(m, NULL, args, &out), 0, "coerce: resolve");
    {
        json_object *v = NULL;
        json_object_object_get_ex(out, "n", &v);
        ok(json_object_is_type(v, json_type_int) && json_object_get_int(v) == 5,
           "\"5\" arrives as the integer 5");
        json_object_object_get_ex(out, "flag", &v);
        ok(json_object_is_type(v, json_type_boolean) && !json_object_get_boolean(v),
           "\"false\" arrives as false");
        json_object_object_get_ex(out, "names", &v);
        is_str(plain(v), "[\"1\",\"b\"]", "list elements coerced to str");
        json_object_object_get_ex(out, "ratio", &v);
        ok(json_object_is_type(v, json_type_double) && json_object_get_double(v) == 2.5,
           "\"2.5\" arrives as 2.5");
    }
    json_object_put(out);
    json_object_put(args);

    expect_refused(m, NULL, "{\"n\": \"five\"}", CN_ETYPE, "skill 'co'",
                   "uncoercible argument: CN_ETYPE naming the skill");
    has_str(cn_error_last()->message, "'n'", "uncoercible argument: names the argument");
    expect_refused(m, NULL, "{\"n\": 5.5}", CN_ETYPE, "'n'", "5.5 is not an int");
    expect_refused(m, NULL, "{\"mode\": \"slow\"}", CN_ETYPE, "'mode'", "value outside the enum");
    expect_resolved(m, NULL, "{\"mode\": \"exact\"}", "{\"mode\":\"exact\"}",
                    "enum value accepted");
    expect_refused(m, "{\"n\": \"five\"}", NULL, CN_ETYPE, "caller parameters",
                   "uncoercible override: CN_ETYPE naming the caller parameters");
    cn_meta_free(m);
}

static void test_line_numbers(void)
{
    cn_skill_meta *m = from_yaml("skill_id: lines\n"
                                 "inputs:\n"
                                 "  - {name: line, type_hint: int, is_line_number: true}\n"
                                 "  - {name: end, type_hint: 'Optional[int]', is_line_number: true,"
                                 " required: false}\n");
    ok(m != NULL, "lines metadata");
    if (m == NULL) return;
    expect_resolved(m, NULL, "{\"line\": 10}", "{\"line\":9}", "line 10 arrives as 9");
    expect_resolved(m, NULL, "{\"line\": \"10\"}", "{\"line\":9}", "line \"10\" arrives as 9");
    expect_resolved(m, NULL, "{\"line\": 1}", "{\"line\":0}", "line 1 arrives as 0");
    expect_resolved(m, NULL, "{\"line\": 1, \"end\": 3}", "{\"line\":0,\"end\":2}",
                    "Optional[int] line number shifted too");
    expect_resolved(m, NULL, "{\"line\": 2, \"end\": null}", "{\"line\":1,\"end\":null}",
                    "null line number stays null");
    expect_refused(m, NULL, "{\"line\": 0}", CN_ETYPE, "line numbers start at 1",
                   "line 0: CN_ETYPE");
    has_str(cn_error_last()->message, "'line'", "line 0: names the argument");
    expect_refused(m, NULL, "{\"line\": -4}", CN_ETYPE, "line numbers start at 1",
                   "negative line: CN_ETYPE");
    cn_meta_free(m);
}

static void test_errors(void)
{
    cn_skill_meta *m = from_yaml("skill_id: errs\n"
                                 "defaults: {path: src}\n"
                                 "inputs:\n"
                                 "  - {name: q, type_hint: str, description: The query.}\n"
                                 "  - {name: k, type_hint: 'Optional[int]', default: 3}\n"
                                 "  - {name: j, type_hint: int, default: 1}\n"
                                 "  - {name: o, type_hint: 'Optional[int]', required: false}\n"
                                 "  - {name: path, type_hint: str}\n");
    json_object *args, *out;

    ok(m != NULL, "errs metadata");
    if (m == NULL) return;
    expect_refused(m, NULL, "{\"q\": \"x\", \"bogus\": 1}", CN_EINVAL, "'bogus'",
                   "unknown argument: CN_EINVAL naming it");
    is_str(cn_error_last()->message,
           "skill 'errs': unknown argument 'bogus' (it takes: q, k, j, o, path)",
           "unknown argument: message lists the inputs");
    expect_refused(m, NULL, "{}", CN_EINVAL, "missing required argument 'q'",
                   "missing required: CN_EINVAL naming it");
    is_str(cn_error_last()->message,
           "skill 'errs': missing required argument 'q' (str): The query.",
           "missing required: message with type and description");
    expect_resolved(m, NULL, "{\"q\": \"x\"}",
                    "{\"k\":3,\"j\":1,\"path\":\"src\",\"q\":\"x\"}",
                    "required input supplied by config defaults");
    expect_resolved(m, NULL, "{\"q\": \"x\", \"k\": null, \"j\": null}",
                    "{\"k\":3,\"j\":1,\"path\":\"src\",\"q\":\"x\"}",
                    "null for inputs with a default keeps the default");
    expect_resolved(m, NULL, "{\"q\": \"x\", \"o\": null}",
                    "{\"k\":3,\"j\":1,\"path\":\"src\",\"q\":\"x\",\"o\":null}",
                    "null for an optional input without a default is passed as null");
    expect_refused(m, NULL, "{\"q\": null}", CN_ETYPE, "'q'", "null for a required str");
    expect_refused(m, NULL, "[1, 2]", CN_EINVAL, "arguments must be a JSON object",
                   "args an array: CN_EINVAL");
    expect_refused(m, NULL, "\"q\"", CN_EINVAL, "arguments must be a JSON object",
                   "args a string: CN_EINVAL");
    expect_refused(m, "[1]", "{\"q\": \"x\"}", CN_EINVAL, "overrides must be a JSON object",
                   "overrides an array: CN_EINVAL");

    /* Resolution never changes the metadata's own values. */
    args = J("{\"q\": \"x\", \"k\": 8}");
    out = NULL;
    is_int(cn_params_resolve(m, NULL, args, &out), 0, "resolve k=8");
    json_object_put(out);
    json_object_put(args);
    is_int(json_object_get_int(cn_meta_input(m, "k")->default_value), 3,
           "input default unchanged after resolution");
    is_str(plain(m->defaults), "{\"path\":\"src\"}", "config defaults unchanged");
    cn_meta_free(m);
}

static void test_config_defaults_coerced(void)
{
    /* Config `defaults` are checked against the input types when the
     * metadata is read; the skill must receive them coerced, like every
     * other resolved value. */
    cn_skill_meta *m = from_yaml("skill_id: dco\n"
                                 "defaults: {names: src, n: '5'}\n"
                                 "inputs:\n"
                                 "  - {name: names, type_hint: 'List[str]', required: false}\n"
                                 "  - {name: n, type_hint: int, required: false}\n");
    ok(m != NULL, "dco metadata");
    if (m == NULL) return;
    expect_resolved(m, NULL, NULL, "{\"names\":[\"src\"],\"n\":5}",
                    "config defaults arrive coerced to the input types");
    cn_meta_free(m);
}

/* ---- result line numbers ------------------------------------------------- */

static void expect_lines(const cn_skill_meta *m, const char *in, const char *want,
                         const char *what)
{
    json_object *r = J(in);
    cn_params_result_lines(m, r);
    is_str(plain(r), want, what);
    json_object_put(r);
}

static void test_result_lines(void)
{
    cn_skill_meta *def = from_yaml("skill_id: def\noutputs: {type_hint: Any}\n");
    cn_skill_meta *custom = from_yaml("skill_id: cus\noutputs:\n  line_fields: [lineno]\n");
    cn_skill_meta *none = from_yaml("skill_id: non\noutputs:\n  line_fields: []\n");
    const char *result =
        "{\"nodes\":[{\"start_line\":0,\"end_line\":4,\"line\":2,\"count\":5,\"lineno\":6,"
        "\"meta\":{\"line\":7,\"id\":3}},[{\"end_line\":9}]],"
        "\"line\":1,\"total\":2,\"start_line\":\"x\",\"end_line\":1.5,\"lineno\":0}";

    ok(def && custom && none, "line metadata");
    if (def && custom && none) {
        expect_lines(def, result,
                     "{\"nodes\":[{\"start_line\":1,\"end_line\":5,\"line\":3,\"count\":5,"
                     "\"lineno\":6,\"meta\":{\"line\":8,\"id\":3}},[{\"end_line\":10}]],"
                     "\"line\":2,\"total\":2,\"start_line\":\"x\",\"end_line\":1.5,\"lineno\":0}",
                     "default line fields shifted at every depth, others untouched");
        expect_lines(custom, result,
                     "{\"nodes\":[{\"start_line\":0,\"end_line\":4,\"line\":2,\"count\":5,"
                     "\"lineno\":7,\"meta\":{\"line\":7,\"id\":3}},[{\"end_line\":9}]],"
                     "\"line\":1,\"total\":2,\"start_line\":\"x\",\"end_line\":1.5,\"lineno\":1}",
                     "line_fields [lineno] shifts only lineno");
        expect_lines(none, result, result, "line_fields [] shifts nothing");
        expect_lines(def, "[{\"line\":0},{\"line\":10}]", "[{\"line\":1},{\"line\":11}]",
                     "a top-level array of results");
        expect_lines(def, "5", "5", "a bare integer result is untouched");
        cn_params_result_lines(def, NULL); /* a null result must not crash */
        is_int(custom->outputs.line_fields.len, 1, "custom line_fields has one name");
        is_int(none->outputs.line_fields.len, 0, "explicit empty line_fields stays empty");
        is_int(def->outputs.line_fields.len, 3, "default line_fields has three names");
    }
    cn_meta_free(def);
    cn_meta_free(custom);
    cn_meta_free(none);
}

/* ---- invoke -------------------------------------------------------------- */

typedef struct echo_data {
    char seen[512];
    int calls;
} echo_data;

static int freed_count = 0;

static void free_echo(void *p)
{
    freed_count++;
    free(p);
}

static int echo_fn(void *data, const char *args_json, char **result_json, cn_error *err)
{
    echo_data *d = data;
    (void)err;
    d->calls++;
    snprintf(d->seen, sizeof d->seen, "%s", args_json);
    *result_json = strdup(args_json);
    return 0;
}

static int badjson_fn(void *data, const char *args_json, char **result_json, cn_error *err)
{
    (void)data;
    (void)args_json;
    (void)err;
    *result_json = strdup((const char *)data ? (const char *)data : "{not json");
    return 0;
}

static int fail_fn(void *data, const char *args_json, char **result_json, cn_error *err)
{
    (void)args_json;
    *result_json = strdup("{\"partial\":1}");
    if (data != NULL) return cn_error_fill(err, CN_EIO, "disk on fire at %s", "sector 9");
    return CN_EIO;
}

static int noresult_fn(void *data, const char *args_json, char **result_json, cn_error *err)
{
    (void)data;
    (void)args_json;
    (void)err;
    *result_json = NULL;
    return 0;
}

static void test_invoke(void)
{
    cn_registry *reg = NULL;
    echo_data *ed = calloc(1, sizeof *ed);
    json_object *args, *over, *res = NULL;
    const char *ex[] = {"echo"};
    const char *al[] = {"fail"};
    char *text = NULL;
    int rc;

    is_int(cn_registry_new(&reg), 0, "registry");
    if (reg == NULL || ed == NULL) {
        free(ed);
        return;
    }
    rc = cn_registry_register(reg,
                              "{\"skill_id\":\"echo\",\"defaults\":{\"top_k\":4},"
                              "\"inputs\":["
                              "{\"name\":\"query\",\"type_hint\":\"str\"},"
                              "{\"name\":\"top_k\",\"type_hint\":\"int\",\"default\":10},"
                              "{\"name\":\"start_line\",\"type_hint\":\"int\","
                              "\"is_line_number\":true,\"required\":false}],"
                              "\"outputs\":{\"type_hint\":\"Dict[str, Any]\"}}",
                              "Echoes its arguments.", echo_fn, ed, free_echo);
    is_int(rc, 0, "register echo");
    is_int(cn_registry_register(reg, "{\"skill_id\":\"badjson\"}", NULL, badjson_fn, NULL, NULL),
           0, "register badjson");
    is_int(cn_registry_register(reg, "{\"skill_id\":\"trailing\"}", NULL, badjson_fn,
                                (void *)"{\"a\":1} trailing", NULL),
           0, "register trailing");
    is_int(cn_registry_register(reg, "{\"skill_id\":\"fail\"}", NULL, fail_fn, (void *)1, NULL),
           0, "register fail");
    is_int(cn_registry_register(reg, "{\"skill_id\":\"failquiet\"}", NULL, fail_fn, NULL, NULL),
           0, "register failquiet");
    is_int(cn_registry_register(reg, "{\"skill_id\":\"noresult\"}", NULL, noresult_fn, NULL,
                                NULL),
           0, "register noresult");

    /* Resolution on the way in, the line shift on the way out. */
    args = J("{\"query\": 42, \"start_line\": \"10\"}");
    over = J("{\"top_k\": \"6\"}");
    rc = cn_registry_invoke(reg, "echo", args, over, &res);
    if (!is_int(rc, 0, "invoke echo")) diag("%s", cn_error_last()->message);
    is_str(ed->seen, "{\"top_k\":6,\"query\":\"42\",\"start_line\":9}",
           "the skill sees resolved, coerced, 0-based arguments");
    is_str(res ? plain(res) : NULL, "{\"top_k\":6,\"query\":\"42\",\"start_line\":10}",
           "the result's line fields come back 1-based");
    json_object_put(res);
    json_object_put(args);
    json_object_put(over);

    res = NULL;
    args = J("{\"query\": \"q\"}");
    is_int(cn_registry_invoke(reg, "echo", args, NULL, &res), 0, "invoke echo, no overrides");
    is_str(ed->seen, "{\"top_k\":4,\"query\":\"q\"}", "config default reaches the skill");
    json_object_put(res);
    json_object_put(args);

    is_int(cn_registry_run(reg, "echo", "{\"query\":\"ab\",\"start_line\":3}", "{\"top_k\":1}",
                           &text),
           0, "cn_registry_run echo");
    is_str(ed->seen, "{\"top_k\":1,\"query\":\"ab\",\"start_line\":2}",
           "cn_registry_run: the skill's arguments");
    is_str(text, "{\"top_k\":1,\"query\":\"ab\",\"start_line\":3}", "cn_registry_run: result text");
    cn_free(text);

    /* Resolution failures stop before the skill runs. */
    ed->calls = 0;
    args = J("{\"query\": \"q\", \"nope\": 1}");
    res = (json_object *)1;
    is_int(cn_registry_invoke(reg, "echo", args, NULL, &res), CN_EINVAL,
           "unknown argument through invoke");
    has_str(cn_error_last()->message, "unknown argument 'nope'", "invoke: unknown argument");
    ok(res == NULL, "invoke failure leaves *result NULL");
    json_object_put(args);
    args = J("{}");
    is_int(cn_registry_invoke(reg, "echo", args, NULL, &res), CN_EINVAL,
           "missing required through invoke");
    json_object_put(args);
    args = J("{\"query\": \"q\", \"start_line\": 0}");
    is_int(cn_registry_invoke(reg, "echo", args, NULL, &res), CN_ETYPE,
           "line 0 through invoke");
    json_object_put(args);
    is_int(ed->calls, 0, "the skill did not run");

    is_int(cn_registry_invoke(reg, "badjson", NULL, NULL, &res), CN_ESKILL,
           "invalid JSON result: CN_ESKILL");
    has_str(cn_error_last()->message, "skill 'badjson' returned invalid JSON",
            "invalid JSON: message");
    has_str(cn_error_last()->message, "{not json", "invalid JSON: quotes the text");
    ok(res == NULL, "invalid JSON: no result");

    res = NULL;
    is_int(cn_registry_invoke(reg, "trailing", NULL, NULL, &res), CN_ESKILL,
           "a result with text after the value: CN_ESKILL");
    has_str(cn_error_last()->message, "skill 'trailing' returned invalid JSON",
            "trailing text: message");
    json_object_put(res);
    res = NULL;

    is_int(cn_registry_invoke(reg, "fail", NULL, NULL, &res), CN_EIO,
           "failing skill: its code is passed back");
    is_str(cn_error_last()->message, "skill 'fail' failed: disk on fire at sector 9",
           "failing skill: its message is carried");
    ok(res == NULL, "failing skill: no result");
    is_int(cn_registry_invoke(reg, "failquiet", NULL, NULL, &res), CN_EIO,
           "failing skill without a message");
    is_str(cn_error_last()->message, "skill 'failquiet' failed: CN_EIO",
           "failing skill without a message: the code's name");

    is_int(cn_registry_invoke(reg, "noresult", NULL, NULL, &res), CN_ESKILL,
           "success without a result: CN_ESKILL");
    has_str(cn_error_last()->message, "returned no result", "no result: message");

    is_int(cn_registry_invoke(reg, "ghost", NULL, NULL, &res), CN_ENOTFOUND,
           "unknown skill: CN_ENOTFOUND");
    has_str(cn_error_last()->message, "no skill 'ghost'", "unknown skill: message");

    ed->calls = 0;
    cn_registry_set_exclude(reg, ex, 1);
    args = J("{\"query\": \"q\"}");
    is_int(cn_registry_invoke(reg, "echo", args, NULL, &res), CN_EDENIED,
           "excluded skill: CN_EDENIED");
    has_str(cn_error_last()->message, "skill 'echo' is not allowed", "excluded: message");
    ok(res == NULL, "excluded: no result");
    cn_registry_set_exclude(reg, NULL, 0);
    cn_registry_set_allow(reg, al, 1);
    is_int(cn_registry_invoke(reg, "echo", args, NULL, &res), CN_EDENIED,
           "skill outside the allow set: CN_EDENIED");
    is_int(ed->calls, 0, "a denied skill does not run");
    cn_registry_set_allow(reg, NULL, 0);
    is_int(cn_registry_invoke(reg, "echo", args, NULL, &res), 0, "allowed again");
    json_object_put(res);
    json_object_put(args);

    freed_count = 0;
    cn_registry_free(reg);
    is_int(freed_count, 1, "free_data called once when the registry is freed");
}

int main(void)
{
    test_precedence();
    test_coercion();
    test_line_numbers();
    test_errors();
    test_config_defaults_coerced();
    test_result_lines();
    test_invoke();
    return tap_done();
}
