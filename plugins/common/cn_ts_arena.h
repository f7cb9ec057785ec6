/* SPDX-License-Identifier: Apache-2.0 */
/* cn_ts_arena: a parse's tree-sitter memory from one arena, dropped at once.
 *
 * libtree-sitter allocates every syntax node, stack entry and array of a
 * parse with malloc, frees most of it during the parse, and frees the rest
 * node by node when the tree is deleted: on the standard library a tenth
 * and more of the parse's time.  A backend that opens an arena for a parse
 * gets a parser whose allocations, and those of its trees and cursors,
 * come from blocks of the arena by bumping a pointer; a free inside the
 * arena is a no-op (or gives back the last block), and closing the arena
 * takes everything back at once, so the tree needs no ts_tree_delete().
 *
 * An arena is owned by one backend parser and used by one thread at a time
 * (the thread that opened it, until it closes it).  Outside an open arena,
 * and for pointers that are not in it, the allocator is libc's.  An arena
 * grows to CN_TS_ARENA_CAP bytes at most; past that, the parse's further
 * allocations come from libc and cn_ts_arena_droppable() turns false (the
 * tree must then be deleted the usual way).  Between parses the arena
 * keeps CN_TS_ARENA_KEEP bytes of its blocks for the next one.
 *
 * The allocator is installed into libtree-sitter when the plugin is loaded
 * and only when the plugin links libtree-sitter statically (CN_TS_ARENA
 * defined): a shared libtree-sitter is one allocator for every plugin of
 * the process.  CODENIB_TS_ARENA=0 in the environment turns arenas off
 * (cn_ts_arena_new() returns NULL), for comparisons.  Under AddressSanitizer
 * and valgrind every arena block is reported as a heap block of its own.
 *
 * Compiled into each language plugin; not exported. */
#ifndef CN_TS_ARENA_H
#define CN_TS_ARENA_H

#include <stdbool.h>
#include <stddef.h>

#include <tree_sitter/api.h>

#define CN_TS_ARENA_CAP ((size_t)64 << 20)  /* bytes of blocks an arena may hold */
#define CN_TS_ARENA_KEEP ((size_t)16 << 20) /* bytes of blocks kept between parses */

typedef struct cn_ts_arena cn_ts_arena;

/* A new arena, or NULL when arenas are not available (libtree-sitter linked
 * shared, CODENIB_TS_ARENA=0) or memory is short: the backend then parses
 * with its own long-lived parser as before. */
cn_ts_arena *cn_ts_arena_new(void);

/* Frees the arena and its blocks; it must not be open.  NULL is a no-op. */
void cn_ts_arena_free(cn_ts_arena *a);

/* Opens the arena on the calling thread and returns a new parser for lang
 * made in it, or NULL when the arena or another one is open on this thread
 * already, or lang is NULL or refused (its ABI; the arena is then closed
 * again).  Until cn_ts_arena_close(), libtree-sitter's allocations
 * on this thread come from the arena. */
TSParser *cn_ts_arena_open(cn_ts_arena *a, const TSLanguage *lang);

/* True while everything allocated since cn_ts_arena_open() came from the
 * arena: a tree of this parse may then be dropped without ts_tree_delete(). */
bool cn_ts_arena_droppable(const cn_ts_arena *a);

/* Deletes the parser, takes back every block (trees and cursors of the
 * parse are gone with them: none may be used afterwards) and closes the
 * arena on this thread. */
void cn_ts_arena_close(cn_ts_arena *a, TSParser *parser);

/* The parser for one parse: a new one made in a, opened for it, when a is
 * not NULL and opens; else keep (the backend's long-lived parser).  Inside
 * a parse with another arena open on this thread, that arena is set aside
 * until cn_ts_arena_done(): keep allocates from libc. */
TSParser *cn_ts_arena_parser(cn_ts_arena *a, TSParser *keep, const TSLanguage *lang);

/* Ends a parse begun with cn_ts_arena_parser(): deletes tree (may be NULL)
 * unless the arena can drop it, and closes the arena when parser is its
 * own.  With the long-lived parser, only the tree is deleted. */
void cn_ts_arena_done(cn_ts_arena *a, TSParser *parser, TSTree *tree);

/* Blocks the arena holds now, in bytes, and a lower cap than
 * CN_TS_ARENA_CAP (0: back to it); for tests. */
size_t cn_ts_arena_held(const cn_ts_arena *a);
void cn_ts_arena_set_cap(cn_ts_arena *a, size_t cap);

/* The allocator installed into libtree-sitter.  On failure it does as
 * tree-sitter's own default does, which its callers rely on (they never
 * check): a message on stderr and exit(1). */
void *cn_ts_arena_malloc(size_t size);
void *cn_ts_arena_calloc(size_t count, size_t size);
void *cn_ts_arena_realloc(void *ptr, size_t size);
void cn_ts_arena_release(void *ptr);

#endif
