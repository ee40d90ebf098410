/* Readers and writer of the generic instance formats (docs/instance-format.md).
 *
 * The reader works on a bounded buffer that need not end in a NUL byte. It
 * never trusts the sizes a header claims: every array grows only as its
 * values actually arrive, so a short file with a huge "n" fails with "found
 * end of file" instead of allocating for the claim. */
#include "parnassus/instance_io.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parnassus/deoverlap.h"
#include "parnassus/file.h"

enum {
    MAX_NUMBER_LEN = 64, /* longest token accepted as a number */
    QUOTE_MAX = 32,      /* bytes of a token shown in a message */
    REASON_SIZE = 400,   /* room for the reason part of a message */
};

static const char FULL_HEADER[] = "parnassus-instance";
static const char GROUPED_HEADER[] = "parnassus-grouped";

/* Largest total number of cells pn_problem_create accepts. */
static const int64_t MAX_TOTAL_CELLS = INT32_MAX / 2;

/* The tolerance of pn_problem_validate; messages spell it "1e-6". */
static const double TARGET_SUM_TOLERANCE = 1e-6;

typedef struct token {
    const char *text; /* NULL at the end of the input */
    size_t len;
    int64_t line;
} token;

/* A token quoted for a message: escaped and shortened. Returned by value so
 * calls can sit inside an argument list (C11 gives the array member of the
 * temporary a lifetime up to the end of the full expression). */
typedef struct quoted {
    char s[4 * QUOTE_MAX + 8];
} quoted;

typedef struct parser {
    const char *name;
    const char *pos;
    const char *end;
    int64_t line;     /* line of pos */
    int64_t end_line; /* line the input ends on */
    pn_error_info *info;
    pn_instance_form form;
    int64_t n;

    /* Rules, in file order. */
    int32_t num_rules;
    int32_t *rule_size;
    size_t rule_size_cap;
    char **rule_name;
    size_t rule_name_cap;
    int64_t num_cells; /* sum of the rule sizes so far */
    double *target;
    size_t target_cap;

    /* Full form: n assign values per rule, rule after rule. */
    int32_t *assign;
    size_t assign_count;
    size_t assign_cap;

    /* Grouped form: records in file order, rows are global. */
    int64_t num_groups;
    int32_t *group_rows;
    size_t group_rows_cap;
    int64_t *group_size;
    size_t group_size_cap;
    int64_t *group_line;
    size_t group_line_cap;
    int64_t *slots; /* hash of the records: group index + 1, 0 = empty */
    size_t slot_cap;

    pn_problem *prob;
} parser;

/* ------------------------------------------------------------------------ */
/* Messages */

static pn_error fail_at(parser *ps, int64_t line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static pn_error fail_at(parser *ps, int64_t line, const char *fmt, ...)
{
    char reason[REASON_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    return pn_fail(ps->info, PN_ERR_PARSE, "%s:%" PRId64 ": %s", ps->name, line, reason);
}

static pn_error out_of_memory(const parser *ps)
{
    return pn_fail(ps->info, PN_ERR_NOMEM, "%s: out of memory", ps->name);
}

static quoted quote(const char *text, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    quoted q;
    size_t o = 0;
    q.s[o++] = '"';
    size_t shown = len < QUOTE_MAX ? len : QUOTE_MAX;
    for (size_t i = 0; i < shown; ++i) {
        unsigned char c = (unsigned char)text[i];
        if (c == '"' || c == '\\') {
            q.s[o++] = '\\';
            q.s[o++] = (char)c;
        } else if (c < 0x20 || c >= 0x7f) {
            q.s[o++] = '\\';
            q.s[o++] = 'x';
            q.s[o++] = hex[c >> 4];
            q.s[o++] = hex[c & 15];
        } else {
            q.s[o++] = (char)c;
        }
    }
    q.s[o++] = '"';
    if (shown < len) {
        memcpy(q.s + o, "...", 3);
        o += 3;
    }
    q.s[o] = '\0';
    return q;
}

/* What was found where something else was expected. */
static quoted describe(const token *t)
{
    if (!t->text) {
        quoted q;
        memcpy(q.s, "end of file", sizeof "end of file");
        return q;
    }
    return quote(t->text, t->len);
}

static quoted rule_label(const parser *ps, int32_t r)
{
    const char *name = ps->rule_name[r];
    return quote(name, strlen(name));
}

/* ------------------------------------------------------------------------ */
/* Tokens */

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static void skip_space_and_comments(parser *ps)
{
    while (ps->pos < ps->end) {
        char c = *ps->pos;
        if (c == '#') {
            while (ps->pos < ps->end && *ps->pos != '\n')
                ps->pos++;
        } else if (is_space(c)) {
            if (c == '\n')
                ps->line++;
            ps->pos++;
        } else {
            return;
        }
    }
}

static token next_token(parser *ps)
{
    token t = {NULL, 0, ps->end_line};
    skip_space_and_comments(ps);
    if (ps->pos == ps->end)
        return t;
    t.text = ps->pos;
    t.line = ps->line;
    while (ps->pos < ps->end && !is_space(*ps->pos) && *ps->pos != '#')
        ps->pos++;
    t.len = (size_t)(ps->pos - t.text);
    return t;
}

static int token_is(const token *t, const char *word)
{
    size_t len = strlen(word);
    return t->text && t->len == len && memcmp(t->text, word, len) == 0;
}

/* ------------------------------------------------------------------------ */
/* Numbers */

typedef enum number_status {
    NUMBER_OK,
    NUMBER_TOO_LONG,
    NUMBER_NOT_INTEGER, /* a real number where an integer is required */
    NUMBER_OUT_OF_RANGE,
    NUMBER_BAD, /* not a number at all */
} number_status;

static number_status scan_real(const token *t, double *value)
{
    if (t->len > MAX_NUMBER_LEN)
        return NUMBER_TOO_LONG;
    char buf[MAX_NUMBER_LEN + 1]; /* strtod needs a NUL-terminated copy */
    memcpy(buf, t->text, t->len);
    buf[t->len] = '\0';
    char *stop = NULL;
    double v = strtod(buf, &stop);
    if (stop != buf + t->len) /* also catches a NUL byte inside the token */
        return NUMBER_BAD;
    *value = v;
    return NUMBER_OK;
}

static number_status scan_integer(const token *t, int64_t *value)
{
    if (t->len > MAX_NUMBER_LEN)
        return NUMBER_TOO_LONG;
    size_t i = 0;
    int negative = 0;
    if (t->text[0] == '+' || t->text[0] == '-') {
        negative = t->text[0] == '-';
        i = 1;
    }
    const uint64_t limit = negative ? (uint64_t)INT64_MAX + 1u : (uint64_t)INT64_MAX;
    uint64_t v = 0;
    int overflow = 0;
    int digits = 0;
    for (; i < t->len; ++i, ++digits) {
        char c = t->text[i];
        if (c < '0' || c > '9') {
            double ignored;
            return scan_real(t, &ignored) == NUMBER_OK ? NUMBER_NOT_INTEGER : NUMBER_BAD;
        }
        unsigned d = (unsigned)(c - '0');
        if (v > (limit - d) / 10)
            overflow = 1;
        else
            v = 10 * v + d;
    }
    if (digits == 0)
        return NUMBER_BAD;
    if (overflow)
        return NUMBER_OUT_OF_RANGE;
    if (!negative)
        *value = (int64_t)v;
    else
        *value = v == (uint64_t)INT64_MAX + 1u ? INT64_MIN : -(int64_t)v;
    return NUMBER_OK;
}

/* Reports a token that is not the number wanted. `context` prefixes the
 * reason (e.g. `rule "x": `), `what` names the value ("n", "assign value"),
 * `expected` says what should have been there ("4 assign values"). */
static pn_error number_error(parser *ps, const token *t, number_status status, const char *context,
                             const char *what, const char *expected)
{
    switch (status) {
    case NUMBER_TOO_LONG:
        return fail_at(ps, t->line, "%snumber too long: %s (more than %d characters)", context,
                       describe(t).s, MAX_NUMBER_LEN);
    case NUMBER_NOT_INTEGER:
        return fail_at(ps, t->line, "%s%s %s is not an integer", context, what, describe(t).s);
    case NUMBER_OUT_OF_RANGE:
        return fail_at(ps, t->line, "%s%s %s is out of range [%" PRId64 ", %" PRId64 "]", context,
                       what, describe(t).s, INT64_MIN, INT64_MAX);
    case NUMBER_OK:
    case NUMBER_BAD:
        break;
    }
    return fail_at(ps, t->line, "%sexpected %s, found %s", context, expected, describe(t).s);
}

/* Reads the next token as an integer; see number_error for the arguments. */
static pn_error read_integer(parser *ps, const char *context, const char *what,
                             const char *expected, int64_t *value, token *tok)
{
    *tok = next_token(ps);
    number_status status = tok->text ? scan_integer(tok, value) : NUMBER_BAD;
    if (status != NUMBER_OK)
        return number_error(ps, tok, status, context, what, expected);
    return PN_OK;
}

/* ------------------------------------------------------------------------ */
/* Growing arrays */

/* Makes room for `need` elements, doubling the capacity. On failure the old
 * block is left alone (still owned by the caller) and NULL is returned. */
static void *reserve(void *ptr, size_t *capacity, size_t need, size_t elem_size)
{
    if (need <= *capacity)
        return ptr;
    size_t cap = *capacity ? *capacity : 16;
    while (cap < need) {
        if (cap > SIZE_MAX / 2 / elem_size)
            return NULL;
        cap *= 2;
    }
    void *grown = realloc(ptr, cap * elem_size);
    if (grown)
        *capacity = cap;
    return grown;
}

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

static pn_error expect_keyword(parser *ps, const char *keyword)
{
    token t = next_token(ps);
    if (!token_is(&t, keyword))
        return fail_at(ps, t.line, "expected keyword \"%s\", found %s", keyword, describe(&t).s);
    return PN_OK;
}

static pn_error read_header(parser *ps)
{
    token t = next_token(ps);
    const char *header;
    if (token_is(&t, FULL_HEADER)) {
        ps->form = PN_FORM_FULL;
        header = FULL_HEADER;
    } else if (token_is(&t, GROUPED_HEADER)) {
        ps->form = PN_FORM_GROUPED;
        header = GROUPED_HEADER;
    } else {
        return fail_at(ps, t.line, "expected header \"%s 1\" or \"%s 1\", found %s", FULL_HEADER,
                       GROUPED_HEADER, describe(&t).s);
    }
    t = next_token(ps);
    if (!t.text)
        return fail_at(ps, t.line, "expected a version after \"%s\", found end of file", header);
    if (!token_is(&t, "1"))
        return fail_at(ps, t.line, "unsupported version %s of \"%s\" (this reader knows version 1)",
                       describe(&t).s, header);
    return PN_OK;
}

/* Reads `keyword <count>` with count >= 1. */
static pn_error read_count(parser *ps, const char *keyword, const char *label, int64_t *count,
                           token *tok)
{
    pn_error err = expect_keyword(ps, keyword);
    if (err != PN_OK)
        return err;
    char expected[64];
    snprintf(expected, sizeof expected, "an integer after \"%s\"", keyword);
    err = read_integer(ps, "", label, expected, count, tok);
    if (err != PN_OK)
        return err;
    if (*count < 1)
        return fail_at(ps, tok->line, "%s must be >= 1 (got %" PRId64 ")", label, *count);
    return PN_OK;
}

static pn_error read_sizes(parser *ps, int64_t *declared_rules)
{
    token t;
    pn_error err = read_count(ps, "n", "n", &ps->n, &t);
    if (err != PN_OK)
        return err;
    /* The de-overlap of the full form numbers raw inputs with int32. */
    if (ps->form == PN_FORM_FULL && ps->n > INT32_MAX)
        return fail_at(ps, t.line, "n = %" PRId64 " is too large for the full form (at most %d)",
                       ps->n, INT32_MAX);
    err = read_count(ps, "rules", "the number of rules", declared_rules, &t);
    if (err != PN_OK)
        return err;
    if (*declared_rules > INT32_MAX)
        return fail_at(ps, t.line, "too many rules: %" PRId64 " (at most %d)", *declared_rules,
                       INT32_MAX);
    return PN_OK;
}

/* ------------------------------------------------------------------------ */
/* Rules */

static pn_error add_rule(parser *ps, const token *name, int32_t size)
{
    size_t need = (size_t)ps->num_rules + 1;
    void *p = reserve(ps->rule_size, &ps->rule_size_cap, need, sizeof *ps->rule_size);
    if (!p)
        return out_of_memory(ps);
    ps->rule_size = p;
    p = reserve(ps->rule_name, &ps->rule_name_cap, need, sizeof *ps->rule_name);
    if (!p)
        return out_of_memory(ps);
    ps->rule_name = p;
    ps->rule_name[ps->num_rules] = copy_token(name);
    if (!ps->rule_name[ps->num_rules])
        return out_of_memory(ps);
    ps->rule_size[ps->num_rules] = size;
    ps->num_rules++;
    ps->num_cells += size;
    return PN_OK;
}

/* `rule <name> <m_r>`: appends the rule. */
static pn_error read_rule_line(parser *ps)
{
    pn_error err = expect_keyword(ps, "rule");
    if (err != PN_OK)
        return err;
    token name = next_token(ps);
    if (!name.text)
        return fail_at(ps, name.line, "expected a rule name, found end of file");
    if (memchr(name.text, '\0', name.len))
        return fail_at(ps, name.line, "rule name %s contains a NUL byte", describe(&name).s);
    char context[sizeof(quoted) + 16];
    snprintf(context, sizeof context, "rule %s: ", describe(&name).s);
    int64_t size = 0;
    token t;
    err = read_integer(ps, context, "size", "the number of cells", &size, &t);
    if (err != PN_OK)
        return err;
    if (size < 1)
        return fail_at(ps, t.line, "%ssize must be >= 1 (got %" PRId64 ")", context, size);
    if (size > MAX_TOTAL_CELLS - ps->num_cells)
        return fail_at(ps, t.line,
                       "%ssize %" PRId64 " brings the total number of cells above %" PRId64,
                       context, size, MAX_TOTAL_CELLS);
    return add_rule(ps, &name, (int32_t)size);
}

/* Full form: `assign` and the cell of each of the n raw inputs. */
static pn_error read_assign(parser *ps, int32_t r)
{
    pn_error err = expect_keyword(ps, "assign");
    if (err != PN_OK)
        return err;
    const int32_t size = ps->rule_size[r];
    char context[sizeof(quoted) + 16];
    snprintf(context, sizeof context, "rule %s: ", rule_label(ps, r).s);
    char expected[64];
    snprintf(expected, sizeof expected, "%" PRId64 " assign values", ps->n);
    for (int64_t j = 0; j < ps->n; ++j) {
        int64_t cell = 0;
        token t;
        err = read_integer(ps, context, "assign value", expected, &cell, &t);
        if (err != PN_OK)
            return err;
        if (cell < 0 || cell >= size)
            return fail_at(ps, t.line, "cell index %" PRId64 " out of range [0, %d) for rule %s",
                           cell, (int)size, rule_label(ps, r).s);
        void *p = reserve(ps->assign, &ps->assign_cap, ps->assign_count + 1, sizeof *ps->assign);
        if (!p)
            return out_of_memory(ps);
        ps->assign = p;
        ps->assign[ps->assign_count++] = (int32_t)cell;
    }
    return PN_OK;
}

static pn_error read_target_value(parser *ps, const char *context, int32_t i, const char *expected,
                                  double *value, token *t)
{
    *t = next_token(ps);
    number_status status = t->text ? scan_real(t, value) : NUMBER_BAD;
    if (status != NUMBER_OK)
        return number_error(ps, t, status, context, "target", expected);
    if (!isfinite(*value))
        return fail_at(ps, t->line, "%starget b_%d is not a finite number (%s)", context, (int)i,
                       describe(t).s);
    /* above 1 by no more than the sum's tolerance is rounding */
    if (!(*value >= 0.0 && *value <= 1.0 + TARGET_SUM_TOLERANCE))
        return fail_at(ps, t->line, "%starget b_%d %s is out of range [0, 1]", context, (int)i,
                       describe(t).s);
    return PN_OK;
}

/* `target` and the m_r targets of rule r, which must sum to 1. */
static pn_error read_targets(parser *ps, int32_t r)
{
    pn_error err = expect_keyword(ps, "target");
    if (err != PN_OK)
        return err;
    const int32_t size = ps->rule_size[r];
    const size_t first = (size_t)(ps->num_cells - size);
    char context[sizeof(quoted) + 16];
    snprintf(context, sizeof context, "rule %s: ", rule_label(ps, r).s);
    char expected[64];
    snprintf(expected, sizeof expected, "%d target values", (int)size);
    double sum = 0.0;
    token t = {NULL, 0, 0};
    for (int32_t i = 0; i < size; ++i) {
        double b = 0.0;
        err = read_target_value(ps, context, i, expected, &b, &t);
        if (err != PN_OK)
            return err;
        void *p = reserve(ps->target, &ps->target_cap, first + (size_t)i + 1, sizeof *ps->target);
        if (!p)
            return out_of_memory(ps);
        ps->target = p;
        ps->target[first + (size_t)i] = b;
        sum += b; /* same order as pn_problem_validate */
    }
    if (fabs(sum - 1.0) > TARGET_SUM_TOLERANCE)
        return fail_at(ps, t.line, "targets of rule %s sum to %.9g, not 1 (tolerance 1e-6)",
                       rule_label(ps, r).s, sum);
    return PN_OK;
}

static pn_error read_rules(parser *ps, int64_t declared_rules)
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

static pn_error expect_end(parser *ps, const char *after)
{
    token t = next_token(ps);
    if (t.text)
        return fail_at(ps, t.line, "unexpected token %s after the last %s", describe(&t).s, after);
    return PN_OK;
}

/* ------------------------------------------------------------------------ */
/* Groups (grouped form) */

static uint64_t hash_rows(const int32_t *rows, int32_t num_rules)
{
    uint64_t h = 0x9E3779B97F4A7C15ull;
    for (int32_t r = 0; r < num_rules; ++r) {
        h ^= (uint32_t)rows[r];
        h *= 0xFF51AFD7ED558CCDull;
        h ^= h >> 29;
    }
    return h;
}

/* Puts record k into the table unless an equal record is there already:
 * returns that record's index, or -1 when record k is new. The table must
 * have a free slot. */
static int64_t insert_record(parser *ps, size_t k)
{
    const int32_t K = ps->num_rules;
    const int32_t *rows = ps->group_rows + k * (size_t)K;
    size_t mask = ps->slot_cap - 1;
    size_t h = (size_t)hash_rows(rows, K) & mask;
    while (ps->slots[h] != 0) {
        size_t other = (size_t)(ps->slots[h] - 1);
        if (memcmp(ps->group_rows + other * (size_t)K, rows, (size_t)K * sizeof *rows) == 0)
            return (int64_t)other;
        h = (h + 1) & mask;
    }
    ps->slots[h] = (int64_t)k + 1;
    return -1;
}

static int grow_slots(parser *ps, size_t records)
{
    size_t cap = ps->slot_cap ? ps->slot_cap : 64;
    while (cap < 2 * records)
        cap *= 2;
    if (cap == ps->slot_cap)
        return 0;
    int64_t *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    free(ps->slots);
    ps->slots = slots;
    ps->slot_cap = cap;
    /* Re-insert the records already in the table: all of them are distinct. */
    for (size_t k = 0; k + 1 < records; ++k)
        insert_record(ps, k);
    return 0;
}

static pn_error reserve_record(parser *ps, size_t k)
{
    const size_t K = (size_t)ps->num_rules;
    if (k + 1 > SIZE_MAX / K)
        return out_of_memory(ps);
    void *p = reserve(ps->group_rows, &ps->group_rows_cap, (k + 1) * K, sizeof *ps->group_rows);
    if (!p)
        return out_of_memory(ps);
    ps->group_rows = p;
    p = reserve(ps->group_size, &ps->group_size_cap, k + 1, sizeof *ps->group_size);
    if (!p)
        return out_of_memory(ps);
    ps->group_size = p;
    p = reserve(ps->group_line, &ps->group_line_cap, k + 1, sizeof *ps->group_line);
    if (!p)
        return out_of_memory(ps);
    ps->group_line = p;
    if (grow_slots(ps, k + 1) != 0)
        return out_of_memory(ps);
    return PN_OK;
}

/* `<c_k> <a_k1> ... <a_kK>`; *total accumulates the counts (never above n). */
static pn_error read_group_record(parser *ps, int64_t k, int64_t declared, int64_t *total)
{
    const size_t K = (size_t)ps->num_rules;
    pn_error err = reserve_record(ps, (size_t)k);
    if (err != PN_OK)
        return err;
    char context[48];
    snprintf(context, sizeof context, "group record %" PRId64 ": ", k + 1);
    char expected[64];
    snprintf(expected, sizeof expected, "%" PRId64 " group records", declared);
    int64_t count = 0;
    token t;
    err = read_integer(ps, "", "group count", expected, &count, &t);
    if (err != PN_OK)
        return err;
    if (count < 1)
        return fail_at(ps, t.line, "%scount must be >= 1 (got %" PRId64 ")", context, count);
    /* *total <= n and count <= INT64_MAX, so the unsigned sum cannot wrap. */
    uint64_t sum = (uint64_t)*total + (uint64_t)count;
    if (sum > (uint64_t)ps->n)
        return fail_at(ps, t.line, "group counts sum to at least %" PRIu64 ", but n is %" PRId64,
                       sum, ps->n);
    *total = (int64_t)sum;
    ps->group_size[k] = count;
    ps->group_line[k] = t.line;

    snprintf(expected, sizeof expected, "%d cell indices", (int)K);
    int32_t *rows = ps->group_rows + (size_t)k * K;
    int32_t start = 0;
    for (size_t r = 0; r < K; ++r) {
        int64_t cell = 0;
        err = read_integer(ps, context, "cell index", expected, &cell, &t);
        if (err != PN_OK)
            return err;
        const int32_t size = ps->rule_size[r];
        if (cell < 0 || cell >= size)
            return fail_at(ps, t.line, "cell index %" PRId64 " out of range [0, %d) for rule %s",
                           cell, (int)size, rule_label(ps, (int32_t)r).s);
        rows[r] = start + (int32_t)cell;
        start += size;
    }
    int64_t earlier = insert_record(ps, (size_t)k);
    if (earlier >= 0)
        return fail_at(ps, ps->group_line[k], "group record repeats record on line %" PRId64,
                       ps->group_line[earlier]);
    return PN_OK;
}

static pn_error read_groups(parser *ps)
{
    int64_t declared = 0;
    token t;
    pn_error err = read_count(ps, "groups", "the number of groups", &declared, &t);
    if (err != PN_OK)
        return err;
    if (declared > ps->n)
        return fail_at(ps, t.line, "%" PRId64 " groups, but n is only %" PRId64, declared, ps->n);
    int64_t total = 0;
    int64_t last_line = t.line;
    for (int64_t k = 0; k < declared; ++k) {
        err = read_group_record(ps, k, declared, &total);
        if (err != PN_OK)
            return err;
        ps->num_groups = k + 1;
        last_line = ps->line;
    }
    err = expect_end(ps, "group");
    if (err != PN_OK)
        return err;
    if (total != ps->n)
        return fail_at(ps, last_line, "group counts sum to %" PRId64 ", but n is %" PRId64, total,
                       ps->n);
    return PN_OK;
}

/* ------------------------------------------------------------------------ */
/* Building the problem */

static int assign_source(void *ctx, int32_t rule, int64_t first, int64_t count, int32_t *cells)
{
    const parser *ps = ctx;
    size_t offset = (size_t)rule * (size_t)ps->n + (size_t)first;
    memcpy(cells, ps->assign + offset, (size_t)count * sizeof *cells);
    return 0;
}

/* Turns a failure of an engine call into a message naming the input. */
static pn_error forward_error(parser *ps, pn_error err, const pn_error_info *inner)
{
    if (err == PN_ERR_NOMEM)
        return pn_fail(ps->info, PN_ERR_NOMEM, "%s: %s", ps->name, inner->message);
    return fail_at(ps, ps->end_line, "%s", inner->message);
}

static pn_error create_problem(parser *ps)
{
    pn_error_info inner = {PN_OK, ""};
    pn_error err = pn_problem_create(ps->n, ps->num_rules, ps->rule_size,
                                     (const char *const *)ps->rule_name, &ps->prob, &inner);
    if (err != PN_OK)
        return forward_error(ps, err, &inner);
    memcpy(ps->prob->target, ps->target, (size_t)ps->num_cells * sizeof *ps->target);
    return PN_OK;
}

static pn_error store_groups(parser *ps)
{
    pn_error_info inner = {PN_OK, ""};
    pn_error err;
    if (ps->form == PN_FORM_FULL) {
        err = pn_deoverlap(ps->prob, assign_source, ps, &inner);
    } else {
        err = pn_problem_set_groups(ps->prob, ps->num_groups, &inner);
        if (err == PN_OK) {
            size_t k = (size_t)ps->num_groups;
            memcpy(ps->prob->group_rows, ps->group_rows,
                   k * (size_t)ps->num_rules * sizeof *ps->group_rows);
            memcpy(ps->prob->group_size, ps->group_size, k * sizeof *ps->group_size);
        }
    }
    /* Final safety net: the checks above should already imply validity. */
    if (err == PN_OK)
        err = pn_problem_validate(ps->prob, &inner);
    if (err != PN_OK)
        return forward_error(ps, err, &inner);
    return PN_OK;
}

static pn_error parse_all(parser *ps)
{
    int64_t declared_rules = 0;
    pn_error err = read_header(ps);
    if (err == PN_OK)
        err = read_sizes(ps, &declared_rules);
    if (err == PN_OK)
        err = read_rules(ps, declared_rules);
    if (err != PN_OK)
        return err;
    if (ps->form == PN_FORM_FULL)
        err = expect_end(ps, "rule");
    else
        err = read_groups(ps);
    if (err == PN_OK)
        err = create_problem(ps);
    if (err == PN_OK)
        err = store_groups(ps);
    return err;
}

static int64_t line_of_end(const char *data, size_t size)
{
    int64_t line = 1;
    for (size_t i = 0; i < size; ++i)
        if (data[i] == '\n' && i + 1 < size)
            line++;
    return line;
}

static void parser_free(parser *ps)
{
    if (ps->rule_name)
        for (int32_t r = 0; r < ps->num_rules; ++r)
            free(ps->rule_name[r]);
    free(ps->rule_name);
    free(ps->rule_size);
    free(ps->target);
    free(ps->assign);
    free(ps->group_rows);
    free(ps->group_size);
    free(ps->group_line);
    free(ps->slots);
    pn_problem_free(ps->prob);
}

pn_error pn_instance_parse(const char *name, const char *data, size_t size, pn_problem **out,
                           pn_instance_form *form, pn_error_info *info)
{
    if (!out)
        return pn_fail(info, PN_ERR_INVALID, "pn_instance_parse: no output given");
    *out = NULL;
    if (!data && size > 0)
        return pn_fail(info, PN_ERR_INVALID, "pn_instance_parse: no data given");
    if (!data)
        data = "";
    const size_t bom = pn_file_bom_length(data, size);
    data += bom;
    size -= bom;
    parser ps;
    memset(&ps, 0, sizeof ps);
    ps.name = name ? name : "(input)";
    ps.pos = data;
    ps.end = data + size;
    ps.line = 1;
    ps.end_line = line_of_end(data, size);
    ps.info = info;
    pn_error err = parse_all(&ps);
    if (err == PN_OK) {
        *out = ps.prob;
        ps.prob = NULL;
        if (form)
            *form = ps.form;
        if (info) {
            info->code = PN_OK;
            info->message[0] = '\0';
        }
    }
    parser_free(&ps);
    return err;
}

/* ------------------------------------------------------------------------ */
/* Files */

pn_error pn_instance_read(const char *path, pn_problem **out, pn_instance_form *form,
                          pn_error_info *info)
{
    if (!out || !path)
        return pn_fail(info, PN_ERR_INVALID, "pn_instance_read: no path or output given");
    *out = NULL;
    char *data = NULL;
    size_t size = 0;
    pn_error err = pn_file_read(path, PN_FILE_MAX_BYTES, &data, &size, info);
    if (err != PN_OK)
        return err;
    err = pn_instance_parse(path, data, size, out, form, info);
    free(data);
    return err;
}

/* A name can be written if reading it back gives the same single token. */
static int name_is_writable(const char *name)
{
    if (!name[0])
        return 0;
    for (const char *c = name; *c; ++c)
        if (is_space(*c) || *c == '#')
            return 0;
    return 1;
}

static void write_problem(FILE *out, const pn_problem *prob)
{
    const int32_t K = prob->num_rules;
    fprintf(out, "parnassus-grouped 1\nn %" PRId64 "\nrules %d\n", prob->n, (int)K);
    for (int32_t r = 0; r < K; ++r) {
        fprintf(out, "rule %s %d\ntarget", prob->rule_name[r], (int)pn_rule_size(prob, r));
        for (int32_t i = prob->rule_start[r]; i < prob->rule_start[r + 1]; ++i)
            fprintf(out, " %.17g", prob->target[i]); /* 17 digits: exact round trip */
        fputc('\n', out);
    }
    fprintf(out, "groups %" PRId64 "\n", prob->num_groups);
    for (int64_t k = 0; k < prob->num_groups; ++k) {
        const int32_t *rows = prob->group_rows + k * K;
        fprintf(out, "%" PRId64, prob->group_size[k]);
        for (int32_t r = 0; r < K; ++r)
            fprintf(out, " %d", (int)(rows[r] - prob->rule_start[r]));
        fputc('\n', out);
    }
}

pn_error pn_instance_write_grouped(FILE *out, const pn_problem *prob, pn_error_info *info)
{
    if (!out || !prob)
        return pn_fail(info, PN_ERR_INVALID, "pn_instance_write_grouped: no stream or problem");
    pn_error err = pn_problem_validate(prob, info);
    if (err != PN_OK)
        return err;
    for (int32_t r = 0; r < prob->num_rules; ++r)
        if (!name_is_writable(prob->rule_name[r]))
            return pn_fail(info, PN_ERR_INVALID,
                           "rule %d: name %s is empty or contains white space or '#'", (int)r + 1,
                           quote(prob->rule_name[r], strlen(prob->rule_name[r])).s);
    write_problem(out, prob);
    if (fflush(out) != 0 || ferror(out))
        return pn_fail(info, PN_ERR_IO, "writing the instance failed: %s", strerror(errno));
    return PN_OK;
}
