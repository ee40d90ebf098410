/* The p-step's pricing (pstep.h): passes over all groups, or over the pool
 * of earlier supports, that find the largest violators and add them to the
 * working set; the last one also certifies the solution. */
#include <math.h>
#include <string.h>

#include "helper.h"
#include "pstep_internal.h"

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
 * Pricing calls this whenever PN_PSTEP_CAND_SLACK * max_add candidates have
 * gathered, so that far from the optimum, when most groups violate, the
 * selection works on a short list instead of all K' groups; the groups
 * finally added are the same. kappa is scratch for n values. Returns the
 * number kept (max_add). */
static int64_t prune_candidates(int32_t *cand, double *cand_t, double *kappa, int64_t n,
                                int64_t max_add, double *bar)
{
    memcpy(kappa, cand_t, (size_t)n * sizeof *kappa);
    const double cut = kth_largest(kappa, n, max_add);
    int64_t ties = max_add;
    for (int64_t c = 0; c < n; ++c)
        ties -= cand_t[c] > cut;
    int64_t out = 0;
    for (int64_t c = 0; c < n; ++c) {
        const double t = cand_t[c];
        if (t > cut || (t == cut && ties-- > 0)) {
            cand[out] = cand[c];
            cand_t[out++] = t;
        }
    }
    *bar = cut;
    return out;
}

/* Adds the max_add largest of the n candidates (cand, cand_t) to the
 * working set, the earliest among equals, in their order (the same groups
 * however the candidates were gathered and pruned on the way). Returns
 * the number added. */
static int64_t add_candidates(pn_pstep *ps, int64_t n, int64_t max_add)
{
    if (n > max_add) {
        double bar;
        n = prune_candidates(ps->cand, ps->cand_t, ps->kappa, n, max_add, &bar);
    }
    for (int64_t c = 0; c < n; ++c) {
        const int32_t j = ps->cand[c];
        ps->in_ws[j] = 1;
        ps->ws[ps->ws_count++] = j;
    }
    return n;
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
    if (ps->row_sums->prepare) /* prepared for each pass: they take their own bounds */
        return;
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
static const pn_row_sums_bound *pass_bound(const pn_pstep *ps, pn_price_lane *lane, double bar,
                                           double gmin)
{
    if (!ps->center_zero)
        return NULL;
    lane->bound.prepared = ps->row_sums->prepare != NULL; /* structured_pass called it */
    lane->bound.lower = lane->bound.prepared ? NULL : ps->row_lower;
    /* t_j = c_j (mu - s_j) <= bar when s_j >= mu - bar / c_j; c_j >= 1
     * and bar > 0, so mu - bar serves when every c_j is 1, mu otherwise */
    lane->bound.cut[0] = ps->identity ? ps->mu - bar : ps->mu;
    lane->bound.cut[1] = gmin; /* g_j = its row sum (no centre) */
    return &lane->bound;
}

/* The merged group of raw input x in a structured pass, or -1 when x is
 * not its group's first member (a group is priced once). */
static inline int32_t group_at(const pn_pstep *ps, int64_t x)
{
    return ps->identity ? (int32_t)x : ps->first_member[x] ? ps->merged_of[x] : -1;
}

/* One lane's share of a structured pass (a pn_helper_job): the groups
 * outside the working set whose t_j exceeds the pass's threshold become
 * candidates, the largest PN_PSTEP_CAND_SLACK * max_add at most; with two values
 * per row (the certifying pass) it also lowers lane->gmin to the least
 * gradient. Reads the p-step, writes only the lane. */
static void lane_pass(void *arg)
{
    pn_price_lane *lane = arg;
    const pn_pstep *ps = lane->ps;
    const int nv = ps->pass_nv;
    const double mu = ps->mu, lambda = ps->pass_lambda;
    const int64_t max_add = ps->pass_max_add, cap = PN_PSTEP_CAND_SLACK * max_add;
    const int zero = ps->center_zero;
    const double *sums = lane->block_sums;
    const int32_t *at = lane->block_at;
    const int64_t n = ps->num_groups, stride = (int64_t)ps->lanes * PN_PSTEP_BLOCK;
    double bar = ps->pass_threshold, gmin = lane->gmin;
    int64_t found = 0;
    for (int64_t first = (int64_t)lane->index * PN_PSTEP_BLOCK; first < n; first += stride) {
        const int64_t count = n - first < PN_PSTEP_BLOCK ? n - first : PN_PSTEP_BLOCK;
        const int64_t got = ps->row_sums->run(
            ps->row_sums->ctx, lane->index, ps->rule_kept, ps->row_values, nv, first, count,
            pass_bound(ps, lane, bar, nv == 2 ? gmin : INFINITY), lane->block_at, lane->block_sums);
        for (int64_t i = 0; i < got; ++i) {
            const int32_t j = group_at(ps, first + at[i]);
            if (j < 0)
                continue;
            const double c = ps->identity ? 1.0 : (double)ps->merged_weight[j];
            const double r = zero ? 0.0 : ps->center[j];
            const double t = r + c * (mu - sums[nv * i]);
            if (nv == 2) {
                const double g = (zero ? 0.0 : -2.0 * lambda * r / c) + sums[2 * i + 1];
                if (!(t > bar || g < gmin) || ps->in_ws[j])
                    continue;
                gmin = g < gmin ? g : gmin;
            } else if (ps->in_ws[j]) {
                continue;
            }
            if (t > bar) {
                lane->cand[found] = j;
                lane->cand_t[found++] = t;
                if (found == cap)
                    found = prune_candidates(lane->cand, lane->cand_t, lane->kappa, found, max_add,
                                             &bar);
            }
        }
    }
    lane->found = found;
    lane->gmin = gmin;
}

/* Joins the lanes' candidates into (ps->cand, ps->cand_t) in input
 * order: each lane's are in input order, and merged groups are numbered
 * in the order of their first inputs, so the smallest group id comes
 * first. Returns how many. */
static int64_t merge_lanes(pn_pstep *ps, int lanes)
{
    int64_t out = 0;
    for (int l = 0; l < lanes; ++l)
        ps->lane[l].next = 0;
    for (;;) {
        pn_price_lane *from = NULL;
        for (int l = 0; l < lanes; ++l) {
            pn_price_lane *lane = &ps->lane[l];
            if (lane->next < lane->found &&
                (!from || lane->cand[lane->next] < from->cand[from->next]))
                from = lane;
        }
        if (!from)
            return out;
        ps->cand[out] = from->cand[from->next];
        ps->cand_t[out++] = from->cand_t[from->next++];
    }
}

/* A structured pass over all groups (ps->row_values spread for nv values
 * per row), split into the p-step's lanes: the helpers pass over their
 * blocks at the same time as the caller over its own; the candidates,
 * joined in input order, are pruned to the max_add largest as one serial
 * pass would (the same groups, the earliest among equals), and added.
 * *gmin (nv = 2) comes in as the working set's least gradient and leaves
 * as the least over all groups. */
static int64_t structured_pass(pn_pstep *ps, int nv, double threshold, double lambda,
                               int64_t max_add, double *gmin)
{
    const int lanes = ps->lanes;
    ps->pass_nv = nv;
    ps->pass_threshold = threshold;
    ps->pass_lambda = lambda;
    ps->pass_max_add = max_add;
    for (int l = 0; l < lanes; ++l)
        ps->lane[l].gmin = nv == 2 ? *gmin : INFINITY;
    if (ps->center_zero && ps->row_sums->prepare) /* for pass_bound's tighter bounds */
        ps->row_sums->prepare(ps->row_sums->ctx, ps->rule_kept, ps->row_values, nv);
    for (int l = 1; l < lanes; ++l)
        pn_helper_start(ps->helper[l - 1], lane_pass, &ps->lane[l]);
    lane_pass(&ps->lane[0]);
    double least = ps->lane[0].gmin;
    for (int l = 1; l < lanes; ++l) {
        pn_helper_wait(ps->helper[l - 1]);
        least = ps->lane[l].gmin < least ? ps->lane[l].gmin : least;
    }
    if (nv == 2)
        *gmin = least;
    return add_candidates(ps, merge_lanes(ps, lanes), max_add);
}

/* Prices every group outside the working set at (nu, mu) and adds the
 * largest violators (t_j > threshold). With an empty working set, mu is
 * first fitted over all groups. Returns the number added. */
int64_t pn_pstep_price(pn_pstep *ps, const double *nu, double threshold, int64_t max_add)
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
    if (ps->structured) {
        spread_rows(ps, nu, 1);
        return structured_pass(ps, 1, threshold, 0.0, max_add, NULL);
    }
    const double mu = ps->mu;
    const int64_t cap = PN_PSTEP_CAND_SLACK * max_add;
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
                n = prune_candidates(ps->cand, ps->cand_t, ps->kappa, n, max_add, &bar);
        }
    }
    return add_candidates(ps, n, max_add);
}

/* price() over the pool of earlier supports only. */
int64_t pn_pstep_price_pool(pn_pstep *ps, const double *nu, double threshold, int64_t max_add)
{
    const double mu = ps->mu;
    const int64_t cap = PN_PSTEP_CAND_SLACK * max_add;
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
                n = prune_candidates(ps->cand, ps->cand_t, ps->kappa, n, max_add, &bar);
        }
    }
    return add_candidates(ps, n, max_add);
}

/* y_act = A'q over the working set's current masses (not normalised);
 * returns their total. */
double pn_pstep_working_set_rows(pn_pstep *ps)
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
int64_t pn_pstep_price_certify(pn_pstep *ps, const double *nu, double threshold, int64_t max_add,
                               const double *b, const double *w, double lambda, double *kkt,
                               double *gap)
{
    const int32_t ka = ps->k_act, ma = ps->m_act;
    const double total = pn_pstep_working_set_rows(ps);
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
    const int64_t cap = PN_PSTEP_CAND_SLACK * max_add;
    const int zero = ps->center_zero;
    double bar = threshold;
    int64_t n = 0;
    if (ps->structured) {
        spread_rows(ps, pair, 2);
        const int64_t added = structured_pass(ps, 2, threshold, lambda, max_add, &gmin);
        *kkt = gmax_support - gmin;
        *gap = dot - gmin;
        return added;
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
                n = prune_candidates(ps->cand, ps->cand_t, ps->kappa, n, max_add, &bar);
        }
        const double g = -2.0 * lambda * r / c + sg;
        gmin = g < gmin ? g : gmin;
    }
    *kkt = gmax_support - gmin;
    *gap = dot - gmin;
    return add_candidates(ps, n, max_add);
}
