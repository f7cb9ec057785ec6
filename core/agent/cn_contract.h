/* SPDX-License-Identifier: Apache-2.0 */
/* The localization contract: the "Files: / Symbols: / Locations:" block a
 * localization answer ends with.  One parser shared by the prompt (which
 * asks for it), the runner (which checks it is there), the CLI (which
 * prints it) and the scorer (which compares it), so all four agree on what
 * a model said.
 *
 *     Files: path/a.py, path/b.py
 *     Symbols: path/a.py:Class.method, path/b.py:helper
 *     Locations: path/a.py:120-148, path/b.py:33-40
 *
 * The parser is tolerant of what models really write (markdown labels,
 * bullet lists, backticks, `path#L1-L9`, `path: lines 1-9`, en dashes,
 * `path::Class::method`, several drafts of the block) and strict about
 * what it keeps (no URLs, no prose words, no zero or negative lines).
 *
 * Rules, in short.  A label is "Files", "Symbols" or "Locations" (any case,
 * singular too) at a line start after markdown decoration ("**", "#",
 * "- ", "1. ", ">"), followed by ':' or '=' (an optional "(...)" between,
 * as in "Locations (1-based):"), or alone on a decorated heading line;
 * further labels may follow on the same line.  Values run on that line and
 * on the next lines while each starts with an item; after a blank line only
 * list items or lines made of items continue.  A block is a run of labels
 * without a repeat.  Paths: "./" dropped, '\' made '/', a bare name needs
 * a known extension ("tox.ini") or is a known file ("Makefile").  Symbols:
 * "path:A.b", "path::A::b", "path:A.b()", "path: a, b", "a (path)",
 * "a in path", Go "(*T).m"; names become "A.b".  Locations: "path",
 * "path:N", "path:S-E" (also en/em dash, "..", "S to E"), "path#LS-LE",
 * "path: lines S-E", "path (S-E)", "path:N:col", "path: S-E, S2-E2". */
#ifndef CN_CONTRACT_H
#define CN_CONTRACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "../util/cn_util.h"

/* A location: 1-based inclusive lines; 0,0 means the whole file. */
typedef struct cn_contract_loc {
    char *path;
    uint32_t start_line, end_line;
} cn_contract_loc;

typedef struct cn_contract {
    cn_strv files;            /* in order, deduplicated */
    cn_strv symbols;          /* "path:Qualified.name" (or a bare "Qualified.name"
                               * when the model named no file), in order, deduplicated */
    cn_contract_loc *locations;
    size_t n_locations;
    bool has_files, has_symbols, has_locations; /* which labels were present */
} cn_contract;

#define CN_CONTRACT_INIT {CN_STRV_INIT, CN_STRV_INIT, NULL, 0, false, false, false}

/* True when the answer carries all three labels (anywhere, like the
 * reference's three independent searches).  NULL is false. */
bool cn_contract_present(const char *answer);

/* Parses the contract out of a model answer into *out (initialised here;
 * its previous contents are not freed).  When the answer holds the block
 * several times the last complete one (all three labels) wins, else the
 * last partial one.  The answer is read as UTF-8: an ill-formed sequence
 * or a C1 control in it reads as U+FFFD.  Returns 0 even when nothing was
 * found (all lists empty, all has_* false), or CN_ENOMEM (then *out is
 * empty). */
int cn_contract_parse(const char *answer, cn_contract *out);

/* The canonical three-line text, "none" for an empty list:
 *   Files: a.py, b.py\nSymbols: a.py:C.m\nLocations: a.py:3-9, b.py:4, b.py
 * (a single line renders as path:N, the whole file as path).  A control
 * character or an ill-formed UTF-8 sequence in an entry (possible only in
 * one added programmatically) renders as U+FFFD, so no entry can start a
 * line of its own.  malloc'd; NULL only when out of memory.  Parsing it
 * gives the same contract. */
char *cn_contract_render(const cn_contract *c);

/* {"files":[...],"symbols":[...],"locations":[{"path","start_line","end_line"}]};
 * a whole-file location has null lines.  NULL when out of memory. */
json_object *cn_contract_to_json(const cn_contract *c);

void cn_contract_free(cn_contract *c);

/* Appends to c->files, in order and without duplicates, the files named by
 * the symbols and then by the locations (the three lists keep what the
 * model wrote until a caller asks for this).  0 or CN_ENOMEM. */
int cn_contract_merge_files(cn_contract *c);

/* Programmatic construction (the runner's fallback answer): each adds one
 * entry unless an equal one is there; 0 or CN_ENOMEM.  Values are taken as
 * given (no normalisation). */
int cn_contract_add_file(cn_contract *c, const char *path);
int cn_contract_add_symbol(cn_contract *c, const char *symbol);
int cn_contract_add_location(cn_contract *c, const char *path, uint32_t start_line,
                             uint32_t end_line);

/* The file part of a symbol ("a.py" for "a.py:C.m"), or 0 when the symbol
 * names no file.  Returns the length of the prefix. */
size_t cn_contract_symbol_path_len(const char *symbol);

#endif /* CN_CONTRACT_H */
