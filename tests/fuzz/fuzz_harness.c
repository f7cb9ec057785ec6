/* SPDX-License-Identifier: Apache-2.0 */
/* Harness specs and compile tables (core/agent/cn_harness.c,
 * cn_compile_table.c) from any YAML or JSON.  Property: options that load
 * print as a mapping that loads again to the same options (the round trip
 * cn_harness_to_json promises). */
#include "fuzz.h"

#include "agent/cn_agent_support.h"
#include "plugin/cn_yaml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_object *spec = NULL;
    cn_agent_options o, o2;
    cn_compile_table *t = NULL;

    if (cn_yaml_load_string((const char *)data, size, "harness.yaml", &spec) < 0) return 0;
    cn_agent_options_init(&o);
    if (cn_harness_apply_json(spec, "harness.yaml", &o) == 0) {
        json_object *j1 = cn_harness_to_json(&o), *j2;
        int rc;
        FUZZ_CHECK(j1 != NULL, "options cannot be printed");
        cn_agent_options_init(&o2);
        rc = cn_harness_apply_json(j1, "printed", &o2);
        FUZZ_CHECK(rc == 0, "printed options do not load: %s\n%s", cn_error_last()->message,
                   json_object_to_json_string(j1));
        j2 = cn_harness_to_json(&o2);
        FUZZ_CHECK(j2 != NULL && strcmp(json_object_to_json_string(j1), json_object_to_json_string(j2)) == 0,
                   "options changed in a round trip:\n%s\n%s", json_object_to_json_string(j1),
                   j2 ? json_object_to_json_string(j2) : "(null)");
        json_object_put(j1);
        json_object_put(j2);
        cn_agent_options_free(&o2);
    }
    cn_agent_options_free(&o);

    /* the same tree as a compile table, asked about a few questions */
    if (cn_compile_table_load(spec, "table.yaml", &t) == 0) {
        static const char *const queries[] = {"", "Traceback (most recent call last):", "where is the parser?",
                                              "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!"};
        cn_strv all = CN_STRV_INIT;
        for (size_t i = 0; i < sizeof queries / sizeof queries[0]; i++) {
            const char *s = cn_compile_table_classify(t, queries[i]);
            cn_strv out = CN_STRV_INIT;
            char *warning = NULL;
            (void)cn_compile_table_narrow(t, s, NULL, &out, &warning);
            cn_strv_free(&out);
            free(warning);
        }
        (void)cn_compile_table_all_skills(t, &all);
        cn_strv_free(&all);
        cn_compile_table_free(t);
    }
    json_object_put(spec);
    return 0;
}
