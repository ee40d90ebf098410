/* Group member lists: the raw inputs of every group, in one array by
 * group (pn_group_index), and the group of every raw input recomputed
 * from a cell source (pn_group_of_compute). */
#include "sampler_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

pn_error pn_group_index_create(const int32_t *group_of, int64_t n, int64_t num_groups,
                               pn_group_index **out, pn_error_info *info)
{
    *out = NULL;
    if (n < 1 || n > INT32_MAX)
        return pn_fail(info, PN_ERR_INVALID, "group index: %" PRId64 " raw inputs out of range", n);
    if (num_groups < 1 || num_groups > INT32_MAX)
        return pn_fail(info, PN_ERR_INVALID, "group index: %" PRId64 " groups out of range",
                       num_groups);
    pn_group_index *g = calloc(1, sizeof *g);
    if (!g)
        return pn_fail(info, PN_ERR_NOMEM, "out of memory for a group index");
    g->n = n;
    g->num_groups = num_groups;
    g->start = calloc((size_t)num_groups + 1, sizeof *g->start);
    g->members = malloc((size_t)n * sizeof *g->members);
    if (!g->start || !g->members) {
        pn_group_index_free(g);
        return pn_fail(info, PN_ERR_NOMEM, "out of memory for a group index of %" PRId64, n);
    }
    for (int64_t x = 0; x < n; ++x) {
        const int32_t k = group_of[x];
        if (k < 0 || k >= num_groups) {
            pn_group_index_free(g);
            return pn_fail(info, PN_ERR_INVALID,
                           "group index: raw input %" PRId64 " in group %d, outside [0, %" PRId64
                           ")",
                           x, (int)k, num_groups);
        }
        g->start[k + 1]++;
    }
    for (int64_t k = 0; k < num_groups; ++k)
        g->start[k + 1] += g->start[k];
    /* place members using start[k] as a cursor, then shift the cursors back */
    for (int64_t x = 0; x < n; ++x)
        g->members[g->start[group_of[x]]++] = (int32_t)x;
    for (int64_t k = num_groups; k > 0; --k)
        g->start[k] = g->start[k - 1];
    g->start[0] = 0;
    *out = g;
    return PN_OK;
}

void pn_group_index_free(pn_group_index *index)
{
    if (!index)
        return;
    free(index->start);
    free(index->members);
    free(index);
}

int64_t pn_group_index_num_groups(const pn_group_index *index)
{
    return index->num_groups;
}

int64_t pn_group_index_num_inputs(const pn_group_index *index)
{
    return index->n;
}

int64_t pn_group_index_size(const pn_group_index *index, int64_t group)
{
    if (group < 0 || group >= index->num_groups)
        return 0;
    return index->start[group + 1] - index->start[group];
}

const int32_t *pn_group_index_members(const pn_group_index *index, int64_t group)
{
    return index->members + index->start[group];
}

static inline int64_t member_draw(const pn_group_index *index, int64_t group, uint64_t bits)
{
    const int64_t first = index->start[group];
    const uint64_t size = (uint64_t)(index->start[group + 1] - first);
    return index->members[first + (int64_t)below(bits, size)];
}

int64_t pn_group_index_draw(const pn_group_index *index, int64_t group, uint64_t random_bits)
{
    if (pn_group_index_size(index, group) <= 0)
        return -1;
    return member_draw(index, group, random_bits);
}

/* ---- group_of from a cell source ---- */

enum { MAP_CHUNK = 4096 };

static uint64_t tuple_hash(const int32_t *rows, int64_t stride, int32_t K)
{
    uint64_t h = 0x243F6A8885A308D3ull;
    for (int32_t r = 0; r < K; ++r) {
        h ^= (uint64_t)(uint32_t)rows[r * stride];
        h *= 0x9E3779B97F4A7C15ull;
        h ^= h >> 29;
    }
    h ^= h >> 32;
    h *= 0xD6E8FEB86659FD93ull;
    return h ^ (h >> 32);
}

/* 1 if the K rows at a (stride sa) equal those at b (stride 1). */
static int tuple_equal(const int32_t *a, int64_t sa, const int32_t *b, int32_t K)
{
    for (int32_t r = 0; r < K; ++r)
        if (a[r * sa] != b[r])
            return 0;
    return 1;
}

pn_error pn_group_of_compute(const pn_problem *prob, pn_cell_source source, void *ctx,
                             int32_t *group_of, pn_error_info *info)
{
    const int64_t n = prob->n, G = prob->num_groups;
    const int32_t K = prob->num_rules;
    if (n < 1 || n > INT32_MAX || G < 1 || G > INT32_MAX || K < 1)
        return pn_fail(info, PN_ERR_INVALID,
                       "group map: n = %" PRId64 ", %" PRId64 " groups, %d rules out of range", n,
                       G, (int)K);
    size_t cap = 16;
    while (cap < 2 * (size_t)G)
        cap <<= 1;
    const size_t mask = cap - 1;
    pn_error err = PN_OK;
    int32_t *slot = malloc(cap * sizeof *slot);
    int64_t *count = calloc((size_t)G, sizeof *count);
    int32_t *rows = malloc((size_t)K * MAP_CHUNK * sizeof *rows);
    if (!slot || !count || !rows) {
        err = pn_fail(info, PN_ERR_NOMEM, "out of memory for the group map");
        goto done;
    }
    memset(slot, 0xff, cap * sizeof *slot);
    for (int64_t k = 0; k < G; ++k) {
        const int32_t *col = prob->group_rows + k * K;
        size_t h = (size_t)tuple_hash(col, 1, K) & mask;
        while (slot[h] >= 0) {
            if (tuple_equal(prob->group_rows + (int64_t)slot[h] * K, 1, col, K)) {
                err = pn_fail(info, PN_ERR_INVALID,
                              "group map: groups %d and %" PRId64 " have the same rows",
                              (int)slot[h], k);
                goto done;
            }
            h = (h + 1) & mask;
        }
        slot[h] = (int32_t)k;
    }
    for (int64_t first = 0; first < n; first += MAP_CHUNK) {
        const int64_t m = n - first < MAP_CHUNK ? n - first : MAP_CHUNK;
        for (int32_t r = 0; r < K; ++r) {
            int32_t *cells = rows + (int64_t)r * MAP_CHUNK;
            const int32_t mr = pn_rule_size(prob, r), base = prob->rule_start[r];
            if (source(ctx, r, first, m, cells) != 0) {
                err = pn_fail(info, PN_ERR_INVALID, "group map: cell source failed for rule %s",
                              prob->rule_name[r]);
                goto done;
            }
            for (int64_t j = 0; j < m; ++j) {
                if (cells[j] < 0 || cells[j] >= mr) {
                    err = pn_fail(info, PN_ERR_INVALID,
                                  "group map: rule %s: raw input %" PRId64
                                  " has cell %d, outside [0, %d)",
                                  prob->rule_name[r], first + j, (int)cells[j], (int)mr);
                    goto done;
                }
                cells[j] += base;
            }
        }
        for (int64_t j = 0; j < m; ++j) {
            const int32_t *t = rows + j;
            size_t h = (size_t)tuple_hash(t, MAP_CHUNK, K) & mask;
            int32_t k;
            while ((k = slot[h]) >= 0 &&
                   !tuple_equal(t, MAP_CHUNK, prob->group_rows + (int64_t)k * K, K))
                h = (h + 1) & mask;
            if (k < 0) {
                err = pn_fail(info, PN_ERR_INVALID,
                              "group map: raw input %" PRId64 " matches no group of the problem",
                              first + j);
                goto done;
            }
            group_of[first + j] = k;
            count[k]++;
        }
    }
    for (int64_t k = 0; k < G; ++k)
        if (count[k] != prob->group_size[k]) {
            err = pn_fail(info, PN_ERR_INVALID,
                          "group map: group %" PRId64 " has %" PRId64
                          " raw inputs, the problem says %" PRId64,
                          k, count[k], prob->group_size[k]);
            goto done;
        }
done:
    free(slot);
    free(count);
    free(rows);
    return err;
}
