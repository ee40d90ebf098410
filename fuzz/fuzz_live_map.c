/* libFuzzer target for parnassus-live's MIDI-learn map reader
 * (parnassus-live-map/1, apps/live/live_bindings_read.c).
 *
 * Any input must either fail with a message naming the input and leave
 * the table as it was, or give a table that saves and loads back to the
 * same bindings, every one of which a message can reach. Anything else
 * aborts. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "live_bindings.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int condition)
{
    if (!condition)
        abort();
}

static char dir[4096];

static void remove_dir(void)
{
    rmdir(dir);
}

static void round_trip(const pnl_bindings *b)
{
    if (!dir[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/pn-fuzz-map.XXXXXX", tmp && *tmp ? tmp : "/tmp");
        require(mkdtemp(dir) != NULL);
        atexit(remove_dir);
    }
    char path[sizeof dir + 16];
    snprintf(path, sizeof path, "%s/map.json", dir);
    pn_error_info info;
    require(pnl_bindings_save(b, path, &info) == PN_OK);
    pnl_bindings back;
    pnl_bindings_init(&back);
    require(pnl_bindings_load(&back, path, &info) == PN_OK);
    require(back.count == b->count);
    for (int i = 0; i < b->count; ++i) {
        require(back.binding[i].kind == b->binding[i].kind);
        require(back.binding[i].channel == b->binding[i].channel);
        require(back.binding[i].number == b->binding[i].number);
        require(strcmp(back.binding[i].target, b->binding[i].target) == 0);
    }
    unlink(path);
}

/* each binding answers a message of its source */
static void reachable(pnl_bindings *b)
{
    for (int i = 0; i < b->count; ++i) {
        const pnl_binding *x = &b->binding[i];
        const uint8_t ch = (uint8_t)(x->channel < 0 ? 0 : x->channel);
        uint8_t msg[3] = {0, 0, 0};
        int size = 3;
        switch (x->kind) {
        case PNL_SOURCE_CC:
            msg[0] = (uint8_t)(0xB0 | ch), msg[1] = (uint8_t)x->number, msg[2] = 64;
            break;
        case PNL_SOURCE_NOTE:
            msg[0] = (uint8_t)(0x90 | ch), msg[1] = (uint8_t)x->number, msg[2] = 64;
            break;
        case PNL_SOURCE_PITCH_BEND:
            msg[0] = (uint8_t)(0xE0 | ch), msg[1] = 0, msg[2] = 64;
            break;
        case PNL_SOURCE_PROGRAM:
            msg[0] = (uint8_t)(0xC0 | ch), msg[1] = 5, size = 2;
            break;
        default:
            abort();
        }
        pnl_binding_hit hit;
        require(pnl_bindings_handle(b, msg, size, &hit, NULL) == 1);
        require(hit.value >= 0.0 && hit.value <= 127.0);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pnl_bindings b;
    pnl_bindings_init(&b);
    pnl_bindings_set(&b, PNL_SOURCE_CC, 0, 1, "alpha"); /* what a failure must keep */
    pn_error_info info;
    const pn_error err = pnl_bindings_parse(&b, "input", (const char *)data, size, &info);
    if (err != PN_OK) {
        require(err == PN_ERR_PARSE || err == PN_ERR_NOMEM);
        require(strncmp(info.message, "input", 5) == 0);
        require(b.count == 1 && strcmp(b.binding[0].target, "alpha") == 0);
        return 0;
    }
    require(b.count >= 0 && b.count <= PNL_BINDINGS_MAX);
    reachable(&b);
    round_trip(&b);
    return 0;
}
