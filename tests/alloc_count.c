/* Counting allocator for tests (alloc_count.h), on interpose.c. */
#include "alloc_count.h"

#include <stddef.h>
#include <string.h>

static volatile long count;

static void count_call(const char *call)
{
    if (strcmp(call, "pthread_mutex_lock") != 0)
        count = count + 1;
}

void alloc_count_begin(void)
{
    count = 0;
    interpose_hook = count_call;
}

long alloc_count_end(void)
{
    interpose_hook = NULL;
    return count;
}

int alloc_count_self_check(void)
{
#if ALLOC_COUNT_WORKS
    void *(*volatile alloc_fn)(size_t) = malloc;
    alloc_count_begin();
    free(alloc_fn(16));
    return alloc_count_end() == 2;
#else
    return 0;
#endif
}
