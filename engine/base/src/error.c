#include "parnassus/error.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *pn_error_name(pn_error code)
{
    switch (code) {
    case PN_OK:
        return "ok";
    case PN_ERR_NOMEM:
        return "out of memory";
    case PN_ERR_INVALID:
        return "invalid argument";
    case PN_ERR_IO:
        return "i/o error";
    case PN_ERR_PARSE:
        return "parse error";
    case PN_ERR_NUMERIC:
        return "numerical failure";
    case PN_ERR_LIMIT:
        return "over the memory limit";
    case PN_ERR_INTERRUPTED:
        return "interrupted";
    }
    return "unknown error";
}

pn_error pn_fail(pn_error_info *info, pn_error code, const char *fmt, ...)
{
    if (info) {
        va_list ap;
        va_start(ap, fmt);
        info->code = code;
        vsnprintf(info->message, sizeof info->message, fmt, ap);
        va_end(ap);
    }
    return code;
}

void pn_format_real(double x, int keep_point, char *buf, size_t size)
{
    if (!buf || size == 0)
        return;
    if (isnan(x)) {
        snprintf(buf, size, "nan");
        return;
    }
    if (isinf(x)) {
        snprintf(buf, size, x < 0 ? "-inf" : "inf");
        return;
    }
    char text[40], whole[40] = "";
    for (int digits = 1; digits <= 17; ++digits) {
        snprintf(text, sizeof text, "%.*g", digits, x);
        if (strtod(text, NULL) == x)
            break;
    }
    /* a whole number in full (16777215 and 60, not 1.7e+07 and 6e+01),
     * from 1e9 on with an exponent when that is shorter (1e+12) */
    if (x == floor(x) && fabs(x) < 1e15)
        snprintf(whole, sizeof whole, "%.0f%s", x, keep_point ? ".0" : "");
    if (whole[0] && !(fabs(x) >= 1e9 && strchr(text, 'e') && strlen(text) < strlen(whole)))
        snprintf(text, sizeof text, "%s", whole);
    snprintf(buf, size, "%s", text);
}
