/* Inside the instance reader (instance_io.c and the files it reads
 * with): the parser's state, tokens, numbers and messages. Internal to
 * the engine. */
#ifndef PN_INSTANCE_READER_H
#define PN_INSTANCE_READER_H

#include <stddef.h>
#include <stdint.h>

#include "parnassus/instance_io.h"

enum {
    MAX_NUMBER_LEN = 64, /* longest token accepted as a number */
    QUOTE_MAX = 32,      /* bytes of a token shown in a message */
    REASON_SIZE = 400,   /* room for the reason part of a message */
};

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

typedef enum number_status {
    NUMBER_OK,
    NUMBER_TOO_LONG,
    NUMBER_NOT_INTEGER, /* a real number where an integer is required */
    NUMBER_OUT_OF_RANGE,
    NUMBER_BAD, /* not a number at all */
} number_status;

/* ---- Messages (instance_lex.c) ---- */

/* "<name>:<line>: <reason>" as PN_ERR_PARSE. */
pn_error pn_ir_fail_at(parser *ps, int64_t line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
pn_error pn_ir_out_of_memory(const parser *ps);
quoted pn_ir_quote(const char *text, size_t len);
/* What was found where something else was expected. */
quoted pn_ir_describe(const token *t);
quoted pn_ir_rule_label(const parser *ps, int32_t r);

/* ---- Tokens and numbers (instance_lex.c) ---- */

int pn_ir_is_space(char c);
token pn_ir_next_token(parser *ps);
int pn_ir_token_is(const token *t, const char *word);
number_status pn_ir_scan_real(const token *t, double *value);
/* Reports a token that is not the number wanted. `context` prefixes the
 * reason (e.g. `rule "x": `), `what` names the value ("n", "assign value"),
 * `expected` says what should have been there ("4 assign values"). */
pn_error pn_ir_number_error(parser *ps, const token *t, number_status status, const char *context,
                            const char *what, const char *expected);
/* Reads the next token as an integer; see pn_ir_number_error for the
 * arguments. */
pn_error pn_ir_read_integer(parser *ps, const char *context, const char *what, const char *expected,
                            int64_t *value, token *tok);
pn_error pn_ir_expect_keyword(parser *ps, const char *keyword);
/* Reads `keyword <count>` with count >= 1. */
pn_error pn_ir_read_count(parser *ps, const char *keyword, const char *label, int64_t *count,
                          token *tok);
/* Fails on any token left after the last `after`. */
pn_error pn_ir_expect_end(parser *ps, const char *after);

/* Makes room for `need` elements, doubling the capacity. On failure the old
 * block is left alone (still owned by the caller) and NULL is returned. */
void *pn_ir_reserve(void *ptr, size_t *capacity, size_t need, size_t elem_size);

/* ---- The parts of a file ---- */

/* The header line; sets ps->form (instance_rules.c). */
pn_error pn_ir_read_header(parser *ps);
/* `n <n>` and `rules <count>` (instance_rules.c). */
pn_error pn_ir_read_sizes(parser *ps, int64_t *declared_rules);
/* The rules: name, size, assign values (full form), targets
 * (instance_rules.c). */
pn_error pn_ir_read_rules(parser *ps, int64_t declared_rules);
/* `groups <count>` and the group records, to the end (instance_groups.c). */
pn_error pn_ir_read_groups(parser *ps);

#endif
