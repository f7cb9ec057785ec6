/* SPDX-License-Identifier: Apache-2.0 */
/* The YAML reader (core/plugin/cn_yaml.c) and the config.yaml loader
 * (cn_meta.c) on any bytes: a package's config.yaml is written by whoever
 * ships the skill.  No property beyond "an error, not a crash": every
 * value of a loaded tree has a position or none, and metadata that loads
 * can be printed. */
#include "fuzz.h"

#include "plugin/cn_meta.h"
#include "plugin/cn_yaml.h"

static void walk(json_object *v, int depth)
{
    int line, col;
    if (depth > 256) return;
    if (cn_yaml_mark(v, &line, &col) == 0) FUZZ_CHECK(line >= 1 && col >= 1, "mark %d:%d", line, col);
    if (json_object_is_type(v, json_type_object)) {
        json_object_object_foreach(v, k, x) {
            (void)k;
            walk(x, depth + 1);
        }
    } else if (json_object_is_type(v, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(v); i++) walk(json_object_array_get_idx(v, i), depth + 1);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_object *tree = NULL;
    cn_skill_meta *m = NULL;

    if (cn_yaml_load_string((const char *)data, size, "fuzz.yaml", &tree) == 0) {
        walk(tree, 0);
        (void)json_object_to_json_string(tree);
        json_object_put(tree);
    }
    if (cn_meta_from_yaml_string((const char *)data, size, "config.yaml", &m) == 0) {
        json_object *j = cn_meta_to_json(m);
        FUZZ_CHECK(j != NULL, "metadata that loaded cannot be printed");
        json_object_put(j);
        cn_meta_free(m);
    }
    return 0;
}
