/*
 * arena.c — bump allocator (arena.h).  Chunks of at least 64 KiB; a large
 * request gets its own chunk.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/arena.h"

struct onp_arena_chunk {
    onp_arena_chunk *next;
    size_t cap, used;
    _Alignas(16) unsigned char mem[];
};

void *onp_arena_alloc(onp_arena *a, size_t size)
{
    if (a->fail_after && ++a->n_allocs >= a->fail_after) return NULL;
    if (size > SIZE_MAX - 64) return NULL;
    size = (size + 15) & ~(size_t)15;
    onp_arena_chunk *c = a->head;
    if (!c || c->cap - c->used < size) {
        size_t cap = size > 65536 ? size : 65536;
        c = malloc(sizeof *c + cap);
        if (!c) return NULL;
        c->cap = cap;
        c->used = 0;
        if (a->head && size > 65536) { /* keep the current chunk for small ones */
            c->next = a->head->next;
            a->head->next = c;
        } else {
            c->next = a->head;
            a->head = c;
        }
    }
    void *p = c->mem + c->used;
    c->used += size;
    a->used_total += size;
    memset(p, 0, size);
    return p;
}

void *onp_arena_array(onp_arena *a, size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size) return NULL;
    size_t total = count * size;
    return onp_arena_alloc(a, total ? total : 1);
}

char *onp_arena_strndup(onp_arena *a, const void *p, size_t n)
{
    if (n == SIZE_MAX) return NULL;
    char *s = onp_arena_alloc(a, n + 1);
    if (!s) return NULL;
    if (n) memcpy(s, p, n);
    s[n] = '\0';
    return s;
}

void onp_arena_free(onp_arena *a)
{
    onp_arena_chunk *c = a->head;
    while (c) {
        onp_arena_chunk *n = c->next;
        free(c);
        c = n;
    }
    a->head = NULL;
    a->used_total = 0;
}
