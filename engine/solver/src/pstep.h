/* The p-step (8): realization for fixed weights w,
 *
 *   minimise sum_i w_i ((A'q)_i - b_i)^2 + lambda |q|^2   over the K'-simplex.
 *
 * Reduction. Rules whose weights are all zero are dropped and the groups
 * that then agree are merged: a merged group j of c_j groups carries the
 * penalty lambda q_j^2 / c_j, exactly the original penalty with the mass
 * spread evenly. Rows with w_i = 0 inside a kept rule are "passive"; so
 * are all rows of a rule dropped while the structure stays (up to
 * PN_PSTEP_STRUCTURE_SLACK of the rules it was built for).
 *
 * Dual. With nu (one per row with w > 0) and mu (for 1'q = 1) the
 * Lagrangian's minimiser is q_j = max(0, t_j), t_j = r_j + c_j (mu - s_j),
 * s_j = sum of nu over group j's rows (r = 0, or the previous q for the
 * proximal steps used when lambda_p = 0), and
 *   F(nu, mu) = -mu + sum_a (nu_a b_a + lambda nu_a^2 / (2 w_a))
 *               + sum_j (max(t_j, 0)^2 - r_j^2) / (2 c_j)
 * is convex and piecewise quadratic in only m_act + 1 variables.
 *
 * Working set (screening with a KKT check, exactly). The optimal q is
 * sparse (in music a few thousand of a million groups), so F is minimised
 * over a working set W of groups, then every group is priced: one with
 * t_j > 0 would take mass and violates optimality, so the largest violators
 * join W and the restricted problem is solved again, from its dual. When no
 * group violates, q is optimal for the whole problem. A cold start prices
 * from nu_a = -w_a b_a / lambda, the dual of "nothing supplied yet".
 *
 * Restricted solve: semismooth Newton on F with the generalised Hessian
 * diag(lambda / w) + sum_{t_j > 0} c_j [a_j; -1][a_j; -1]'; rows that no
 * supported group touches decouple. The Newton system is the linear-system
 * module's (linsys.h): the coupled block is solved by
 * conjugate gradients preconditioned with the last Cholesky factor when
 * that factor is large or the support moved by a few groups only since it
 * was computed (same w), and CG converges within a small budget; otherwise
 * factorised afresh (LAPACK dpotrf from serial OpenBLAS) after eliminating
 * the diagonal block of the rule with the most coupled rows (each group has
 * one row per rule, so that block is diagonal; only its Schur complement is
 * factorised). A full step is taken when it brings F under the largest of
 * its current value and the three before (it moves the support in one
 * jump, like a primal-dual active-set method; pstep_newton.c), otherwise
 * an exact line search on the piecewise quadratic F.
 *
 * Certificate: the primal KKT residual max_{q_j > 0} g_j - min_j g_j over
 * all groups (g the gradient of (8)), zero exactly at the optimum, and the
 * Frank-Wolfe gap. Internal to the engine. */
#ifndef PN_PSTEP_H
#define PN_PSTEP_H

#include <stdint.h>

#include "linsys.h"
#include "outcome.h"
#include "parnassus/deoverlap.h"
#include "parnassus/memory.h"
#include "parnassus/problem.h"

enum { PN_PSTEP_BLOCK = 2048 }; /* groups per call of the row sums */

/* Most lanes a pass over all groups is split into (problem.h's row sums
 * allow that many at once). */
enum { PN_PSTEP_LANES = PN_ROW_SUMS_LANES };

/* Pricing adds at most max(m_act, PN_PSTEP_ADD_FLOOR) groups a round, or
 * PN_PSTEP_ADD_PER_SUPPORTED per group of the current support when that
 * is more, up to PN_PSTEP_ADD_GROWTH times the first figure
 * (pn_pstep_round_add), and gathers PN_PSTEP_CAND_SLACK times that many
 * candidates before it prunes them. Problems of at most 4
 * PN_PSTEP_WS_MARGIN groups are solved with all of them in the working
 * set, and after new targets a working set of at most 4 times its support
 * plus 4 PN_PSTEP_WS_MARGIN groups is kept whole (a larger one keeps only
 * its groups with mass). */
enum {
    PN_PSTEP_WS_MARGIN = 1024,
    PN_PSTEP_ADD_FLOOR = 512,
    PN_PSTEP_ADD_PER_SUPPORTED = 4,
    PN_PSTEP_ADD_GROWTH = 4,
    PN_PSTEP_CAND_SLACK = 4
};

/* Sets of kept rules remembered as separating every group: the selection
 * of a music set wanders among several such sets none of which contains
 * another, and recognising one spares hashing all groups (tens of ms). */
enum { PN_PSTEP_IDENTITY_SETS = 8 };

/* A selection that drops up to this many of the rules the structure is
 * built for keeps the structure: the dropped rules' rows turn passive
 * (weight 0, multiplier 0), which gives the same optimum, since groups
 * that only those rules tell apart share their mass evenly either way.
 * In music the selection drops two rules and takes one back within a
 * step; re-merging for each, the p-step restarted its dual and working
 * set from the support twice, the slowest steps of a run. */
enum { PN_PSTEP_STRUCTURE_SLACK = 2 };

struct pn_helper;
struct pn_pstep;

/* One lane of a structured pass over all groups (pstep_pricing.c): lane l
 * of n takes the blocks of PN_PSTEP_BLOCK raw inputs numbered l, l + n,
 * l + 2n, ... (so that lanes share the runs the bound skips evenly), and
 * keeps what it finds in buffers of its own, so that lanes run at the same
 * time. Lane 0 is the calling thread's. */
typedef struct pn_price_lane {
    struct pn_pstep *ps;
    int index;
    int32_t *cand; /* cap (pn_pstep_lane_capacity): candidates, in input order */
    double *cand_t;
    double *kappa; /* cap: pruning's scratch */
    int64_t found;
    int64_t next;       /* merging: the next candidate to take */
    double gmin;        /* the certifying pass's least gradient */
    int32_t *block_at;  /* PN_PSTEP_BLOCK: which inputs of a block were summed */
    double *block_sums; /* 2 PN_PSTEP_BLOCK: their sums */
    pn_row_sums_bound bound;
} pn_price_lane;

typedef struct pn_pstep {
    int32_t m, num_rules;
    int64_t num_groups;
    const int32_t *rule_start;
    /* the merged structure */
    /* K: the rules the structure is built for: those w keeps, or a set
     * of at most PN_PSTEP_STRUCTURE_SLACK more that contains them (the
     * others' rows are then passive) */
    unsigned char *rule_kept;
    unsigned char *rule_selected; /* K: scratch, the rules w keeps */
    unsigned char *row_in_kept;   /* m: the row's rule is kept (merge key) */
    /* sets of kept rules (K bytes each, the first identity_sets of
     * PN_PSTEP_IDENTITY_SETS) known to leave every group on its own */
    unsigned char *identity_kept;
    int identity_sets;
    int64_t merges_hashed; /* re-merges that hashed every group (a count) */
    int valid;
    int restructured; /* the last update_structure re-merged */
    int64_t J;
    int32_t *merged_of;      /* K' */
    int32_t *merged_weight;  /* J used */
    int32_t *member_start;   /* J + 1: CSR of original groups per merged group */
    int32_t *members;        /* K' */
    int32_t *carry;          /* K': supported groups carried across a re-merge */
    int32_t k_act;           /* kept rules */
    int32_t *act_rule;       /* k_act */
    int32_t *act_first;      /* k_act: first active index of the rule */
    unsigned char *act_full; /* k_act: every row of the rule has w > 0 */
    int32_t m_act;           /* rows of kept rules */
    int32_t *act_row;        /* m_act: global row */
    int32_t *row_act;        /* m: active index or -1 */
    unsigned char *passive;  /* m_act: w = 0, nu fixed at 0 */
    int32_t *cols;           /* J x k_act: active index of group j in each kept rule */
    /* The same in 16 bits when every active index fits (cols16_ok): the
     * passes over all groups are bound by memory traffic, and these halve
     * it. NULL when the problem has 65536 rows or more. */
    uint16_t *cols16;
    int cols16_ok;
    /* The problem's row sums (problem.h) when every group is a raw input of
     * its own: the passes over all groups then sum rows in space order
     * instead of reading the columns. Merged groups (rules dropped) are met
     * at their first member, which comes in the order of their numbers
     * (pn_merge_groups numbers them by first appearance); `identity` when
     * nothing merged, so that every input is a group of its own. */
    const pn_row_sums *row_sums;
    int structured;
    int identity;
    double *row_values;          /* 2 m: a value (or two, interleaved) per global row */
    unsigned char *first_member; /* K' (structured, merged): the input is its group's first */
    double *row_lower;           /* 2 K: each rule's least row value (the passes' bound) */
    /* the structured passes split into `lanes` lanes (no more than there
     * are blocks), lane l > 0 run by helper[l - 1]; and the pass they
     * share: values per row, the threshold, the most groups added */
    int lanes;
    pn_price_lane lane[PN_PSTEP_LANES];
    struct pn_helper *helper[PN_PSTEP_LANES - 1];
    int pass_nv;
    double pass_threshold, pass_lambda;
    int64_t pass_max_add;
    pn_merge_workspace *merge;
    /* dual state (global rows) for warm starts */
    double *nu; /* m */
    double mu;
    int have_dual;
    int keep_mu; /* the next Newton run starts from ps->mu as it is */
    /* working set */
    int32_t *ws; /* merged group ids, capacity J */
    int64_t ws_count;
    unsigned char *in_ws; /* J */
    double *t, *qt;       /* per working-set position */
    /* the first ws_synced positions' columns (k_act each) and sizes, in
     * order (pn_pstep_sync_ws), room for ws_cap */
    int32_t *ws_cols;
    double *ws_c;
    int64_t ws_cap, ws_synced;
    double *center;   /* J: proximal centre r */
    int center_zero;  /* every centre is 0 (lambda_p > 0): passes skip them */
    double *kappa;    /* per working-set position: line-search slopes */
    int64_t *support; /* working-set positions with t > 0 */
    int64_t support_count;
    /* pricing */
    int32_t *cand;  /* J */
    double *cand_t; /* J */
    /* Groups that held mass in earlier solves (merged ids, a ring of at
     * most pool_cap): rounds that pricing will follow anyway, except the
     * round after a loose one, look for violators among them first, since
     * the music keeps coming back to them; the final pricing of every
     * solve still scans all groups. */
    int32_t *pool;
    unsigned char *in_pool; /* J */
    int64_t pool_cap, pool_count, pool_next;
    /* Newton */
    double *nu_act, *nu_try; /* m_act */
    double *grad, *dir;      /* m_act + 1 */
    double *y_act;           /* m_act */
    pn_linsys *linsys;       /* the Newton system: its factor, Schur elimination and CG */
    double *pair;            /* 2 m: (nu, row gradient) interleaved for the fused pass */
    int cert_done;           /* the last pricing pass also certified the final q */
    /* the last solve's inputs, to recognise an identical repeat */
    double *memo_w, *memo_b; /* m each */
    double memo_lambda, memo_tol;
    int memo_valid;
    int targets_moved; /* b differs from the last solve's (a new context) */
    /* results of the last solve */
    int newton_iterations;
    int pricing_rounds;
    double kkt;   /* primal KKT residual, objective units per unit mass */
    double gap;   /* Frank-Wolfe gap */
    double qq;    /* |q|^2 of the last solve */
    double scale; /* normalisation of the working-set masses */
    /* why the last pn_pstep_solve failed (a static text), NULL otherwise */
    const char *failure;
    /* asked once per Newton iteration; nonzero stops the solve (failure
     * "interrupted"); NULL: never */
    int (*poll)(void *user);
    void *poll_user;
} pn_pstep;

/* The dense Hessian of the p-step's Newton system over m rows: what makes
 * rules with many cells expensive. */
static inline int64_t pn_pstep_hessian_bytes(int64_t m)
{
    return pn_linsys_matrix_bytes(m);
}

/* pn_cholesky_factor() with the p-step's poll (cholesky.h): the
 * factorisation of the Newton system, polled in block columns from order
 * PN_PSTEP_POLLED_FACTOR on. Returns 0, the LAPACK info (> 0: not
 * positive definite), or -1 when ps->poll asked to stop. Only ps->poll and
 * ps->poll_user are read. */
enum { PN_PSTEP_POLLED_FACTOR = PN_CHOLESKY_POLLED_ORDER };
int pn_pstep_factorise(pn_pstep *ps, double *a, int n);

/* Bytes pn_pstep_create() allocates for m rows, K rules, G groups (with
 * every lane a structured pass can have). */
int64_t pn_pstep_bytes(int32_t m, int32_t K, int64_t G, int has_row_sums);

/* threads (1 .. PN_PSTEP_LANES): how many threads share the passes over
 * all groups when the problem has row sums (the caller's and threads - 1
 * helpers, started here). The solution does not depend on it. */
pn_error pn_pstep_create(const pn_problem *prob, int threads, pn_pstep **out, pn_error_info *info);
void pn_pstep_free(pn_pstep *ps);

/* Forgets the dual and the working set (the next solve starts cold). */
void pn_pstep_reset(pn_pstep *ps);

/* Solves (8) for weights w and penalty lambda_p (>= 0; 0 is handled by
 * proximal steps). Writes y = A'q (m) and sets ps->qq = |q|^2; the K'
 * masses themselves are written only on request by pn_pstep_expand.
 * Returns PN_OUTCOME_OK if the KKT tolerance was met,
 * PN_OUTCOME_LIMIT if an iteration limit came first (q is still
 * feasible), otherwise what failed (ps->failure says why). */
pn_outcome pn_pstep_solve(pn_pstep *ps, const pn_problem *prob, const double *w, double lambda_p,
                          double tol, int max_newton, double *y);

/* Writes the last solve's q (K' entries, summing to 1). */
void pn_pstep_expand(const pn_pstep *ps, double *q);

/* y = A'q over all m rows. */
void pn_apply_groups(const pn_problem *prob, const double *q, double *y);

/* Primal KKT residual and Frank-Wolfe gap of q for (8) at (w, lambda_p),
 * computed from scratch over the K' groups (for tests and certification).
 * g_scratch holds K' doubles, y_scratch m doubles. */
void pn_pstep_certificate(const pn_problem *prob, const double *w, double lambda_p, const double *q,
                          double *g_scratch, double *y_scratch, double *kkt, double *gap);

#endif
