/* Helper threads (helper.h): a job slot guarded by one mutex, a condition
 * variable for each direction. */
#include "helper.h"

#include <pthread.h>
#include <stdlib.h>

struct pn_helper {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake; /* a job was posted, or quit */
    pthread_cond_t done; /* the job finished */
    pn_helper_job job;   /* the posted job; NULL once taken */
    void *arg;
    int busy; /* posted or running */
    int quit;
};

static void *helper_main(void *user)
{
    pn_helper *h = user;
    pthread_mutex_lock(&h->lock);
    for (;;) {
        while (!h->job && !h->quit)
            pthread_cond_wait(&h->wake, &h->lock);
        if (!h->job) /* quit, nothing left posted */
            break;
        const pn_helper_job job = h->job;
        void *arg = h->arg;
        h->job = NULL;
        pthread_mutex_unlock(&h->lock);
        job(arg);
        pthread_mutex_lock(&h->lock);
        h->busy = 0;
        pthread_cond_signal(&h->done);
    }
    pthread_mutex_unlock(&h->lock);
    return NULL;
}

pn_error pn_helper_create(pn_helper **out, pn_error_info *info)
{
    *out = NULL;
    pn_helper *h = calloc(1, sizeof *h);
    if (!h)
        return pn_fail(info, PN_ERR_NOMEM, "out of memory for a helper thread");
    if (pthread_mutex_init(&h->lock, NULL) != 0) {
        free(h);
        return pn_fail(info, PN_ERR_NOMEM, "cannot create a helper thread's mutex");
    }
    if (pthread_cond_init(&h->wake, NULL) != 0) {
        pthread_mutex_destroy(&h->lock);
        free(h);
        return pn_fail(info, PN_ERR_NOMEM, "cannot create a helper thread's condition variable");
    }
    if (pthread_cond_init(&h->done, NULL) != 0) {
        pthread_cond_destroy(&h->wake);
        pthread_mutex_destroy(&h->lock);
        free(h);
        return pn_fail(info, PN_ERR_NOMEM, "cannot create a helper thread's condition variable");
    }
    if (pthread_create(&h->thread, NULL, helper_main, h) != 0) {
        pthread_cond_destroy(&h->done);
        pthread_cond_destroy(&h->wake);
        pthread_mutex_destroy(&h->lock);
        free(h);
        return pn_fail(info, PN_ERR_NOMEM, "cannot start a helper thread");
    }
    *out = h;
    return PN_OK;
}

void pn_helper_free(pn_helper *h)
{
    if (!h)
        return;
    pthread_mutex_lock(&h->lock);
    h->quit = 1;
    pthread_cond_signal(&h->wake);
    pthread_mutex_unlock(&h->lock);
    pthread_join(h->thread, NULL);
    pthread_cond_destroy(&h->done);
    pthread_cond_destroy(&h->wake);
    pthread_mutex_destroy(&h->lock);
    free(h);
}

void pn_helper_start(pn_helper *h, pn_helper_job job, void *arg)
{
    pthread_mutex_lock(&h->lock);
    h->job = job;
    h->arg = arg;
    h->busy = 1;
    pthread_cond_signal(&h->wake);
    pthread_mutex_unlock(&h->lock);
}

void pn_helper_wait(pn_helper *h)
{
    pthread_mutex_lock(&h->lock);
    while (h->busy)
        pthread_cond_wait(&h->done, &h->lock);
    pthread_mutex_unlock(&h->lock);
}
