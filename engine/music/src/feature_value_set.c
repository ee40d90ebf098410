/* A set of value vectors, numbered in order of first appearance (open
 * addressing), and the sort that puts them in canonical order: how a
 * value table numbers values whose keys span too large a range to index
 * directly. */
#include "feature_internal.h"

#include <stdlib.h>
#include <string.h>

static uint64_t hash_value(const int *v, int length)
{
    uint64_t h = 0x9e3779b97f4a7c15u;
    for (int i = 0; i < length; ++i) {
        h ^= (uint32_t)v[i];
        h *= 0xbf58476d1ce4e5b9u;
        h ^= h >> 31;
    }
    return h;
}

int pn_value_set_init(pn_value_set *vs, int length)
{
    memset(vs, 0, sizeof *vs);
    vs->length = length;
    vs->capacity = 64;
    vs->values = malloc(vs->capacity * (size_t)length * sizeof *vs->values);
    vs->mask = 127;
    vs->slots = malloc((vs->mask + 1) * sizeof *vs->slots);
    if (!vs->values || !vs->slots)
        return -1;
    memset(vs->slots, 0xff, (vs->mask + 1) * sizeof *vs->slots);
    return 0;
}

void pn_value_set_free(pn_value_set *vs)
{
    free(vs->values);
    free(vs->slots);
}

static int value_set_grow(pn_value_set *vs)
{
    const size_t cap = 2 * (vs->mask + 1);
    int32_t *slots = malloc(cap * sizeof *slots);
    if (!slots)
        return -1;
    memset(slots, 0xff, cap * sizeof *slots);
    for (size_t i = 0; i < vs->count; ++i) {
        size_t s = hash_value(vs->values + i * (size_t)vs->length, vs->length) & (cap - 1);
        while (slots[s] >= 0)
            s = (s + 1) & (cap - 1);
        slots[s] = (int32_t)i;
    }
    free(vs->slots);
    vs->slots = slots;
    vs->mask = cap - 1;
    return 0;
}

int32_t pn_value_set_get(pn_value_set *vs, const int *v)
{
    const int L = vs->length;
    size_t s = hash_value(v, L) & vs->mask;
    for (;;) {
        const int32_t id = vs->slots[s];
        if (id < 0)
            break;
        if (memcmp(vs->values + (size_t)id * (size_t)L, v, (size_t)L * sizeof *v) == 0)
            return id;
        s = (s + 1) & vs->mask;
    }
    if (vs->count == vs->capacity) {
        const size_t cap = 2 * vs->capacity;
        int *p = realloc(vs->values, cap * (size_t)L * sizeof *p);
        if (!p)
            return -1;
        vs->values = p;
        vs->capacity = cap;
    }
    if (vs->count >= (size_t)INT32_MAX)
        return -1;
    const int32_t id = (int32_t)vs->count++;
    memcpy(vs->values + (size_t)id * (size_t)L, v, (size_t)L * sizeof *v);
    vs->slots[s] = id;
    if (2 * vs->count > vs->mask + 1 && value_set_grow(vs) != 0)
        return -1;
    return id;
}

void pn_value_set_sort_ids(const pn_value_set *vs, int32_t *ids, int32_t *tmp, size_t count)
{
    const int L = vs->length;
    for (size_t width = 1; width < count; width *= 2) {
        for (size_t lo = 0; lo < count; lo += 2 * width) {
            const size_t mid = lo + width < count ? lo + width : count;
            const size_t hi = lo + 2 * width < count ? lo + 2 * width : count;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                const int *a = vs->values + (size_t)ids[i] * (size_t)L;
                const int *b = vs->values + (size_t)ids[j] * (size_t)L;
                tmp[k++] = pn_feature_value_compare(b, a, L) < 0 ? ids[j++] : ids[i++];
            }
            while (i < mid)
                tmp[k++] = ids[i++];
            while (j < hi)
                tmp[k++] = ids[j++];
        }
        memcpy(ids, tmp, count * sizeof *ids);
    }
}
