/* SPDX-License-Identifier: Apache-2.0 */
/* The localization contract parser (core/agent/cn_contract.c) on any text a
 * model could answer.  Property: the canonical rendering of what was parsed
 * parses back to the same contract, so printing an answer never changes
 * it (what the prompt, the runner, the CLI and the scorer rely on). */
#include "fuzz.h"

#include "agent/cn_contract.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_cstr(data, size), *r1 = NULL, *r2 = NULL;
    cn_contract c1 = CN_CONTRACT_INIT, c2 = CN_CONTRACT_INIT;
    json_object *j;

    if (text == NULL) return 0;
    (void)cn_contract_present(text);
    if (cn_contract_parse(text, &c1) == 0 && (r1 = cn_contract_render(&c1)) != NULL &&
        cn_contract_parse(r1, &c2) == 0 && (r2 = cn_contract_render(&c2)) != NULL) {
        FUZZ_CHECK(strcmp(r1, r2) == 0, "rendered\n%s\nparsed back as\n%s", r1, r2);
        FUZZ_CHECK(c1.files.len == c2.files.len && c1.symbols.len == c2.symbols.len &&
                       c1.n_locations == c2.n_locations,
                   "%zu/%zu/%zu entries became %zu/%zu/%zu", c1.files.len, c1.symbols.len, c1.n_locations,
                   c2.files.len, c2.symbols.len, c2.n_locations);
        for (size_t i = 0; i < c1.n_locations; i++)
            FUZZ_CHECK(c1.locations[i].start_line <= c1.locations[i].end_line &&
                           (c1.locations[i].start_line > 0 || c1.locations[i].end_line == 0),
                       "location %s:%u-%u", c1.locations[i].path, c1.locations[i].start_line,
                       c1.locations[i].end_line);
        if ((j = cn_contract_to_json(&c1)) != NULL) json_object_put(j);
        (void)cn_contract_merge_files(&c1);
        for (size_t i = 0; i < c1.symbols.len; i++) (void)cn_contract_symbol_path_len(c1.symbols.items[i]);
    }
    free(r1);
    free(r2);
    cn_contract_free(&c1);
    cn_contract_free(&c2);
    free(text);
    return 0;
}
