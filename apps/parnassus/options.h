/* Plumbing shared by the subcommands of the parnassus tool: exit codes, a
 * small option parser ("--opt value" and "--opt=value"), strict number
 * parsing and the usage-error message format (docs/cli.md). */
#ifndef PARNASSUS_CLI_OPTIONS_H
#define PARNASSUS_CLI_OPTIONS_H

#include <stdint.h>

#include "parnassus/error.h"
#include "parnassus/instance_io.h"

enum {
    PN_EXIT_OK = 0,
    PN_EXIT_FAILURE = 1, /* internal or numerical failure, output not written */
    PN_EXIT_USAGE = 2,   /* bad command line or bad input file */
};

enum { PN_CLI_MAX_OPTIONS = 16, PN_CLI_MAX_ARGS = 4 };

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
 * PN_CLI_MAX_OPTIONS options. A repeated option keeps its last value; "--"
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

/* A decimal integer in [0, 2^63 - 1] (so that JSON can carry it). */
int pn_cli_seed(const char *command, const char *option, const char *text, uint64_t *out);

/* Reads an instance file for `command`; on failure prints the reader's
 * message (it names the file and line) and returns the exit status: a file
 * that cannot be read or parsed is bad input (PN_EXIT_USAGE), anything else
 * a failure. */
int pn_cli_load_instance(const char *command, const char *file, pn_problem **prob,
                         pn_instance_form *form);

/* The last component of a path, for titles ("dir/a1.txt" -> "a1.txt"). */
const char *pn_cli_basename(const char *path);

/* The subcommands: argv holds the words after the subcommand's name. */
int pn_cmd_solve(int argc, char **argv);
int pn_cmd_path(int argc, char **argv);

#endif
