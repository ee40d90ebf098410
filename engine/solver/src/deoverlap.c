/* Group de-overlap by refinement: after rule r every raw input carries the
 * id of its tuple (cell_0, ..., cell_r); rule r+1 splits those ids by the
 * next cell. Ids are handed out in order of first appearance, so the final
 * groups are ordered by the first raw input of each. */
#include "parnassus/deoverlap.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "idmap.h"
#include "parnassus/memory.h"

enum { CHUNK = 1 << 14, PREFETCH = 32, SMALL_RANGE = 1 << 20 };

/* A hint to fetch what a later input will look up (the groups' first
 * children are read in no particular order). */
#if defined(__GNUC__) || defined(__clang__)
#define prefetch(p) __builtin_prefetch((p), 1)
#else
#define prefetch(p) ((void)(p))
#endif

/* Per refinement pass: where each new id came from. */
typedef struct pass_links {
    int32_t *parent; /* id before this pass */
    int32_t *cell;   /* local cell of this pass's rule */
    size_t count;
    size_t capacity;
} pass_links;

static int links_push(pass_links *l, int32_t parent, int32_t cell)
{
    if (l->count == l->capacity) {
        size_t cap = l->capacity ? 2 * l->capacity : 1024;
        int32_t *p = realloc(l->parent, cap * sizeof *p);
        if (!p)
            return -1;
        l->parent = p;
        int32_t *c = realloc(l->cell, cap * sizeof *c);
        if (!c)
            return -1;
        l->cell = c;
        l->capacity = cap;
    }
    l->parent[l->count] = parent;
    l->cell[l->count] = cell;
    l->count++;
    return 0;
}

/* The first child of a group in a refinement pass: its cell and new id. */
typedef struct child {
    int32_t cell; /* -1 = none yet */
    int32_t id;
} child;

/* The pair map of a pass over `range` (group, cell) pairs that finds up
 * to `pairs` of them (idmap.c): a direct table up to 2^24 pairs, else a
 * hash of 16-byte slots at most half full, which while it doubles holds
 * its old slots too. */
static int64_t pair_map_bytes(int64_t range, int64_t pairs)
{
    if (range <= (int64_t)1 << 24)
        return range * 4;
    int64_t slots = 16;
    while (slots < 2 * pairs && slots < INT64_MAX / 48)
        slots <<= 1;
    return pn_bytes_mul(slots, 16 + 8);
}

int64_t pn_deoverlap_bytes(int64_t n, int32_t K, const int32_t *rule_sizes)
{
    /* a pass holds the links of the passes before it, the first children
     * of its groups, its pair map and its own links while they grow by
     * doubling (old and new arrays); at the end every pass's links (up to
     * twice their count) and the group table */
    int64_t groups = 1, links = 0, peak = 0;
    for (int32_t r = 0; r < K; ++r) {
        const int64_t range = pn_bytes_mul(groups, rule_sizes[r]);
        const int64_t next = range < n ? range : n;
        const int64_t expected = next < ((int64_t)1 << 20) ? next : (int64_t)1 << 20;
        int64_t pass = pn_bytes_add(links, pn_bytes_mul(groups, 8));
        pass = pn_bytes_add(pass, pair_map_bytes(range, next > expected ? next : expected));
        pass = pn_bytes_add(pass, pn_bytes_mul(next, 3 * 8));
        peak = pass > peak ? pass : peak;
        links = pn_bytes_add(links, pn_bytes_mul(next, 2 * 8));
        groups = next;
    }
    const int64_t end = pn_bytes_add(links, pn_bytes_mul(groups, (int64_t)K * 4 + 8));
    peak = end > peak ? end : peak;
    return pn_bytes_add(pn_bytes_add(pn_bytes_mul(n, 4), CHUNK * 4), peak);
}

pn_error pn_deoverlap(pn_problem *prob, pn_cell_source source, void *ctx, pn_error_info *info)
{
    return pn_deoverlap_map(prob, source, ctx, NULL, info);
}

/* A de-overlap in progress: every raw input's group id after the passes
 * so far, the links of each pass, and the scratch of one pass. */
typedef struct refinement {
    pn_problem *prob;
    int64_t n;
    int32_t *ids;      /* n */
    int32_t *cells;    /* CHUNK: a chunk's cells, then a block of group ids */
    pass_links *links; /* K */
    child *head;       /* per current group: its first child in this pass */
    size_t head_capacity;
    pn_idmap map;
    size_t groups; /* before rule 0 every input is in one group, id 0 */
    pn_error_info *info;
} refinement;

/* One refinement pass, by rule r of mr cells. */
typedef struct pass {
    int32_t r, mr;
    int64_t range; /* (group, cell) pairs */
    int small;     /* a small pair range goes straight to a direct table */
    int map_ready;
    int32_t next; /* ids handed out in this pass */
} pass;

static pn_error out_of_memory(const refinement *rf)
{
    return pn_fail(rf->info, PN_ERR_NOMEM, "out of memory in de-overlap");
}

/* The first child of each current group sits in `head`; only the pairs of
 * later children go through the map, which is set up on the first of them
 * (most passes split few groups). */
static pn_error pass_begin(refinement *rf, pass *p, int32_t r)
{
    memset(p, 0, sizeof *p);
    p->r = r;
    p->mr = pn_rule_size(rf->prob, r);
    p->range = (int64_t)rf->groups * p->mr;
    if (rf->groups > rf->head_capacity) {
        free(rf->head);
        rf->head_capacity = rf->groups;
        rf->head = malloc(rf->head_capacity * sizeof *rf->head);
        if (!rf->head)
            return out_of_memory(rf);
    }
    for (size_t g = 0; g < rf->groups; ++g)
        rf->head[g].cell = -1;
    p->small = p->range <= SMALL_RANGE;
    if (p->small) {
        if (pn_idmap_init(&rf->map, p->range, 0) != 0)
            return out_of_memory(rf);
        p->map_ready = 1;
    }
    return PN_OK;
}

/* Splits the groups of raw inputs first..first+count-1 by their cells
 * (in rf->cells). */
static pn_error refine_chunk(refinement *rf, pass *p, int64_t first, int64_t count)
{
    const int32_t r = p->r, mr = p->mr;
    const int small = p->small;
    const int32_t *cells = rf->cells;
    int32_t *chunk_ids = rf->ids + first;
    child *head = rf->head;
    pn_idmap *map = &rf->map;
    int32_t next = p->next;
    for (int64_t j = 0; j < count; ++j) {
        if (!small && r > 0 && j + PREFETCH < count)
            prefetch(&head[chunk_ids[j + PREFETCH]]);
        const int32_t c = cells[j];
        if (c < 0 || c >= mr)
            return pn_fail(rf->info, PN_ERR_INVALID,
                           "rule %s: raw input %" PRId64 " has cell %d, outside [0, %d)",
                           rf->prob->rule_name[r], first + j, (int)c, (int)mr);
        /* before rule 0 every input is in group 0 (ids is not set yet) */
        const int32_t old = r > 0 ? chunk_ids[j] : 0;
        if (small) {
            int is_new;
            const int32_t id = pn_idmap_get_or_add(map, (int64_t)old * mr + c, next, &is_new);
            if (is_new) {
                if (links_push(&rf->links[r], old, c) != 0)
                    return out_of_memory(rf);
                next++;
            }
            chunk_ids[j] = id;
            continue;
        }
        child *h = &head[old];
        if (h->cell == c) {
            /* most passes split no group: leave unchanged ids alone */
            if (h->id != old)
                chunk_ids[j] = h->id;
            continue;
        }
        int32_t id;
        if (h->cell < 0) {
            h->cell = c;
            h->id = id = next;
        } else {
            if (!p->map_ready) {
                size_t expected = (size_t)(p->range < rf->n ? p->range : rf->n);
                if (expected > (1u << 20))
                    expected = 1u << 20;
                if (pn_idmap_init(map, p->range, expected) != 0)
                    return out_of_memory(rf);
                p->map_ready = 1;
            }
            int is_new;
            id = pn_idmap_get_or_add(map, (int64_t)old * mr + c, next, &is_new);
            if (id < 0)
                return out_of_memory(rf);
            if (!is_new) {
                chunk_ids[j] = id;
                continue;
            }
        }
        if (links_push(&rf->links[r], old, c) != 0)
            return out_of_memory(rf);
        next++;
        chunk_ids[j] = id;
    }
    p->next = next;
    return PN_OK;
}

/* Refines every raw input's group by the cell of rule r. */
static pn_error refine_pass(refinement *rf, pn_cell_source source, void *ctx, int32_t r)
{
    pass p;
    pn_error err = pass_begin(rf, &p, r);
    if (err != PN_OK)
        return err;
    const int64_t n = rf->n;
    for (int64_t first = 0; first < n; first += CHUNK) {
        int64_t count = n - first < CHUNK ? n - first : CHUNK;
        if (source(ctx, r, first, count, rf->cells) != 0)
            return pn_fail(rf->info, PN_ERR_INVALID, "cell source failed for rule %s",
                           rf->prob->rule_name[r]);
        if ((err = refine_chunk(rf, &p, first, count)) != PN_OK)
            return err;
    }
    rf->groups = (size_t)p.next;
    pn_idmap_free(&rf->map);
    return PN_OK;
}

/* Walks the links back one rule at a time over a block of groups, so the
 * lookups of different groups do not wait on each other. */
static void build_group_rows(const refinement *rf)
{
    const pn_problem *prob = rf->prob;
    const int32_t K = prob->num_rules;
    const size_t groups = rf->groups;
    for (size_t g0 = 0; g0 < groups; g0 += CHUNK) {
        const size_t block = groups - g0 < CHUNK ? groups - g0 : CHUNK;
        int32_t *cur = rf->cells; /* CHUNK entries: each group's id after rule r */
        for (size_t b = 0; b < block; ++b)
            cur[b] = (int32_t)(g0 + b);
        int32_t *rows = prob->group_rows + g0 * (size_t)K;
        for (int32_t r = K - 1; r >= 0; --r) {
            const int32_t start = prob->rule_start[r];
            const int32_t *cell = rf->links[r].cell, *parent = rf->links[r].parent;
            for (size_t b = 0; b < block; ++b) {
                const int32_t id = cur[b];
                rows[b * (size_t)K + (size_t)r] = start + cell[id];
                cur[b] = parent[id];
            }
        }
    }
}

static void refinement_free(refinement *rf)
{
    pn_idmap_free(&rf->map);
    if (rf->links)
        for (int32_t r = 0; r < rf->prob->num_rules; ++r) {
            free(rf->links[r].parent);
            free(rf->links[r].cell);
        }
    free(rf->links);
    free(rf->head);
    free(rf->cells);
    free(rf->ids);
}

pn_error pn_deoverlap_map(pn_problem *prob, pn_cell_source source, void *ctx, int32_t *group_of,
                          pn_error_info *info)
{
    const int32_t K = prob->num_rules;
    const int64_t n = prob->n;
    if (n > INT32_MAX)
        return pn_fail(info, PN_ERR_INVALID, "raw space too large for de-overlap (n = %" PRId64 ")",
                       n);
    pn_error err = PN_OK;
    refinement rf;
    memset(&rf, 0, sizeof rf);
    rf.prob = prob;
    rf.n = n;
    rf.info = info;
    rf.groups = 1;
    rf.ids = malloc((size_t)n * sizeof *rf.ids);
    rf.cells = malloc(CHUNK * sizeof *rf.cells);
    rf.links = calloc((size_t)K, sizeof *rf.links);
    if (!rf.ids || !rf.cells || !rf.links) {
        err = pn_fail(info, PN_ERR_NOMEM, "out of memory for de-overlap of %" PRId64 " inputs", n);
        goto done;
    }
    if (K == 0)
        memset(rf.ids, 0, (size_t)n * sizeof *rf.ids); /* rule 0 sets ids otherwise */
    for (int32_t r = 0; r < K; ++r)
        if ((err = refine_pass(&rf, source, ctx, r)) != PN_OK)
            goto done;

    err = pn_problem_set_groups(prob, (int64_t)rf.groups, info);
    if (err != PN_OK)
        goto done;
    memset(prob->group_size, 0, rf.groups * sizeof *prob->group_size);
    for (int64_t x = 0; x < n; ++x)
        prob->group_size[rf.ids[x]]++;
    if (group_of)
        memcpy(group_of, rf.ids, (size_t)n * sizeof *group_of);
    build_group_rows(&rf);
done:
    refinement_free(&rf);
    return err;
}

/* A slot of the merge table: a merged id (-1 = empty) and the high half
 * of its tuple's hash, so a probe touches one cache line. */
typedef struct merge_slot {
    uint32_t tag;
    int32_t id;
} merge_slot;

/* Merging hashes each group's tuple of kept cells once (a cell that is not
 * kept counts as "don't care"), checking hash hits against the first
 * member, so a merge is one pass over the groups. */
struct pn_merge_workspace {
    merge_slot *slot; /* one cache line holds eight */
    size_t mask;
    int32_t *first_of; /* K': first original group of each merged id */
    int32_t *rules;    /* K: the rules that split groups in this merge */
};

pn_error pn_merge_workspace_create(const pn_problem *prob, pn_merge_workspace **out,
                                   pn_error_info *info)
{
    pn_merge_workspace *ws = calloc(1, sizeof *ws);
    if (!ws)
        return pn_fail(info, PN_ERR_NOMEM, "out of memory");
    size_t cap = 16;
    while (cap < 2 * (size_t)prob->num_groups)
        cap <<= 1;
    ws->mask = cap - 1;
    ws->slot = malloc(cap * sizeof *ws->slot);
    ws->first_of = malloc((size_t)prob->num_groups * sizeof *ws->first_of);
    ws->rules = malloc(((size_t)prob->num_rules + 1) * sizeof *ws->rules);
    if (!ws->slot || !ws->first_of || !ws->rules) {
        pn_merge_workspace_free(ws);
        return pn_fail(info, PN_ERR_NOMEM, "out of memory for the merge workspace");
    }
    *out = ws;
    return PN_OK;
}

void pn_merge_workspace_free(pn_merge_workspace *ws)
{
    if (!ws)
        return;
    free(ws->slot);
    free(ws->first_of);
    free(ws->rules);
    free(ws);
}

/* The kept cell of group row `row`, or -1 when the row is not kept. */
static inline int32_t kept_cell(const unsigned char *keep_row, int32_t row)
{
    return keep_row[row] ? row : -1;
}

static uint64_t tuple_hash(const int32_t *rows, const int32_t *rules, int32_t count,
                           const unsigned char *keep_row)
{
    uint64_t h = 0x9E3779B97F4A7C15ull;
    for (int32_t x = 0; x < count; ++x) {
        h ^= (uint64_t)(uint32_t)kept_cell(keep_row, rows[rules[x]]);
        h *= 0xBF58476D1CE4E5B9ull;
        h ^= h >> 29;
    }
    return h;
}

static int same_tuple(const int32_t *a, const int32_t *b, const int32_t *rules, int32_t count,
                      const unsigned char *keep_row)
{
    for (int32_t x = 0; x < count; ++x)
        if (kept_cell(keep_row, a[rules[x]]) != kept_cell(keep_row, b[rules[x]]))
            return 0;
    return 1;
}

/* Groups hashed ahead of their insertion in pn_merge_groups. */
enum { MERGE_BATCH = 64 };

void pn_merge_groups(const pn_problem *prob, const unsigned char *keep_row, pn_merge_workspace *ws,
                     int64_t *num_merged, int32_t *merged_of, int32_t *merged_weight)
{
    const int32_t K = prob->num_rules;
    const int64_t G = prob->num_groups;
    /* the rules that split groups: those with a kept row */
    int32_t *rules = ws->rules, count = 0, all_kept = 1;
    for (int32_t r = 0; r < K; ++r) {
        int any = 0;
        for (int32_t i = prob->rule_start[r]; i < prob->rule_start[r + 1]; ++i) {
            any |= keep_row[i] != 0;
            all_kept &= keep_row[i] != 0;
        }
        if (any)
            rules[count++] = r;
    }
    if (all_kept) {
        /* nothing merges: the groups are already the distinct columns */
        for (int64_t k = 0; k < G; ++k) {
            merged_of[k] = (int32_t)k;
            merged_weight[k] = 1;
        }
        *num_merged = G;
        return;
    }
    memset(ws->slot, 0xff, (ws->mask + 1) * sizeof *ws->slot);
    int32_t next = 0;
    uint64_t batch_hash[MERGE_BATCH];
    for (int64_t k = 0; k < G; ++k) {
        const int32_t *rows = prob->group_rows + k * K;
        const int64_t in_batch = k % MERGE_BATCH;
        if (in_batch == 0) {
            /* the table is far larger than the caches (tens of MB in
             * music): hash a batch first, asking for each slot as its hash
             * is known, so the fetches overlap before the batch is inserted
             * in the same order as ever */
            const int64_t end = k + MERGE_BATCH < G ? k + MERGE_BATCH : G;
            for (int64_t b = k; b < end; ++b) {
                const uint64_t hb = tuple_hash(prob->group_rows + b * K, rules, count, keep_row);
                batch_hash[b - k] = hb;
                const size_t sb = (size_t)(hb >> 20) & ws->mask;
                __builtin_prefetch(&ws->slot[sb]);
            }
        }
        const uint64_t h = batch_hash[in_batch];
        size_t slot = (size_t)(h >> 20) & ws->mask;
        int32_t id = -1;
        while (ws->slot[slot].id >= 0) {
            const int32_t cand = ws->slot[slot].id;
            if (ws->slot[slot].tag == (uint32_t)(h >> 32) &&
                same_tuple(rows, prob->group_rows + (int64_t)ws->first_of[cand] * K, rules, count,
                           keep_row)) {
                id = cand;
                break;
            }
            slot = (slot + 1) & ws->mask;
        }
        if (id < 0) {
            id = next++;
            ws->slot[slot].id = id;
            ws->slot[slot].tag = (uint32_t)(h >> 32);
            ws->first_of[id] = (int32_t)k;
            merged_weight[id] = 0;
        }
        merged_of[k] = id;
        merged_weight[id]++;
    }
    *num_merged = next;
}
