/* Reading a whole file (parnassus/file.h). */
#include "parnassus/file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

pn_error pn_file_read(const char *path, size_t max_size, char **data, size_t *size,
                      pn_error_info *info)
{
    if (!path || !data || !size)
        return pn_fail(info, PN_ERR_INVALID, "pn_file_read: NULL argument");
    *data = NULL;
    *size = 0;
    errno = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return pn_fail(info, PN_ERR_IO, "%s: cannot open: %s", path,
                       strerror(errno ? errno : ENOENT));
    char *buf = NULL;
    size_t len = 0, cap = 0;
    pn_error err = PN_OK;
    for (;;) {
        if (len + 1 >= cap) { /* room for more and the terminator */
            if (max_size && len > max_size) {
                err = pn_fail(info, PN_ERR_PARSE, "%s: larger than %zu bytes", path, max_size);
                break;
            }
            const size_t grown_cap = cap ? 2 * cap : 65536;
            char *grown = realloc(buf, grown_cap);
            if (!grown) {
                err = pn_fail(info, PN_ERR_NOMEM, "%s: out of memory", path);
                break;
            }
            buf = grown;
            cap = grown_cap;
        }
        const size_t got = fread(buf + len, 1, cap - 1 - len, f);
        len += got;
        if (got == 0) {
            if (ferror(f))
                err = pn_fail(info, PN_ERR_IO, "%s: cannot read: %s", path,
                              strerror(errno ? errno : EIO));
            break;
        }
    }
    fclose(f);
    if (err == PN_OK && max_size && len > max_size)
        err = pn_fail(info, PN_ERR_PARSE, "%s: larger than %zu bytes", path, max_size);
    if (err != PN_OK) {
        free(buf);
        return err;
    }
    buf[len] = '\0';
    *data = buf;
    *size = len;
    return PN_OK;
}
