/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for core/plugin/cn_yaml.c: scalar resolution, tags, anchors,
 * marks, every error message with its position, and hostile input. */
#include "plugin/cn_yaml.h"
#include "util/cn_util.h"
#include "tap.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Loads text (given length) as "t.yaml"; returns the code. */
static int load_n(const char *text, size_t len, json_object **out)
{
    cn_error_clear();
    return cn_yaml_load_string(text, len, "t.yaml", out);
}

static int load(const char *text, json_object **out)
{
    return load_n(text, strlen(text), out);
}

/* Expects text to fail with code and exactly msg, and out left NULL. */
static void fails_n(const char *text, size_t len, int code, const char *msg, const char *what)
{
    json_object *out = (json_object *)&out; /* must be reset to NULL */
    char label[256];
    int rc = load_n(text, len, &out);

    snprintf(label, sizeof label, "%s: code", what);
    is_int(rc, code, label);
    snprintf(label, sizeof label, "%s: message", what);
    is_str(cn_error_last()->message, msg, label);
    if (rc == 0) json_object_put(out);
    else if (out != NULL) ok(0, "out not reset on error");
}

static void fails(const char *text, int code, const char *msg, const char *what)
{
    fails_n(text, strlen(text), code, msg, what);
}

static json_object *at(json_object *o, const char *key)
{
    json_object *v = NULL;
    json_object_object_get_ex(o, key, &v);
    return v;
}

static json_object *idx(json_object *o, size_t i)
{
    return json_object_array_get_idx(o, i);
}

/* "L:C" of a node's mark, or "none". */
static const char *where(json_object *v)
{
    static char buf[32];
    int line, col;
    if (cn_yaml_mark(v, &line, &col) != 0) return "none";
    snprintf(buf, sizeof buf, "%d:%d", line, col);
    return buf;
}

static void is_type(json_object *v, json_type t, const char *what)
{
    is_str(json_type_to_name(json_object_get_type(v)), json_type_to_name(t), what);
}

static void test_structure(void)
{
    json_object *o;
    int rc = load("name: demo\n"
                  "list:\n"
                  "  - a\n"
                  "  - [1, 2]\n"
                  "nested: {x: {y: z}}\n",
                  &o);
    is_int(rc, 0, "structure: loads");
    is_type(o, json_type_object, "mapping -> object");
    is_int(json_object_object_length(o), 3, "three keys");
    is_str(json_object_get_string(at(o, "name")), "demo", "name is demo");
    is_type(at(o, "list"), json_type_array, "sequence -> array");
    is_int(json_object_array_length(at(o, "list")), 2, "list has two items");
    is_str(json_object_get_string(idx(at(o, "list"), 0)), "a", "list[0]");
    is_int(json_object_get_int64(idx(idx(at(o, "list"), 1), 1)), 2, "list[1][1]");
    is_str(json_object_get_string(at(at(at(o, "nested"), "x"), "y")), "z", "nested.x.y");
    {
        /* keys keep document order */
        const char *order[] = {"name", "list", "nested"};
        size_t i = 0;
        int in_order = 1;
        json_object_object_foreach(o, k, v) {
            (void)v;
            if (i >= 3 || strcmp(k, order[i]) != 0) in_order = 0;
            i++;
        }
        ok(in_order && i == 3, "keys in document order");
    }
    json_object_put(o);

    rc = load("- a\n- b\n", &o);
    is_int(rc, 0, "sequence root loads");
    is_type(o, json_type_array, "sequence root is an array");
    json_object_put(o);

    rc = load("42\n", &o);
    is_int(rc, 0, "scalar root loads");
    is_int(json_object_get_int64(o), 42, "scalar root is 42");
    json_object_put(o);

    rc = load("~\n", &o);
    is_int(rc, 0, "null root loads");
    ok(o == NULL, "explicit ~ root is JSON null");
}

static void test_empty(void)
{
    const char *inputs[] = {"", "# only a comment\n\n# another\n", "\n\n   \n", "---\n",
                            "---\n...\n", "\xEF\xBB\xBF"};
    size_t i;
    for (i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
        json_object *o = NULL;
        char label[64];
        int rc = load(inputs[i], &o);
        snprintf(label, sizeof label, "empty input %zu loads", i);
        is_int(rc, 0, label);
        snprintf(label, sizeof label, "empty input %zu gives {}", i);
        ok(json_object_is_type(o, json_type_object) && json_object_object_length(o) == 0, label);
        json_object_put(o);
    }
    {
        json_object *o = NULL;
        int rc = cn_yaml_load_string(NULL, 0, NULL, &o);
        is_int(rc, 0, "NULL text with length 0 loads");
        ok(json_object_is_type(o, json_type_object), "NULL text gives {}");
        json_object_put(o);
    }
    is_int(cn_yaml_load_string("a: 1", 4, "t", NULL), CN_EINVAL, "out NULL -> CN_EINVAL");
    is_int(cn_yaml_load_string(NULL, 3, "t", &(json_object *){NULL}), CN_EINVAL,
           "NULL text with length -> CN_EINVAL");
}

static void test_nulls_and_bools(void)
{
    json_object *o;
    size_t i;
    int rc = load("- ~\n- null\n- Null\n- NULL\n-\n- NuLL\n- nULL\n", &o);
    is_int(rc, 0, "nulls load");
    for (i = 0; i < 5; i++) {
        char label[64];
        snprintf(label, sizeof label, "null form %zu is JSON null", i);
        ok(idx(o, i) == NULL, label);
    }
    is_str(json_object_get_string(idx(o, 5)), "NuLL", "NuLL stays a string");
    is_str(json_object_get_string(idx(o, 6)), "nULL", "nULL stays a string");
    json_object_put(o);

    rc = load("empty:\nalso: ~\n", &o);
    is_int(rc, 0, "empty value loads");
    ok(json_object_object_get_ex(o, "empty", NULL) && at(o, "empty") == NULL,
       "empty value is a present null");
    ok(at(o, "also") == NULL, "~ value is null");
    json_object_put(o);

    rc = load("t: [true, True, TRUE, yes, Yes, YES, on, On, ON]\n"
              "f: [false, False, FALSE, no, No, NO, off, Off, OFF]\n"
              "s: [tRUE, y, n, Y, N, oN, yes please, truth]\n",
              &o);
    is_int(rc, 0, "bools load");
    for (i = 0; i < 9; i++) {
        char label[64];
        json_object *t = idx(at(o, "t"), i), *f = idx(at(o, "f"), i);
        snprintf(label, sizeof label, "true form %zu", i);
        ok(json_object_is_type(t, json_type_boolean) && json_object_get_boolean(t), label);
        snprintf(label, sizeof label, "false form %zu", i);
        ok(json_object_is_type(f, json_type_boolean) && !json_object_get_boolean(f), label);
    }
    for (i = 0; i < 8; i++) {
        char label[64];
        snprintf(label, sizeof label, "non-bool word %zu is a string", i);
        is_type(idx(at(o, "s"), i), json_type_string, label);
    }
    is_str(json_object_get_string(idx(at(o, "s"), 6)), "yes please", "multi-word plain");
    json_object_put(o);
}

static void test_ints(void)
{
    static const struct {
        const char *text;
        int64_t value;
    } cases[] = {
        {"0", 0},
        {"-0", 0},
        {"42", 42},
        {"+7", 7},
        {"-17", -17},
        {"1_000_000", 1000000},
        {"0x1F", 31},
        {"0xff", 255},
        {"-0x10", -16},
        {"0x_1_0", 16},
        {"0o17", 15},
        {"-0o17", -15},
        {"0755", 493},
        {"0b1010", 10},
        {"0b1_1", 3},
        {"1_", 1},
        {"9223372036854775807", INT64_MAX},
        {"-9223372036854775808", INT64_MIN},
        {"0x7FFFFFFFFFFFFFFF", INT64_MAX},
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_object *o;
        char label[96];
        int rc = load(cases[i].text, &o);
        snprintf(label, sizeof label, "int '%s' is an int", cases[i].text);
        ok(rc == 0 && json_object_is_type(o, json_type_int), label);
        snprintf(label, sizeof label, "int '%s' value", cases[i].text);
        ok(json_object_get_int64(o) == cases[i].value, label);
        json_object_put(o);
    }
    {
        /* out of int64 range -> nearest double */
        static const struct {
            const char *text;
            double value;
        } big[] = {
            {"9223372036854775808", 9223372036854775808.0},
            {"-9223372036854775809", -9223372036854775808.0},
            {"0x8000000000000000", 9223372036854775808.0},
            {"123456789012345678901234567890", 123456789012345678901234567890.0},
        };
        for (i = 0; i < sizeof big / sizeof big[0]; i++) {
            json_object *o;
            char label[96];
            int rc = load(big[i].text, &o);
            snprintf(label, sizeof label, "big int '%s' becomes a double", big[i].text);
            ok(rc == 0 && json_object_is_type(o, json_type_double), label);
            snprintf(label, sizeof label, "big int '%s' value", big[i].text);
            ok(json_object_get_double(o) == big[i].value, label);
            json_object_put(o);
        }
    }
    {
        /* not integers in YAML 1.1 and not floats either */
        const char *strings[] = {"08", "0x", "0o", "0b", "0b12", "0xg", "_1", "+", "+-1", "-x",
                                 "12:30", "2001-12-14", "1,000", "0o8", "--1", "1 2"};
        for (i = 0; i < sizeof strings / sizeof strings[0]; i++) {
            json_object *o;
            char label[96];
            int rc = load(strings[i], &o);
            snprintf(label, sizeof label, "'%s' stays a string", strings[i]);
            ok(rc == 0 && json_object_is_type(o, json_type_string) &&
                   strcmp(json_object_get_string(o), strings[i]) == 0,
               label);
            json_object_put(o);
        }
    }
}

static void test_floats(void)
{
    static const struct {
        const char *text;
        double value;
    } cases[] = {
        {"1.5", 1.5},     {"-2e3", -2000.0},     {".5", 0.5},      {"-.5", -0.5},
        {"1.", 1.0},      {"1e3", 1000.0},       {"6.25E+2", 625.0}, {"1_000.25", 1000.25},
        {"2.5e-1", 0.25}, {"+1.0", 1.0},         {"0.0", 0.0},     {"09.5", 9.5},
        {"1__0.5_", 10.5},
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_object *o;
        char label[96];
        int rc = load(cases[i].text, &o);
        snprintf(label, sizeof label, "float '%s' is a double", cases[i].text);
        ok(rc == 0 && json_object_is_type(o, json_type_double), label);
        snprintf(label, sizeof label, "float '%s' value", cases[i].text);
        ok(json_object_get_double(o) == cases[i].value, label);
        json_object_put(o);
    }
    {
        json_object *o;
        int rc = load("[.inf, .Inf, .INF, +.inf, -.Inf, -.INF, .nan, .NaN, .NAN]", &o);
        is_int(rc, 0, "inf/nan load");
        for (i = 0; i < 9; i++) {
            json_object *v = idx(o, i);
            double d = json_object_get_double(v);
            char label[64];
            snprintf(label, sizeof label, "special float %zu", i);
            if (i < 4)
                ok(json_object_is_type(v, json_type_double) && isinf(d) && d > 0, label);
            else if (i < 6)
                ok(json_object_is_type(v, json_type_double) && isinf(d) && d < 0, label);
            else
                ok(json_object_is_type(v, json_type_double) && isnan(d), label);
        }
        json_object_put(o);
    }
    {
        const char *strings[] = {".",   "-.nan", ".infinity", "1.2.3", "1e",  "e5",
                                 "1e+", "1.5x", "inf",       "nan",   "._5", "1e1_0"};
        for (i = 0; i < sizeof strings / sizeof strings[0]; i++) {
            json_object *o;
            char label[96];
            int rc = load(strings[i], &o);
            snprintf(label, sizeof label, "'%s' stays a string", strings[i]);
            ok(rc == 0 && json_object_is_type(o, json_type_string) &&
                   strcmp(json_object_get_string(o), strings[i]) == 0,
               label);
            json_object_put(o);
        }
    }
}

static void test_strings(void)
{
    json_object *o;
    int rc = load("a: '123'\n"
                  "b: \"true\"\n"
                  "c: 'null'\n"
                  "d: \"\"\n"
                  "e: \"1.5\"\n"
                  "f: |\n"
                  "  line1\n"
                  "  42\n"
                  "g: >\n"
                  "  folded\n"
                  "  text\n"
                  "h: |-\n"
                  "  7\n"
                  "i: hello world\n"
                  "j: \"tab\\there\"\n"
                  "k: \"nul\\0byte\"\n"
                  "l: caf\xC3\xA9\n",
                  &o);
    is_int(rc, 0, "strings load");
    is_str(json_object_get_string(at(o, "a")), "123", "single-quoted digits stay a string");
    is_type(at(o, "a"), json_type_string, "single-quoted is a string");
    is_type(at(o, "b"), json_type_string, "double-quoted true is a string");
    is_type(at(o, "c"), json_type_string, "quoted null is a string");
    is_str(json_object_get_string(at(o, "c")), "null", "quoted null text");
    is_type(at(o, "d"), json_type_string, "empty quoted is a string");
    is_str(json_object_get_string(at(o, "d")), "", "empty quoted is empty");
    is_type(at(o, "e"), json_type_string, "quoted float is a string");
    is_str(json_object_get_string(at(o, "f")), "line1\n42\n", "literal block");
    is_str(json_object_get_string(at(o, "g")), "folded text\n", "folded block");
    is_type(at(o, "h"), json_type_string, "block scalar of digits is a string");
    is_str(json_object_get_string(at(o, "h")), "7", "stripped block");
    is_str(json_object_get_string(at(o, "i")), "hello world", "plain with space");
    is_str(json_object_get_string(at(o, "j")), "tab\there", "escape in double quotes");
    is_int(json_object_get_string_len(at(o, "k")), 8, "embedded NUL kept in a value");
    ok(memcmp(json_object_get_string(at(o, "k")), "nul\0byte", 8) == 0, "NUL value bytes");
    is_str(json_object_get_string(at(o, "l")), "caf\xC3\xA9", "UTF-8 kept");
    json_object_put(o);
}

static void test_keys(void)
{
    json_object *o;
    int rc = load("0x10: a\nnull: b\n~: c\n'': d\ntrue: e\n1.5: f\n\"q\": g\n", &o);
    is_int(rc, 0, "odd keys load");
    is_str(json_object_get_string(at(o, "0x10")), "a", "key 0x10 kept as written");
    is_str(json_object_get_string(at(o, "null")), "b", "key null kept as written");
    is_str(json_object_get_string(at(o, "~")), "c", "key ~ kept as written");
    is_str(json_object_get_string(at(o, "")), "d", "empty quoted key");
    is_str(json_object_get_string(at(o, "true")), "e", "key true kept as written");
    is_str(json_object_get_string(at(o, "1.5")), "f", "key 1.5 kept as written");
    is_str(json_object_get_string(at(o, "q")), "g", "quoted key");
    json_object_put(o);

    fails("{[a]: 1}\n", CN_EPARSE, "t.yaml:1:2: mapping key must be a scalar, not a sequence",
          "flow sequence key");
    fails("? {a: 1}\n: 1\n", CN_EPARSE, "t.yaml:1:3: mapping key must be a scalar, not a mapping",
          "block mapping key");
    fails("x:\n  ? - a\n  : 1\n", CN_EPARSE,
          "t.yaml:2:5: mapping key must be a scalar, not a sequence", "nested complex key");
    fails("\"a\\0b\": 1\n", CN_EPARSE, "t.yaml:1:1: mapping key 'a\\x00b' contains a NUL character",
          "NUL in key");
    fails("!!int abc: 1\n", CN_EPARSE, "t.yaml:1:1: value 'abc' does not match its tag !!int",
          "tagged key is checked");
}

static void test_duplicates(void)
{
    fails("a: 1\nb: 2\na: 3\n", CN_EPARSE, "t.yaml:3:1: duplicate key 'a' (first at line 1)",
          "duplicate key");
    fails("top:\n  x: 1\n\n  y: 2\n  x: [3]\n", CN_EPARSE,
          "t.yaml:5:3: duplicate key 'x' (first at line 2)", "nested duplicate key");
    fails("{a: 1, b: 2, a: 3}\n", CN_EPARSE, "t.yaml:1:14: duplicate key 'a' (first at line 1)",
          "flow duplicate key");
    fails("a: 1\n'a': 2\n", CN_EPARSE, "t.yaml:2:1: duplicate key 'a' (first at line 1)",
          "quoted key equals plain key");
    fails("1: x\n\"1\": y\n", CN_EPARSE, "t.yaml:2:1: duplicate key '1' (first at line 1)",
          "int-looking and quoted keys collide");
    fails("k: &k a\na: 1\n*k : 2\n", CN_EPARSE, "t.yaml:3:1: duplicate key 'a' (first at line 2)",
          "duplicate key through an alias");
    fails("? a\n: 1\nb: 2\na: 3\n", CN_EPARSE, "t.yaml:4:1: duplicate key 'a' (first at line 1)",
          "explicit key then duplicate");
    {
        json_object *o;
        int rc = load("- {a: 1}\n- {a: 2}\n", &o);
        is_int(rc, 0, "same key in sibling mappings is allowed");
        json_object_put(o);
    }
}

static void test_tags(void)
{
    json_object *o;
    int rc = load("s: !!str 12\n"
                  "s2: !!str ~\n"
                  "s3: !!str true\n"
                  "i: !!int \"42\"\n"
                  "i2: !!int 0x10\n"
                  "f: !!float 1\n"
                  "f2: !!float '2.5'\n"
                  "f3: !!float 017\n"
                  "b: !!bool \"yes\"\n"
                  "b2: !!bool off\n"
                  "n: !!null \"\"\n"
                  "n2: !!null ~\n"
                  "ns: ! 12\n"
                  "m: !!map {a: 1}\n"
                  "q: !!seq [1]\n"
                  "bare: ! [1]\n",
                  &o);
    is_int(rc, 0, "tags load");
    is_type(at(o, "s"), json_type_string, "!!str 12 is a string");
    is_str(json_object_get_string(at(o, "s")), "12", "!!str 12 text");
    is_str(json_object_get_string(at(o, "s2")), "~", "!!str ~ text");
    is_type(at(o, "s3"), json_type_string, "!!str true is a string");
    is_type(at(o, "i"), json_type_int, "!!int on a quoted scalar");
    is_int(json_object_get_int64(at(o, "i")), 42, "!!int \"42\"");
    is_int(json_object_get_int64(at(o, "i2")), 16, "!!int 0x10");
    is_type(at(o, "f"), json_type_double, "!!float 1 is a double");
    ok(json_object_get_double(at(o, "f")) == 1.0, "!!float 1 value");
    ok(json_object_get_double(at(o, "f2")) == 2.5, "!!float '2.5' value");
    ok(json_object_get_double(at(o, "f3")) == 17.0, "!!float 017 is decimal");
    ok(json_object_get_boolean(at(o, "b")) && json_object_is_type(at(o, "b"), json_type_boolean),
       "!!bool \"yes\"");
    ok(!json_object_get_boolean(at(o, "b2")) &&
           json_object_is_type(at(o, "b2"), json_type_boolean),
       "!!bool off");
    ok(json_object_object_get_ex(o, "n", NULL) && at(o, "n") == NULL, "!!null \"\"");
    ok(at(o, "n2") == NULL, "!!null ~");
    is_type(at(o, "ns"), json_type_string, "non-specific ! makes a string");
    is_type(at(o, "m"), json_type_object, "!!map on a mapping");
    is_type(at(o, "q"), json_type_array, "!!seq on a sequence");
    is_type(at(o, "bare"), json_type_array, "! on a sequence");
    json_object_put(o);

    fails("x: !!int abc\n", CN_EPARSE, "t.yaml:1:4: value 'abc' does not match its tag !!int",
          "!!int mismatch");
    fails("x: !!int 1.5\n", CN_EPARSE, "t.yaml:1:4: value '1.5' does not match its tag !!int",
          "!!int on a float");
    fails("x: !!float abc\n", CN_EPARSE,
          "t.yaml:1:4: value 'abc' does not match its tag !!float", "!!float mismatch");
    fails("x: !!float 0x10\n", CN_EPARSE,
          "t.yaml:1:4: value '0x10' does not match its tag !!float", "!!float on hex");
    fails("x: !!bool maybe\n", CN_EPARSE,
          "t.yaml:1:4: value 'maybe' does not match its tag !!bool", "!!bool mismatch");
    fails("x: !!null nothing\n", CN_EPARSE,
          "t.yaml:1:4: value 'nothing' does not match its tag !!null", "!!null mismatch");
    fails("x: !!int \"a\\nb\"\n", CN_EPARSE,
          "t.yaml:1:4: value 'a\\x0Ab' does not match its tag !!int", "control bytes escaped");
    fails("x: !foo abc\n", CN_EPARSE, "t.yaml:1:4: unsupported tag '!foo' on a scalar",
          "local tag");
    fails("x: !!binary aGVsbG8=\n", CN_EPARSE, "t.yaml:1:4: unsupported tag '!!binary' on a scalar",
          "!!binary");
    fails("x: !<tag:example.com,2000:app/foo> 1\n", CN_EPARSE,
          "t.yaml:1:4: unsupported tag 'tag:example.com,2000:app/foo' on a scalar",
          "verbatim tag");
    fails("x: !!str {a: 1}\n", CN_EPARSE, "t.yaml:1:4: unsupported tag '!!str' on a mapping",
          "!!str on a mapping");
    fails("x: !!seq {a: 1}\n", CN_EPARSE, "t.yaml:1:4: unsupported tag '!!seq' on a mapping",
          "!!seq on a mapping");
    fails("x: !!map [1]\n", CN_EPARSE, "t.yaml:1:4: unsupported tag '!!map' on a sequence",
          "!!map on a sequence");
    fails("x: !!set {a, b}\n", CN_EPARSE, "t.yaml:1:4: unsupported tag '!!set' on a mapping",
          "!!set");
}

static void test_anchors(void)
{
    json_object *o;
    int rc = load("base: &b\n"
                  "  x: 1\n"
                  "  list: [a, b]\n"
                  "copy: *b\n"
                  "num: &n 5\n"
                  "num2: *n\n"
                  "nul: &z\n"
                  "nul2: *z\n"
                  "&k key: v\n"
                  "keyval: *k\n"
                  "re: &r 1\n"
                  "re2: &r 2\n"
                  "re3: *r\n"
                  "*n : as key\n",
                  &o);
    is_int(rc, 0, "anchors load");
    ok(at(o, "copy") != NULL && at(o, "copy") != at(o, "base"), "alias is a distinct node");
    is_str(json_object_to_json_string_ext(at(o, "copy"), JSON_C_TO_STRING_PLAIN),
           "{\"x\":1,\"list\":[\"a\",\"b\"]}", "alias copies the whole mapping");
    json_object_object_add(at(o, "copy"), "extra", json_object_new_int(1));
    ok(!json_object_object_get_ex(at(o, "base"), "extra", NULL),
       "changing the copy leaves the original alone");
    is_str(where(at(at(o, "copy"), "x")), "2:6", "copy keeps the original's marks");
    is_str(where(at(o, "copy")), "1:7", "copy root keeps the anchored node's mark (its anchor)");
    is_int(json_object_get_int64(at(o, "num2")), 5, "scalar alias");
    is_type(at(o, "num2"), json_type_int, "scalar alias keeps its type");
    ok(json_object_object_get_ex(o, "nul2", NULL) && at(o, "nul2") == NULL, "alias to null");
    is_str(json_object_get_string(at(o, "key")), "v", "anchored key still a key");
    is_str(json_object_get_string(at(o, "keyval")), "key", "alias to an anchored key");
    is_int(json_object_get_int64(at(o, "re3")), 2, "redefined anchor: latest wins");
    is_str(json_object_get_string(at(o, "5")), "as key", "scalar alias as a key uses its text");
    json_object_put(o);

    rc = load("a: &h 0x10\nb: *h\n*h : c\n", &o);
    is_int(rc, 0, "hex anchor loads");
    is_int(json_object_get_int64(at(o, "b")), 16, "hex alias value");
    is_str(json_object_get_string(at(o, "0x10")), "c", "hex alias key as written");
    json_object_put(o);

    fails("a: *nope\n", CN_EPARSE, "t.yaml:1:4: alias '*nope' to an unknown anchor",
          "unknown alias");
    fails("a: *x\nb: &x 1\n", CN_EPARSE, "t.yaml:1:4: alias '*x' to an unknown anchor",
          "alias before its anchor");
    fails("a: &x [1, *x]\n", CN_EPARSE,
          "t.yaml:1:11: alias '*x' refers to a node that contains it (recursive alias)",
          "recursive alias");
    fails("a: &m\n  b: {c: *m}\n", CN_EPARSE,
          "t.yaml:2:10: alias '*m' refers to a node that contains it (recursive alias)",
          "recursive alias in a nested mapping");
    fails("a: &s [1]\n*s : 2\n", CN_EPARSE,
          "t.yaml:2:1: mapping key must be a scalar, but alias '*s' is a collection",
          "collection alias as key");
}

static void test_marks(void)
{
    json_object *o;
    int line = -7, col = -7;
    int rc = load("name: demo\n"
                  "items:\n"
                  "  - 1\n"
                  "  - \"two\"\n"
                  "  - {k: v, n: 2.5}\n"
                  "block: |\n"
                  "  text\n"
                  "empty:\n"
                  "tagged: !!int 3\n"
                  "anch: &a [x]\n"
                  "\xC3\xA9t\xC3\xA9: caf\xC3\xA9\n",
                  &o);
    is_int(rc, 0, "marks doc loads");
    is_str(where(o), "1:1", "root mapping mark");
    is_str(where(at(o, "name")), "1:7", "plain scalar mark");
    is_str(where(at(o, "items")), "3:3", "block sequence mark");
    is_str(where(idx(at(o, "items"), 0)), "3:5", "int item mark");
    is_str(where(idx(at(o, "items"), 1)), "4:5", "quoted item mark");
    is_str(where(idx(at(o, "items"), 2)), "5:5", "flow mapping mark");
    is_str(where(at(idx(at(o, "items"), 2), "k")), "5:9", "flow value mark");
    is_str(where(at(idx(at(o, "items"), 2), "n")), "5:15", "double mark");
    is_str(where(at(o, "block")), "6:8", "block scalar mark");
    is_str(where(at(o, "empty")), "none", "null has no mark");
    is_str(where(at(o, "tagged")), "9:9", "tagged scalar mark starts at the tag");
    is_str(where(at(o, "anch")), "10:7", "anchored node mark starts at the anchor");
    is_str(where(at(o, "\xC3\xA9t\xC3\xA9")), "11:6", "columns count characters, not bytes");
    is_int(cn_yaml_mark(at(o, "name"), NULL, NULL), 0, "line/col pointers may be NULL");
    json_object_put(o);

    rc = load("a: 1\r\nb: [2,\r\n  3]\r\n", &o);
    is_int(rc, 0, "CRLF doc loads");
    is_str(where(at(o, "b")), "2:4", "CRLF line counting");
    is_str(where(idx(at(o, "b"), 1)), "3:3", "CRLF continuation line");
    json_object_put(o);

    is_int(cn_yaml_mark(NULL, &line, &col), -1, "NULL has no mark");
    is_int(line, -7, "line untouched without a mark");
    o = json_object_new_int(3);
    is_int(cn_yaml_mark(o, &line, &col), -1, "hand-made json has no mark");
    json_object_put(o);
    o = json_tokener_parse("[1.50, \"s\", {\"a\": 2.0}]");
    is_int(cn_yaml_mark(idx(o, 0), &line, &col), -1,
           "tokener double (string userdata) has no mark");
    is_int(cn_yaml_mark(at(idx(o, 2), "a"), &line, &col), -1, "nested tokener double");
    is_int(cn_yaml_mark(o, &line, &col), -1, "tokener array has no mark");
    json_object_put(o);
}

static void test_documents(void)
{
    json_object *o;
    int rc = load("---\na: 1\n...\n", &o);
    is_int(rc, 0, "explicit single document loads");
    is_int(json_object_get_int64(at(o, "a")), 1, "explicit document content");
    json_object_put(o);

    rc = load("%YAML 1.1\n---\na: 1\n", &o);
    is_int(rc, 0, "directive then document loads");
    json_object_put(o);

    fails("a: 1\n---\nb: 2\n", CN_EPARSE,
          "t.yaml:2:1: a second YAML document starts here; only one is allowed",
          "two documents");
    fails("a: 1\n...\n---\nb: 2\n", CN_EPARSE,
          "t.yaml:3:1: a second YAML document starts here; only one is allowed",
          "second document after ...");
    fails("a: 1\n...\nb: 2\n", CN_EPARSE,
          "t.yaml:3:1: YAML syntax error: did not find expected <document start>",
          "bare content after ... is a syntax error in libyaml");
    fails("a: 1\n---\n", CN_EPARSE,
          "t.yaml:2:1: a second YAML document starts here; only one is allowed",
          "empty second document");
    fails("--- 1\n--- 2\n", CN_EPARSE,
          "t.yaml:2:1: a second YAML document starts here; only one is allowed",
          "two inline documents");
}

static void test_syntax_errors(void)
{
    fails("a: [1, 2\n", CN_EPARSE,
          "t.yaml:2:1: YAML syntax error: did not find expected ',' or ']' "
          "(while parsing a flow sequence at line 1, column 4)",
          "unclosed flow sequence");
    fails("a: 1\n  b: 2\n", CN_EPARSE,
          "t.yaml:2:4: YAML syntax error: mapping values are not allowed in this context",
          "bad indentation");
    fails("a: b: c\n", CN_EPARSE,
          "t.yaml:1:5: YAML syntax error: mapping values are not allowed in this context",
          "nested plain mapping");
    fails("a: \"x\n", CN_EPARSE,
          "t.yaml:2:1: YAML syntax error: found unexpected end of stream "
          "(while scanning a quoted scalar at line 1, column 4)",
          "unterminated quote");
    fails("a:\n\tb: 1\n", CN_EPARSE,
          "t.yaml:2:1: YAML syntax error: found character that cannot start any token "
          "(while scanning for the next token at line 2, column 1)",
          "tab indentation");
    fails("- a\nb: c\n", CN_EPARSE,
          "t.yaml:2:1: YAML syntax error: did not find expected '-' indicator "
          "(while parsing a block collection at line 1, column 1)",
          "sequence then mapping");
    fails("a: 1\n]\n", CN_EPARSE,
          "t.yaml:2:1: YAML syntax error: did not find expected key "
          "(while parsing a block mapping at line 1, column 1)",
          "stray bracket");
}

static void test_hostile(void)
{
    char *buf;
    size_t i, n;
    json_object *o;
    int rc;

    /* 256 nested flow sequences are fine, 257 are not */
    buf = malloc(2 * 257 + 1);
    for (n = 0; n < 256; n++) buf[n] = '[';
    for (i = 0; i < 256; i++) buf[n++] = ']';
    buf[n] = '\0';
    rc = load(buf, &o);
    is_int(rc, 0, "256 nested sequences load");
    json_object_put(o);
    for (n = 0; n < 257; n++) buf[n] = '[';
    for (i = 0; i < 257; i++) buf[n++] = ']';
    buf[n] = '\0';
    fails(buf, CN_EPARSE, "t.yaml:1:257: nesting deeper than 256 levels", "257 nested sequences");
    free(buf);

    /* a million '[' must fail fast, not recurse or crawl */
    n = 1000000;
    buf = malloc(n + 1);
    memset(buf, '[', n);
    buf[n] = '\0';
    fails(buf, CN_EPARSE, "t.yaml:1:257: nesting deeper than 256 levels", "a million '['");
    free(buf);

    /* block mappings nested by indentation */
    {
        cn_buf b = CN_BUF_INIT;
        for (i = 0; i < 257; i++) {
            size_t k;
            for (k = 0; k < i; k++) cn_buf_puts(&b, "  ");
            cn_buf_puts(&b, "k:\n");
        }
        fails(b.data, CN_EPARSE, "t.yaml:257:513: nesting deeper than 256 levels",
              "257 nested block mappings");
        cn_buf_free(&b);
    }

    /* an alias may not push the tree past the depth limit */
    {
        cn_buf b = CN_BUF_INIT;
        cn_buf_puts(&b, "x: &a ");
        for (i = 0; i < 200; i++) cn_buf_putc(&b, '[');
        for (i = 0; i < 200; i++) cn_buf_putc(&b, ']');
        cn_buf_puts(&b, "\ny: ");
        for (i = 0; i < 60; i++) cn_buf_putc(&b, '[');
        cn_buf_puts(&b, "*a");
        for (i = 0; i < 60; i++) cn_buf_putc(&b, ']');
        cn_buf_putc(&b, '\n');
        fails(b.data, CN_EPARSE,
              "t.yaml:2:64: alias '*a' expands to nesting deeper than 256 levels",
              "alias depth bomb");
        cn_buf_reset(&b);
        /* 200 + 55 (+1 for the root mapping) still fits */
        cn_buf_puts(&b, "x: &a ");
        for (i = 0; i < 200; i++) cn_buf_putc(&b, '[');
        for (i = 0; i < 200; i++) cn_buf_putc(&b, ']');
        cn_buf_puts(&b, "\ny: ");
        for (i = 0; i < 55; i++) cn_buf_putc(&b, '[');
        cn_buf_puts(&b, "*a");
        for (i = 0; i < 55; i++) cn_buf_putc(&b, ']');
        cn_buf_putc(&b, '\n');
        rc = load(b.data, &o);
        is_int(rc, 0, "alias at exactly the depth limit loads");
        json_object_put(o);
        cn_buf_free(&b);
    }

    /* billion laughs: nine levels of nine aliases each */
    {
        cn_buf b = CN_BUF_INIT;
        const char *names = "abcdefghi";
        cn_buf_puts(&b, "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
        for (i = 1; i < 9; i++) {
            size_t k;
            cn_buf_printf(&b, "%c: &%c [", names[i], names[i]);
            for (k = 0; k < 9; k++) cn_buf_printf(&b, "%s*%c", k ? ", " : "", names[i - 1]);
            cn_buf_puts(&b, "]\n");
        }
        fails(b.data, CN_EPARSE,
              "t.yaml:7:8: document too large: more than 1000000 values (alias expansion?)",
              "billion laughs");
        cn_buf_free(&b);
    }

    /* raw NUL and other control bytes are rejected by libyaml's reader */
    fails_n("a: b\0c\n", 7, CN_EPARSE,
            "t.yaml:1:5: YAML syntax error: control characters are not allowed (#x0)", "NUL byte");
    fails_n("a: 1\n\0", 6, CN_EPARSE,
            "t.yaml:2:1: YAML syntax error: control characters are not allowed (#x0)",
            "NUL byte at line start");
    fails("a: 1\nb: \x01\n", CN_EPARSE,
          "t.yaml:2:4: YAML syntax error: control characters are not allowed (#x1)",
          "control byte");
    /* invalid UTF-8 */
    fails("a: 1\nb: \xFF\n", CN_EPARSE,
          "t.yaml:2:4: YAML syntax error: invalid leading UTF-8 octet (#xFF)",
          "invalid leading octet");
    fails("\xC3\xA9: \xC3\x28\n", CN_EPARSE,
          "t.yaml:1:5: YAML syntax error: invalid trailing UTF-8 octet (#x28)",
          "invalid trailing octet after a multibyte key");
    fails("a: \xE2\x82", CN_EPARSE,
          "t.yaml:1:4: YAML syntax error: incomplete UTF-8 octet sequence",
          "truncated UTF-8 at the end");
    fails("a: \xC0\xAF\n", CN_EPARSE,
          "t.yaml:1:4: YAML syntax error: invalid length of a UTF-8 sequence",
          "overlong UTF-8");
    fails("a: \xED\xA0\x80\n", CN_EPARSE,
          "t.yaml:1:4: YAML syntax error: invalid Unicode character (#xD800)",
          "UTF-8 encoded surrogate");
    fails("\xEF\xBB\xBF" "a: \xFF", CN_EPARSE,
          "t.yaml:1:4: YAML syntax error: invalid leading UTF-8 octet (#xFF)",
          "byte-order mark is not a column");
    {
        /* UTF-16LE with BOM: "a: 1\nb: \x01\n" */
        static const char u16[] = "\xFF\xFE" "a\0:\0 \0" "1\0\n\0" "b\0:\0 \0\x01\0\n\0";
        fails_n(u16, sizeof u16 - 1, CN_EPARSE,
                "t.yaml:2:4: YAML syntax error: control characters are not allowed (#x1)",
                "UTF-16 reader error position");
        rc = load_n(u16, sizeof u16 - 4 - 1, &o); /* cut before "\x01\0\n\0" */
        is_int(rc, 0, "UTF-16 input loads");
        ok(at(o, "a") != NULL && json_object_get_int64(at(o, "a")) == 1, "UTF-16 value");
        json_object_put(o);
    }
}

static void test_files(void)
{
    char path[] = "/tmp/cn_yaml_test_XXXXXX";
    char want[256];
    json_object *o;
    int rc, fd;
    FILE *f;

    fd = mkstemp(path);
    ok(fd >= 0, "mkstemp");
    f = fdopen(fd, "w");
    fputs("# config\nname: demo\nport: 8080\n", f);
    fclose(f);
    rc = cn_yaml_load_file(path, &o);
    is_int(rc, 0, "file loads");
    is_int(json_object_get_int64(at(o, "port")), 8080, "file value");
    is_str(where(at(o, "port")), "3:7", "file mark");
    json_object_put(o);

    f = fopen(path, "w");
    fputs("a: 1\na: 2\n", f);
    fclose(f);
    o = (json_object *)&o;
    rc = cn_yaml_load_file(path, &o);
    is_int(rc, CN_EPARSE, "file duplicate -> CN_EPARSE");
    ok(o == NULL, "out reset on file error");
    snprintf(want, sizeof want, "%s:2:1: duplicate key 'a' (first at line 1)", path);
    is_str(cn_error_last()->message, want, "file error names path:line:col");

    f = fopen(path, "wb");
    fwrite("a: 1\nb: \0\n", 1, 10, f);
    fclose(f);
    rc = cn_yaml_load_file(path, &o);
    is_int(rc, CN_EPARSE, "file with NUL -> CN_EPARSE");
    snprintf(want, sizeof want,
             "%s:2:4: YAML syntax error: control characters are not allowed (#x0)", path);
    is_str(cn_error_last()->message, want, "file NUL error position");

    f = fopen(path, "w");
    fclose(f);
    rc = cn_yaml_load_file(path, &o);
    is_int(rc, 0, "empty file loads");
    ok(json_object_is_type(o, json_type_object) && json_object_object_length(o) == 0,
       "empty file gives {}");
    json_object_put(o);

    ok(truncate(path, (off_t)5 << 20) == 0, "grow file past 4 MiB");
    rc = cn_yaml_load_file(path, &o);
    is_int(rc, CN_EINVAL, "oversized file -> CN_EINVAL");
    has_str(cn_error_last()->message, path, "oversized file error names the path");

    unlink(path);
    rc = cn_yaml_load_file(path, &o);
    is_int(rc, CN_ENOTFOUND, "missing file -> CN_ENOTFOUND");
    snprintf(want, sizeof want, "%s: cannot open", path);
    has_str(cn_error_last()->message, want, "missing file error names the path");

    rc = cn_yaml_load_file("/tmp", &o);
    is_int(rc, CN_EIO, "directory -> CN_EIO");
    is_str(cn_error_last()->message, "/tmp: not a regular file", "directory error message");

    is_int(cn_yaml_load_file(NULL, &o), CN_EINVAL, "NULL path -> CN_EINVAL");
    is_int(cn_yaml_load_file(path, NULL), CN_EINVAL, "NULL out -> CN_EINVAL");
}

int main(void)
{
    test_structure();
    test_empty();
    test_nulls_and_bools();
    test_ints();
    test_floats();
    test_strings();
    test_keys();
    test_duplicates();
    test_tags();
    test_anchors();
    test_marks();
    test_documents();
    test_syntax_errors();
    test_hostile();
    test_files();
    return tap_done();
}
