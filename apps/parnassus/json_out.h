/* The --json documents of "parnassus solve" and "parnassus path"
 * (schemas in docs/cli.md), written with jansson. */
#ifndef PARNASSUS_CLI_JSON_OUT_H
#define PARNASSUS_CLI_JSON_OUT_H

#include <stdio.h>

#include <jansson.h>

#include "parnassus/instance_io.h"
#include "parnassus/path.h"
#include "parnassus/problem.h"
#include "parnassus/rules.h"
#include "parnassus/solver.h"

/* What the document says about the input. */
typedef struct pn_json_instance {
    const char *file; /* as given on the command line */
    pn_instance_form form;
    const pn_problem *prob;
    const pn_rule_set *rules; /* a rule set: form "rules", features; NULL for an instance file */
    const int *context;       /* the --context pitches (rules->space.num_voices), or NULL */
} pn_json_instance;

/* The non-selective realization a solve was compared with (--plot-errors). */
typedef struct pn_json_baseline {
    double log2_lambda_w, alpha;
    const double *rule_error; /* K entries */
} pn_json_baseline;

/* One solve: the engine's info plus the per-rule statistics (K entries
 * each) and the CLI-measured seconds. Returns 0, or -1 after printing a
 * reason on stderr. */
int pn_json_write_solve(FILE *out, const pn_json_instance *in, const pn_settings *settings,
                        const pn_info *info, const double *group_norm, const double *rule_error,
                        const unsigned char *selected, double seconds,
                        const pn_json_baseline *baseline);

/* A whole lambda_w path. Returns 0, or -1 after printing a reason. */
int pn_json_write_path(FILE *out, const pn_json_instance *in, const pn_settings *settings,
                       const pn_path *path, double seconds);

/* What "parnassus analyze" found (docs/cli.md). */
typedef struct pn_json_analysis {
    const char *rules_file, *piece_file;
    const pn_rule_set *rules;
    const pn_problem *prob;
    const pn_settings *settings;
    const char *context_mode; /* "unconditional" or "context" */
    int tonic;                /* -1: keys kept */
    const char *mode;         /* "any", "major", "minor" */
    const char *split;        /* or NULL */
    int grid;
    long pieces, steps, steps_counted, steps_outside;
    const char *summary; /* the loader's summary line, or NULL */
    double weighted_error;
    int num_followed, group_selective;
    const double *rule_error, *group_norm; /* K each */
    const unsigned char *followed;         /* K */
} pn_json_analysis;

int pn_json_write_analyze(FILE *out, const pn_json_analysis *a);

/* A JSON string for text that may not be UTF-8 (file names, rule names):
 * every byte >= 0x80 of invalid text becomes "\xNN". NULL when out of
 * memory. */
json_t *pn_json_text(const char *s);

#endif
