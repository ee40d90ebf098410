/* Counting the allocations of a stretch of code, to prove it allocates
 * nothing (glibc builds without sanitizers only: interpose.h; under
 * sanitizers ALLOC_COUNT_WORKS is 0 and the counts stay 0, the code still
 * runs). */
#ifndef PARNASSUS_TEST_ALLOC_COUNT_H
#define PARNASSUS_TEST_ALLOC_COUNT_H

#include "interpose.h"

#define ALLOC_COUNT_WORKS INTERPOSE_WORKS

/* Starts counting malloc, calloc, realloc and free (of non-NULL) calls. */
void alloc_count_begin(void);

/* Stops counting; returns the calls since alloc_count_begin(). */
long alloc_count_end(void);

/* 1 when the counter sees this binary's allocations: checks itself with
 * one malloc and free through a pointer the compiler cannot elide. */
int alloc_count_self_check(void);

#endif
