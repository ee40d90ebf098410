#include "pstep.h"
#include "helper.h"
#include "pstep_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "parnassus/memory.h"

/* LOOSE_NEWTON: Newton steps of a round that pricing will follow anyway
 * (enough to settle most such rounds: with fewer, the next round starts
 * from a support swollen by the groups just added and spends as many
 * steps shrinking it); MID_ADD: groups a round must add to be solved only
 * to MID_TOL first. */
enum { MAX_ROUNDS = 200, LOOSE_NEWTON = 16, MID_ADD = 64 };

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
    /* merge workspace: a hash table of 2 G..4 G slots, and first_of */
    const int64_t merge = pn_bytes_add(pn_bytes_mul(4 * G, 8), pn_bytes_mul(G, 4));
    /* merged_of, merged_weight, member_start, members, carry; ws, in_ws;
     * t, qt, center, kappa, cand_t; cand, support, in_pool, first_member */
    int64_t per_group = 5 * 4 + 4 + 1 + 5 * 8 + 4 + 8 + 1 + (has_row_sums ? 1 : 0);
    int64_t cols_per_cell = m <= UINT16_MAX + 1 ? 4 + 2 : 4;
    /* row_in_kept, act_row, row_act, passive, nu, nu_act, nu_try, grad,
     * dir, y_act, pair, memo_w, memo_b, row_values */
    int64_t per_row = 1 + 4 + 4 + 2 + 8 + 8 + 8 + 8 + 8 + 8 + 16 + 8 + 8 + (has_row_sums ? 16 : 0);
    int64_t bytes = pn_bytes_mul(G, per_group);
    bytes = pn_bytes_add(bytes, pn_bytes_mul(gk, cols_per_cell));
    bytes = pn_bytes_add(bytes, merge);
    bytes = pn_bytes_add(bytes, pn_bytes_mul(mm, per_row));
    bytes = pn_bytes_add(bytes, pn_linsys_bytes(m, K, G));
    bytes = pn_bytes_add(bytes, pn_bytes_mul(ws_cap, 4 * k + 8));
    bytes = pn_bytes_add(bytes, pool_cap * 4);
    /* rule_kept, rule_selected, identity_kept, act_rule, act_first,
     * act_full, row_lower */
    bytes = pn_bytes_add(
        bytes, k * (1 + 1 + PN_PSTEP_IDENTITY_SETS + 4 + 4 + 1 + (has_row_sums ? 16 : 0)));
    if (has_row_sums) {
        /* every lane: candidates (cand, cand_t, kappa), block sums and
         * positions, a helper (its stack is the system's, not counted) */
        const int64_t lane = pn_bytes_add(pn_bytes_mul(pn_pstep_lane_capacity(m, G), 4 + 8 + 8),
                                          PN_PSTEP_BLOCK * (2 * 8 + 4) + 1024);
        bytes = pn_bytes_add(bytes, pn_bytes_mul(lane, PN_PSTEP_LANES));
    }
    return bytes;
}

/* The lanes of the structured passes (threads of them, but no more than
 * there are blocks to share) and the helpers of lanes 1 and up. */
static pn_error create_lanes(pn_pstep *ps, int threads, pn_error_info *info)
{
    const int64_t cap = pn_pstep_lane_capacity(ps->m, ps->num_groups);
    const int64_t blocks = (ps->num_groups + PN_PSTEP_BLOCK - 1) / PN_PSTEP_BLOCK;
    const int lanes = blocks < threads ? (int)(blocks > 0 ? blocks : 1) : threads;
    for (int l = 0; l < lanes; ++l) {
        pn_price_lane *lane = &ps->lane[l];
        lane->ps = ps;
        lane->index = l;
        lane->cand = malloc((size_t)cap * sizeof *lane->cand);
        lane->cand_t = malloc((size_t)cap * sizeof *lane->cand_t);
        lane->kappa = malloc((size_t)cap * sizeof *lane->kappa);
        lane->block_at = malloc(PN_PSTEP_BLOCK * sizeof *lane->block_at);
        lane->block_sums = malloc(2 * PN_PSTEP_BLOCK * sizeof *lane->block_sums);
        if (!lane->cand || !lane->cand_t || !lane->kappa || !lane->block_at || !lane->block_sums)
            return pn_fail(info, PN_ERR_NOMEM, "out of memory for the p-step's lanes");
        if (l > 0) {
            pn_error err = pn_helper_create(&ps->helper[l - 1], info);
            if (err != PN_OK)
                return err;
        }
        ps->lanes = l + 1;
    }
    return PN_OK;
}

pn_error pn_pstep_create(const pn_problem *prob, int threads, pn_pstep **out, pn_error_info *info)
{
    const int32_t m = prob->num_rows, K = prob->num_rules;
    const int64_t G = prob->num_groups;
    *out = NULL;
    if (threads < 1 || threads > PN_PSTEP_LANES)
        return pn_fail(info, PN_ERR_INVALID, "threads must be within [1, %d] (got %d)",
                       (int)PN_PSTEP_LANES, threads);
    pn_pstep *ps = calloc(1, sizeof *ps);
    if (!ps)
        return pn_fail(info, PN_ERR_NOMEM, "out of memory");
    ps->m = m;
    ps->num_rules = K;
    ps->num_groups = G;
    ps->rule_start = prob->rule_start;
    const size_t g = (size_t)G, mm = (size_t)m, k = (size_t)K;
    ps->rule_kept = calloc(k, 1);
    ps->rule_selected = calloc(k, 1);
    ps->identity_kept = calloc((size_t)PN_PSTEP_IDENTITY_SETS * k, 1);
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
    ps->y_act = malloc(mm * sizeof(double));
    ps->linsys = pn_linsys_create(m, K, G);
    ps->pair = malloc(2 * mm * sizeof(double));
    ps->memo_w = malloc(mm * sizeof(double));
    ps->memo_b = malloc(mm * sizeof(double));
    if (!ps->rule_kept || !ps->row_in_kept || !ps->merged_of || !ps->merged_weight ||
        !ps->member_start || !ps->members || !ps->carry || !ps->act_rule || !ps->act_first ||
        !ps->act_full || !ps->act_row || !ps->row_act || !ps->passive || !ps->cols || !ps->nu ||
        !ps->ws || !ps->in_ws || !ps->t || !ps->qt || !ps->center || !ps->kappa || !ps->support ||
        !ps->cand || !ps->cand_t || !ps->nu_act || !ps->nu_try || !ps->grad || !ps->dir ||
        !ps->y_act || !ps->linsys || !ps->pair || !ps->memo_w || !ps->memo_b || !ps->pool ||
        !ps->in_pool || !ps->identity_kept || !ps->rule_selected || !ps->ws_cols || !ps->ws_c ||
        (ps->row_sums && (!ps->row_values || !ps->first_member || !ps->row_lower))) {
        pn_pstep_free(ps);
        return pn_fail(info, PN_ERR_NOMEM, "out of memory for the p-step (m = %d, K' = %lld)",
                       (int)m, (long long)G);
    }
    pn_error err = pn_merge_workspace_create(prob, &ps->merge, info);
    if (err == PN_OK)
        err = ps->row_sums ? create_lanes(ps, threads, info) : PN_OK;
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
    for (int l = 0; l < PN_PSTEP_LANES; ++l) {
        if (l > 0)
            pn_helper_free(ps->helper[l - 1]);
        free(ps->lane[l].cand);
        free(ps->lane[l].cand_t);
        free(ps->lane[l].kappa);
        free(ps->lane[l].block_at);
        free(ps->lane[l].block_sums);
    }
    pn_merge_workspace_free(ps->merge);
    pn_linsys_free(ps->linsys);
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
                     ps->y_act,
                     ps->pair,
                     ps->memo_w,
                     ps->memo_b,
                     ps->cols16,
                     ps->pool,
                     ps->in_pool,
                     ps->row_values,
                     ps->identity_kept,
                     ps->rule_selected,
                     ps->first_member,
                     ps->row_lower,
                     ps->ws_cols,
                     ps->ws_c};
    for (size_t i = 0; i < sizeof owned / sizeof owned[0]; ++i)
        free(owned[i]);
    free(ps);
}

void pn_pstep_clear_working_set(pn_pstep *ps)
{
    for (int64_t p = 0; p < ps->ws_count; ++p)
        ps->in_ws[ps->ws[p]] = 0;
    ps->ws_count = 0;
    ps->ws_synced = 0;
    pn_linsys_forget_support(ps->linsys);
    ps->support_count = 0;
}

/* Empties the pool of earlier supports (its ids are merged groups of the
 * current structure). */
void pn_pstep_clear_pool(pn_pstep *ps)
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
    pn_linsys_forget_factor(ps->linsys);
    memset(ps->nu, 0, (size_t)ps->m * sizeof *ps->nu);
    pn_pstep_clear_working_set(ps);
}

/* Drops working-set entries without mass when the set has grown large. */
static void compact_working_set(pn_pstep *ps, int64_t keep_at_least)
{
    if (ps->ws_count <= keep_at_least)
        return;
    int64_t out = 0;
    for (int64_t p = 0; p < ps->ws_count; ++p) {
        const int32_t j = ps->ws[p];
        if (ps->qt[p] > 0.0 || ps->center[j] > 0.0) {
            ps->qt[out] = ps->qt[p]; /* the first round's pricing reads it */
            ps->ws[out++] = j;
        } else {
            ps->in_ws[j] = 0;
        }
    }
    ps->ws_count = out;
    ps->ws_synced = 0;
    pn_linsys_forget_support(ps->linsys); /* positions moved */
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
    pn_linsys_forget_support(ps->linsys); /* positions moved */
}

/* Runs the working-set loop for penalty lambda: price, solve the working
 * set, until pricing finds no violator after an exact solve. */
static pn_outcome solve_dual(pn_pstep *ps, const double *b, const double *w, double lambda,
                             double tol, int max_newton, int skip_first, int certify, int cold)
{
    int exact = 0; /* the last restricted solve met tol */
    int was_loose = 0;
    for (int round = 0; round < MAX_ROUNDS; ++round) {
        const int64_t max_add = pn_pstep_round_add(ps->m_act, ps->support_count);
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
                added = pn_pstep_price_pool(ps, ps->nu_act, tol, max_add);
            if (added == 0) {
                added = pn_pstep_price_certify(ps, ps->nu_act, tol, max_add, b, w, lambda, &ps->kkt,
                                               &ps->gap);
                ps->cert_done = added == 0;
            }
        } else {
            /* a round that another pricing follows: the pool first, and all
             * groups only when the pool holds no violator. Not right after
             * a loose round: the pool's few violators would get an exact
             * solve that the next pass over all groups, finding a full
             * round more, makes moot (about 8 % of the slowest context
             * steps' Newton steps, docs/benchmarks.md) */
            if (ps->ws_count > 0 && ps->pool_count > 0 && !was_loose)
                added = pn_pstep_price_pool(ps, ps->nu_act, tol, max_add);
            if (added == 0)
                added = pn_pstep_price(ps, ps->nu_act, tol, max_add);
        }
        if (added == 0 && exact)
            return PN_OUTCOME_OK;
        if (ps->ws_count == 0) {
            ps->failure = "pricing left the working set empty";
            return PN_OUTCOME_P_PRICING;
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
        const pn_outcome r = pn_pstep_newton(ps, b, w, lambda, rough ? fmax(tol, MID_TOL) : tol,
                                             loose ? LOOSE_NEWTON : max_newton);
        if (r < 0)
            return r;
        if (r == PN_OUTCOME_LIMIT && !loose)
            return PN_OUTCOME_LIMIT; /* the Newton limit came first */
        exact = r == PN_OUTCOME_OK && !rough;
    }
    return PN_OUTCOME_LIMIT;
}

/* KKT residual and gap over all merged groups from the working set's q. */
static void certificate(pn_pstep *ps, const double *b, const double *w, double lambda, double *kkt,
                        double *gap)
{
    const int32_t ma = ps->m_act;
    const double total = pn_pstep_working_set_rows(ps);
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

/* The first dual and working set of a solve at lambda_p > 0. Warm: the
 * last dual (a rule dropped within the structure holds 0 on its passive
 * rows); after a re-merge the old duals no longer balance the groups'
 * sums, and 0 (every carried group supported, a support that Newton
 * shrinks quickly) is the better start. Cold: nu = -w b / lambda
 * ("nothing supplied", for pricing). */
static void start_dual(pn_pstep *ps, const double *b, const double *w, double lambda_p)
{
    const int32_t ma = ps->m_act;
    const int restart = ps->restructured;
    for (int32_t a = 0; a < ma; ++a) {
        const int32_t i = ps->act_row[a];
        ps->nu_act[a] = ps->passive[a] || (ps->have_dual && restart) ? 0.0
                        : ps->have_dual                              ? ps->nu[i]
                                                                     : -w[i] * b[i] / lambda_p;
    }
    if (!ps->have_dual)
        pn_pstep_clear_working_set(ps);
    if (ps->J <= 4 * PN_PSTEP_WS_MARGIN) {
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
                                    ? 4 * ps->support_count + 4 * PN_PSTEP_WS_MARGIN
                                    : ps->support_count);
    }
}

/* lambda_p = 0: proximal steps min f(q) + eps sum (q - q_prev)^2 / c, each
 * solved like lambda_p > 0; they converge to a minimiser of (8). */
static pn_outcome solve_proximal(pn_pstep *ps, const double *b, const double *w, double tol,
                                 int max_newton)
{
    const int32_t ma = ps->m_act;
    double wmax = 0.0;
    for (int32_t a = 0; a < ma; ++a)
        wmax = fmax(wmax, w[ps->act_row[a]]);
    const double eps = 1e-3 * wmax / (double)ps->num_groups;
    pn_pstep_clear_working_set(ps);
    ps->center_zero = 0;
    for (int64_t j = 0; j < ps->J; ++j) {
        ps->center[j] = (double)ps->merged_weight[j] / (double)ps->num_groups;
        ps->in_ws[j] = 1;
        ps->ws[j] = (int32_t)j;
    }
    ps->ws_count = ps->J;
    for (int32_t a = 0; a < ma; ++a)
        ps->nu_act[a] = 0.0;
    for (int outer = 0; outer < 2000; ++outer) {
        const pn_outcome rc = solve_dual(ps, b, w, eps, tol, max_newton, 0, 0, 0);
        if (rc < 0)
            return rc;
        double kkt, gap;
        certificate(ps, b, w, 0.0, &kkt, &gap);
        for (int64_t p = 0; p < ps->ws_count; ++p)
            ps->center[ps->ws[p]] = ps->qt[p];
        if (kkt <= tol)
            return PN_OUTCOME_OK;
    }
    return PN_OUTCOME_LIMIT;
}

/* After a solve that did not fail: keeps the dual for the next one,
 * certifies q unless the last pricing did, writes y, and remembers the
 * support and (converged at lambda_p > 0) the inputs. */
static void finish_solve(pn_pstep *ps, const pn_problem *prob, const double *w, double lambda_p,
                         double tol, pn_outcome rc, double *y)
{
    const size_t mbytes = (size_t)ps->m * sizeof *w;
    const double *b = prob->target;
    for (int32_t a = 0; a < ps->m_act; ++a)
        ps->nu[ps->act_row[a]] = ps->nu_act[a];
    ps->have_dual = lambda_p > 0.0;
    if (!(lambda_p > 0.0 && rc == PN_OUTCOME_OK && ps->cert_done))
        certificate(ps, b, w, lambda_p > 0.0 ? lambda_p : 0.0, &ps->kkt, &ps->gap);
    if (!(lambda_p > 0.0)) {
        memset(ps->center, 0, (size_t)ps->J * sizeof *ps->center);
        ps->center_zero = 1;
        ps->have_dual = 0;
    }
    realize(ps, prob, y);
    if (rc == PN_OUTCOME_OK)
        remember_support_in_pool(ps);
    if (lambda_p > 0.0 && rc == PN_OUTCOME_OK) {
        memcpy(ps->memo_w, w, mbytes);
        memcpy(ps->memo_b, b, mbytes);
        ps->memo_lambda = lambda_p;
        ps->memo_tol = tol;
        ps->memo_valid = 1;
    }
}

pn_outcome pn_pstep_solve(pn_pstep *ps, const pn_problem *prob, const double *w, double lambda_p,
                          double tol, int max_newton, double *y)
{
    const size_t mbytes = (size_t)ps->m * sizeof *w;
    const double *b = prob->target;
    ps->failure = NULL;
    ps->newton_iterations = 0;
    ps->pricing_rounds = 0;
    if (ps->memo_valid && lambda_p == ps->memo_lambda && tol == ps->memo_tol &&
        memcmp(w, ps->memo_w, mbytes) == 0 && memcmp(b, ps->memo_b, mbytes) == 0) {
        /* the same problem as the last solve, which met tol and left the
         * state as it is: its solution and certificate stand */
        realize(ps, prob, y);
        return PN_OUTCOME_OK;
    }
    ps->targets_moved = ps->memo_valid && memcmp(b, ps->memo_b, mbytes) != 0;
    /* w may have changed: the factor is only a preconditioner */
    pn_linsys_forget_support(ps->linsys);
    ps->memo_valid = 0;
    ps->cert_done = 0;
    pn_pstep_update_structure(ps, prob, w);
    pn_outcome rc;
    if (lambda_p > 0.0) {
        /* a warm dual on the same structure is the last solve's final one:
         * its pricing found nothing, so the first round goes to Newton */
        const int skip_first = ps->have_dual && !ps->restructured;
        start_dual(ps, b, w, lambda_p);
        rc = solve_dual(ps, b, w, lambda_p, tol, max_newton, skip_first, 1, !ps->have_dual);
    } else {
        rc = solve_proximal(ps, b, w, tol, max_newton);
    }
    if (rc < 0) {
        pn_pstep_reset(ps);
        return rc;
    }
    finish_solve(ps, prob, w, lambda_p, tol, rc, y);
    return rc;
}

/* pn_cholesky_factor() with the p-step's poll. */
int pn_pstep_factorise(pn_pstep *ps, double *a, int n)
{
    return pn_cholesky_factor(a, n, ps->poll, ps->poll_user);
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
