#include "pstep.h"
#include "pstep_newton.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "parnassus/memory.h"

/* LOOSE_NEWTON: Newton steps of a round that pricing will follow anyway;
 * MID_ADD: groups a round must add to be solved only to MID_TOL first;
 * CAND_SLACK: pricing's candidate list, in multiples of max_add. */
enum { MAX_ROUNDS = 200, MIN_ADD = 1024, LOOSE_NEWTON = 4, MID_ADD = 64, CAND_SLACK = 4 };

/* Most groups the pool of earlier supports holds. */
enum { POOL_CAP = 1 << 16 };

/* Working-set entries whose columns are kept in order (pn_pstep_sync_ws):
 * music's working sets hold a few thousand groups. */
enum { WS_COPY_CAP = 1 << 16 };
#define MID_TOL 1e-3

/* What pn_pstep_create() below allocates, counted the same way (keep the
 * two together): per group, per row, per rule and the dense Hessian. */
int64_t pn_pstep_bytes(int32_t m, int32_t K, int64_t G, int has_row_sums)
{
    const int64_t mm = m, k = K;
    const int64_t ws_cap = G < WS_COPY_CAP ? G : WS_COPY_CAP;
    const int64_t pool_cap = G < POOL_CAP ? G : POOL_CAP;
    const int64_t gk = pn_bytes_mul(G, k);
    const int64_t sup_cap = 64 * mm < gk ? 64 * mm : gk;
    /* merge workspace: a hash table of 2 G..4 G slots, and first_of */
    const int64_t merge = pn_bytes_add(pn_bytes_mul(4 * G, 8 + 4), pn_bytes_mul(G, 4));
    int64_t per_group = 5 * 4 + 4 + 1 + 1 + 5 * 8 + 4 + 8 + 1 + (has_row_sums ? 1 : 0);
    int64_t cols_per_cell = m <= UINT16_MAX + 1 ? 4 + 2 : 4;
    int64_t per_row = 1 + 4 + 4 + 2 + 8 + 8 + 8 + 8 + 8 + 4 + 8 + 4 + 12 + 8 + 4 + 4 + 4 + 8 + 48 +
                      16 + 8 + 8 + (has_row_sums ? 16 : 0);
    int64_t bytes = pn_bytes_mul(G, per_group);
    bytes = pn_bytes_add(bytes, pn_bytes_mul(gk, cols_per_cell));
    bytes = pn_bytes_add(bytes, merge);
    bytes = pn_bytes_add(bytes, pn_bytes_mul(mm, per_row));
    bytes = pn_bytes_add(bytes, pn_pstep_hessian_bytes(mm));
    bytes = pn_bytes_add(bytes, pn_bytes_mul(ws_cap, 4 * k + 8));
    bytes = pn_bytes_add(bytes, pn_bytes_mul(sup_cap, 4 + 8));
    bytes = pn_bytes_add(bytes, pool_cap * 4);
    bytes = pn_bytes_add(bytes, k * (1 + 1 + 4 + 4 + 1 + (has_row_sums ? 16 : 0)));
    if (has_row_sums)
        bytes = pn_bytes_add(bytes, PN_PSTEP_BLOCK * (2 * 8 + 4));
    return bytes;
}

pn_error pn_pstep_create(const pn_problem *prob, pn_pstep **out, pn_error_info *info)
{
    const int32_t m = prob->num_rows, K = prob->num_rules;
    const int64_t G = prob->num_groups;
    pn_pstep *ps = calloc(1, sizeof *ps);
    if (!ps)
        return pn_fail(info, PN_ERR_NOMEM, "out of memory");
    ps->m = m;
    ps->num_rules = K;
    ps->num_groups = G;
    ps->rule_start = prob->rule_start;
    const size_t g = (size_t)G, mm = (size_t)m, k = (size_t)K;
    ps->rule_kept = calloc(k, 1);
    ps->identity_kept = calloc(k, 1);
    ps->row_in_kept = calloc(mm, 1);
    ps->merged_of = malloc(g * sizeof(int32_t));
    ps->merged_weight = malloc(g * sizeof(int32_t));
    ps->member_start = malloc((g + 1) * sizeof(int32_t));
    ps->members = malloc(g * sizeof(int32_t));
    ps->carry = malloc(g * sizeof(int32_t));
    ps->ws_cap = G < WS_COPY_CAP ? G : WS_COPY_CAP;
    ps->ws_cols = malloc((size_t)ps->ws_cap * k * sizeof(int32_t));
    ps->ws_c = malloc((size_t)ps->ws_cap * sizeof(double));
    ps->act_rule = malloc(k * sizeof(int32_t));
    ps->act_first = malloc(k * sizeof(int32_t));
    ps->act_full = malloc(k);
    ps->act_row = malloc(mm * sizeof(int32_t));
    ps->row_act = malloc(mm * sizeof(int32_t));
    ps->passive = malloc(2 * mm); /* second half: scratch flags */
    ps->cols = malloc(g * k * sizeof(int32_t));
    if (m <= UINT16_MAX + 1)
        ps->cols16 = malloc(g * k * sizeof(uint16_t));
    ps->nu = calloc(mm, sizeof(double));
    ps->ws = malloc(g * sizeof(int32_t));
    ps->in_ws = calloc(g, 1);
    ps->in_factor = malloc(g);
    ps->factor_ws = -1;
    ps->t = malloc(g * sizeof(double));
    ps->qt = malloc(g * sizeof(double));
    ps->center = calloc(g, sizeof(double));
    ps->center_zero = 1;
    ps->kappa = malloc(g * sizeof(double));
    ps->support = malloc(g * sizeof(int64_t));
    ps->cand = malloc(g * sizeof(int32_t));
    ps->cand_t = malloc(g * sizeof(double));
    if (prob->row_sums.run) {
        ps->row_sums = &prob->row_sums;
        ps->row_values = malloc(2 * mm * sizeof(double));
        ps->block_sums = malloc(2 * PN_PSTEP_BLOCK * sizeof(double));
        ps->block_at = malloc(PN_PSTEP_BLOCK * sizeof(int32_t));
        ps->first_member = malloc(g);
        ps->row_lower = malloc(2 * k * sizeof(double));
    }
    ps->pool_cap = G < POOL_CAP ? G : POOL_CAP;
    ps->pool = malloc((size_t)ps->pool_cap * sizeof(int32_t) + 1);
    ps->in_pool = calloc(g, 1);
    ps->nu_act = malloc(mm * sizeof(double));
    ps->nu_try = malloc(mm * sizeof(double));
    ps->grad = malloc((mm + 1) * sizeof(double));
    ps->dir = malloc((mm + 1) * sizeof(double));
    ps->coupled_of = malloc(mm * sizeof(int32_t));
    ps->compact = malloc((mm + 2) * sizeof(double));
    ps->cmap = malloc(mm * sizeof(int32_t));
    ps->sup_cap = (int64_t)(64 * mm) < (int64_t)(g * k) ? (int64_t)(64 * mm) : (int64_t)(g * k);
    ps->sup_cols = malloc((size_t)ps->sup_cap * sizeof(int32_t) + 1);
    ps->sup_c = malloc((size_t)ps->sup_cap * sizeof(double) + 1);
    ps->pc_list = malloc(3 * mm * sizeof(int32_t));
    ps->hess = malloc((mm + 1) * (mm + 1) * sizeof(double));
    ps->y_act = malloc(mm * sizeof(double));
    ps->factor_of = malloc(mm * sizeof(int32_t));
    ps->elim_start = malloc((mm + 2) * sizeof(int32_t));
    ps->elim_idx = malloc((mm + 2) * sizeof(int32_t));
    ps->pre_r = malloc((mm + 2) * sizeof(double));
    /* m + 2 each: the coupled rows, mu and a zero slot for passive rows */
    ps->cg_r = malloc(6 * (mm + 2) * sizeof(double));
    ps->pair = malloc(2 * mm * sizeof(double));
    ps->memo_w = malloc(mm * sizeof(double));
    ps->memo_b = malloc(mm * sizeof(double));
    if (ps->cg_r) {
        ps->cg_z = ps->cg_r + (mm + 2);
        ps->cg_p = ps->cg_z + (mm + 2);
        ps->cg_hp = ps->cg_p + (mm + 2);
        ps->cg_diag = ps->cg_hp + (mm + 2);
        ps->cg_t = ps->cg_diag + (mm + 2);
    }
    if (!ps->rule_kept || !ps->row_in_kept || !ps->merged_of || !ps->merged_weight ||
        !ps->member_start || !ps->members || !ps->carry || !ps->act_rule || !ps->act_first ||
        !ps->act_full || !ps->act_row || !ps->row_act || !ps->passive || !ps->cols || !ps->nu ||
        !ps->ws || !ps->in_ws || !ps->in_factor || !ps->t || !ps->qt || !ps->center || !ps->kappa ||
        !ps->support || !ps->cand || !ps->cand_t || !ps->nu_act || !ps->nu_try || !ps->grad ||
        !ps->dir || !ps->coupled_of || !ps->compact || !ps->hess || !ps->y_act || !ps->factor_of ||
        !ps->cg_r || !ps->elim_start || !ps->elim_idx || !ps->pre_r || !ps->pair || !ps->memo_w ||
        !ps->memo_b || !ps->cmap || !ps->pc_list || !ps->sup_cols || !ps->sup_c || !ps->pool ||
        !ps->in_pool || !ps->identity_kept || !ps->ws_cols || !ps->ws_c ||
        (ps->row_sums && (!ps->row_values || !ps->block_sums || !ps->block_at ||
                          !ps->first_member || !ps->row_lower))) {
        pn_pstep_free(ps);
        return pn_fail(info, PN_ERR_NOMEM, "out of memory for the p-step (m = %d, K' = %lld)",
                       (int)m, (long long)G);
    }
    pn_error err = pn_merge_workspace_create(prob, &ps->merge, info);
    if (err != PN_OK) {
        pn_pstep_free(ps);
        return err;
    }
    *out = ps;
    return PN_OK;
}

void pn_pstep_free(pn_pstep *ps)
{
    if (!ps)
        return;
    pn_merge_workspace_free(ps->merge);
    void *owned[] = {ps->rule_kept,
                     ps->row_in_kept,
                     ps->merged_of,
                     ps->merged_weight,
                     ps->member_start,
                     ps->members,
                     ps->carry,
                     ps->act_rule,
                     ps->act_first,
                     ps->act_full,
                     ps->act_row,
                     ps->row_act,
                     ps->passive,
                     ps->cols,
                     ps->nu,
                     ps->ws,
                     ps->in_ws,
                     ps->t,
                     ps->qt,
                     ps->center,
                     ps->kappa,
                     ps->support,
                     ps->cand,
                     ps->cand_t,
                     ps->nu_act,
                     ps->nu_try,
                     ps->grad,
                     ps->dir,
                     ps->coupled_of,
                     ps->compact,
                     ps->hess,
                     ps->y_act,
                     ps->factor_of,
                     ps->cg_r,
                     ps->elim_start,
                     ps->elim_idx,
                     ps->pre_r,
                     ps->pair,
                     ps->memo_w,
                     ps->memo_b,
                     ps->cmap,
                     ps->pc_list,
                     ps->sup_cols,
                     ps->sup_c,
                     ps->in_factor,
                     ps->cols16,
                     ps->pool,
                     ps->in_pool,
                     ps->row_values,
                     ps->block_sums,
                     ps->identity_kept,
                     ps->block_at,
                     ps->first_member,
                     ps->row_lower,
                     ps->ws_cols,
                     ps->ws_c};
    for (size_t i = 0; i < sizeof owned / sizeof owned[0]; ++i)
        free(owned[i]);
    free(ps);
}

static void clear_working_set(pn_pstep *ps)
{
    for (int64_t p = 0; p < ps->ws_count; ++p)
        ps->in_ws[ps->ws[p]] = 0;
    ps->ws_count = 0;
    ps->ws_synced = 0;
    ps->factor_ws = -1;
    ps->support_count = 0;
}

/* Empties the pool of earlier supports (its ids are merged groups of the
 * current structure). */
static void clear_pool(pn_pstep *ps)
{
    for (int64_t i = 0; i < ps->pool_count; ++i)
        ps->in_pool[ps->pool[i]] = 0;
    ps->pool_count = 0;
    ps->pool_next = 0;
}

/* Adds group j to the pool, replacing the oldest entry once it is full. */
static void pool_add(pn_pstep *ps, int32_t j)
{
    if (ps->in_pool[j] || ps->pool_cap == 0)
        return;
    if (ps->pool_count < ps->pool_cap) {
        ps->pool[ps->pool_count++] = j;
    } else {
        ps->in_pool[ps->pool[ps->pool_next]] = 0;
        ps->pool[ps->pool_next] = j;
        ps->pool_next = (ps->pool_next + 1) % ps->pool_cap;
    }
    ps->in_pool[j] = 1;
}

/* Adds the working set's supported groups to the pool. */
static void remember_support_in_pool(pn_pstep *ps)
{
    for (int64_t p = 0; p < ps->ws_count; ++p)
        if (ps->qt[p] > 0.0)
            pool_add(ps, ps->ws[p]);
}

void pn_pstep_reset(pn_pstep *ps)
{
    ps->have_dual = 0;
    ps->memo_valid = 0;
    ps->factor_n = 0;
    memset(ps->nu, 0, (size_t)ps->m * sizeof *ps->nu);
    clear_working_set(ps);
}

/* 1 when the kept rules include every rule of a set known to leave each
 * group on its own (then no group merges: rules only split). */
static int keeps_identity_set(const pn_pstep *ps)
{
    if (!ps->identity_known)
        return 0;
    for (int32_t r = 0; r < ps->num_rules; ++r)
        if (ps->identity_kept[r] && !ps->rule_kept[r])
            return 0;
    return 1;
}

/* Merges the groups for the kept rules (merged_of, merged_weight, J).
 * Hashing every group costs tens of milliseconds in music, where the
 * selection moves between supersets of a set that already separates every
 * sonority: that case is recognised and needs no hashing. */
static void merge_kept(pn_pstep *ps, const pn_problem *prob)
{
    const int64_t G = ps->num_groups;
    if (keeps_identity_set(ps)) {
        if (!(ps->valid && ps->J == G)) {
            for (int64_t k = 0; k < G; ++k) {
                ps->merged_of[k] = (int32_t)k;
                ps->merged_weight[k] = 1;
            }
        }
        ps->J = G;
        return;
    }
    pn_merge_groups(prob, ps->row_in_kept, ps->merge, &ps->J, ps->merged_of, ps->merged_weight);
    if (ps->J == G) { /* remember the smallest such set */
        int32_t count = 0, known = 0;
        for (int32_t r = 0; r < ps->num_rules; ++r) {
            count += ps->rule_kept[r];
            known += ps->identity_kept[r];
        }
        if (!ps->identity_known || count < known) {
            memcpy(ps->identity_kept, ps->rule_kept, (size_t)ps->num_rules);
            ps->identity_known = 1;
        }
    }
}

/* Re-merges the groups when the set of kept rules changed; refreshes the
 * passive rows from w every time. */
static void update_structure(pn_pstep *ps, const pn_problem *prob, const double *w)
{
    const int32_t K = ps->num_rules;
    int changed = !ps->valid;
    for (int32_t r = 0; r < K; ++r) {
        unsigned char kept = 0;
        for (int32_t i = prob->rule_start[r]; i < prob->rule_start[r + 1]; ++i)
            kept |= w[i] > 0.0;
        changed |= kept != ps->rule_kept[r];
        ps->rule_kept[r] = kept;
    }
    if (changed) {
        /* remember the supported original groups to seed the new working set */
        int64_t carried = 0;
        if (ps->valid)
            for (int64_t p = 0; p < ps->ws_count; ++p) {
                if (!(ps->qt[p] > 0.0))
                    continue;
                const int32_t j = ps->ws[p];
                for (int32_t x = ps->member_start[j]; x < ps->member_start[j + 1]; ++x)
                    ps->carry[carried++] = ps->members[x];
            }
        ps->k_act = 0;
        ps->m_act = 0;
        for (int32_t r = 0; r < K; ++r) {
            for (int32_t i = prob->rule_start[r]; i < prob->rule_start[r + 1]; ++i) {
                ps->row_in_kept[i] = ps->rule_kept[r];
                ps->row_act[i] = ps->rule_kept[r] ? ps->m_act : -1;
                if (ps->rule_kept[r])
                    ps->act_row[ps->m_act++] = i;
            }
            if (ps->rule_kept[r]) {
                ps->act_first[ps->k_act] = ps->row_act[prob->rule_start[r]];
                ps->act_rule[ps->k_act++] = r;
            }
        }
        clear_working_set(ps);
        clear_pool(ps); /* the merged ids change */
        ps->factor_n = 0; /* the active rows were renumbered */
        merge_kept(ps, prob);
        /* members of each merged group (counting sort), and its columns
         * from its first member */
        const int64_t G = ps->num_groups;
        ps->member_start[0] = 0;
        for (int64_t j = 0; j < ps->J; ++j)
            ps->member_start[j + 1] = ps->member_start[j] + ps->merged_weight[j];
        for (int64_t j = 0; j < ps->J; ++j)
            ps->cand[j] = ps->member_start[j];
        const int32_t ka = ps->k_act;
        for (int64_t k = 0; k < G; ++k) {
            const int32_t j = ps->merged_of[k];
            if (ps->cand[j] == ps->member_start[j]) {
                const int32_t *rows = prob->group_rows + k * K;
                for (int32_t a = 0; a < ka; ++a)
                    ps->cols[(int64_t)j * ka + a] = ps->row_act[rows[ps->act_rule[a]]];
            }
            ps->members[ps->cand[j]++] = (int32_t)k;
        }
        ps->cols16_ok = ps->cols16 && ps->m_act <= UINT16_MAX + 1;
        if (ps->cols16_ok)
            for (int64_t x = 0; x < ps->J * ka; ++x)
                ps->cols16[x] = (uint16_t)ps->cols[x];
        /* every group one raw input: row sums apply, merged or not */
        ps->structured = ps->row_sums && G == prob->n;
        ps->identity = ps->structured && ps->J == G;
        for (int64_t k = 0; ps->identity && k < G; ++k)
            ps->identity = ps->merged_of[k] == (int32_t)k && ps->merged_weight[k] == 1;
        if (ps->structured && !ps->identity) {
            /* merged groups are numbered by first appearance */
            int32_t next = 0;
            for (int64_t k = 0; k < G; ++k) {
                ps->first_member[k] = ps->merged_of[k] == next;
                next += ps->first_member[k];
            }
        }
        memset(ps->center, 0, (size_t)ps->J * sizeof *ps->center);
        for (int64_t x = 0; x < carried; ++x) {
            const int32_t j = ps->merged_of[ps->carry[x]];
            if (!ps->in_ws[j]) {
                ps->in_ws[j] = 1;
                ps->ws[ps->ws_count++] = j;
            }
        }
        ps->valid = 1;
    }
    ps->restructured = changed;
    for (int32_t a = 0; a < ps->m_act; ++a)
        ps->passive[a] = !(w[ps->act_row[a]] > 0.0);
    for (int32_t k = 0; k < ps->k_act; ++k) {
        const int32_t r = ps->act_rule[k], first = ps->act_first[k];
        unsigned char full = 1;
        for (int32_t a = first; a < first + (ps->rule_start[r + 1] - ps->rule_start[r]); ++a)
            full &= !ps->passive[a];
        ps->act_full[k] = full;
    }
}

/* Value below which the `count`-th largest of v lies (quickselect on a
 * copy in place; v is reordered). */
static double kth_largest(double *v, int64_t n, int64_t count)
{
    int64_t lo = 0, hi = n - 1, k = count - 1;
    while (lo < hi) {
        const double pivot = v[lo + (hi - lo) / 2];
        int64_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] > pivot)
                ++i;
            while (v[j] < pivot)
                --j;
            if (i <= j) {
                double tmp = v[i];
                v[i] = v[j];
                v[j] = tmp;
                ++i;
                --j;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            break;
    }
    return v[k];
}

/* Sum of v over a group's k rows, with four independent partial sums (the
 * passes over all groups are bound by the latency of one long chain). */
static inline double sum_rows(const int32_t *col, int32_t k, const double *v)
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    int32_t a = 0;
    for (; a + 4 <= k; a += 4) {
        s0 += v[col[a]];
        s1 += v[col[a + 1]];
        s2 += v[col[a + 2]];
        s3 += v[col[a + 3]];
    }
    for (; a < k; ++a)
        s0 += v[col[a]];
    return (s0 + s1) + (s2 + s3);
}

/* Both sums of interleaved pairs (v[2a], v[2a + 1]) over a group's rows. */
static inline void sum_rows_pair(const int32_t *col, int32_t k, const double *v, double *first,
                                 double *second)
{
    double s0 = 0.0, s1 = 0.0, g0 = 0.0, g1 = 0.0;
    int32_t a = 0;
    for (; a + 2 <= k; a += 2) {
        const double *x = v + 2 * (int64_t)col[a], *y = v + 2 * (int64_t)col[a + 1];
        s0 += x[0];
        g0 += x[1];
        s1 += y[0];
        g1 += y[1];
    }
    if (a < k) {
        const double *x = v + 2 * (int64_t)col[a];
        s0 += x[0];
        g0 += x[1];
    }
    *first = s0 + s1;
    *second = g0 + g1;
}

/* Keeps the max_add largest of the n candidates (cand, cand_t), the
 * earliest among equals, in their order, and raises *bar to the smallest
 * kept value: a later candidate must exceed it to be among the largest.
 * Pricing calls this whenever CAND_SLACK * max_add candidates have
 * gathered, so that far from the optimum, when most groups violate, the
 * selection works on a short list instead of all K' groups; the groups
 * finally added are the same. Returns the number kept (max_add). */
static int64_t prune_candidates(pn_pstep *ps, int64_t n, int64_t max_add, double *bar)
{
    memcpy(ps->kappa, ps->cand_t, (size_t)n * sizeof *ps->kappa);
    const double cut = kth_largest(ps->kappa, n, max_add);
    int64_t ties = max_add;
    for (int64_t c = 0; c < n; ++c)
        ties -= ps->cand_t[c] > cut;
    int64_t out = 0;
    for (int64_t c = 0; c < n; ++c) {
        const double t = ps->cand_t[c];
        if (t > cut || (t == cut && ties-- > 0)) {
            ps->cand[out] = ps->cand[c];
            ps->cand_t[out++] = t;
        }
    }
    *bar = cut;
    return out;
}

/* Adds the max_add largest of the n candidates (cand, cand_t) to the
 * working set. Returns the number added. */
static int64_t add_candidates(pn_pstep *ps, int64_t n, int64_t max_add)
{
    double cut = -INFINITY;
    if (n > max_add) {
        /* keep the max_add largest: find the cut on a copy in kappa */
        memcpy(ps->kappa, ps->cand_t, (size_t)n * sizeof *ps->kappa);
        cut = kth_largest(ps->kappa, n, max_add);
    }
    int64_t added = 0;
    for (int64_t c = 0; c < n && added < max_add; ++c) {
        if (ps->cand_t[c] < cut)
            continue;
        const int32_t j = ps->cand[c];
        ps->in_ws[j] = 1;
        ps->ws[ps->ws_count++] = j;
        ++added;
    }
    return added;
}

/* Sum of v over a group's k rows given as 16-bit indices (see sum_rows). */
static inline double sum_rows16(const uint16_t *col, int32_t k, const double *v)
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    int32_t a = 0;
    for (; a + 4 <= k; a += 4) {
        s0 += v[col[a]];
        s1 += v[col[a + 1]];
        s2 += v[col[a + 2]];
        s3 += v[col[a + 3]];
    }
    for (; a < k; ++a)
        s0 += v[col[a]];
    return (s0 + s1) + (s2 + s3);
}

/* sum_rows_pair over 16-bit indices, four rows per pass (independent
 * partial sums: the passes over all groups are bound by the latency of
 * the additions). */
static inline void sum_rows_pair16(const uint16_t *col, int32_t k, const double *v, double *first,
                                   double *second)
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0, g0 = 0.0, g1 = 0.0, g2 = 0.0, g3 = 0.0;
    int32_t a = 0;
    for (; a + 4 <= k; a += 4) {
        const double *x0 = v + 2 * (int64_t)col[a], *x1 = v + 2 * (int64_t)col[a + 1];
        const double *x2 = v + 2 * (int64_t)col[a + 2], *x3 = v + 2 * (int64_t)col[a + 3];
        s0 += x0[0];
        g0 += x0[1];
        s1 += x1[0];
        g1 += x1[1];
        s2 += x2[0];
        g2 += x2[1];
        s3 += x3[0];
        g3 += x3[1];
    }
    for (; a < k; ++a) {
        const double *x = v + 2 * (int64_t)col[a];
        s0 += x[0];
        g0 += x[1];
    }
    *first = (s0 + s1) + (s2 + s3);
    *second = (g0 + g1) + (g2 + g3);
}

/* Sum of nu over group j's rows, from whichever column array is smaller. */
static inline double price_sum(const pn_pstep *ps, int64_t j, const double *nu)
{
    const int32_t ka = ps->k_act;
    return ps->cols16_ok ? sum_rows16(ps->cols16 + j * ka, ka, nu)
                         : sum_rows(ps->cols + j * ka, ka, nu);
}

static inline void price_sum_pair(const pn_pstep *ps, int64_t j, const double *pair, double *sn,
                                  double *sg)
{
    const int32_t ka = ps->k_act;
    if (ps->cols16_ok)
        sum_rows_pair16(ps->cols16 + j * ka, ka, pair, sn, sg);
    else
        sum_rows_pair(ps->cols + j * ka, ka, pair, sn, sg);
}

/* Spreads nv values per active row (src[a * nv + c]) over the global rows
 * for the row sums; rows of dropped rules get 0. */
static void spread_rows(pn_pstep *ps, const double *src, int nv)
{
    memset(ps->row_values, 0, (size_t)ps->m * (size_t)nv * sizeof *ps->row_values);
    for (int32_t a = 0; a < ps->m_act; ++a)
        for (int c = 0; c < nv; ++c)
            ps->row_values[(size_t)ps->act_row[a] * (size_t)nv + (size_t)c] =
                src[(size_t)a * (size_t)nv + (size_t)c];
    /* each rule's least value: the row sums' bound */
    for (int32_t r = 0; r < ps->num_rules; ++r)
        for (int c = 0; c < nv; ++c) {
            double least = INFINITY;
            for (int32_t i = ps->rule_start[r]; i < ps->rule_start[r + 1]; ++i)
                least = fmin(least, ps->row_values[(size_t)i * (size_t)nv + (size_t)c]);
            ps->row_lower[(size_t)r * (size_t)nv + (size_t)c] = least;
        }
}

/* The bound of a structured pass that looks for t_j > bar (and, with
 * nv = 2, for gradients below gmin): runs of inputs whose sums cannot get
 * there are skipped. NULL when the proximal centres are not 0 (a centre
 * can make any group violate). */
static const pn_row_sums_bound *pass_bound(pn_pstep *ps, double bar, double gmin)
{
    if (!ps->center_zero)
        return NULL;
    ps->bound.lower = ps->row_lower;
    /* t_j = c_j (mu - s_j) <= bar when s_j >= mu - bar / c_j; c_j >= 1
     * and bar > 0, so mu - bar serves when every c_j is 1, mu otherwise */
    ps->bound.cut[0] = ps->identity ? ps->mu - bar : ps->mu;
    ps->bound.cut[1] = gmin; /* g_j = its row sum (no centre) */
    return &ps->bound;
}

/* The merged group of raw input x in a structured pass, or -1 when x is
 * not its group's first member (a group is priced once). */
static inline int32_t group_at(const pn_pstep *ps, int64_t x)
{
    return ps->identity ? (int32_t)x : ps->first_member[x] ? ps->merged_of[x] : -1;
}

/* price() over all groups through the row sums (ps->structured). */
static int64_t price_structured(pn_pstep *ps, const double *nu, double threshold, int64_t max_add)
{
    spread_rows(ps, nu, 1);
    const double mu = ps->mu;
    const int64_t cap = CAND_SLACK * max_add;
    const int zero = ps->center_zero;
    const int64_t n = ps->num_groups;
    const double *sums = ps->block_sums;
    const int32_t *at = ps->block_at;
    double bar = threshold;
    int64_t found = 0;
    for (int64_t first = 0; first < n; first += PN_PSTEP_BLOCK) {
        const int64_t count = n - first < PN_PSTEP_BLOCK ? n - first : PN_PSTEP_BLOCK;
        const int64_t got =
            ps->row_sums->run(ps->row_sums->ctx, ps->rule_kept, ps->row_values, 1, first, count,
                              pass_bound(ps, bar, INFINITY), ps->block_at, ps->block_sums);
        for (int64_t i = 0; i < got; ++i) {
            const int32_t j = group_at(ps, first + at[i]);
            if (j < 0)
                continue;
            const double c = ps->identity ? 1.0 : (double)ps->merged_weight[j];
            const double t = (zero ? 0.0 : ps->center[j]) + c * (mu - sums[i]);
            if (t > bar && !ps->in_ws[j]) {
                ps->cand[found] = j;
                ps->cand_t[found++] = t;
                if (found == cap)
                    found = prune_candidates(ps, found, max_add, &bar);
            }
        }
    }
    return add_candidates(ps, found, max_add);
}

/* Prices every group outside the working set at (nu, mu) and adds the
 * largest violators (t_j > threshold). With an empty working set, mu is
 * first fitted over all groups. Returns the number added. */
static int64_t price(pn_pstep *ps, const double *nu, double threshold, int64_t max_add)
{
    if (ps->ws_count == 0) {
        /* a cold start: every group is a candidate; fit mu over all */
        for (int64_t j = 0; j < ps->J; ++j)
            ps->ws[j] = (int32_t)j;
        ps->ws_count = ps->J;
        pn_pstep_fit_mu(ps, nu);
        ps->ws_count = 0;
        ps->ws_synced = 0;
    }
    if (ps->structured)
        return price_structured(ps, nu, threshold, max_add);
    const double mu = ps->mu;
    const int64_t cap = CAND_SLACK * max_add;
    const int zero = ps->center_zero;
    double bar = threshold;
    int64_t n = 0;
    for (int64_t j = 0; j < ps->J; ++j) {
        if (ps->in_ws[j])
            continue;
        const double r = zero ? 0.0 : ps->center[j];
        const double t = r + ps->merged_weight[j] * (mu - price_sum(ps, j, nu));
        if (t > bar) {
            ps->cand[n] = (int32_t)j;
            ps->cand_t[n++] = t;
            if (n == cap)
                n = prune_candidates(ps, n, max_add, &bar);
        }
    }
    return add_candidates(ps, n, max_add);
}

/* price() over the pool of earlier supports only. */
static int64_t price_pool(pn_pstep *ps, const double *nu, double threshold, int64_t max_add)
{
    const double mu = ps->mu;
    const int64_t cap = CAND_SLACK * max_add;
    const int zero = ps->center_zero;
    double bar = threshold;
    int64_t n = 0;
    for (int64_t i = 0; i < ps->pool_count; ++i) {
        const int32_t j = ps->pool[i];
        if (ps->in_ws[j])
            continue;
        const double r = zero ? 0.0 : ps->center[j];
        const double t = r + ps->merged_weight[j] * (mu - price_sum(ps, j, nu));
        if (t > bar) {
            ps->cand[n] = j;
            ps->cand_t[n++] = t;
            if (n == cap)
                n = prune_candidates(ps, n, max_add, &bar);
        }
    }
    return add_candidates(ps, n, max_add);
}

/* y_act = A'q over the working set's current masses (not normalised);
 * returns their total. */
static double working_set_rows(pn_pstep *ps)
{
    const int32_t ka = ps->k_act;
    memset(ps->y_act, 0, (size_t)ps->m_act * sizeof *ps->y_act);
    double total = 0.0;
    for (int64_t p = 0; p < ps->ws_count; ++p) {
        if (!(ps->qt[p] > 0.0))
            continue;
        total += ps->qt[p];
        const int32_t *col = ws_col(ps, p);
        for (int32_t a = 0; a < ka; ++a)
            ps->y_act[col[a]] += ps->qt[p];
    }
    return total;
}

/* The last pricing pass of a solve fused with its certificate: prices the
 * groups outside the working set at (nu, mu) as price() does and, in the
 * same pass over the K' groups, computes the primal KKT residual and the
 * Frank-Wolfe gap of the working set's current (normalised) masses exactly
 * as certificate() does. The certificate is valid when nothing is added. */
static int64_t price_certify(pn_pstep *ps, const double *nu, double threshold, int64_t max_add,
                             const double *b, const double *w, double lambda, double *kkt,
                             double *gap)
{
    const int32_t ka = ps->k_act, ma = ps->m_act;
    const double total = working_set_rows(ps);
    const double scale = total > 0.0 ? 1.0 / total : 0.0;
    double *pair = ps->pair;
    for (int32_t a = 0; a < ma; ++a) {
        const int32_t i = ps->act_row[a];
        pair[2 * a] = nu[a];
        pair[2 * a + 1] = 2.0 * w[i] * (ps->y_act[a] * scale - b[i]); /* row gradient */
    }
    double gmin = INFINITY, gmax_support = -INFINITY, dot = 0.0;
    /* the working set's groups: q from their masses */
    for (int64_t p = 0; p < ps->ws_count; ++p) {
        const double q = ps->qt[p] * scale;
        double sn, sg;
        sum_rows_pair(ws_col(ps, p), ka, pair, &sn, &sg);
        const double g = 2.0 * lambda * (q - ws_center(ps, p)) / ws_weight(ps, p) + sg;
        gmin = g < gmin ? g : gmin;
        if (q > 0.0)
            gmax_support = g > gmax_support ? g : gmax_support;
        dot += q * g;
    }
    /* every other group: q = 0; priced and certified in one pass */
    const double mu = ps->mu;
    const int64_t cap = CAND_SLACK * max_add;
    const int zero = ps->center_zero;
    double bar = threshold;
    int64_t n = 0;
    if (ps->structured) {
        spread_rows(ps, pair, 2);
        const int64_t groups = ps->num_groups;
        const double *sums = ps->block_sums;
        const int32_t *at = ps->block_at;
        for (int64_t first = 0; first < groups; first += PN_PSTEP_BLOCK) {
            const int64_t count = groups - first < PN_PSTEP_BLOCK ? groups - first : PN_PSTEP_BLOCK;
            const int64_t got =
                ps->row_sums->run(ps->row_sums->ctx, ps->rule_kept, ps->row_values, 2, first, count,
                                  pass_bound(ps, bar, gmin), ps->block_at, ps->block_sums);
            for (int64_t i = 0; i < got; ++i) {
                const int32_t j = group_at(ps, first + at[i]);
                if (j < 0)
                    continue;
                const double c = ps->identity ? 1.0 : (double)ps->merged_weight[j];
                const double r = zero ? 0.0 : ps->center[j];
                const double t = r + c * (mu - sums[2 * i]);
                const double g = (zero ? 0.0 : -2.0 * lambda * r / c) + sums[2 * i + 1];
                if (!(t > bar || g < gmin) || ps->in_ws[j])
                    continue;
                if (t > bar) {
                    ps->cand[n] = j;
                    ps->cand_t[n++] = t;
                    if (n == cap)
                        n = prune_candidates(ps, n, max_add, &bar);
                }
                gmin = g < gmin ? g : gmin;
            }
        }
        *kkt = gmax_support - gmin;
        *gap = dot - gmin;
        return add_candidates(ps, n, max_add);
    }
    for (int64_t j = 0; j < ps->J; ++j) {
        if (ps->in_ws[j])
            continue;
        const double c = (double)ps->merged_weight[j], r = zero ? 0.0 : ps->center[j];
        double sn, sg;
        price_sum_pair(ps, j, pair, &sn, &sg);
        const double t = r + c * (mu - sn);
        if (t > bar) {
            ps->cand[n] = (int32_t)j;
            ps->cand_t[n++] = t;
            if (n == cap)
                n = prune_candidates(ps, n, max_add, &bar);
        }
        const double g = -2.0 * lambda * r / c + sg;
        gmin = g < gmin ? g : gmin;
    }
    *kkt = gmax_support - gmin;
    *gap = dot - gmin;
    return add_candidates(ps, n, max_add);
}

/* Drops working-set entries without mass when the set has grown large. */
static void compact_working_set(pn_pstep *ps, int64_t keep_at_least)
{
    if (ps->ws_count <= keep_at_least)
        return;
    int64_t out = 0;
    for (int64_t p = 0; p < ps->ws_count; ++p) {
        const int32_t j = ps->ws[p];
        if (ps->qt[p] > 0.0 || ps->center[j] > 0.0)
            ps->ws[out++] = j;
        else
            ps->in_ws[j] = 0;
    }
    ps->ws_count = out;
    ps->ws_synced = 0;
    ps->factor_ws = -1; /* positions moved */
}

/* Rows that no group of the working set supplies hold the dual of "nothing
 * supplied", -w b / lambda: right for pricing (it finds the groups those
 * rows need) but a poor start for Newton, as the new groups would take all
 * the mass at once. Such rows restart from 0, the dual of y = b. */
static void moderate_untouched(pn_pstep *ps, int64_t old_count)
{
    const int32_t ka = ps->k_act, ma = ps->m_act;
    unsigned char *touched = ps->passive + ma; /* m bytes of scratch after passive */
    memset(touched, 0, (size_t)ma);
    for (int64_t p = 0; p < old_count; ++p) {
        if (!(ps->qt[p] > 0.0))
            continue;
        const int32_t *col = ps->cols + (int64_t)ps->ws[p] * ka;
        for (int32_t a = 0; a < ka; ++a)
            touched[col[a]] = 1;
    }
    for (int32_t a = 0; a < ma; ++a)
        if (!touched[a])
            ps->nu_act[a] = 0.0;
}

/* Drops the working-set entries without mass at the current dual (t <= 0
 * and no proximal centre), keeping t and qt aligned with ws. */
static void drop_unsupported(pn_pstep *ps)
{
    int64_t out = 0;
    for (int64_t p = 0; p < ps->ws_count; ++p) {
        const int32_t j = ps->ws[p];
        if (ps->t[p] > 0.0 || ps->center[j] > 0.0) {
            ps->ws[out] = j;
            ps->t[out] = ps->t[p];
            ps->qt[out++] = ps->qt[p];
        } else {
            ps->in_ws[j] = 0;
        }
    }
    ps->ws_count = out;
    ps->ws_synced = 0;
    ps->factor_ws = -1; /* positions moved */
}

/* Runs the working-set loop for penalty lambda: price, solve the working
 * set, until pricing finds no violator after an exact solve. */
static int solve_dual(pn_pstep *ps, const double *b, const double *w, double lambda, double tol,
                      int max_newton, int skip_first, int certify, int cold)
{
    const int64_t max_add = ps->m_act * 2 > MIN_ADD ? (int64_t)ps->m_act * 2 : MIN_ADD;
    int exact = 0; /* the last restricted solve met tol */
    int was_loose = 0;
    for (int round = 0; round < MAX_ROUNDS; ++round) {
        ps->pricing_rounds++;
        /* cold: after a loose round, the groups it left without mass go,
         * so the working set stays near the support instead of growing by
         * max_add every round (they return if pricing finds them again);
         * warm solves keep them (their few loose rounds profit from them) */
        if (was_loose && cold)
            drop_unsupported(ps);
        const int64_t old_count = ps->ws_count;
        int64_t added = 0;
        ps->cert_done = 0;
        if (ps->ws_count == ps->J || (round == 0 && skip_first)) {
            /* everything is in the working set, or the dual is the last
             * solve's final one, which pricing found no violator at */
            added = 0;
        } else if (exact && certify) {
            /* the pool first: while it holds violators the working set is
             * not final, and a pass over all groups would find them too */
            if (ps->pool_count > 0)
                added = price_pool(ps, ps->nu_act, tol, max_add);
            if (added == 0) {
                added =
                    price_certify(ps, ps->nu_act, tol, max_add, b, w, lambda, &ps->kkt, &ps->gap);
                ps->cert_done = added == 0;
            }
        } else {
            /* a round that another pricing follows: the pool first, and all
             * groups only when the pool holds no violator */
            if (ps->ws_count > 0 && ps->pool_count > 0)
                added = price_pool(ps, ps->nu_act, tol, max_add);
            if (added == 0)
                added = price(ps, ps->nu_act, tol, max_add);
        }
        if (added == 0 && exact)
            return 0;
        if (ps->ws_count == 0) {
            ps->failure = "pricing left the working set empty";
            return -1;
        }
        if (added > 0)
            moderate_untouched(ps, old_count);
        /* after pricing, continue from mu as it is: refitting it to the
         * enlarged set would give all the mass to the few strongest new
         * violators and Newton would rebuild the support in small steps */
        ps->keep_mu = round > 0;
        /* while pricing still finds many violators the working set is far
         * from final: a few Newton steps suffice before pricing again; so
         * after new targets, whose optimum mostly lies outside the last
         * working set, which the first round starts from */
        const int loose = added == max_add || (round == 0 && skip_first && ps->targets_moved);
        /* after a round that added many groups more usually follow: a
         * moderate tolerance is enough before pricing again (the final
         * round, which adds none, is solved to tol) */
        const int rough = !loose && added >= MID_ADD;
        was_loose = loose;
        int r = pn_pstep_newton(ps, b, w, lambda, rough ? fmax(tol, MID_TOL) : tol,
                                loose ? LOOSE_NEWTON : max_newton);
        if (r < 0)
            return -1;
        if (r == 1 && !loose)
            return 1; /* the Newton limit came first */
        exact = r == 0 && !rough;
    }
    return 1;
}

/* KKT residual and gap over all merged groups from the working set's q. */
static void certificate(pn_pstep *ps, const double *b, const double *w, double lambda, double *kkt,
                        double *gap)
{
    const int32_t ma = ps->m_act;
    const double total = working_set_rows(ps);
    /* row gradients 2 w (y - b), on the normalised masses */
    const double scale = total > 0.0 ? 1.0 / total : 0.0;
    double *row_g = ps->nu_try;
    for (int32_t a = 0; a < ma; ++a) {
        const int32_t i = ps->act_row[a];
        row_g[a] = 2.0 * w[i] * (ps->y_act[a] * scale - b[i]);
    }
    /* q of every merged group: from the working set, zero elsewhere */
    for (int64_t p = 0; p < ps->ws_count; ++p)
        ps->cand_t[ps->ws[p]] = ps->qt[p] * scale;
    double gmin = INFINITY, gmax_support = -INFINITY, dot = 0.0;
    for (int64_t j = 0; j < ps->J; ++j) {
        const double q = ps->in_ws[j] ? ps->cand_t[j] : 0.0;
        double g = 2.0 * lambda * (q - ps->center[j]) / (double)ps->merged_weight[j] +
                   group_sum(ps, j, row_g);
        gmin = fmin(gmin, g);
        if (q > 0.0)
            gmax_support = fmax(gmax_support, g);
        dot += q * g;
    }
    *kkt = gmax_support - gmin;
    *gap = dot - gmin;
}

/* y = A'q from the supported merged groups' members only, and |q|^2 from
 * the merged masses (sum of q_j^2 / c_j), without touching all K' groups. */
static void realize(pn_pstep *ps, const pn_problem *prob, double *y)
{
    const int32_t K = prob->num_rules;
    double total = 0.0, qq = 0.0;
    for (int64_t p = 0; p < ps->ws_count; ++p)
        total += ps->qt[p];
    ps->scale = total > 0.0 ? 1.0 / total : 0.0;
    memset(y, 0, (size_t)prob->num_rows * sizeof *y);
    for (int64_t p = 0; p < ps->ws_count; ++p) {
        if (!(ps->qt[p] > 0.0))
            continue;
        const int32_t j = ps->ws[p];
        const double c = (double)ps->merged_weight[j];
        const double v = ps->qt[p] * ps->scale / c;
        qq += v * v * c;
        for (int32_t x = ps->member_start[j]; x < ps->member_start[j + 1]; ++x) {
            const int32_t *rows = prob->group_rows + (int64_t)ps->members[x] * K;
            for (int32_t r = 0; r < K; ++r)
                y[rows[r]] += v;
        }
    }
    ps->qq = qq;
}

void pn_pstep_expand(const pn_pstep *ps, double *q)
{
    memset(q, 0, (size_t)ps->num_groups * sizeof *q);
    for (int64_t p = 0; p < ps->ws_count; ++p) {
        if (!(ps->qt[p] > 0.0))
            continue;
        const int32_t j = ps->ws[p];
        const double v = ps->qt[p] * ps->scale / (double)ps->merged_weight[j];
        for (int32_t x = ps->member_start[j]; x < ps->member_start[j + 1]; ++x)
            q[ps->members[x]] = v;
    }
}

int pn_pstep_solve(pn_pstep *ps, const pn_problem *prob, const double *w, double lambda_p,
                   double tol, int max_newton, double *y)
{
    const size_t mbytes = (size_t)ps->m * sizeof *w;
    const double *b = prob->target;
    ps->failure = NULL;
    ps->newton_iterations = 0;
    ps->factorisations = 0;
    ps->pricing_rounds = 0;
    if (ps->memo_valid && lambda_p == ps->memo_lambda && tol == ps->memo_tol &&
        memcmp(w, ps->memo_w, mbytes) == 0 && memcmp(b, ps->memo_b, mbytes) == 0) {
        /* the same problem as the last solve, which met tol and left the
         * state as it is: its solution and certificate stand */
        realize(ps, prob, y);
        return 0;
    }
    ps->targets_moved = ps->memo_valid && memcmp(b, ps->memo_b, mbytes) != 0;
    ps->factor_ws = -1; /* w may have changed: the factor is only a preconditioner */
    ps->memo_valid = 0;
    ps->cert_done = 0;
    update_structure(ps, prob, w);
    const int32_t ma = ps->m_act;
    int rc;
    if (lambda_p > 0.0) {
        /* warm: the last dual; cold: nu = -w b / lambda ("nothing supplied") */
        /* the last dual; after the kept rules changed the old duals no
         * longer balance the groups' sums, and 0 (every carried group
         * supported, a support that Newton shrinks quickly) is the better
         * start; cold: -w b / lambda ("nothing supplied", for pricing) */
        const int restart = ps->restructured;
        /* a warm dual on the same structure is the last solve's final one:
         * its pricing found nothing, so the first round goes to Newton */
        const int skip_first = ps->have_dual && !restart;
        for (int32_t a = 0; a < ma; ++a) {
            const int32_t i = ps->act_row[a];
            ps->nu_act[a] = ps->passive[a] || (ps->have_dual && restart) ? 0.0
                            : ps->have_dual                              ? ps->nu[i]
                                                                         : -w[i] * b[i] / lambda_p;
        }
        if (!ps->have_dual)
            clear_working_set(ps);
        if (ps->J <= 4 * MIN_ADD) {
            /* small problems: every group in the working set, no pricing */
            for (int64_t j = 0; j < ps->J; ++j)
                if (!ps->in_ws[j]) {
                    ps->in_ws[j] = 1;
                    ps->ws[ps->ws_count++] = (int32_t)j;
                }
        } else {
            /* after new targets the groups near the last support help the
             * first rounds; for new weights on the same targets (the
             * alternation's later p-steps) the support is the start */
            compact_working_set(ps, ps->targets_moved || restart
                                        ? 4 * ps->support_count + 4 * MIN_ADD
                                        : ps->support_count);
        }
        rc = solve_dual(ps, b, w, lambda_p, tol, max_newton, skip_first, 1, !ps->have_dual);
    } else {
        /* lambda_p = 0: proximal steps min f(q) + eps sum (q - q_prev)^2 / c,
         * each solved like the above; they converge to a minimiser of (8) */
        double wmax = 0.0;
        for (int32_t a = 0; a < ma; ++a)
            wmax = fmax(wmax, w[ps->act_row[a]]);
        const double eps = 1e-3 * wmax / (double)ps->num_groups;
        clear_working_set(ps);
        ps->center_zero = 0;
        for (int64_t j = 0; j < ps->J; ++j) {
            ps->center[j] = (double)ps->merged_weight[j] / (double)ps->num_groups;
            ps->in_ws[j] = 1;
            ps->ws[j] = (int32_t)j;
        }
        ps->ws_count = ps->J;
        for (int32_t a = 0; a < ma; ++a)
            ps->nu_act[a] = 0.0;
        rc = 1;
        for (int outer = 0; outer < 2000; ++outer) {
            if (solve_dual(ps, b, w, eps, tol, max_newton, 0, 0, 0) < 0) {
                rc = -1;
                break;
            }
            double kkt, gap;
            certificate(ps, b, w, 0.0, &kkt, &gap);
            for (int64_t p = 0; p < ps->ws_count; ++p)
                ps->center[ps->ws[p]] = ps->qt[p];
            if (kkt <= tol) {
                rc = 0;
                break;
            }
        }
    }
    if (rc < 0) {
        pn_pstep_reset(ps);
        return -1;
    }
    for (int32_t a = 0; a < ma; ++a)
        ps->nu[ps->act_row[a]] = ps->nu_act[a];
    ps->have_dual = lambda_p > 0.0;
    if (!(lambda_p > 0.0 && rc == 0 && ps->cert_done))
        certificate(ps, b, w, lambda_p > 0.0 ? lambda_p : 0.0, &ps->kkt, &ps->gap);
    if (!(lambda_p > 0.0)) {
        memset(ps->center, 0, (size_t)ps->J * sizeof *ps->center);
        ps->center_zero = 1;
        ps->have_dual = 0;
    }
    realize(ps, prob, y);
    if (rc == 0)
        remember_support_in_pool(ps);
    if (lambda_p > 0.0 && rc == 0) {
        memcpy(ps->memo_w, w, mbytes);
        memcpy(ps->memo_b, b, mbytes);
        ps->memo_lambda = lambda_p;
        ps->memo_tol = tol;
        ps->memo_valid = 1;
    }
    return rc;
}

void pn_apply_groups(const pn_problem *prob, const double *q, double *y)
{
    const int32_t K = prob->num_rules;
    memset(y, 0, (size_t)prob->num_rows * sizeof *y);
    for (int64_t k = 0; k < prob->num_groups; ++k) {
        const int32_t *rows = prob->group_rows + k * K;
        const double v = q[k];
        if (v == 0.0)
            continue;
        for (int32_t r = 0; r < K; ++r)
            y[rows[r]] += v;
    }
}

void pn_pstep_certificate(const pn_problem *prob, const double *w, double lambda_p, const double *q,
                          double *g, double *y, double *kkt, double *gap)
{
    const int32_t K = prob->num_rules, m = prob->num_rows;
    pn_apply_groups(prob, q, y);
    for (int32_t i = 0; i < m; ++i)
        y[i] = 2.0 * w[i] * (y[i] - prob->target[i]);
    double gmin = INFINITY, gmax_support = -INFINITY, dot = 0.0;
    for (int64_t k = 0; k < prob->num_groups; ++k) {
        const int32_t *rows = prob->group_rows + k * K;
        double v = 2.0 * lambda_p * q[k];
        for (int32_t r = 0; r < K; ++r)
            v += y[rows[r]];
        g[k] = v;
        gmin = fmin(gmin, v);
        if (q[k] > 0.0)
            gmax_support = fmax(gmax_support, v);
        dot += q[k] * v;
    }
    *kkt = gmax_support - gmin;
    *gap = dot - gmin;
}
