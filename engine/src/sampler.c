/* Alias tables (Vose's construction), group member lists and the samplers
 * built from them. docs/sampler.md explains the layout and the precision.
 *
 * A column of an alias table takes outcome 0 (its own entry) with
 * probability keep/2^64 and outcome 1 (its alias) otherwise. One 64-bit word
 * drives a draw: its product with the table size n, a 128-bit number, has
 * the column in its high word and a uniform coin in its low word.
 *
 * The samplers store, per column and outcome, where the outcome's members
 * start in the member list and how many there are, so a draw reads one
 * column and one member: two memory accesses, whatever the sizes. */
#include "parnassus/sampler.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Plain tables: first[0] = the column's entry, first[1] = its alias, count
 * unused. Sampler tables: first/count = the members of the two outcomes. */
typedef struct alias_column {
    uint64_t keep;
    uint32_t first[2];
    uint32_t count[2];
} alias_column;

/* Tables and member lists index with 32 bits. */
#define PN_SAMPLER_MAX_SIZE INT32_MAX

/* ---- 64 x 64 -> 128 bit products ---- */

#if defined(__SIZEOF_INT128__)
__extension__ typedef unsigned __int128 pn_u128;

static inline uint64_t mul_hi_lo(uint64_t a, uint64_t b, uint64_t *lo)
{
    const pn_u128 p = (pn_u128)a * b;
    *lo = (uint64_t)p;
    return (uint64_t)(p >> 64);
}
#else
static inline uint64_t mul_hi_lo(uint64_t a, uint64_t b, uint64_t *lo)
{
    const uint64_t a0 = a & 0xffffffffu, a1 = a >> 32;
    const uint64_t b0 = b & 0xffffffffu, b1 = b >> 32;
    const uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    const uint64_t mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
    *lo = (mid << 32) | (p00 & 0xffffffffu);
    return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}
#endif

/* Index in [0, n) from 64 uniform bits (bias below n / 2^64). */
static inline uint64_t below(uint64_t bits, uint64_t n)
{
    uint64_t lo;
    return mul_hi_lo(bits, n, &lo);
}

/* The column and the outcome (0 keep, 1 alias) of one draw. */
static inline const alias_column *column_pick(const alias_column *col, int64_t n, uint64_t bits,
                                              int *outcome)
{
    uint64_t lo;
    const alias_column *c = col + mul_hi_lo(bits, (uint64_t)n, &lo);
    *outcome = lo >= c->keep;
    return c;
}

/* A uniform member of the chosen outcome. */
static inline int64_t member_pick(const alias_column *c, int outcome, const int32_t *members,
                                  uint64_t bits)
{
    return members[c->first[outcome] + below(bits, c->count[outcome])];
}

/* keep probability in [0, 1] as a fraction of 2^64, saturating at 1. */
static inline uint64_t keep_bits(double keep)
{
    if (!(keep > 0.0))
        return 0;
    if (keep >= 1.0)
        return UINT64_MAX;
    return (uint64_t)(keep * 0x1.0p64);
}

/* Sum with Neumaier's compensation; returns -1 if a weight is negative or
 * not finite. */
static double checked_sum(const double *w, int64_t n)
{
    double sum = 0.0, comp = 0.0;
    for (int64_t i = 0; i < n; ++i) {
        const double v = w[i];
        if (!(v >= 0.0) || !isfinite(v))
            return -1.0;
        const double t = sum + v;
        comp += fabs(sum) >= v ? (sum - t) + v : (v - t) + sum;
        sum = t;
    }
    return sum + comp;
}

/* Vose's construction over scaled[0..n-1], which holds the weights on entry
 * (scratch afterwards); total is their positive sum. work holds n indices:
 * the "small" stack grows from the front, the "large" one from the back, and
 * an index is on at most one of them, so they never meet. */
static void alias_fill(alias_column *col, double *scaled, int64_t n, double total, int32_t *work)
{
    const double scale = (double)n / total;
    int64_t ns = 0, nl = 0;
    for (int32_t i = 0; i < (int32_t)n; ++i) {
        scaled[i] *= scale;
        if (scaled[i] < 1.0)
            work[ns++] = i;
        else
            work[n - 1 - nl++] = i;
    }
    while (ns > 0 && nl > 0) {
        const int32_t s = work[--ns];
        const int32_t l = work[n - nl];
        col[s].keep = keep_bits(scaled[s]);
        col[s].first[0] = (uint32_t)s;
        col[s].first[1] = (uint32_t)l;
        /* the large entry gives away 1 - scaled[s] */
        scaled[l] = (scaled[l] + scaled[s]) - 1.0;
        if (scaled[l] < 1.0) {
            --nl;
            work[ns++] = l;
        }
    }
    /* what is left is 1 up to rounding */
    while (ns > 0) {
        const int32_t s = work[--ns];
        col[s].keep = UINT64_MAX;
        col[s].first[0] = col[s].first[1] = (uint32_t)s;
    }
    while (nl > 0) {
        const int32_t l = work[n - nl--];
        col[l].keep = UINT64_MAX;
        col[l].first[0] = col[l].first[1] = (uint32_t)l;
    }
}

/* ---- Alias table ---- */

struct pn_alias {
    int64_t capacity;
    int64_t n; /* 0: empty */
    alias_column *col;
    double *scaled;
    int32_t *work;
};

pn_error pn_alias_create(int64_t capacity, pn_alias **out, pn_error_info *info)
{
    *out = NULL;
    if (capacity < 1 || capacity > PN_SAMPLER_MAX_SIZE)
        return pn_fail(info, PN_ERR_INVALID, "alias table capacity %" PRId64 " out of range",
                       capacity);
    pn_alias *a = calloc(1, sizeof *a);
    if (!a)
        return pn_fail(info, PN_ERR_NOMEM, "out of memory for an alias table");
    a->capacity = capacity;
    a->col = malloc((size_t)capacity * sizeof *a->col);
    a->scaled = malloc((size_t)capacity * sizeof *a->scaled);
    a->work = malloc((size_t)capacity * sizeof *a->work);
    if (!a->col || !a->scaled || !a->work) {
        pn_alias_free(a);
        return pn_fail(info, PN_ERR_NOMEM, "out of memory for an alias table of %" PRId64,
                       capacity);
    }
    *out = a;
    return PN_OK;
}

void pn_alias_free(pn_alias *alias)
{
    if (!alias)
        return;
    free(alias->col);
    free(alias->scaled);
    free(alias->work);
    free(alias);
}

pn_error pn_alias_build(pn_alias *alias, const double *weights, int64_t n, pn_error_info *info)
{
    alias->n = 0;
    if (n < 1 || n > alias->capacity)
        return pn_fail(info, PN_ERR_INVALID,
                       "alias table: %" PRId64 " weights for a capacity of %" PRId64, n,
                       alias->capacity);
    const double total = checked_sum(weights, n);
    if (total < 0.0)
        return pn_fail(info, PN_ERR_INVALID, "alias table: a weight is negative or not finite");
    if (!(total > 0.0) || !isfinite(total))
        return pn_fail(info, PN_ERR_INVALID, "alias table: weights sum to %g", total);
    memcpy(alias->scaled, weights, (size_t)n * sizeof *weights);
    alias_fill(alias->col, alias->scaled, n, total, alias->work);
    alias->n = n;
    return PN_OK;
}

int64_t pn_alias_size(const pn_alias *alias)
{
    return alias->n;
}

int64_t pn_alias_draw(const pn_alias *alias, uint64_t random_bits)
{
    if (alias->n == 0)
        return -1;
    int outcome;
    const alias_column *c = column_pick(alias->col, alias->n, random_bits, &outcome);
    return c->first[outcome];
}

void pn_alias_column(const pn_alias *alias, int64_t i, double *keep, int64_t *other)
{
    const alias_column c = alias->col[i];
    *keep = c.keep == UINT64_MAX ? 1.0 : (double)c.keep * 0x1.0p-64;
    *other = c.first[1];
}

/* ---- Group members ---- */

struct pn_group_index {
    int64_t n;
    int64_t num_groups;
    int64_t *start;   /* num_groups + 1 */
    int32_t *members; /* n */
};

pn_error pn_group_index_build(const int32_t *group_of, int64_t n, int64_t num_groups,
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

/* ---- Sampler ---- */

enum { BLOCK = 32 }; /* draws in flight in pn_sampler_draw_many */

#if defined(__GNUC__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)(p))
#endif

struct pn_sampler {
    const pn_group_index *index;
    int64_t n;         /* columns: the groups with mass; 0 until masses are set */
    alias_column *col; /* K' */
    double *scaled;    /* K': scratch of the rebuild */
    int32_t *work;     /* K': scratch of the rebuild */
    int32_t *support;  /* K': the groups with mass, in order (column i is support[i]) */
};

pn_error pn_sampler_create(const pn_problem *prob, const pn_group_index *index, pn_sampler **out,
                           pn_error_info *info)
{
    *out = NULL;
    if (index->num_groups != prob->num_groups || index->n != prob->n)
        return pn_fail(info, PN_ERR_INVALID,
                       "sampler: index has %" PRId64 " groups over %" PRId64
                       " inputs, problem %" PRId64 " over %" PRId64,
                       index->num_groups, index->n, prob->num_groups, prob->n);
    for (int64_t k = 0; k < prob->num_groups; ++k)
        if (pn_group_index_size(index, k) != prob->group_size[k])
            return pn_fail(info, PN_ERR_INVALID,
                           "sampler: group %" PRId64 " has %" PRId64
                           " members in the index, %" PRId64 " in the problem",
                           k, pn_group_index_size(index, k), prob->group_size[k]);
    const size_t G = (size_t)index->num_groups;
    pn_sampler *s = calloc(1, sizeof *s);
    if (!s)
        return pn_fail(info, PN_ERR_NOMEM, "out of memory for a sampler");
    s->index = index;
    s->col = malloc(G * sizeof *s->col);
    s->scaled = malloc(G * sizeof *s->scaled);
    s->work = malloc(G * sizeof *s->work);
    s->support = malloc(G * sizeof *s->support);
    if (!s->col || !s->scaled || !s->work || !s->support) {
        pn_sampler_free(s);
        return pn_fail(info, PN_ERR_NOMEM, "out of memory for a sampler over %zu groups", G);
    }
    *out = s;
    return PN_OK;
}

void pn_sampler_free(pn_sampler *sampler)
{
    if (!sampler)
        return;
    free(sampler->col);
    free(sampler->scaled);
    free(sampler->work);
    free(sampler->support);
    free(sampler);
}

pn_error pn_sampler_set_q(pn_sampler *sampler, const double *q, pn_error_info *info)
{
    const pn_group_index *index = sampler->index;
    const int64_t G = index->num_groups;
    sampler->n = 0;
    const double total = checked_sum(q, G);
    if (total < 0.0)
        return pn_fail(info, PN_ERR_INVALID, "sampler: a mass is negative or not finite");
    if (!(total > 0.0) || !isfinite(total))
        return pn_fail(info, PN_ERR_INVALID, "sampler: masses sum to %g", total);
    /* the table covers the groups with mass only: a realization's support
     * is a small part of the groups, and so is the rebuild */
    int64_t S = 0;
    for (int64_t k = 0; k < G; ++k) {
        if (!(q[k] > 0.0))
            continue;
        if (index->start[k + 1] == index->start[k])
            return pn_fail(info, PN_ERR_INVALID,
                           "sampler: mass %g on group %" PRId64 ", which is empty", q[k], k);
        sampler->support[S] = (int32_t)k;
        sampler->scaled[S++] = q[k];
    }
    alias_fill(sampler->col, sampler->scaled, S, total, sampler->work);
    /* outcome -> group -> its members */
    for (int64_t i = 0; i < S; ++i) {
        alias_column *c = sampler->col + i;
        for (int o = 0; o < 2; ++o) {
            const int32_t k = sampler->support[c->first[o]];
            c->first[o] = (uint32_t)index->start[k];
            c->count[o] = (uint32_t)(index->start[k + 1] - index->start[k]);
        }
    }
    sampler->n = S;
    return PN_OK;
}

int64_t pn_sampler_draw(const pn_sampler *sampler, pn_rng *rng)
{
    if (sampler->n == 0)
        return -1;
    int o;
    const alias_column *c = column_pick(sampler->col, sampler->n, pn_rng_next(rng), &o);
    return member_pick(c, o, sampler->index->members, pn_rng_next(rng));
}

/* Same stream as repeated pn_sampler_draw, in blocks: all columns of a block
 * are requested before any is read, then all members, so the cache misses
 * of a large table overlap instead of queueing. */
void pn_sampler_draw_many(const pn_sampler *sampler, pn_rng *rng, int64_t *out, int64_t count)
{
    if (sampler->n == 0) {
        for (int64_t i = 0; i < count; ++i)
            out[i] = -1;
        return;
    }
    const int32_t *members = sampler->index->members;
    const int64_t n = sampler->n;
    const alias_column *cols[BLOCK];
    uint64_t coin[BLOCK], pick[BLOCK], pos[BLOCK];
    for (int64_t done = 0; done < count; done += BLOCK) {
        const int64_t m = count - done < BLOCK ? count - done : BLOCK;
        for (int64_t i = 0; i < m; ++i) {
            cols[i] = sampler->col + mul_hi_lo(pn_rng_next(rng), (uint64_t)n, &coin[i]);
            pick[i] = pn_rng_next(rng);
            PREFETCH(cols[i]);
        }
        for (int64_t i = 0; i < m; ++i) {
            const alias_column *c = cols[i];
            const int o = coin[i] >= c->keep;
            pos[i] = c->first[o] + below(pick[i], c->count[o]);
            PREFETCH(members + pos[i]);
        }
        for (int64_t i = 0; i < m; ++i)
            out[done + i] = members[pos[i]];
    }
}

/* ---- Conditional draws ---- */

struct pn_conditional {
    int64_t n;
    int64_t num_groups;
    int32_t num_labels;
    int64_t num_pairs;
    int32_t *members;     /* n: raw inputs by (label, group), increasing within */
    int32_t *group_size;  /* K' */
    int64_t *label_pairs; /* L + 1: pairs of label l are [label_pairs[l], [l+1]) */
    int32_t *pair_group;  /* P */
    int32_t *pair_first;  /* P + 1: pair j's members are [pair_first[j], [j+1]) */
    alias_column *col;    /* P: label l's table is col + label_pairs[l] */
    double *scaled;       /* P: scratch of the rebuild */
    int32_t *work;        /* P: scratch of the rebuild */
    double *label_mass;   /* L: P(l); 0 = nothing to draw */
    int ready;
};

void pn_conditional_free(pn_conditional *cond)
{
    if (!cond)
        return;
    free(cond->members);
    free(cond->group_size);
    free(cond->label_pairs);
    free(cond->pair_group);
    free(cond->pair_first);
    free(cond->col);
    free(cond->scaled);
    free(cond->work);
    free(cond->label_mass);
    free(cond);
}

pn_error pn_conditional_create(const pn_group_index *index, const int32_t *label_of,
                               int32_t num_labels, pn_conditional **out, pn_error_info *info)
{
    *out = NULL;
    const int64_t n = index->n, G = index->num_groups;
    const int32_t L = num_labels;
    if (L < 1)
        return pn_fail(info, PN_ERR_INVALID, "conditional: %d labels", (int)L);
    for (int64_t x = 0; x < n; ++x)
        if (label_of[x] < 0 || label_of[x] >= L)
            return pn_fail(info, PN_ERR_INVALID,
                           "conditional: raw input %" PRId64 " has label %d, outside [0, %d)", x,
                           (int)label_of[x], (int)L);
    int32_t *group_at = malloc((size_t)n * sizeof *group_at); /* setup scratch */
    pn_conditional *c = calloc(1, sizeof *c);
    if (!c || !group_at)
        goto nomem;
    c->n = n;
    c->num_groups = G;
    c->num_labels = L;
    c->members = malloc((size_t)n * sizeof *c->members);
    c->group_size = malloc((size_t)G * sizeof *c->group_size);
    c->label_pairs = calloc((size_t)L + 1, sizeof *c->label_pairs);
    c->label_mass = calloc((size_t)L, sizeof *c->label_mass);
    if (!c->members || !c->group_size || !c->label_pairs || !c->label_mass)
        goto nomem;
    for (int64_t k = 0; k < G; ++k)
        c->group_size[k] = (int32_t)(index->start[k + 1] - index->start[k]);

    /* counting sort by label, visiting the inputs group by group: within a
     * label the members come out sorted by group (stable) */
    int64_t *cursor = c->label_pairs; /* borrowed: label ends, then pair starts */
    for (int64_t x = 0; x < n; ++x)
        cursor[label_of[x] + 1]++;
    for (int32_t l = 0; l < L; ++l)
        cursor[l + 1] += cursor[l];
    for (int64_t k = 0; k < G; ++k)
        for (int64_t i = index->start[k]; i < index->start[k + 1]; ++i) {
            const int32_t x = index->members[i];
            const int64_t pos = cursor[label_of[x]]++;
            c->members[pos] = x;
            group_at[pos] = (int32_t)k;
        }
    /* a pair is a run of one group within one label */
    int64_t P = 0;
    for (int64_t pos = 0; pos < n; ++pos)
        if (pos == 0 || group_at[pos] != group_at[pos - 1] ||
            label_of[c->members[pos]] != label_of[c->members[pos - 1]])
            ++P;
    c->num_pairs = P;
    c->pair_group = malloc((size_t)P * sizeof *c->pair_group);
    c->pair_first = malloc(((size_t)P + 1) * sizeof *c->pair_first);
    c->col = malloc((size_t)P * sizeof *c->col);
    c->scaled = malloc((size_t)P * sizeof *c->scaled);
    c->work = malloc((size_t)P * sizeof *c->work);
    if (!c->pair_group || !c->pair_first || !c->col || !c->scaled || !c->work)
        goto nomem;
    /* now cursor[l] is the end of label l's members; fill the pairs label by
     * label and turn label_pairs into pair starts */
    int64_t p = 0, label_begin = 0;
    for (int32_t l = 0; l < L; ++l) {
        const int64_t end = cursor[l];
        cursor[l] = p;
        for (int64_t pos = label_begin; pos < end; ++pos)
            if (pos == label_begin || group_at[pos] != group_at[pos - 1]) {
                c->pair_group[p] = group_at[pos];
                c->pair_first[p] = (int32_t)pos;
                ++p;
            }
        label_begin = end;
    }
    cursor[L] = P;
    c->pair_first[P] = (int32_t)n;
    free(group_at);
    *out = c;
    return PN_OK;
nomem:
    free(group_at);
    pn_conditional_free(c);
    return pn_fail(info, PN_ERR_NOMEM,
                   "out of memory for a conditional sampler over %" PRId64 " inputs", n);
}

pn_error pn_conditional_set_q(pn_conditional *cond, const double *q, pn_error_info *info)
{
    cond->ready = 0;
    const double total = checked_sum(q, cond->num_groups);
    if (total < 0.0)
        return pn_fail(info, PN_ERR_INVALID, "conditional: a mass is negative or not finite");
    if (!(total > 0.0) || !isfinite(total))
        return pn_fail(info, PN_ERR_INVALID, "conditional: masses sum to %g", total);
    double grand = 0.0;
    for (int32_t l = 0; l < cond->num_labels; ++l) {
        const int64_t first = cond->label_pairs[l], m = cond->label_pairs[l + 1] - first;
        double *w = cond->scaled + first;
        for (int64_t j = 0; j < m; ++j) {
            const int64_t pj = first + j;
            const int32_t k = cond->pair_group[pj];
            const int32_t c_kl = cond->pair_first[pj + 1] - cond->pair_first[pj];
            w[j] = q[k] * ((double)c_kl / (double)cond->group_size[k]);
        }
        const double t = m > 0 ? checked_sum(w, m) : 0.0;
        cond->label_mass[l] = t > 0.0 ? t : 0.0;
        grand += cond->label_mass[l];
        if (!(t > 0.0))
            continue;
        alias_column *col = cond->col + first;
        alias_fill(col, w, m, t, cond->work + first);
        /* outcome -> pair (local to the label) -> its members */
        for (int64_t j = 0; j < m; ++j)
            for (int o = 0; o < 2; ++o) {
                const int64_t pj = first + col[j].first[o];
                col[j].first[o] = (uint32_t)cond->pair_first[pj];
                col[j].count[o] = (uint32_t)(cond->pair_first[pj + 1] - cond->pair_first[pj]);
            }
    }
    if (!(grand > 0.0))
        return pn_fail(info, PN_ERR_INVALID, "conditional: no mass on any member");
    for (int32_t l = 0; l < cond->num_labels; ++l)
        cond->label_mass[l] /= grand;
    cond->ready = 1;
    return PN_OK;
}

int64_t pn_conditional_num_pairs(const pn_conditional *cond)
{
    return cond->num_pairs;
}

double pn_conditional_label_mass(const pn_conditional *cond, int32_t label)
{
    if (!cond->ready || label < 0 || label >= cond->num_labels)
        return 0.0;
    return cond->label_mass[label];
}

int64_t pn_conditional_draw(const pn_conditional *cond, int32_t label, pn_rng *rng)
{
    if (!cond->ready || label < 0 || label >= cond->num_labels || !(cond->label_mass[label] > 0.0))
        return -1;
    const int64_t first = cond->label_pairs[label];
    int o;
    const alias_column *c =
        column_pick(cond->col + first, cond->label_pairs[label + 1] - first, pn_rng_next(rng), &o);
    return member_pick(c, o, cond->members, pn_rng_next(rng));
}
