/* Reading a whole file into memory, with errors that name the file. */
#ifndef PARNASSUS_FILE_H
#define PARNASSUS_FILE_H

#include <stddef.h>

#include "parnassus/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The size limit of every file the engine and its programs read, unless a
 * reader documents a smaller one: 64 MiB. */
#define PN_FILE_MAX_BYTES ((size_t)64 << 20)

/* Reads the file at `path` into a malloc'ed buffer *data of *size bytes,
 * NUL-terminated (the terminator not counted). At most max_size bytes are
 * read (0: PN_FILE_MAX_BYTES), so an endless stream such as /dev/zero
 * fails early. Errors name the file: PN_ERR_IO when it cannot be opened or
 * read or is a directory ("FILE: is a directory"), PN_ERR_PARSE when it is
 * larger than the limit ("FILE: larger than the limit of 64 MiB"),
 * PN_ERR_NOMEM. On failure *data is NULL. */
pn_error pn_file_read(const char *path, size_t max_size, char **data, size_t *size,
                      pn_error_info *info);

/* 3 when text (len bytes) starts with a UTF-8 byte order mark (EF BB BF),
 * else 0: the text readers skip it. */
size_t pn_file_bom_length(const char *text, size_t len);

#ifdef __cplusplus
}
#endif

#endif
