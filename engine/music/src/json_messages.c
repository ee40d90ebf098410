#include "json_messages.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "parnassus/error.h"

void pn_json_describe(const json_t *v, char *buf, size_t size)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        snprintf(buf, size, "an object");
        break;
    case JSON_ARRAY:
        snprintf(buf, size, "an array");
        break;
    case JSON_STRING:
        snprintf(buf, size, "a string");
        break;
    case JSON_INTEGER:
        snprintf(buf, size, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        break;
    case JSON_REAL:
        /* as the file has it: a real 72.0 is not the integer 72 */
        pn_format_real(json_real_value(v), 1, buf, size);
        break;
    case JSON_TRUE:
        snprintf(buf, size, "true");
        break;
    case JSON_FALSE:
        snprintf(buf, size, "false");
        break;
    case JSON_NULL:
        snprintf(buf, size, "null");
        break;
    }
}

pn_error pn_json_vfail_at(pn_error_info *info, const char *name, const char *path, const char *fmt,
                          va_list ap)
{
    char reason[PN_MESSAGE_SIZE];
    vsnprintf(reason, sizeof reason, fmt, ap);
    return pn_fail(info, PN_ERR_PARSE, "%.200s: %s: %s", name, path, reason);
}

pn_error pn_json_fail_type(pn_error_info *info, const char *name, const char *path,
                           const char *what, const json_t *v)
{
    char d[64];
    pn_json_describe(v, d, sizeof d);
    return pn_fail(info, PN_ERR_PARSE, "%.200s: %s: expected %s, got %s", name, path, what, d);
}

void pn_json_show_text(const char *s, size_t max_bytes, char *buf, size_t size)
{
    size_t o = 0;
    for (size_t i = 0; s[i] != '\0'; ++i) {
        if (o + 6 >= size || i >= max_bytes) {
            memcpy(buf + o, "...", 3);
            o += 3;
            break;
        }
        const unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            buf[o++] = '\\';
        buf[o++] = c < 0x20 || c == 0x7f ? '?' : (char)c;
    }
    buf[o] = '\0';
}

pn_error pn_json_check_keys(pn_error_info *info, const char *name, const char *path,
                            const json_t *obj, const char *const *allowed, size_t max_bytes,
                            size_t shown_size)
{
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)(uintptr_t)obj, key, v)
    {
        int known = 0;
        for (const char *const *a = allowed; *a && !known; ++a)
            known = strcmp(*a, key) == 0;
        if (!known) {
            char shown[128];
            pn_json_show_text(key, max_bytes, shown,
                              shown_size < sizeof shown ? shown_size : sizeof shown);
            return pn_fail(info, PN_ERR_PARSE, "%.200s: %s: unknown field \"%s\"", name, path,
                           shown);
        }
    }
    return PN_OK;
}
