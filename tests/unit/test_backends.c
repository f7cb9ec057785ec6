/* SPDX-License-Identifier: Apache-2.0 */
/* The backend loader (core/plugin/cn_backends.c): discovery from
 * plugin.yaml without opening libraries, one fixture per failure mode, and
 * a call into a loaded backend through its interface. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <codenib/embed.h>

#include "plugin/cn_backends.h"
#include "tap.h"

static cn_backends fixtures(void)
{
    cn_backends b;
    const char *fx = getenv("CN_FIXTURES");
    char *root = cn_path_join(fx ? fx : "tests/fixtures/staged", "backends");
    memset(&b, 0, sizeof b);
    ok(cn_backends_add_root(&b, root, "test") == 0, "the fixture root is read");
    free(root);
    return b;
}

static const char *problem_with(const cn_backends *b, const char *needle)
{
    for (size_t i = 0; i < b->problems.len; i++)
        if (strstr(b->problems.items[i], needle)) return b->problems.items[i];
    return NULL;
}

static void test_discovery(void)
{
    cn_backends b = fixtures();
    const cn_backend_entry *e;

    ok(cn_backends_find(&b, "fxb-good") != NULL, "a healthy package is listed");
    e = cn_backends_find(&b, "fxb-good");
    is_int(e ? e->kind : -1, CN_BACKEND_EMBEDDER, "its kind comes from plugin.yaml");
    ok(e && e->desc == NULL && e->dl == NULL, "discovery opens no library");
    has_str(problem_with(&b, "teleporter"), "unknown plugin kind 'teleporter'", "an unknown kind is a problem");
    has_str(problem_with(&b, "fxb_unknown_kind"), "plugin.yaml", "... naming the file");
    has_str(problem_with(&b, "fxb_nolib"), "needs `plugin_id:` and `library:`", "a package without library is a problem");
    ok(cn_backends_find(&b, "fxb-nolib") == NULL, "... and not an entry");
    e = cn_backends_find(&b, "fxb-declared-abi");
    has_str(e ? e->reason : NULL, "declares ABI 2.0; this codenib speaks 1.", "a declared foreign ABI is a reason");
    is_str(cn_backend_kind_name(CN_BACKEND_VECTOR_STORE), "vector-store", "kind names");
    is_int(cn_backend_kind_parse("lsp"), CN_BACKEND_LSP, "kind parse");
    is_int(cn_backend_kind_parse("language"), 0, "languages are not backends of this registry");
    {
        /* the same root twice: the second copy is a duplicate, the first wins */
        const char *fx = getenv("CN_FIXTURES");
        char *root = cn_path_join(fx ? fx : "tests/fixtures/staged", "backends");
        size_t before = b.len;
        ok(cn_backends_add_root(&b, root, "again") == 0, "a second root is read");
        is_int(b.len, before, "duplicates are not added");
        has_str(problem_with(&b, "already provided"), "fxb-", "a duplicate is reported");
        free(root);
    }
    ok(cn_backends_add_root(&b, "/nonexistent/codenib/backends", "none") == 0, "an absent root is not an error");
    cn_backends_free(&b);
}

static void expect_open_error(cn_backends *b, const char *id, int code, const char *needle, const char *what)
{
    const cn_backend_descriptor *d = NULL;
    cn_backend_entry *e = cn_backends_find(b, id);
    int rc = e ? cn_backends_open(e, &d) : CN_ENOTFOUND;
    is_int(rc, code, what);
    ok(d == NULL, "no descriptor is returned");
    has_str(cn_error_last()->message, needle, "the message says why");
    /* the reason sticks: a second attempt fails the same way, without reopening */
    rc = e ? cn_backends_open(e, &d) : CN_ENOTFOUND;
    ok(rc < 0 && e && e->reason && strstr(e->reason, needle), "the entry keeps the reason");
    cn_error_clear();
}

static void test_failure_modes(void)
{
    cn_backends b = fixtures();
    expect_open_error(&b, "fxb-abi", CN_EABI, "built for ABI 99.", "a foreign ABI major is refused");
    expect_open_error(&b, "fxb-nosym", CN_ELOAD, "does not export cn_backend_descriptor_fxb_nosym",
                      "a library without the descriptor is refused");
    expect_open_error(&b, "fxb-kind", CN_EABI, "plugin.yaml says kind vector-store but the library is of kind embedder",
                      "a kind mismatch is refused");
    expect_open_error(&b, "fxb-idmis", CN_EABI, "does not describe backend 'fxb-idmis'",
                      "an id mismatch is refused");
    expect_open_error(&b, "fxb-missing-so", CN_ELOAD, "fxb_missing_so.so", "a missing library names its path");
    expect_open_error(&b, "fxb-declared-abi", CN_ELOAD, "declares ABI 2.0", "a declared ABI is checked first");
    cn_backends_free(&b);
}

static void test_create(void)
{
    cn_backends b = fixtures();
    cn_backend_instance *inst = NULL;
    int rc;

    rc = cn_backend_create(&b, "fxb-fail", CN_BACKEND_EMBEDDER, NULL, NULL, &inst);
    is_int(rc, CN_EINVAL, "a failing create() passes its code on");
    has_str(cn_error_last()->message, "embedder backend 'fxb-fail': fixture backend refuses to start",
            "... with its message, naming the backend");
    ok(inst == NULL, "... and no instance");

    rc = cn_backend_create(&b, "lsp-nope", CN_BACKEND_LSP, NULL, NULL, &inst);
    is_int(rc, CN_ENOTFOUND, "an unknown id is not found");
    has_str(cn_error_last()->message, "no lsp backend 'lsp-nope' is installed (known: none;",
            "... saying which kind and that none is known");
    rc = cn_backend_create(&b, "fxb-good", CN_BACKEND_VECTOR_STORE, NULL, NULL, &inst);
    is_int(rc, CN_ENOTFOUND, "a backend of another kind is not taken");
    has_str(cn_error_last()->message, "no vector-store backend 'fxb-good' is installed (known: fxb-kind;",
            "... and the known ones of the asked kind are listed");
    rc = cn_backend_create(&b, "nope", CN_BACKEND_EMBEDDER, NULL, NULL, &inst);
    has_str(cn_error_last()->message, "known: fxb-", "the known embedders are listed");

    rc = cn_backend_create(&b, "fxb-good", CN_BACKEND_EMBEDDER, NULL, "{\"x\":1}", &inst);
    is_int(rc, 0, "a healthy backend is created");
    if (rc == 0) {
        cn_embedder *e = inst->object;
        const char *texts[] = {"abc", "123", ""};
        float v[9];
        cn_error err;
        memset(&err, 0, sizeof err);
        is_str(e->model_id(e), "fixture/counts-3", "its interface is callable");
        is_int(e->dim(e), 3, "dim");
        is_int(e->embed(e, CN_EMBED_QUERY, texts, 3, v, &err), 0, "embed");
        ok(fabsf(v[0] - 1.0f) < 1e-6f && v[1] == 0.0f && fabsf(v[4] - 1.0f) < 1e-6f && v[6] == 0.0f &&
               v[7] == 0.0f && v[8] == 0.0f,
           "vectors as the fixture defines them");
        is_str(inst->host.skill_id(&inst->host), "fxb-good", "the host table names the backend");
        cn_backend_instance_free(inst);
    }
    cn_backend_instance_free(NULL);
    cn_backends_free(&b);
}

int main(void)
{
    test_discovery();
    test_failure_modes();
    test_create();
    return tap_done();
}
