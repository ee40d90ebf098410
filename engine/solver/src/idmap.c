#include "idmap.h"

#include <stdlib.h>
#include <string.h>

enum { DIRECT_LIMIT = 1 << 24 };

static size_t pow2_at_least(size_t n)
{
    size_t c = 16;
    while (c < n)
        c <<= 1;
    return c;
}

static inline size_t hash_key(int64_t key, size_t mask)
{
    uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 17) & mask;
}

static int alloc_hash(pn_idmap *map, size_t capacity)
{
    map->slots = malloc(capacity * sizeof *map->slots);
    if (!map->slots)
        return -1;
    for (size_t s = 0; s < capacity; ++s)
        map->slots[s].key = -1;
    map->capacity = capacity;
    return 0;
}

int pn_idmap_init(pn_idmap *map, int64_t range, size_t expected)
{
    memset(map, 0, sizeof *map);
    if (range > 0 && range <= DIRECT_LIMIT) {
        map->direct = 1;
        map->capacity = (size_t)range;
        map->ids = calloc(map->capacity, sizeof *map->ids);
        return map->ids ? 0 : -1;
    }
    return alloc_hash(map, pow2_at_least(2 * (expected ? expected : 1)));
}

void pn_idmap_free(pn_idmap *map)
{
    free(map->slots);
    free(map->ids);
    memset(map, 0, sizeof *map);
}

static int grow(pn_idmap *map)
{
    size_t old_cap = map->capacity;
    pn_idmap_slot *old = map->slots;
    if (alloc_hash(map, old_cap * 2) != 0) {
        map->slots = old;
        map->capacity = old_cap;
        return -1;
    }
    size_t mask = map->capacity - 1;
    for (size_t s = 0; s < old_cap; ++s) {
        if (old[s].key < 0)
            continue;
        size_t h = hash_key(old[s].key, mask);
        while (map->slots[h].key >= 0)
            h = (h + 1) & mask;
        map->slots[h] = old[s];
    }
    free(old);
    return 0;
}

int32_t pn_idmap_hash_get_or_add(pn_idmap *map, int64_t key, int32_t id_if_new, int *is_new)
{
    for (;;) {
        size_t mask = map->capacity - 1;
        size_t h = hash_key(key, mask);
        while (map->slots[h].key >= 0) {
            if (map->slots[h].key == key) {
                *is_new = 0;
                return map->slots[h].id;
            }
            h = (h + 1) & mask;
        }
        /* keep the load factor at or below 1/2 */
        if (2 * (map->count + 1) <= map->capacity) {
            *is_new = 1;
            map->slots[h].key = key;
            map->slots[h].id = id_if_new;
            map->count++;
            return id_if_new;
        }
        if (grow(map) != 0)
            return -1;
    }
}

int32_t pn_idmap_get(pn_idmap *map, int64_t key, int *is_new)
{
    return pn_idmap_get_or_add(map, key, (int32_t)map->count, is_new);
}
