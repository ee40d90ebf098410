/* What `parnassus sweep` measures (docs/evaluate.md, "Sweeping the knobs"):
 * music generated at several settings of one style knob, each setting's
 * runs pooled into style statistics, with the number and names of the rules
 * the realization keeps and the time per step; and the figures the report
 * compares with the reference. */
#ifndef PARNASSUS_CLI_SWEEP_H
#define PARNASSUS_CLI_SWEEP_H

#include <stdint.h>

#include "parnassus/error.h"
#include "parnassus/rules.h"
#include "parnassus/solver.h"
#include "parnassus/style.h"

typedef enum pn_sweep_knob {
    PN_SWEEP_LOG2_LAMBDA_W = 0,
    PN_SWEEP_ALPHA = 1,
} pn_sweep_knob;

/* "log2_lambda_w" or "alpha": the plugin's names of the knobs. */
const char *pn_sweep_knob_name(pn_sweep_knob knob);

typedef struct pn_sweep_request {
    const pn_rule_set *rules;
    /* the fixed knob, lambda_p and the search; the seed and the swept knob
     * are set per run */
    pn_settings settings;
    pn_sweep_knob knob;
    double from, to; /* from < to, or from == to for a single point */
    int points;      /* >= 1 */
    int steps;       /* sonorities per run, >= 1 */
    const uint64_t *seeds;
    int num_seeds; /* >= 1: one run (one piece) per seed and point */
} pn_sweep_request;

/* One setting of the knob: its runs pooled. */
typedef struct pn_sweep_point {
    double value;                        /* of the swept knob */
    double log2_lambda_w, alpha;         /* both knobs as used */
    pn_style_stats *stats;               /* one piece per seed */
    pn_style_stats *seed_stats;          /* each seed's piece alone, in the order of seeds */
    int kept_min, kept_median, kept_max; /* rules kept after each step, over every run */
    int64_t *kept_steps;                 /* per rule (file order): steps after which it was kept */
    int64_t num_steps;                   /* steps x seeds */
    uint64_t constraint_misses;          /* draws that kept a move breaking the constraints */
    double setup_seconds;                /* median over the seeds of pn_generator_create */
    double median_step_seconds;          /* median over every step of draw + advance */
} pn_sweep_point;

typedef struct pn_sweep {
    int num_rules;
    int num_points;
    pn_sweep_point *points; /* by increasing value of the knob */
} pn_sweep;

/* Value i (0-based) of the knob: evenly spaced from `from` to `to`. */
double pn_sweep_value(const pn_sweep_request *req, int i);

/* Generates every run of the sweep, as `parnassus sample` does: for each
 * point and seed a fresh generator at that point's knobs (pn_generator_create
 * with the seed), then `steps` times pn_generator_draw from an rng seeded
 * with the seed and pn_generator_advance to the sonority drawn. Errors name
 * the point and the seed. */
pn_error pn_sweep_run(const pn_sweep_request *req, pn_sweep **out, pn_error_info *info);
void pn_sweep_free(pn_sweep *sweep);

/* The rules of a point ordered by how often they were kept (most first,
 * file order among ties), those never kept left out: writes their indices
 * to order (num_rules entries) and returns how many there are. */
int pn_sweep_most_kept(const pn_sweep *sweep, int point, int *order);

/* The figures of the report: doubles only (pn_sweep_standard_error reads
 * them as an array). */
enum { PN_SWEEP_NUM_TV = 5 };

typedef struct pn_sweep_figures {
    /* TV to the reference: chord types, soprano, alto, tenor and bass
     * motion (NAN without a reference or where either side is empty) */
    double tv[PN_SWEEP_NUM_TV];
    double root_position;    /* chord type exactly {0,4,7} or {0,3,7} */
    double stepwise_soprano; /* soprano motions of 1 or 2 semitones, among all */
    double soprano_leaps;    /* soprano motions of more than 4 semitones, among all */
    /* bass on C, F or G: the tonic, subdominant and dominant of a rule set
     * in C, as every shipped set is (NAN for the reference, whose pieces
     * are in many keys) */
    double primary_bass;
    /* chord types whose every pitch class is a consonance with the bass:
     * the unison or octave, thirds, the fifth and sixths (0, 3, 4, 7, 8, 9) */
    double consonant;
    double parallels, hidden, wide, crossing; /* the rates */
} pn_sweep_figures;

/* The distributions behind tv[], and their names in the JSON and CSV. */
extern const pn_style_dist pn_sweep_tv_dist[PN_SWEEP_NUM_TV];
extern const char *const pn_sweep_tv_name[PN_SWEEP_NUM_TV];

/* Shares in [0, 1]; NAN where nothing was counted. ref may be NULL. */
void pn_sweep_figures_of(const pn_style_stats *s, const pn_style_stats *ref, pn_sweep_figures *out);

/* The standard error of each figure of a point over its seeds: the
 * standard deviation of the seeds' own figures (pn_sweep_figures_of of
 * each seed's piece) divided by the square root of their number. NAN with
 * one seed, or where a seed has nothing to count. */
void pn_sweep_standard_error(const pn_sweep_point *pt, int num_seeds, const pn_style_stats *ref,
                             pn_sweep_figures *out);

/* The reference's own figures: those of pn_sweep_figures_of without TVs,
 * and no primary_bass (its pieces are not all in C); every figure NAN when
 * ref is NULL. */
void pn_sweep_reference_figures(const pn_style_stats *ref, pn_sweep_figures *out);

#endif
