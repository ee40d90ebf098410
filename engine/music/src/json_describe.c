#include "json_describe.h"

#include <stdio.h>

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
