/* The --json documents of "parnassus solve" and "parnassus path"
 * (schemas in docs/cli.md), written with jansson. */
#ifndef PARNASSUS_CLI_JSON_OUT_H
#define PARNASSUS_CLI_JSON_OUT_H

#include <stdio.h>

#include "parnassus/instance_io.h"
#include "parnassus/path.h"
#include "parnassus/problem.h"
#include "parnassus/solver.h"

/* What the document says about the input. */
typedef struct pn_json_instance {
    const char *file; /* as given on the command line */
    pn_instance_form form;
    const pn_problem *prob;
} pn_json_instance;

/* One solve: the engine's info plus the per-rule statistics (K entries
 * each) and the CLI-measured seconds. Returns 0, or -1 after printing a
 * reason on stderr. */
int pn_json_write_solve(FILE *out, const pn_json_instance *in, const pn_settings *settings,
                        const pn_info *info, const double *group_norm, const double *rule_error,
                        const unsigned char *selected, double seconds);

/* A whole lambda_w path. Returns 0, or -1 after printing a reason. */
int pn_json_write_path(FILE *out, const pn_json_instance *in, const pn_settings *settings,
                       const pn_path *path, double seconds);

#endif
