#!/usr/bin/env bash
# parnassus render ends every note the plugin starts, in every sync mode:
# after the last bar it runs one more block with the transport stopped and
# the plugin disabled (lv2:enabled), so a plugin that follows only the
# host's tempo (sync 1) or its own clock (sync 2), and plays on through a
# stop, still ends its notes there. Each take is read back with an
# independent reader (Python's mido): every note-on has its note-off on the
# same channel and key, none sounds at the end, and no note starts at or
# after the end. The takes (1 to 64 bars of 4/4) end on a step, inside a
# sounding note (dotted divisions) and with notes tied up to the end
# (gate 100 %).
#
# usage: test_render_notes.sh PARNASSUS BUNDLE_DIR [BARS:DIVISION:GATE ...]
# (division: the value of the "division" port; default: seven takes)
# Exits 77 (skipped) when mido is not installed.
set -euo pipefail

if [[ $# -lt 2 ]]; then
    echo "usage: $0 PARNASSUS BUNDLE_DIR [BARS:DIVISION:GATE ...]" >&2
    exit 2
fi
PN=$1
BUNDLE=$2
shift 2
takes=("$@")
[[ ${#takes[@]} -gt 0 ]] || takes=(1:3:90 2:3:90 3:9:100 5:6:90 8:5:100 13:0:90 64:0:100)
PY=/usr/bin/python3
if ! "$PY" -c 'import mido' 2>/dev/null; then
    echo "SKIP: python3 mido is not installed (Debian: python3-mido)"
    exit 77
fi
source "$(dirname "$0")/cli_lib.sh" render-notes

files=()
for sync in 0 1 2; do
    for take in "${takes[@]}"; do
        IFS=: read -r bars division gate <<<"$take"
        f=$TMP/sync$sync-$bars-$division-$gate.mid
        run_pn 0 "render sync=$sync $take" render --bundle "$BUNDLE" --bars "$bars" --seed 7 \
            --set sync="$sync" --set division="$division" --set gate="$gate" -o "$f"
        # the render's own count, from the events the plugin sent
        ons=$(sed -n 's/^notes played: \([0-9]*\) (\([0-9]*\) note-offs.*/\1 \2/p' "$OUT")
        read -r on off <<<"$ons"
        check "sync=$sync $take: the plugin sent as many note-offs as note-ons ($ons)" \
            test -n "$on" -a "$on" = "$off"
        files+=("$f" "$bars")
    done
done

# FILE BARS pairs: 4/4 at 960 ticks a quarter, so the take ends at tick
# BARS * 3840.
if "$PY" - "${files[@]}" <<'PYEOF'; then ok; else not_ok "the MIDI files (above)"; fi
import sys
import mido

args = sys.argv[1:]
bad = 0
for path, bars in zip(args[0::2], args[1::2]):
    end = int(bars) * 4 * 960
    mid = mido.MidiFile(path)
    sounding = {}
    ons = offs = 0
    problems = []
    for track in mid.tracks:
        tick = 0
        for msg in track:
            tick += msg.time
            if msg.type not in ("note_on", "note_off"):
                continue
            key = (msg.channel, msg.note)
            if msg.type == "note_on" and msg.velocity > 0:
                ons += 1
                if tick >= end:
                    problems.append(f"note-on {key} at tick {tick}, the end is {end}")
                if key in sounding:
                    problems.append(f"note-on {key} at tick {tick} while it sounds")
                sounding[key] = tick
            else:
                offs += 1
                if sounding.pop(key, None) is None:
                    problems.append(f"note-off {key} at tick {tick} of no sounding note")
                if tick > end:
                    problems.append(f"note-off {key} at tick {tick}, after the end {end}")
    for key, tick in sounding.items():
        problems.append(f"note {key} from tick {tick} never ends")
    if ons == 0:
        problems.append("no notes")
    name = path.rsplit("/", 1)[-1]
    print(f"{name}: {ons} note-ons, {offs} note-offs")
    for p in problems[:5]:
        print(f"FAIL: {name}: {p}", file=sys.stderr)
    bad += bool(problems)
sys.exit(1 if bad else 0)
PYEOF
cli_finish
