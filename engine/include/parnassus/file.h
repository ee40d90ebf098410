/* Reading a whole file into memory, with errors that name the file. */
#ifndef PARNASSUS_FILE_H
#define PARNASSUS_FILE_H

#include <stddef.h>

#include "parnassus/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Reads the file at `path` into a malloc'ed buffer *data of *size bytes,
 * NUL-terminated (the terminator not counted). PN_ERR_IO when it cannot be
 * opened or read (the message names the file and the reason),
 * PN_ERR_PARSE when it is larger than max_size bytes (0: no limit),
 * PN_ERR_NOMEM. On failure *data is NULL. */
pn_error pn_file_read(const char *path, size_t max_size, char **data, size_t *size,
                      pn_error_info *info);

#ifdef __cplusplus
}
#endif

#endif
