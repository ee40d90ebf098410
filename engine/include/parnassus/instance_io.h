/* Readers and writers of the generic instance formats
 * (docs/instance-format.md): the full form "parnassus-instance 1" and the
 * grouped form "parnassus-grouped 1". */
#ifndef PARNASSUS_INSTANCE_IO_H
#define PARNASSUS_INSTANCE_IO_H

#include <stddef.h>
#include <stdio.h>

#include "parnassus/problem.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum pn_instance_form {
    PN_FORM_FULL = 0,    /* "parnassus-instance 1" */
    PN_FORM_GROUPED = 1, /* "parnassus-grouped 1" */
} pn_instance_form;

/* Parses either form from memory. `name` is used in messages
 * ("NAME:LINE: reason"). On success *out owns a validated problem whose
 * groups are the distinct columns: for the full form in order of first
 * appearance in the raw space, for the grouped form in file order.
 * `form` (may be NULL) receives which form was read. */
pn_error pn_instance_parse(const char *name, const char *data, size_t size, pn_problem **out,
                           pn_instance_form *form, pn_error_info *info);

/* Reads a file and parses it (PN_ERR_IO if it cannot be read). */
pn_error pn_instance_read(const char *path, pn_problem **out, pn_instance_form *form,
                          pn_error_info *info);

/* Writes the grouped form. */
pn_error pn_instance_write_grouped(FILE *out, const pn_problem *prob, pn_error_info *info);

#ifdef __cplusplus
}
#endif

#endif
