/* The report of `parnassus evaluate`: a table for people and the
 * "parnassus-evaluate/1" JSON document (docs/evaluate.md). */
#ifndef PARNASSUS_CLI_STYLE_REPORT_H
#define PARNASSUS_CLI_STYLE_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "parnassus/style.h"
#include "style_input.h"

/* Everything an evaluation found. */
typedef struct pn_cli_evaluation {
    const pn_cli_style_source *sources; /* one per input */
    int num_sources;
    const pn_style_stats *input;    /* pooled over the inputs */
    const pn_style_file *reference; /* NULL: --reference none */
    const char *reference_file;     /* the file read, or NULL */
    const char *training;           /* what copy4 compares with, or NULL */
    int64_t training_grams;         /* distinct 4-grams of the training set */
} pn_cli_evaluation;

/* The table. Returns 0, or -1 when out could not be written. */
int pn_cli_style_print(FILE *out, const pn_cli_evaluation *e);

/* The JSON document. Returns 0, or -1 after printing a reason on stderr. */
int pn_cli_style_json(FILE *out, const pn_cli_evaluation *e);

/* "C4" for 60, "Bb2" for 46. */
void pn_cli_note_name(int pitch, char *buf, size_t size);

#endif
