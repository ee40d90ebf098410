#!/usr/bin/env python3
"""Checks the capture files of parnassus-live with an independent reader,
Python's mido.

Runs the C test (test_live_capture) with PN_LIVE_CAPTURE_OUT set to a
fresh directory, so that its test_export leaves capture.mid (two bars of
4/4 on the five default tracks) and capture-7-8.mid (two bars of 7/8 on
two named tracks) there, then reads both with mido and checks the format,
the division, the track names, the tempo, the time signature, that every
note-on has its note-off, the notes and other messages with their times in
ticks, where every track ends and the length in seconds. The expected
values restate the scenarios of tests/test_live_capture.c.

usage: test_live_capture_mido.py TEST_LIVE_CAPTURE_BINARY
Exits 77 (skipped) when mido is not installed.
"""
import os
import subprocess
import sys
import tempfile

SKIP = 77

try:
    import mido
except ImportError:
    print("SKIP: python3 mido is not installed (Debian: python3-mido)")
    sys.exit(SKIP)

DIVISION = 960

# capture.mid: written at beat 13.5 at 100 bpm; the window is beats 8..16.
MAIN = {
    "file": "capture.mid",
    "tempo": 600000,
    "meter": (4, 4),
    "end": 5280,
    "names": ["soprano", "alto", "tenor", "bass", "input"],
    # per track: notes (channel, key, on tick, off tick, velocity)
    "notes": [
        [(0, 60, 0, 960, 90)],  # held across the window's start
        [(1, 64, 2160, 5280, 90)],  # still sounding at now
        [],  # only a stray note-off, dropped
        [(3, 48, 0, 2880, 70)],  # ended by a velocity-0 note-on
        [(0, 72, 3840, 4320, 100)],
    ],
    # per track: other channel messages (type, channel, tick, data)
    "others": [
        [],
        [],
        [("program_change", 2, 4800, 5)],
        [],
        [("control_change", 0, 960, (64, 127))],
    ],
}

# capture-7-8.mid: written at beat 8 at 90 bpm; the window is beats 3.5..10.5.
SEVEN_EIGHT = {
    "file": "capture-7-8.mid",
    "tempo": 666667,
    "meter": (7, 8),
    "end": 4320,
    "names": ["left hand", "right hand"],
    "notes": [
        [(0, 60, 0, 480, 64), (0, 62, 3360, 4320, 72)],
        [(1, 67, 1680, 4320, 70)],
    ],
    "others": [[], []],
}


def fail(message):
    raise AssertionError(message)


def expect(got, wanted, what):
    if got != wanted:
        fail("%s: got %r, expected %r" % (what, got, wanted))


def with_ticks(track):
    """The messages of a track with their absolute times in ticks."""
    tick = 0
    for message in track:
        tick += message.time
        yield tick, message


def check_meter_track(track, spec, path):
    tempos = [(t, m.tempo) for t, m in with_ticks(track) if m.type == "set_tempo"]
    expect(tempos, [(0, spec["tempo"])], "%s: tempo" % path)
    meters = [
        (t, (m.numerator, m.denominator))
        for t, m in with_ticks(track)
        if m.type == "time_signature"
    ]
    expect(meters, [(0, spec["meter"])], "%s: time signature" % path)
    for _, m in with_ticks(track):
        if not m.is_meta:
            fail("%s: a channel message in the tempo track: %r" % (path, m))


def notes_and_others(track, what):
    """Pairs note-ons with note-offs; every note-on must find its note-off
    (0x8n) and every note-off a sounding note."""
    sounding, notes, others = {}, [], []
    for tick, m in with_ticks(track):
        if m.type == "note_on":
            if m.velocity == 0:
                fail("%s: velocity-0 note-on at %d (the writer uses 0x8n)" % (what, tick))
            key = (m.channel, m.note)
            if key in sounding:
                fail("%s: note %r struck again at %d while sounding" % (what, key, tick))
            sounding[key] = (tick, m.velocity)
        elif m.type == "note_off":
            key = (m.channel, m.note)
            if key not in sounding:
                fail("%s: note-off of %r at %d without a note-on" % (what, key, tick))
            on, velocity = sounding.pop(key)
            notes.append((m.channel, m.note, on, tick, velocity))
        elif m.type == "program_change":
            others.append((m.type, m.channel, tick, m.program))
        elif m.type == "control_change":
            others.append((m.type, m.channel, tick, (m.control, m.value)))
        elif not m.is_meta:
            others.append((m.type, m.channel, tick, None))
    if sounding:
        fail("%s: notes never ended: %r" % (what, sorted(sounding)))
    return sorted(notes, key=lambda n: (n[2], n[1])), others


def check_file(directory, spec):
    path = os.path.join(directory, spec["file"])
    mid = mido.MidiFile(path)
    expect(mid.type, 1, "%s: format" % path)
    expect(mid.ticks_per_beat, DIVISION, "%s: division" % path)
    expect(len(mid.tracks), 1 + len(spec["names"]), "%s: tracks" % path)
    check_meter_track(mid.tracks[0], spec, path)

    for i, track in enumerate(mid.tracks):
        what = "%s, track %d" % (path, i)
        expect(track[-1].type, "end_of_track", "%s: last message" % what)
        expect(sum(m.time for m in track), spec["end"], "%s: end tick" % what)
        if i == 0:
            continue
        names = [m.name for m in track if m.type == "track_name"]
        expect(names, [spec["names"][i - 1]], "%s: name" % what)
        notes, others = notes_and_others(track, what)
        expect(notes, spec["notes"][i - 1], "%s: notes" % what)
        expect(others, spec["others"][i - 1], "%s: other messages" % what)

    seconds = spec["end"] / DIVISION * spec["tempo"] / 1e6
    if abs(mid.length - seconds) > 1e-6:
        fail("%s: length %.6f s, expected %.6f s" % (path, mid.length, seconds))
    count = sum(len(n) for n in spec["notes"])
    print("ok: %s: %d tracks, %d notes, %.4f s" % (spec["file"], len(mid.tracks), count, mid.length))


def main():
    if len(sys.argv) != 2:
        print("usage: %s TEST_LIVE_CAPTURE_BINARY" % sys.argv[0], file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="pn-test-capture-mido.") as directory:
        env = dict(os.environ, PN_LIVE_CAPTURE_OUT=directory)
        try:
            run = subprocess.run(
                [sys.argv[1]], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
            )
        except OSError as error:
            print("cannot run %s: %s" % (sys.argv[1], error), file=sys.stderr)
            return 1
        if run.returncode != 0:
            print(run.stdout)
            print("test_live_capture failed (exit %d)" % run.returncode, file=sys.stderr)
            return 1
        try:
            check_file(directory, MAIN)
            check_file(directory, SEVEN_EIGHT)
        except (AssertionError, OSError, EOFError, ValueError) as error:
            print("FAIL: %s" % error, file=sys.stderr)
            return 1
    print("test_live_capture_mido: all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
