/* The instance reader's header, counts and rules: `n`, `rules`, and for
 * each rule its name and size, its assign values (full form) and its
 * targets. */
#include "instance_reader.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char FULL_HEADER[] = "parnassus-instance";
static const char GROUPED_HEADER[] = "parnassus-grouped";

/* Largest total number of cells pn_problem_create accepts. */
static const int64_t MAX_TOTAL_CELLS = INT32_MAX / 2;

/* The tolerance of pn_problem_validate; messages spell it "1e-6". */
static const double TARGET_SUM_TOLERANCE = 1e-6;

static char *copy_token(const token *t)
{
    char *s = malloc(t->len + 1);
    if (s) {
        memcpy(s, t->text, t->len);
        s[t->len] = '\0';
    }
    return s;
}

/* ------------------------------------------------------------------------ */
/* Header and counts */

pn_error pn_ir_read_header(parser *ps)
{
    token t = pn_ir_next_token(ps);
    const char *header;
    if (pn_ir_token_is(&t, FULL_HEADER)) {
        ps->form = PN_FORM_FULL;
        header = FULL_HEADER;
    } else if (pn_ir_token_is(&t, GROUPED_HEADER)) {
        ps->form = PN_FORM_GROUPED;
        header = GROUPED_HEADER;
    } else {
        return pn_ir_fail_at(ps, t.line, "expected header \"%s 1\" or \"%s 1\", found %s",
                             FULL_HEADER, GROUPED_HEADER, pn_ir_describe(&t).s);
    }
    t = pn_ir_next_token(ps);
    if (!t.text)
        return pn_ir_fail_at(ps, t.line, "expected a version after \"%s\", found end of file",
                             header);
    if (!pn_ir_token_is(&t, "1"))
        return pn_ir_fail_at(ps, t.line,
                             "unsupported version %s of \"%s\" (this reader knows version 1)",
                             pn_ir_describe(&t).s, header);
    return PN_OK;
}

pn_error pn_ir_read_sizes(parser *ps, int64_t *declared_rules)
{
    token t;
    pn_error err = pn_ir_read_count(ps, "n", "n", &ps->n, &t);
    if (err != PN_OK)
        return err;
    /* The de-overlap of the full form numbers raw inputs with int32. */
    if (ps->form == PN_FORM_FULL && ps->n > INT32_MAX)
        return pn_ir_fail_at(ps, t.line,
                             "n = %" PRId64 " is too large for the full form (at most %d)", ps->n,
                             INT32_MAX);
    err = pn_ir_read_count(ps, "rules", "the number of rules", declared_rules, &t);
    if (err != PN_OK)
        return err;
    if (*declared_rules > INT32_MAX)
        return pn_ir_fail_at(ps, t.line, "too many rules: %" PRId64 " (at most %d)",
                             *declared_rules, INT32_MAX);
    return PN_OK;
}

/* ------------------------------------------------------------------------ */
/* Rules */

static pn_error add_rule(parser *ps, const token *name, int32_t size)
{
    size_t need = (size_t)ps->num_rules + 1;
    void *p = pn_ir_reserve(ps->rule_size, &ps->rule_size_cap, need, sizeof *ps->rule_size);
    if (!p)
        return pn_ir_out_of_memory(ps);
    ps->rule_size = p;
    p = pn_ir_reserve(ps->rule_name, &ps->rule_name_cap, need, sizeof *ps->rule_name);
    if (!p)
        return pn_ir_out_of_memory(ps);
    ps->rule_name = p;
    ps->rule_name[ps->num_rules] = copy_token(name);
    if (!ps->rule_name[ps->num_rules])
        return pn_ir_out_of_memory(ps);
    ps->rule_size[ps->num_rules] = size;
    ps->num_rules++;
    ps->num_cells += size;
    return PN_OK;
}

/* `rule <name> <m_r>`: appends the rule. */
static pn_error read_rule_line(parser *ps)
{
    pn_error err = pn_ir_expect_keyword(ps, "rule");
    if (err != PN_OK)
        return err;
    token name = pn_ir_next_token(ps);
    if (!name.text)
        return pn_ir_fail_at(ps, name.line, "expected a rule name, found end of file");
    if (memchr(name.text, '\0', name.len))
        return pn_ir_fail_at(ps, name.line, "rule name %s contains a NUL byte",
                             pn_ir_describe(&name).s);
    char context[sizeof(quoted) + 16];
    snprintf(context, sizeof context, "rule %s: ", pn_ir_describe(&name).s);
    int64_t size = 0;
    token t;
    err = pn_ir_read_integer(ps, context, "size", "the number of cells", &size, &t);
    if (err != PN_OK)
        return err;
    if (size < 1)
        return pn_ir_fail_at(ps, t.line, "%ssize must be >= 1 (got %" PRId64 ")", context, size);
    if (size > MAX_TOTAL_CELLS - ps->num_cells)
        return pn_ir_fail_at(ps, t.line,
                             "%ssize %" PRId64 " brings the total number of cells above %" PRId64,
                             context, size, MAX_TOTAL_CELLS);
    return add_rule(ps, &name, (int32_t)size);
}

/* Full form: `assign` and the cell of each of the n raw inputs. */
static pn_error read_assign(parser *ps, int32_t r)
{
    pn_error err = pn_ir_expect_keyword(ps, "assign");
    if (err != PN_OK)
        return err;
    const int32_t size = ps->rule_size[r];
    char context[sizeof(quoted) + 16];
    snprintf(context, sizeof context, "rule %s: ", pn_ir_rule_label(ps, r).s);
    char expected[64];
    snprintf(expected, sizeof expected, "%" PRId64 " assign values", ps->n);
    for (int64_t j = 0; j < ps->n; ++j) {
        int64_t cell = 0;
        token t;
        err = pn_ir_read_integer(ps, context, "assign value", expected, &cell, &t);
        if (err != PN_OK)
            return err;
        if (cell < 0 || cell >= size)
            return pn_ir_fail_at(ps, t.line,
                                 "cell index %" PRId64 " out of range [0, %d) for rule %s", cell,
                                 (int)size, pn_ir_rule_label(ps, r).s);
        void *p =
            pn_ir_reserve(ps->assign, &ps->assign_cap, ps->assign_count + 1, sizeof *ps->assign);
        if (!p)
            return pn_ir_out_of_memory(ps);
        ps->assign = p;
        ps->assign[ps->assign_count++] = (int32_t)cell;
    }
    return PN_OK;
}

static pn_error read_target_value(parser *ps, const char *context, int32_t i, const char *expected,
                                  double *value, token *t)
{
    *t = pn_ir_next_token(ps);
    number_status status = t->text ? pn_ir_scan_real(t, value) : NUMBER_BAD;
    if (status != NUMBER_OK)
        return pn_ir_number_error(ps, t, status, context, "target", expected);
    if (!isfinite(*value))
        return pn_ir_fail_at(ps, t->line, "%starget b_%d is not a finite number (%s)", context,
                             (int)i, pn_ir_describe(t).s);
    /* above 1 by no more than the sum's tolerance is rounding */
    if (!(*value >= 0.0 && *value <= 1.0 + TARGET_SUM_TOLERANCE))
        return pn_ir_fail_at(ps, t->line, "%starget b_%d %s is out of range [0, 1]", context,
                             (int)i, pn_ir_describe(t).s);
    return PN_OK;
}

/* `target` and the m_r targets of rule r, which must sum to 1. */
static pn_error read_targets(parser *ps, int32_t r)
{
    pn_error err = pn_ir_expect_keyword(ps, "target");
    if (err != PN_OK)
        return err;
    const int32_t size = ps->rule_size[r];
    const size_t first = (size_t)(ps->num_cells - size);
    char context[sizeof(quoted) + 16];
    snprintf(context, sizeof context, "rule %s: ", pn_ir_rule_label(ps, r).s);
    char expected[64];
    snprintf(expected, sizeof expected, "%d target values", (int)size);
    double sum = 0.0;
    token t = {NULL, 0, 0};
    for (int32_t i = 0; i < size; ++i) {
        double b = 0.0;
        err = read_target_value(ps, context, i, expected, &b, &t);
        if (err != PN_OK)
            return err;
        void *p =
            pn_ir_reserve(ps->target, &ps->target_cap, first + (size_t)i + 1, sizeof *ps->target);
        if (!p)
            return pn_ir_out_of_memory(ps);
        ps->target = p;
        ps->target[first + (size_t)i] = b;
        sum += b; /* same order as pn_problem_validate */
    }
    if (fabs(sum - 1.0) > TARGET_SUM_TOLERANCE)
        return pn_ir_fail_at(ps, t.line, "targets of rule %s sum to %.9g, not 1 (tolerance 1e-6)",
                             pn_ir_rule_label(ps, r).s, sum);
    return PN_OK;
}

pn_error pn_ir_read_rules(parser *ps, int64_t declared_rules)
{
    for (int64_t r = 0; r < declared_rules; ++r) {
        pn_error err = read_rule_line(ps);
        if (err == PN_OK && ps->form == PN_FORM_FULL)
            err = read_assign(ps, (int32_t)r);
        if (err == PN_OK)
            err = read_targets(ps, (int32_t)r);
        if (err != PN_OK)
            return err;
    }
    return PN_OK;
}
