/* The LV2 Worker side of the plugin: run() posts requests, work() realizes
 * off the audio thread, work_response() publishes the result (plugin.h). */
#include <stdlib.h>
#include <string.h>

#include "plugin.h"

static void log_failure(pnp_plugin *self, const char *what, const pn_error_info *info)
{
    lv2_log_error(&self->logger, "parnassus: %s: %s\n", what, info->message);
}

static LV2_Worker_Status reply(LV2_Worker_Respond_Function respond,
                               LV2_Worker_Respond_Handle handle, pnp_reply_type type,
                               pnp_realization *r)
{
    const pnp_reply msg = {(uint32_t)type, r};
    return respond(handle, sizeof msg, &msg);
}

LV2_Worker_Status pnp_work(LV2_Handle instance, LV2_Worker_Respond_Function respond,
                           LV2_Worker_Respond_Handle handle, uint32_t size, const void *data)
{
    pnp_plugin *self = (pnp_plugin *)instance;
    if (size < sizeof(pnp_job))
        return LV2_WORKER_ERR_UNKNOWN;
    pnp_job job;
    memcpy(&job, data, sizeof job);
    pn_error_info info = {0};
    switch ((pnp_job_type)job.type) {
    case PNP_JOB_REALIZE: {
        pnp_model *m = self->worker_model;
        if (!m || job.model != m)
            return reply(respond, handle, PNP_REPLY_FAILED, NULL); /* asked of an older model */
        pnp_realization *r = pnp_model_realize(m, &job.knobs, job.has_context ? job.context : NULL,
                                               job.context_serial, job.given_voice, &info);
        if (!r) {
            log_failure(self, "realization failed", &info);
            return reply(respond, handle, PNP_REPLY_FAILED, NULL);
        }
        return reply(respond, handle, PNP_REPLY_REALIZED, r);
    }
    case PNP_JOB_LOAD: {
        const char *path = (const char *)data + sizeof job;
        if (job.size < 2 || size < sizeof job + job.size || path[job.size - 1] != '\0')
            return reply(respond, handle, PNP_REPLY_FAILED, NULL);
        pnp_model *m = NULL;
        if (pnp_model_load(path, &job.knobs, &m, &info) != PN_OK) {
            lv2_log_error(&self->logger,
                          "parnassus: rule set not loaded, the previous one keeps playing: %s\n",
                          info.message);
            return reply(respond, handle, PNP_REPLY_FAILED, NULL);
        }
        lv2_log_note(&self->logger, "parnassus: rule set %s loaded\n", path);
        self->worker_model = m; /* run() retires the old one when it switches */
        return reply(respond, handle, PNP_REPLY_SWITCHED, pnp_model_current(m));
    }
    case PNP_JOB_ADOPT:
        if (!job.model)
            return reply(respond, handle, PNP_REPLY_FAILED, NULL);
        self->worker_model = job.model;
        return reply(respond, handle, PNP_REPLY_SWITCHED, pnp_model_current(job.model));
    case PNP_JOB_FREE:
        pnp_model_free(job.model);
        return LV2_WORKER_SUCCESS;
    }
    return LV2_WORKER_ERR_UNKNOWN;
}

void pnp_install(pnp_plugin *self, pnp_realization *r)
{
    pnp_realization *old = self->live;
    self->live = r;
    if (old && old->model != r->model) {
        /* a new rule set: its own voices and ranges, a fresh start */
        if (self->num_retired < (int)(sizeof self->retired / sizeof self->retired[0]))
            self->retired[self->num_retired++] = old->model;
        self->panic_pending |= self->notes.count > 0; /* the old set's notes end */
        pnp_start_model(self);
        self->want_notify = 1;
    }
}

void pnp_start_model(pnp_plugin *self)
{
    /* nothing of the old set sounded since activation: the seed's music
     * starts with this one, whatever was drawn ahead before */
    if (!self->has_sounded)
        pnp_restart_streams(self);
    self->has_context = 0;
    self->num_ahead = 0;
    self->has_sounded = 0;
    self->context_serial = self->live->context_serial;
}

LV2_Worker_Status pnp_work_response(LV2_Handle instance, uint32_t size, const void *body)
{
    pnp_plugin *self = (pnp_plugin *)instance;
    if (size < sizeof(pnp_reply))
        return LV2_WORKER_ERR_UNKNOWN;
    pnp_reply msg;
    memcpy(&msg, body, sizeof msg);
    self->in_flight = 0;
    if ((msg.type == PNP_REPLY_REALIZED || msg.type == PNP_REPLY_SWITCHED) && msg.realization) {
        self->last_failed = 0;
        pnp_install(self, msg.realization);
    } else {
        self->last_failed = 1;
    }
    return LV2_WORKER_SUCCESS;
}

static LV2_Worker_Status post(pnp_plugin *self, const void *msg, uint32_t size)
{
    return self->schedule->schedule_work(self->schedule->handle, size, msg);
}

/* The realization run() wants now. */
static pnp_request wanted(const pnp_plugin *self)
{
    pnp_request w;
    w.knobs = pnp_port_knobs(self);
    const int mode = pnp_port_int(self, PNP_INPUT_MODE);
    const int k = self->live ? pnp_model_voices(self->live->model) : PNP_MAX_VOICES;
    w.given_voice = mode == PNP_INPUT_SOPRANO ? 0 : mode == PNP_INPUT_BASS ? k - 1 : -1;
    w.context_serial = self->context_serial;
    return w;
}

static int same_request(const pnp_request *a, const pnp_request *b)
{
    return a->knobs.log2_lambda_w == b->knobs.log2_lambda_w && a->knobs.alpha == b->knobs.alpha &&
           a->given_voice == b->given_voice && a->context_serial == b->context_serial;
}

static int live_satisfies(const pnp_realization *r, const pnp_request *w)
{
    return r->knobs.log2_lambda_w == w->knobs.log2_lambda_w && r->knobs.alpha == w->knobs.alpha &&
           r->context_serial == w->context_serial &&
           (w->given_voice < 0 || r->given_voice == w->given_voice);
}

void pnp_prime(pnp_plugin *self, int steps)
{
    /* only while nothing is on its way from the worker: then the worker
     * owns nothing of the model but what this thread may use now */
    if (self->in_flight || self->load_pending || atomic_load(&self->restored) || !self->live ||
        self->live->model != self->worker_model)
        return;
    /* each pass realizes the newest context or draws one step (never
     * more than the look-ahead's depth): bounded */
    for (int pass = 0; pass < 2 * steps + 2; ++pass) {
        const pnp_request want = wanted(self);
        if (live_satisfies(self->live, &want)) {
            if (self->num_ahead >= steps || !pnp_draw_ahead(self))
                return;
            continue;
        }
        if (want.given_voice >= 0)
            return; /* harmonizing waits for the key held */
        pn_error_info info = {0};
        pnp_realization *r = pnp_model_realize(self->worker_model, &want.knobs,
                                               self->has_context ? self->context : NULL,
                                               want.context_serial, -1, &info);
        if (!r) {
            log_failure(self, "realization failed", &info);
            return; /* run() asks the worker again */
        }
        pnp_install(self, r);
    }
}

static void send_pending(pnp_plugin *self)
{
    /* with a synchronous worker a job completes inside post(), so go on
     * while something is left (bounded: each pass sends one job) */
    for (int pass = 0; pass < 8; ++pass) {
        while (self->num_retired > 0) {
            pnp_job job = {0};
            job.type = PNP_JOB_FREE;
            job.model = self->retired[self->num_retired - 1];
            if (post(self, &job, sizeof job) != LV2_WORKER_SUCCESS)
                break; /* try again next block */
            --self->num_retired;
        }
        if (self->in_flight || !self->live)
            return;
        pnp_model *restored = atomic_exchange(&self->restored, NULL);
        if (restored) {
            pnp_job job = {0};
            job.type = PNP_JOB_ADOPT;
            job.model = restored;
            self->in_flight = 1;
            if (post(self, &job, sizeof job) != LV2_WORKER_SUCCESS) {
                self->in_flight = 0;
                pnp_model *none = NULL;
                if (!atomic_compare_exchange_strong(&self->restored, &none, restored) &&
                    self->num_retired < 4)
                    self->retired[self->num_retired++] = restored; /* a newer one came */
                return;
            }
            continue;
        }
        const pnp_request want = wanted(self);
        if (self->load_pending) {
            /* header and path in one message, sized to the path */
            union {
                pnp_job job;
                char bytes[sizeof(pnp_job) + PNP_MAX_PATH];
            } msg;
            memset(&msg.job, 0, sizeof msg.job);
            const size_t len = strnlen(self->load_path, PNP_MAX_PATH - 1);
            msg.job.type = PNP_JOB_LOAD;
            msg.job.size = (uint32_t)len + 1;
            msg.job.knobs = want.knobs;
            memcpy(msg.bytes + sizeof msg.job, self->load_path, len);
            msg.bytes[sizeof msg.job + len] = '\0';
            self->load_pending = 0;
            self->in_flight = 1;
            if (post(self, &msg, (uint32_t)(sizeof msg.job + len + 1)) != LV2_WORKER_SUCCESS) {
                self->in_flight = 0;
                self->load_pending = 1;
                return;
            }
            continue;
        }
        if (live_satisfies(self->live, &want))
            return;
        if (self->last_failed && same_request(&want, &self->last_sent))
            return;
        pnp_job job = {0};
        job.type = PNP_JOB_REALIZE;
        job.knobs = want.knobs;
        job.given_voice = want.given_voice;
        job.context_serial = want.context_serial;
        job.has_context = self->has_context;
        job.model = self->live->model;
        for (int v = 0; v < PNP_MAX_VOICES; ++v)
            job.context[v] = self->context[v];
        self->last_sent = want;
        self->last_failed = 0;
        self->in_flight = 1;
        if (post(self, &job, sizeof job) != LV2_WORKER_SUCCESS) {
            self->in_flight = 0;
            return;
        }
    }
}

void pnp_schedule_pending(pnp_plugin *self, int64_t frame)
{
    send_pending(self);
    /* a synchronous worker may have installed a new rule set: the old
     * set's notes end here, before the new one strikes any this block
     * (the next block's panic would cut those) */
    if (self->panic_pending)
        pnp_panic(self, frame);
}
