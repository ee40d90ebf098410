/* Reading a whole file (parnassus/file.h). */
#define _POSIX_C_SOURCE 200809L /* fileno, fstat */
#include "parnassus/file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* "FILE: larger than the limit of 64 MiB" (or of N bytes). */
static pn_error too_large(const char *path, size_t max_size, pn_error_info *info)
{
    const size_t mib = (size_t)1 << 20;
    if (max_size % mib == 0)
        return pn_fail(info, PN_ERR_PARSE, "%s: larger than the limit of %zu MiB", path,
                       max_size / mib);
    return pn_fail(info, PN_ERR_PARSE, "%s: larger than the limit of %zu bytes", path, max_size);
}

/* Reads at most max_size + 1 bytes of f into *buf: one byte past the limit
 * tells a file at the limit from a larger one. `hint` is the size fstat
 * gave (0 for a pipe or a device), so a regular file takes one block. */
static pn_error read_bounded(FILE *f, const char *path, size_t max_size, size_t hint, char **buf,
                             size_t *len, pn_error_info *info)
{
    const size_t limit = max_size + 1;
    size_t cap = 0, used = 0;
    *buf = NULL;
    for (;;) {
        if (used + 1 >= cap) { /* room for more and the terminator */
            size_t grown_cap = cap ? 2 * cap : (hint ? hint + 2 : 65536);
            if (grown_cap > limit + 1)
                grown_cap = limit + 1;
            char *grown = realloc(*buf, grown_cap);
            if (!grown)
                return pn_fail(info, PN_ERR_NOMEM, "%s: out of memory", path);
            *buf = grown;
            cap = grown_cap;
        }
        const size_t want = (cap - 1 < limit ? cap - 1 : limit) - used;
        const size_t got = want ? fread(*buf + used, 1, want, f) : 0;
        used += got;
        if (used > max_size)
            return too_large(path, max_size, info);
        if (got == 0) {
            if (ferror(f))
                return pn_fail(info, PN_ERR_IO, "%s: cannot read: %s", path,
                               strerror(errno ? errno : EIO));
            break;
        }
    }
    *len = used;
    return PN_OK;
}

pn_error pn_file_read(const char *path, size_t max_size, char **data, size_t *size,
                      pn_error_info *info)
{
    if (!path || !data || !size)
        return pn_fail(info, PN_ERR_INVALID, "pn_file_read: NULL argument");
    *data = NULL;
    *size = 0;
    if (max_size == 0)
        max_size = PN_FILE_MAX_BYTES;
    errno = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return pn_fail(info, PN_ERR_IO, "%s: cannot open: %s", path,
                       strerror(errno ? errno : ENOENT));
    struct stat st;
    size_t hint = 0;
    pn_error err = PN_OK;
    if (fstat(fileno(f), &st) == 0) {
        if (S_ISDIR(st.st_mode))
            err = pn_fail(info, PN_ERR_IO, "%s: is a directory", path);
        else if (S_ISREG(st.st_mode) && (unsigned long long)st.st_size > max_size)
            err = too_large(path, max_size, info);
        else if (S_ISREG(st.st_mode))
            hint = (size_t)st.st_size;
    }
    char *buf = NULL;
    size_t len = 0;
    if (err == PN_OK)
        err = read_bounded(f, path, max_size, hint, &buf, &len, info);
    fclose(f);
    if (err != PN_OK) {
        free(buf);
        return err;
    }
    buf[len] = '\0';
    *data = buf;
    *size = len;
    return PN_OK;
}

size_t pn_file_bom_length(const char *text, size_t len)
{
    return text && len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
}
