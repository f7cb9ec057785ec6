/* SPDX-License-Identifier: Apache-2.0 */
/* The localization contract: golden model answers under
 * tests/fixtures/contract/ and targeted checks of each rule. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/agent/cn_contract.h"
#include "tap.h"

/* The golden form: the canonical rendering plus the presence flags. */
static char *golden(const char *answer)
{
    cn_contract c;
    if (cn_contract_parse(answer, &c) != 0) return NULL;
    char *r = cn_contract_render(&c);
    cn_buf b = CN_BUF_INIT;
    cn_buf_printf(&b, "%s\npresent: %s\nhas_files: %s\nhas_symbols: %s\nhas_locations: %s\n", r,
                  cn_contract_present(answer) ? "true" : "false", c.has_files ? "true" : "false",
                  c.has_symbols ? "true" : "false", c.has_locations ? "true" : "false");
    free(r);
    cn_contract_free(&c);
    return cn_buf_steal(&b);
}

/* Parses and renders in one step (NULL on failure). */
static char *rendered(const char *answer)
{
    cn_contract c;
    if (cn_contract_parse(answer, &c) != 0) return NULL;
    char *r = cn_contract_render(&c);
    cn_contract_free(&c);
    return r;
}

static void check_render(const char *answer, const char *want, const char *what)
{
    char *got = rendered(answer);
    is_str(got, want, what);
    free(got);
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_fixtures(void)
{
    const char *src = getenv("CN_SRCDIR");
    char *dir = cn_path_join(src ? src : ".", "tests/fixtures/contract");
    DIR *d = opendir(dir);
    ok(d != NULL, "the golden fixture directory opens");
    if (d == NULL) {
        diag("cannot open %s", dir);
        free(dir);
        return;
    }
    cn_strv names = CN_STRV_INIT;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (cn_str_has_suffix(e->d_name, ".txt")) cn_strv_push(&names, e->d_name);
    closedir(d);
    if (names.len) qsort(names.items, names.len, sizeof *names.items, cmp_names);
    ok(names.len >= 25, "at least 25 golden model answers");
    for (size_t i = 0; i < names.len; i++) {
        char *in_path = cn_path_join(dir, names.items[i]);
        char *base = cn_strndup(in_path, strlen(in_path) - 4);
        cn_buf ep = CN_BUF_INIT;
        cn_buf_printf(&ep, "%s.expected", base);
        char *input = NULL, *want = NULL;
        size_t len;
        int rc1 = cn_file_read(in_path, 1 << 20, &input, &len);
        int rc2 = cn_file_read(ep.data, 1 << 20, &want, &len);
        char what[512];
        snprintf(what, sizeof what, "golden %s", names.items[i]);
        if (rc1 < 0 || rc2 < 0) {
            ok(0, what);
            diag("%s", cn_error_last()->message);
        } else {
            char *got = golden(input);
            is_str(got, want, what);
            /* the canonical rendering parses back to itself */
            char *r1 = rendered(input), *r2 = r1 ? rendered(r1) : NULL;
            snprintf(what, sizeof what, "golden %s renders a fixed point", names.items[i]);
            is_str(r2, r1, what);
            free(r1);
            free(r2);
            free(got);
        }
        free(input);
        free(want);
        cn_buf_free(&ep);
        free(base);
        free(in_path);
    }
    cn_strv_free(&names);
    free(dir);
}

static void test_presence(void)
{
    ok(cn_contract_present("Files: a.py\nSymbols: a.py:f\nLocations: a.py:1-2"),
       "present: the three plain labels");
    ok(cn_contract_present("**Files:** a.py\n### Symbols\n- a.py:f\n- Locations = a.py"),
       "present: decorated labels");
    ok(!cn_contract_present("Files: a.py\nSymbols: a.py:f\n"), "absent: Locations missing");
    ok(!cn_contract_present("The files and symbols and locations are in a.py."),
       "absent: the words in prose are not labels");
    ok(!cn_contract_present("run with --files=a --symbols=b --locations=c"),
       "absent: command-line flags are not labels");
    ok(!cn_contract_present(""), "absent: empty answer");
    ok(!cn_contract_present(NULL), "absent: NULL answer");
}

static void test_location_forms(void)
{
    check_render("Files: none\nSymbols: none\nLocations: a.py:120",
                 "Files: none\nSymbols: none\nLocations: a.py:120", "loc path:N");
    check_render("Locations: a.py:120-148", "Files: none\nSymbols: none\nLocations: a.py:120-148",
                 "loc path:S-E");
    check_render("Locations: a.py:120\xe2\x80\x93" "148",
                 "Files: none\nSymbols: none\nLocations: a.py:120-148", "loc en dash");
    check_render("Locations: src/a.py#L120-L148",
                 "Files: none\nSymbols: none\nLocations: src/a.py:120-148", "loc #Lx-Ly");
    check_render("Locations: src/a.py#L7", "Files: none\nSymbols: none\nLocations: src/a.py:7",
                 "loc #Lx");
    check_render("Locations: src/a.py: lines 120-148",
                 "Files: none\nSymbols: none\nLocations: src/a.py:120-148", "loc path: lines S-E");
    check_render("Locations: src/a.py (120-148)",
                 "Files: none\nSymbols: none\nLocations: src/a.py:120-148", "loc path (S-E)");
    check_render("Locations: src/a.py lines 120 to 148",
                 "Files: none\nSymbols: none\nLocations: src/a.py:120-148", "loc lines S to E");
    check_render("Locations: a.py:148-120", "Files: none\nSymbols: none\nLocations: a.py:120-148",
                 "loc reversed range is swapped");
    check_render("Locations: a.py:0-4, b.py:-3, c.py:5",
                 "Files: none\nSymbols: none\nLocations: c.py:5", "loc zero and negative dropped");
    check_render("Locations: a.py:10-20, 30-40",
                 "Files: none\nSymbols: none\nLocations: a.py:10-20, a.py:30-40",
                 "loc several ranges for one path");
    check_render("Locations: a.py:99999999999", "Files: none\nSymbols: none\nLocations: none",
                 "loc overflowing line dropped");
    check_render("Locations: a.py", "Files: none\nSymbols: none\nLocations: a.py",
                 "loc bare path is the whole file");
}

static void test_symbols_and_files(void)
{
    check_render("Symbols: pkg/a.py::Parser::parse, a.py:Parser.parse()",
                 "Files: none\nSymbols: pkg/a.py:Parser.parse, a.py:Parser.parse\nLocations: none",
                 "symbol :: and () normalised");
    check_render("Symbols: a.py: Parser.parse, helper",
                 "Files: none\nSymbols: a.py:Parser.parse, a.py:helper\nLocations: none",
                 "symbol names after 'path:' belong to it");
    check_render("Symbols: helper (b.py), Parser.parse",
                 "Files: none\nSymbols: b.py:helper, Parser.parse\nLocations: none",
                 "symbol 'name (path)' and a bare qualified name");
    check_render("Files: ./src\\pkg\\a.py, `b.py`.",
                 "Files: src/pkg/a.py, b.py\nSymbols: none\nLocations: none",
                 "files: ./ prefix, backslashes, backticks, trailing dot");
    check_render("Files: a.py, a.py, ./a.py\nSymbols: a.py:f, a.py:f\nLocations: a.py:1, a.py:1-1",
                 "Files: a.py\nSymbols: a.py:f\nLocations: a.py:1", "duplicates removed");
    check_render("Files: https://github.com/o/r/blob/main/a.py, the parser, N/A, e.g., x.py",
                 "Files: x.py\nSymbols: none\nLocations: none", "junk rejected: URL and prose");
    check_render("Files: my file.py", "Files: none\nSymbols: none\nLocations: none",
                 "junk rejected: a space inside a path");
}

static void test_blocks(void)
{
    check_render("Files: old.py\nSymbols: old.py:f\nLocations: old.py:1-2\n\nOn reflection:\n\n"
                 "Files: new.py\nSymbols: new.py:g\nLocations: new.py:3-4\n",
                 "Files: new.py\nSymbols: new.py:g\nLocations: new.py:3-4", "last block wins");
    check_render("Files: a.py\nSymbols: a.py:f\nLocations: a.py:9\n\nFiles: b.py\n",
                 "Files: a.py\nSymbols: a.py:f\nLocations: a.py:9",
                 "a later partial block does not beat a complete one");
    cn_contract c;
    is_int(cn_contract_parse("Just prose, no contract.", &c), 0, "no contract: parse returns 0");
    ok(!c.has_files && !c.has_symbols && !c.has_locations && c.files.len == 0 &&
           c.n_locations == 0,
       "no contract: nothing found");
    cn_contract_free(&c);
    is_int(cn_contract_parse("", &c), 0, "empty input parses");
    cn_contract_free(&c);
}

static void test_merge_and_json(void)
{
    cn_contract c;
    cn_contract_parse("Files: a.py\nSymbols: b.py:f, Bare.name, a.py:g\nLocations: c.py:3, b.py:1",
                      &c);
    is_int(cn_contract_merge_files(&c), 0, "merge_files succeeds");
    is_int(c.files.len, 3, "merge_files: three files");
    if (c.files.len == 3) {
        is_str(c.files.items[1], "b.py", "merge_files: symbol file appended");
        is_str(c.files.items[2], "c.py", "merge_files: location file appended last");
    }
    cn_contract_add_location(&c, "d.py", 0, 0);
    json_object *j = cn_contract_to_json(&c);
    is_str(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN),
           "{\"files\":[\"a.py\",\"b.py\",\"c.py\"],\"symbols\":[\"b.py:f\",\"Bare.name\","
           "\"a.py:g\"],\"locations\":[{\"path\":\"c.py\",\"start_line\":3,\"end_line\":3},"
           "{\"path\":\"b.py\",\"start_line\":1,\"end_line\":1},"
           "{\"path\":\"d.py\",\"start_line\":null,\"end_line\":null}]}",
           "to_json shape");
    json_object_put(j);
    cn_contract_free(&c);
}

static void test_building(void)
{
    cn_contract c = CN_CONTRACT_INIT;
    cn_contract_add_file(&c, "a.py");
    cn_contract_add_file(&c, "a.py");
    cn_contract_add_symbol(&c, "a.py:f");
    cn_contract_add_symbol(&c, "a.py:f");
    cn_contract_add_location(&c, "a.py", 3, 9);
    cn_contract_add_location(&c, "a.py", 3, 9);
    cn_contract_add_location(&c, "a.py", 0, 0);
    char *r = cn_contract_render(&c);
    is_str(r, "Files: a.py\nSymbols: a.py:f\nLocations: a.py:3-9, a.py", "add_*: deduplicated");
    free(r);
    is_int(cn_contract_symbol_path_len("pkg/a.py:C.m"), 8, "symbol_path_len: path part");
    is_int(cn_contract_symbol_path_len("C.m"), 0, "symbol_path_len: bare name");
    cn_contract_free(&c);
    check_render("Symbols: src/cache.go:(*Cache).Get, src/cache.go:(Store).Put",
                 "Files: none\nSymbols: src/cache.go:Cache.Get, src/cache.go:Store.Put\n"
                 "Locations: none",
                 "Go receivers");
    check_render("Locations: a.py:12:5", "Files: none\nSymbols: none\nLocations: a.py:12",
                 "loc line:column keeps the line");
}

static void test_hostile_input(void)
{
    /* 1 MB: one long label line of distinct paths, then many lines */
    cn_buf b = CN_BUF_INIT;
    cn_buf_puts(&b, "Files:");
    size_t nfiles = 0, nlocs = 0;
    for (; b.len < (1u << 19); nfiles++) cn_buf_printf(&b, " d/f%zu.py,", nfiles);
    cn_buf_puts(&b, "\nSymbols: a.py:f\nLocations:\n");
    for (; b.len < (1u << 20); nlocs++) cn_buf_printf(&b, "- x.py:%zu-%zu\n", b.len, b.len + 1);
    char *big = cn_buf_steal(&b);
    cn_contract c;
    is_int(cn_contract_parse(big, &c), 0, "1 MB answer parses");
    is_int(c.files.len, nfiles, "1 MB answer: every file kept");
    is_int(c.n_locations, nlocs, "1 MB answer: every location kept");
    ok(c.files.len && strcmp(c.files.items[0], "d/f0.py") == 0, "1 MB answer: order kept");
    cn_contract_free(&c);
    free(big);

    char *stars = malloc(1u << 20);
    memset(stars, '*', (1u << 20) - 1);
    memcpy(stars, "Files: ", 7);
    stars[(1u << 20) - 1] = '\0';
    is_int(cn_contract_parse(stars, &c), 0, "a megabyte of asterisks parses");
    cn_contract_free(&c);
    free(stars);

    /* brackets that never close, and links that never end */
    /* "a(a(a(..." is one call of a, never closed: the name a */
    const char *shapes[] = {"[", "[a](", "(", "a(", "#", "Files: "};
    const size_t want_syms[] = {0, 0, 0, 1, 0, 0};
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
        cn_buf h = CN_BUF_INIT;
        cn_buf_puts(&h, k % 2 ? "Symbols: " : "Locations: ");
        while (h.len < (1u << 20)) cn_buf_puts(&h, shapes[k]);
        char *text = cn_buf_steal(&h);
        char what[80];
        snprintf(what, sizeof what, "a megabyte of '%s' parses", shapes[k]);
        is_int(cn_contract_parse(text, &c) == 0 && c.symbols.len == want_syms[k] &&
                   c.n_locations == 0,
               1, what);
        cn_contract_free(&c);
        free(text);
    }

    const char *bad = "Files: \xff\xfe.py, caf\xc3.py, ok.py\nSymbols: a.py:\xe2\x80\nLocations: "
                      "\xe2\x80\x93\xe2\x80\x93 ok.py:\xe2\x80\x93" "3";
    is_int(cn_contract_parse(bad, &c), 0, "malformed UTF-8 parses");
    ok(cn_strv_contains(&c.files, "ok.py"), "malformed UTF-8: the good file survives");
    cn_contract_free(&c);
}

/* Entries added as given (the planner's come from file names) must not
 * forge lines or carry a terminal escape; parsed ones read as UTF-8. */
static void test_odd_bytes(void)
{
    cn_contract c = CN_CONTRACT_INIT, back;
    cn_contract_add_file(&c, "inj\nFiles: /etc/passwd.py");
    cn_contract_add_symbol(&c, "a\x1b[2J.py:f");
    cn_contract_add_location(&c, "b\xff\xc0\xaf.py\r", 3, 4);
    char *r = cn_contract_render(&c);
    is_str(r, "Files: inj\xef\xbf\xbd" "Files: /etc/passwd.py\n"
              "Symbols: a\xef\xbf\xbd[2J.py:f\n"
              "Locations: b\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd.py\xef\xbf\xbd:3-4",
           "render: a control character or a bad byte in an entry prints as U+FFFD");
    size_t lines = 1;
    for (const char *p = r ? r : ""; *p; p++) lines += *p == '\n';
    is_int(lines, 3, "render: three lines, none forged");
    ok(r && cn_contract_parse(r, &back) == 0 && back.has_files && back.has_symbols && back.has_locations,
       "render: the text reads back as one block");
    cn_contract_free(&back);
    free(r);
    cn_contract_free(&c);

    /* distinct bad bytes read as the same U+FFFD, so the rendering reads
     * back to as many entries */
    check_render("Files: a\xff.py, a\xfe.py, b\xc2\x9b.py, caf\xc3\xa9.py",
                 "Files: a\xef\xbf\xbd.py, b\xef\xbf\xbd.py, caf\xc3\xa9.py\n"
                 "Symbols: none\nLocations: none",
                 "parse: ill-formed bytes and C1 controls read as U+FFFD, valid UTF-8 kept");
}

int main(void)
{
    test_fixtures();
    test_presence();
    test_location_forms();
    test_symbols_and_files();
    test_blocks();
    test_merge_and_json();
    test_building();
    test_hostile_input();
    test_odd_bytes();
    return tap_done();
}
