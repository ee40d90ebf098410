/* The LV2 worker in three modes (see pnh_worker_mode in lv2host.h).
 *
 * Requests go audio thread -> worker through one SPSC ring, responses
 * worker -> audio thread through another. In the two synchronous modes
 * the "worker" is the audio thread itself: IMMEDIATE delivers responses at
 * once, END_OF_RUN parks them in the response ring until after run(). */
#include "host_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void worker_enter(const pnh_host *h)
{
    if (h->s.hooks.worker_enter)
        h->s.hooks.worker_enter(h->s.hooks.user);
}

static void worker_leave(const pnh_host *h)
{
    if (h->s.hooks.worker_leave)
        h->s.hooks.worker_leave(h->s.hooks.user);
}

void pnh_audio_enter(const pnh_host *h)
{
    if (h->s.hooks.audio_enter)
        h->s.hooks.audio_enter(h->s.hooks.user);
}

void pnh_audio_leave(const pnh_host *h)
{
    if (h->s.hooks.audio_leave)
        h->s.hooks.audio_leave(h->s.hooks.user);
}

static void deliver(pnh_host *h, uint32_t size, const void *body)
{
    pnh_audio_enter(h);
    h->worker.iface->work_response(lilv_instance_get_handle(h->instance), size, body);
    pnh_audio_leave(h);
    atomic_fetch_add(&h->worker.responses_done, 1);
}

/* respond() as given to work(). */
static LV2_Worker_Status respond(LV2_Worker_Respond_Handle handle, uint32_t size, const void *data)
{
    pnh_host *h = handle;
    if (h->worker.mode == PNH_WORKER_IMMEDIATE) {
        deliver(h, size, data);
        return LV2_WORKER_SUCCESS;
    }
    return pnh_ring_write(&h->worker.responses, data, size) ? LV2_WORKER_SUCCESS
                                                            : LV2_WORKER_ERR_NO_SPACE;
}

static void do_work(pnh_host *h, uint32_t size, const void *data)
{
    worker_enter(h);
    h->worker.iface->work(lilv_instance_get_handle(h->instance), respond, h, size, data);
    worker_leave(h);
    atomic_fetch_add(&h->worker.completed, 1);
}

LV2_Worker_Status pnh_worker_schedule(LV2_Worker_Schedule_Handle handle, uint32_t size,
                                      const void *data)
{
    pnh_host *h = handle;
    pnh_worker *w = &h->worker;
    if (!w->iface || !h->instance)
        return LV2_WORKER_ERR_UNKNOWN;
    if (w->mode != PNH_WORKER_THREADED) {
        atomic_fetch_add(&w->scheduled, 1);
        do_work(h, size, data);
        return LV2_WORKER_SUCCESS;
    }
    /* counted first, so that completed never overtakes scheduled */
    atomic_fetch_add(&w->scheduled, 1);
    if (size > w->scratch_size || !pnh_ring_write(&w->requests, data, size)) {
        atomic_fetch_sub(&w->scheduled, 1);
        atomic_fetch_add(&w->refused, 1);
        return LV2_WORKER_ERR_NO_SPACE;
    }
    sem_post(&w->wake);
    return LV2_WORKER_SUCCESS;
}

static void *worker_main(void *arg)
{
    pnh_host *h = arg;
    pnh_worker *w = &h->worker;
    for (;;) {
        while (sem_wait(&w->wake) != 0 && errno == EINTR) {
        }
        /* requests still queued at quit are done first: they may carry
         * things the plugin expects back through a response */
        uint32_t size;
        while (pnh_ring_read(&w->requests, w->scratch, w->scratch_size, &size))
            do_work(h, size, w->scratch);
        if (atomic_load(&w->quit))
            break;
    }
    return NULL;
}

pn_error pnh_worker_init(pnh_host *h, pn_error_info *info)
{
    pnh_worker *w = &h->worker;
    w->mode = h->s.worker_mode;
    atomic_init(&w->quit, 0);
    atomic_init(&w->scheduled, 0);
    atomic_init(&w->completed, 0);
    atomic_init(&w->responses_done, 0);
    atomic_init(&w->refused, 0);
    w->scratch_size = (uint32_t)h->s.worker_ring_size;
    if (!pnh_ring_init(&w->requests, h->s.worker_ring_size) ||
        !pnh_ring_init(&w->responses, h->s.worker_ring_size) ||
        !(w->scratch = malloc(w->scratch_size)) || !(w->resp_scratch = malloc(w->scratch_size)))
        return pn_fail(info, PN_ERR_NOMEM, "lv2 host: out of memory (worker rings)");
    if (sem_init(&w->wake, 0, 0) != 0)
        return pn_fail(info, PN_ERR_NOMEM, "lv2 host: cannot create the worker semaphore");
    w->sem_ready = 1;
    return PN_OK;
}

pn_error pnh_worker_start(pnh_host *h, pn_error_info *info)
{
    pnh_worker *w = &h->worker;
    w->iface = lilv_instance_get_extension_data(h->instance, LV2_WORKER__interface);
    if (!w->iface || w->mode != PNH_WORKER_THREADED)
        return PN_OK;
    if (pthread_create(&w->thread, NULL, worker_main, h) != 0)
        return pn_fail(info, PN_ERR_NOMEM, "lv2 host: cannot start the worker thread");
    w->thread_started = 1;
    return PN_OK;
}

void pnh_worker_stop(pnh_host *h)
{
    pnh_worker *w = &h->worker;
    if (!w->thread_started)
        return;
    atomic_store(&w->quit, 1);
    sem_post(&w->wake);
    pthread_join(w->thread, NULL);
    w->thread_started = 0;
}

void pnh_worker_drain(pnh_host *h)
{
    pnh_worker *w = &h->worker;
    uint32_t size;
    if (!w->iface || !w->responses.buf)
        return;
    while (pnh_ring_read(&w->responses, w->resp_scratch, w->scratch_size, &size))
        deliver(h, size, w->resp_scratch);
}

void pnh_worker_free(pnh_host *h)
{
    pnh_worker *w = &h->worker;
    pnh_worker_stop(h);
    if (w->sem_ready)
        sem_destroy(&w->wake);
    w->sem_ready = 0;
    pnh_ring_free(&w->requests);
    pnh_ring_free(&w->responses);
    free(w->scratch);
    free(w->resp_scratch);
    w->scratch = w->resp_scratch = NULL;
}

void pnh_worker_after_run(pnh_host *h)
{
    pnh_worker *w = &h->worker;
    if (!w->iface)
        return;
    /* A response may schedule more work, whose responses (END_OF_RUN) land
     * in the same ring: the cap keeps a chatty plugin from looping here. */
    uint32_t size;
    for (int n = 0;
         n < 4096 && pnh_ring_read(&w->responses, w->resp_scratch, w->scratch_size, &size); ++n)
        deliver(h, size, w->resp_scratch);
    if (w->iface->end_run) {
        pnh_audio_enter(h);
        w->iface->end_run(lilv_instance_get_handle(h->instance));
        pnh_audio_leave(h);
    }
}

void pnh_worker_stats_get(const pnh_host *h, pnh_worker_stats *out)
{
    const pnh_worker *w = &h->worker;
    out->scheduled = atomic_load(&w->scheduled);
    out->completed = atomic_load(&w->completed);
    out->responses = atomic_load(&w->responses_done);
    out->refused = atomic_load(&w->refused);
}

int pnh_wait_worker_idle(pnh_host *h, double timeout_seconds)
{
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        if (atomic_load(&h->worker.completed) >= atomic_load(&h->worker.scheduled))
            return 1;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double t =
            (double)(now.tv_sec - start.tv_sec) + 1e-9 * (double)(now.tv_nsec - start.tv_nsec);
        if (t >= timeout_seconds)
            return 0;
        struct timespec nap = {0, 1000000};
        nanosleep(&nap, NULL);
    }
}
