/* Drawing the terminal interface (pnl_tui_draw): the view on one screen,
 * every line cut to the window, parts dropped when the window is short. */
#include "live_tui_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <wchar.h>

enum {
    BEATS_PER_BAR = 4,
    TEXT_SIZE = 512, /* one formatted screen line */
};

/* ------------------------------------------------------------------------ */
/* Drawing: text cut to the window */

typedef struct screen_size {
    int rows, cols;
    int utf8;
} screen_size;

/* The columns a character takes; '?' stands for what cannot be shown. */
static int char_columns(const char *p, size_t left, mbstate_t *st, size_t *bytes)
{
    wchar_t wc;
    const size_t n = mbrtowc(&wc, p, left, st);
    if (n == (size_t)-1 || n == (size_t)-2 || n == 0) {
        memset(st, 0, sizeof *st);
        *bytes = 1;
        return -1;
    }
    *bytes = n;
    const int w = wcwidth(wc);
    return w < 0 ? -1 : w;
}

static int text_columns(const char *s)
{
    mbstate_t st;
    memset(&st, 0, sizeof st);
    int cols = 0;
    for (size_t left = strlen(s), bytes; left > 0; s += bytes, left -= bytes) {
        const int w = char_columns(s, left, &st, &bytes);
        cols += w < 0 ? 1 : w;
    }
    return cols;
}

/* Draws up to `cols` columns of s at the cursor; returns the columns drawn. */
static int add_columns(const char *s, int cols)
{
    mbstate_t st;
    memset(&st, 0, sizeof st);
    int used = 0;
    for (size_t left = strlen(s), bytes; left > 0; s += bytes, left -= bytes) {
        const int w = char_columns(s, left, &st, &bytes);
        if (used + (w < 0 ? 1 : w) > cols)
            break;
        if (w < 0)
            addch('?');
        else
            addnstr(s, (int)bytes);
        used += w < 0 ? 1 : w;
    }
    return used;
}

/* The columns free from x on row y, within `want` and the window (the
 * bottom-right cell stays empty: writing it would move the cursor out). */
static int room(const screen_size *sz, int y, int x, int want)
{
    if (y < 0 || y >= sz->rows || x < 0 || x >= sz->cols)
        return 0;
    const int free_cols = sz->cols - x - (y == sz->rows - 1 ? 1 : 0);
    return want < free_cols ? want : free_cols;
}

/* Draws s at (y, x) in at most `want` columns; a cut text ends with an
 * ellipsis. Returns the columns drawn. */
static int put_text(const screen_size *sz, int y, int x, int want, const char *s)
{
    const int cols = room(sz, y, x, want);
    if (cols <= 0 || !s)
        return 0;
    move(y, x);
    if (text_columns(s) <= cols)
        return add_columns(s, cols);
    const int used = add_columns(s, cols - 1);
    addstr(sz->utf8 ? "…" : "~");
    return used + 1;
}

static int PNL_PRINTF(5, 6)
    put_format(const screen_size *sz, int y, int x, int want, const char *fmt, ...)
{
    char text[TEXT_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    return put_text(sz, y, x, want, text);
}

/* Paints `want` columns of row y from x with blanks in attr. */
static void fill(const screen_size *sz, int y, int x, int want, attr_t attr)
{
    const int cols = room(sz, y, x, want);
    if (cols > 0)
        mvhline(y, x, ' ' | attr, cols);
}

static const char *or_default(const char *s, const char *otherwise)
{
    return s && *s ? s : otherwise;
}

/* ------------------------------------------------------------------------ */
/* Drawing: the parts of the screen */

static void note_name(int note, char *out, size_t cap)
{
    static const char *const names[12] = {"C",  "C#", "D",  "D#", "E",  "F",
                                          "F#", "G",  "G#", "A",  "A#", "B"};
    if (note < 0 || note > 127)
        snprintf(out, cap, "-");
    else
        snprintf(out, cap, "%s%d", names[note % 12], note / 12 - 1);
}

/* The sounding notes, soprano first: "G4 D4 B3 G2". */
static void sonority_text(const pnl_status *st, char *out, size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    for (int voice = 0; voice < PNL_VOICES && used < cap; ++voice) {
        char name[8];
        note_name(st->sonority[voice], name, sizeof name);
        const int n = snprintf(out + used, cap - used, "%s%s", voice ? " " : "", name);
        used += n > 0 ? (size_t)n : 0;
    }
}

static void draw_title(const screen_size *sz, const pnl_status *st)
{
    const double beat = st->beat >= 0 && st->beat < 1e12 ? st->beat : 0;
    const long whole = (long)floor(beat);
    attron(A_REVERSE | A_BOLD);
    fill(sz, 0, 0, sz->cols, A_REVERSE | A_BOLD);
    put_format(sz, 0, 0, sz->cols, " parnassus-live   %s   %.1f bpm   bar %ld:%ld",
               st->rolling ? (sz->utf8 ? "▶ playing" : "> playing")
                           : (sz->utf8 ? "■ stopped" : "# stopped"),
               st->bpm, whole / BEATS_PER_BAR + 1, whole % BEATS_PER_BAR + 1);
    attroff(A_REVERSE | A_BOLD);
}

/* Rows 1..3: what sounds, the rules kept, the timing and load. */
static void draw_music(const screen_size *sz, const pnl_tui_view *v, int rows)
{
    const pnl_status *st = &v->status;
    char sonority[64];
    sonority_text(st, sonority, sizeof sonority);
    if (rows > 0) {
        int x = put_text(sz, 1, 0, sz->cols, " sonority ");
        attron(A_BOLD);
        x += put_text(sz, 1, x, sz->cols, sonority);
        attroff(A_BOLD);
        put_format(sz, 1, x, sz->cols, "   solve %.0f ms   late steps %.0f", (double)st->solve_ms,
                   (double)st->late_steps);
    }
    if (rows > 1)
        put_format(sz, 2, 0, sz->cols, " rules kept %.0f: %s", (double)st->rules_selected,
                   or_default(v->rules_kept, "-"));
    if (rows > 2)
        put_format(
            sz, 3, 0, sz->cols,
            " audio load %.0f%% (max %.0f%%)   notes %llu   dropped MIDI %llu   level %.0f dB",
            100 * st->load, 100 * st->load_max, (unsigned long long)st->notes_out,
            (unsigned long long)st->midi_dropped,
            st->level > 1e-6 ? 20 * log10(st->level) : -120.0);
}

/* "[#####-----]": where value lies in min..max. */
static void draw_bar(const screen_size *sz, int y, int x, int width, const pnl_tui_knob *k)
{
    const int inner = width - 2;
    if (inner < 1)
        return;
    const double span = (double)k->max - k->min;
    const double where = span > 0 ? ((double)k->value - k->min) / span : 0;
    const int filled = pnl_tui_clamp((int)lround(fmin(fmax(where, 0), 1) * inner), 0, inner);
    char bar[TEXT_SIZE];
    int n = 0;
    bar[n++] = '[';
    for (int i = 0; i < inner && n < TEXT_SIZE - 2; ++i)
        bar[n++] = i < filled ? '#' : '-';
    bar[n++] = ']';
    bar[n] = '\0';
    put_text(sz, y, x, width, bar);
}

enum {
    KNOB_LABEL_MIN = 8,
    KNOB_LABEL_MAX = 24,
    KNOB_VALUE_COLS = 9, /* the value right-aligned, a blank before it */
    KNOB_BAR_MIN = 12,
    KNOB_BAR_MAX = 40,
    KNOB_MIN_COLS = 38, /* narrower columns than this: one column only */
};

static void draw_knob(const screen_size *sz, int y, int x, int width, const pnl_tui_knob *k)
{
    const int label_cols = pnl_tui_clamp(width - 2 - KNOB_VALUE_COLS - 1 - KNOB_BAR_MIN,
                                         KNOB_LABEL_MIN, KNOB_LABEL_MAX);
    put_text(sz, y, x + 2, label_cols, or_default(k->label, or_default(k->symbol, "?")));
    const int value_x = x + 2 + label_cols;
    put_format(sz, y, value_x, x + width - value_x, "%*g", KNOB_VALUE_COLS, (double)k->value);
    const int bar_x = value_x + KNOB_VALUE_COLS + 1;
    draw_bar(sz, y, bar_x, pnl_tui_clamp(x + width - bar_x, 0, KNOB_BAR_MAX), k);
}

static void draw_learn_item(const screen_size *sz, int y, int x, int width, const pnl_tui_view *v,
                            int item)
{
    if (item < pnl_tui_knob_count(v))
        put_format(sz, y, x + 2, width - 2, "%s (%s)",
                   or_default(v->knobs[item].label, pnl_tui_learn_item_name(v, item)),
                   pnl_tui_learn_item_name(v, item));
    else
        put_format(sz, y, x + 2, width - 2, "%s (action)", pnl_tui_learn_item_name(v, item));
}

/* What the list shows: the knobs, or the learn menu's items. */
static int list_items(const pnl_tui_view *v, const pnl_tui_state *s)
{
    return s->learn_menu ? pnl_tui_learn_item_count(v) : pnl_tui_knob_count(v);
}

/* The knobs (or, learning, what to learn) from row top, in one or two
 * columns, scrolled so the highlighted item shows. */
static void draw_list(const screen_size *sz, const pnl_tui_view *v, const pnl_tui_state *s, int top,
                      int rows)
{
    if (rows <= 0)
        return;
    const int menu = s->learn_menu;
    attron(A_BOLD);
    put_text(sz, top, 0, sz->cols,
             menu ? (sz->utf8 ? " learn: choose a target (↑↓, Enter learns, Esc cancels)"
                              : " learn: choose a target (up/down, Enter learns, Esc cancels)")
                  : " knobs");
    attroff(A_BOLD);
    const int items = list_items(v, s);
    const int current = menu ? s->learn_item : s->selected;
    const int list_rows = rows - 1;
    if (list_rows <= 0 || items == 0)
        return;
    const int column_count = items > list_rows && sz->cols >= 2 * KNOB_MIN_COLS ? 2 : 1;
    const int width = sz->cols / column_count;
    const int shown = list_rows * column_count;
    const int first = current >= shown ? current - shown + 1 : 0;
    for (int i = first; i < items && i < first + shown; ++i) {
        const int y = top + 1 + (i - first) % list_rows;
        const int x = (i - first) / list_rows * width;
        const attr_t attr = i == current ? A_REVERSE : A_NORMAL;
        attron(attr);
        fill(sz, y, x, width - 1, attr);
        put_text(sz, y, x, 2, i == current ? ">" : " ");
        if (menu)
            draw_learn_item(sz, y, x, width - 1, v, i);
        else
            draw_knob(sz, y, x, width - 1, &v->knobs[i]);
        attroff(attr);
    }
}

static void draw_devices(const screen_size *sz, const pnl_tui_view *v, int top, int rows)
{
    const char *const names[3] = {" MIDI in   ", " MIDI out  ", " audio     "};
    const char *const values[3] = {or_default(v->midi_inputs, "none"),
                                   or_default(v->midi_outputs, "none"), or_default(v->audio, "-")};
    for (int i = 0; i < rows && i < 3; ++i) {
        const int x = put_text(sz, top + i, 0, sz->cols, names[i]);
        put_text(sz, top + i, x, sz->cols, values[i]);
    }
}

/* "CC 74 ch 3 → log2_lambda_w" (channels counted from 1, as on devices). */
static void binding_text(const pnl_binding *b, int utf8, char *out, size_t cap)
{
    char source[32], channel[16];
    switch (b->kind) {
    case PNL_SOURCE_CC:
        snprintf(source, sizeof source, "CC %d", b->number);
        break;
    case PNL_SOURCE_NOTE:
        snprintf(source, sizeof source, "note %d", b->number);
        break;
    case PNL_SOURCE_PITCH_BEND:
        snprintf(source, sizeof source, "bend");
        break;
    case PNL_SOURCE_PROGRAM:
        snprintf(source, sizeof source, "program");
        break;
    default:
        snprintf(source, sizeof source, "?");
        break;
    }
    if (b->channel < 0)
        snprintf(channel, sizeof channel, "any");
    else
        snprintf(channel, sizeof channel, "%d", b->channel + 1);
    snprintf(out, cap, "%s ch %s %s %.*s", source, channel, utf8 ? "→" : "->", PNL_TARGET_MAX,
             b->target);
}

/* The bindings, as many per row as fit, after a header saying whether a
 * control is being learned. */
static void draw_bindings(const screen_size *sz, const pnl_tui_view *v, int top, int rows)
{
    if (rows <= 0)
        return;
    const pnl_bindings *b = v->bindings;
    const int count = b ? pnl_tui_clamp(b->count, 0, PNL_BINDINGS_MAX) : 0;
    attron(A_BOLD);
    const int x = put_format(sz, top, 0, sz->cols, " bindings %d   ", count);
    attroff(A_BOLD);
    if (b && b->learning)
        put_format(sz, top, x, sz->cols, "learning: move a control for %.*s", PNL_TARGET_MAX,
                   b->learn_target);
    else
        put_text(sz, top, x, sz->cols, "learning off (L or m to learn)");
    const int gap = 3, indent = 1;
    int y = top + 1, col = indent;
    for (int i = 0; i < count && y < top + rows; ++i) {
        char text[96];
        binding_text(&b->binding[i], sz->utf8, text, sizeof text);
        const int w = text_columns(text);
        if (col > indent && col + w > sz->cols) {
            ++y;
            col = indent;
            if (y >= top + rows)
                break;
        }
        col += put_text(sz, y, col, sz->cols, text) + gap;
    }
}

/* The key help: the long one when it fits, else the short one (cut). */
static const char *help_text(const screen_size *sz, int learn_menu)
{
    static const char *const texts[2][2][2] = {
        /* [learn menu][utf8][short] */
        {{" space play/stop  j/k select  </> move  s/S style  a/A selection  -/+ tempo  "
          "[/] preset  p panic  c capture  L learn  q quit",
          " spc play jk<> knob sS sty aA sel -+ bpm [] preset p panic c cap L learn q quit"},
         {" space play/stop  ↑↓ select  ←→ move  s/S style  a/A selection  -/+ tempo  "
          "[/] preset  p panic  c capture  L learn  q quit",
          " spc play ↑↓←→ knob sS sty aA sel -+ bpm [] preset p panic c cap L learn q quit"}},
        {{" up/down choose  Enter learn  Esc cancel  space play/stop  p panic  q quit",
          " j/k choose  Enter learn  Esc cancel"},
         {" ↑↓ choose  Enter learn  Esc cancel  space play/stop  p panic  q quit",
          " ↑↓ choose  Enter learn  Esc cancel"}},
    };
    const char *const *pair = texts[learn_menu ? 1 : 0][sz->utf8 ? 1 : 0];
    return text_columns(pair[0]) < sz->cols ? pair[0] : pair[1];
}

static void draw_footer(const screen_size *sz, const pnl_tui_view *v, const pnl_tui_state *s,
                        int with_message)
{
    const int help_row = sz->rows - 1;
    if (with_message && v->message && *v->message) {
        attron(A_BOLD);
        put_format(sz, help_row - 1, 0, sz->cols, " %s", v->message);
        attroff(A_BOLD);
    }
    const char *help = help_text(sz, s->learn_menu);
    attron(A_REVERSE);
    fill(sz, help_row, 0, sz->cols, A_REVERSE);
    put_text(sz, help_row, 0, sz->cols, help);
    attroff(A_REVERSE);
}

enum {
    MUSIC_ROWS = 3,   /* below the title */
    DEVICE_ROWS = 3,  /* MIDI in, MIDI out, audio */
    LIST_MIN_ROWS = 3 /* a header and two knobs before the devices and bindings */
};

/* The list's rows, its header included: as many as its items need (in two
 * columns when one would not fit and the window is wide enough), leaving
 * room for the devices and the bindings' header when the window allows. */
static int list_rows_for(const screen_size *sz, int middle, int items)
{
    int most = middle - DEVICE_ROWS - 1;
    most = most < LIST_MIN_ROWS ? LIST_MIN_ROWS : most;
    most = most > middle ? middle : most;
    const int column_count = 1 + items > most && sz->cols >= 2 * KNOB_MIN_COLS ? 2 : 1;
    const int need = 1 + (items + column_count - 1) / column_count;
    return pnl_tui_clamp(need, 0, most > 0 ? most : 0);
}

/* Rows from the top: title, music, the knob list, devices, bindings; the
 * help line last with the message above it. A short window drops the
 * bindings, then the devices, then knobs (the highlighted one stays). */
void pnl_tui_draw(pnl_tui *t, const pnl_tui_view *v)
{
    if (!t || !v)
        return;
    set_term(t->screen);
    screen_size sz = {0, 0, t->utf8};
    getmaxyx(stdscr, sz.rows, sz.cols);
    erase();
    if (sz.rows > 0 && sz.cols > 0) {
        const int footer = sz.rows >= 6 ? 2 : sz.rows >= 3 ? 1 : 0;
        const int header = pnl_tui_clamp(sz.rows - footer, 0, 1 + MUSIC_ROWS);
        const int middle = sz.rows - footer - header;
        const int list_rows = list_rows_for(&sz, middle, list_items(v, &t->state));
        const int device_rows = pnl_tui_clamp(middle - list_rows, 0, DEVICE_ROWS);
        const int top = header;
        pnl_tui_keep_in_range(&t->state, v);
        if (header > 0)
            draw_title(&sz, &v->status);
        draw_music(&sz, v, header - 1);
        draw_list(&sz, v, &t->state, top, list_rows);
        draw_devices(&sz, v, top + list_rows, device_rows);
        draw_bindings(&sz, v, top + list_rows + device_rows, middle - list_rows - device_rows);
        if (footer > 0)
            draw_footer(&sz, v, &t->state, footer > 1);
    }
    refresh();
}
