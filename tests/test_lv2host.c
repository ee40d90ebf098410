/* Tests of the LV2 host library (apps/lv2host) against the real plugin:
 * the bundle directory comes in PNH_TEST_BUNDLE. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "alloc_count.h" /* only for ALLOC_COUNT_WORKS: the counter is ours */
#include "lv2host.h"
#include "midi_events.h"
#include "ring.h"
#include "uris.h"

#include <smf.h>

#define MIDI_EVENT_URI "http://lv2plug.in/ns/ext/midi#MidiEvent"

enum { RATE = 48000, BLOCK = 256 };

static const char *bundle(void)
{
    const char *b = getenv("PNH_TEST_BUNDLE");
    return b && b[0] ? b : NULL;
}

/* ---- allocations on the audio thread ----
 *
 * The hooks keep, per thread, a stack of what is running (audio or
 * worker); malloc counts a call when the innermost is audio. In IMMEDIATE
 * mode work() nests inside run(), so its allocations do not count. */
enum { MAX_DEPTH = 16 };
static _Thread_local int stack_top;
static _Thread_local char stack[MAX_DEPTH]; /* 'a' audio, 'w' worker */
static _Thread_local int hook_error;
static long audio_allocs;
static long audio_enters, worker_enters;

static void push(char what)
{
    if (stack_top == MAX_DEPTH)
        hook_error = 1;
    else
        stack[stack_top++] = what;
}

static void pop(char what)
{
    if (stack_top == 0 || stack[stack_top - 1] != what)
        hook_error = 1;
    else
        --stack_top;
}

static void audio_enter(void *user)
{
    (void)user;
    ++audio_enters;
    push('a');
}
static void audio_leave(void *user)
{
    (void)user;
    pop('a');
}
static void worker_enter(void *user)
{
    (void)user;
    __atomic_fetch_add(&worker_enters, 1, __ATOMIC_RELAXED);
    push('w');
}
static void worker_leave(void *user)
{
    (void)user;
    pop('w');
}

#if ALLOC_COUNT_WORKS
static int on_audio(void)
{
    return stack_top > 0 && stack[stack_top - 1] == 'a';
}

void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *ptr, size_t size);
void __libc_free(void *ptr);

void *malloc(size_t size)
{
    if (on_audio())
        ++audio_allocs;
    return __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
    if (on_audio())
        ++audio_allocs;
    return __libc_calloc(n, size);
}

void *realloc(void *ptr, size_t size)
{
    if (on_audio())
        ++audio_allocs;
    return __libc_realloc(ptr, size);
}

void free(void *ptr)
{
    if (ptr && on_audio())
        ++audio_allocs;
    __libc_free(ptr);
}
#endif

/* ---- recording a session ---- */

typedef struct recorded {
    int64_t frame;
    uint8_t size;
    uint8_t bytes[3];
} recorded;

typedef struct session {
    recorded *ev;
    size_t count, capacity;
    LV2_URID midi;
    size_t ons_rolling; /* note-ons before the transport stopped */
    float late_steps;   /* output control at the end */
    pnh_worker_stats stats;
} session;

static void on_event(void *user, const pnh_event *e)
{
    session *s = user;
    if (e->type != s->midi || e->size < 1 || e->size > 3)
        return;
    if (s->count == s->capacity) {
        s->capacity = s->capacity ? 2 * s->capacity : 256;
        s->ev = realloc(s->ev, s->capacity * sizeof *s->ev);
        assert_non_null(s->ev);
    }
    recorded *r = &s->ev[s->count++];
    memset(r, 0, sizeof *r);
    r->frame = e->abs_frame;
    r->size = (uint8_t)e->size;
    memcpy(r->bytes, e->body, e->size);
}

static size_t count_note_ons(const session *s, size_t from, size_t to)
{
    size_t n = 0;
    for (size_t i = from; i < to; ++i)
        n += (s->ev[i].bytes[0] & 0xF0) == 0x90 && s->ev[i].size == 3 && s->ev[i].bytes[2] > 0;
    return n;
}

static void check_balanced(const session *s)
{
    int sounding[16][128];
    memset(sounding, 0, sizeof sounding);
    for (size_t i = 0; i < s->count; ++i) {
        const recorded *r = &s->ev[i];
        unsigned kind = r->bytes[0] & 0xF0, ch = r->bytes[0] & 0x0F;
        if (r->size != 3 || (kind != 0x80 && kind != 0x90))
            continue;
        int on = kind == 0x90 && r->bytes[2] > 0;
        sounding[ch][r->bytes[1]] += on ? 1 : -1;
        if (i > 0)
            assert_true(r->frame >= s->ev[i - 1].frame); /* in time order */
    }
    for (int ch = 0; ch < 16; ++ch)
        for (int k = 0; k < 128; ++k)
            if (sounding[ch][k] != 0) {
                print_error("channel %d key %d: %d note-ons without a note-off\n", ch + 1, k,
                            sounding[ch][k]);
                fail();
            }
}

static pnh_host *make_host(pnh_worker_mode mode, int hooks)
{
    pnh_settings st;
    pnh_settings_default(&st);
    st.plugin_uri = PNP_URI;
    st.bundle_dir = bundle();
    st.sample_rate = RATE;
    st.max_block = BLOCK;
    st.worker_mode = mode;
    if (hooks) {
        st.hooks.audio_enter = audio_enter;
        st.hooks.audio_leave = audio_leave;
        st.hooks.worker_enter = worker_enter;
        st.hooks.worker_leave = worker_leave;
    }
    pn_error_info info = {PN_OK, ""};
    pnh_host *h = NULL;
    if (pnh_create(&st, &h, &info) != PN_OK)
        print_error("%s\n", info.message);
    assert_non_null(h);
    return h;
}

static void check_ports(pnh_host *h);
static void check_odd_inputs(pnh_host *h);

/* Plays `seconds` with the transport rolling at 120 bpm from bar 0, stops
 * it and plays half a second more. Instantiating the plugin realizes its
 * built-in rule set, which takes seconds: `basics` makes the same host
 * also go through check_ports() first and check_odd_inputs() last. */
static void play(pnh_worker_mode mode, float seed, double seconds, int hooks, int basics,
                 session *s)
{
    memset(s, 0, sizeof *s);
    pnh_host *h = make_host(mode, hooks);
    s->midi = pnh_map(h, MIDI_EVENT_URI);
    pn_error_info info = {PN_OK, ""};
    if (basics)
        check_ports(h);
    assert_int_equal(pnh_set_control(h, "seed", seed, &info), PN_OK);
    pnh_transport t;
    pnh_transport_default(&t);
    assert_int_equal(pnh_set_transport(h, &t, &info), PN_OK);
    assert_int_equal(pnh_activate(h, &info), PN_OK);
    const long blocks = (long)(seconds * RATE / BLOCK);
    for (long b = 0; b < blocks; ++b)
        assert_true(pnh_run(h, BLOCK, on_event, s, &info) >= 0);
    s->ons_rolling = count_note_ons(s, 0, s->count);
    t.rolling = 0;
    assert_int_equal(pnh_set_transport(h, &t, &info), PN_OK);
    for (long b = 0; b < RATE / 2 / BLOCK; ++b) {
        assert_true(pnh_run(h, BLOCK, on_event, s, &info) >= 0);
        if (mode == PNH_WORKER_THREADED)
            assert_true(pnh_wait_worker_idle(h, 30.0));
    }
    assert_int_equal(pnh_log_errors(h), 0);
    pnh_worker_stats_get(h, &s->stats);
    s->late_steps = pnh_get_control(h, "late_steps");
    if (basics)
        check_odd_inputs(h);
    pnh_free(h);
}

static void session_free(session *s)
{
    free(s->ev);
    s->ev = NULL;
}

static void skip_without_bundle(void)
{
    if (!bundle()) {
        print_message("PNH_TEST_BUNDLE not set: skipped\n");
        skip();
    }
}

/* ---- tests ---- */

static void test_ring(void **state)
{
    (void)state;
    pnh_ring r;
    assert_true(pnh_ring_init(&r, 100)); /* rounded up to 128 */
    unsigned char msg[40], out[64];
    uint32_t size;
    assert_false(pnh_ring_peek(&r, &size));
    for (int round = 0; round < 50; ++round) { /* wraps many times */
        for (int i = 0; i < 40; ++i)
            msg[i] = (unsigned char)(round + i);
        assert_true(pnh_ring_write(&r, msg, 40));
        assert_true(pnh_ring_write(&r, msg, 0)); /* an empty message is a message */
        assert_true(pnh_ring_peek(&r, &size));
        assert_int_equal(size, 40);
        assert_false(pnh_ring_read(&r, out, 10, &size)); /* too small: stays */
        assert_true(pnh_ring_read(&r, out, sizeof out, &size));
        assert_int_equal(size, 40);
        assert_memory_equal(out, msg, 40);
        assert_true(pnh_ring_read(&r, out, sizeof out, &size));
        assert_int_equal(size, 0);
    }
    assert_true(pnh_ring_write(&r, msg, 40));
    assert_true(pnh_ring_write(&r, msg, 40));
    assert_false(pnh_ring_write(&r, msg, 40)); /* 3 x 44 > 128 */
    pnh_ring_free(&r);
}

/* midi_events: frames to ticks, and note-offs first at a tick. */
static void test_midi_events(void **state)
{
    (void)state;
    pn_midi_events_settings ms;
    pn_midi_events_settings_default(&ms); /* 48 kHz, 120 bpm, 960 ticks: 0.04 tick a frame */
    assert_int_equal(pn_midi_frame_to_tick(&ms, 0), 0);
    assert_int_equal(pn_midi_frame_to_tick(&ms, 24000), 960);
    assert_int_equal(pn_midi_frame_to_tick(&ms, 13), 1); /* 0.52 */
    assert_int_equal(pn_midi_frame_to_tick(&ms, 12), 0); /* 0.48 */
    ms.division = 25; /* 1/960 tick a frame: frame 480 is exactly half a tick */
    assert_int_equal(pn_midi_frame_to_tick(&ms, 480), 1);
    assert_int_equal(pn_midi_frame_to_tick(&ms, 479), 0);
    ms.division = 960;
    ms.tempo_bpm = 97.5; /* not whole: the floating-point path */
    assert_int_equal(pn_midi_frame_to_tick(&ms, 48000), 1560);
    ms.tempo_bpm = 120.0;
    ms.format = 1;
    ms.end_frame = 96000;
    const pn_midi_event ev[] = {
        {24000, 3, {0x90, 60, 100}}, /* a repeated note: its note-on at tick 960 */
        {24001, 3, {0x80, 60, 0}},   /* ...comes after this note-off at the same tick */
        {0, 3, {0x90, 60, 100}},     {100, 1, {0xF8, 0, 0}}, /* not a channel message: skipped */
        {48000, 3, {0x90, 60, 0}},                           /* velocity 0: a note-off */
    };
    char path[] = "/tmp/pnh-test-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    size_t written = 0;
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(pn_midi_events_write(path, ev, 5, &ms, &written, &info), PN_OK);
    assert_int_equal(written, 4);
    smf_t *smf = smf_load(path);
    assert_non_null(smf);
    assert_int_equal(smf->format, 1);
    assert_int_equal(smf->ppqn, 960);
    assert_int_equal(smf->number_of_tracks, 2);
    smf_track_t *t = smf_get_track_by_number(smf, 2);
    const int want_tick[] = {0, 960, 960, 1920};
    const int want_status[] = {0x90, 0x80, 0x90, 0x90};
    for (int i = 0; i < 4; ++i) {
        smf_event_t *e = smf_track_get_next_event(t);
        assert_non_null(e);
        assert_int_equal(e->time_pulses, want_tick[i]);
        assert_int_equal(e->midi_buffer[0], want_status[i]);
    }
    smf_event_t *eot = smf_track_get_next_event(t);
    assert_non_null(eot);
    assert_true(smf_event_is_eot(eot));
    assert_int_equal(eot->time_pulses, 3840);
    smf_delete(smf);
    remove(path);
    ms.division = 0;
    assert_int_equal(pn_midi_events_write(path, ev, 5, &ms, NULL, &info), PN_ERR_INVALID);
}

static void test_unknown_uri(void **state)
{
    (void)state;
    skip_without_bundle();
    pnh_settings st;
    pnh_settings_default(&st);
    st.plugin_uri = "urn:parnassus:no-such-plugin";
    st.bundle_dir = bundle();
    pn_error_info info = {PN_OK, ""};
    pnh_host *h = NULL;
    assert_int_equal(pnh_create(&st, &h, &info), PN_ERR_INVALID);
    assert_null(h);
    assert_non_null(strstr(info.message, "urn:parnassus:no-such-plugin"));
    assert_non_null(strstr(info.message, "not found"));
}

static void test_missing_bundle(void **state)
{
    (void)state;
    pnh_settings st;
    pnh_settings_default(&st);
    st.plugin_uri = PNP_URI;
    st.bundle_dir = "/nonexistent/parnassus.lv2";
    pn_error_info info = {PN_OK, ""};
    pnh_host *h = NULL;
    assert_int_equal(pnh_create(&st, &h, &info), PN_ERR_IO);
    assert_null(h);
    assert_non_null(strstr(info.message, "/nonexistent/parnassus.lv2"));

    st.bundle_dir = bundle();
    st.plugin_uri = NULL;
    assert_int_equal(pnh_create(&st, &h, &info), PN_ERR_INVALID);
    st.plugin_uri = PNP_URI;
    st.max_block = 0;
    assert_int_equal(pnh_create(&st, &h, &info), PN_ERR_INVALID);
}

/* Ports, controls and run() errors on a fresh host (not activated). */
static void check_ports(pnh_host *h)
{
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(pnh_port_index(h, "control"), 0);
    assert_int_equal(pnh_port_index(h, "midi_out"), 1);
    assert_int_equal(pnh_port_index(h, "no_such_port"), -1);
    assert_int_equal(pnh_num_ports(h), 28);
    assert_string_equal(pnh_port_symbol(h, 2), "notify");
    /* controls start at the Turtle defaults */
    float def, lo, hi;
    assert_true(pnh_control_range(h, "alpha", &def, &lo, &hi));
    assert_true(pnh_get_control(h, "alpha") == def);
    assert_int_equal(pnh_set_control(h, "alpha", 0.5f, &info), PN_OK);
    assert_true(pnh_get_control(h, "alpha") == 0.5f);
    assert_int_equal(pnh_set_control(h, "alpha", def, &info), PN_OK);
    assert_int_equal(pnh_set_control(h, "no_such_port", 1.0f, &info), PN_ERR_INVALID);
    assert_non_null(strstr(info.message, "no_such_port"));
    assert_int_equal(pnh_set_control(h, "rules_selected", 1.0f, &info), PN_ERR_INVALID);
    assert_int_equal(pnh_run(h, BLOCK, NULL, NULL, &info), -1); /* before activate */
    assert_non_null(strstr(info.message, "activate"));
    const uint8_t cc[3] = {0xB0, 123, 0};
    assert_int_equal(pnh_queue_midi(h, -1, cc, 3, &info), PN_ERR_INVALID);
}

static void count_preset(void *user, const char *uri, const char *label)
{
    int *n = user;
    assert_non_null(uri);
    assert_non_null(label);
    ++*n;
}

/* Presets by label and URI, and a state saved and restored. */
static void check_presets_and_state(pnh_host *h)
{
    pn_error_info info = {PN_OK, ""};
    int n = 0;
    int listed = pnh_preset_list(h, count_preset, &n);
    assert_int_equal(listed, n);
    assert_true(n >= 3);
    assert_int_equal(pnh_preset_apply(h, "Strict", &info), PN_OK);
    assert_true(pnh_get_control(h, "log2_lambda_w") == -8.0f);
    assert_true(pnh_get_control(h, "alpha") == 1.0f);
    assert_int_equal(pnh_preset_apply(h, PNP_PRESET_PREFIX "balanced", &info), PN_OK);
    assert_true(pnh_get_control(h, "log2_lambda_w") == 0.0f);
    assert_int_equal(pnh_preset_apply(h, "No Such Preset", &info), PN_ERR_INVALID);
    assert_non_null(strstr(info.message, "No Such Preset"));

    char dir[] = "/tmp/pnh-state-XXXXXX";
    assert_non_null(mkdtemp(dir));
    assert_int_equal(pnh_set_control(h, "velocity", 33.0f, &info), PN_OK);
    char *file = NULL;
    assert_int_equal(pnh_state_save(h, dir, &file, &info), PN_OK);
    assert_non_null(file);
    assert_int_equal(access(file, R_OK), 0);
    assert_int_equal(pnh_set_control(h, "velocity", 99.0f, &info), PN_OK);
    assert_int_equal(pnh_state_restore(h, file, &info), PN_OK);
    assert_true(pnh_get_control(h, "velocity") == 33.0f);
    assert_int_equal(pnh_state_restore(h, "/nonexistent/state.ttl", &info), PN_ERR_IO);
    char manifest[sizeof dir + 32];
    snprintf(manifest, sizeof manifest, "%s/manifest.ttl", dir);
    remove(manifest);
    remove(file);
    rmdir(dir);
    free(file);
}

/* Odd inputs at the end of a session are accepted and played through: a
 * sparse position, a patch:Get, a MIDI event later than the block, a bare
 * atom. */
static void check_odd_inputs(pnh_host *h)
{
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(pnh_run(h, BLOCK + 1, NULL, NULL, &info), -1);
    pnh_position pos = {0};
    pos.fields = PNH_POS_SPEED | PNH_POS_BPM;
    pos.speed = 0.0f;
    pos.bpm = 90.0f;
    assert_int_equal(pnh_queue_position(h, 10, &pos, &info), PN_OK);
    assert_int_equal(pnh_queue_patch_get(h, 0, NULL, &info), PN_OK);
    const uint8_t cc[3] = {0xB0, 123, 0};
    assert_int_equal(pnh_queue_midi(h, BLOCK + 5, cc, 3, &info), PN_OK);
    LV2_Atom_Int num = {{sizeof(int32_t), pnh_map(h, LV2_ATOM__Int)}, 7};
    assert_int_equal(pnh_queue_atom(h, 3, &num.atom, &info), PN_OK);
    int64_t before = pnh_frames(h);
    assert_true(pnh_run(h, BLOCK, NULL, NULL, &info) >= 0);
    assert_true(pnh_run(h, BLOCK, NULL, NULL, &info) >= 0);
    assert_int_equal(pnh_frames(h) - before, 2 * BLOCK);
    pnh_deactivate(h);
    check_presets_and_state(h);
}

/* The IMMEDIATE session every other one is compared with. */
static session reference;

static void test_notes_and_note_offs(void **state)
{
    (void)state;
    skip_without_bundle();
    session *s = &reference;
    audio_allocs = audio_enters = worker_enters = 0;
    play(PNH_WORKER_IMMEDIATE, 5.0f, 2.0, 1, 1, s);
    assert_true(s->ons_rolling > 0);
    check_balanced(s);
    /* the hooks nested properly and saw every call */
    assert_int_equal(hook_error, 0);
    assert_int_equal(stack_top, 0);
    assert_true(audio_enters >= 2 * RATE / BLOCK);
    assert_int_equal(worker_enters, (long)s->stats.completed);
    assert_int_equal(s->stats.scheduled, s->stats.completed);
    assert_int_equal(s->stats.refused, 0);
    /* neither the host nor the plugin allocates in run(), work_response()
     * or end_run() (work() nested in run() may) */
    if (ALLOC_COUNT_WORKS)
        assert_int_equal(audio_allocs, 0);
}

static void test_immediate_is_deterministic(void **state)
{
    (void)state;
    skip_without_bundle();
    assert_non_null(reference.ev);
    session b;
    play(PNH_WORKER_IMMEDIATE, 5.0f, 2.0, 0, 0, &b);
    assert_int_equal(reference.count, b.count);
    assert_memory_equal(reference.ev, b.ev, b.count * sizeof *b.ev);
    session_free(&b);
}

/* The notes (status, key, velocity) in order, without their times. */
static int same_notes(const session *a, const session *b)
{
    if (a->count != b->count)
        return 0;
    for (size_t i = 0; i < a->count; ++i)
        if (memcmp(a->ev[i].bytes, b->ev[i].bytes, 3) != 0)
            return 0;
    return 1;
}

static int same_times(const session *a, const session *b)
{
    for (size_t i = 0; i < a->count && i < b->count; ++i)
        if (a->ev[i].frame != b->ev[i].frame)
            return 0;
    return a->count == b->count;
}

/* Reports how a session compares with the immediate-worker reference.
 * When no step was drawn before its context was realized, the same seed
 * draws the same sonorities whenever the responses arrive. */
static void compare_with_reference(const char *mode, const session *s)
{
    print_message("%s vs immediate: %zu vs %zu events, notes %s, times %s, late steps "
                  "%g vs %g\n",
                  mode, s->count, reference.count, same_notes(s, &reference) ? "same" : "differ",
                  same_times(s, &reference) ? "same" : "differ", (double)s->late_steps,
                  (double)reference.late_steps);
    if (s->late_steps == 0.0f && reference.late_steps == 0.0f)
        assert_true(same_notes(s, &reference));
}

static void test_end_of_run(void **state)
{
    (void)state;
    skip_without_bundle();
    assert_non_null(reference.ev);
    session s;
    play(PNH_WORKER_END_OF_RUN, 5.0f, 2.0, 0, 0, &s);
    assert_true(s.ons_rolling > 0);
    check_balanced(&s);
    assert_true(s.stats.responses > 0);
    compare_with_reference("end-of-run", &s);
    session_free(&s);
}

static void test_threaded(void **state)
{
    (void)state;
    skip_without_bundle();
    assert_non_null(reference.ev);
    session s;
    hook_error = 0;
    worker_enters = 0;
    play(PNH_WORKER_THREADED, 5.0f, 2.0, 1, 0, &s);
    assert_true(s.ons_rolling > 0);
    check_balanced(&s);
    assert_int_equal(hook_error, 0);
    assert_int_equal(s.stats.scheduled, s.stats.completed);
    assert_int_equal(__atomic_load_n(&worker_enters, __ATOMIC_RELAXED), (long)s.stats.completed);
    compare_with_reference("threaded", &s);
    session_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring),
        cmocka_unit_test(test_midi_events),
        cmocka_unit_test(test_unknown_uri),
        cmocka_unit_test(test_missing_bundle),
        cmocka_unit_test(test_notes_and_note_offs),
        cmocka_unit_test(test_immediate_is_deterministic),
        cmocka_unit_test(test_end_of_run),
        cmocka_unit_test(test_threaded),
    };
    /* PNH_TEST_FILTER=test_ring (a glob) runs only some tests */
    const char *filter = getenv("PNH_TEST_FILTER");
    if (filter && filter[0])
        cmocka_set_test_filter(filter);
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    session_free(&reference);
    return failed;
}
