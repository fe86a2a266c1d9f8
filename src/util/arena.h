/*
 * arena.h — a bump allocator for per-model tables: many small allocations,
 * freed at once.  Allocation failure returns NULL and leaves the arena usable.
 * Internal.
 */
#ifndef ONP_UTIL_ARENA_H
#define ONP_UTIL_ARENA_H

#include <stddef.h>

typedef struct onp_arena_chunk onp_arena_chunk;
typedef struct onp_arena {
    onp_arena_chunk *head;
    size_t used_total; /* bytes handed out, for statistics */
    size_t fail_after; /* testing: fail the allocation after this many (0 = never) */
    size_t n_allocs;
} onp_arena;

/* Aligned to 16 bytes; zeroed.  NULL on overflow or out of memory. */
void *onp_arena_alloc(onp_arena *a, size_t size);
/* count * size with overflow check, zeroed. */
void *onp_arena_array(onp_arena *a, size_t count, size_t size);
/* NUL-terminated copy of n bytes. */
char *onp_arena_strndup(onp_arena *a, const void *p, size_t n);
void onp_arena_free(onp_arena *a);

#endif
