/* SPDX-License-Identifier: Apache-2.0 */
/* Skill metadata: every field of a skill package's config.yaml (the
 * original SkillMetadata) plus what the C loader needs. */
#ifndef CN_META_H
#define CN_META_H

#include <stdbool.h>

#include <json-c/json.h>

#include <codenib/skill.h>

#include "../util/cn_util.h"
#include "cn_types.h"

typedef enum cn_cost {
    CN_COST_LOW = 1,
    CN_COST_MEDIUM = 2,
    CN_COST_HIGH = 3
} cn_cost;

typedef struct cn_input_spec {
    char *name;
    char *type_hint;        /* as written ("Any" when absent) */
    cn_type *type;          /* parsed; an enum when `enum:` is given */
    bool required;
    bool has_default;
    json_object *default_value;  /* NULL is JSON null */
    char *description;
    cn_strv enum_values;
    bool is_line_number;    /* 1-based for the model, 0-based for the skill */
    /* bounds of a number input (config `minimum`, `maximum`), shown in the
     * tool schema and enforced before the skill runs */
    bool has_minimum, has_maximum;
    double minimum, maximum;
    /* `offset`, added by the loader to a paged skill (outputs.page_limit):
     * the core pages the result and never passes it to the skill */
    bool core_offset;
} cn_input_spec;

typedef struct cn_output_spec {
    char *type_hint;        /* "Any" when absent */
    cn_type *type;
    char *description;
    /* Names of result fields that carry line numbers (converted 0 -> 1
     * based on the way out).  Default: start_line, end_line, line. */
    cn_strv line_fields;
    /* Paging.  page_limit names the int input that bounds how many items
     * the skill returns (top_k, with a maximum); when set, the loader adds
     * an `offset` input and the core serves items offset.. by asking for
     * offset + limit and dropping the first ones.  list_field names the
     * list in an object result (NULL: the result itself is the list).
     * list_field alone tells where the list is when a result too long for
     * a client is cut to fit (cn_result_text). */
    char *page_limit;
    char *list_field;
} cn_output_spec;

typedef struct cn_index_requirement {
    char *type;             /* "bm25", "graph", "vector", "nodes", ... */
    long long max_age_seconds;  /* < 0: no limit */
    char *scope;            /* "repo" unless given */
    bool required;
} cn_index_requirement;

typedef struct cn_skill_meta {
    char *skill_id;
    cn_skill_type skill_type;
    cn_cost cost;
    char *operator_name;    /* `operator`, may be NULL */
    bool cacheable;
    bool async_capable;
    json_object *defaults;  /* always an object */
    cn_input_spec *inputs;
    size_t n_inputs;
    cn_output_spec outputs;
    cn_index_requirement *index_requirements;
    size_t n_index_requirements;
    cn_strv resources;
    cn_strv dependencies;
    char *skill_doc;        /* skill.md, "" when absent */
    char *description;      /* skill_doc, else config `description` */
    /* C loader */
    char *library;          /* shared object base name (default: skill_id) */
    char *version;          /* package version, may be NULL */
    int abi_major;          /* `abi: "1.0"` in config.yaml; -1 when absent */
    int abi_minor;
    char *dir;              /* package directory, NULL for in-process skills */
    char *config_path;      /* config.yaml path, or the origin given */
    cn_strv warnings;       /* unknown fields and other non-fatal remarks */
    /* `examples`: runs `codenib skills test` makes, each a mapping with
     * args (a mapping), and optionally name, files (path -> text of the
     * example repository) and expect (contains: [strings], error: bool);
     * checked for shape when read.  NULL when absent. */
    json_object *examples;
} cn_skill_meta;

/* Reads <dir>/config.yaml and <dir>/skill.md.  Errors name
 * "<dir>/config.yaml:LINE:COL: <field>: <problem>". */
int cn_meta_load_dir(const char *dir, cn_skill_meta **out);
/* Builds metadata from config.yaml text held in memory; `origin` names it
 * in messages (with line:col). */
int cn_meta_from_yaml_string(const char *text, size_t len, const char *origin,
                             cn_skill_meta **out);
/* Builds metadata from a JSON/YAML tree; `origin` names it in messages
 * (a path for YAML trees, whose values carry line:col marks). */
int cn_meta_from_json(json_object *cfg, const char *origin, cn_skill_meta **out);
void cn_meta_free(cn_skill_meta *m);
/* The original to_dict(): a JSON-friendly object (new reference). */
json_object *cn_meta_to_json(const cn_skill_meta *m);
const cn_input_spec *cn_meta_input(const cn_skill_meta *m, const char *name);
/* CN_EINVAL naming the input when a number value is out of its bounds. */
int cn_input_check_bounds(const cn_input_spec *in, json_object *value);
/* A bound as JSON: an integer for an int input. */
json_object *cn_input_bound_json(const cn_input_spec *in, double bound);

/* Skill ids: [A-Za-z0-9_][A-Za-z0-9_.-]*, at most 64 characters. */
bool cn_skill_id_valid(const char *id);
/* "cn_skill_descriptor_" + id with non-[A-Za-z0-9_] mapped to '_'. */
char *cn_skill_symbol_name(const char *id);

const char *cn_skill_type_name(cn_skill_type t);
int cn_skill_type_parse(const char *s, cn_skill_type *out);
const char *cn_cost_name(cn_cost c);
int cn_cost_parse(const char *s, cn_cost *out);

#endif /* CN_META_H */
