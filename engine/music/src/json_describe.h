/* Names a JSON value for error messages of the engine's JSON readers.
 * Internal. */
#ifndef PN_JSON_DESCRIBE_H
#define PN_JSON_DESCRIBE_H

#include <stddef.h>

#include <jansson.h>

/* "an object", "an array", "a string", "3.5", "true", "null", ... */
void pn_json_describe(const json_t *v, char *buf, size_t size);

#endif
