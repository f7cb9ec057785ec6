/* SPDX-License-Identifier: Apache-2.0 */
/* UTF-8 checks and scrubbing (core/util/cn_utf8.c) and the JSON text every
 * output goes through (core/plugin/cn_json_text.c). */
#include <stdlib.h>
#include <string.h>

#include "../../core/plugin/cn_host.h"
#include "../../core/util/cn_utf8.h"
#include "tap.h"

#define FFFD "\xef\xbf\xbd"

static void check_scrub(const char *in, size_t n, unsigned keep, const char *want, const char *what)
{
    char *got = cn_utf8_scrub_dup(in, n, keep);
    is_str(got, want, what);
    free(got);
}

static void test_decode(void)
{
    uint32_t cp = 0;
    size_t bad = 0;
    is_int(cn_utf8_decode("\xc3\xa9", 2, &cp, &bad), 2, "decode: a two-byte sequence");
    is_int(cp, 0xe9, "decode: its code point");
    is_int(cn_utf8_decode("\xf0\x9f\x98\x80", 4, &cp, &bad), 4, "decode: a four-byte sequence");
    is_int(cp, 0x1f600, "decode: U+1F600");
    is_int(cn_utf8_decode("\xc0\xaf", 2, &cp, &bad), 0, "decode: an overlong '/' is ill-formed");
    is_int(bad, 1, "decode: ... one byte at a time");
    is_int(cn_utf8_decode("\xe0\x80\xaf", 3, &cp, &bad), 0, "decode: a three-byte overlong");
    is_int(cn_utf8_decode("\xed\xa0\x80", 3, &cp, &bad), 0, "decode: a surrogate is ill-formed");
    is_int(cn_utf8_decode("\xf4\x90\x80\x80", 4, &cp, &bad), 0, "decode: past U+10FFFF");
    is_int(cn_utf8_decode("\xe2\x82x", 3, &cp, &bad), 0, "decode: a truncated sequence");
    is_int(bad, 2, "decode: ... its maximal subpart is two bytes");
    is_int(cn_utf8_decode("\xe2\x82", 2, &cp, &bad), 0, "decode: cut by the end of the text");
}

static void test_names(void)
{
    ok(cn_utf8_is_plain_name("pkg/caf\xc3\xa9 \xe6\x97\xa5.py"), "name: UTF-8 and spaces are plain");
    ok(!cn_utf8_is_plain_name("inj\nFiles: /etc/passwd.py"), "name: a newline is not");
    ok(!cn_utf8_is_plain_name("a\tb.py"), "name: nor a tab");
    ok(!cn_utf8_is_plain_name("a\rb.py"), "name: nor CR");
    ok(!cn_utf8_is_plain_name("clear\x1b[2J.py"), "name: nor ESC");
    ok(!cn_utf8_is_plain_name("a\x7f.py"), "name: nor DEL");
    ok(!cn_utf8_is_plain_name("csi\xc2\x9b" "2J.py"), "name: nor a C1 control");
    ok(!cn_utf8_is_plain_name("bad\xff.py"), "name: nor 0xff");
    ok(!cn_utf8_is_plain_name("over\xc0\xaf.py"), "name: nor an overlong form");
}

static void test_scrub(void)
{
    check_scrub("ok caf\xc3\xa9", 8, 0, "ok caf\xc3\xa9", "scrub: valid text unchanged");
    check_scrub("a\xff\xfe" "b", 4, 0, "a" FFFD FFFD "b", "scrub: one U+FFFD per bad byte");
    check_scrub("a\xe2\x82" "b", 4, 0, "a" FFFD "b", "scrub: one U+FFFD per truncated sequence");
    check_scrub("l1\n\tl2\x1b[2J\r", 11, CN_UTF8_KEEP_LINES, "l1\n\tl2" FFFD "[2J" FFFD,
                "scrub for a terminal: newline and tab kept, ESC and CR replaced");
    check_scrub("a\nb", 3, 0, "a" FFFD "b", "scrub: a newline replaced when not kept");
    check_scrub("a\x1b\x7f\xc2\x9b", 5, CN_UTF8_KEEP_C0, "a\x1b\x7f" FFFD,
                "scrub for the parser: C0 and DEL kept, C1 replaced");
    check_scrub("a\0b", 3, 0, "a" FFFD "b", "scrub: a NUL inside the length is replaced");
    check_scrub("", 0, 0, "", "scrub: the empty text");
}

static void test_json_text(void)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "name", json_object_new_string("bad\xff\xc0\xaf" "caf\xc3\xa9"));
    json_object_object_add(o, "ctl", json_object_new_string("\x1b[2J\x7f\xc2\x9b\n"));
    json_object_object_add(o, "k\xfe", json_object_new_string("/"));
    char *t = cn_json_text(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    is_str(t, "{\"name\":\"bad" FFFD FFFD FFFD "caf\xc3\xa9\",\"ctl\":\"\\u001b[2J\\u007f\\u009b\\n\","
              "\"k" FFFD "\":\"/\"}",
           "json: bad bytes become U+FFFD (in keys too), controls are escapes, UTF-8 kept");
    json_object *back = NULL;
    ok(t && cn_json_parse(t, "the text", &back) == 0, "json: the text parses");
    is_str(back ? json_object_get_string(json_object_object_get(back, "ctl")) : NULL,
           "\x1b[2J\x7f\xc2\x9b\n", "json: escaped controls read back unchanged");
    json_object_put(back);
    free(t);
    json_object_put(o);

    t = cn_json_text(NULL, JSON_C_TO_STRING_PLAIN);
    is_str(t, "null", "json: NULL is null");
    free(t);
}

int main(void)
{
    test_decode();
    test_names();
    test_scrub();
    test_json_text();
    return tap_done();
}
