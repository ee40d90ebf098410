/* Helpers of the rule-set reader shared by its files (rules.c,
 * rules_rule.c, rules_context.c, rules_constraints.c): messages "<name>:
 * <JSON path>: <reason>", typed field reads, and the parts of a rule.
 * Internal to the engine. */
#ifndef PN_RULES_READER_H
#define PN_RULES_READER_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "parnassus/error.h"
#include "parnassus/feature.h"

/* The memory a read has committed so far: its value tables, and the cells
 * of its rules (the solver's Hessian grows with their square). */
typedef struct pn_rr_budget {
    int64_t table_bytes;
    int64_t rows;
} pn_rr_budget;

/* What a rule-set read is doing: the name shown first in every message,
 * the PN_RULES_* flags, where errors go, and the memory it may take. */
typedef struct pn_rr {
    const char *name;
    unsigned flags;
    pn_error_info *info;
    int64_t max_memory;
    pn_rr_budget *budget;
} pn_rr;

/* "<name>: <path>: <reason>" as PN_ERR_PARSE. */
pn_error pn_rr_fail_at(const pn_rr *rd, const char *path, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* "PATH: expected WHAT, got <a description of v>" */
pn_error pn_rr_fail_type(const pn_rr *rd, const char *path, const char *what, const json_t *v);

pn_error pn_rr_out_of_memory(const pn_rr *rd);

/* A string from the file as shown in a message: '"' and '\' escaped,
 * control bytes as '?', cut to about 60 bytes. */
void pn_rr_show_text(const char *s, char *buf, size_t size);

/* Rejects keys of obj not in the NULL-terminated list. */
pn_error pn_rr_check_keys(const pn_rr *rd, const char *path, const json_t *obj,
                          const char *const *allowed);

/* An integer field in [lo, hi]. */
pn_error pn_rr_get_int(const pn_rr *rd, const char *path, const json_t *v, int lo, int hi,
                       int *out);

/* A number field in [lo, hi]; with lo_open, in (lo, hi]. Errors give the
 * range and the value as the file writes it: "must be a number in [0, 1e+12],
 * got 1e+308". */
pn_error pn_rr_get_real(const pn_rr *rd, const char *path, const json_t *v, double lo, double hi,
                        int lo_open, double *out);

/* A non-empty string field of at most PN_RULES_NAME_MAX bytes. */
pn_error pn_rr_get_name(const pn_rr *rd, const char *path, const json_t *v, const char **out);

struct pn_rule_set;
struct pn_rule;

/* Maps a failure of the feature module at `path` to a file error. */
pn_error pn_rr_inner_failure(const pn_rr *rd, const char *path, const pn_error_info *inner);

/* Reads the distribution object at `path` over r's feature values into
 * target (m entries, zeroed here). */
pn_error pn_rr_read_distribution(const pn_rr *rd, const char *path, const json_t *targets,
                                 const struct pn_rule *r, double *target);

/* Builds the value table of f for the field at `path`, refusing first what
 * would go over the memory limit (adds_rows: a rule's own feature, whose
 * cells the solver's Hessian grows with). */
pn_error pn_rr_build_table(const pn_rr *rd, const char *path, const pn_feature *f,
                           const pn_space *space, int adds_rows, pn_feature_table **out);

/* Reads rules[index] (obj) into r; on failure what was read stays in r,
 * freed with the set (rules_rule.c). */
pn_error pn_rr_read_rule(const pn_rr *rd, const struct pn_rule_set *rs, size_t index,
                         const json_t *obj, struct pn_rule *r);

/* Reads the context levels of rules[index] (obj) into r
 * (rules_context.c). */
pn_error pn_rr_read_context(const pn_rr *rd, const struct pn_rule_set *rs, size_t index,
                            const json_t *obj, struct pn_rule *r);

/* Reads the set's "constraints" list (list may be NULL: none) into rs;
 * on failure what was read stays in rs for pn_rr_free_constraints. */
pn_error pn_rr_read_constraints(const pn_rr *rd, const json_t *list, struct pn_rule_set *rs);

/* Frees rs's constraints. */
void pn_rr_free_constraints(struct pn_rule_set *rs);

#endif
