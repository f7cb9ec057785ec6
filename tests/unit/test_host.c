/* SPDX-License-Identifier: Apache-2.0 */
/* The host table handed to plugins: its layout fields, the JSON services,
 * the confined files service and context_require. */
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <codenib/index.h>
#include <codenib/model.h>

#include "index/cn_vectors.h"
#include "llm/cn_llm.h"
#include "plugin/cn_host.h"
#include "util/cn_util.h"
#include "tap.h"

/* ---- host table ---------------------------------------------------------- */

static void test_table(void)
{
    cn_host host;
    cn_host older;
    cn_host_data data = {"myskill", "/pkg/myskill", NULL, NULL};
    json_object *defaults = json_object_new_object();
    cn_error err = {0, ""};
    char *s;
    void *p;

    json_object_object_add(defaults, "top_k", json_object_new_int(7));
    data.defaults = defaults;
    memset(&host, 0xab, sizeof host);
    cn_host_init(&host, &data);

    is_int(host.struct_size, sizeof(cn_host), "struct_size is sizeof(cn_host)");
    is_int(host.abi_major, CN_ABI_MAJOR, "abi_major is the SDK's");
    is_int(host.abi_minor, CN_ABI_MINOR, "abi_minor is the SDK's");
    ok(host.host_data == &data, "host_data points at the data given");
    ok(CN_HOST_HAS(&host, alloc) && host.alloc != NULL, "alloc present");
    ok(CN_HOST_HAS(&host, json) && host.json != NULL, "json present");
    ok(CN_HOST_HAS(&host, context_require) && host.context_require != NULL,
       "context_require present");
    ok(CN_HOST_HAS(&host, files) && host.files != NULL, "files present");
    ok(CN_HOST_HAS(&host, text), "the table reaches the last field (text)");
    ok(host.index != NULL && host.index->struct_size == sizeof(cn_index_services), "index services present");
    ok(host.model == cn_host_model_services() && host.model->struct_size == sizeof(cn_model_services),
       "model services present");
    ok(host.text == cn_host_text_services() && host.text->tokenize != NULL, "text services present");
    ok(host.lsp == cn_host_lsp_services(), "lsp is the shared services table");
    ok(host.vectors == cn_host_vector_services(), "vectors is the shared services table");
    ok(host.json == cn_host_json_services(), "json is the shared services table");
    ok(host.files == cn_host_files_services(), "files is the shared services table");
    is_int(host.json->struct_size, sizeof(cn_json_services), "json struct_size");
    is_int(host.files->struct_size, sizeof(cn_files_services), "files struct_size");
    ok(!CN_HOST_HAS((const cn_host *)NULL, json), "CN_HOST_HAS(NULL, ...) is false");

    /* A table from an older host stops before `files`. */
    older = host;
    older.struct_size = (uint32_t)offsetof(cn_host, files);
    ok(CN_HOST_HAS(&older, context_require), "older table still has context_require");
    ok(!CN_HOST_HAS(&older, files), "older table has no files");
    ok(!CN_HOST_HAS(&older, index), "older table has no index");

    is_str(host.skill_id(&host), "myskill", "skill_id");
    is_str(host.skill_dir(&host), "/pkg/myskill", "skill_dir");
    ok(host.skill_defaults(&host) == (const cn_json *)defaults, "skill_defaults is borrowed");
    is_int(host.json->get_int(host.json->object_get(host.skill_defaults(&host), "top_k")), 7,
           "skill_defaults readable through json services");

    p = host.alloc(0);
    ok(p != NULL, "alloc(0) gives a pointer");
    p = host.realloc(p, 32);
    ok(p != NULL, "realloc grows");
    host.free(p);
    s = host.strdup("dup me");
    is_str(s, "dup me", "strdup copies");
    host.free(s);
    ok(host.strdup(NULL) == NULL, "strdup(NULL) is NULL");

    is_int(host.error_set(&err, CN_EIO, "disk %d gone", 3), CN_EIO, "error_set returns the code");
    is_int(err.code, CN_EIO, "error_set fills code");
    is_str(err.message, "disk 3 gone", "error_set formats the message");
    is_int(host.error_set(NULL, CN_EINVAL, "x"), CN_EINVAL, "error_set with NULL err");

    json_object_put(defaults);
}

static void test_log(void)
{
    cn_host host;
    cn_host_data data = {"logskill", NULL, NULL, NULL};
    char path[] = "/tmp/cn_test_host_log_XXXXXX";
    int fd = mkstemp(path);
    int saved;
    char buf[512] = "";
    ssize_t n;
    int old_level = cn_log_get_level();

    cn_host_init(&host, &data);
    if (fd < 0) {
        ok(0, "mkstemp for the log capture");
        return;
    }
    fflush(stderr);
    saved = dup(STDERR_FILENO);
    dup2(fd, STDERR_FILENO);
    cn_log_set_level(CN_LOG_WARNING);
    host.log(&host, CN_LOG_DEBUG, "dropped %d", 1);
    host.log(&host, CN_LOG_WARNING, "kept %d", 2);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    cn_log_set_level(old_level);
    lseek(fd, 0, SEEK_SET);
    n = read(fd, buf, sizeof buf - 1);
    buf[n > 0 ? n : 0] = '\0';
    close(fd);
    unlink(path);
    is_str(buf, "codenib: [logskill] warning: kept 2\n", "log is tagged with the skill id, "
                                                          "below-threshold dropped");
}

/* ---- JSON services ------------------------------------------------------- */

struct fe_state {
    char keys[128];
    const char *stop_at;
};

static int fe_collect(const char *key, cn_json *val, void *data)
{
    struct fe_state *st = data;
    (void)val;
    if (st->keys[0]) strcat(st->keys, ",");
    strcat(st->keys, key);
    if (st->stop_at && strcmp(key, st->stop_at) == 0) return 7;
    return 0;
}

static void test_json_read(const cn_json_services *j)
{
    cn_error err = {0, ""};
    cn_json *root, *a, *c, *held;

    root = j->parse("{\"b\":1,\"a\":[1,2.5,\"x\",true,null],\"c\":{\"d\":\"e\"}}", &err);
    ok(root != NULL, "parse a valid object");
    if (root == NULL) {
        diag("%s", err.message);
        return;
    }
    is_int(err.code, 0, "no error on success");
    is_int(j->type(root), CN_JSON_OBJECT, "type object");
    is_int(j->object_length(root), 3, "object_length");
    a = j->object_get(root, "a");
    is_int(j->type(a), CN_JSON_ARRAY, "member a is an array");
    is_int(j->array_length(a), 5, "array_length");
    is_int(j->type(j->array_get(a, 0)), CN_JSON_INT, "a[0] int");
    is_int(j->type(j->array_get(a, 1)), CN_JSON_DOUBLE, "a[1] double");
    is_int(j->type(j->array_get(a, 2)), CN_JSON_STRING, "a[2] string");
    is_int(j->type(j->array_get(a, 3)), CN_JSON_BOOL, "a[3] bool");
    ok(j->array_get(a, 4) == NULL, "a[4] null is NULL");
    is_int(j->type(j->array_get(a, 4)), CN_JSON_NULL, "a[4] type null");
    ok(j->array_get(a, 5) == NULL, "array_get past the end is NULL");
    ok(j->array_get(root, 0) == NULL, "array_get on an object is NULL");
    is_int(j->get_int(j->array_get(a, 0)), 1, "get_int");
    ok(j->get_double(j->array_get(a, 1)) == 2.5, "get_double");
    is_int(j->get_int(j->array_get(a, 1)), 2, "get_int of a double truncates");
    ok(j->get_double(j->array_get(a, 0)) == 1.0, "get_double of an int");
    is_str(j->get_string(j->array_get(a, 2)), "x", "get_string");
    ok(j->get_string(j->array_get(a, 0)) == NULL, "get_string of an int is NULL");
    is_int(j->get_int(j->array_get(a, 2)), 0, "get_int of a string is 0");
    is_int(j->get_bool(j->array_get(a, 3)), 1, "get_bool true");
    is_int(j->get_bool(NULL), 0, "get_bool of null is 0");
    ok(j->object_get(root, "missing") == NULL, "object_get of a missing key is NULL");
    ok(j->object_get(a, "x") == NULL, "object_get on an array is NULL");
    is_int(j->object_length(a), 0, "object_length of an array is 0");
    is_int(j->array_length(root), 0, "array_length of an object is 0");

    /* Borrowed: the same pointer each time, alive while the container is. */
    c = j->object_get(root, "c");
    ok(c != NULL && c == j->object_get(root, "c"), "object_get returns the same borrowed value");
    ok(j->array_get(a, 2) == j->array_get(a, 2), "array_get returns the same borrowed value");
    held = j->get(c);
    ok(held == c, "get returns its argument");
    j->put(root);
    is_str(j->get_string(j->object_get(held, "d")), "e",
           "a value kept with get() outlives its parent");
    j->put(held);
}

static void test_json_parse(const cn_json_services *j)
{
    cn_error err = {0, ""};
    cn_json *v;

    v = j->parse("{\"a\" 1}", &err);
    ok(v == NULL, "malformed object refused");
    is_int(err.code, CN_EPARSE, "malformed: CN_EPARSE");
    has_str(err.message, "at offset 5", "malformed: message gives the offset");

    err.code = 0;
    v = j->parse("[1,", &err);
    ok(v == NULL, "truncated array refused");
    is_int(err.code, CN_EPARSE, "truncated: CN_EPARSE");
    has_str(err.message, "offset 3", "truncated: offset at the end");

    err.code = 0;
    v = j->parse("", &err);
    ok(v == NULL, "empty text refused");
    is_int(err.code, CN_EPARSE, "empty text: CN_EPARSE");

    err.code = 0;
    v = j->parse("{} x", &err);
    ok(v == NULL, "trailing garbage refused");
    is_int(err.code, CN_EPARSE, "trailing garbage: CN_EPARSE");
    is_str(err.message, "the text is not valid JSON: unexpected text after the value at offset 3",
           "trailing garbage: message and offset");

    err.code = 0;
    v = j->parse("[1] ]", &err);
    ok(v == NULL, "a second closing bracket refused");
    is_int(err.code, CN_EPARSE, "extra bracket: CN_EPARSE");

    v = j->parse("  [1, 2]  \n", &err);
    ok(v != NULL && j->array_length(v) == 2, "surrounding blanks accepted");
    j->put(v);

    err.code = 0;
    err.message[0] = '\0';
    v = j->parse(NULL, &err);
    ok(v == NULL, "NULL text gives NULL");
    is_int(err.code, CN_EINVAL, "NULL text: CN_EINVAL");
    has_str(err.message, "no JSON text given", "NULL text: message");
    ok(j->parse(NULL, NULL) == NULL, "NULL text with NULL err");
    ok(j->parse("{", NULL) == NULL, "parse error with NULL err");

    /* Top-level scalars are valid JSON texts. */
    err.code = 0;
    err.message[0] = '\0';
    v = j->parse("42", &err);
    ok(v != NULL && j->type(v) == CN_JSON_INT && j->get_int(v) == 42, "parse \"42\" gives int 42");
    if (v == NULL) diag("parse(\"42\"): %s", err.message);
    j->put(v);
    v = j->parse("true", &err);
    ok(v != NULL && j->type(v) == CN_JSON_BOOL && j->get_bool(v) == 1, "parse \"true\"");
    j->put(v);
    v = j->parse("-1.5", &err);
    ok(v != NULL && j->type(v) == CN_JSON_DOUBLE && j->get_double(v) == -1.5, "parse \"-1.5\"");
    j->put(v);
    err.code = 0;
    v = j->parse("null", &err);
    ok(v == NULL && err.code == 0, "parse \"null\" gives NULL without an error");
    if (err.code != 0) diag("parse(\"null\"): %s", err.message);
    v = j->parse("\"s\"", &err);
    is_str(j->get_string(v), "s", "parse a top-level string");
    j->put(v);
}

static void test_json_foreach(const cn_json_services *j)
{
    cn_json *o = j->new_object();
    cn_json *arr = j->new_array();
    struct fe_state st;

    j->object_set(o, "z", j->new_int(1));
    j->object_set(o, "a", j->new_int(2));
    j->object_set(o, "m", j->new_int(3));

    memset(&st, 0, sizeof st);
    is_int(j->object_foreach(o, fe_collect, &st), 0, "foreach returns 0 when every call does");
    is_str(st.keys, "z,a,m", "foreach visits members in insertion order");

    memset(&st, 0, sizeof st);
    st.stop_at = "a";
    is_int(j->object_foreach(o, fe_collect, &st), 7, "foreach passes back the stopping value");
    is_str(st.keys, "z,a", "foreach stops at the first non-zero return");

    memset(&st, 0, sizeof st);
    is_int(j->object_foreach(arr, fe_collect, &st), 0, "foreach on an array returns 0");
    is_str(st.keys, "", "foreach on an array calls nothing");
    is_int(j->object_foreach(NULL, fe_collect, &st), 0, "foreach on null returns 0");

    j->put(o);
    j->put(arr);
}

static void test_json_build(const cn_json_services *j)
{
    cn_json *o = j->new_object();
    cn_json *arr = j->new_array();
    cn_json *inner = j->new_object();
    cn_json *big;
    char *s;

    is_int(j->object_set(o, "s", j->new_string("a/b\"c")), 0, "object_set string");
    is_int(j->object_set(o, "i", j->new_int(-3)), 0, "object_set int");
    is_int(j->object_set(o, "d", j->new_double(1.5)), 0, "object_set double");
    is_int(j->object_set(o, "t", j->new_bool(5)), 0, "object_set bool (non-zero is true)");
    is_int(j->object_set(o, "f", j->new_bool(0)), 0, "object_set false");
    is_int(j->object_set(o, "n", j->new_null()), 0, "object_set null");
    is_int(j->array_append(arr, j->new_int(1)), 0, "array_append int");
    is_int(j->array_append(arr, j->new_string_len("xyz", 2)), 0, "array_append string_len");
    is_int(j->array_append(arr, j->new_null()), 0, "array_append null");
    is_int(j->object_set(o, "arr", arr), 0, "object_set array");
    is_int(j->object_set(o, "o", inner), 0, "object_set object");

    s = j->serialize(o, 0);
    is_str(s, "{\"s\":\"a/b\\\"c\",\"i\":-3,\"d\":1.5,\"t\":true,\"f\":false,\"n\":null,"
              "\"arr\":[1,\"xy\",null],\"o\":{}}",
           "serialize plain text");
    free(s);

    /* Replacing a member keeps one entry. */
    is_int(j->object_set(o, "i", j->new_int(4)), 0, "object_set replaces");
    is_int(j->object_length(o), 8, "replacing does not add a member");
    is_int(j->get_int(j->object_get(o, "i")), 4, "replaced value");
    j->put(o);

    o = j->new_object();
    j->object_set(o, "k", j->new_array());
    j->array_append(j->object_get(o, "k"), j->new_int(1));
    s = j->serialize(o, CN_JSON_PRETTY);
    is_str(s, "{\n  \"k\": [\n    1\n  ]\n}", "serialize pretty text");
    free(s);
    j->put(o);

    s = j->serialize(NULL, 0);
    is_str(s, "null", "serialize NULL is null");
    free(s);

    big = j->new_int(INT64_MAX);
    s = j->serialize(big, 0);
    is_str(s, "9223372036854775807", "new_int keeps 64 bits");
    free(s);
    is_int(j->get_int(big), INT64_MAX, "get_int keeps 64 bits");
    j->put(big);

    big = j->new_string_len("a\0b", 3);
    s = j->serialize(big, 0);
    is_str(s, "\"a\\u0000b\"", "new_string_len keeps an embedded NUL");
    free(s);
    j->put(big);

    ok(j->new_string(NULL) == NULL, "new_string(NULL) is null");
    ok(j->new_null() == NULL, "new_null returns NULL");
    is_int(j->type(NULL), CN_JSON_NULL, "type(NULL) is CN_JSON_NULL");
    ok(j->get_string(NULL) == NULL, "get_string(NULL)");
    is_int(j->get_int(NULL), 0, "get_int(NULL)");
    is_int(j->object_length(NULL), 0, "object_length(NULL)");
    is_int(j->array_length(NULL), 0, "array_length(NULL)");
}

static void test_json_ownership(const cn_json_services *j)
{
    cn_json *arr = j->new_array();
    cn_json *obj = j->new_object();

    /* Each failing call must release its value (valgrind checks). */
    is_int(j->object_set(arr, "k", j->new_string("leak?")), CN_EINVAL,
           "object_set on an array: CN_EINVAL");
    is_int(j->array_length(arr), 0, "the array is unchanged");
    is_int(j->object_set(obj, NULL, j->new_int(1)), CN_EINVAL, "object_set with a NULL key");
    is_int(j->object_set(NULL, "k", j->new_object()), CN_EINVAL, "object_set on null");
    is_int(j->array_append(obj, j->new_string("leak?")), CN_EINVAL,
           "array_append on an object: CN_EINVAL");
    is_int(j->object_length(obj), 0, "the object is unchanged");
    is_int(j->array_append(NULL, j->new_array()), CN_EINVAL, "array_append on null");
    is_int(j->object_set(arr, "k", NULL), CN_EINVAL, "object_set of null on an array");
    j->put(arr);
    j->put(obj);
}

/* ---- files --------------------------------------------------------------- */

static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL) return -1;
    fputs(text, f);
    return fclose(f);
}

static char *join(const char *a, const char *b)
{
    cn_buf buf = CN_BUF_INIT;
    cn_buf_printf(&buf, "%s/%s", a, b);
    return cn_buf_steal(&buf);
}

/* Layout below base:
 *   repo/hello.txt            "hello\n"
 *   repo/..notparent          "dots"
 *   repo/big.txt              100 bytes
 *   repo/sub/inner.txt        "inner"
 *   repo/sub/link_up     ->   ../hello.txt          (inside)
 *   repo/link_in         ->   hello.txt             (inside)
 *   repo/link_out        ->   <base>/outside.txt    (outside)
 *   repo/link_sib        ->   ../repo2/secret.txt   (sibling sharing the prefix)
 *   repo/link_dir        ->   <base>/repo2          (outside directory)
 *   repo/link_etc        ->   /etc/hostname
 *   repo2/secret.txt          "secret"
 *   outside.txt               "outside" */
typedef struct fixture {
    char base[64];
    char *root;
    bool ok;
} fixture;

static void fixture_make(fixture *fx)
{
    char *p;
    char big[101];
    int bad = 0;

    memset(fx, 0, sizeof *fx);
    strcpy(fx->base, "/tmp/cn_test_host_XXXXXX");
    if (mkdtemp(fx->base) == NULL) return;
    {
        char *real = realpath(fx->base, NULL);
        if (real == NULL) return;
        snprintf(fx->base, sizeof fx->base, "%s", real);
        free(real);
    }
    fx->root = join(fx->base, "repo");
    bad |= mkdir(fx->root, 0700);
    p = join(fx->root, "sub"); bad |= mkdir(p, 0700); free(p);
    p = join(fx->base, "repo2"); bad |= mkdir(p, 0700); free(p);
    p = join(fx->root, "hello.txt"); bad |= write_file(p, "hello\n"); free(p);
    p = join(fx->root, "..notparent"); bad |= write_file(p, "dots"); free(p);
    memset(big, 'x', 100);
    big[100] = '\0';
    p = join(fx->root, "big.txt"); bad |= write_file(p, big); free(p);
    p = join(fx->root, "sub/inner.txt"); bad |= write_file(p, "inner"); free(p);
    p = join(fx->base, "repo2/secret.txt"); bad |= write_file(p, "secret"); free(p);
    p = join(fx->base, "outside.txt"); bad |= write_file(p, "outside"); free(p);
    p = join(fx->root, "sub/link_up"); bad |= symlink("../hello.txt", p); free(p);
    p = join(fx->root, "link_in"); bad |= symlink("hello.txt", p); free(p);
    {
        char *target = join(fx->base, "outside.txt");
        p = join(fx->root, "link_out");
        bad |= symlink(target, p);
        free(p);
        free(target);
        target = join(fx->base, "repo2");
        p = join(fx->root, "link_dir");
        bad |= symlink(target, p);
        free(p);
        free(target);
    }
    p = join(fx->root, "link_sib"); bad |= symlink("../repo2/secret.txt", p); free(p);
    p = join(fx->root, "link_etc"); bad |= symlink("/etc/hostname", p); free(p);
    fx->ok = bad == 0;
}

static void fixture_remove(fixture *fx)
{
    static const char *const paths[] = {
        "repo/sub/link_up", "repo/sub/inner.txt", "repo/sub", "repo/link_in", "repo/link_out",
        "repo/link_sib", "repo/link_dir", "repo/link_etc", "repo/hello.txt",
        "repo/..notparent", "repo/big.txt", "repo", "repo2/secret.txt", "repo2", "outside.txt",
    };
    if (fx->base[0] == '\0' || fx->base[0] != '/') return;
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        char *p = join(fx->base, paths[i]);
        struct stat st;
        if (lstat(p, &st) == 0) {
            if (S_ISDIR(st.st_mode)) rmdir(p);
            else unlink(p);
        }
        free(p);
    }
    ok(rmdir(fx->base) == 0, "temporary tree removed");
    free(fx->root);
}

/* cn_confined_read expecting failure `code` with `needle` in the message. */
static void expect_read_fails(const char *root, const char *rel, size_t max, int code,
                              const char *needle, const char *what)
{
    char *data = (char *)"sentinel";
    size_t len = 99;
    int rc = cn_confined_read(root, rel, max, &data, &len);
    char label[256];

    snprintf(label, sizeof label, "%s: code", what);
    is_int(rc, code, label);
    snprintf(label, sizeof label, "%s: message", what);
    has_str(cn_error_last()->message, needle, label);
    snprintf(label, sizeof label, "%s: no data, len 0", what);
    ok(data == NULL && len == 0, label);
    if (rc == 0) free(data);
}

static void test_confined(const fixture *fx)
{
    const char *root = fx->root;
    char *data = NULL;
    size_t len = 0;
    char *slash_root;

    is_int(cn_confined_read(root, "hello.txt", 0, &data, &len), 0, "read a file");
    is_str(data, "hello\n", "content");
    is_int(len, 6, "length");
    free(data);

    is_int(cn_confined_read(root, "sub/inner.txt", 0, &data, NULL), 0, "read below a subdir");
    is_str(data, "inner", "subdir content");
    free(data);

    is_int(cn_confined_read(root, "./sub//inner.txt", 0, &data, &len), 0,
           "'.' and doubled slashes are fine");
    is_int(len, 5, "'.' path length");
    free(data);

    is_int(cn_confined_read(root, "..notparent", 0, &data, &len), 0,
           "a name starting with '..' is not a parent reference");
    is_str(data, "dots", "..notparent content");
    free(data);

    /* No link is followed, even one that stays inside: whether it does can
     * change between a check and the open (cn_beneath.h). */
    expect_read_fails(root, "link_in", 0, CN_EDENIED, "symbolic link", "symlink inside the repo");
    expect_read_fails(root, "sub/link_up", 0, CN_EDENIED, "symbolic link",
                      "symlink going up but staying inside");

    is_int(cn_confined_read(root, "big.txt", 100, &data, &len), 0, "exactly max_bytes is fine");
    is_int(len, 100, "max_bytes length");
    free(data);

    slash_root = join(root, "");
    is_int(cn_confined_read(slash_root, "hello.txt", 0, &data, &len), 0,
           "a root with a trailing slash works");
    free(data);
    free(slash_root);

    expect_read_fails(root, "/etc/hostname", 0, CN_EDENIED, "absolute paths are refused",
                      "absolute path");
    expect_read_fails(root, "../x", 0, CN_EDENIED, "'..' is refused", "../x");
    expect_read_fails(root, "a/../../x", 0, CN_EDENIED, "'..' is refused", "a/../../x");
    expect_read_fails(root, "sub/..", 0, CN_EDENIED, "'..' is refused",
                      "'..' refused even when it stays inside");
    expect_read_fails(root, "sub/../hello.txt", 0, CN_EDENIED, "'..' is refused",
                      "sub/../hello.txt");
    expect_read_fails(root, "link_out", 0, CN_EDENIED, "outside the repository",
                      "symlink to a file outside");
    expect_read_fails(root, "link_etc", 0, CN_EDENIED, "outside the repository",
                      "symlink to /etc/hostname");
    expect_read_fails(root, "link_sib", 0, CN_EDENIED, "outside the repository",
                      "symlink to a sibling sharing the root's prefix");
    expect_read_fails(root, "link_dir/secret.txt", 0, CN_EDENIED, "outside the repository",
                      "through a symlinked directory outside");
    expect_read_fails(root, "nope.txt", 0, CN_ENOTFOUND, "'nope.txt'", "missing file");
    expect_read_fails(root, "sub/none/x.txt", 0, CN_ENOTFOUND, "'sub/none/x.txt'",
                      "missing directory");
    expect_read_fails(root, "big.txt", 10, CN_EINVAL, "over the limit of 10 bytes",
                      "max_bytes exceeded");
    is_str(cn_error_last()->message, "'big.txt': 100 bytes, over the limit of 10 bytes",
           "max_bytes message names the relative path, not the resolved one");
    expect_read_fails(root, "sub", 0, CN_EIO, "not a regular file", "a directory");
    expect_read_fails(root, "sub/", 0, CN_EIO, "not a regular file", "a directory, with a '/'");
    expect_read_fails(root, "", 0, CN_EINVAL, "empty path", "empty path");
    expect_read_fails(NULL, "hello.txt", 0, CN_ENOCONTEXT, "no repository root",
                      "no root");

}

static void test_files_service(const fixture *fx)
{
    cn_host host;
    cn_host_data data = {"reader", NULL, NULL, NULL};
    cn_error err = {0, ""};
    char *text = NULL;
    size_t len = 0;

    data.repo_root = fx->root;
    cn_host_init(&host, &data);
    is_str(host.files->root(&host), fx->root, "files->root is the repository root");
    is_int(host.files->read(&host, "hello.txt", 0, &text, &len, &err), 0, "files->read ok");
    is_str(text, "hello\n", "files->read content");
    is_int(len, 6, "files->read length");
    host.free(text);

    text = NULL;
    is_int(host.files->read(&host, "../hello.txt", 0, &text, &len, &err), CN_EDENIED,
           "files->read refuses '..'");
    is_int(err.code, CN_EDENIED, "files->read fills err code");
    has_str(err.message, "'..' is refused", "files->read fills err message");
    ok(text == NULL, "no data on failure");

    err.code = 0;
    is_int(host.files->read(&host, "link_out", 0, &text, &len, &err), CN_EDENIED,
           "files->read refuses a symlink leaving the root");
    has_str(err.message, "outside the repository", "files->read: symlink message");

    err.code = 0;
    is_int(host.files->read(&host, "big.txt", 10, &text, &len, &err), CN_EINVAL,
           "files->read honours max_bytes");
    is_int(err.code, CN_EINVAL, "files->read max_bytes code");

    err.code = 0;
    is_int(host.files->read(&host, "gone.txt", 0, &text, &len, &err), CN_ENOTFOUND,
           "files->read missing file");
    has_str(err.message, "'gone.txt'", "files->read missing names the path");
    is_int(host.files->read(&host, "gone.txt", 0, &text, &len, NULL), CN_ENOTFOUND,
           "files->read with NULL err");

    data.repo_root = NULL;
    ok(host.files->root(&host) == NULL, "files->root NULL without a repository");
    err.code = 0;
    is_int(host.files->read(&host, "hello.txt", 0, &text, &len, &err), CN_ENOCONTEXT,
           "files->read without a repository: CN_ENOCONTEXT");
    is_int(err.code, CN_ENOCONTEXT, "no repository: err code");
    has_str(err.message, "skill 'reader'", "no repository: names the skill");
    has_str(err.message, "'hello.txt'", "no repository: names the path");
}

/* ---- context_require ----------------------------------------------------- */

static void test_context_require(void)
{
    cn_host host;
    cn_host_data data = {"ctxskill", NULL, NULL, NULL};
    cn_skill_context ctx;
    cn_error err = {0, ""};
    int fake_index = 1, fake_model = 2;

    cn_host_init(&host, &data);

    is_int(host.context_require(&host, NULL, CN_NEEDS_REPO, &err), CN_ENOCONTEXT,
           "NULL context: CN_ENOCONTEXT");
    is_int(err.code, CN_ENOCONTEXT, "NULL context: err code");
    is_str(err.message,
           "skill 'ctxskill' was run without a context; it needs a repository (pass --repo DIR)",
           "NULL context: message");
    is_int(host.context_require(&host, NULL, 0, &err), 0, "NULL context, needing nothing: ok");

    memset(&ctx, 0, sizeof ctx);
    ctx.struct_size = sizeof ctx;
    ctx.kind = CN_SKILL_RETRIEVAL;
    ctx.repo_root = "/some/repo";
    err.code = 0;
    err.message[0] = '\0';
    is_int(host.context_require(&host, &ctx, CN_NEEDS_REPO | CN_NEEDS_INDEX, &err),
           CN_ENOCONTEXT, "repo but no index: CN_ENOCONTEXT");
    is_str(err.message,
           "skill 'ctxskill' needs a compiled index (run `codenib compile REPO`) in its "
           "retrieve context",
           "repo but no index: message names the index and the kind");
    ok(strstr(err.message, "repository") == NULL, "the present repository is not listed");

    ctx.kind = CN_SKILL_EXPAND;
    is_int(host.context_require(&host, &ctx, CN_NEEDS_INDEX | CN_NEEDS_CHAT, &err),
           CN_ENOCONTEXT, "two missing parts");
    is_str(err.message,
           "skill 'ctxskill' needs a compiled index (run `codenib compile REPO`), a chat model "
           "(pass --model M [--base-url URL] or set CODENIB_MODEL) in its expand context",
           "two missing parts: both listed, kind expand");

    ctx.index = (const struct cn_index *)&fake_index;
    ctx.chat = (const struct cn_model *)&fake_model;
    err.code = 0;
    is_int(host.context_require(&host, &ctx, CN_NEEDS_REPO | CN_NEEDS_INDEX | CN_NEEDS_CHAT,
                                &err),
           0, "everything present: 0");
    is_int(err.code, 0, "everything present: err untouched");

    ctx.kind = CN_SKILL_RERANK;
    is_int(host.context_require(&host, &ctx, CN_NEEDS_RERANKER, &err), CN_ENOCONTEXT,
           "missing reranker");
    is_str(err.message,
           "skill 'ctxskill' needs a rerank endpoint (pass --rerank-model M [--rerank-base-url URL] or "
           "set CODENIB_RERANK_MODEL) in its rerank context",
           "missing reranker: message");

    /* A context from an older host ends before `index`: its index is absent
     * even though the memory behind it happens to be set. */
    ctx.kind = CN_SKILL_TRANSFORM;
    ctx.struct_size = (uint32_t)offsetof(cn_skill_context, index);
    is_int(host.context_require(&host, &ctx, CN_NEEDS_REPO, &err), 0,
           "short context still carries repo_root");
    is_int(host.context_require(&host, &ctx, CN_NEEDS_INDEX, &err), CN_ENOCONTEXT,
           "short context has no index");
    has_str(err.message, "in its transform context", "short context: kind transform");
    is_int(host.context_require(&host, &ctx, CN_NEEDS_INDEX, NULL), CN_ENOCONTEXT,
           "NULL err is fine");
}

int main(void)
{
    cn_host host;
    cn_host_data data = {"json", NULL, NULL, NULL};
    fixture fx;

    test_table();
    test_log();
    cn_host_init(&host, &data);
    test_json_read(host.json);
    test_json_parse(host.json);
    test_json_foreach(host.json);
    test_json_build(host.json);
    test_json_ownership(host.json);

    fixture_make(&fx);
    ok(fx.ok, "temporary repository created");
    if (fx.ok) {
        test_confined(&fx);
        test_files_service(&fx);
    }
    fixture_remove(&fx);
    test_context_require();
    return tap_done();
}
