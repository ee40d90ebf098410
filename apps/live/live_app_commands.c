/* parnassus-live's commands, on the main thread: the stdin (or
 * interface) command lines, the actions MIDI bindings trigger, presets,
 * capture and the status line. */
#include "live_app_internal.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/select.h>
#include <unistd.h>

int pnl_app_write_capture(pnl_app *a, const char *path)
{
    pnl_engine_drain_capture(a->engine, a->capture);
    pnl_status st;
    pnl_engine_status(a->engine, &st);
    pn_error_info info = {PN_OK, ""};
    if (pnl_capture_write(a->capture, path, st.beat, st.bpm, &info) != PN_OK) {
        pnl_app_say(a, 1, "%s", info.message);
        return -1;
    }
    pnl_app_say(a, 0, "captured the last %d bars to %s", a->o->capture_bars, path);
    return 0;
}

void pnl_app_print_status(pnl_app *a)
{
    pnl_status st;
    pnl_engine_status(a->engine, &st);
    static const char *const names[12] = {"C",  "C#", "D",  "D#", "E",  "F",
                                          "F#", "G",  "G#", "A",  "A#", "B"};
    printf("%s %.1f bpm, beat %.2f, %.1f s | sonority", st.rolling ? "playing" : "stopped", st.bpm,
           st.beat, st.stream_time);
    for (int v = 0; v < PNL_VOICES; ++v)
        if (st.sonority[v] >= 0)
            printf(" %s%d", names[st.sonority[v] % 12], st.sonority[v] / 12 - 1);
        else
            printf(" -");
    printf(" | rules kept %.0f (%s), solve %.0f ms, late steps %.0f | log2_lambda_w %g alpha %g | "
           "load %.0f %% (max %.0f %%) | level %.0f dBFS | notes %llu\n",
           (double)st.rules_selected, pnl_engine_rules_kept(a->engine), (double)st.solve_ms,
           (double)st.late_steps, (double)pnl_engine_control(a->engine, "log2_lambda_w"),
           (double)pnl_engine_control(a->engine, "alpha"), 100 * st.load, 100 * st.load_max,
           st.level > 1e-6 ? 20 * log10(st.level) : -120.0, (unsigned long long)st.notes_out);
    fflush(stdout);
}

int pnl_app_set_knob(pnl_app *a, const char *symbol, const char *value)
{
    char *end;
    const double v = strtod(value, &end);
    if (end == value || *end || pnl_engine_set_control(a->engine, symbol, (float)v) != 0) {
        pnl_app_say(a, 1, "set %s %s: no such knob or not a number", symbol, value);
        return -1;
    }
    return 0;
}

static void apply_preset(pnl_app *a, int index)
{
    const int n = pnl_engine_preset_count(a->engine);
    if (n == 0) {
        pnl_app_say(a, 1, "the plugin has no presets");
        return;
    }
    index = ((index % n) + n) % n;
    pn_error_info info = {PN_OK, ""};
    if (pnl_engine_apply_preset(a->engine, index, &info) != 0) {
        pnl_app_say(a, 1, "%s", info.message);
        return;
    }
    a->preset = index;
    pnl_app_say(a, 0, "preset %d: %s", index + 1, pnl_engine_preset_label(a->engine, index));
}

/* "preset 3" (1-based) or "preset Chorale minor" (a label, any case) */
static void preset_command(pnl_app *a, const char *arg)
{
    char *end;
    const long number = strtol(arg, &end, 10);
    if (*arg && !*end) {
        if (number < 1 || number > pnl_engine_preset_count(a->engine))
            pnl_app_say(a, 1, "preset %s: expected 1..%d", arg, pnl_engine_preset_count(a->engine));
        else
            apply_preset(a, (int)number - 1);
        return;
    }
    for (int i = 0; i < pnl_engine_preset_count(a->engine); ++i)
        if (strcasecmp(pnl_engine_preset_label(a->engine, i), arg) == 0) {
            apply_preset(a, i);
            return;
        }
    pnl_app_say(a, 1, "preset '%s': no such preset (presets lists them)", arg);
}

static void list_presets(pnl_app *a)
{
    for (int i = 0; i < pnl_engine_preset_count(a->engine); ++i)
        pnl_app_say(a, 0, "%2d  %s%s", i + 1, pnl_engine_preset_label(a->engine, i),
                    i == a->preset ? "  (current)" : "");
}

static void do_action(pnl_app *a, const char *target, double value)
{
    if (strcmp(target, "panic") == 0)
        pnl_engine_panic(a->engine);
    else if (strcmp(target, "preset_next") == 0)
        apply_preset(a, a->preset + 1);
    else if (strcmp(target, "preset_previous") == 0)
        apply_preset(a, a->preset < 0 ? -1 : a->preset - 1);
    else if (strcmp(target, "play_stop") == 0) {
        pnl_status st;
        pnl_engine_status(a->engine, &st);
        st.rolling ? pnl_engine_stop(a->engine) : pnl_engine_play(a->engine);
    } else if (strcmp(target, "capture") == 0) {
        char path[64];
        snprintf(path, sizeof path, "parnassus-capture-%ld.mid", (long)time(NULL));
        pnl_app_write_capture(a, path);
    } else {
        float lo, hi;
        if (pnl_engine_control_range(a->engine, target, NULL, &lo, &hi))
            pnl_engine_set_control(a->engine, target, (float)(lo + value * (hi - lo)));
    }
}

void pnl_app_handle_bindings(pnl_app *a)
{
    pnl_midi_msg m;
    uint32_t size;
    while (pnh_ring_read(&a->to_main, &m, sizeof m, &size)) {
        pnl_binding_hit hit;
        int learned = -1;
        const int was_learning = a->bindings.learning;
        if (!pnl_bindings_handle(&a->bindings, m.bytes, m.size, &hit, &learned)) {
            if (was_learning && !a->bindings.learning)
                pnl_app_say(a, 1, "learn: the map is full");
            continue;
        }
        if (was_learning) {
            if (learned < 0)
                continue;
            pnl_app_say(a, 0, "learned: %s", a->bindings.binding[learned].target);
            pn_error_info info = {PN_OK, ""};
            if (a->map_path[0] && pnl_bindings_save(&a->bindings, a->map_path, &info) != PN_OK)
                pnl_app_say(a, 1, "%s", info.message);
            continue;
        }
        if (hit.is_program) /* Program Change selects the preset of that number */
            apply_preset(a, (int)hit.value);
        else
            do_action(a, hit.target, hit.value);
    }
}

void pnl_app_run_command(pnl_app *a, char *line)
{
    char *argv[8] = {0};
    int argc = 0;
    for (char *tok = strtok(line, " \t\r\n"); tok && argc < 8; tok = strtok(NULL, " \t\r\n"))
        argv[argc++] = tok;
    if (argc == 0)
        return;
    const char *cmd = argv[0];
    if (strcmp(cmd, "quit") == 0 || strcmp(cmd, "q") == 0)
        a->quit = 1;
    else if (strcmp(cmd, "set") == 0 && argc == 3)
        pnl_app_set_knob(a, argv[1], argv[2]);
    else if (strcmp(cmd, "play") == 0)
        pnl_engine_play(a->engine);
    else if (strcmp(cmd, "stop") == 0)
        pnl_engine_stop(a->engine);
    else if (strcmp(cmd, "panic") == 0)
        pnl_engine_panic(a->engine);
    else if (strcmp(cmd, "tempo") == 0 && argc == 2) {
        if (pnl_engine_set_tempo(a->engine, atof(argv[1])) != 0)
            pnl_app_say(a, 1, "tempo %s: expected 20..400 bpm", argv[1]);
    } else if (strcmp(cmd, "rules") == 0 && argc == 2) {
        if (access(argv[1], R_OK) != 0 || pnl_engine_load_rules(a->engine, argv[1]) != 0)
            pnl_app_say(a, 1, "rules %s: cannot read it", argv[1]);
    } else if (strcmp(cmd, "capture") == 0 && argc == 2)
        pnl_app_write_capture(a, argv[1]);
    else if (strcmp(cmd, "learn") == 0 && argc == 2) {
        if (pnl_bindings_learn(&a->bindings, argv[1]) == 0)
            pnl_app_say(a, 0, "learn: move a control for %s", argv[1]);
        else
            pnl_app_say(a, 1, "learn %s: not a target", argv[1]);
    } else if (strcmp(cmd, "preset") == 0 && argc >= 2) {
        /* a label may have spaces: the rest of the line */
        char label[256] = "";
        for (int i = 1; i < argc; ++i)
            snprintf(label + strlen(label), sizeof label - strlen(label), "%s%s", i > 1 ? " " : "",
                     argv[i]);
        preset_command(a, label);
    } else if (strcmp(cmd, "presets") == 0)
        list_presets(a);
    else if (strcmp(cmd, "next") == 0)
        apply_preset(a, a->preset + 1);
    else if (strcmp(cmd, "previous") == 0)
        apply_preset(a, a->preset < 0 ? -1 : a->preset - 1);
    else if (strcmp(cmd, "status") == 0) {
        if (!a->tui)
            pnl_app_print_status(a);
    } else
        pnl_app_say(
            a, 1,
            "unknown command '%s' (set SYMBOL VALUE, play, stop, tempo BPM, panic, rules FILE, "
            "preset N|LABEL, presets, next, previous, learn TARGET, capture FILE, status, quit)",
            cmd);
}

void pnl_app_poll_stdin(pnl_app *a, int *stdin_open)
{
    static char line[1024];
    static size_t used;
    fd_set fds;
    FD_ZERO(&fds);
    FD_SET(STDIN_FILENO, &fds);
    struct timeval tv = {0, 0};
    if (!*stdin_open || select(STDIN_FILENO + 1, &fds, NULL, NULL, &tv) <= 0)
        return;
    const ssize_t n = read(STDIN_FILENO, line + used, sizeof line - 1 - used);
    if (n <= 0) {
        *stdin_open = 0;
        return;
    }
    used += (size_t)n;
    line[used] = '\0';
    char *nl;
    while ((nl = strchr(line, '\n')) != NULL) {
        *nl = '\0';
        pnl_app_run_command(a, line);
        memmove(line, nl + 1, used - (size_t)(nl + 1 - line) + 1);
        used -= (size_t)(nl + 1 - line);
    }
    if (used == sizeof line - 1)
        used = 0; /* an overlong line is dropped */
}
