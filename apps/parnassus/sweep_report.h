/* The output of `parnassus sweep`: a table for people, the
 * "parnassus-sweep/1" JSON document and the CSV file (docs/evaluate.md). */
#ifndef PARNASSUS_CLI_SWEEP_REPORT_H
#define PARNASSUS_CLI_SWEEP_REPORT_H

#include <stdio.h>

#include "parnassus/style.h"
#include "sweep.h"

typedef struct pn_sweep_report {
    const char *rules_file; /* RULES as given */
    const pn_sweep_request *req;
    const pn_sweep *sweep;
    const pn_style_file *reference;
    const char *reference_file; /* the file read */
    double seconds;             /* wall time of the whole sweep */
} pn_sweep_report;

/* The name of the reference: its "name", else its file name. */
const char *pn_sweep_reference_name(const pn_sweep_report *r);

/* The other knob, held fixed: its name and value. */
const char *pn_sweep_fixed_name(const pn_sweep_request *req);
double pn_sweep_fixed_value(const pn_sweep_request *req);

/* The table. Returns 0, or -1 when out could not be written. */
int pn_sweep_print(FILE *out, const pn_sweep_report *r);

/* The JSON document. Returns 0, or -1 after printing a reason on stderr. */
int pn_sweep_json(FILE *out, const pn_sweep_report *r);

/* One CSV row per point into the file at path. Returns 0, or -1 after
 * printing a reason on stderr (the file is then removed). */
int pn_sweep_csv(const char *path, const pn_sweep_report *r);

#endif
