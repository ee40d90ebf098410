/* Small string helpers shared inside the engine. Internal. */
#ifndef PN_TEXT_H
#define PN_TEXT_H

/* A malloc'ed copy of s, or NULL when out of memory. */
char *pn_copy_string(const char *s);

#endif
