/* Plumbing shared by the subcommands of the parnassus tool: exit codes, a
 * small option parser ("--opt value" and "--opt=value"), strict number
 * parsing and the usage-error message format (docs/cli.md). */
#ifndef PARNASSUS_CLI_OPTIONS_H
#define PARNASSUS_CLI_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "parnassus/error.h"
#include "parnassus/instance_io.h"
#include "parnassus/rules.h"
#include "parnassus/solver.h"
#include "parnassus/space.h"

enum {
    PN_EXIT_OK = 0,
    PN_EXIT_FAILURE = 1,       /* internal or numerical failure, output not written */
    PN_EXIT_USAGE = 2,         /* bad command line or bad input file */
    PN_EXIT_INTERRUPTED = 130, /* stopped by Ctrl-C (128 + SIGINT) */
};

enum { PN_CLI_MAX_OPTIONS = 16, PN_CLI_MAX_ARGS = 256 };

typedef struct pn_cli_option {
    const char *name; /* without the leading "--" */
    int takes_value;  /* 1: "--name VALUE" or "--name=VALUE"; 0: a flag */
} pn_cli_option;

typedef struct pn_cli_args {
    const char
        *value[PN_CLI_MAX_OPTIONS];   /* per option: its value, "" for a flag, NULL if absent */
    const char *arg[PN_CLI_MAX_ARGS]; /* positional arguments, in order */
    int num_args;
    int help; /* --help or -h was given */
} pn_cli_args;

/* Parses the words after the subcommand against a table of at most
 * PN_CLI_MAX_OPTIONS options; "-o" stands for "--output" when the table
 * has that option. A repeated option keeps its last value; "--"
 * ends the options. With --help anywhere, sets help and stops. Returns
 * PN_EXIT_OK, or prints a usage error and returns PN_EXIT_USAGE. */
int pn_cli_parse(const char *command, const pn_cli_option *options, int num_options, int max_args,
                 int argc, char **argv, pn_cli_args *out);

/* Prints "parnassus COMMAND: MESSAGE" and "see 'parnassus COMMAND --help'"
 * on stderr; returns PN_EXIT_USAGE. */
int pn_cli_usage_error(const char *command, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* A finite decimal (or C hexadecimal) real in [lo, hi] (hi may be
 * INFINITY), with nothing before or after it.
 * Returns PN_EXIT_OK or prints a usage error for --option and returns
 * PN_EXIT_USAGE. */
int pn_cli_real(const char *command, const char *option, const char *text, double lo, double hi,
                double *out);

/* pn_cli_real() for a whole number in [lo, hi]. */
int pn_cli_int(const char *command, const char *option, const char *text, int lo, int hi, int *out);

/* --max-memory: a size in bytes with an optional K, M, G or T suffix
 * (powers of 1024; "1.5G" allowed), within [1M, PN_MAX_MEMORY_LIMIT];
 * NULL leaves *out at PN_DEFAULT_MAX_MEMORY. */
int pn_cli_max_memory(const char *command, const char *text, int64_t *out);

/* The help line of --max-memory, shared by the commands that take it. */
#define PN_CLI_MAX_MEMORY_HELP                                                                     \
    "  --max-memory SIZE  refuse a rule set or instance that would need more memory\n"             \
    "                     than SIZE to realize, e.g. 512M, 4G (default 1G)\n"

/* Reports an engine failure of `command` on stderr ("parnassus COMMAND:
 * [WHERE: ]MESSAGE", with how to raise the memory limit when that was the
 * cause) and returns its exit status: bad input (PN_EXIT_USAGE) for files
 * that cannot be read, parsed or realized within the limit, 130 for an
 * interruption, PN_EXIT_FAILURE otherwise. where may be NULL. */
int pn_cli_engine_error(const char *command, const char *where, const pn_error_info *err);

/* Largest --lambda-p, the bound of the rule format's "lambda_p"
 * (docs/rule-format.md): larger only flattens q* further, and far above it
 * the solver's numbers overflow (1e308 gave a NaN KKT residual). */
#define PN_CLI_MAX_LAMBDA_P 1.0

/* A decimal integer in [0, 2^63 - 1] (so that JSON can carry it). */
int pn_cli_seed(const char *command, const char *option, const char *text, uint64_t *out);

/* Checks, before any work, that an output file can be written: OPTION
 * ("output", "csv", ...) names it in the message. A file that is there is
 * opened for writing but left as it is; one that is not is created and
 * removed again. "-" (standard output) passes. Returns PN_EXIT_OK, or
 * prints "parnassus COMMAND: --OPTION PATH: cannot write: REASON" and
 * returns PN_EXIT_USAGE. */
int pn_cli_check_output(const char *command, const char *option, const char *path);

/* A solve that ended with a NaN objective or KKT residual is a failure,
 * never "solved": prints that it broke down (naming FILE) and returns
 * PN_EXIT_FAILURE; otherwise PN_EXIT_OK. */
int pn_cli_check_result(const char *command, const char *file, const pn_info *info);

/* Reads an instance file for `command`; on failure prints the reader's
 * message (it names the file and line) and returns the exit status: a file
 * that cannot be read or parsed is bad input (PN_EXIT_USAGE), anything else
 * a failure. */
int pn_cli_load_instance(const char *command, const char *file, pn_problem **prob,
                         pn_instance_form *form);

/* ---- Rule systems: instance files and rule sets ----
 *
 * solve and path read either an instance file (docs/instance-format.md) or
 * a rule set ("parnassus-rules/1", docs/rule-format.md): a file whose first
 * byte other than white space is '{' is a rule set. A rule set may be
 * realized for a given previous sonority (--context). */

typedef struct pn_cli_problem {
    pn_problem *prob;                 /* the de-overlapped problem; targets for the context */
    pn_instance_form form;            /* instance files: their form */
    pn_rule_set *rules;               /* rule sets: the set; NULL for an instance file */
    int has_context;                  /* --context was given (rule sets only) */
    int context[PN_SPACE_MAX_VOICES]; /* its pitches, voice 1 first, PN_REST for a rest */
} pn_cli_problem;

/* The syntax of --context: comma-separated MIDI pitches 0..127 or R (a
 * rest), voice 1 (soprano) first, 1..PN_SPACE_MAX_VOICES of them. Stores
 * the pitches and their count; prints a usage error and returns
 * PN_EXIT_USAGE for anything else. */
int pn_cli_parse_context(const char *command, const char *text, int *pitches, int *count);

/* 1 when FILE starts, after a UTF-8 byte order mark and white space, with
 * '{' (a rule set); 0 otherwise, also when it cannot be read (the reader
 * then reports why). */
int pn_cli_is_rule_set(const char *file);

/* Reads FILE (an instance file or a rule set) for `command`. context_text
 * is the value of --context or NULL: for a rule set its pitches must match
 * the set's voices and ranges, and the targets become those of
 * pn_rule_set_targets() for that previous sonority (without it: the first-step
 * back-off targets); for an instance file it is a usage error. On failure
 * prints the reason (naming the file) and returns PN_EXIT_USAGE for bad
 * input or PN_EXIT_FAILURE; *out is then empty. */
int pn_cli_load_problem(const char *command, const char *file, const char *context_text,
                        int64_t max_memory, pn_cli_problem *out);

void pn_cli_problem_free(pn_cli_problem *p);

/* Reads a rule set for `command` (reporting errors like pn_cli_load_problem). */
int pn_cli_load_rules(const char *command, const char *file, int64_t max_memory, pn_rule_set **out);

/* "72,67,R,48" for k pitches (PN_REST as R) into buf. */
void pn_cli_format_pitches(const int *pitches, int count, char *buf, size_t size);

/* The solver knobs of a command line: each text is an option's value or
 * NULL (option absent, the setting stays). --log2-lambda-w within
 * [-60, 60], --alpha in [0, 1], --lambda-p in [0, PN_CLI_MAX_LAMBDA_P],
 * --seed 0..2^63-1.
 * Returns PN_EXIT_OK or prints a usage error and returns PN_EXIT_USAGE. */
int pn_cli_knobs(const char *command, const char *log2_lambda_w, const char *alpha,
                 const char *lambda_p, const char *seed, pn_settings *s);

/* A rule set's own lambda_p (its "lambda_p" field) when the command line
 * gave none: `given` is the --lambda-p text or NULL; rs may be NULL (an
 * instance file). */
struct pn_rule_set;
void pn_cli_rules_lambda_p(const struct pn_rule_set *rs, const char *given, pn_settings *s);

/* A tonic: a note name "C", "c#", "Db", "Bb", ... or 0..11 (sets *out to
 * the pitch class), or, when allow_keep, "keep" (sets *out to -1).
 * Returns 0, or -1 when text is none of these. */
int pn_cli_tonic(const char *text, int allow_keep, int *out);

/* The last component of a path, for titles ("dir/a1.txt" -> "a1.txt"). */
const char *pn_cli_basename(const char *path);

/* The subcommands: argv holds the words after the subcommand's name. */
int pn_cmd_solve(int argc, char **argv);
int pn_cmd_path(int argc, char **argv);
int pn_cmd_learn(int argc, char **argv);
int pn_cmd_sample(int argc, char **argv);
int pn_cmd_analyze(int argc, char **argv);

#endif
