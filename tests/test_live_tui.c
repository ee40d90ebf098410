/* Tests of the terminal interface of parnassus-live (apps/live/live_tui.h):
 * the keys and the commands they make, without a terminal; refusing to
 * start without one; and, on a pseudo-terminal, drawing at several sizes,
 * reading keys and giving an unknown terminal back without exiting. */
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700 /* posix_openpt, grantpt, unlockpt, ptsname */
#endif

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <curses.h> /* the key codes */

#include "live_tui.h"

enum { CMD_SIZE = 128 };

/* G4 D4 B3 G2, soprano first */
static const int chord[PNL_VOICES] = {67, 62, 59, 43};

static pnl_bindings bindings;
static pnl_tui_view view;

static void set_knob(int i, const char *symbol, const char *label, float value, float min,
                     float max, float step)
{
    pnl_tui_knob *k = &view.knobs[i];
    k->symbol = symbol;
    k->label = label;
    k->value = value;
    k->min = min;
    k->max = max;
    k->step = step;
}

/* Four knobs, playing at 120 bpm in bar 12 beat 2, two bindings. */
static int setup_view(void **state)
{
    (void)state;
    memset(&view, 0, sizeof view);
    view.status.rolling = 1;
    view.status.bpm = 120;
    view.status.beat = 45.5;
    for (int v = 0; v < PNL_VOICES; ++v)
        view.status.sonority[v] = chord[v];
    view.status.rules_selected = 37;
    view.status.solve_ms = 26;
    view.status.load = 0.125;
    view.status.load_max = 0.5;
    view.status.notes_out = 1234;
    set_knob(0, "log2_lambda_w", "Style (log2 λw)", 0.0f, -12.0f, 6.0f, 0.5f);
    set_knob(1, "alpha", "Selection (α)", 0.5f, 0.0f, 1.0f, 0.25f);
    set_knob(2, "division", "Division", 2.0f, 0.0f, 5.0f, 1.0f);
    set_knob(3, "gate", "Gate", 0.75f, 0.125f, 1.0f, 0.125f);
    view.num_knobs = 4;
    view.rules_kept = "parallel_fifths, leading_tone, bass_leap";
    view.midi_inputs = "Keystation 49 MK3";
    view.midi_outputs = "none";
    view.audio = "default, 48000 Hz, 256 frames";
    pnl_bindings_init(&bindings);
    if (pnl_bindings_set(&bindings, PNL_SOURCE_CC, 2, 74, "log2_lambda_w") != 0 ||
        pnl_bindings_set(&bindings, PNL_SOURCE_NOTE, -1, 60, "panic") != 0)
        return -1;
    view.bindings = &bindings;
    view.message = "loaded 2 bindings";
    return 0;
}

/* The command key makes in state s (1), or that it makes none (0). */
static void expect_key(pnl_tui_state *s, int key, const char *want)
{
    char cmd[CMD_SIZE];
    memset(cmd, 'x', sizeof cmd);
    const int made = pnl_tui_key(s, key, &view, cmd, sizeof cmd);
    if (want) {
        assert_int_equal(made, 1);
        assert_string_equal(cmd, want);
    } else {
        assert_int_equal(made, 0);
        assert_string_equal(cmd, "");
    }
}

/* ------------------------------------------------------------------------ */
/* Keys */

static void test_space_plays_or_stops(void **state)
{
    (void)state;
    pnl_tui_state s = {0, 0, 0};
    expect_key(&s, ' ', "stop");
    view.status.rolling = 0;
    expect_key(&s, ' ', "play");
}

static void test_style_and_selection_keys_move_by_step(void **state)
{
    (void)state;
    pnl_tui_state s = {0, 0, 0};
    expect_key(&s, 's', "set log2_lambda_w -0.5");
    expect_key(&s, 'S', "set log2_lambda_w 0.5");
    expect_key(&s, 'a', "set alpha 0.25");
    expect_key(&s, 'A', "set alpha 0.75");
    assert_int_equal(s.selected, 0); /* they do not move the selection */
}

static void test_style_clamps_at_its_range(void **state)
{
    (void)state;
    pnl_tui_state s = {0, 0, 0};
    view.knobs[0].value = -11.75f;
    expect_key(&s, 's', "set log2_lambda_w -12");
    view.knobs[0].value = -12.0f;
    expect_key(&s, 's', "set log2_lambda_w -12");
    view.knobs[0].value = 5.75f;
    expect_key(&s, 'S', "set log2_lambda_w 6");
    view.knobs[1].value = 1.0f;
    expect_key(&s, 'A', "set alpha 1");
}

static void test_arrows_select_then_move_the_selected_knob(void **state)
{
    (void)state;
    pnl_tui_state s = {0, 0, 0};
    expect_key(&s, '>', "set log2_lambda_w 0.5");
    expect_key(&s, KEY_DOWN, NULL);
    expect_key(&s, 'j', NULL);
    assert_int_equal(s.selected, 2);
    expect_key(&s, '>', "set division 3");
    expect_key(&s, KEY_RIGHT, "set division 3");
    expect_key(&s, '<', "set division 1");
    expect_key(&s, KEY_LEFT, "set division 1");
    expect_key(&s, KEY_UP, NULL);
    assert_int_equal(s.selected, 1);
    expect_key(&s, 'k', NULL);
    expect_key(&s, KEY_UP, NULL); /* stays on the first */
    assert_int_equal(s.selected, 0);
    for (int i = 0; i < 10; ++i)
        expect_key(&s, KEY_DOWN, NULL);
    assert_int_equal(s.selected, 3); /* stays on the last */
    expect_key(&s, '>', "set gate 0.875");
    view.knobs[3].value = 1.0f;
    expect_key(&s, '>', "set gate 1");
}

static void test_selection_follows_a_shorter_view(void **state)
{
    (void)state;
    pnl_tui_state s = {7, 0, 0}; /* from a view with more knobs */
    expect_key(&s, '<', "set gate 0.625");
    assert_int_equal(s.selected, 3);
}

static void test_tempo_keys_clamp(void **state)
{
    (void)state;
    pnl_tui_state s = {0, 0, 0};
    expect_key(&s, '+', "tempo 121");
    expect_key(&s, '=', "tempo 121");
    expect_key(&s, '-', "tempo 119");
    view.status.bpm = 400;
    expect_key(&s, '+', "tempo 400");
    expect_key(&s, '-', "tempo 399");
    view.status.bpm = 20.5;
    expect_key(&s, '-', "tempo 20");
    view.status.bpm = 20;
    expect_key(&s, '-', "tempo 20");
}

static void test_actions(void **state)
{
    (void)state;
    pnl_tui_state s = {0, 0, 0};
    expect_key(&s, 'p', "panic");
    expect_key(&s, 'c', "capture parnassus-capture.mid");
    expect_key(&s, 'q', "quit");
}

static void test_learn_menu(void **state)
{
    (void)state;
    pnl_tui_state s = {2, 0, 0};
    expect_key(&s, 'L', NULL);
    assert_int_equal(s.learn_menu, 1);
    assert_int_equal(s.learn_item, 0);
    expect_key(&s, KEY_DOWN, NULL);
    expect_key(&s, 'j', NULL);
    assert_int_equal(s.learn_item, 2);
    assert_int_equal(s.selected, 2); /* the menu's keys leave the knobs alone */
    expect_key(&s, '\n', "learn division");
    assert_int_equal(s.learn_menu, 0);
    expect_key(&s, '\n', NULL); /* closed: Enter does nothing */

    expect_key(&s, 'm', NULL);
    for (int i = 0; i < 5; ++i)
        expect_key(&s, KEY_DOWN, NULL);
    expect_key(&s, KEY_UP, NULL);
    expect_key(&s, KEY_ENTER, "learn panic"); /* the first action, after 4 knobs */
    expect_key(&s, 'L', NULL);
    for (int i = 0; i < 20; ++i)
        expect_key(&s, KEY_DOWN, NULL);
    expect_key(&s, '\r', "learn preset_previous"); /* the last item */

    expect_key(&s, ']', "next"); /* presets step through, also from the menu */
    expect_key(&s, '[', "previous");
    expect_key(&s, 'L', NULL);
    expect_key(&s, 'p', "panic"); /* the music stays playable in the menu */
    assert_int_equal(s.learn_menu, 1);
    expect_key(&s, 27, NULL);
    assert_int_equal(s.learn_menu, 0);
    expect_key(&s, KEY_DOWN, NULL);
    assert_int_equal(s.selected, 3); /* arrows select knobs again */
}

static void test_learn_menu_without_knobs(void **state)
{
    (void)state;
    pnl_tui_state s = {0, 0, 0};
    view.num_knobs = 0;
    expect_key(&s, 's', NULL);
    expect_key(&s, '>', NULL);
    expect_key(&s, KEY_DOWN, NULL);
    expect_key(&s, 'L', NULL);
    expect_key(&s, '\n', "learn panic");
}

static void test_unknown_keys_make_nothing(void **state)
{
    (void)state;
    pnl_tui_state s = {0, 0, 0};
    const int keys[] = {'x', 'Z', 'l', 0, ERR, KEY_F(1), KEY_RESIZE, KEY_MOUSE, 27, '\n', 0x3bb};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; ++i)
        expect_key(&s, keys[i], NULL);
    assert_int_equal(s.selected, 0);
    assert_int_equal(s.learn_menu, 0);
}

static void test_without_state_or_view(void **state)
{
    (void)state;
    expect_key(NULL, 'S', "set log2_lambda_w 0.5");
    expect_key(NULL, 'L', NULL);
    char cmd[CMD_SIZE] = "unchanged";
    assert_int_equal(pnl_tui_key(NULL, 'q', NULL, cmd, sizeof cmd), 0);
    assert_string_equal(cmd, "");
}

/* A command that does not fit is not cut (it could then set another value
 * or name another file): nothing is made, cmd is left empty, and nothing
 * is written past cap. */
static void test_small_buffer_never_overflows(void **state)
{
    (void)state;
    pnl_tui_state s = {0, 0, 0};
    char cmd[CMD_SIZE];
    memset(cmd, '#', sizeof cmd);
    assert_int_equal(pnl_tui_key(&s, 'q', &view, cmd, 4), 0); /* "quit" needs 5 */
    assert_int_equal(cmd[0], '\0');
    for (size_t i = 4; i < sizeof cmd; ++i)
        assert_int_equal(cmd[i], '#');
    memset(cmd, '#', sizeof cmd);
    assert_int_equal(pnl_tui_key(&s, 's', &view, cmd, 10), 0);
    assert_int_equal(cmd[0], '\0');
    for (size_t i = 10; i < sizeof cmd; ++i)
        assert_int_equal(cmd[i], '#');
    assert_int_equal(pnl_tui_key(&s, 'q', &view, cmd, 5), 1);
    assert_string_equal(cmd, "quit");
    assert_int_equal(pnl_tui_key(&s, 'q', &view, NULL, 0), 0);
    cmd[0] = '#';
    assert_int_equal(pnl_tui_key(&s, 'q', &view, cmd, 0), 0);
    assert_int_equal(cmd[0], '#');
}

/* ------------------------------------------------------------------------ */
/* Without a terminal */

static void test_open_refuses_without_a_terminal(void **state)
{
    (void)state;
    assert_non_null(freopen("/dev/null", "r", stdin));
    pnl_tui *t = (pnl_tui *)&view; /* must be reset */
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(pnl_tui_open(&t, &info), PN_ERR_INVALID);
    assert_null(t);
    assert_int_equal(info.code, PN_ERR_INVALID);
    assert_non_null(strstr(info.message, "needs a terminal"));
    assert_non_null(strstr(info.message, "--headless"));
    pnl_tui_close(NULL);
    char cmd[CMD_SIZE] = "unchanged";
    assert_int_equal(pnl_tui_poll(NULL, &view, cmd, sizeof cmd), 0);
    assert_string_equal(cmd, "");
    pnl_tui_draw(NULL, &view);
}

/* ------------------------------------------------------------------------ */
/* On a pseudo-terminal: a child process gets the terminal's slave side as
 * stdin, stdout and stderr and runs the interface; it reports on a pipe
 * (what it read from its screen, the commands it got) while the parent
 * reads everything written to the terminal from the master side. */

enum { OUTPUT_SIZE = 1 << 17, REPORT_SIZE = 1 << 15, DEADLINE_S = 20 };

typedef struct pty_run {
    int rows, cols;
    const char *term;   /* TERM in the child */
    const char *locale; /* LC_ALL in the child */
    const char *keys;   /* typed once the child reports "ready" */
    void (*child)(int report);
    char output[OUTPUT_SIZE]; /* written to the terminal */
    size_t output_len;
    char report[REPORT_SIZE];
    size_t report_len;
    int status; /* the child's, from waitpid */
} pty_run;

static pty_run run;

static void reset_run(int rows, int cols, void (*child)(int))
{
    memset(&run, 0, sizeof run);
    run.rows = rows;
    run.cols = cols;
    run.term = "xterm";
    run.locale = "C";
    run.child = child;
}

static void report_text(int fd, const char *text)
{
    for (size_t done = 0, n = strlen(text); done < n;) {
        const ssize_t w = write(fd, text + done, n - done);
        if (w <= 0)
            exit(4);
        done += (size_t)w;
    }
}

/* Each row of the screen as curses holds it: "row NN|text|". */
static void report_screen(int report)
{
    const int rows = getmaxy(stdscr);
    for (int y = 0; y < rows; ++y) {
        char text[1024] = "";
        mvinnstr(y, 0, text, (int)sizeof text - 1); /* to the end of the row */
        char line[1100];
        snprintf(line, sizeof line, "row %02d|%s|\n", y, text);
        report_text(report, line);
    }
}

static pnl_tui *open_or_exit(int report)
{
    pnl_tui *t = NULL;
    pn_error_info info = {PN_OK, ""};
    if (pnl_tui_open(&t, &info) != PN_OK) {
        report_text(report, "open failed: ");
        report_text(report, info.message);
        report_text(report, "\n");
        exit(3);
    }
    return t;
}

static void child_draws(int report)
{
    pnl_tui *t = open_or_exit(report);
    pnl_tui_draw(t, &view);
    pnl_tui_draw(t, &view); /* again: only what changed is sent */
    report_text(report, MB_CUR_MAX > 1 ? "utf8 1\n" : "utf8 0\n");
    report_screen(report);
    pnl_tui_close(t);
}

static void set_child_environment(void)
{
    setenv("TERM", run.term, 1);
    setenv("LC_ALL", run.locale, 1);
    unsetenv("LINES"); /* the size comes from the terminal */
    unsetenv("COLUMNS");
}

static void start_child(const char *slave_name, int report)
{
    setsid();
    const int slave = open(slave_name, O_RDWR);
    if (slave < 0)
        exit(2);
    dup2(slave, STDIN_FILENO);
    dup2(slave, STDOUT_FILENO);
    dup2(slave, STDERR_FILENO);
    if (slave > STDERR_FILENO)
        close(slave);
    set_child_environment();
    run.child(report);
    exit(0);
}

static void append(char *buf, size_t size, size_t *len, const char *data, size_t n)
{
    const size_t fits = n < size - 1 - *len ? n : size - 1 - *len;
    memcpy(buf + *len, data, fits);
    *len += fits;
    buf[*len] = '\0';
}

/* Reads one side; returns 0 at its end (the slave side closed: EIO). */
static int read_into(int fd, char *buf, size_t size, size_t *len)
{
    char chunk[4096];
    const ssize_t n = read(fd, chunk, sizeof chunk);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return 1;
    if (n <= 0)
        return 0;
    append(buf, size, len, chunk, (size_t)n);
    return 1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int open_master(int rows, int cols, char *slave_name, size_t cap)
{
    const int master = posix_openpt(O_RDWR | O_NOCTTY);
    assert_true(master >= 0);
    assert_int_equal(grantpt(master), 0);
    assert_int_equal(unlockpt(master), 0);
    const char *name = ptsname(master);
    assert_non_null(name);
    assert_true(snprintf(slave_name, cap, "%s", name) < (int)cap);
    struct winsize size;
    memset(&size, 0, sizeof size);
    size.ws_row = (unsigned short)rows;
    size.ws_col = (unsigned short)cols;
    assert_int_equal(ioctl(master, TIOCSWINSZ, &size), 0);
    return master;
}

/* Reads the terminal and the report until the child has exited and both
 * are at their end; types run.keys once the child is ready. */
static void watch_child(pid_t pid, int master, int report)
{
    int master_open = 1, report_open = 1, exited = 0, typed = 0;
    const double deadline = now_s() + DEADLINE_S;
    while (master_open || report_open || !exited) {
        if (now_s() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &run.status, 0);
            fail_msg("the child did not finish; it wrote:\n%s\nreport:\n%s", run.output,
                     run.report);
        }
        struct pollfd fds[2] = {{master_open ? master : -1, POLLIN, 0},
                                {report_open ? report : -1, POLLIN, 0}};
        poll(fds, 2, 50);
        if (master_open && fds[0].revents)
            master_open = read_into(master, run.output, OUTPUT_SIZE, &run.output_len);
        if (report_open && fds[1].revents)
            report_open = read_into(report, run.report, REPORT_SIZE, &run.report_len);
        if (run.keys && !typed && strstr(run.report, "ready\n")) {
            assert_int_equal(write(master, run.keys, strlen(run.keys)), (ssize_t)strlen(run.keys));
            typed = 1;
        }
        if (!exited && waitpid(pid, &run.status, WNOHANG) == pid)
            exited = 1;
        if (exited && !report_open && !fds[0].revents)
            master_open = 0; /* all read that was written */
    }
}

static void run_on_pty(void)
{
    char slave_name[128];
    const int master = open_master(run.rows, run.cols, slave_name, sizeof slave_name);
    int report[2];
    assert_int_equal(pipe(report), 0);
    fflush(NULL);
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(master);
        close(report[0]);
        start_child(slave_name, report[1]);
    }
    close(report[1]);
    watch_child(pid, master, report[0]);
    close(report[0]);
    close(master);
    if (!WIFEXITED(run.status) || WEXITSTATUS(run.status) != 0)
        fail_msg("the child failed (status %d); it wrote:\n%s\nreport:\n%s", run.status, run.output,
                 run.report);
}

/* Row y of the child's screen, without the frame ("row NN|...|"). */
static const char *screen_row(int y, char *out, size_t cap)
{
    char prefix[24];
    snprintf(prefix, sizeof prefix, "row %02d|", y);
    const char *at = strstr(run.report, prefix);
    if (!at)
        fail_msg("no row %d in the report:\n%s", y, run.report);
    at += strlen(prefix);
    const char *end = strstr(at, "|\n");
    assert_non_null(end);
    snprintf(out, cap, "%.*s", (int)(end - at), at);
    return out;
}

static void expect_in_row(int y, const char *want)
{
    char row[1100];
    if (!strstr(screen_row(y, row, sizeof row), want)) {
        fprintf(stderr, "the screen:\n%s", run.report);
        fail_msg("row %d is \"%s\", without \"%s\"", y, row, want);
    }
}

static void expect_row_start(int y, const char *want)
{
    char row[1100];
    if (strncmp(screen_row(y, row, sizeof row), want, strlen(want)) != 0) {
        fprintf(stderr, "the screen:\n%s", run.report);
        fail_msg("row %d is \"%s\", not starting \"%s\"", y, row, want);
    }
}

static void test_draw_80x24(void **state)
{
    (void)state;
    reset_run(24, 80, child_draws);
    run_on_pty();
    assert_non_null(strstr(run.output, "G4 D4 B3 G2")); /* reached the terminal */
    expect_in_row(0, "parnassus-live");
    expect_in_row(0, "playing");
    expect_in_row(0, "120.0 bpm");
    expect_in_row(0, "bar 12:2");
    expect_row_start(1, " sonority G4 D4 B3 G2   solve 26 ms   late steps 0");
    expect_row_start(2, " rules kept 37: parallel_fifths, leading_tone, bass_leap");
    expect_row_start(3, " audio load 12% (max 50%)   notes 1234   dropped MIDI 0   level -120 dB");
    expect_row_start(4, " knobs");
    expect_row_start(5, "> Style (log2 ??w)"); /* C locale: a ? a byte */
    /* 0 in -12..6: two thirds of the bar's 38 cells */
    expect_in_row(5, "0 [#########################-------------]");
    expect_row_start(6, "  Selection (?\?)");
    expect_in_row(6, "0.5 [###################-------------------]");
    expect_row_start(8, "  Gate");
    expect_row_start(9, " MIDI in   Keystation 49 MK3");
    expect_row_start(10, " MIDI out  none");
    expect_row_start(11, " audio     default, 48000 Hz, 256 frames");
    expect_row_start(12, " bindings 2   learning off");
    expect_row_start(13, " CC 74 ch 3 -> log2_lambda_w   note 60 ch any -> panic");
    expect_row_start(22, " loaded 2 bindings");
    expect_row_start(
        23, " spc play jk<> knob sS sty aA sel -+ bpm [] preset p panic c cap L learn q quit");
}

static void test_draw_40x10_cuts_every_line(void **state)
{
    (void)state;
    reset_run(10, 40, child_draws);
    view.message = "a message far longer than the forty columns of this small window";
    run_on_pty();
    assert_non_null(strstr(run.output, "G4 D4 B3 G2"));
    expect_row_start(0, " parnassus-live   > playing   120.0 bpm~");
    expect_row_start(1, " sonority G4 D4 B3 G2   solve 26 ms   l~");
    expect_row_start(2, " rules kept 37: parallel_fifths, leadin~");
    expect_row_start(4, " knobs");
    expect_row_start(5, "> Style (log2 ??~        0 [#######---]");
    expect_row_start(6, "  Selection (?\?)       0.5 [#####-----]");
    expect_row_start(7, " MIDI in   Keystation 49 MK3");
    expect_row_start(8, " a message far longer than the forty co~");
    expect_row_start(9, " spc play jk<> knob sS sty aA sel -+ b~ "); /* the corner stays blank */
    for (int y = 0; y < 10; ++y) {
        char row[1100];
        assert_true(strlen(screen_row(y, row, sizeof row)) <= 40);
    }
}

static void test_draw_tiny_windows(void **state)
{
    (void)state;
    const int sizes[][2] = {{3, 12}, {1, 1}, {2, 80}, {5, 20}, {30, 200}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
        reset_run(sizes[i][0], sizes[i][1], child_draws);
        run_on_pty();
        expect_row_start(0, sizes[i][1] > 5 ? " parn" : " ");
    }
    expect_in_row(5, "Style"); /* 30x200: the whole list in one column */
    expect_in_row(8, "Gate");
}

static void test_draw_utf8(void **state)
{
    (void)state;
    reset_run(24, 80, child_draws);
    run.locale = "C.UTF-8";
    run_on_pty();
    if (!strstr(run.report, "utf8 1\n"))
        skip(); /* no UTF-8 locale here */
    assert_non_null(strstr(run.output, "λ"));
    assert_non_null(strstr(run.output, "→"));
    expect_in_row(0, "▶ playing");
    expect_row_start(5, "> Style (log2 λw)");
    expect_row_start(13, " CC 74 ch 3 → log2_lambda_w   note 60 ch any → panic");
    expect_row_start(
        23, " spc play ↑↓←→ knob sS sty aA sel -+ bpm [] preset p panic c cap L learn q quit");
}

static const char *const many_symbols[] = {
    "k00", "k01", "k02", "k03", "k04", "k05", "k06", "k07", "k08", "k09",
    "k10", "k11", "k12", "k13", "k14", "k15", "k16", "k17", "k18", "k19",
};

static void test_draw_many_knobs_in_two_columns(void **state)
{
    (void)state;
    for (int i = 0; i < 20; ++i)
        set_knob(i, many_symbols[i], many_symbols[i], (float)i, 0.0f, 19.0f, 1.0f);
    view.num_knobs = 20;
    assert_int_equal(pnl_bindings_learn(&bindings, "alpha"), 0);
    reset_run(24, 80, child_draws);
    run_on_pty();
    /* a header and ten rows of two knobs, then the devices */
    expect_row_start(4, " knobs");
    /* each column 39 wide: marker 2, label 15, value 9, a blank, bar 12 */
    expect_row_start(
        5, "> k00                    0 [----------]   k10                   10 [#####-----]");
    expect_row_start(
        14, "  k09                    9 [#####-----]   k19                   19 [##########]");
    expect_row_start(15, " MIDI in");
    expect_row_start(18, " bindings 2   learning: move a control for alpha");
}

/* Draws, then reads keys (drawing as the app would) until "quit" or five
 * seconds, reporting each command and at the end the screen. */
static void child_polls_until_quit(int report)
{
    pnl_tui *t = open_or_exit(report);
    pnl_tui_draw(t, &view);
    report_text(report, "ready\n");
    char cmd[CMD_SIZE] = "";
    for (const double until = now_s() + 5; now_s() < until && strcmp(cmd, "quit") != 0;) {
        if (pnl_tui_poll(t, &view, cmd, sizeof cmd)) {
            report_text(report, "command: ");
            report_text(report, cmd);
            report_text(report, "\n");
        }
        pnl_tui_draw(t, &view);
        nanosleep(&(struct timespec){0, 5000000}, NULL);
    }
    report_screen(report);
    pnl_tui_close(t);
}

static void test_draw_scrolls_to_the_selected_knob(void **state)
{
    (void)state;
    reset_run(10, 40, child_polls_until_quit);
    run.keys = "jjjq"; /* Gate, the fourth knob, where two rows show */
    run_on_pty();
    expect_row_start(5, "  Division");
    expect_row_start(6, "> Gate");
    const char *command = strstr(run.report, "command: ");
    assert_non_null(command);
    assert_int_equal(strncmp(command, "command: quit\n", 14), 0);
    assert_null(strstr(command + 1, "command: "));
}

static void test_draw_learn_menu(void **state)
{
    (void)state;
    reset_run(24, 80, child_polls_until_quit);
    run.keys = "Ljjq"; /* q: quit, in the menu too */
    run_on_pty();
    expect_row_start(4, " learn: choose a target (up/down, Enter learns, Esc cancels)");
    expect_row_start(5, "  Style (log2 ??w) (log2_lambda_w)");
    expect_row_start(7, "> Division (division)");
    expect_row_start(9, "  panic (action)");
    expect_row_start(11, "  capture (action)");
    expect_row_start(12, "  preset_next (action)");
    expect_row_start(13, "  preset_previous (action)");
    expect_row_start(14, " MIDI in");
    expect_row_start(23, " up/down choose  Enter learn  Esc cancel");
}

static void test_poll_reads_keys_one_command_at_a_time(void **state)
{
    (void)state;
    reset_run(24, 80, child_polls_until_quit);
    /* learn menu, down (an arrow as xterm sends it in keypad mode), down,
     * Enter; an unknown key; space; quit: three commands from one read */
    run.keys = "L\033OBj\rx q";
    run_on_pty();
    const char *learn = strstr(run.report, "command: learn division\n");
    const char *stop = strstr(run.report, "command: stop\n");
    const char *quit = strstr(run.report, "command: quit\n");
    if (!learn || !stop || !quit || !(learn < stop && stop < quit))
        fail_msg("the commands were:\n%s", run.report);
}

static void child_meets_an_unknown_terminal(int report)
{
    pnl_tui *t = NULL;
    pn_error_info info = {PN_OK, ""};
    const pn_error err = pnl_tui_open(&t, &info);
    char line[PN_MESSAGE_SIZE + 64];
    snprintf(line, sizeof line, "error %d %s: %s\n", (int)err, t ? "tui" : "null", info.message);
    report_text(report, line);
    pnl_tui_close(t);
}

static void test_unknown_terminal_is_refused_without_exiting(void **state)
{
    (void)state;
    reset_run(24, 80, child_meets_an_unknown_terminal);
    run.term = "no-such-terminal-at-all";
    run_on_pty();
    char want[64];
    snprintf(want, sizeof want, "error %d null: ", (int)PN_ERR_INVALID);
    if (!strstr(run.report, want) || !strstr(run.report, "no-such-terminal-at-all") ||
        !strstr(run.report, "--headless"))
        fail_msg("the report was:\n%s", run.report);
}

static void child_writes_to_a_file(int report)
{
    const int null_fd = open("/dev/null", O_WRONLY);
    if (null_fd < 0 || dup2(null_fd, STDOUT_FILENO) < 0)
        exit(5);
    child_meets_an_unknown_terminal(report);
}

static void test_open_refuses_when_stdout_is_not_a_terminal(void **state)
{
    (void)state;
    reset_run(24, 80, child_writes_to_a_file);
    run_on_pty();
    char want[64];
    snprintf(want, sizeof want, "error %d null: ", (int)PN_ERR_INVALID);
    if (!strstr(run.report, want) || !strstr(run.report, "--headless"))
        fail_msg("the report was:\n%s", run.report);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_space_plays_or_stops, setup_view),
        cmocka_unit_test_setup(test_style_and_selection_keys_move_by_step, setup_view),
        cmocka_unit_test_setup(test_style_clamps_at_its_range, setup_view),
        cmocka_unit_test_setup(test_arrows_select_then_move_the_selected_knob, setup_view),
        cmocka_unit_test_setup(test_selection_follows_a_shorter_view, setup_view),
        cmocka_unit_test_setup(test_tempo_keys_clamp, setup_view),
        cmocka_unit_test_setup(test_actions, setup_view),
        cmocka_unit_test_setup(test_learn_menu, setup_view),
        cmocka_unit_test_setup(test_learn_menu_without_knobs, setup_view),
        cmocka_unit_test_setup(test_unknown_keys_make_nothing, setup_view),
        cmocka_unit_test_setup(test_without_state_or_view, setup_view),
        cmocka_unit_test_setup(test_small_buffer_never_overflows, setup_view),
        cmocka_unit_test_setup(test_open_refuses_without_a_terminal, setup_view),
        cmocka_unit_test_setup(test_draw_80x24, setup_view),
        cmocka_unit_test_setup(test_draw_40x10_cuts_every_line, setup_view),
        cmocka_unit_test_setup(test_draw_tiny_windows, setup_view),
        cmocka_unit_test_setup(test_draw_utf8, setup_view),
        cmocka_unit_test_setup(test_draw_many_knobs_in_two_columns, setup_view),
        cmocka_unit_test_setup(test_draw_scrolls_to_the_selected_knob, setup_view),
        cmocka_unit_test_setup(test_draw_learn_menu, setup_view),
        cmocka_unit_test_setup(test_poll_reads_keys_one_command_at_a_time, setup_view),
        cmocka_unit_test_setup(test_unknown_terminal_is_refused_without_exiting, setup_view),
        cmocka_unit_test_setup(test_open_refuses_when_stdout_is_not_a_terminal, setup_view),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
