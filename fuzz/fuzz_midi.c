/* libFuzzer target for the MIDI file reader (apps/midi).
 *
 * Any input must either fail with a parse error whose message names the
 * input, or give k voices of steps that are rests or MIDI keys. Each input
 * is read twice: as 4 voices on the default grid and as 1 voice on a grid of
 * 1..8 ticks (picked by the input size). Anything else aborts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "midi_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int condition)
{
    if (!condition)
        abort();
}

static void read_once(const uint8_t *data, size_t size, int k, int grid)
{
    int *steps = NULL, n = 0;
    pn_midi_read_meta meta;
    pn_error_info info;
    pn_error err = pn_midi_read_voices_mem("input", data, size, k, grid, &steps, &n, &meta, &info);
    if (err != PN_OK) {
        require(steps == NULL);
        require(err == PN_ERR_PARSE || err == PN_ERR_NOMEM);
        require(strncmp(info.message, "input:", 6) == 0);
        return;
    }
    require(steps != NULL);
    require(n >= 1 && n <= PN_MIDI_MAX_STEPS);
    require(meta.grid_ticks >= 1 && meta.division >= 1);
    require(grid == 0 || meta.grid_ticks == grid);
    for (size_t i = 0; i < (size_t)k * (size_t)n; ++i)
        require(steps[i] == PN_MIDI_REST || (steps[i] >= 0 && steps[i] <= 127));
    free(steps);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    read_once(data, size, 4, 0);
    read_once(data, size, 1, 1 + (int)(size % 8));
    return 0;
}
