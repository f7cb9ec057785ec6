/* SPDX-License-Identifier: Apache-2.0 */
/* Plugin loading: every failure mode has its own fixture package, and each
 * must end FAILED (or DUPLICATE) with its own reason, without crashing, while
 * the healthy fixture loads and runs. */
#include <stdlib.h>
#include <string.h>

#include "plugin/cn_registry.h"
#include "tap.h"

static cn_registry *reg;

static cn_skill_entry *entry_by_dir(const char *dirname)
{
    for (size_t i = 0; i < reg->n_entries; i++) {
        const char *d = reg->entries[i]->dir;
        size_t dl = d ? strlen(d) : 0, nl = strlen(dirname);
        if (d && dl >= nl && strcmp(d + dl - nl, dirname) == 0 && (dl == nl || d[dl - nl - 1] == '/'))
            return reg->entries[i];
    }
    return NULL;
}

/* Loads the package in `dirname` and checks its final state and reason. */
static void expect(const char *dirname, cn_skill_state state, int code, const char *reason)
{
    cn_skill_entry *e = entry_by_dir(dirname);
    char what[256];
    snprintf(what, sizeof what, "%s: state %s", dirname, cn_skill_state_name(state));
    if (!ok(e != NULL, what)) return;
    if (e->state == CN_STATE_DISCOVERED) (void)cn_registry_load(reg, e);
    if (!ok(e->state == state, what)) diag("state is %s: %s", cn_skill_state_name(e->state), e->reason ? e->reason : "");
    snprintf(what, sizeof what, "%s: error %s", dirname, cn_error_code_name(code));
    is_str(cn_error_code_name(e->error_code), cn_error_code_name(code), what);
    snprintf(what, sizeof what, "%s: reason", dirname);
    if (reason) has_str(e->reason, reason, what);
    else ok(e->reason == NULL, what);
}

int main(void)
{
    const char *fx = getenv("CN_FIXTURES");
    char *root, m1[160], m2[160], m3[160];
    json_object *res = NULL, *args;

    if (fx == NULL) {
        printf("1..0 # SKIP CN_FIXTURES is not set (run through make check)\n");
        return 0;
    }
    root = cn_path_join(fx, "all");
    is_int(cn_registry_new(&reg), 0, "registry created");
    is_int(cn_registry_add_root(reg, root, "fixtures"), 0, "fixture root scanned");
    is_int(reg->n_entries, 14, "every fixture package is listed, broken ones too");

    /* The descriptor is checked before any plugin function runs. */
    expect("fx_good", CN_STATE_LOADED, CN_OK, NULL);
    /* the messages name the running ABI */
    snprintf(m1, sizeof m1, "was built for skill ABI 99.%d but this codenib speaks %d.%d", CN_ABI_MINOR,
             CN_ABI_MAJOR, CN_ABI_MINOR);
    expect("fx_abi_major", CN_STATE_FAILED, CN_EABI, m1);
    snprintf(m2, sizeof m2, "built against a newer SDK (ABI %d.%d) than this codenib (%d.%d)", CN_ABI_MAJOR,
             CN_ABI_MINOR + 1, CN_ABI_MAJOR, CN_ABI_MINOR);
    expect("fx_abi_minor", CN_STATE_FAILED, CN_EABI, m2);
    expect("fx_no_symbol", CN_STATE_FAILED, CN_ELOAD, "does not export cn_skill_descriptor_fx_no_symbol");
    expect("fx_id_mismatch", CN_STATE_FAILED, CN_EABI, "skill id mismatch");
    has_str(entry_by_dir("fx_id_mismatch")->reason, "'fx_someone_else'", "mismatch names both ids");
    expect("fx_small_struct", CN_STATE_FAILED, CN_EABI, "has a descriptor of 8 bytes");
    expect("fx_create_fails", CN_STATE_FAILED, CN_ESKILL, "create_executor failed: fixture refuses to start");
    expect("fx_missing_so", CN_STATE_FAILED, CN_ELOAD, "fx_missing_so/fx_missing_so.so is missing");
    snprintf(m3, sizeof m3, "declares skill ABI 2.0 but this codenib speaks %d.%d", CN_ABI_MAJOR, CN_ABI_MINOR);
    expect("fx_declared_abi", CN_STATE_FAILED, CN_EABI, m3);
    expect("fx_bad_yaml", CN_STATE_FAILED, CN_EPARSE, "fx_bad_yaml/config.yaml:");
    expect("fx_bad_field", CN_STATE_FAILED, CN_EPARSE, "inputs[0] (top_k).required");
    expect("fx_tool_grep", CN_STATE_FAILED, CN_ECONFLICT,
           "skill 'grep' (");
    has_str(entry_by_dir("fx_tool_grep")->reason, "collides with the default tool 'grep'",
            "collision names the tool");
    expect("fx_dup_a", CN_STATE_LOADED, CN_OK, NULL);
    expect("fx_dup_b", CN_STATE_DUPLICATE, CN_EEXISTS, "is a duplicate of");
    has_str(entry_by_dir("fx_dup_b")->reason, "fx_dup_a", "duplicate names the first package");

    /* A broken package is listed by its directory name. */
    ok(cn_registry_find(reg, "fx_bad_yaml") != NULL, "broken YAML package listed under its directory name");
    /* find() never returns the duplicate */
    ok(cn_registry_find(reg, "fx_dup") == entry_by_dir("fx_dup_a"), "the first fx_dup wins");

    /* Running a failed skill gives its reason, again, and does not crash. */
    args = json_tokener_parse("{\"text\": \"x\"}");
    ok(cn_registry_invoke(reg, "fx_abi_major", args, NULL, &res) == CN_EABI, "running a failed skill fails");
    has_str(cn_error_last()->message, "ABI 99.", "with the load reason");
    ok(cn_registry_invoke(reg, "fx_dup", args, NULL, &res) == 0, "the winning duplicate runs");
    {
        json_object *tag = NULL;
        json_object_object_get_ex(res, "tag", &tag);
        is_str(json_object_get_string(tag), "a", "and it is the first one found");
        json_object_put(res);
    }
    ok(cn_registry_invoke(reg, "fx_good", args, NULL, &res) == 0, "fx_good runs");
    json_object_put(res);
    json_object_put(args);

    /* A skill whose executor returns garbage or fails is reported, not fatal. */
    args = json_tokener_parse("{\"text\": \"x\", \"garbage\": true}");
    is_int(cn_registry_invoke(reg, "fx_good", args, NULL, &res), CN_ESKILL, "garbage result refused");
    has_str(cn_error_last()->message, "skill 'fx_good' returned invalid JSON", "garbage result message");
    json_object_put(args);
    args = json_tokener_parse("{\"text\": \"x\", \"fail\": true}");
    is_int(cn_registry_invoke(reg, "fx_good", args, NULL, &res), CN_ESKILL, "executor failure");
    has_str(cn_error_last()->message, "skill 'fx_good' failed: asked to fail", "executor failure message");
    json_object_put(args);

    /* Unloading and reloading through a repository change works. */
    is_int(cn_registry_set_repo(reg, fx), 0, "repository set");
    ok(entry_by_dir("fx_good")->state == CN_STATE_DISCOVERED, "loaded executors are dropped on a new repository");
    args = json_tokener_parse("{\"text\": \"x\", \"file\": \"all/fx_good/config.yaml\"}");
    is_int(cn_registry_invoke(reg, "fx_good", args, NULL, &res), 0, "reloads and reads a repository file");
    {
        json_object *head = NULL;
        json_object_object_get_ex(res, "file_head", &head);
        is_str(json_object_get_string(head), "skill_id: fx_goo", "through the host file service");
        json_object_put(res);
    }
    json_object_put(args);
    args = json_tokener_parse("{\"text\": \"x\", \"file\": \"../../etc/passwd\"}");
    is_int(cn_registry_invoke(reg, "fx_good", args, NULL, &res), CN_EDENIED, "a path escaping the repository is refused");
    json_object_put(args);

    cn_registry_free(reg);
    free(root);
    return tap_done();
}
