/* Helpers of the rule-set reader (rules_reader.h). */
#include "rules_reader.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "json_describe.h"

#include "parnassus/rules.h"

pn_error pn_rr_fail_at(const pn_rr *rd, const char *path, const char *fmt, ...)
{
    char reason[PN_MESSAGE_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    return pn_fail(rd->info, PN_ERR_PARSE, "%.200s: %s: %s", rd->name, path, reason);
}

/* "PATH: expected WHAT, got <a description of v>" */
pn_error pn_rr_fail_type(const pn_rr *rd, const char *path, const char *what, const json_t *v)
{
    char d[64];
    pn_json_describe(v, d, sizeof d);
    return pn_rr_fail_at(rd, path, "expected %s, got %s", what, d);
}

pn_error pn_rr_out_of_memory(const pn_rr *rd)
{
    return pn_fail(rd->info, PN_ERR_NOMEM, "%.200s: out of memory", rd->name);
}

/* A string from the file as shown in a message: '"' and '\' escaped,
 * control bytes as '?', cut to about 60 bytes. */
void pn_rr_show_text(const char *s, char *buf, size_t size)
{
    size_t o = 0;
    for (size_t i = 0; s[i] != '\0'; ++i) {
        if (o + 6 >= size || i >= 60) {
            memcpy(buf + o, "...", 3);
            o += 3;
            break;
        }
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            buf[o++] = '\\';
            buf[o++] = (char)c;
        } else if (c < 0x20 || c == 0x7f) {
            buf[o++] = '?';
        } else {
            buf[o++] = (char)c;
        }
    }
    buf[o] = '\0';
}

/* Rejects keys of obj not in the NULL-terminated list. */
pn_error pn_rr_check_keys(const pn_rr *rd, const char *path, const json_t *obj,
                          const char *const *allowed)
{
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)(uintptr_t)obj, key, v)
    {
        int known = 0;
        for (const char *const *a = allowed; *a; ++a)
            if (strcmp(*a, key) == 0)
                known = 1;
        if (!known) {
            char shown[80];
            pn_rr_show_text(key, shown, sizeof shown);
            return pn_rr_fail_at(rd, path, "unknown field \"%s\"", shown);
        }
    }
    return PN_OK;
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
