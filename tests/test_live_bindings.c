/* Tests of the MIDI-learn bindings of parnassus-live and their map file
 * (apps/live/live_bindings.h, docs/live-map.md). */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, setenv */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "live_bindings.h"
#include "parnassus/file.h"

enum { PATH_SIZE = 512 };

static char tmpdir[256];

/* ------------------------------------------------------------------------ */
/* Helpers */

#define assert_near(got, want, eps) check_near((got), (want), (eps), __LINE__)

static void check_near(double got, double want, double eps, int line)
{
    const double diff = got > want ? got - want : want - got;
    if (!(diff <= eps))
        fail_msg("line %d: got %.17g, expected %.17g", line, got, want);
}

/* a then b into out (PATH_SIZE or PN_MESSAGE_SIZE bytes), which must fit. */
static void join(char *out, size_t size, const char *a, const char *b)
{
    assert_true(snprintf(out, size, "%s%s", a, b) < (int)size);
}

static void tmp_path(char *out, const char *name)
{
    char dir[PATH_SIZE];
    join(dir, sizeof dir, tmpdir, "/");
    join(out, PATH_SIZE, dir, name);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

/* The message is "<path>: <rest>" (whole, or only its start). */
static void check_message(const pn_error_info *info, const char *path, const char *rest, int whole)
{
    char head[PATH_SIZE + 2], expected[2 * PN_MESSAGE_SIZE];
    join(head, sizeof head, path, ": ");
    join(expected, sizeof expected, head, rest);
    if (whole)
        assert_string_equal(info->message, expected);
    else if (strncmp(info->message, expected, strlen(expected)) != 0)
        fail_msg("message \"%s\" does not start with \"%s\"", info->message, expected);
}

static int is_directory(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static void remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char sub[PATH_SIZE];
            char dir[PATH_SIZE];
            join(dir, sizeof dir, path, "/");
            join(sub, sizeof sub, dir, e->d_name);
            remove_tree(sub);
        }
        if (d)
            closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

static void assert_tables_equal(const pnl_bindings *a, const pnl_bindings *b)
{
    assert_int_equal(a->count, b->count);
    for (int i = 0; i < a->count; ++i) {
        assert_int_equal(a->binding[i].kind, b->binding[i].kind);
        assert_int_equal(a->binding[i].channel, b->binding[i].channel);
        assert_int_equal(a->binding[i].number, b->binding[i].number);
        assert_string_equal(a->binding[i].target, b->binding[i].target);
    }
}

/* A table with one binding of every kind, "any" channels included. */
static void sample_table(pnl_bindings *b)
{
    pnl_bindings_init(b);
    assert_int_equal(pnl_bindings_set(b, PNL_SOURCE_CC, 0, 74, "log2_lambda_w"), 0);
    assert_int_equal(pnl_bindings_set(b, PNL_SOURCE_CC, -1, 1, "alpha"), 0);
    assert_int_equal(pnl_bindings_set(b, PNL_SOURCE_NOTE, 15, 36, "panic"), 0);
    assert_int_equal(pnl_bindings_set(b, PNL_SOURCE_NOTE, -1, 127, "play_stop"), 0);
    assert_int_equal(pnl_bindings_set(b, PNL_SOURCE_PITCH_BEND, 9, 0, "division"), 0);
    assert_int_equal(pnl_bindings_set(b, PNL_SOURCE_PROGRAM, -1, 0, "preset"), 0);
    assert_int_equal(b->count, 6);
}

/* Keeps HOME and XDG_CONFIG_HOME across a test that changes them. */
typedef struct saved_env {
    char *home, *xdg;
} saved_env;

static char *copy_env(const char *name)
{
    const char *v = getenv(name);
    return v ? strdup(v) : NULL;
}

static void restore_one(const char *name, char *value)
{
    if (value)
        setenv(name, value, 1);
    else
        unsetenv(name);
    free(value);
}

static saved_env save_env(void)
{
    saved_env s = {copy_env("HOME"), copy_env("XDG_CONFIG_HOME")};
    return s;
}

static void restore_env(saved_env s)
{
    restore_one("HOME", s.home);
    restore_one("XDG_CONFIG_HOME", s.xdg);
}

/* ------------------------------------------------------------------------ */
/* The table */

static void test_set_replace_remove(void **state)
{
    (void)state;
    pnl_bindings b;
    pnl_bindings_init(&b);
    assert_int_equal(b.count, 0);
    assert_int_equal(b.learning, 0);

    assert_int_equal(pnl_bindings_set(&b, PNL_SOURCE_CC, 0, 74, "alpha"), 0);
    assert_int_equal(b.count, 1);
    assert_int_equal(b.binding[0].kind, PNL_SOURCE_CC);
    assert_int_equal(b.binding[0].channel, 0);
    assert_int_equal(b.binding[0].number, 74);
    assert_string_equal(b.binding[0].target, "alpha");

    /* the same source: replaced in place */
    assert_int_equal(pnl_bindings_set(&b, PNL_SOURCE_CC, 0, 74, "division"), 0);
    assert_int_equal(b.count, 1);
    assert_string_equal(b.binding[0].target, "division");

    /* another channel, "any", another kind: new bindings */
    assert_int_equal(pnl_bindings_set(&b, PNL_SOURCE_CC, 1, 74, "alpha"), 0);
    assert_int_equal(pnl_bindings_set(&b, PNL_SOURCE_CC, -1, 74, "division"), 0);
    assert_int_equal(pnl_bindings_set(&b, PNL_SOURCE_NOTE, 0, 74, "panic"), 0);
    assert_int_equal(b.count, 4);

    /* bend and program have no number: any given one is stored as 0 */
    assert_int_equal(pnl_bindings_set(&b, PNL_SOURCE_PITCH_BEND, 2, 99, "alpha"), 0);
    assert_int_equal(b.binding[4].number, 0);
    assert_int_equal(pnl_bindings_set(&b, PNL_SOURCE_PITCH_BEND, 2, 5, "log2_lambda_w"), 0);
    assert_int_equal(b.count, 5);
    assert_string_equal(b.binding[4].target, "log2_lambda_w");

    assert_int_equal(pnl_bindings_remove_target(&b, "division"), 2);
    assert_int_equal(b.count, 3);
    assert_string_equal(b.binding[0].target, "alpha");
    assert_int_equal(b.binding[0].channel, 1);
    assert_string_equal(b.binding[1].target, "panic");
    assert_string_equal(b.binding[2].target, "log2_lambda_w");
    assert_int_equal(pnl_bindings_remove_target(&b, "division"), 0);
    assert_int_equal(pnl_bindings_remove_target(&b, "nothing"), 0);
    assert_int_equal(b.count, 3);
}

static void test_set_rejects_bad_arguments(void **state)
{
    (void)state;
    pnl_bindings b;
    sample_table(&b);
    pnl_bindings before = b;
    static const char long_name[] = "abcdefghijklmnopqrstuvwxyz012345"; /* 32 bytes */
    assert_int_equal(pnl_bindings_set(&b, PNL_SOURCE_CC, 16, 1, "alpha"), -1);
    assert_int_equal(pnl_bindings_set(&b, PNL_SOURCE_CC, -2, 1, "alpha"), -1);
    assert_int_equal(pnl_bindings_set(&b, PNL_SOURCE_CC, 0, -1, "alpha"), -1);
    assert_int_equal(pnl_bindings_set(&b, PNL_SOURCE_NOTE, 0, 128, "alpha"), -1);
    assert_int_equal(pnl_bindings_set(&b, (pnl_source_kind)0, 0, 1, "alpha"), -1);
    assert_int_equal(pnl_bindings_set(&b, (pnl_source_kind)5, 0, 1, "alpha"), -1);
    assert_int_equal(pnl_bindings_set(&b, PNL_SOURCE_CC, 0, 1, NULL), -1);
    assert_int_equal(pnl_bindings_set(&b, PNL_SOURCE_CC, 0, 1, ""), -1);
    assert_int_equal(pnl_bindings_set(&b, PNL_SOURCE_CC, 0, 1, long_name), -1);
    assert_int_equal(pnl_bindings_set(&b, PNL_SOURCE_CC, 0, 1, "9lives"), -1);
    assert_int_equal(pnl_bindings_set(&b, PNL_SOURCE_CC, 0, 1, "two words"), -1);
    assert_int_equal(pnl_bindings_set(NULL, PNL_SOURCE_CC, 0, 1, "alpha"), -1);
    assert_tables_equal(&b, &before);
    /* 31 bytes is the longest name */
    assert_int_equal(pnl_bindings_set(&b, PNL_SOURCE_CC, 0, 1, long_name + 1), 0);
    assert_string_equal(b.binding[b.count - 1].target, long_name + 1);
}

static void test_cc_channel_mode_not_bindable(void **state)
{
    (void)state;
    pnl_bindings b;
    pnl_bindings_init(&b);
    for (int cc = 120; cc <= 127; ++cc) {
        assert_int_equal(pnl_bindings_set(&b, PNL_SOURCE_CC, 0, cc, "alpha"), -1);
        assert_int_equal(pnl_bindings_set(&b, PNL_SOURCE_CC, -1, cc, "alpha"), -1);
    }
    assert_int_equal(pnl_bindings_set(&b, PNL_SOURCE_CC, 0, 119, "alpha"), 0);
    assert_int_equal(b.count, 1);

    /* all notes off (CC 123) while learning: ignored, still learning */
    assert_int_equal(pnl_bindings_learn(&b, "division"), 0);
    for (uint8_t cc = 120; cc < 128; ++cc) {
        const uint8_t msg[3] = {0xB0, cc, 0};
        int learned = 7;
        assert_int_equal(pnl_bindings_handle(&b, msg, 3, NULL, &learned), 0);
        assert_int_equal(learned, -1);
    }
    assert_int_equal(b.learning, 1);
    assert_int_equal(b.count, 1);
}

static void test_table_full(void **state)
{
    (void)state;
    pnl_bindings b;
    pnl_bindings_init(&b);
    for (int i = 0; i < PNL_BINDINGS_MAX; ++i)
        assert_int_equal(pnl_bindings_set(&b, PNL_SOURCE_NOTE, i % 16, i / 16, "panic"), 0);
    assert_int_equal(b.count, PNL_BINDINGS_MAX);
    assert_int_equal(pnl_bindings_set(&b, PNL_SOURCE_CC, 0, 1, "alpha"), -1);
    assert_int_equal(b.count, PNL_BINDINGS_MAX);
    /* replacing needs no room */
    assert_int_equal(pnl_bindings_set(&b, PNL_SOURCE_NOTE, 3, 0, "alpha"), 0);
    assert_string_equal(b.binding[3].target, "alpha");

    /* learning a new source when full: learn mode ends, nothing bound */
    assert_int_equal(pnl_bindings_learn(&b, "division"), 0);
    const uint8_t cc[3] = {0xB0, 1, 64};
    int learned = 7;
    assert_int_equal(pnl_bindings_handle(&b, cc, 3, NULL, &learned), 0);
    assert_int_equal(learned, -1);
    assert_int_equal(b.learning, 0);
    assert_int_equal(b.count, PNL_BINDINGS_MAX);
}

/* ------------------------------------------------------------------------ */
/* Matching */

static void test_handle_values(void **state)
{
    (void)state;
    pnl_bindings b;
    pnl_bindings_init(&b);
    assert_int_equal(pnl_bindings_set(&b, PNL_SOURCE_CC, 2, 74, "alpha"), 0);
    assert_int_equal(pnl_bindings_set(&b, PNL_SOURCE_NOTE, 2, 60, "panic"), 0);
    assert_int_equal(pnl_bindings_set(&b, PNL_SOURCE_PITCH_BEND, 2, 0, "division"), 0);
    assert_int_equal(pnl_bindings_set(&b, PNL_SOURCE_PROGRAM, 2, 0, "preset"), 0);

    pnl_binding_hit hit;
    const uint8_t cc0[3] = {0xB2, 74, 0}, cc64[3] = {0xB2, 74, 64}, cc127[3] = {0xB2, 74, 127};
    assert_int_equal(pnl_bindings_handle(&b, cc0, 3, &hit, NULL), 1);
    assert_string_equal(hit.target, "alpha");
    assert_near(hit.value, 0.0, 0.0);
    assert_int_equal(hit.is_program, 0);
    assert_int_equal(pnl_bindings_handle(&b, cc64, 3, &hit, NULL), 1);
    assert_near(hit.value, 64.0 / 127.0, 1e-15);
    assert_int_equal(pnl_bindings_handle(&b, cc127, 3, &hit, NULL), 1);
    assert_near(hit.value, 1.0, 0.0);
    assert_ptr_equal(hit.target, b.binding[0].target);

    const uint8_t note[3] = {0x92, 60, 100};
    assert_int_equal(pnl_bindings_handle(&b, note, 3, &hit, NULL), 1);
    assert_string_equal(hit.target, "panic");
    assert_near(hit.value, 100.0 / 127.0, 1e-15);
    assert_int_equal(hit.is_program, 0);

    const uint8_t bend_top[3] = {0xE2, 0x7F, 0x7F}, bend_mid[3] = {0xE2, 0x00, 0x40},
                  bend_low[3] = {0xE2, 0x00, 0x00}, bend_lsb[3] = {0xE2, 0x01, 0x00};
    assert_int_equal(pnl_bindings_handle(&b, bend_top, 3, &hit, NULL), 1);
    assert_string_equal(hit.target, "division");
    assert_near(hit.value, 1.0, 0.0);
    assert_int_equal(pnl_bindings_handle(&b, bend_mid, 3, &hit, NULL), 1);
    assert_near(hit.value, 8192.0 / 16383.0, 1e-15);
    assert_int_equal(pnl_bindings_handle(&b, bend_low, 3, &hit, NULL), 1);
    assert_near(hit.value, 0.0, 0.0);
    assert_int_equal(pnl_bindings_handle(&b, bend_lsb, 3, &hit, NULL), 1);
    assert_near(hit.value, 1.0 / 16383.0, 1e-15); /* LSB first */

    const uint8_t program[2] = {0xC2, 42};
    assert_int_equal(pnl_bindings_handle(&b, program, 2, &hit, NULL), 1);
    assert_string_equal(hit.target, "preset");
    assert_int_equal(hit.is_program, 1);
    assert_near(hit.value, 42.0, 0.0);

    /* other numbers and channels: no hit */
    const uint8_t cc75[3] = {0xB2, 75, 1}, other_channel[3] = {0xB3, 74, 1},
                  note61[3] = {0x92, 61, 100};
    assert_int_equal(pnl_bindings_handle(&b, cc75, 3, &hit, NULL), 0);
    assert_int_equal(pnl_bindings_handle(&b, other_channel, 3, &hit, NULL), 0);
    assert_int_equal(pnl_bindings_handle(&b, note61, 3, &hit, NULL), 0);
    /* a hit without a hit struct is still reported */
    assert_int_equal(pnl_bindings_handle(&b, cc64, 3, NULL, NULL), 1);
}

static void test_note_off_no_hit(void **state)
{
    (void)state;
    pnl_bindings b;
    pnl_bindings_init(&b);
    assert_int_equal(pnl_bindings_set(&b, PNL_SOURCE_NOTE, 0, 60, "panic"), 0);
    pnl_binding_hit hit = {"untouched", -1.0, 7};
    const uint8_t off[3] = {0x80, 60, 64}, on_zero[3] = {0x90, 60, 0};
    assert_int_equal(pnl_bindings_handle(&b, off, 3, &hit, NULL), 0);
    assert_int_equal(pnl_bindings_handle(&b, on_zero, 3, &hit, NULL), 0);
    assert_string_equal(hit.target, "untouched");
    assert_near(hit.value, -1.0, 0.0);
    assert_int_equal(hit.is_program, 7);
}

static void test_malformed_messages_ignored(void **state)
{
    (void)state;
    pnl_bindings b;
    pnl_bindings_init(&b);
    assert_int_equal(pnl_bindings_set(&b, PNL_SOURCE_CC, -1, 7, "alpha"), 0);
    assert_int_equal(pnl_bindings_set(&b, PNL_SOURCE_PROGRAM, -1, 0, "preset"), 0);
    const uint8_t good[3] = {0xB0, 7, 1}, high_data[3] = {0xB0, 7, 0x80}, running[2] = {7, 1},
                  clock[1] = {0xF8}, program_short[1] = {0xC0};
    pnl_binding_hit hit;
    assert_int_equal(pnl_bindings_handle(&b, good, 3, &hit, NULL), 1);
    assert_int_equal(pnl_bindings_handle(&b, good, 2, &hit, NULL), 0);
    assert_int_equal(pnl_bindings_handle(&b, good, 0, &hit, NULL), 0);
    assert_int_equal(pnl_bindings_handle(&b, NULL, 3, &hit, NULL), 0);
    assert_int_equal(pnl_bindings_handle(NULL, good, 3, &hit, NULL), 0);
    assert_int_equal(pnl_bindings_handle(&b, high_data, 3, &hit, NULL), 0);
    assert_int_equal(pnl_bindings_handle(&b, running, 2, &hit, NULL), 0);
    assert_int_equal(pnl_bindings_handle(&b, clock, 1, &hit, NULL), 0);
    assert_int_equal(pnl_bindings_handle(&b, program_short, 1, &hit, NULL), 0);
}

static void test_channel_precedence(void **state)
{
    (void)state;
    pnl_binding_hit hit;
    const uint8_t on_ch4[3] = {0xB3, 74, 10}, on_ch6[3] = {0xB5, 74, 10};
    /* both orders in the table: the channel-specific one wins */
    for (int specific_first = 0; specific_first < 2; ++specific_first) {
        pnl_bindings b;
        pnl_bindings_init(&b);
        if (specific_first)
            assert_int_equal(pnl_bindings_set(&b, PNL_SOURCE_CC, 3, 74, "channel_four"), 0);
        assert_int_equal(pnl_bindings_set(&b, PNL_SOURCE_CC, -1, 74, "any_channel"), 0);
        if (!specific_first)
            assert_int_equal(pnl_bindings_set(&b, PNL_SOURCE_CC, 3, 74, "channel_four"), 0);
        assert_int_equal(pnl_bindings_handle(&b, on_ch4, 3, &hit, NULL), 1);
        assert_string_equal(hit.target, "channel_four");
        assert_int_equal(pnl_bindings_handle(&b, on_ch6, 3, &hit, NULL), 1);
        assert_string_equal(hit.target, "any_channel");
    }
    /* "any" matches every channel */
    pnl_bindings b;
    pnl_bindings_init(&b);
    assert_int_equal(pnl_bindings_set(&b, PNL_SOURCE_NOTE, -1, 48, "panic"), 0);
    for (uint8_t ch = 0; ch < 16; ++ch) {
        const uint8_t msg[3] = {(uint8_t)(0x90 | ch), 48, 1};
        assert_int_equal(pnl_bindings_handle(&b, msg, 3, &hit, NULL), 1);
        assert_string_equal(hit.target, "panic");
    }
}

/* ------------------------------------------------------------------------ */
/* Learning */

static void test_learn_binds_next_cc(void **state)
{
    (void)state;
    pnl_bindings b;
    pnl_bindings_init(&b);
    assert_int_equal(pnl_bindings_learn(&b, "log2_lambda_w"), 0);
    assert_int_equal(b.learning, 1);
    assert_string_equal(b.learn_target, "log2_lambda_w");

    pnl_binding_hit hit = {"untouched", -1.0, 0};
    int learned = 7;
    const uint8_t clock[1] = {0xF8}, note_off[3] = {0x82, 60, 0x40}, on_zero[3] = {0x92, 60, 0};
    assert_int_equal(pnl_bindings_handle(&b, clock, 1, &hit, &learned), 0);
    assert_int_equal(learned, -1);
    learned = 7;
    assert_int_equal(pnl_bindings_handle(&b, note_off, 3, &hit, &learned), 0);
    assert_int_equal(learned, -1);
    assert_int_equal(pnl_bindings_handle(&b, on_zero, 3, &hit, &learned), 0);
    assert_int_equal(b.learning, 1);
    assert_int_equal(b.count, 0);
    assert_string_equal(hit.target, "untouched");

    const uint8_t cc[3] = {0xB2, 7, 100};
    assert_int_equal(pnl_bindings_handle(&b, cc, 3, &hit, &learned), 1);
    assert_int_equal(learned, 0);
    assert_null(hit.target); /* learning is not a match */
    assert_int_equal(b.learning, 0);
    assert_int_equal(b.count, 1);
    assert_int_equal(b.binding[0].kind, PNL_SOURCE_CC);
    assert_int_equal(b.binding[0].channel, 2);
    assert_int_equal(b.binding[0].number, 7);
    assert_string_equal(b.binding[0].target, "log2_lambda_w");

    /* learning is over: the same CC now moves the target */
    assert_int_equal(pnl_bindings_handle(&b, cc, 3, &hit, &learned), 1);
    assert_int_equal(learned, -1);
    assert_string_equal(hit.target, "log2_lambda_w");
    assert_near(hit.value, 100.0 / 127.0, 1e-15);
    /* and a second CC binds nothing */
    const uint8_t cc8[3] = {0xB2, 8, 100};
    assert_int_equal(pnl_bindings_handle(&b, cc8, 3, &hit, &learned), 0);
    assert_int_equal(b.count, 1);
}

static void test_learn_replaces_same_source(void **state)
{
    (void)state;
    pnl_bindings b;
    pnl_bindings_init(&b);
    assert_int_equal(pnl_bindings_set(&b, PNL_SOURCE_CC, 0, 1, "alpha"), 0);
    assert_int_equal(pnl_bindings_set(&b, PNL_SOURCE_CC, 2, 7, "division"), 0);
    assert_int_equal(pnl_bindings_learn(&b, "alpha"), 0);
    const uint8_t cc[3] = {0xB2, 7, 1};
    int learned = -5;
    assert_int_equal(pnl_bindings_handle(&b, cc, 3, NULL, &learned), 1);
    assert_int_equal(learned, 1);
    assert_int_equal(b.count, 2);
    assert_string_equal(b.binding[1].target, "alpha");
    /* the target's other binding stays */
    assert_string_equal(b.binding[0].target, "alpha");

    /* bend and program are learned too, without a number */
    assert_int_equal(pnl_bindings_learn(&b, "division"), 0);
    const uint8_t bend[3] = {0xEF, 0x12, 0x34};
    assert_int_equal(pnl_bindings_handle(&b, bend, 3, NULL, &learned), 1);
    assert_int_equal(learned, 2);
    assert_int_equal(b.binding[2].kind, PNL_SOURCE_PITCH_BEND);
    assert_int_equal(b.binding[2].channel, 15);
    assert_int_equal(b.binding[2].number, 0);
    assert_int_equal(pnl_bindings_learn(&b, "preset"), 0);
    const uint8_t program[2] = {0xC0, 9};
    assert_int_equal(pnl_bindings_handle(&b, program, 2, NULL, NULL), 1);
    assert_int_equal(b.binding[3].kind, PNL_SOURCE_PROGRAM);
    assert_int_equal(b.binding[3].number, 0);
    assert_string_equal(b.binding[3].target, "preset");
    /* a note-on is learned as a note */
    assert_int_equal(pnl_bindings_learn(&b, "panic"), 0);
    const uint8_t note[3] = {0x91, 36, 90};
    assert_int_equal(pnl_bindings_handle(&b, note, 3, NULL, NULL), 1);
    assert_int_equal(b.binding[4].kind, PNL_SOURCE_NOTE);
    assert_int_equal(b.binding[4].channel, 1);
    assert_int_equal(b.binding[4].number, 36);
}

static void test_learn_rejects_and_cancels(void **state)
{
    (void)state;
    pnl_bindings b;
    pnl_bindings_init(&b);
    assert_int_equal(pnl_bindings_learn(&b, ""), -1);
    assert_int_equal(pnl_bindings_learn(&b, NULL), -1);
    assert_int_equal(pnl_bindings_learn(&b, "bad name"), -1);
    assert_int_equal(b.learning, 0);
    assert_int_equal(pnl_bindings_learn(&b, "alpha"), 0);
    pnl_bindings_cancel_learn(&b);
    assert_int_equal(b.learning, 0);
    const uint8_t cc[3] = {0xB0, 7, 1};
    assert_int_equal(pnl_bindings_handle(&b, cc, 3, NULL, NULL), 0);
    assert_int_equal(b.count, 0);
}

/* ------------------------------------------------------------------------ */
/* The map file */

static void test_round_trip(void **state)
{
    (void)state;
    pnl_bindings b, loaded;
    sample_table(&b);
    char path[PATH_SIZE];
    tmp_path(path, "round-trip.json");
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(pnl_bindings_save(&b, path, &info), PN_OK);

    /* a table with other content and in learn mode: bindings replaced,
     * learn mode kept */
    pnl_bindings_init(&loaded);
    assert_int_equal(pnl_bindings_set(&loaded, PNL_SOURCE_CC, 5, 5, "junk"), 0);
    assert_int_equal(pnl_bindings_learn(&loaded, "alpha"), 0);
    assert_int_equal(pnl_bindings_load(&loaded, path, &info), PN_OK);
    assert_tables_equal(&loaded, &b);
    assert_int_equal(loaded.learning, 1);

    /* channels are 1-based in the file, "any" by name */
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(pn_file_read(path, 0, &text, &len, &info), PN_OK);
    assert_non_null(strstr(text, "\"format\": \"parnassus-live-map/1\""));
    assert_non_null(strstr(text, "\"channel\": 1,"));
    assert_non_null(strstr(text, "\"channel\": 16,"));
    assert_non_null(strstr(text, "\"channel\": 10,"));
    assert_non_null(strstr(text, "\"channel\": \"any\""));
    assert_null(strstr(text, "\"channel\": 0"));
    free(text);

    /* an empty table too */
    pnl_bindings empty;
    pnl_bindings_init(&empty);
    assert_int_equal(pnl_bindings_save(&empty, path, &info), PN_OK);
    assert_int_equal(pnl_bindings_load(&loaded, path, &info), PN_OK);
    assert_int_equal(loaded.count, 0);
}

/* The four bindings of the hand-written file below. */
static void check_hand_written(const pnl_bindings *b)
{
    assert_int_equal(b->count, 4);
    assert_int_equal(b->binding[0].kind, PNL_SOURCE_CC);
    assert_int_equal(b->binding[0].channel, 15);
    assert_int_equal(b->binding[0].number, 0);
    assert_string_equal(b->binding[0].target, "alpha");
    assert_int_equal(b->binding[1].kind, PNL_SOURCE_NOTE);
    assert_int_equal(b->binding[1].channel, -1);
    assert_int_equal(b->binding[1].number, 127);
    assert_int_equal(b->binding[2].kind, PNL_SOURCE_PITCH_BEND);
    assert_int_equal(b->binding[2].channel, 0);
    assert_int_equal(b->binding[2].number, 0);
    assert_int_equal(b->binding[3].channel, -1);
    assert_string_equal(b->binding[3].target, "division");
}

#define HAND_WRITTEN                                                                               \
    "{\"bindings\": [\n"                                                                           \
    "  {\"target\": \"alpha\", \"source\": \"cc\", \"channel\": 16, \"number\": 0},\n"             \
    "  {\"source\": \"note\", \"channel\": \"any\", \"number\": 127, "                             \
    "\"target\": \"preset_next\"},\n"                                                              \
    "  {\"source\": \"pitch_bend\", \"channel\": 1, \"target\": \"alpha\"},\n"                     \
    "  {\"source\": \"cc\", \"channel\": \"any\", \"number\": 0, \"target\": "                     \
    "\"division\"}\n"                                                                              \
    "], \"format\": \"parnassus-live-map/1\"}\n"

static void test_hand_written_file(void **state)
{
    (void)state;
    char path[PATH_SIZE];
    tmp_path(path, "hand.json");
    write_text(path, HAND_WRITTEN);
    pnl_bindings b;
    pnl_bindings_init(&b);
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(pnl_bindings_load(&b, path, &info), PN_OK);
    check_hand_written(&b);
    /* the same after a UTF-8 byte order mark, which some editors write */
    tmp_path(path, "hand-bom.json");
    write_text(path, "\xEF\xBB\xBF" HAND_WRITTEN);
    pnl_bindings_init(&b);
    assert_int_equal(pnl_bindings_load(&b, path, &info), PN_OK);
    check_hand_written(&b);
}

typedef struct bad_file {
    const char *name;
    const char *text;
    const char *message; /* after "<path>: " */
} bad_file;

#define ONE_BINDING(fields) "{\"format\": \"parnassus-live-map/1\", \"bindings\": [{" fields "}]}"

static const bad_file BAD_FILES[] = {
    {"format.json", "{\"format\": \"parnassus-live-map/2\", \"bindings\": []}",
     "format: \"parnassus-live-map/2\" is not supported (expected \"parnassus-live-map/1\")"},
    {"no-format.json", "{\"bindings\": []}", "format: missing (expected \"parnassus-live-map/1\")"},
    {"format-type.json", "{\"format\": 1, \"bindings\": []}", "format: expected a string, got 1"},
    {"top.json", "[]",
     "top level: expected an object {\"format\": ..., \"bindings\": [...]}, "
     "got an array"},
    {"no-bindings.json", "{\"format\": \"parnassus-live-map/1\"}",
     "bindings: missing (an array, possibly empty)"},
    {"bindings-type.json", "{\"format\": \"parnassus-live-map/1\", \"bindings\": {}}",
     "bindings: expected an array, got an object"},
    {"extra.json", "{\"format\": \"parnassus-live-map/1\", \"bindings\": [], \"x\": 1}",
     "top level: unknown field \"x\""},
    {"entry-type.json", "{\"format\": \"parnassus-live-map/1\", \"bindings\": [\"cc\"]}",
     "bindings[0]: expected an object {\"source\": ..., \"target\": ...}, got \"cc\""},
    {"channel0.json",
     "{\"format\": \"parnassus-live-map/1\", \"bindings\": [\n"
     "  {\"source\": \"cc\", \"channel\": 1, \"number\": 1, \"target\": \"alpha\"},\n"
     "  {\"source\": \"cc\", \"channel\": 1, \"number\": 2, \"target\": \"alpha\"},\n"
     "  {\"source\": \"cc\", \"channel\": 0, \"number\": 3, \"target\": \"alpha\"}]}",
     "bindings[2].channel: must be 1..16 or \"any\", got 0"},
    {"channel17.json",
     ONE_BINDING("\"source\": \"note\", \"channel\": 17, \"number\": 1, \"target\": \"a\""),
     "bindings[0].channel: must be 1..16 or \"any\", got 17"},
    {"channel-all.json",
     ONE_BINDING("\"source\": \"note\", \"channel\": \"all\", \"number\": 1, \"target\": \"a\""),
     "bindings[0].channel: must be 1..16 or \"any\", got \"all\""},
    {"channel-real.json",
     ONE_BINDING("\"source\": \"note\", \"channel\": 1.5, \"number\": 1, \"target\": \"a\""),
     "bindings[0].channel: must be 1..16 or \"any\", got 1.5"},
    {"channel-whole-real.json",
     ONE_BINDING("\"source\": \"note\", \"channel\": 2.0, \"number\": 1, \"target\": \"a\""),
     "bindings[0].channel: must be 1..16 or \"any\", got 2.0"},
    {"no-channel.json", ONE_BINDING("\"source\": \"note\", \"number\": 1, \"target\": \"a\""),
     "bindings[0].channel: missing (1..16 or \"any\")"},
    {"note128.json",
     ONE_BINDING("\"source\": \"note\", \"channel\": 1, \"number\": 128, \"target\": \"a\""),
     "bindings[0].number: must be 0..127 for note, got 128"},
    {"cc120.json",
     ONE_BINDING("\"source\": \"cc\", \"channel\": 1, \"number\": 120, \"target\": \"a\""),
     "bindings[0].number: must be 0..119 for cc (120..127 are channel mode messages), got 120"},
    {"no-number.json", ONE_BINDING("\"source\": \"cc\", \"channel\": 1, \"target\": \"a\""),
     "bindings[0].number: missing (cc needs a number 0..119)"},
    {"bend-number.json",
     ONE_BINDING("\"source\": \"pitch_bend\", \"channel\": 1, \"number\": 0, \"target\": \"a\""),
     "bindings[0].number: not used by pitch_bend (remove it)"},
    {"source.json",
     ONE_BINDING("\"source\": \"knob\", \"channel\": 1, \"number\": 1, \"target\": \"a\""),
     "bindings[0].source: expected \"cc\", \"note\", \"pitch_bend\" or \"program\", got "
     "\"knob\""},
    {"no-source.json", ONE_BINDING("\"channel\": 1, \"number\": 1, \"target\": \"a\""),
     "bindings[0].source: missing (\"cc\", \"note\", \"pitch_bend\" or \"program\")"},
    {"no-target.json", ONE_BINDING("\"source\": \"cc\", \"channel\": 1, \"number\": 1"),
     "bindings[0].target: missing (a control's port symbol or an action name)"},
    {"long-target.json",
     ONE_BINDING("\"source\": \"cc\", \"channel\": 1, \"number\": 1, "
                 "\"target\": \"abcdefghijklmnopqrstuvwxyz012345\""),
     "bindings[0].target: longer than 31 bytes"},
    {"empty-target.json",
     ONE_BINDING("\"source\": \"cc\", \"channel\": 1, \"number\": 1, \"target\": \"\""),
     "bindings[0].target: empty"},
    {"target-type.json",
     ONE_BINDING("\"source\": \"cc\", \"channel\": 1, \"number\": 1, \"target\": 5"),
     "bindings[0].target: expected a string, got 5"},
    {"target-name.json",
     ONE_BINDING("\"source\": \"cc\", \"channel\": 1, \"number\": 1, \"target\": \"a \\\"b\""),
     "bindings[0].target: \"a \\\"b\" is not a name (letters, digits and '_', not starting "
     "with a digit)"},
    {"field.json",
     ONE_BINDING("\"source\": \"cc\", \"chanel\": 1, \"number\": 1, \"target\": \"a\""),
     "bindings[0]: unknown field \"chanel\""},
    {"duplicate.json",
     "{\"format\": \"parnassus-live-map/1\", \"bindings\": [\n"
     "  {\"source\": \"cc\", \"channel\": 1, \"number\": 74, \"target\": \"alpha\"},\n"
     "  {\"source\": \"cc\", \"channel\": \"any\", \"number\": 74, \"target\": \"alpha\"},\n"
     "  {\"source\": \"cc\", \"channel\": 1, \"number\": 74, \"target\": \"division\"}]}",
     "bindings[2]: same source as bindings[0] (cc 74 on channel 1)"},
    {"duplicate-program.json",
     "{\"format\": \"parnassus-live-map/1\", \"bindings\": [\n"
     "  {\"source\": \"program\", \"channel\": \"any\", \"target\": \"preset\"},\n"
     "  {\"source\": \"program\", \"channel\": \"any\", \"target\": \"alpha\"}]}",
     "bindings[1]: same source as bindings[0] (program on any channel)"},
};

/* A table that no failed load may touch. */
static void check_unchanged(const pnl_bindings *b)
{
    pnl_bindings expected;
    sample_table(&expected);
    assert_tables_equal(b, &expected);
}

static void test_malformed_files(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof BAD_FILES / sizeof BAD_FILES[0]; ++i) {
        char path[PATH_SIZE];
        tmp_path(path, BAD_FILES[i].name);
        write_text(path, BAD_FILES[i].text);
        pnl_bindings b;
        sample_table(&b);
        pn_error_info info = {PN_OK, ""};
        assert_int_equal(pnl_bindings_load(&b, path, &info), PN_ERR_PARSE);
        assert_int_equal(info.code, PN_ERR_PARSE);
        check_message(&info, path, BAD_FILES[i].message, 1);
        check_unchanged(&b);
    }
}

static void test_invalid_json_names_line(void **state)
{
    (void)state;
    char path[PATH_SIZE];
    tmp_path(path, "broken.json");
    write_text(path, "{\n"
                     "  \"format\": \"parnassus-live-map/1\",\n"
                     "  \"bindings\": [\n"
                     "    {\"source\": \"cc\",, \"channel\": 1}\n"
                     "  ]\n"
                     "}\n");
    pnl_bindings b;
    sample_table(&b);
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(pnl_bindings_load(&b, path, &info), PN_ERR_PARSE);
    check_message(&info, path, "line 4 column ", 0);
    check_unchanged(&b);

    /* a repeated key is an error too, not a silent choice */
    tmp_path(path, "repeated-key.json");
    write_text(path, "{\"format\": \"parnassus-live-map/1\",\n\"format\": \"x\", "
                     "\"bindings\": []}");
    assert_int_equal(pnl_bindings_load(&b, path, &info), PN_ERR_PARSE);
    check_message(&info, path, "line 2 column ", 0);
    assert_non_null(strstr(info.message, "duplicate"));
    check_unchanged(&b);
}

static void test_too_many_bindings(void **state)
{
    (void)state;
    enum { N = PNL_BINDINGS_MAX + 1, ENTRY = 96 };
    char *text = malloc((size_t)N * ENTRY + 128);
    assert_non_null(text);
    size_t o = (size_t)sprintf(text, "{\"format\": \"parnassus-live-map/1\", \"bindings\": [");
    for (int i = 0; i < N; ++i)
        o += (size_t)sprintf(text + o,
                             "%s{\"source\": \"note\", \"channel\": %d, \"number\": %d, "
                             "\"target\": \"panic\"}",
                             i ? ", " : "", i % 16 + 1, i / 16);
    strcpy(text + o, "]}");
    char path[PATH_SIZE];
    tmp_path(path, "too-many.json");
    write_text(path, text);
    free(text);
    pnl_bindings b;
    sample_table(&b);
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(pnl_bindings_load(&b, path, &info), PN_ERR_PARSE);
    check_message(&info, path, "bindings: 129 entries, at most 128", 1);
    check_unchanged(&b);

    /* exactly the capacity loads */
    pnl_bindings full;
    pnl_bindings_init(&full);
    for (int i = 0; i < PNL_BINDINGS_MAX; ++i)
        assert_int_equal(pnl_bindings_set(&full, PNL_SOURCE_NOTE, i % 16, i / 16, "panic"), 0);
    assert_int_equal(pnl_bindings_save(&full, path, &info), PN_OK);
    assert_int_equal(pnl_bindings_load(&b, path, &info), PN_OK);
    assert_tables_equal(&b, &full);
}

static void test_unreadable_path(void **state)
{
    (void)state;
    char path[PATH_SIZE];
    tmp_path(path, "does-not-exist.json");
    pnl_bindings b;
    sample_table(&b);
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(pnl_bindings_load(&b, path, &info), PN_ERR_IO);
    assert_int_equal(info.code, PN_ERR_IO);
    assert_memory_equal(info.message, path, strlen(path));
    assert_non_null(strstr(info.message, "cannot open"));
    check_unchanged(&b);
}

static void test_save_creates_directories(void **state)
{
    (void)state;
    char dir[PATH_SIZE], path[PATH_SIZE];
    tmp_path(dir, "new/deeper/parnassus");
    join(path, sizeof path, dir, "/live-map.json");
    assert_false(is_directory(dir));
    pnl_bindings b, loaded;
    sample_table(&b);
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(pnl_bindings_save(&b, path, &info), PN_OK);
    assert_true(is_directory(dir));
    assert_true(is_file(path));
    pnl_bindings_init(&loaded);
    assert_int_equal(pnl_bindings_load(&loaded, path, &info), PN_OK);
    assert_tables_equal(&loaded, &b);

    /* saving again replaces the file and leaves no temporary behind */
    assert_int_equal(pnl_bindings_remove_target(&b, "alpha"), 1);
    assert_int_equal(pnl_bindings_save(&b, path, &info), PN_OK);
    assert_int_equal(count_entries(dir), 1);
    assert_int_equal(pnl_bindings_load(&loaded, path, &info), PN_OK);
    assert_tables_equal(&loaded, &b);
}

static void test_save_errors(void **state)
{
    (void)state;
    char blocker[PATH_SIZE], path[PATH_SIZE];
    tmp_path(blocker, "a-file");
    write_text(blocker, "not a directory\n");
    join(path, sizeof path, blocker, "/sub/live-map.json");
    pnl_bindings b;
    sample_table(&b);
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(pnl_bindings_save(&b, path, &info), PN_ERR_IO);
    assert_memory_equal(info.message, path, strlen(path));
    assert_false(is_file(path));

    /* a table that would not load again is refused */
    tmp_path(path, "invalid.json");
    b.binding[1].channel = 16;
    assert_int_equal(pnl_bindings_save(&b, path, &info), PN_ERR_INVALID);
    assert_memory_equal(info.message, path, strlen(path));
    assert_false(is_file(path));
    sample_table(&b);
    b.binding[1] = b.binding[0];
    assert_int_equal(pnl_bindings_save(&b, path, &info), PN_ERR_INVALID);
    assert_false(is_file(path));
}

/* ------------------------------------------------------------------------ */
/* The default path */

static void test_default_path_xdg(void **state)
{
    (void)state;
    const saved_env env = save_env();
    char out[PATH_SIZE];
    static const char expected[] = "/config/home/parnassus/live-map.json";
    assert_int_equal(setenv("XDG_CONFIG_HOME", "/config/home", 1), 0);
    assert_int_equal(setenv("HOME", "/home/someone", 1), 0);
    assert_int_equal(pnl_bindings_default_path(out, sizeof out), (int)strlen(expected));
    assert_string_equal(out, expected);

    /* too small a buffer: 0, nothing written */
    char small[sizeof expected - 1];
    memset(small, 'x', sizeof small);
    assert_int_equal(pnl_bindings_default_path(small, sizeof small), 0);
    assert_int_equal(small[0], 'x');
    assert_int_equal(pnl_bindings_default_path(out, sizeof expected), (int)strlen(expected));

    /* saving there creates the parnassus directory */
    char xdg[PATH_SIZE], dir[PATH_SIZE];
    tmp_path(xdg, "xdg");
    assert_int_equal(setenv("XDG_CONFIG_HOME", xdg, 1), 0);
    assert_true(pnl_bindings_default_path(out, sizeof out) > 0);
    join(dir, sizeof dir, xdg, "/parnassus");
    pnl_bindings b;
    sample_table(&b);
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(pnl_bindings_save(&b, out, &info), PN_OK);
    assert_true(is_directory(dir));
    assert_true(is_file(out));
    restore_env(env);
}

static void test_default_path_home(void **state)
{
    (void)state;
    const saved_env env = save_env();
    char out[PATH_SIZE];
    assert_int_equal(unsetenv("XDG_CONFIG_HOME"), 0);
    assert_int_equal(setenv("HOME", "/home/someone", 1), 0);
    assert_true(pnl_bindings_default_path(out, sizeof out) > 0);
    assert_string_equal(out, "/home/someone/.config/parnassus/live-map.json");

    /* an empty or relative XDG_CONFIG_HOME does not count */
    memset(out, 0, sizeof out);
    assert_int_equal(setenv("XDG_CONFIG_HOME", "", 1), 0);
    assert_true(pnl_bindings_default_path(out, sizeof out) > 0);
    assert_string_equal(out, "/home/someone/.config/parnassus/live-map.json");
    assert_int_equal(setenv("XDG_CONFIG_HOME", "relative/dir", 1), 0);
    assert_true(pnl_bindings_default_path(out, sizeof out) > 0);
    assert_string_equal(out, "/home/someone/.config/parnassus/live-map.json");

    /* neither: 0 */
    assert_int_equal(unsetenv("HOME"), 0);
    assert_int_equal(unsetenv("XDG_CONFIG_HOME"), 0);
    strcpy(out, "kept");
    assert_int_equal(pnl_bindings_default_path(out, sizeof out), 0);
    assert_string_equal(out, "kept");
    restore_env(env);
}

/* ------------------------------------------------------------------------ */

static int setup(void **state)
{
    (void)state;
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/pn-test-live-bindings.XXXXXX",
             base && *base ? base : "/tmp");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    remove_tree(tmpdir);
    return is_directory(tmpdir) ? -1 : 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_set_replace_remove),
        cmocka_unit_test(test_set_rejects_bad_arguments),
        cmocka_unit_test(test_cc_channel_mode_not_bindable),
        cmocka_unit_test(test_table_full),
        cmocka_unit_test(test_handle_values),
        cmocka_unit_test(test_note_off_no_hit),
        cmocka_unit_test(test_malformed_messages_ignored),
        cmocka_unit_test(test_channel_precedence),
        cmocka_unit_test(test_learn_binds_next_cc),
        cmocka_unit_test(test_learn_replaces_same_source),
        cmocka_unit_test(test_learn_rejects_and_cancels),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_hand_written_file),
        cmocka_unit_test(test_malformed_files),
        cmocka_unit_test(test_invalid_json_names_line),
        cmocka_unit_test(test_too_many_bindings),
        cmocka_unit_test(test_unreadable_path),
        cmocka_unit_test(test_save_creates_directories),
        cmocka_unit_test(test_save_errors),
        cmocka_unit_test(test_default_path_xdg),
        cmocka_unit_test(test_default_path_home),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
