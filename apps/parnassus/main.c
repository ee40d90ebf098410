/* parnassus: command-line tool of the rule realization and selection
 * engine. Dispatches to the subcommands (docs/cli.md). */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "blas_kernels.h"
#include "cmd_render.h"
#include "cmd_style.h"
#include "options.h"
#include "plot.h"

#ifndef PN_VERSION
#error "PN_VERSION must be defined by the build"
#endif

typedef struct subcommand {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} subcommand;

static const subcommand subcommands[] = {
    {"solve", pn_cmd_solve, "realize a rule system at one setting of the knobs"},
    {"path", pn_cmd_path, "compute the lambda_w solution path (table, JSON, CSV, plot)"},
    {"learn", pn_cmd_learn, "learn a rule set's targets from chorales or MIDI files"},
    {"sample", pn_cmd_sample, "generate music from a rule set into a MIDI file"},
    {"analyze", pn_cmd_analyze, "which rules a piece follows, and each rule's error"},
    {"render", pn_cmd_render, "host the LV2 plugin offline and record what it plays"},
    {"evaluate", pn_cmd_evaluate, "style statistics of music against a reference (TV, rates)"},
    {"baseline", pn_cmd_baseline, "a Markov chain over sonorities, sampled into a MIDI file"},
    {"sweep", pn_cmd_sweep, "the style of generated music over one knob's range (table, plot)"},
};

enum { NUM_SUBCOMMANDS = sizeof subcommands / sizeof subcommands[0] };

static void print_usage(FILE *out)
{
    fprintf(out, "usage: parnassus COMMAND [ARGS]\n"
                 "       parnassus help [COMMAND]\n"
                 "       parnassus --version\n"
                 "\n"
                 "Probabilistic rule realization and selection.\n"
                 "\n"
                 "commands:\n");
    for (int i = 0; i < NUM_SUBCOMMANDS; ++i)
        fprintf(out, "  %-8s %s\n", subcommands[i].name, subcommands[i].summary);
    fprintf(out, "\n"
                 "Run 'parnassus COMMAND --help' for the options of a command.\n"
                 "Exit status: 0 success, 1 failure, 2 bad usage or bad input file.\n");
}

static const subcommand *find_subcommand(const char *name)
{
    for (int i = 0; i < NUM_SUBCOMMANDS; ++i)
        if (strcmp(subcommands[i].name, name) == 0)
            return &subcommands[i];
    return NULL;
}

static int usage_error(const char *what, const char *word)
{
    fprintf(stderr, "parnassus: %s '%s'\nsee 'parnassus --help'\n", what, word);
    return PN_EXIT_USAGE;
}

/* "parnassus help [COMMAND]" */
static int run_help(int argc, char **argv)
{
    if (argc == 0) {
        print_usage(stdout);
        return PN_EXIT_OK;
    }
    if (argc > 1)
        return usage_error("unexpected argument", argv[1]);
    const subcommand *sub = find_subcommand(argv[0]);
    if (!sub)
        return usage_error("unknown command", argv[0]);
    char help[] = "--help";
    char *help_argv[] = {help, NULL};
    return sub->run(1, help_argv);
}

static int dispatch(int argc, char **argv)
{
    if (argc < 2) {
        print_usage(stderr);
        return PN_EXIT_USAGE;
    }
    const char *word = argv[1];
    if (strcmp(word, "--help") == 0 || strcmp(word, "-h") == 0) {
        print_usage(stdout);
        return PN_EXIT_OK;
    }
    if (strcmp(word, "--version") == 0) {
        if (argc > 2)
            return usage_error("unexpected argument", argv[2]);
        printf("parnassus %s\n", PN_VERSION);
        pn_app_print_blas(stdout);
        return PN_EXIT_OK;
    }
    if (strcmp(word, "help") == 0)
        return run_help(argc - 2, argv + 2);
    const subcommand *sub = find_subcommand(word);
    if (!sub)
        return usage_error(word[0] == '-' ? "unknown option" : "unknown command", word);
    return sub->run(argc - 2, argv + 2);
}

int main(int argc, char **argv)
{
    pn_app_use_full_blas_kernels(argv);
    int rc = dispatch(argc, argv);
    pn_plot_shutdown();
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "parnassus: error writing standard output\n");
        return PN_EXIT_FAILURE;
    }
    if (rc == PN_EXIT_INTERRUPTED) {
        /* end as Ctrl-C would have ended us, so that a shell running us in
         * a loop or a script stops as well (it exits with 130 then) */
        fflush(stderr);
        signal(SIGINT, SIG_DFL);
        raise(SIGINT);
    }
    return rc;
}
