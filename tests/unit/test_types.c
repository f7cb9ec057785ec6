/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of core/plugin/cn_types.c: hint parsing, canonical text,
 * coercion of arguments, JSON schema and dataflow compatibility. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/cn_types.h"
#include "tap.h"

/* Results are formatted into rotating static buffers so that checks can
 * compare them inline without leaking. */
static char *slot(void)
{
    static char bufs[8][2048];
    static int next = 0;
    next = (next + 1) % 8;
    bufs[next][0] = '\0';
    return bufs[next];
}

/* Canonical text of a hint, or "ERR <code>: <message>". */
static const char *canon(const char *hint)
{
    char *out = slot();
    cn_type *t = NULL;
    int rc = cn_type_parse(hint, &t);
    if (rc < 0) {
        snprintf(out, 2048, "ERR %s: %s", cn_error_code_name(rc), cn_error_last()->message);
        return out;
    }
    char *s = cn_type_to_string(t);
    snprintf(out, 2048, "%s", s ? s : "(null)");
    free(s);
    cn_type_free(t);
    return out;
}

/* Parse error message only (or "parsed" when it parsed). */
static const char *perr(const char *hint)
{
    char *out = slot();
    cn_type *t = NULL;
    if (cn_type_parse(hint, &t) == 0) {
        cn_type_free(t);
        return "parsed";
    }
    snprintf(out, 2048, "%s", cn_error_last()->message);
    return out;
}

static cn_type *must_parse(const char *hint)
{
    cn_type *t = NULL;
    if (cn_type_parse(hint, &t) < 0) {
        diag("cannot parse '%s': %s", hint, cn_error_last()->message);
        abort();
    }
    return t;
}

/* Coerces the JSON text `json` ("null" for JSON null) to `hint`.  Gives the
 * result as plain JSON, or "ERR: <message>" (and checks the code). */
static const char *coerce(const char *hint, const char *arg, const char *json)
{
    char *out = slot();
    cn_type *t = must_parse(hint);
    json_object *in = json_tokener_parse(json), *res = NULL;
    int rc;

    if (in == NULL && strcmp(json, "null") != 0) {
        diag("bad test JSON: %s", json);
        abort();
    }
    rc = cn_type_coerce(t, arg, in, &res);
    if (rc < 0) {
        snprintf(out, 2048, "ERR%s: %s", rc == CN_ETYPE ? "" : " (not CN_ETYPE)",
                 cn_error_last()->message);
        if (res != NULL) snprintf(out, 2048, "ERR: *out set on failure");
    } else {
        snprintf(out, 2048, "%s",
                 json_object_to_json_string_ext(
                     res, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    }
    json_object_put(res);
    json_object_put(in);
    cn_type_free(t);
    return out;
}

/* Type of the coerced value (to tell 5 from 5.0 from "5"). */
static const char *coerced_type(const char *hint, const char *json)
{
    cn_type *t = must_parse(hint);
    json_object *in = json_tokener_parse(json), *res = NULL;
    const char *name = "error";
    if (cn_type_coerce(t, "x", in, &res) == 0)
        name = res == NULL ? "null" : json_type_to_name(json_object_get_type(res));
    json_object_put(res);
    json_object_put(in);
    cn_type_free(t);
    return name;
}

static const char *schema(const char *hint)
{
    char *out = slot();
    cn_type *t = must_parse(hint);
    json_object *s = cn_type_json_schema(t);
    snprintf(out, 2048, "%s", s ? json_object_to_json_string_ext(s, JSON_C_TO_STRING_PLAIN) : "(null)");
    json_object_put(s);
    cn_type_free(t);
    return out;
}

/* "ok" or the why sentence. */
static const char *compat(const char *from, const char *to)
{
    char *out = slot();
    cn_type *f = must_parse(from), *t = must_parse(to);
    char *why = (char *)"unset";
    bool ok = cn_type_compatible(f, t, &why);
    if (ok) snprintf(out, 2048, "%s", why == NULL ? "ok" : "ok but why was set");
    else snprintf(out, 2048, "%s", why ? why : "(no why)");
    if (ok && why != NULL && strcmp(why, "unset") != 0) free(why);
    if (!ok) free(why);
    cn_type_free(f);
    cn_type_free(t);
    return out;
}

static void test_parse_forms(void)
{
    cn_type *t;

    is_str(canon("str"), "str", "str");
    is_str(canon("int"), "int", "int");
    is_str(canon("float"), "float", "float");
    is_str(canon("bool"), "bool", "bool");
    is_str(canon("None"), "None", "None");
    is_str(canon("NoneType"), "None", "NoneType is None");
    is_str(canon("Any"), "Any", "Any");
    is_str(canon("object"), "Any", "object is Any");
    is_str(canon(""), "Any", "empty hint is Any");
    is_str(canon("  \t\n"), "Any", "blank hint is Any");
    ok(cn_type_parse(NULL, &t) == 0 && t->kind == CN_T_ANY, "NULL hint is Any");
    cn_type_free(t);

    is_str(canon("List[int]"), "List[int]", "List[int]");
    is_str(canon("list[int]"), "List[int]", "lowercase list[int]");
    is_str(canon("list"), "List[Any]", "bare list");
    is_str(canon("List"), "List[Any]", "bare List");
    is_str(canon("Sequence[str]"), "List[str]", "Sequence[T] is a list");
    is_str(canon("Tuple[int, ...]"), "List[int]", "Tuple[T, ...]");
    is_str(canon("tuple[str, ...]"), "List[str]", "tuple[T, ...]");
    is_str(canon("tuple"), "List[Any]", "bare tuple");
    is_str(canon("Tuple[int, int]"), "List[int]", "fixed Tuple of one type");
    is_str(canon("Tuple[int, str]"), "List[Any]", "mixed fixed Tuple is List[Any]");
    is_str(canon("Set[str]"), "List[str]", "Set[T] is a list");

    is_str(canon("Dict[str, int]"), "Dict[str, int]", "Dict[str, int]");
    is_str(canon("dict[str,float]"), "Dict[str, float]", "lowercase dict, no blank");
    is_str(canon("dict"), "Dict[str, Any]", "bare dict");
    is_str(canon("Mapping[str, List[int]]"), "Dict[str, List[int]]", "Mapping[K, V]");

    is_str(canon("Optional[int]"), "Optional[int]", "Optional[int]");
    is_str(canon("Union[int, None]"), "Optional[int]", "Union[T, None]");
    is_str(canon("Union[None, str]"), "Optional[str]", "Union[None, T]");
    is_str(canon("int | None"), "Optional[int]", "T | None");
    is_str(canon("None | List[str]"), "Optional[List[str]]", "None | T");
    is_str(canon("List[int | None]"), "List[Optional[int]]", "| inside brackets");
    is_str(canon("Optional[Optional[int]]"), "Optional[int]", "Optional collapses");
    is_str(canon("Optional[Any]"), "Any", "Optional[Any] is Any");
    is_str(canon("Optional[None]"), "None", "Optional[None] is None");
    is_str(canon("Union[int, str]"), "Any", "Union of two types is Any");
    is_str(canon("int | str | None"), "Any", "A | B | None is Any");
    is_str(canon("Union[int, int]"), "int", "Union of equal members collapses");
    is_str(canon("Union[int]"), "int", "Union of one member");

    is_str(canon("typing.List[typing.Dict[str, int]]"), "List[Dict[str, int]]", "typing. prefixes");
    is_str(canon("typing.Optional[typing.Any]"), "Any", "typing.Optional[typing.Any]");
    is_str(canon("typing_extensions.Literal['a']"), "Literal['a']", "typing_extensions. prefix");

    is_str(canon("Literal['a', \"b\", 3]"), "Literal['a', 'b', '3']", "Literal mixes quotes and numbers");
    is_str(canon("Literal['a', 'a', 'b']"), "Literal['a', 'b']", "Literal drops repeats");
    is_str(canon("Literal['x', None]"), "Optional[Literal['x']]", "Literal with None");
    is_str(canon("Literal[None]"), "None", "Literal[None]");
    is_str(canon("Literal[True, False]"), "Literal['true', 'false']", "Literal booleans");
    is_str(canon("Literal[-1.5]"), "Literal['-1.5']", "Literal negative float");
    is_str(canon("Literal['it\\'s', \"q\\\"\"]"), "Literal['it\\'s', 'q\"']", "Literal escapes");
    is_str(canon("Literal['']"), "Literal['']", "Literal empty string");
    is_str(canon("Literal['a'] | Literal['b']"), "Literal['a', 'b']", "Literal union merges");
    is_str(canon("Optional[Literal['a', 'b']]"), "Optional[Literal['a', 'b']]", "Optional Literal");

    is_str(canon("QueriedNode"), "QueriedNode", "named type");
    is_str(canon("List[CodeNode]"), "List[CodeNode]", "list of named type");
    is_str(canon("models.QueriedNode"), "models.QueriedNode", "dotted named type as written");
    is_str(canon(" List [ Dict [ str ,int ] ] "), "List[Dict[str, int]]", "whitespace is free");
    is_str(canon("List[\n  Optional[Dict[str, List[float]]]\n]"),
           "List[Optional[Dict[str, List[float]]]]", "nested with newlines");

    t = must_parse("Dict[str, List[QueriedNode]]");
    ok(t->kind == CN_T_DICT && t->key->kind == CN_T_STR && t->elem->kind == CN_T_LIST &&
           t->elem->elem->kind == CN_T_NAMED && strcmp(t->elem->elem->name, "QueriedNode") == 0,
       "tree of Dict[str, List[QueriedNode]]");
    cn_type_free(t);
    t = must_parse("Literal['a', 'b']");
    ok(t->kind == CN_T_ENUM && t->values.len == 2 && strcmp(t->values.items[1], "b") == 0,
       "tree of Literal");
    cn_type_free(t);
    t = must_parse("Optional[int]");
    ok(t->kind == CN_T_OPTIONAL && t->elem->kind == CN_T_INT, "tree of Optional[int]");
    cn_type_free(t);
}

static void test_parse_errors(void)
{
    cn_type *t = (cn_type *)1;

    is_int(cn_type_parse("List[int", &t), CN_EPARSE, "unclosed bracket is CN_EPARSE");
    ok(t == NULL, "*out is NULL on error");
    is_str(cn_error_last()->message, "type hint 'List[int': expected ']' at column 9",
           "unclosed bracket message");
    is_str(perr("List[]"), "type hint 'List[]': expected a type at column 6", "empty argument");
    is_str(perr("List[int,]"), "type hint 'List[int,]': expected ']' at column 9",
           "List takes one argument");
    is_str(perr("Dict[str]"), "type hint 'Dict[str]': expected ',' at column 9", "Dict with one argument");
    is_str(perr("Dict[str,]"), "type hint 'Dict[str,]': expected a type at column 10",
           "Dict with empty value");
    is_str(perr("Dict[str, int, float]"), "type hint 'Dict[str, int, float]': expected ']' at column 14",
           "Dict with three arguments");
    is_str(perr("Union[int,,str]"), "type hint 'Union[int,,str]': expected a type at column 11",
           "empty Union member");
    is_str(perr("List[int]]"), "type hint 'List[int]]': unexpected ']' at column 10", "extra bracket");
    is_str(perr("]"), "type hint ']': expected a type at column 1", "lone closing bracket");
    is_str(perr("int str"), "type hint 'int str': unexpected 's' at column 5", "two names");
    is_str(perr("int |"), "type hint 'int |': expected a type at column 6", "dangling |");
    is_str(perr("| int"), "type hint '| int': expected a type at column 1", "leading |");
    is_str(perr("Optional"), "type hint 'Optional': expected '[' after Optional at column 9",
           "bare Optional");
    is_str(perr("Optional[int, str]"), "type hint 'Optional[int, str]': expected ']' at column 13",
           "Optional with two arguments");
    is_str(perr("Union"), "type hint 'Union': expected '[' after Union at column 6", "bare Union");
    is_str(perr("int[str]"), "type hint 'int[str]': 'int' takes no type arguments at column 4",
           "arguments on a scalar");
    is_str(perr("Callable[[int], str]"),
           "type hint 'Callable[[int], str]': unknown generic type 'Callable' at column 1",
           "unknown generic");
    is_str(perr("Tuple[..., int]"),
           "type hint 'Tuple[..., int]': '...' is only allowed in Tuple[T, ...] at column 7",
           "ellipsis first");
    is_str(perr("List[int, ...]"), "type hint 'List[int, ...]': expected ']' at column 9",
           "ellipsis in List");
    is_str(perr("Tuple[int, ..., str]"), "type hint 'Tuple[int, ..., str]': expected ']' at column 15",
           "ellipsis not last");
    is_str(perr("Literal"), "type hint 'Literal': expected '[' after Literal at column 8", "bare Literal");
    is_str(perr("Literal[]"), "type hint 'Literal[]': expected a literal value at column 9",
           "empty Literal");
    is_str(perr("Literal['a"), "type hint 'Literal['a': unterminated string at column 9",
           "unterminated Literal string");
    is_str(perr("Literal[foo]"), "type hint 'Literal[foo]': expected a literal value at column 9",
           "bare word in Literal");
    is_str(perr("Literal['a' 'b']"), "type hint 'Literal['a' 'b']': expected ',' or ']' at column 13",
           "missing comma in Literal");
    is_str(perr("List[int)"), "type hint 'List[int)': expected ']' at column 9", "wrong bracket");
    is_str(perr("\x01int"), "type hint '?int': expected a type at column 1", "control byte shown as ?");
    is_str(perr("int\xff"), "type hint 'int\xff': unexpected byte 0xff at column 4", "high byte");
    is_str(perr("List[\xc3\xa9]"), "type hint 'List[\xc3\xa9]': expected a type at column 6",
           "UTF-8 in a hint");
    is_str(perr("typing."), "type hint 'typing.': unexpected '.' at column 7", "typing. alone");
    is_int(cn_type_parse("int", NULL), CN_EINVAL, "NULL out is CN_EINVAL");
}


static char *repeat(const char *unit, size_t times, const char *tail_unit, const char *middle)
{
    cn_buf b = CN_BUF_INIT;
    for (size_t i = 0; i < times; i++) cn_buf_puts(&b, unit);
    cn_buf_puts(&b, middle);
    for (size_t i = 0; tail_unit != NULL && i < times; i++) cn_buf_puts(&b, tail_unit);
    return cn_buf_steal(&b);
}

/* Hostile hints: deep nesting, long input, many members. */
static void test_parse_hostile(void)
{
    char *s;
    cn_type *t = NULL;

    s = repeat("[", 10000, NULL, "");
    is_str(perr(s), "type hint '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[...': "
                    "expected a type at column 1",
           "10,000 '[' fail, hint shown cut");
    free(s);

    s = repeat("List[", 32, "]", "int");
    ok(strncmp(canon(s), "List[List[", 10) == 0, "32 levels parse");
    free(s);
    s = repeat("List[", 33, "]", "int");
    has_str(perr(s), "': nested deeper than 32 levels at column 165", "33 levels refused");
    free(s);
    s = repeat("List[", 3000, NULL, "");
    has_str(perr(s), "nested deeper than 32 levels at column 165", "3,000 unclosed levels refused");
    free(s);
    s = repeat("Optional[Dict[str, ", 20, "]]", "int");
    has_str(perr(s), "nested deeper than 32 levels", "deep Optional/Dict mix refused");
    free(s);
    s = repeat("Literal[", 40, "]", "'a'");
    is_str(perr(s), "type hint 'Literal[Literal[Literal[Literal[Literal[Literal[Literal[Literal[Literal[Liter...': "
                    "expected a literal value at column 9",
           "nested Literal refused");
    free(s);

    s = repeat("a", 20000, NULL, "");
    has_str(perr(s), "': 20000 bytes long, over the limit of 16384", "over-long hint refused");
    free(s);
    s = repeat("a", 16000, NULL, "");
    ok(cn_type_parse(s, &t) == 0 && t->kind == CN_T_NAMED && strlen(t->name) == 16000,
       "long name within the limit");
    cn_type_free(t);
    free(s);
    s = repeat("int | ", 2000, NULL, "int");
    is_str(canon(s), "int", "2,000 equal union members");
    free(s);
    s = repeat("str | ", 1000, NULL, "int | None");
    is_str(canon(s), "Any", "1,000 mixed union members");
    free(s);
    {
        cn_buf b = CN_BUF_INIT;
        cn_buf_puts(&b, "Literal[");
        for (int i = 0; i < 1500; i++) cn_buf_printf(&b, "%s'v%d'", i ? ", " : "", i % 1000);
        cn_buf_puts(&b, "]");
        ok(cn_type_parse(b.data, &t) == 0 && t->values.len == 1000, "Literal with 1,500 values, 1,000 distinct");
        cn_type_free(t);
        cn_buf_free(&b);
    }
}

/* Random hints from hint-like tokens and random bytes: parsing never
 * crashes, and whatever parses round-trips through its canonical text,
 * copies, has a schema, fits itself and coerces without crashing. */
static void test_parse_fuzz(void)
{
    static const char *tokens[] = {
        "List", "Dict", "Optional", "Union", "Literal", "Tuple", "tuple", "typing.", "[", "]", "[",
        "]", ",", ", ", " ", "|", "...", "'a'", "\"b\"", "3", "-2.5", "None", "True", "int", "str",
        "float", "bool", "Any", "QueriedNode", "'x\\'y'", "Mapping", "Sequence", "dict", "list",
        ".", "'", "\"", "\\",
    };
    static const char *values[] = {
        "null", "5", "5.5", "\"x\"", "\"[1, 2]\"", "[1, \"2\", null]", "{\"a\": 1, \"b\": [\"x\"]}",
        "\"{\\\"a\\\": 1}\"", "true", "\"true\"",
    };
    const size_t ntok = sizeof tokens / sizeof tokens[0];
    json_object *vals[sizeof values / sizeof values[0]];
    uint64_t rng = 0x9E3779B97F4A7C15ull;
    int parsed = 0, roundtrip_bad = 0, copy_bad = 0, schema_bad = 0, self_bad = 0, coerce_bad = 0;
    int idem_bad = 0;

    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) vals[i] = json_tokener_parse(values[i]);
    for (int iter = 0; iter < 30000; iter++) {
        char hint[512];
        size_t len = 0;
        int parts;
        cn_type *t = NULL;

        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        parts = (int)(rng % 24);
        for (int k = 0; k < parts; k++) {
            rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
            if (rng % 10 == 0) {
                hint[len++] = (char)(1 + (rng >> 8) % 255); /* any byte but NUL */
            } else {
                const char *tok = tokens[(rng >> 8) % ntok];
                size_t n = strlen(tok);
                memcpy(hint + len, tok, n);
                len += n;
            }
        }
        hint[len] = '\0';
        if (cn_type_parse(hint, &t) < 0) {
            if (t != NULL || strncmp(cn_error_last()->message, "type hint '", 11) != 0) roundtrip_bad++;
            continue;
        }
        parsed++;
        {
            char *a = cn_type_to_string(t), *b = NULL, *c = NULL;
            cn_type *t2 = NULL, *cp = cn_type_copy(t);
            json_object *sch = cn_type_json_schema(t);
            if (cn_type_parse(a, &t2) < 0) {
                roundtrip_bad++;
                diag("'%s' -> '%s' does not parse: %s", hint, a, cn_error_last()->message);
            } else {
                b = cn_type_to_string(t2);
                if (strcmp(a, b) != 0) {
                    roundtrip_bad++;
                    diag("'%s' -> '%s' -> '%s'", hint, a, b);
                }
            }
            c = cn_type_to_string(cp);
            if (c == NULL || strcmp(a, c) != 0) copy_bad++;
            if (sch == NULL) schema_bad++;
            if (!cn_type_compatible(t, t, NULL)) self_bad++;
            for (size_t v = 0; v < sizeof values / sizeof values[0]; v++) {
                json_object *out = NULL;
                int rc = cn_type_coerce(t, "f", vals[v], &out);
                if (rc != 0 && rc != CN_ETYPE) coerce_bad++;
                if (rc == 0) {
                    /* Coercing a coerced value again changes nothing. */
                    json_object *again = NULL;
                    if (cn_type_coerce(t, "f", out, &again) != 0 ||
                        !json_object_equal(again, out)) {
                        idem_bad++;
                        diag("'%s' with %s: second coercion differs", a, values[v]);
                    }
                    json_object_put(again);
                }
                json_object_put(out);
            }
            free(a);
            free(b);
            free(c);
            cn_type_free(t2);
            cn_type_free(cp);
            json_object_put(sch);
        }
        cn_type_free(t);
    }
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) json_object_put(vals[i]);
    ok(parsed > 500, "fuzz produced parseable hints");
    diag("fuzz: %d of 30000 random hints parsed", parsed);
    is_int(roundtrip_bad, 0, "fuzz: canonical text round-trips, errors name the hint");
    is_int(copy_bad, 0, "fuzz: copies print the same");
    is_int(schema_bad, 0, "fuzz: every type has a schema");
    is_int(self_bad, 0, "fuzz: every type fits itself");
    is_int(coerce_bad, 0, "fuzz: coercion gives 0 or CN_ETYPE");
    is_int(idem_bad, 0, "fuzz: coercion is idempotent");
}

static void test_coerce_scalars(void)
{
    /* int */
    is_str(coerce("int", "top_k", "5"), "5", "int from int");
    is_str(coerce("int", "top_k", "\"5\""), "5", "int from \"5\"");
    is_str(coerced_type("int", "\"5\""), "int", "int from \"5\" is a JSON int");
    is_str(coerce("int", "top_k", "5.0"), "5", "int from 5.0");
    is_str(coerced_type("int", "5.0"), "int", "int from 5.0 is a JSON int");
    is_str(coerce("int", "top_k", "\" 7 \""), "7", "int from \" 7 \" (trimmed)");
    is_str(coerce("int", "top_k", "\"-3\""), "-3", "int from \"-3\"");
    is_str(coerce("int", "top_k", "\"5.0\""), "5", "int from \"5.0\"");
    is_str(coerce("int", "top_k", "\"1e3\""), "1000", "int from \"1e3\"");
    is_str(coerce("int", "top_k", "-0.0"), "0", "int from -0.0");
    is_str(coerce("int", "top_k", "\"five\""), "ERR: argument 'top_k': expected int, got \"five\"",
           "int from \"five\"");
    is_str(coerce("int", "top_k", "5.5"), "ERR: argument 'top_k': expected int, got 5.5", "int from 5.5");
    is_str(coerce("int", "top_k", "\"5.5\""), "ERR: argument 'top_k': expected int, got \"5.5\"",
           "int from \"5.5\"");
    is_str(coerce("int", "top_k", "true"), "ERR: argument 'top_k': expected int, got true", "int from bool");
    is_str(coerce("int", "top_k", "null"), "ERR: argument 'top_k': expected int, got null", "int from null");
    is_str(coerce("int", "top_k", "\"\""), "ERR: argument 'top_k': expected int, got \"\"", "int from \"\"");
    is_str(coerce("int", "top_k", "\"0x10\""), "ERR: argument 'top_k': expected int, got \"0x10\"",
           "int from hex text");
    is_str(coerce("int", "top_k", "\"inf\""), "ERR: argument 'top_k': expected int, got \"inf\"",
           "int from \"inf\"");
    is_str(coerce("int", "top_k", "\"99999999999999999999\""),
           "ERR: argument 'top_k': expected int, got \"99999999999999999999\"", "int out of range");
    is_str(coerce("int", "top_k", "1e300"), "ERR: argument 'top_k': expected int, got 1e300",
           "int from a huge float");
    is_str(coerce("int", "top_k", "[1]"), "ERR: argument 'top_k': expected int, got [1]", "int from a list");
    is_str(coerce("int", "top_k", "{\"a\":1}"), "ERR: argument 'top_k': expected int, got {\"a\":1}",
           "int from an object");
    is_str(coerce("int", NULL, "\"x\""), "ERR: value: expected int, got \"x\"", "no argument name");
    is_str(coerce("int", "it's", "\"x\""), "ERR: argument 'it\\'s': expected int, got \"x\"",
           "quote in the argument name");

    /* float */
    is_str(coerce("float", "t", "2"), "2.0", "float from int");
    is_str(coerced_type("float", "2"), "double", "float from int is a JSON number");
    is_str(coerce("float", "t", "2.5"), "2.5", "float from float");
    is_str(coerce("float", "t", "\"2.5\""), "2.5", "float from \"2.5\"");
    is_str(coerce("float", "t", "\" -3 \""), "-3.0", "float from \" -3 \"");
    is_str(coerce("float", "t", "\".5e1\""), "5.0", "float from \".5e1\"");
    is_str(coerce("float", "t", "\"abc\""), "ERR: argument 't': expected float, got \"abc\"", "float from text");
    is_str(coerce("float", "t", "\"nan\""), "ERR: argument 't': expected float, got \"nan\"", "float from \"nan\"");
    is_str(coerce("float", "t", "\"1e999\""), "ERR: argument 't': expected float, got \"1e999\"",
           "float overflow");
    is_str(coerce("float", "t", "false"), "ERR: argument 't': expected float, got false", "float from bool");

    /* bool */
    is_str(coerce("bool", "b", "true"), "true", "bool from bool");
    is_str(coerce("bool", "b", "\"true\""), "true", "bool from \"true\"");
    is_str(coerce("bool", "b", "\"FALSE\""), "false", "bool from \"FALSE\"");
    is_str(coerce("bool", "b", "\"Yes\""), "true", "bool from \"Yes\"");
    is_str(coerce("bool", "b", "\"no\""), "false", "bool from \"no\"");
    is_str(coerce("bool", "b", "\"1\""), "true", "bool from \"1\"");
    is_str(coerce("bool", "b", "\"0\""), "false", "bool from \"0\"");
    is_str(coerce("bool", "b", "\" True \""), "true", "bool from padded text");
    is_str(coerce("bool", "b", "1"), "true", "bool from 1");
    is_str(coerce("bool", "b", "0"), "false", "bool from 0");
    is_str(coerce("bool", "b", "2"), "ERR: argument 'b': expected bool, got 2", "bool from 2");
    is_str(coerce("bool", "b", "-1"), "ERR: argument 'b': expected bool, got -1", "bool from -1");
    is_str(coerce("bool", "b", "1.0"), "ERR: argument 'b': expected bool, got 1.0", "bool from 1.0");
    is_str(coerce("bool", "b", "\"maybe\""), "ERR: argument 'b': expected bool, got \"maybe\"",
           "bool from \"maybe\"");
    is_str(coerce("bool", "b", "\"yess\""), "ERR: argument 'b': expected bool, got \"yess\"",
           "bool from \"yess\"");

    /* str */
    is_str(coerce("str", "q", "\"x\""), "\"x\"", "str from str");
    is_str(coerce("str", "q", "5"), "\"5\"", "str from 5");
    is_str(coerce("str", "q", "-12"), "\"-12\"", "str from -12");
    is_str(coerce("str", "q", "2.5"), "\"2.5\"", "str from 2.5");
    is_str(coerce("str", "q", "5.0"), "\"5.0\"", "str from 5.0");
    is_str(coerce("str", "q", "0.1"), "\"0.1\"", "str from 0.1 (shortest form)");
    is_str(coerce("str", "q", "1e20"), "\"1e+20\"", "str from 1e20");
    is_str(coerce("str", "q", "true"), "\"true\"", "str from true");
    is_str(coerce("str", "q", "false"), "\"false\"", "str from false");
    is_str(coerce("str", "q", "18446744073709551615"), "\"18446744073709551615\"", "str from uint64");
    is_str(coerce("str", "q", "{\"a\":1}"), "ERR: argument 'q': expected str, got {\"a\":1}",
           "str from an object");
    is_str(coerce("str", "q", "[1, 2]"), "ERR: argument 'q': expected str, got [1,2]", "str from a list");
    is_str(coerce("str", "q", "null"), "ERR: argument 'q': expected str, got null", "str from null");

    /* value shown cut to about 80 characters */
    {
        char json[300], want[200];
        memset(json, 'a', sizeof json);
        json[0] = '"';
        json[201] = '"';
        json[202] = '\0';
        snprintf(want, sizeof want, "ERR: argument 'n': expected int, got \"%.*s...", 76,
                 json + 1);
        is_str(coerce("int", "n", json), want, "long value cut to 80 characters");
    }
}

static void test_coerce_null_any_named(void)
{
    cn_type *t = must_parse("Any");
    json_object *in = json_tokener_parse("{\"a\": [1]}"), *out = (json_object *)1;

    is_int(cn_type_coerce(t, "x", in, &out), 0, "Any takes an object");
    ok(out == in, "Any hands back the input itself");
    json_object_put(out);
    out = (json_object *)1;
    is_int(cn_type_coerce(t, "x", NULL, &out), 0, "Any takes null");
    ok(out == NULL, "null stays NULL");
    cn_type_free(t);
    t = must_parse("int");
    is_int(cn_type_coerce(t, "x", in, &out), CN_ETYPE, "mismatch is CN_ETYPE");
    ok(out == NULL, "*out is NULL on failure");
    is_int(cn_type_coerce(t, "x", in, NULL), CN_EINVAL, "NULL out is CN_EINVAL");
    cn_type_free(t);
    json_object_put(in);

    is_str(coerce("Optional[int]", "k", "null"), "null", "Optional takes null");
    is_str(coerce("Optional[int]", "k", "\"5\""), "5", "Optional coerces its inner type");
    is_str(coerce("Optional[int]", "k", "\"x\""), "ERR: argument 'k': expected int, got \"x\"",
           "Optional names its inner type");
    is_str(coerce("None", "k", "null"), "null", "None takes null");
    is_str(coerce("None", "k", "5"), "ERR: argument 'k': expected None, got 5", "None refuses 5");
    is_str(coerce("Any", "k", "null"), "null", "Any takes null");
    is_str(coerce("QueriedNode", "node", "{\"id\": 1}"), "{\"id\":1}", "named type takes an object");
    is_str(coerce("QueriedNode", "node", "null"), "ERR: argument 'node': expected QueriedNode, got null",
           "named type refuses null");
    is_str(coerce("List[int]", "paths", "null"), "ERR: argument 'paths': expected List[int], got null",
           "list refuses null");
    is_str(coerce("Optional[List[int]]", "paths", "null"), "null", "Optional list takes null");
}

static void test_coerce_containers(void)
{
    cn_type *t;
    json_object *in, *out;

    is_str(coerce("List[int]", "paths", "[1, \"2\", 3.0]"), "[1,2,3]", "list elements coerced");
    is_str(coerce("List[int]", "paths", "[1, 2, \"x\"]"), "ERR: argument 'paths'[2]: expected int, got \"x\"",
           "list error names the index");
    is_str(coerce("List[str]", "paths", "\"a.py\""), "[\"a.py\"]", "scalar string becomes a list");
    is_str(coerce("List[int]", "paths", "5"), "[5]", "scalar int becomes a list");
    is_str(coerce("List[int]", "paths", "\"5\""), "[5]", "scalar coerced then wrapped");
    is_str(coerce("List[bool]", "f", "true"), "[true]", "scalar bool becomes a list");
    is_str(coerce("List[int]", "paths", "\"x\""), "ERR: argument 'paths': expected List[int], got \"x\"",
           "refused scalar names the list type");
    is_str(coerce("List[int]", "paths", "\"[1, 2]\""), "[1,2]", "JSON array in a string is parsed");
    is_str(coerce("List[str]", "paths", "\" [1, \\\"b\\\"] \""), "[\"1\",\"b\"]",
           "JSON array in a padded string is parsed, elements coerced");
    is_str(coerce("List[int]", "paths", "\"[1, \\\"x\\\"]\""),
           "ERR: argument 'paths'[1]: expected int, got \"x\"", "parsed array errors name the index");
    is_str(coerce("List[str]", "paths", "\"[draft] notes\""), "[\"[draft] notes\"]",
           "text that is not a JSON array stays one string");
    is_str(coerce("List[str]", "paths", "\"[1, 2] tail\""), "[\"[1, 2] tail\"]",
           "JSON array followed by text stays one string");
    is_str(coerce("List[str]", "paths", "{\"a\": 1}"),
           "ERR: argument 'paths': expected List[str], got {\"a\":1}", "object is not a list");
    is_str(coerce("List[List[int]]", "m", "[[1], [2, \"x\"]]"),
           "ERR: argument 'm'[1][1]: expected int, got \"x\"", "nested indexes");
    is_str(coerce("List[Optional[int]]", "m", "[1, null, \"3\"]"), "[1,null,3]", "Optional elements");
    is_str(coerce("List[int]", "m", "[1, null]"), "ERR: argument 'm'[1]: expected int, got null",
           "null element refused");
    is_str(coerce("List[int]", "m", "[]"), "[]", "empty list");

    is_str(coerce("Dict[str, float]", "weights", "{\"bm25\": 1, \"vec\": \"0.5\"}"),
           "{\"bm25\":1.0,\"vec\":0.5}", "dict values coerced");
    is_str(coerce("Dict[str, float]", "weights", "{\"bm25\": \"x\"}"),
           "ERR: argument 'weights'['bm25']: expected float, got \"x\"", "dict error names the key");
    is_str(coerce("Dict[str, float]", "weights", "\"{\\\"a\\\": 1}\""), "{\"a\":1.0}",
           "JSON object in a string is parsed");
    is_str(coerce("Dict[str, float]", "weights", "\"{oops\""),
           "ERR: argument 'weights': expected Dict[str, float], got \"{oops\"", "bad JSON object text");
    is_str(coerce("Dict[str, float]", "weights", "[1]"),
           "ERR: argument 'weights': expected Dict[str, float], got [1]", "list is not a dict");
    is_str(coerce("Dict[str, float]", "weights", "5"),
           "ERR: argument 'weights': expected Dict[str, float], got 5", "scalar is not a dict");
    is_str(coerce("Dict[str, List[int]]", "d", "{\"a\": [1, \"b\"]}"),
           "ERR: argument 'd'['a'][1]: expected int, got \"b\"", "dict then list path");
    is_str(coerce("Dict[int, str]", "d", "{\"1\": 2}"), "{\"1\":\"2\"}", "int keys checked, kept");
    is_str(coerce("Dict[int, str]", "d", "{\"x\": \"a\"}"), "ERR: argument 'd': key \"x\" is not int",
           "bad int key");
    is_str(coerce("Dict[Literal['a'], int]", "d", "{\"b\": 1}"),
           "ERR: argument 'd': key \"b\" is not one of 'a'", "bad enum key");
    is_str(coerce("dict", "d", "{\"a\": null}"), "{\"a\":null}", "bare dict takes anything");

    /* Unchanged containers come back as the same object. */
    t = must_parse("List[int]");
    in = json_tokener_parse("[1, 2]");
    ok(cn_type_coerce(t, "x", in, &out) == 0 && out == in, "unchanged list is the input itself");
    json_object_put(out);
    json_object_put(in);
    in = json_tokener_parse("[1, \"2\"]");
    ok(cn_type_coerce(t, "x", in, &out) == 0 && out != in, "changed list is a new array");
    is_str(json_object_to_json_string_ext(in, JSON_C_TO_STRING_PLAIN), "[1,\"2\"]", "input left as it was");
    json_object_put(out);
    json_object_put(in);
    cn_type_free(t);
}

static void test_coerce_enum(void)
{
    cn_strv v = CN_STRV_INIT;
    cn_type *t = NULL;
    json_object *in, *out = NULL;

    is_str(coerce("Literal['fast', 'slow']", "mode", "\"fast\""), "\"fast\"", "enum value accepted");
    is_str(coerce("Literal['fast', 'slow']", "mode", "\"medium\""),
           "ERR: argument 'mode': expected one of 'fast', 'slow', got \"medium\"", "enum lists its values");
    is_str(coerce("Literal['fast', 'slow']", "mode", "\"FAST\""),
           "ERR: argument 'mode': expected one of 'fast', 'slow', got \"FAST\"", "enum is case-sensitive");
    is_str(coerce("Literal[1, 2]", "n", "1"), "\"1\"", "number coerced to text for an enum");
    is_str(coerce("Literal[True]", "n", "true"), "\"true\"", "bool coerced to text for an enum");
    is_str(coerce("Literal['a']", "n", "[\"a\"]"), "ERR: argument 'n': expected one of 'a', got [\"a\"]",
           "list is not an enum value");
    is_str(coerce("Literal['a']", "n", "null"), "ERR: argument 'n': expected one of 'a', got null",
           "null is not an enum value");
    is_str(coerce("Optional[Literal['a']]", "n", "null"), "null", "Optional enum takes null");
    is_str(coerce("List[Literal['a', 'b']]", "n", "[\"a\", \"c\"]"),
           "ERR: argument 'n'[1]: expected one of 'a', 'b', got \"c\"", "enum inside a list");

    cn_strv_push(&v, "x");
    cn_strv_push(&v, "it's");
    cn_strv_push(&v, "x");
    is_int(cn_type_new_enum(&v, &t), 0, "cn_type_new_enum");
    {
        char *s = cn_type_to_string(t);
        is_str(s, "Literal['x', 'it\\'s']", "new enum text, repeats dropped");
        free(s);
    }
    in = json_object_new_string("it's");
    ok(cn_type_coerce(t, "e", in, &out) == 0 && out == in, "new enum coerces");
    json_object_put(out);
    json_object_put(in);
    cn_type_free(t);
    cn_strv_free(&v);
    t = (cn_type *)1;
    is_int(cn_type_new_enum(&v, &t), CN_EINVAL, "empty enum refused");
    ok(t == NULL, "*out NULL for an empty enum");
    is_int(cn_type_new_enum(NULL, &t), CN_EINVAL, "NULL values refused");
}

static void test_schema(void)
{
    is_str(schema("str"), "{\"type\":\"string\"}", "schema str");
    is_str(schema("int"), "{\"type\":\"integer\"}", "schema int");
    is_str(schema("float"), "{\"type\":\"number\"}", "schema float");
    is_str(schema("bool"), "{\"type\":\"boolean\"}", "schema bool");
    is_str(schema("None"), "{\"type\":\"null\"}", "schema None");
    is_str(schema("Any"), "{}", "schema Any");
    is_str(schema("List[int]"), "{\"type\":\"array\",\"items\":{\"type\":\"integer\"}}", "schema List[int]");
    is_str(schema("list"), "{\"type\":\"array\",\"items\":{}}", "schema bare list");
    is_str(schema("Dict[str, List[str]]"),
           "{\"type\":\"object\",\"additionalProperties\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}}",
           "schema Dict[str, List[str]]");
    is_str(schema("dict"), "{\"type\":\"object\",\"additionalProperties\":{}}", "schema bare dict");
    is_str(schema("Optional[int]"), "{\"type\":[\"integer\",\"null\"]}", "schema Optional[int] is int's or null");
    is_str(schema("Optional[Literal['a', 'b']]"), "{\"type\":[\"string\",\"null\"],\"enum\":[\"a\",\"b\",null]}",
           "schema Optional[Literal]: null in the enum too");
    is_str(schema("Literal['a', 'b']"), "{\"type\":\"string\",\"enum\":[\"a\",\"b\"]}", "schema Literal");
    is_str(schema("QueriedNode"), "{\"description\":\"QueriedNode\"}", "schema named");
    is_str(schema("List[Optional[QueriedNode]]"),
           "{\"type\":\"array\",\"items\":{\"description\":\"QueriedNode\"}}", "schema nested named");
    {
        json_object *s = cn_type_json_schema(NULL);
        is_str(json_object_to_json_string_ext(s, JSON_C_TO_STRING_PLAIN), "{}", "schema of NULL is {}");
        json_object_put(s);
    }
}

static void test_compatible(void)
{
    cn_type *a = must_parse("List[QueriedNode]"), *b = must_parse("List[str]");

    is_str(compat("List[QueriedNode]", "List[QueriedNode]"), "ok", "same named list fits");
    is_str(compat("List[QueriedNode]", "List[str]"),
           "List[QueriedNode] does not fit List[str]: element QueriedNode is not str", "named into str list");
    ok(!cn_type_compatible(a, b, NULL), "why may be NULL");
    cn_type_free(a);
    cn_type_free(b);
    is_str(compat("QueriedNode", "CodeNode"), "QueriedNode does not fit CodeNode", "named types by name");
    is_str(compat("int", "float"), "ok", "int widens to float");
    is_str(compat("float", "int"), "float does not fit int", "float does not narrow");
    is_str(compat("List[int]", "List[float]"), "ok", "int list widens");
    is_str(compat("int", "str"), "int does not fit str", "int is not str");
    is_str(compat("bool", "int"), "bool does not fit int", "bool is not int");
    is_str(compat("int", "Optional[int]"), "ok", "T fits Optional[T]");
    is_str(compat("None", "Optional[int]"), "ok", "None fits Optional[T]");
    is_str(compat("None", "int"), "None does not fit int", "None does not fit int");
    is_str(compat("Optional[int]", "Optional[float]"), "ok", "Optional widens");
    is_str(compat("Optional[int]", "int"), "Optional[int] does not fit int: it may be None",
           "Optional does not fit its inner type");
    is_str(compat("List[Optional[int]]", "List[int]"),
           "List[Optional[int]] does not fit List[int]: element Optional[int] may be None",
           "Optional element named");
    is_str(compat("Optional[str]", "Optional[int]"),
           "Optional[str] does not fit Optional[int]", "Optional inner mismatch");
    is_str(compat("Any", "int"), "ok", "Any fits int");
    is_str(compat("int", "Any"), "ok", "int fits Any");
    is_str(compat("Optional[int]", "Any"), "ok", "Optional fits Any");
    is_str(compat("List[Any]", "List[QueriedNode]"), "ok", "Any element fits");
    is_str(compat("List[int]", "Dict[str, int]"), "List[int] does not fit Dict[str, int]", "list is not dict");
    is_str(compat("Dict[str, int]", "Dict[str, float]"), "ok", "dict values widen");
    is_str(compat("Dict[str, str]", "Dict[str, int]"),
           "Dict[str, str] does not fit Dict[str, int]: value str is not int", "dict value mismatch");
    is_str(compat("Dict[int, str]", "Dict[str, str]"),
           "Dict[int, str] does not fit Dict[str, str]: key int is not str", "dict key mismatch");
    is_str(compat("List[List[QueriedNode]]", "List[List[CodeNode]]"),
           "List[List[QueriedNode]] does not fit List[List[CodeNode]]: element QueriedNode is not CodeNode",
           "innermost mismatch named");
    is_str(compat("Literal['a', 'b']", "str"), "ok", "enum fits str");
    is_str(compat("str", "Literal['a']"), "str does not fit Literal['a']", "str does not fit enum");
    is_str(compat("Literal['a']", "Literal['a', 'b']"), "ok", "enum subset fits");
    is_str(compat("Literal['a', 'c']", "Literal['a', 'b']"),
           "Literal['a', 'c'] does not fit Literal['a', 'b']: it allows 'c'", "enum superset does not fit");
    is_str(compat("List[Literal['a', 'c']]", "List[Literal['a']]"),
           "List[Literal['a', 'c']] does not fit List[Literal['a']]: element Literal['a', 'c'] allows 'c'",
           "enum element superset");
    is_str(compat("Literal['1']", "int"), "Literal['1'] does not fit int", "enum does not fit int");
    ok(cn_type_compatible(NULL, NULL, NULL), "NULL types read as Any");
}

static void test_copy_free_text(void)
{
    cn_type *t = must_parse("Dict[str, List[Optional[Literal['a', 'b']]]]"), *c = cn_type_copy(t);
    char *a = cn_type_to_string(t), *b = cn_type_to_string(c);

    ok(c != NULL && c != t && c->elem != t->elem, "copy is deep");
    is_str(b, a, "copy prints the same");
    cn_type_free(t);
    ok(c->elem->elem->elem->values.len == 2, "copy survives freeing the original");
    cn_type_free(c);
    free(a);
    free(b);
    cn_type_free(NULL);
    ok(cn_type_copy(NULL) == NULL, "copy of NULL is NULL");
    a = cn_type_to_string(NULL);
    is_str(a, "Any", "text of NULL is Any");
    free(a);
    is_str(canon("Literal['a\\\\b', 'new\\nline']"), "Literal['a\\\\b', 'new\\nline']",
           "escapes survive canonical text");
}

int main(void)
{
    test_parse_forms();
    test_parse_errors();
    test_parse_hostile();
    test_parse_fuzz();
    test_coerce_scalars();
    test_coerce_null_any_named();
    test_coerce_containers();
    test_coerce_enum();
    test_schema();
    test_compatible();
    test_copy_free_text();
    return tap_done();
}
