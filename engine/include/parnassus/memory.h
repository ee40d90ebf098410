/* The memory limit of a realization, checked before the big allocations.
 *
 * Reading a rule set, de-overlapping it and creating its solver each
 * estimate, from sizes known before they allocate, an upper bound of the
 * bytes they are about to take, and refuse with PN_ERR_LIMIT when it is over
 * the limit: a rule set too large for the machine (say a rule over every
 * sonority of the space) is refused in well under a second instead of
 * exhausting memory. The default keeps a plugin inside a DAW safe. */
#ifndef PARNASSUS_MEMORY_H
#define PARNASSUS_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#include "parnassus/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 GiB */
#define PN_DEFAULT_MAX_MEMORY ((int64_t)1 << 30)

/* Largest limit that can be set: 1 TiB (estimates saturate there). */
#define PN_MAX_MEMORY_LIMIT ((int64_t)1 << 40)

/* Writes bytes for people, e.g. "512 MiB", "1.5 GiB", "37 KiB". */
void pn_bytes_text(int64_t bytes, char *buf, size_t len);

/* a + b and a * b for estimates: saturating at INT64_MAX, never wrapping. */
int64_t pn_bytes_add(int64_t a, int64_t b);
int64_t pn_bytes_mul(int64_t a, int64_t b);

/* PN_OK when `need` <= `limit`; otherwise PN_ERR_LIMIT with the message
 * "WHAT needs about N, over the memory limit of L". */
pn_error pn_memory_check(int64_t need, int64_t limit, pn_error_info *info, const char *what);

#ifdef __cplusplus
}
#endif

#endif
