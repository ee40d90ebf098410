/* Error codes and messages shared by every engine call.
 *
 * Errors (something went wrong: bad input, no memory) are separate from
 * solver statuses (how a solve ended), as in OSQP/SCS. A call that fails
 * returns a pn_error and, when given a pn_error_info, fills its message with
 * a human-readable reason that names the file, line or field. */
#ifndef PARNASSUS_ERROR_H
#define PARNASSUS_ERROR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum pn_error {
    PN_OK = 0,
    PN_ERR_NOMEM,       /* an allocation failed */
    PN_ERR_INVALID,     /* an argument or setting is out of range */
    PN_ERR_IO,          /* a file could not be opened or read */
    PN_ERR_PARSE,       /* malformed input file */
    PN_ERR_NUMERIC,     /* a factorisation or a root-find broke down */
    PN_ERR_LIMIT,       /* the work would take more memory than the limit allows */
    PN_ERR_INTERRUPTED, /* stopped by the caller (e.g. Ctrl-C) before it finished */
} pn_error;

enum { PN_MESSAGE_SIZE = 512 };

typedef struct pn_error_info {
    pn_error code;
    char message[PN_MESSAGE_SIZE];
} pn_error_info;

/* Short name of a code, e.g. "parse error". Never NULL. */
const char *pn_error_name(pn_error code);

/* Sets info->code and formats info->message (printf-style); info may be
 * NULL. Returns code, so callers can write `return pn_fail(info, ...)`. */
pn_error pn_fail(pn_error_info *info, pn_error code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Writes x as the shortest text that reads back as exactly x ("0.1",
 * "1e+308", "16777215"; "nan", "inf", "-inf"), for messages that echo a
 * number or a range. With keep_point, a whole number keeps a decimal point
 * ("72.0"), as a JSON real written so: a message then shows the value as
 * its file does. */
void pn_format_real(double x, int keep_point, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif
