/* The instance reader's lexical layer: messages naming the input and the
 * line, tokens (white space and '#' comments between them), numbers, and
 * arrays that grow as values arrive. */
#include "instance_reader.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Messages */

pn_error pn_ir_fail_at(parser *ps, int64_t line, const char *fmt, ...)
{
    char reason[REASON_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    return pn_fail(ps->info, PN_ERR_PARSE, "%s:%" PRId64 ": %s", ps->name, line, reason);
}

pn_error pn_ir_out_of_memory(const parser *ps)
{
    return pn_fail(ps->info, PN_ERR_NOMEM, "%s: out of memory", ps->name);
}

quoted pn_ir_quote(const char *text, size_t len)
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
quoted pn_ir_describe(const token *t)
{
    if (!t->text) {
        quoted q;
        memcpy(q.s, "end of file", sizeof "end of file");
        return q;
    }
    return pn_ir_quote(t->text, t->len);
}

quoted pn_ir_rule_label(const parser *ps, int32_t r)
{
    const char *name = ps->rule_name[r];
    return pn_ir_quote(name, strlen(name));
}

/* ------------------------------------------------------------------------ */
/* Tokens */

int pn_ir_is_space(char c)
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
        } else if (pn_ir_is_space(c)) {
            if (c == '\n')
                ps->line++;
            ps->pos++;
        } else {
            return;
        }
    }
}

token pn_ir_next_token(parser *ps)
{
    token t = {NULL, 0, ps->end_line};
    skip_space_and_comments(ps);
    if (ps->pos == ps->end)
        return t;
    t.text = ps->pos;
    t.line = ps->line;
    while (ps->pos < ps->end && !pn_ir_is_space(*ps->pos) && *ps->pos != '#')
        ps->pos++;
    t.len = (size_t)(ps->pos - t.text);
    return t;
}

int pn_ir_token_is(const token *t, const char *word)
{
    size_t len = strlen(word);
    return t->text && t->len == len && memcmp(t->text, word, len) == 0;
}

/* ------------------------------------------------------------------------ */
/* Numbers */

number_status pn_ir_scan_real(const token *t, double *value)
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
            return pn_ir_scan_real(t, &ignored) == NUMBER_OK ? NUMBER_NOT_INTEGER : NUMBER_BAD;
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
pn_error pn_ir_number_error(parser *ps, const token *t, number_status status, const char *context,
                            const char *what, const char *expected)
{
    switch (status) {
    case NUMBER_TOO_LONG:
        return pn_ir_fail_at(ps, t->line, "%snumber too long: %s (more than %d characters)",
                             context, pn_ir_describe(t).s, MAX_NUMBER_LEN);
    case NUMBER_NOT_INTEGER:
        return pn_ir_fail_at(ps, t->line, "%s%s %s is not an integer", context, what,
                             pn_ir_describe(t).s);
    case NUMBER_OUT_OF_RANGE:
        return pn_ir_fail_at(ps, t->line, "%s%s %s is out of range [%" PRId64 ", %" PRId64 "]",
                             context, what, pn_ir_describe(t).s, INT64_MIN, INT64_MAX);
    case NUMBER_OK:
    case NUMBER_BAD:
        break;
    }
    return pn_ir_fail_at(ps, t->line, "%sexpected %s, found %s", context, expected,
                         pn_ir_describe(t).s);
}

/* Reads the next token as an integer; see number_error for the arguments. */
pn_error pn_ir_read_integer(parser *ps, const char *context, const char *what, const char *expected,
                            int64_t *value, token *tok)
{
    *tok = pn_ir_next_token(ps);
    number_status status = tok->text ? scan_integer(tok, value) : NUMBER_BAD;
    if (status != NUMBER_OK)
        return pn_ir_number_error(ps, tok, status, context, what, expected);
    return PN_OK;
}

/* ------------------------------------------------------------------------ */
/* Growing arrays */

/* Makes room for `need` elements, doubling the capacity. On failure the old
 * block is left alone (still owned by the caller) and NULL is returned. */
void *pn_ir_reserve(void *ptr, size_t *capacity, size_t need, size_t elem_size)
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

pn_error pn_ir_expect_keyword(parser *ps, const char *keyword)
{
    token t = pn_ir_next_token(ps);
    if (!pn_ir_token_is(&t, keyword))
        return pn_ir_fail_at(ps, t.line, "expected keyword \"%s\", found %s", keyword,
                             pn_ir_describe(&t).s);
    return PN_OK;
}

/* Reads `keyword <count>` with count >= 1. */
pn_error pn_ir_read_count(parser *ps, const char *keyword, const char *label, int64_t *count,
                          token *tok)
{
    pn_error err = pn_ir_expect_keyword(ps, keyword);
    if (err != PN_OK)
        return err;
    char expected[64];
    snprintf(expected, sizeof expected, "an integer after \"%s\"", keyword);
    err = pn_ir_read_integer(ps, "", label, expected, count, tok);
    if (err != PN_OK)
        return err;
    if (*count < 1)
        return pn_ir_fail_at(ps, tok->line, "%s must be >= 1 (got %" PRId64 ")", label, *count);
    return PN_OK;
}

pn_error pn_ir_expect_end(parser *ps, const char *after)
{
    token t = pn_ir_next_token(ps);
    if (t.text)
        return pn_ir_fail_at(ps, t.line, "unexpected token %s after the last %s",
                             pn_ir_describe(&t).s, after);
    return PN_OK;
}
