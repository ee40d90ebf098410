#include "parnassus/memory.h"

#include <stdio.h>

void pn_bytes_text(int64_t bytes, char *buf, size_t len)
{
    static const char *const unit[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = (double)(bytes < 0 ? 0 : bytes);
    int u = 0;
    while (v >= 1024.0 && u < 6) {
        v /= 1024.0;
        u++;
    }
    if (u == 0)
        snprintf(buf, len, "%lld bytes", (long long)bytes);
    else if (v < 10.0 && v != (double)(int64_t)v)
        snprintf(buf, len, "%.1f %s", v, unit[u]);
    else
        snprintf(buf, len, "%.0f %s", v, unit[u]);
}

int64_t pn_bytes_add(int64_t a, int64_t b)
{
    return a > INT64_MAX - b ? INT64_MAX : a + b;
}

int64_t pn_bytes_mul(int64_t a, int64_t b)
{
    if (a <= 0 || b <= 0)
        return 0;
    return a > INT64_MAX / b ? INT64_MAX : a * b;
}

pn_error pn_memory_check(int64_t need, int64_t limit, pn_error_info *info, const char *what)
{
    if (need <= limit)
        return PN_OK;
    char need_text[32], limit_text[32];
    pn_bytes_text(need, need_text, sizeof need_text);
    pn_bytes_text(limit, limit_text, sizeof limit_text);
    if (need == INT64_MAX)
        return pn_fail(info, PN_ERR_LIMIT,
                       "%s needs more memory than can be counted, over the memory limit of %s",
                       what, limit_text);
    return pn_fail(info, PN_ERR_LIMIT, "%s needs about %s, over the memory limit of %s", what,
                   need_text, limit_text);
}
