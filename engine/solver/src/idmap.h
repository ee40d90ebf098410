/* A map from 64-bit keys to 32-bit ids: a direct table when the key range
 * is small, an open-addressing hash table otherwise. pn_idmap_get() hands
 * out dense ids 0, 1, 2, ... in order of first insertion;
 * pn_idmap_get_or_add() stores an id chosen by the caller. Use one of the
 * two per map. Internal to the engine. */
#ifndef PN_IDMAP_H
#define PN_IDMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct pn_idmap_slot {
    int64_t key; /* -1 = empty */
    int32_t id;
    int32_t unused;
} pn_idmap_slot;

typedef struct pn_idmap {
    pn_idmap_slot *slots; /* hash mode: key and id per slot, together */
    int32_t *ids;         /* direct mode: id + 1 per key, 0 = empty */
    size_t capacity;      /* power of two (hash) or key range (direct) */
    size_t count;         /* keys stored */
    int direct;
} pn_idmap;

/* Direct mode for keys in [0, range) when range <= limit; otherwise a hash
 * table sized for `expected` keys (it grows on demand). */
int pn_idmap_init(pn_idmap *map, int64_t range, size_t expected);
void pn_idmap_free(pn_idmap *map);

/* The id of `key` (>= 0), inserting it with id `count` if new; *is_new
 * tells which. Returns -1 when the table cannot grow (out of memory). */
int32_t pn_idmap_get(pn_idmap *map, int64_t key, int *is_new);

/* The hash-mode part of pn_idmap_get_or_add(). */
int32_t pn_idmap_hash_get_or_add(pn_idmap *map, int64_t key, int32_t id_if_new, int *is_new);

/* The id of `key` (>= 0), inserting it with id `id_if_new` (>= 0) if new;
 * *is_new tells which. Returns -1 when the table cannot grow. */
static inline int32_t pn_idmap_get_or_add(pn_idmap *map, int64_t key, int32_t id_if_new,
                                          int *is_new)
{
    if (map->direct) {
        int32_t *slot = &map->ids[key];
        if (*slot != 0) {
            *is_new = 0;
            return *slot - 1;
        }
        *is_new = 1;
        *slot = id_if_new + 1;
        map->count++;
        return id_if_new;
    }
    return pn_idmap_hash_get_or_add(map, key, id_if_new, is_new);
}

#endif
