/* SPDX-License-Identifier: Apache-2.0 */
/* cn_ts_arena: a parse's tree-sitter memory from one arena (see
 * cn_ts_arena.h). */
#include "cn_ts_arena.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Under AddressSanitizer a block is addressable only from its allocation
 * to its free, as a heap block is. */
#if defined(__SANITIZE_ADDRESS__)
#define CN_ARENA_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CN_ARENA_ASAN 1
#endif
#endif
#ifdef CN_ARENA_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

/* Under valgrind the arena is a memory pool, each block a heap block of
 * it (the client requests cost a few instructions otherwise). */
#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define CN_ARENA_MEMCHECK 1
#endif
#endif
#ifdef CN_ARENA_MEMCHECK
#define VG_POOL_NEW(a) VALGRIND_CREATE_MEMPOOL((a), 0, 0)
#define VG_POOL_END(a) VALGRIND_DESTROY_MEMPOOL(a)
#define VG_ALLOC(a, p, n) VALGRIND_MEMPOOL_ALLOC((a), (p), (n))
#define VG_FREE(a, p) VALGRIND_MEMPOOL_FREE((a), (p))
#define VG_CHANGE(a, p, n) VALGRIND_MEMPOOL_CHANGE((a), (p), (p), (n))
#define VG_UNDEFINED(p, n) VALGRIND_MAKE_MEM_UNDEFINED((p), (n))
#define VG_NOACCESS(p, n) VALGRIND_MAKE_MEM_NOACCESS((p), (n))
#else
#define VG_POOL_NEW(a) ((void)(a))
#define VG_POOL_END(a) ((void)(a))
#define VG_ALLOC(a, p, n) ((void)(a), (void)(p), (void)(n))
#define VG_FREE(a, p) ((void)(a), (void)(p))
#define VG_CHANGE(a, p, n) ((void)(a), (void)(p), (void)(n))
#define VG_UNDEFINED(p, n) ((void)(p), (void)(n))
#define VG_NOACCESS(p, n) ((void)(p), (void)(n))
#endif

/* A chunk is one mapping: this header, then blocks.  A block is a 16-byte
 * header holding the size asked for, then the memory handed out, rounded up
 * to 16 bytes.  A freed block's memory is not handed out again, except the
 * newest block's: libtree-sitter recycles its own leaves and stack entries,
 * and most of what a parse allocates is its tree (of the standard library's
 * files, none needs more than some 10 MB). */
typedef struct chunk {
    struct chunk *next;
    size_t size; /* bytes of blocks (the mapping less this header) */
    size_t used;
    size_t pad;
} chunk;

#define HDR 16u
#define ROUND16(n) (((n) + 15u) & ~(size_t)15u)
#define FIRST_CHUNK ((size_t)1 << 20)
#define MAX_CHUNK ((size_t)16 << 20)

struct cn_ts_arena {
    chunk *used;  /* chunks blocks are in, the newest (the one allocated from) first */
    chunk *spare; /* chunks taken back, for the next blocks */
    size_t held;  /* bytes of blocks of every chunk */
    size_t cap;
    size_t next_size;    /* of the next chunk mapped */
    unsigned char *last; /* header of the newest block, while it is live */
    TSParser *parser;    /* made by cn_ts_arena_open() */
    cn_ts_arena *outer;  /* open on this thread when this one was asked to be */
    bool open;
    bool foreign; /* something since open came from libc */
};

/* The arena open on this thread, if any. */
static _Thread_local cn_ts_arena *current;

static unsigned char *data_of(chunk *c) { return (unsigned char *)(c + 1); }

static _Noreturn void out_of_memory(size_t size)
{
    /* what libtree-sitter's own allocator does (it has no way to fail) */
    fprintf(stderr, "codenib: out of memory: tree-sitter failed to allocate %zu bytes while parsing\n", size);
    exit(1);
}

static bool in_arena(const cn_ts_arena *a, const void *p)
{
    for (chunk *c = a->used; c != NULL; c = c->next) {
        const unsigned char *d = data_of(c);
        if ((const unsigned char *)p >= d && (const unsigned char *)p < d + c->size) return true;
    }
    return false;
}

static chunk *map_chunk(cn_ts_arena *a, size_t need)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), size = a->next_size, total;
    void *m;
    chunk *c;
    if (size < need) size = need;
    if (size > SIZE_MAX - sizeof(chunk) - page) return NULL;
    total = (size + sizeof(chunk) + page - 1) / page * page;
    size = total - sizeof(chunk);
    if (a->held > a->cap || size > a->cap - a->held) return NULL;
    m = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return NULL;
    c = m;
    c->size = size;
    c->used = 0;
    POISON(data_of(c), size);
    VG_NOACCESS(data_of(c), size);
    a->held += size;
    if (a->next_size < MAX_CHUNK) a->next_size *= 2;
    return c;
}

static void unmap_chunk(cn_ts_arena *a, chunk *c)
{
    a->held -= c->size;
    UNPOISON(data_of(c), c->size);
    munmap(c, c->size + sizeof(chunk));
}

/* A chunk with room for need bytes at the head of a->used: the head itself,
 * a spare one, or a new one; NULL past the cap. */
static chunk *room_for(cn_ts_arena *a, size_t need)
{
    chunk *c = a->used, **pp;
    if (c != NULL && c->size - c->used >= need) return c;
    for (pp = &a->spare; *pp != NULL; pp = &(*pp)->next) {
        if ((*pp)->size >= need) break;
    }
    c = *pp;
    if (c != NULL) {
        *pp = c->next;
    } else if ((c = map_chunk(a, need)) == NULL) {
        return NULL;
    }
    c->next = a->used;
    a->used = c;
    return c;
}

static void *arena_alloc(cn_ts_arena *a, size_t size)
{
    size_t need = HDR + ROUND16(size ? size : 1);
    unsigned char *h;
    chunk *c;
    if (size > SIZE_MAX / 2 || (c = room_for(a, need)) == NULL) {
        a->foreign = true;
        return malloc(size ? size : 1);
    }
    h = data_of(c) + c->used;
    c->used += need;
    VG_ALLOC(a, h, HDR + size);
    UNPOISON(h, HDR + size);
    memcpy(h, &size, sizeof size);
    a->last = h;
    return h + HDR;
}

static size_t block_size(const unsigned char *h)
{
    size_t n;
    memcpy(&n, h, sizeof n);
    return n;
}

static void arena_free(cn_ts_arena *a, void *p)
{
    unsigned char *h = (unsigned char *)p - HDR;
    size_t size = block_size(h);
    if (h == a->last) { /* the newest block: its room is given back */
        a->used->used = (size_t)(h - data_of(a->used));
        a->last = NULL;
    }
    VG_FREE(a, h);
    POISON(h, HDR + size);
}

static void *arena_realloc(cn_ts_arena *a, void *p, size_t size)
{
    unsigned char *h = (unsigned char *)p - HDR;
    size_t old = block_size(h);
    void *q;
    if (h == a->last && size <= SIZE_MAX / 2) {
        chunk *c = a->used;
        size_t at = (size_t)(h - data_of(c)), need = HDR + ROUND16(size ? size : 1);
        if (c->size - at >= need) { /* grown or shrunk where it is */
            c->used = at + need;
            VG_CHANGE(a, h, HDR + size); /* its extent; the bytes added or cut: */
            if (size > old) {
                VG_UNDEFINED(h + HDR + old, size - old);
                UNPOISON(h + HDR + old, size - old);
            } else {
                VG_NOACCESS(h + HDR + size, old - size);
                POISON(h + HDR + size, old - size);
            }
            memcpy(h, &size, sizeof size);
            return p;
        }
    }
    if (size <= old) return p;
    q = arena_alloc(a, size);
    if (q == NULL) out_of_memory(size);
    memcpy(q, p, old);
    arena_free(a, p);
    return q;
}

void *cn_ts_arena_malloc(size_t size)
{
    cn_ts_arena *a = current;
    void *p = a != NULL ? arena_alloc(a, size) : malloc(size);
    if (p == NULL && size > 0) out_of_memory(size);
    return p;
}

void *cn_ts_arena_calloc(size_t count, size_t size)
{
    cn_ts_arena *a = current;
    void *p;
    if (size != 0 && count > SIZE_MAX / size) out_of_memory(SIZE_MAX);
    if (a == NULL) {
        p = calloc(count, size);
    } else if ((p = arena_alloc(a, count * size)) != NULL) {
        memset(p, 0, count * size);
    }
    if (p == NULL && count * size > 0) out_of_memory(count * size);
    return p;
}

void *cn_ts_arena_realloc(void *ptr, size_t size)
{
    cn_ts_arena *a = current;
    void *p;
    if (a != NULL && ptr == NULL) return cn_ts_arena_malloc(size);
    if (a != NULL && in_arena(a, ptr)) return arena_realloc(a, ptr, size);
    p = realloc(ptr, size); /* memory from before the arena opened */
    if (p == NULL && size > 0) out_of_memory(size);
    return p;
}

void cn_ts_arena_release(void *ptr)
{
    cn_ts_arena *a = current;
    if (ptr == NULL) return;
    if (a != NULL && in_arena(a, ptr)) arena_free(a, ptr);
    else free(ptr);
}

#ifdef CN_TS_ARENA
/* Installed when the plugin is loaded, before any thread can call into its
 * copy of libtree-sitter; memory allocated before is not in any arena and
 * goes back to libc. */
__attribute__((constructor)) static void install_allocator(void)
{
    ts_set_allocator(cn_ts_arena_malloc, cn_ts_arena_calloc, cn_ts_arena_realloc, cn_ts_arena_release);
}
#endif

cn_ts_arena *cn_ts_arena_new(void)
{
#ifdef CN_TS_ARENA
    const char *env = getenv("CODENIB_TS_ARENA");
    cn_ts_arena *a;
    if (env != NULL && strcmp(env, "0") == 0) return NULL;
    a = calloc(1, sizeof *a);
    if (a == NULL) return NULL;
    a->cap = CN_TS_ARENA_CAP;
    a->next_size = FIRST_CHUNK;
    VG_POOL_NEW(a);
    return a;
#else
    return NULL;
#endif
}

/* Every block taken back: the chunks become spare, and those past
 * CN_TS_ARENA_KEEP bytes are unmapped. */
static void rewind_arena(cn_ts_arena *a)
{
    size_t kept = 0;
    chunk *c, *next, *spare = NULL;
    VG_POOL_END(a);
    VG_POOL_NEW(a);
    for (c = a->used; c != NULL; c = next) {
        next = c->next;
        c->next = a->spare;
        a->spare = c;
    }
    a->used = NULL;
    a->last = NULL;
    for (c = a->spare; c != NULL; c = next) {
        next = c->next;
        if (kept + c->size <= CN_TS_ARENA_KEEP) {
            if (c->used > 0) {
                POISON(data_of(c), c->used);
                VG_NOACCESS(data_of(c), c->used);
            }
            c->used = 0;
            kept += c->size;
            c->next = spare;
            spare = c;
        } else {
            unmap_chunk(a, c);
        }
    }
    a->spare = spare;
}

void cn_ts_arena_free(cn_ts_arena *a)
{
    chunk *c, *next;
    if (a == NULL) return;
    if (a->open) cn_ts_arena_close(a, NULL);
    for (c = a->spare; c != NULL; c = next) {
        next = c->next;
        unmap_chunk(a, c);
    }
    VG_POOL_END(a);
    free(a);
}

TSParser *cn_ts_arena_open(cn_ts_arena *a, const TSLanguage *lang)
{
    TSParser *parser;
    if (a == NULL || lang == NULL || a->open || current != NULL) return NULL;
    current = a;
    a->open = true;
    a->foreign = false;
    parser = ts_parser_new();
    if (!ts_parser_set_language(parser, lang)) {
        cn_ts_arena_close(a, parser);
        return NULL;
    }
    a->parser = parser;
    return parser;
}

TSParser *cn_ts_arena_parser(cn_ts_arena *a, TSParser *keep, const TSLanguage *lang)
{
    TSParser *own;
    if (a != NULL && current != NULL && current != a && a->outer == NULL) {
        /* a parse inside another backend's: the long-lived parser keeps what
         * it allocates, which must not go into the other arena */
        a->outer = current;
        current = NULL;
        return keep;
    }
    own = a != NULL ? cn_ts_arena_open(a, lang) : NULL;
    return own != NULL ? own : keep;
}

void cn_ts_arena_done(cn_ts_arena *a, TSParser *parser, TSTree *tree)
{
    if (a != NULL && a->outer != NULL) {
        if (tree != NULL) ts_tree_delete(tree);
        current = a->outer;
        a->outer = NULL;
    } else if (a != NULL && a->open && current == a && parser != NULL && parser == a->parser) {
        if (tree != NULL && a->foreign) ts_tree_delete(tree);
        cn_ts_arena_close(a, parser);
    } else if (tree != NULL) {
        ts_tree_delete(tree);
    }
}

bool cn_ts_arena_droppable(const cn_ts_arena *a) { return a != NULL && a->open && !a->foreign; }

void cn_ts_arena_close(cn_ts_arena *a, TSParser *parser)
{
    if (a == NULL || !a->open || current != a) return;
    if (parser != NULL) ts_parser_delete(parser);
    a->parser = NULL;
    rewind_arena(a);
    a->open = false;
    current = NULL;
}

size_t cn_ts_arena_held(const cn_ts_arena *a) { return a != NULL ? a->held : 0; }

void cn_ts_arena_set_cap(cn_ts_arena *a, size_t cap)
{
    if (a != NULL) a->cap = cap > 0 && cap < CN_TS_ARENA_CAP ? cap : CN_TS_ARENA_CAP;
}
