/* A lock-free single-producer/single-consumer byte ring carrying
 * length-prefixed messages, for the worker's requests and responses. One
 * thread writes, one reads; neither allocates nor blocks. */
#ifndef PARNASSUS_LV2HOST_RING_H
#define PARNASSUS_LV2HOST_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct pnh_ring {
    unsigned char *buf;
    size_t size;        /* a power of two */
    atomic_size_t head; /* total bytes written (producer) */
    atomic_size_t tail; /* total bytes read (consumer) */
} pnh_ring;

/* Capacity is rounded up to a power of two. Returns 0 on no memory. */
int pnh_ring_init(pnh_ring *r, size_t capacity);
void pnh_ring_free(pnh_ring *r);

/* Writes one message of size bytes; returns 0 (and writes nothing) if it
 * does not fit. */
int pnh_ring_write(pnh_ring *r, const void *data, uint32_t size);

/* Returns 1 and the size of the next message, or 0 if the ring is empty. */
int pnh_ring_peek(pnh_ring *r, uint32_t *size);

/* Reads the next message into out (capacity cap); returns 1 and its size,
 * or 0 if the ring is empty or the message is larger than cap (it then
 * stays in the ring). */
int pnh_ring_read(pnh_ring *r, void *out, uint32_t cap, uint32_t *size);

#endif
