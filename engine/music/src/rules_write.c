/* Rule sets: the "parnassus-rules/1" writer (docs/rule-format.md).
 *
 * The output is meant to be read by people as well as by pn_rule_set_parse():
 * one rule object per few lines, long target lists wrapped, one listed
 * context per line (learned sets list thousands). Numbers are written with
 * the fewest significant digits (15, 16 or 17) that read back to the same
 * double, so a written set parses back bit for bit. */
#include "parnassus/rules.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    WRAP_COLUMN = 96, /* target lists wrap before this column */
    NUMBER_MAX = 40,  /* "%.17g" of a double fits easily */
};

typedef struct writer {
    FILE *out;
    const char *name; /* for messages */
    const pn_rule_set *rs;
    pn_error_info *info;
} writer;

/* ------------------------------------------------------------------------ */
/* Checks before writing anything */

/* 1 when s is well-formed UTF-8 (no overlong forms, no surrogates, at most
 * U+10FFFF), as jansson requires of every string it reads. */
static int valid_utf8(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        const unsigned c = *p;
        int extra;
        unsigned min, cp;
        if (c < 0x80) {
            ++p;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            extra = 1;
            min = 0x80;
            cp = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            extra = 2;
            min = 0x800;
            cp = c & 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            extra = 3;
            min = 0x10000;
            cp = c & 0x07;
        } else {
            return 0;
        }
        for (int i = 1; i <= extra; ++i) {
            if ((p[i] & 0xC0) != 0x80)
                return 0;
            cp = (cp << 6) | (p[i] & 0x3Fu);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        p += extra + 1;
    }
    return 1;
}

static pn_error check_text(const writer *w, const char *what, const char *s)
{
    if (s && !valid_utf8(s))
        return pn_fail(w->info, PN_ERR_INVALID, "%.200s: %s is not valid UTF-8", w->name, what);
    return PN_OK;
}

/* 1 when every x[i] is finite. */
static int all_finite(const double *x, size_t count)
{
    for (size_t i = 0; i < count; ++i)
        if (!isfinite(x[i]))
            return 0;
    return 1;
}

static pn_error bad_rule(const writer *w, int32_t r, const char *what)
{
    return pn_fail(w->info, PN_ERR_INVALID, "%.200s: rules[%d]: %s", w->name, (int)r, what);
}

/* Everything the format cannot carry is refused before the first byte is
 * written: invalid UTF-8, non-finite numbers, a missing table. */
static pn_error check_set(const writer *w)
{
    const pn_rule_set *rs = w->rs;
    char what[96];
    pn_error err;
    if ((err = check_text(w, "the set's name", rs->name)) != PN_OK ||
        (err = check_text(w, "the set's description", rs->description)) != PN_OK)
        return err;
    if (!rs->name || rs->name[0] == '\0')
        return pn_fail(w->info, PN_ERR_INVALID, "%.200s: the set has no name", w->name);
    if (rs->lambda_p != 0.0 && !(rs->lambda_p > 0.0 && rs->lambda_p <= 1.0))
        return pn_fail(w->info, PN_ERR_INVALID, "%.200s: lambda_p is not in (0, 1]", w->name);
    for (int32_t r = 0; r < rs->num_rules; ++r) {
        const pn_rule *rule = &rs->rules[r];
        if (!rule->name || !rule->feature || !rule->table || !rule->target)
            return bad_rule(w, r, "incomplete rule");
        snprintf(what, sizeof what, "rules[%d].name", (int)r);
        if ((err = check_text(w, what, rule->name)) != PN_OK)
            return err;
        snprintf(what, sizeof what, "rules[%d].description", (int)r);
        if ((err = check_text(w, what, rule->description)) != PN_OK)
            return err;
        const int32_t m = pn_feature_table_size(rule->table);
        if (!all_finite(rule->target, (size_t)m))
            return bad_rule(w, r, "a target is not a finite number");
        if (!rule->context)
            continue;
        for (int32_t k = 0; k <= rule->num_refinements; ++k) {
            const pn_rule_context *c = k == 0 ? rule->context : &rule->refinements[k - 1];
            if (!c->feature || !c->table || c->num_rows < 0 ||
                (c->num_rows > 0 && (!c->cell || !c->count || !c->row)))
                return bad_rule(w, r, "incomplete context");
            /* what the reader accepts (PN_RULES_MAX_SMOOTHING, _COUNT) */
            if (!(c->smoothing >= 0.0 && c->smoothing <= PN_RULES_MAX_SMOOTHING))
                return bad_rule(w, r, "the smoothing is not a number in [0, 1e12]");
            if (!all_finite(c->row, (size_t)c->num_rows * (size_t)m))
                return bad_rule(w, r, "a context target is not a finite number");
            for (int32_t j = 0; j < c->num_rows; ++j)
                /* INFINITY means "no count given" and is left out */
                if (!(c->count[j] >= 0.0 &&
                      (c->count[j] <= PN_RULES_MAX_COUNT || isinf(c->count[j]))))
                    return bad_rule(w, r, "a context count is not a number in [0, 1e12]");
        }
    }
    for (int32_t i = 0; i < rs->num_constraints; ++i) {
        const pn_constraint *c = &rs->constraints[i];
        if (!c->name || c->name[0] == '\0')
            return pn_fail(w->info, PN_ERR_INVALID, "%.200s: constraints[%d]: no name", w->name,
                           (int)i);
        snprintf(what, sizeof what, "constraints[%d].name", (int)i);
        if ((err = check_text(w, what, c->name)) != PN_OK)
            return err;
        snprintf(what, sizeof what, "constraints[%d].description", (int)i);
        if ((err = check_text(w, what, c->description)) != PN_OK)
            return err;
        if (c->kind == PN_CONSTRAINT_KNOWN && (c->rule < 0 || c->rule >= rs->num_rules))
            return pn_fail(w->info, PN_ERR_INVALID,
                           "%.200s: constraints[%d]: rule %d is not a rule of the set", w->name,
                           (int)i, (int)c->rule);
    }
    return PN_OK;
}

/* ------------------------------------------------------------------------ */
/* Pieces of JSON */

/* The shortest of "%.15g", "%.16g", "%.17g" that reads back as x. */
static void format_number(double x, char *buf, size_t size)
{
    for (int digits = 15; digits <= 17; ++digits) {
        snprintf(buf, size, "%.*g", digits, x);
        if (strtod(buf, NULL) == x)
            return;
    }
}

/* A JSON string: quotes, backslashes and control bytes escaped; other
 * bytes (UTF-8, checked before) as they are. */
static void put_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; ++p) {
        switch (*p) {
        case '"':
            fputs("\\\"", out);
            break;
        case '\\':
            fputs("\\\\", out);
            break;
        case '\n':
            fputs("\\n", out);
            break;
        case '\t':
            fputs("\\t", out);
            break;
        case '\r':
            fputs("\\r", out);
            break;
        case '\b':
            fputs("\\b", out);
            break;
        case '\f':
            fputs("\\f", out);
            break;
        default:
            if (*p < 0x20)
                fprintf(out, "\\u%04x", (unsigned)*p);
            else
                fputc(*p, out);
        }
    }
    fputc('"', out);
}

static void put_number(FILE *out, double x)
{
    char buf[NUMBER_MAX];
    format_number(x, buf, sizeof buf);
    fputs(buf, out);
}

/* One "value": probability entry as text (value texts need no escaping:
 * digits, signs, commas, parentheses and R). Returns its length. */
static size_t target_entry(const pn_feature_table *t, int32_t cell, double p, char *buf,
                           size_t size)
{
    char value[PN_FEATURE_VALUE_TEXT_MAX], number[NUMBER_MAX];
    pn_feature_value_text(t, cell, value, sizeof value);
    format_number(p, number, sizeof number);
    int n = snprintf(buf, size, "\"%s\": %s", value, number);
    return n < 0 ? 0 : (size_t)n;
}

/* { "v": p, ... } over the nonzero entries of dist (m cells of table t),
 * starting at column `column`. With wrap, a line that would pass
 * WRAP_COLUMN continues on the next line at `indent`. */
static void put_distribution(FILE *out, const pn_feature_table *t, const double *dist,
                             size_t column, int wrap, int indent)
{
    const int32_t m = pn_feature_table_size(t);
    char entry[PN_FEATURE_VALUE_TEXT_MAX + NUMBER_MAX + 8];
    fputs("{ ", out);
    column += 2;
    int first = 1;
    for (int32_t i = 0; i < m; ++i) {
        if (dist[i] == 0.0)
            continue;
        const size_t len = target_entry(t, i, dist[i], entry, sizeof entry);
        if (!first) {
            fputc(',', out);
            ++column;
            if (wrap && column + 1 + len + 2 > WRAP_COLUMN) {
                fprintf(out, "\n%*s", indent, "");
                column = (size_t)indent;
            } else {
                fputc(' ', out);
                ++column;
            }
        }
        fputs(entry, out);
        column += len;
        first = 0;
    }
    fputs(" }", out);
}

static void put_space(FILE *out, const pn_space *sp)
{
    int shared = 1;
    for (int v = 1; v < sp->num_voices; ++v)
        if (sp->low[v] != sp->low[0] || sp->high[v] != sp->high[0])
            shared = 0;
    if (shared) {
        fprintf(out, "  \"space\": { \"voices\": %d, \"low\": %d, \"high\": %d },\n",
                sp->num_voices, sp->low[0], sp->high[0]);
        return;
    }
    fputs("  \"space\": { \"ranges\": [", out);
    for (int v = 0; v < sp->num_voices; ++v)
        fprintf(out, "%s[%d, %d]", v > 0 ? ", " : "", sp->low[v], sp->high[v]);
    fputs("] },\n", out);
}

/* One context level: "context", "smoothing" and the listed "contexts",
 * each field on a line indented by `indent`. */
static void put_level(FILE *out, const pn_rule *rule, const pn_rule_context *c, int indent)
{
    char text[PN_FEATURE_TEXT_MAX];
    pn_feature_to_string(c->feature, text, sizeof text);
    fprintf(out, "\"context\": ");
    put_string(out, text);
    fputs(", \"smoothing\": ", out);
    put_number(out, c->smoothing);
    if (c->num_rows == 0)
        return;
    fprintf(out, ",\n%*s\"contexts\": {\n", indent, "");
    const size_t m = (size_t)pn_feature_table_size(rule->table);
    for (int32_t j = 0; j < c->num_rows; ++j) {
        char value[PN_FEATURE_VALUE_TEXT_MAX];
        pn_feature_value_text(c->table, c->cell[j], value, sizeof value);
        fprintf(out, "%*s\"%s\": { ", indent + 2, "", value);
        if (!isinf(c->count[j])) {
            fputs("\"count\": ", out);
            put_number(out, c->count[j]);
            fputs(", ", out);
        }
        fputs("\"targets\": ", out);
        put_distribution(out, rule->table, c->row + (size_t)j * m, 0, 0, 0);
        fputs(j + 1 < c->num_rows ? " },\n" : " }\n", out);
    }
    fprintf(out, "%*s}", indent, "");
}

static void put_context(FILE *out, const pn_rule *rule)
{
    fputs(",\n      ", out);
    put_level(out, rule, rule->context, 6);
    if (rule->num_refinements == 0)
        return;
    fputs(",\n      \"refinements\": [\n", out);
    for (int32_t k = 0; k < rule->num_refinements; ++k) {
        fputs("        { ", out);
        put_level(out, rule, &rule->refinements[k], 10);
        fputs(k + 1 < rule->num_refinements ? " },\n" : " }\n", out);
    }
    fputs("      ]", out);
}

static void put_rule(FILE *out, const pn_rule *rule, int last)
{
    char text[PN_FEATURE_TEXT_MAX];
    pn_feature_to_string(rule->feature, text, sizeof text);
    fputs("    { \"name\": ", out);
    put_string(out, rule->name);
    fputs(", \"feature\": ", out);
    put_string(out, text);
    if (rule->fixed)
        fputs(", \"learn\": false", out);
    if (rule->description) {
        fputs(",\n      \"description\": ", out);
        put_string(out, rule->description);
    }
    fputs(",\n      \"targets\": ", out);
    put_distribution(out, rule->table, rule->target, strlen("      \"targets\": "), 1, 8);
    if (rule->context)
        put_context(out, rule);
    fputs(last ? " }\n" : " },\n", out);
}

/* The fields of a constraint on a move: its interval classes, leap and the
 * pairs the file listed. */
static void put_move_fields(FILE *out, const pn_constraint *c)
{
    fputs(", \"intervals\": [", out);
    const char *sep = "";
    for (int ic = 0; ic < 12; ++ic)
        if (c->intervals & (1u << ic)) {
            fprintf(out, "%s%d", sep, ic);
            sep = ", ";
        }
    fputs("]", out);
    if (c->kind == PN_CONSTRAINT_HIDDEN)
        fprintf(out, ", \"leap\": %d", c->leap);
    if (c->pairs_given) {
        fputs(", \"voices\": [", out);
        for (int32_t k = 0; k < c->num_pairs; ++k)
            fprintf(out, "%s[%d, %d]", k > 0 ? ", " : "", c->pair[k][0] + 1, c->pair[k][1] + 1);
        fputs("]", out);
    }
}

static void put_constraint(FILE *out, const pn_rule_set *rs, const pn_constraint *c, int last)
{
    fputs("    { \"name\": ", out);
    put_string(out, c->name);
    fprintf(out, ", \"kind\": \"%s\"", pn_constraint_kind_name(c->kind));
    if (c->kind == PN_CONSTRAINT_KNOWN) {
        fputs(", \"rule\": ", out);
        put_string(out, rs->rules[c->rule].name);
    } else {
        put_move_fields(out, c);
    }
    if (c->description) {
        fputs(",\n      \"description\": ", out);
        put_string(out, c->description);
    }
    fputs(last ? " }\n" : " },\n", out);
}

pn_error pn_rule_set_write(const pn_rule_set *rs, FILE *out, const char *name, pn_error_info *info)
{
    writer w = {out, name ? name : "rules", rs, info};
    if (!rs || !out)
        return pn_fail(info, PN_ERR_INVALID, "pn_rule_set_write: NULL argument");
    if (rs->num_rules < 1 || !rs->rules)
        return pn_fail(info, PN_ERR_INVALID, "%.200s: the set has no rules", w.name);
    pn_error err = check_set(&w);
    if (err != PN_OK)
        return err;

    fputs("{\n  \"format\": \"" PN_RULES_FORMAT "\",\n  \"name\": ", out);
    put_string(out, rs->name);
    fputs(",\n", out);
    if (rs->description) {
        fputs("  \"description\": ", out);
        put_string(out, rs->description);
        fputs(",\n", out);
    }
    if (rs->lambda_p > 0.0) {
        fputs("  \"lambda_p\": ", out);
        put_number(out, rs->lambda_p);
        fputs(",\n", out);
    }
    put_space(out, &rs->space);
    fputs("  \"rules\": [\n", out);
    for (int32_t r = 0; r < rs->num_rules; ++r)
        put_rule(out, &rs->rules[r], r + 1 == rs->num_rules);
    if (rs->num_constraints > 0) {
        fputs("  ],\n  \"constraints\": [\n", out);
        for (int32_t i = 0; i < rs->num_constraints; ++i)
            put_constraint(out, rs, &rs->constraints[i], i + 1 == rs->num_constraints);
    }
    fputs("  ]\n}\n", out);
    if (fflush(out) != 0 || ferror(out))
        return pn_fail(info, PN_ERR_IO, "%.200s: cannot write the rule set", w.name);
    return PN_OK;
}
