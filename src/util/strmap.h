/*
 * strmap.h — an open-addressing hash map from NUL-terminated strings to a
 * size_t value.  Keys are borrowed (not copied): they must outlive the map,
 * which suits names living in a model's arena.  Internal.
 */
#ifndef ONP_UTIL_STRMAP_H
#define ONP_UTIL_STRMAP_H

#include <stddef.h>

typedef struct onp_strmap {
    const char **keys; /* [cap] NULL = empty slot */
    size_t *vals;      /* [cap] */
    size_t cap, n;     /* cap is a power of two */
} onp_strmap;

/* 0, or -1 when out of memory.  A zeroed map is a valid empty map. */
int onp_strmap_put(onp_strmap *m, const char *key, size_t val);
/* 1 and *val when present, 0 when absent (val may be NULL). */
int onp_strmap_get(const onp_strmap *m, const char *key, size_t *val);
void onp_strmap_free(onp_strmap *m);

#endif
