/* Names of the internal outcomes (outcome.h). */
#include "outcome.h"

const char *pn_outcome_part(pn_outcome outcome)
{
    switch (outcome) {
    case PN_OUTCOME_OK:
    case PN_OUTCOME_LIMIT:
        return "";
    case PN_OUTCOME_P_LINSYS:
        return "the p-step's linear system";
    case PN_OUTCOME_P_SEARCH:
        return "the p-step's line search";
    case PN_OUTCOME_P_PRICING:
        return "the p-step's pricing";
    case PN_OUTCOME_W_STEP:
        return "the w-step";
    case PN_OUTCOME_NOT_FINITE:
        return "the realization";
    case PN_OUTCOME_INTERRUPTED:
        return "the solve";
    }
    return "the solver";
}

pn_error pn_outcome_error(pn_outcome outcome)
{
    if (outcome >= 0)
        return PN_OK;
    return outcome == PN_OUTCOME_INTERRUPTED ? PN_ERR_INTERRUPTED : PN_ERR_NUMERIC;
}
