/* What an internal solve came to: it converged, an iteration limit came
 * first, or which part failed. The p-step (pn_pstep_solve), its Newton
 * iteration and linear system, and one alternation run
 * (pn_solver_run_from) return it, so that the message of a failed solve
 * names the part that failed. Failures are negative: `outcome < 0` tests
 * for one. Internal to the engine. */
#ifndef PN_OUTCOME_H
#define PN_OUTCOME_H

#include "parnassus/error.h"

typedef enum pn_outcome {
    PN_OUTCOME_OK = 0,           /* done: the tolerance was met (a run: it ended as its
                                    status says) */
    PN_OUTCOME_LIMIT = 1,        /* an iteration limit came first; the result is usable */
    PN_OUTCOME_P_LINSYS = -1,    /* the p-step's Newton system could not be solved */
    PN_OUTCOME_P_SEARCH = -2,    /* the p-step's Newton iteration found no descent */
    PN_OUTCOME_P_PRICING = -3,   /* the p-step's pricing left no group to solve over */
    PN_OUTCOME_W_STEP = -4,      /* the w-step found no weights */
    PN_OUTCOME_NOT_FINITE = -5,  /* the realization's objective or residuals are not finite */
    PN_OUTCOME_INTERRUPTED = -6, /* the progress callback asked to stop */
} pn_outcome;

/* The failed part, as a message names it ("the p-step's linear system",
 * "the w-step", ...); "" for the two outcomes that are no failure. */
const char *pn_outcome_part(pn_outcome outcome);

/* The error a failure is reported as: PN_ERR_INTERRUPTED for an
 * interruption, PN_ERR_NUMERIC for the others, PN_OK otherwise. */
pn_error pn_outcome_error(pn_outcome outcome);

#endif
