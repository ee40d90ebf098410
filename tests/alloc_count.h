/* Counting the allocations of a stretch of code, to prove it allocates
 * nothing (glibc builds without sanitizers only).
 *
 * alloc_count.c replaces the test binary's malloc family with wrappers of
 * glibc's own entry points that count calls between alloc_count_begin()
 * and alloc_count_end(). Sanitizers interpose malloc themselves; there
 * ALLOC_COUNT_WORKS is 0 and the counts stay 0 (the code still runs under
 * them). */
#ifndef PARNASSUS_TEST_ALLOC_COUNT_H
#define PARNASSUS_TEST_ALLOC_COUNT_H

#include <stdlib.h> /* defines __GLIBC__ */

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ALLOC_COUNT_WORKS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||                         \
    __has_feature(memory_sanitizer)
#define ALLOC_COUNT_WORKS 0
#endif
#endif
#if !defined(ALLOC_COUNT_WORKS)
#if defined(__GLIBC__)
#define ALLOC_COUNT_WORKS 1
#else
#define ALLOC_COUNT_WORKS 0
#endif
#endif

/* Starts counting malloc, calloc, realloc and free (of non-NULL) calls. */
void alloc_count_begin(void);

/* Stops counting; returns the calls since alloc_count_begin(). */
long alloc_count_end(void);

/* 1 when the counter sees this binary's allocations: checks itself with
 * one malloc and free through a pointer the compiler cannot elide. */
int alloc_count_self_check(void);

#endif
