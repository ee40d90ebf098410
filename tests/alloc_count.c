/* Counting allocator for tests (alloc_count.h). */
#include "alloc_count.h"

#include <stddef.h>
#include <stdlib.h>

static volatile int counting;
static volatile long count;

void alloc_count_begin(void)
{
    count = 0;
    counting = 1;
}

long alloc_count_end(void)
{
    counting = 0;
    return count;
}

#if ALLOC_COUNT_WORKS
void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *ptr, size_t size);
void __libc_free(void *ptr);

void *malloc(size_t size)
{
    if (counting)
        count = count + 1;
    return __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
    if (counting)
        count = count + 1;
    return __libc_calloc(n, size);
}

void *realloc(void *ptr, size_t size)
{
    if (counting)
        count = count + 1;
    return __libc_realloc(ptr, size);
}

void free(void *ptr)
{
    if (counting && ptr)
        count = count + 1;
    __libc_free(ptr);
}

int alloc_count_self_check(void)
{
    void *(*volatile alloc_fn)(size_t) = malloc;
    alloc_count_begin();
    free(alloc_fn(16));
    return alloc_count_end() == 2;
}
#else
int alloc_count_self_check(void)
{
    return 0;
}
#endif
