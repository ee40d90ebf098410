#!/usr/bin/python3
"""Measures how Parnassus harmonizes a melody played into it (docs/presets.md,
"Harmonizing a melody").

The soprano of every validation chorale is played into the plugin as a
keyboard would play it (`parnassus render --midi-in-file`, input mode 1: the
key held is the soprano), one sonority a quarter note (the chorales' pulse),
with the plugin's key set to the chorale's key and the rule set of its mode
(major: the built-in chorale-major, minor: presets/chorale-minor.json). The
same melodies are harmonized by the first-order Markov chain of `parnassus
baseline` learned from the training split (`--midi-in-file`, a state drawn
given the soprano at each quarter), and Bach's own harmonization is read at
the same quarter notes. Each is measured against the validation chorales of
the mode (`parnassus evaluate`, pooled over the chorales and the seeds), and
each step's chord is compared with Bach's under the same melody note.

usage: [PN_BUILD=DIR] [SEEDS="1 2 3"] [JOBS=2] [GRID=4|8|16] [RULES_MAJOR=FILE]
       [RULES_MINOR=FILE] scripts/measure-harmony.py CHORALES.json [OUTDIR]
GRID: sonorities a whole note (default 4: one a quarter note, the
chorales' pulse; 8: one an eighth). RULES_MAJOR, RULES_MINOR: other rule
sets for the plugin to play. CHAIN_GRID: the chain's --grid (default
events; 4: learned from the chorales' sonorities on the quarter notes).
Needs python3-mido (scripts/bootstrap.sh installs it). Prints a Markdown
table per mode; the MIDI files and JSON reports stay in OUTDIR
(default out/harmony).
"""
import concurrent.futures
import json
import os
import subprocess
import sys

import mido

TPQ = 480  # ticks per quarter of the files written here
SOPRANO = (57, 83)  # the soprano's range of the chorale sets, in C
SIXTEENTH = TPQ // 4
TONICS = {"C": 0, "C#": 1, "Db": 1, "D": 2, "D#": 3, "Eb": 3, "E": 4, "F": 5, "F#": 6,
          "Gb": 6, "G": 7, "G#": 8, "Ab": 8, "A": 9, "A#": 10, "Bb": 10, "B": 11}
ROWS = [("chord types (TV)", "tv", "chord"), ("soprano motion (TV)", "tv", "soprano_motion"),
        ("alto motion (TV)", "tv", "alto_motion"), ("tenor motion (TV)", "tv", "tenor_motion"),
        ("bass motion (TV)", "tv", "bass_motion"), ("root motion (TV)", "tv", "root_motion"),
        ("parallel 5ths/8ves (%)", "rate", "parallels"), ("hidden 5ths/8ves (%)", "rate", "hidden"),
        ("upper voices over an octave apart (%)", "rate", "wide"),
        ("voice crossing (%)", "rate", "crossing")]


def fail(message):
    sys.exit(f"measure-harmony: {message}")


def write_midi(path, steps, voices, grid):
    """Voices of a chorale (16th-grid steps) as one track each, every
    `grid` steps one note: held and repeated pitches merge, as in the
    chorale files, which do not tell them apart."""
    mid = mido.MidiFile(ticks_per_beat=TPQ)
    sampled = steps[::grid]
    for v in voices:
        track = mido.MidiTrack()
        mid.tracks.append(track)
        events, current, start = [], None, 0
        for t, step in enumerate(sampled + [[-1] * 4]):
            if step[v] != current:
                if current is not None and current >= 0:
                    events += [(start * grid * SIXTEENTH, 1, current),
                               (t * grid * SIXTEENTH, 0, current)]
                current, start = step[v], t
        events.sort(key=lambda e: (e[0], e[1]))  # note-offs first at a tick
        last = 0
        for tick, on, key in events:
            track.append(mido.Message("note_on" if on else "note_off", channel=v, note=key,
                                      velocity=80 if on else 0, time=tick - last))
            last = tick
    mid.save(path)


def run(cmd, log=None):
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        fail(f"{' '.join(cmd)}: {done.stderr.strip()}")
    if log:
        with open(log, "w") as f:
            f.write(done.stdout)
    return done.stdout


def chords_at_beats(path):
    """The chord (bass pitch class, pitch classes above it) sounding at the
    start of every quarter note of a MIDI file; None where nothing sounds."""
    mid = mido.MidiFile(path)
    sounding, changes = {}, []
    for track in mid.tracks:
        tick = 0
        for msg in track:
            tick += msg.time
            if msg.type in ("note_on", "note_off"):
                changes.append((tick, msg.type == "note_on" and msg.velocity > 0,
                                (msg.channel, msg.note)))
    changes.sort(key=lambda c: (c[0], c[1]))
    end = max((c[0] for c in changes), default=0)
    chords, i = [], 0
    for beat in range(0, end // mid.ticks_per_beat + 1):
        at = beat * mid.ticks_per_beat
        while i < len(changes) and changes[i][0] <= at:
            tick, on, note = changes[i]
            if on:
                sounding[note] = sounding.get(note, 0) + 1
            elif sounding.get(note):
                sounding[note] -= 1
                if sounding[note] == 0:
                    del sounding[note]
            i += 1
        keys = sorted(k for _, k in sounding)
        chords.append((keys[0] % 12, frozenset((k - keys[0]) % 12 for k in keys))
                      if keys else None)
    return chords


def harmony(chord):
    """The pitch classes of a chord (bass pitch class, classes above it)."""
    bass, above = chord
    return frozenset((bass + c) % 12 for c in above)


def main():
    if len(sys.argv) not in (2, 3):
        fail("usage: scripts/measure-harmony.py CHORALES.json [OUTDIR]")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    chorales = os.path.abspath(sys.argv[1])
    out = os.path.abspath(sys.argv[2] if len(sys.argv) == 3 else os.path.join(root, "out/harmony"))
    pn = os.path.join(root, os.environ.get("PN_BUILD", "build/release"), "apps/parnassus/parnassus")
    if not os.access(pn, os.X_OK):
        fail(f"{pn} is not built (cmake --build --preset release)")
    seeds = os.environ.get("SEEDS", "1 2 3").split()
    jobs = int(os.environ.get("JOBS", "2"))
    grid = int(os.environ.get("GRID", "4"))  # steps a whole note: 4 quarters, 8 eighths
    if grid not in (4, 8, 16):
        fail("GRID: 4, 8 or 16")
    os.makedirs(out, exist_ok=True)
    valid = json.load(open(chorales))["valid"]

    pieces = []  # (index, tonic, mode, octave)
    for i, steps in enumerate(valid):
        write_midi(f"{out}/bach-{i:02d}.mid", steps, range(4), 1)
        write_midi(f"{out}/soprano-{i:02d}.mid", steps, [0], 1)
        write_midi(f"{out}/bach-beats-{i:02d}.mid", steps, range(4), 16 // grid)
        key = json.loads(run([pn, "evaluate", f"{out}/bach-{i:02d}.mid", "--json"]))
        name, mode = key["inputs"][0]["key"].split()
        tonic = TONICS[name]
        # the register: the plugin moves the key played by the key's
        # nearest shift (and its octave port) into the rule set's key, and
        # by octaves into the soprano's range, the music back; the octave
        # that keeps the whole melody inside plays it where Bach wrote it
        shift = tonic if tonic <= 6 else tonic - 12
        melody = [step[0] for step in steps if step[0] >= 0]
        def outside(octave):
            return sum(not SOPRANO[0] <= p - shift - 12 * octave <= SOPRANO[1] for p in melody)
        octave = min((0, -1, 1), key=outside)
        pieces.append((i, tonic, mode, octave))

    def harmonize(job):
        (i, tonic, mode, octave), seed = job
        rules = os.environ.get(f"RULES_{mode.upper()}")
        rules = (["--rules", os.path.abspath(rules)] if rules
                 else [] if mode == "major" else ["--rules", os.path.join(root, "presets/chorale-minor.json")])
        tag = f"{mode}-{seed}-{i:02d}"
        run([pn, "render", *rules, "--midi-in-file", f"{out}/soprano-{i:02d}.mid",
             "--set", "input_mode=1", "--set", f"division={ {4: 2, 8: 3, 16: 4}[grid] }", "--set", f"key={tonic}",
             "--set", f"octave={octave}",
             "--set", "channel_per_voice=1", "--seed", seed, "-o", f"{out}/plugin-{tag}.mid"],
            f"{out}/plugin-{tag}.log")
        run([pn, "baseline", chorales, "--split", "train", "--mode", mode, "--division", str(grid),
             "--grid", os.environ.get("CHAIN_GRID", "events"),
             "--midi-in-file", f"{out}/soprano-{i:02d}.mid", "--key", str(tonic),
             "--octave", str(octave), "--seed", seed,
             "-o", f"{out}/markov-{tag}.mid"], f"{out}/markov-{tag}.log")

    work = [(p, s) for s in seeds for p in pieces]
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(harmonize, work))

    for mode in ("major", "minor"):
        mine = [p for p in pieces if p[2] == mode]
        if not mine:
            continue
        beats = [f"{out}/bach-beats-{p[0]:02d}.mid" for p in mine]
        # the yardstick: Bach's harmonizations of the same melodies, read
        # on the same beats (the shipped reference counts every 16th's
        # change, passing notes and all)
        reference = f"{out}/reference-beats-{mode}.json"
        run([pn, "evaluate", *beats, "--reference", "none", "--training", chorales, "--mode", mode,
             "--save", reference, "--name", f"bach-beats-{mode}"])
        kinds = {
            "plugin": [f"{out}/plugin-{mode}-{s}-{p[0]:02d}.mid" for s in seeds for p in mine],
            "Markov": [f"{out}/markov-{mode}-{s}-{p[0]:02d}.mid" for s in seeds for p in mine],
        }
        reports, agree = {}, {}
        for kind, files in kinds.items():
            reports[kind] = json.loads(run([pn, "evaluate", *files, "--reference", reference,
                                            "--json"]))
            with open(f"{out}/evaluate-{kind.lower()}-{mode}.json", "w") as f:
                json.dump(reports[kind], f, indent=1)
            counts = [0, 0, 0, 0]  # beats compared; same bass, same harmony, both
            for path in files:
                i = int(path[-6:-4])
                bach = chords_at_beats(f"{out}/bach-{i:02d}.mid")
                for ours, theirs in zip(chords_at_beats(path), bach):
                    if ours is None or theirs is None:
                        continue
                    counts[0] += 1
                    counts[1] += ours[0] == theirs[0]
                    counts[2] += harmony(ours) == harmony(theirs)
                    counts[3] += ours == theirs
            agree[kind] = [100.0 * c / counts[0] for c in counts[1:]] if counts[0] else None
        print(f"\n{mode}: the sopranos of {len(mine)} validation chorales, seeds {' '.join(seeds)}; "
              f"against Bach's harmonizations on the beats ({sum(1 for _ in beats)} chorales)\n")
        print("| statistic | " + " | ".join(kinds) + " | Bach |")
        print("|---|" + "---:|" * (len(kinds) + 1))
        for label, kind, name in ROWS:
            cells = []
            for k in kinds:
                r = reports[k]
                if kind == "tv":
                    v = r["distributions"][name]["tv"]
                    cells.append("-" if v is None else f"{v:.3f}")
                else:
                    v = r["rates"][name]["input"]
                    cells.append("-" if v is None else f"{100 * v:.2f}")
            ref = reports[next(iter(kinds))]["rates"] if kind == "rate" else None
            ref_cell = "0" if kind == "tv" else (
                "-" if ref[name]["reference"] is None else f"{100 * ref[name]['reference']:.2f}")
            print(f"| {label} | " + " | ".join(cells) + f" | {ref_cell} |")
        for n, what in enumerate(("bass (pitch class)", "harmony (pitch classes)",
                                  "chord (both)")):
            print(f"| the same {what} as Bach under the melody note (%) | "
                  + " | ".join(f"{agree[k][n]:.1f}" for k in kinds) + " | 100 |")
        print("| sonorities | " + " | ".join(str(reports[k]["input"]["sonorities"])
                                          for k in kinds)
              + f" | {reports['plugin']['reference']['sonorities']} |")


if __name__ == "__main__":
    main()
