/* Rule sets: a sonority space and rules written as feature + target.
 *
 * A rule set file ("parnassus-rules/1", JSON, docs/rule-format.md) names a
 * space and a list of rules; each rule is a feature (docs/features.md) and
 * a target distribution over the feature's values, given by value text
 * ("4", "R", "(-7,R)"). Values never listed get target 0. Parsing builds
 * every feature's value table, so a rule's target is a vector over the
 * table's cells; pn_rule_set_build_problem() turns the set into a de-overlapped
 * pn_problem.
 *
 * A rule may be conditioned on the previous sonority through a context
 * feature psi: for each listed value u of psi(x_{t-1}) it gives a
 * distribution over the feature's values at x_t, with an observation count
 * that sets how much it is smoothed toward the rule's unconditional
 * ("back-off") targets. Only the targets depend on the context, never the
 * partition, so a set is de-overlapped once and pn_rule_set_targets() gives
 * the target vector b for each step.
 *
 * Every problem found in a file is reported as PN_ERR_PARSE with a message
 * "<name>: <JSON path>: <reason>", e.g.
 * "rules.json: rules[1].targets: probabilities sum to 0.7, not 1 (tolerance 1e-6)". */
#ifndef PARNASSUS_RULES_H
#define PARNASSUS_RULES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "parnassus/error.h"
#include "parnassus/feature.h"
#include "parnassus/memory.h"
#include "parnassus/problem.h"
#include "parnassus/space.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PN_RULES_FORMAT "parnassus-rules/1"

/* Tolerance on the sum of a rule's target probabilities. */
#define PN_RULES_SUM_TOLERANCE 1e-6

/* Largest raw space pn_rule_set_build_problem() de-overlaps: 2^28 sonorities
 * (the default 4-voice space has 55^4 = 9,150,625). */
#define PN_RULES_MAX_SPACE ((int64_t)1 << 28)

enum {
    PN_RULES_MAX_RULES = 4096,    /* most rules in one set */
    PN_RULES_NAME_MAX = 128,      /* longest rule or set name, terminator excluded */
    PN_RULES_MAX_REFINEMENTS = 4, /* most finer context levels of one rule */
};

/* Smoothing of a context rule when its file gives none: a listed context
 * seen N times gets (N * row + kappa * back-off) / (N + kappa). */
#define PN_RULES_DEFAULT_SMOOTHING 4.0

/* Largest smoothing kappa and observation count N a file may give: their
 * sum stays far from overflow, so every smoothed target is a number. */
#define PN_RULES_MAX_SMOOTHING 1e12
#define PN_RULES_MAX_COUNT     1e12

/* How a rule depends on the previous sonority. Every array is malloc'ed and
 * owned by the rule. */
typedef struct pn_rule_context {
    pn_feature *feature;     /* psi, evaluated on the previous sonority */
    pn_feature_table *table; /* psi's values over the set's space */
    int table_borrowed;      /* table belongs to an earlier context with the same psi */
    double smoothing;        /* kappa in [0, PN_RULES_MAX_SMOOTHING], pseudo-observations */
    int32_t num_rows;        /* listed contexts, >= 0 */
    int32_t *cell;           /* num_rows cells of table, strictly increasing */
    double *count;           /* num_rows observation counts in [0, PN_RULES_MAX_COUNT];
                              * INFINITY = not given */
    double *row;             /* num_rows x m distributions, as written (each sums to 1) */
} pn_rule_context;

typedef struct pn_rule {
    char *name;               /* unique within the set */
    char *description;        /* NULL when the file has none */
    int fixed;                /* "learn": false: learning leaves its targets as written */
    pn_feature *feature;      /* parsed for the set's space */
    pn_feature_table *table;  /* the feature's values over the space */
    double *target;           /* m = pn_feature_table_size(table) entries, summing to 1:
                               * the unconditional (back-off) distribution */
    pn_rule_context *context; /* NULL for an unconditional rule */
    /* Finer contexts, coarse to fine (say the whole previous sonority after
     * its outer voices): a listed row of each level is smoothed toward the
     * targets of the levels before it, so a context seen rarely at a fine
     * level leans on the coarser ones. Only with a context. */
    int32_t num_refinements;
    pn_rule_context *refinements;
} pn_rule;

/* Constraints: rules about the move from the previous sonority to the next,
 * or about the next sonority alone, that always hold. They are not selected
 * and not realized by the solver; drawing conditions the realization on
 * them (p*(x | x keeps every constraint), docs/rule-format.md). */
typedef enum pn_constraint_kind {
    /* No two voices of a watched pair keep the same exact interval, of a
     * listed interval class, while the upper voice moves: parallel fifths,
     * octaves, unisons. */
    PN_CONSTRAINT_PARALLEL = 1,
    /* No watched pair moves in similar motion (both voices, same direction)
     * into a listed interval class it did not hold exactly before, with the
     * upper voice leaping by more than `leap` semitones: hidden (direct)
     * fifths and octaves. */
    PN_CONSTRAINT_HIDDEN = 2,
    /* The next sonority's value of one rule's feature is a value the rule's
     * back-off targets give some mass: a value the rule forbids (a learned
     * rule: never seen in the corpus) is never drawn. About one sonority,
     * so it holds at the first step too. */
    PN_CONSTRAINT_KNOWN = 3,
} pn_constraint_kind;

enum {
    PN_RULES_MAX_CONSTRAINTS = 64,
    /* Draws that condition a realization on the constraints redraw up to
     * this many times; past it they keep the last draw (the realization
     * gives almost no mass to moves that keep them). */
    PN_CONSTRAINT_TRIES = 64,
    PN_CONSTRAINT_MAX_PAIRS = PN_SPACE_MAX_VOICES * (PN_SPACE_MAX_VOICES - 1) / 2,
};

typedef struct pn_constraint {
    char *name;        /* unique among the set's constraints */
    char *description; /* NULL when the file has none */
    pn_constraint_kind kind;
    unsigned intervals; /* bit c: interval class c (0..11) */
    int leap;           /* HIDDEN: the upper voice moves by more than this */
    int32_t num_pairs;  /* the voice pairs watched, (upper, lower), 0-based */
    unsigned char pair[PN_CONSTRAINT_MAX_PAIRS][2];
    int pairs_given; /* the file listed the pairs (else every pair, or the outer one) */
    int32_t rule;    /* KNOWN: the index of the rule whose values it keeps to */
} pn_constraint;

typedef struct pn_rule_set {
    char *name;
    char *description; /* NULL when the file has none */
    /* The spread penalty lambda_p the set asks to be realized with, or 0
     * when the file gives none (the solver's default then). Smaller follows
     * the rules more closely and takes longer to solve. */
    double lambda_p;
    pn_space space;
    int32_t num_rules; /* >= 1 */
    pn_rule *rules;
    int32_t num_constraints; /* >= 0 */
    pn_constraint *constraints;
    /* The memory limit the set was read under (pn_rule_set_options), which
     * pn_rule_set_build_problem() keeps to, and the bytes its value tables
     * hold. */
    int64_t max_memory;
    int64_t table_bytes;
} pn_rule_set;

/* Flags for pn_rule_set_parse_ex() / pn_rule_set_read_ex(). */
enum {
    /* A "feature file": rules may leave out "targets" (and "contexts");
     * their targets are then uniform over the feature's values and they
     * list no contexts. Used by learning, which fills the targets in. */
    PN_RULES_TARGETS_OPTIONAL = 1u << 0,
};

/* How a rule set is read: PN_RULES_* flags, and the most memory reading,
 * de-overlapping and realizing it may take. Reading refuses a rule whose
 * value table, or whose cells in the solver, would go over it
 * (PN_ERR_LIMIT), before allocating them. */
typedef struct pn_rule_set_options {
    unsigned flags;
    int64_t max_memory; /* bytes, in [1, PN_MAX_MEMORY_LIMIT] (PN_DEFAULT_MAX_MEMORY) */
} pn_rule_set_options;

void pn_rule_set_options_default(pn_rule_set_options *opts);

pn_error pn_rule_set_parse_opt(const char *name, const char *text, size_t len,
                               const pn_rule_set_options *opts, pn_rule_set **out,
                               pn_error_info *info);
pn_error pn_rule_set_read_opt(const char *path, const pn_rule_set_options *opts, pn_rule_set **out,
                              pn_error_info *info);

/* Parses a rule set from len bytes of JSON text; name is used in messages
 * (usually the file name). On failure *out is NULL. */
pn_error pn_rule_set_parse(const char *name, const char *text, size_t len, pn_rule_set **out,
                           pn_error_info *info);

/* Reads and parses the file at path (PN_ERR_IO if it cannot be opened). */
pn_error pn_rule_set_read(const char *path, pn_rule_set **out, pn_error_info *info);

/* As above, with PN_RULES_* flags. */
pn_error pn_rule_set_parse_ex(const char *name, const char *text, size_t len, unsigned flags,
                              pn_rule_set **out, pn_error_info *info);
pn_error pn_rule_set_read_ex(const char *path, unsigned flags, pn_rule_set **out,
                             pn_error_info *info);

void pn_rule_set_free(pn_rule_set *rs);

/* Builds the pn_problem of a rule set: n = the space size, one rule per
 * rule of the set (size = its table size, its name, its targets), groups by
 * pn_deoverlap_map() over the feature tables. group_of, if not NULL,
 * receives each sonority's group (n entries). PN_ERR_INVALID when the space
 * has more than PN_RULES_MAX_SPACE sonorities or the rows do not fit. */
pn_error pn_rule_set_build_problem(const pn_rule_set *rs, pn_problem **out, int32_t *group_of,
                                   pn_error_info *info);

/* What pn_rule_set_build_problem() checks first: its value tables, the
 * de-overlap's peak and (with_group_of) the caller's n-entry group map fit
 * the set's memory limit; PN_ERR_LIMIT naming the set otherwise. */
pn_error pn_rule_set_check_build(const pn_rule_set *rs, int with_group_of, pn_error_info *info);

/* Writes rs as a "parnassus-rules/1" file that pn_rule_set_parse() reads back
 * as the same set (targets with 17 significant digits; only nonzero ones
 * are written). `name` is used in messages. PN_ERR_IO when writing fails. */
pn_error pn_rule_set_write(const pn_rule_set *rs, FILE *out, const char *name, pn_error_info *info);

/* m: the total number of cells (rows of A) of the set's rules. */
int32_t pn_rule_set_num_rows(const pn_rule_set *rs);

/* 1 when some rule of the set has a context. */
int pn_rule_set_has_context(const pn_rule_set *rs);

/* The target vector b for the next sonority: m entries in problem row
 * order (rule by rule, cells in table order). `previous` holds the previous
 * sonority's num_voices pitches (negative = rest), or is NULL at the first
 * step; each context rule then uses the smoothed row of psi(previous), or
 * its back-off targets when that context is not listed or previous is NULL.
 * Allocation-free. PN_ERR_INVALID when a pitch of previous is outside the
 * space. */
pn_error pn_rule_set_targets(const pn_rule_set *rs, const int *previous, double *b,
                             pn_error_info *info);

/* 1 when the move from `previous` to `pitches` (num_voices pitches each,
 * negative = rest) keeps every constraint of the set, or the set has none.
 * previous is NULL at the first step: the constraints on a move then hold,
 * those on the sonority itself (PN_CONSTRAINT_KNOWN) are checked.
 * Allocation-free, constant time: safe on an audio thread. */
int pn_rule_set_allows(const pn_rule_set *rs, const int *previous, const int *pitches);

/* The same for one constraint of rs. */
int pn_constraint_holds(const pn_rule_set *rs, const pn_constraint *c, const int *previous,
                        const int *pitches);

/* "parallel", "hidden", "known": a static string. */
const char *pn_constraint_kind_name(pn_constraint_kind kind);

/* The smoothed distribution of rule r (m_r entries) for psi cell
 * `context_cell` of its first context level, or its back-off targets when
 * context_cell < 0, the rule has no context or the cell is not listed.
 * Refinements are not applied (pn_rule_set_targets applies them).
 * Allocation-free. */
void pn_rule_targets_for_cell(const pn_rule *rule, int32_t context_cell, double *out);

#ifdef __cplusplus
}
#endif

#endif
