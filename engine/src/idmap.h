/* A map from 64-bit keys to dense ids 0, 1, 2, ... handed out in order of
 * first insertion: a direct table when the key range is small, an
 * open-addressing hash table otherwise. Internal to the engine. */
#ifndef PN_IDMAP_H
#define PN_IDMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct pn_idmap {
    int64_t *keys;   /* hash mode: -1 = empty */
    int32_t *ids;    /* hash mode: id per slot; direct mode: id + 1 per key, 0 = empty */
    size_t capacity; /* power of two (hash) or key range (direct) */
    size_t count;    /* ids handed out */
    int direct;
} pn_idmap;

/* Direct mode for keys in [0, range) when range <= limit; otherwise a hash
 * table sized for `expected` keys (it grows on demand unless fixed). */
int pn_idmap_init(pn_idmap *map, int64_t range, size_t expected);
void pn_idmap_free(pn_idmap *map);

/* The id of `key` (>= 0), inserting it if new; *is_new tells which.
 * Returns -1 when the table cannot grow (out of memory). */
int32_t pn_idmap_get(pn_idmap *map, int64_t key, int *is_new);

#endif
