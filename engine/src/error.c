#include "parnassus/error.h"

#include <stdarg.h>
#include <stdio.h>

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
