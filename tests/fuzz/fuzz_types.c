/* SPDX-License-Identifier: Apache-2.0 */
/* Type hints and the coercion of model-supplied arguments
 * (core/plugin/cn_type_*.c).  The input is a hint, a NUL byte, and a JSON
 * value.  Properties: a hint that parses prints canonically (its text
 * parses to the same text), a type fits itself, and a value coerced once
 * coerces again to itself. */
#include "fuzz.h"

#include "plugin/cn_types.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *hint, *value;
    size_t vlen;
    cn_type *t = NULL, *t2 = NULL;

    fuzz_split(data, size, '\0', &hint, &value, &vlen);
    if (hint == NULL || value == NULL) goto out;
    if (cn_type_parse(hint, &t) == 0) {
        char *s1 = cn_type_to_string(t), *s2 = NULL, *why = NULL;
        json_object *schema = cn_type_json_schema(t), *in, *c1 = NULL, *c2 = NULL;
        cn_type *copy = cn_type_copy(t);
        FUZZ_CHECK(s1 != NULL && cn_type_parse(s1, &t2) == 0, "canonical text '%s' does not parse", s1 ? s1 : "");
        s2 = cn_type_to_string(t2);
        FUZZ_CHECK(s2 != NULL && strcmp(s1, s2) == 0, "'%s' prints as '%s'", s1, s2 ? s2 : "");
        FUZZ_CHECK(cn_type_compatible(t, t2, &why), "'%s' does not fit itself: %s", s1, why ? why : "");
        json_object_put(schema);
        cn_type_free(copy);
        in = json_tokener_parse(value);
        if (cn_type_coerce(t, "arg", in, &c1) == 0) {
            int rc = cn_type_coerce(t, "arg", c1, &c2);
            FUZZ_CHECK(rc == 0, "a value coerced to %s does not coerce again: %s", s1, cn_error_last()->message);
            FUZZ_CHECK(json_object_equal(c1, c2), "coercing to %s twice changed %s into %s", s1,
                       json_object_to_json_string(c1), json_object_to_json_string(c2));
        }
        json_object_put(in);
        json_object_put(c1);
        json_object_put(c2);
        free(s1);
        free(s2);
        free(why);
    }
out:
    cn_type_free(t);
    cn_type_free(t2);
    free(hint);
    free(value);
    return 0;
}
