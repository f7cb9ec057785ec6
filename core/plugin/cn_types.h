/* SPDX-License-Identifier: Apache-2.0 */
/* Type hints of skill inputs and outputs ("str", "List[int]",
 * "Optional[Dict[str, float]]", "Literal['a', 'b']", "List[QueriedNode]"):
 * parsing, coercion of model-supplied arguments, JSON schema, and dataflow
 * compatibility between one skill's output and another's input. */
#ifndef CN_TYPES_H
#define CN_TYPES_H

#include <stdbool.h>

#include <json-c/json.h>

#include "../util/cn_util.h"

typedef enum cn_type_kind {
    CN_T_ANY = 0,   /* Any, object, or an empty hint */
    CN_T_STR,       /* str */
    CN_T_INT,       /* int */
    CN_T_FLOAT,     /* float */
    CN_T_BOOL,      /* bool */
    CN_T_NONE,      /* None */
    CN_T_LIST,      /* List[T], list, Sequence[T], Tuple[T, ...] -> elem */
    CN_T_DICT,      /* Dict[K, V], dict, Mapping[K, V] -> key, elem */
    CN_T_OPTIONAL,  /* Optional[T], Union[T, None], T | None -> elem */
    CN_T_ENUM,      /* Literal['a', 'b'] or an input's `enum:` list -> values */
    CN_T_NAMED      /* any other identifier, e.g. QueriedNode -> name */
} cn_type_kind;

typedef struct cn_type {
    cn_type_kind kind;
    struct cn_type *elem;  /* LIST element, DICT value, OPTIONAL inner */
    struct cn_type *key;   /* DICT key */
    char *name;            /* NAMED: the identifier as written */
    cn_strv values;        /* ENUM: allowed values, as strings */
} cn_type;

/* Parses a hint.  Whitespace is free; "typing." prefixes are accepted;
 * lowercase builtins list/dict/tuple work as their typing forms.  On error
 * sets the thread-local error ("type hint 'List[int': expected ']' at
 * column 9") and returns CN_EPARSE. */
int cn_type_parse(const char *hint, cn_type **out);
/* Builds an ENUM over the given values (an input's `enum:` list). */
int cn_type_new_enum(const cn_strv *values, cn_type **out);
cn_type *cn_type_copy(const cn_type *t);
void cn_type_free(cn_type *t);
/* Canonical text: "List[Dict[str, int]]", "Optional[int]", "Literal['a', 'b']". */
char *cn_type_to_string(const cn_type *t);

/* Coerces a value supplied by a model or a caller to the type:
 *   "5" -> 5 and 5.0 -> 5 for int (5.5 is an error), "2.5"/2 -> float,
 *   "true"/"false"/"1"/"0"/"yes"/"no" (any case) and 1/0 -> bool,
 *   numbers and bools -> their text for str, a scalar -> a one-element list
 *   where a list is expected, a JSON array or object given as a string ->
 *   parsed, null accepted only for Optional/Any/None, enum values checked
 *   (after the same coercion to string).  List elements and dict values are
 *   coerced recursively.  `in` is borrowed; *out is a new reference (NULL
 *   for JSON null).  On failure sets the thread-local error naming the
 *   argument, the value and the expected type:
 *     argument 'top_k': expected int, got "five"
 *   and returns CN_ETYPE. */
int cn_type_coerce(const cn_type *t, const char *arg_name, json_object *in,
                   json_object **out);

/* JSON schema for a parameter of this type, as used in OpenAI function
 * tools: str -> {"type":"string"}, int -> integer, float -> number,
 * bool -> boolean, List[T] -> {"type":"array","items":...}, Dict[K, V] ->
 * {"type":"object","additionalProperties":...}, Optional[T] -> schema of T,
 * enum -> {"type":"string","enum":[...]}, Any/NAMED -> {} (no constraint;
 * NAMED adds "description": "<Name>").  Returns a new object. */
json_object *cn_type_json_schema(const cn_type *t);

/* Whether a value of type `from` can be passed where `to` is expected.
 * Any on either side matches; int widens to float; T fits Optional[T];
 * None fits Optional[T]; NAMED types match by name; List/Dict/Optional
 * compare element-wise; an enum fits str, and fits another enum whose
 * values include all of its own.  When not compatible and why != NULL,
 * *why is a malloc'd sentence naming the innermost mismatch:
 *   "List[QueriedNode] does not fit List[str]: element QueriedNode is not str" */
bool cn_type_compatible(const cn_type *from, const cn_type *to, char **why);

#endif /* CN_TYPES_H */
