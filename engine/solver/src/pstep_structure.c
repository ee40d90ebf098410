/* The p-step's structure for the kept rules (pstep.h): the merged groups,
 * their members and columns, and the active rows. */
#include <string.h>

#include "pstep_internal.h"

/* 1 when every rule of a kept set (K bytes) is in other. */
static int kept_within(const unsigned char *set, const unsigned char *other, int32_t K)
{
    for (int32_t r = 0; r < K; ++r)
        if (set[r] && !other[r])
            return 0;
    return 1;
}

/* 1 when the kept rules include every rule of a set known to leave each
 * group on its own (then no group merges: rules only split). */
static int keeps_identity_set(const pn_pstep *ps)
{
    const int32_t K = ps->num_rules;
    for (int s = 0; s < ps->identity_sets; ++s)
        if (kept_within(ps->identity_kept + (size_t)s * (size_t)K, ps->rule_kept, K))
            return 1;
    return 0;
}

/* Remembers the kept rules as a set that leaves each group on its own
 * (none known is within it, or it would not have been hashed): the known
 * sets that contain it say nothing more and go. The slots are kept oldest
 * first; when all are in use the oldest gives way. */
static void remember_identity_set(pn_pstep *ps)
{
    const int32_t K = ps->num_rules;
    const size_t k = (size_t)K;
    int kept = 0;
    for (int s = 0; s < ps->identity_sets; ++s) {
        unsigned char *set = ps->identity_kept + (size_t)s * k;
        if (kept_within(ps->rule_kept, set, K))
            continue;
        if (kept != s)
            memcpy(ps->identity_kept + (size_t)kept * k, set, k);
        ++kept;
    }
    if (kept == PN_PSTEP_IDENTITY_SETS) {
        memmove(ps->identity_kept, ps->identity_kept + k, (size_t)(kept - 1) * k);
        --kept;
    }
    memcpy(ps->identity_kept + (size_t)kept * k, ps->rule_kept, k);
    ps->identity_sets = kept + 1;
}

/* Merges the groups for the kept rules (merged_of, merged_weight, J).
 * Hashing every group costs some 25-40 ms in music, where the selection
 * moves among sets that separate every sonority: a set known to be one,
 * or a superset of it, is recognised and needs no hashing. */
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
    ps->merges_hashed++;
    if (ps->J == G)
        remember_identity_set(ps);
}

/* 1 when the structure must be built anew for the rules w keeps
 * (ps->rule_selected): none was built yet, w keeps a rule it was not built
 * for, or drops more than PN_PSTEP_STRUCTURE_SLACK of those it was. */
static int needs_new_structure(pn_pstep *ps, const pn_problem *prob, const double *w)
{
    int outside = !ps->valid, dropped = 0;
    for (int32_t r = 0; r < ps->num_rules; ++r) {
        unsigned char kept = 0;
        for (int32_t i = prob->rule_start[r]; i < prob->rule_start[r + 1]; ++i)
            kept |= w[i] > 0.0;
        ps->rule_selected[r] = kept;
        outside |= kept && !ps->rule_kept[r];
        dropped += ps->rule_kept[r] && !kept;
    }
    return outside || dropped > PN_PSTEP_STRUCTURE_SLACK;
}

/* Re-merges the groups when the kept rules need it (needs_new_structure);
 * refreshes the passive rows from w every time. */
void pn_pstep_update_structure(pn_pstep *ps, const pn_problem *prob, const double *w)
{
    const int32_t K = ps->num_rules;
    const int changed = needs_new_structure(ps, prob, w);
    if (changed) {
        memcpy(ps->rule_kept, ps->rule_selected, (size_t)K);
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
        pn_pstep_clear_working_set(ps);
        pn_pstep_clear_pool(ps);             /* the merged ids change */
        pn_linsys_forget_factor(ps->linsys); /* the active rows were renumbered */
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
                /* it held mass: compacting the working set before the
                 * first Newton run keeps it (qt is otherwise unset here) */
                ps->qt[ps->ws_count] = 1.0;
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
