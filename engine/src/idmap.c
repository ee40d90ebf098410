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
    map->keys = malloc(capacity * sizeof *map->keys);
    map->ids = malloc(capacity * sizeof *map->ids);
    if (!map->keys || !map->ids) {
        free(map->keys);
        free(map->ids);
        map->keys = NULL;
        map->ids = NULL;
        return -1;
    }
    memset(map->keys, 0xff, capacity * sizeof *map->keys);
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
    free(map->keys);
    free(map->ids);
    memset(map, 0, sizeof *map);
}

static int grow(pn_idmap *map)
{
    size_t old_cap = map->capacity;
    int64_t *old_keys = map->keys;
    int32_t *old_ids = map->ids;
    if (alloc_hash(map, old_cap * 2) != 0) {
        map->keys = old_keys;
        map->ids = old_ids;
        map->capacity = old_cap;
        return -1;
    }
    size_t mask = map->capacity - 1;
    for (size_t s = 0; s < old_cap; ++s) {
        if (old_keys[s] < 0)
            continue;
        size_t h = hash_key(old_keys[s], mask);
        while (map->keys[h] >= 0)
            h = (h + 1) & mask;
        map->keys[h] = old_keys[s];
        map->ids[h] = old_ids[s];
    }
    free(old_keys);
    free(old_ids);
    return 0;
}

int32_t pn_idmap_get(pn_idmap *map, int64_t key, int *is_new)
{
    if (map->direct) {
        int32_t *slot = &map->ids[key];
        *is_new = (*slot == 0);
        if (*slot == 0)
            *slot = (int32_t)++map->count;
        return *slot - 1;
    }
    size_t mask = map->capacity - 1;
    size_t h = hash_key(key, mask);
    while (map->keys[h] >= 0) {
        if (map->keys[h] == key) {
            *is_new = 0;
            return map->ids[h];
        }
        h = (h + 1) & mask;
    }
    /* keep the load factor at or below 1/2 */
    if (2 * (map->count + 1) > map->capacity) {
        if (grow(map) != 0)
            return -1;
        return pn_idmap_get(map, key, is_new);
    }
    *is_new = 1;
    map->keys[h] = key;
    map->ids[h] = (int32_t)map->count;
    return (int32_t)map->count++;
}
