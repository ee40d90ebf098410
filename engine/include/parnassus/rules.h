/* Rule sets: a sonority space and rules written as feature + target.
 *
 * A rule set file ("parnassus-rules/1", JSON, docs/rule-format.md) names a
 * space and a list of rules; each rule is a feature (docs/features.md) and
 * a target distribution over the feature's values, given by value text
 * ("4", "R", "(-7,R)"). Values never listed get target 0. Parsing builds
 * every feature's value table, so a rule's target is a vector over the
 * table's cells; pn_rules_build_problem() turns the set into a de-overlapped
 * pn_problem.
 *
 * Every problem found in a file is reported as PN_ERR_PARSE with a message
 * "<name>: <JSON path>: <reason>", e.g.
 * "rules.json: rules[1].targets: probabilities sum to 0.7, not 1 (tolerance 1e-6)". */
#ifndef PARNASSUS_RULES_H
#define PARNASSUS_RULES_H

#include <stddef.h>
#include <stdint.h>

#include "parnassus/error.h"
#include "parnassus/feature.h"
#include "parnassus/problem.h"
#include "parnassus/space.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PN_RULES_FORMAT "parnassus-rules/1"

/* Tolerance on the sum of a rule's target probabilities. */
#define PN_RULES_SUM_TOLERANCE 1e-6

/* Largest raw space pn_rules_build_problem() de-overlaps: 2^28 sonorities
 * (the default 4-voice space has 55^4 = 9,150,625). */
#define PN_RULES_MAX_SPACE ((int64_t)1 << 28)

enum {
    PN_RULES_MAX_RULES = 4096, /* most rules in one set */
    PN_RULES_NAME_MAX = 128,   /* longest rule or set name, terminator excluded */
};

typedef struct pn_rule {
    char *name;              /* unique within the set */
    pn_feature *feature;     /* parsed for the set's space */
    pn_feature_table *table; /* the feature's values over the space */
    double *target;          /* pn_feature_table_size(table) entries, summing to 1 */
} pn_rule;

typedef struct pn_rule_set {
    char *name;
    pn_space space;
    int32_t num_rules; /* >= 1 */
    pn_rule *rules;
} pn_rule_set;

/* Parses a rule set from len bytes of JSON text; name is used in messages
 * (usually the file name). On failure *out is NULL. */
pn_error pn_rules_parse(const char *name, const char *text, size_t len, pn_rule_set **out,
                        pn_error_info *info);

/* Reads and parses the file at path (PN_ERR_IO if it cannot be opened). */
pn_error pn_rules_read(const char *path, pn_rule_set **out, pn_error_info *info);

void pn_rule_set_free(pn_rule_set *rs);

/* Builds the pn_problem of a rule set: n = the space size, one rule per
 * rule of the set (size = its table size, its name, its targets), groups by
 * pn_deoverlap_map() over the feature tables. group_of, if not NULL,
 * receives each sonority's group (n entries). PN_ERR_INVALID when the space
 * has more than PN_RULES_MAX_SPACE sonorities or the rows do not fit. */
pn_error pn_rules_build_problem(const pn_rule_set *rs, pn_problem **out, int32_t *group_of,
                                pn_error_info *info);

#ifdef __cplusplus
}
#endif

#endif
