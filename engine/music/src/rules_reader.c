/* Helpers of the rule-set reader (rules_reader.h). */
#include "rules_reader.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "json_messages.h"

#include "parnassus/rules.h"

enum { SHOWN_TEXT_BYTES = 60 }; /* a string of the file in a message is cut after these */

pn_error pn_rr_fail_at(const pn_rr *rd, const char *path, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const pn_error err = pn_json_vfail_at(rd->info, rd->name, path, fmt, ap);
    va_end(ap);
    return err;
}

pn_error pn_rr_fail_type(const pn_rr *rd, const char *path, const char *what, const json_t *v)
{
    return pn_json_fail_type(rd->info, rd->name, path, what, v);
}

pn_error pn_rr_out_of_memory(const pn_rr *rd)
{
    return pn_fail(rd->info, PN_ERR_NOMEM, "%.200s: out of memory", rd->name);
}

void pn_rr_show_text(const char *s, char *buf, size_t size)
{
    pn_json_show_text(s, SHOWN_TEXT_BYTES, buf, size);
}

pn_error pn_rr_check_keys(const pn_rr *rd, const char *path, const json_t *obj,
                          const char *const *allowed)
{
    return pn_json_check_keys(rd->info, rd->name, path, obj, allowed, SHOWN_TEXT_BYTES, 80);
}

/* An integer field in [lo, hi]. */
pn_error pn_rr_get_int(const pn_rr *rd, const char *path, const json_t *v, int lo, int hi, int *out)
{
    if (!json_is_integer(v)) {
        return pn_rr_fail_type(rd, path, "an integer", v);
    }
    json_int_t x = json_integer_value(v);
    if (x < lo || x > hi)
        return pn_rr_fail_at(rd, path, "must be %d..%d, got %" JSON_INTEGER_FORMAT, lo, hi, x);
    *out = (int)x;
    return PN_OK;
}

pn_error pn_rr_get_real(const pn_rr *rd, const char *path, const json_t *v, double lo, double hi,
                        int lo_open, double *out)
{
    if (!json_is_number(v))
        return pn_rr_fail_type(rd, path, "a number", v);
    const double x = json_number_value(v);
    if (!(lo_open ? x > lo : x >= lo) || !(x <= hi)) {
        char shown[64], low[32], high[32];
        pn_json_describe(v, shown, sizeof shown);
        pn_format_real(lo, 0, low, sizeof low);
        pn_format_real(hi, 0, high, sizeof high);
        return pn_rr_fail_at(rd, path, "must be a number in %c%s, %s], got %s", lo_open ? '(' : '[',
                             low, high, shown);
    }
    *out = x;
    return PN_OK;
}

/* A non-empty string field of at most PN_RULES_NAME_MAX bytes. */
pn_error pn_rr_get_name(const pn_rr *rd, const char *path, const json_t *v, const char **out)
{
    if (!json_is_string(v)) {
        return pn_rr_fail_type(rd, path, "a string", v);
    }
    size_t len = json_string_length(v);
    if (len == 0)
        return pn_rr_fail_at(rd, path, "must not be empty");
    if (len > PN_RULES_NAME_MAX)
        return pn_rr_fail_at(rd, path, "longer than %d bytes", PN_RULES_NAME_MAX);
    *out = json_string_value(v);
    return PN_OK;
}
