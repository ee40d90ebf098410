/* Lock-free SPSC message ring (see ring.h). head and tail only grow; their
 * difference is the fill. The release store of head publishes the bytes
 * written before it to the consumer's acquire load, and likewise for tail
 * in the other direction. */
#include "ring.h"

#include <stdlib.h>
#include <string.h>

int pnh_ring_init(pnh_ring *r, size_t capacity)
{
    size_t size = 64;
    while (size < capacity)
        size *= 2;
    r->buf = malloc(size);
    if (!r->buf)
        return 0;
    r->size = size;
    atomic_init(&r->head, 0);
    atomic_init(&r->tail, 0);
    return 1;
}

void pnh_ring_free(pnh_ring *r)
{
    free(r->buf);
    r->buf = NULL;
}

static void copy_in(pnh_ring *r, size_t at, const void *data, size_t n)
{
    size_t off = at & (r->size - 1);
    size_t first = r->size - off < n ? r->size - off : n;
    memcpy(r->buf + off, data, first);
    memcpy(r->buf, (const unsigned char *)data + first, n - first);
}

static void copy_out(const pnh_ring *r, size_t at, void *out, size_t n)
{
    size_t off = at & (r->size - 1);
    size_t first = r->size - off < n ? r->size - off : n;
    memcpy(out, r->buf + off, first);
    memcpy((unsigned char *)out + first, r->buf, n - first);
}

int pnh_ring_write(pnh_ring *r, const void *data, uint32_t size)
{
    size_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    size_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
    size_t need = sizeof size + (size_t)size;
    if (r->size - (head - tail) < need)
        return 0;
    copy_in(r, head, &size, sizeof size);
    copy_in(r, head + sizeof size, data, size);
    atomic_store_explicit(&r->head, head + need, memory_order_release);
    return 1;
}

int pnh_ring_peek(pnh_ring *r, uint32_t *size)
{
    size_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    size_t head = atomic_load_explicit(&r->head, memory_order_acquire);
    if (head - tail < sizeof *size)
        return 0;
    copy_out(r, tail, size, sizeof *size);
    return 1;
}

int pnh_ring_read(pnh_ring *r, void *out, uint32_t cap, uint32_t *size)
{
    size_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    size_t head = atomic_load_explicit(&r->head, memory_order_acquire);
    if (head - tail < sizeof *size)
        return 0;
    copy_out(r, tail, size, sizeof *size);
    if (*size > cap)
        return 0;
    copy_out(r, tail + sizeof *size, out, *size);
    atomic_store_explicit(&r->tail, tail + sizeof *size + *size, memory_order_release);
    return 1;
}
