/* The error messages of the engine's JSON readers (rule sets, statistics
 * files, chorales): "<file>: <path>: <reason>", a value named as the file
 * has it, a string of the file quoted safely. Internal. */
#ifndef PN_JSON_MESSAGES_H
#define PN_JSON_MESSAGES_H

#include <stdarg.h>
#include <stddef.h>

#include <jansson.h>

#include "parnassus/error.h"

/* "an object", "an array", "a string", "3.5", "true", "null", ... */
void pn_json_describe(const json_t *v, char *buf, size_t size);

/* "<name>: <path>: <reason>" as PN_ERR_PARSE. */
pn_error pn_json_vfail_at(pn_error_info *info, const char *name, const char *path, const char *fmt,
                          va_list ap)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 0)))
#endif
    ;

/* "<name>: <path>: expected WHAT, got <a description of v>" */
pn_error pn_json_fail_type(pn_error_info *info, const char *name, const char *path,
                           const char *what, const json_t *v);

/* s as a message quotes it: '"' and '\' escaped, control bytes as '?',
 * cut with "..." after max_bytes bytes or when buf is nearly full. */
void pn_json_show_text(const char *s, size_t max_bytes, char *buf, size_t size);

/* Rejects the first key of obj not in the NULL-terminated list allowed:
 * "unknown field \"<key>\"", the key shown by pn_json_show_text with
 * max_bytes into shown_size bytes (at most 128). */
pn_error pn_json_check_keys(pn_error_info *info, const char *name, const char *path,
                            const json_t *obj, const char *const *allowed, size_t max_bytes,
                            size_t shown_size);

#endif
