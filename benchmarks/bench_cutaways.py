"""Identity across a cutaway (issue 23): every shared clip, 1.5 s of another clip, the clip again.

    python -m benchmarks.bench_cutaways [--clips NAME ...] [--light plain|other|mirror|both] [--media DIR] [--work DIR]
    python -m benchmarks.bench_cutaways --every-pair [--media DIR] [--work DIR]

Each edit is written at 640x360, 10 fps (tests/video_edits.py) and perceived with the default settings
(one worker for all). The cutaway is 1.5 s of tvhid_handshake_0001 (atd_kitchen for the handshake clip
itself); "other light" replays the clip darker and warmer (tests/test_identity_edits.py ``_other_light``);
"mirror" replays it mirrored left to right, where two people facing each other stand about where the other
stood: the same people, so keeping an id is right, but a replay box carrying the id of the person whose place
it took is a wrong join (the replay's boxes are mirrored back before they are matched).

Who is who in the replay is found by position, not by id (tests/video_edits.py
``identity_across_cutaway``): the replay shows the very frames of the first piece, so a person of the
first piece is *seen in the replay* when a replay box, at a sampled instant of the clip, overlaps
(IoU >= 0.3) that person's box interpolated at the same instant (within the person's own sightings, half
a sampling step beyond either end). A person counts only if seen in both pieces: at 2 fps the replay's
samples fall at other instants of the clip than the first piece's, so someone sampled only in the clip's
last 0.5 s may never be sampled again (nothing to keep). Per edit:

- kept: people of the first piece whose replay boxes carry their own id (majority over the matched boxes);
- wrong: replay boxes matched to one person but carrying the id of another first-piece person seen in
  the same frame as them (a wrong join, worse than a lost id);
- split: the same with a first-piece person never seen beside them: one person whom the first piece had
  split into two ids (within a shot), or a wrong join; judge by eye;
- shared: cutaway ids that also name someone in the first piece or the replay.

``--every-pair`` looks only for wrong joins, where they are likeliest: every ordered pair (X, Y) of the shared
clips with two or more people, cut X / 1.5 s of Y / X's last 1.5 s, so that a cutaway of two or more people
follows a shot of two or more, often framed alike (two people left and right at similar sizes). Nobody of
Y is anybody of X: any id in both Y's piece and X's is a wrong join.
"""
from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
import time
from collections import Counter
from contextlib import closing
from pathlib import Path

import numpy as np

CLIPS = ("atd_kitchen.mp4", "tvhid_highfive_0018.avi", "tvhid_highfive_0005.avi", "tvhid_handshake_0001.avi",
         "deepoint_pointing_long.mov", "deepoint_pointing_folding.mp4", "deepoint_lamp1.mp4",
         "deepoint_pointing_up.mov", "mmaction2_hug_lab.mp4", "yakhyo_classroom_group.mp4",
         "pyscenedetect_archive_two_women.mp4")
EDIT_SIZE = (640, 360)
EDIT_FPS = 10.0
CUTAWAY_SECONDS = 1.5


def _other_light(frames: list[np.ndarray]) -> list[np.ndarray]:
    from tests.test_identity_edits import _other_light as other_light

    return other_light(frames)


def build_edit(media: Path, clip: str, light: str, path: Path) -> list[float]:
    """Write clip + cutaway + clip (replayed under ``light``) to ``path``; returns the pieces' starts."""
    from tests.video_edits import clip_frames, write_edit

    away_name = "atd_kitchen.mp4" if clip == "tvhid_handshake_0001.avi" else "tvhid_handshake_0001.avi"
    frames = clip_frames(media / clip, EDIT_FPS, EDIT_SIZE)
    away = clip_frames(media / away_name, EDIT_FPS, EDIT_SIZE, seconds=CUTAWAY_SECONDS)
    if light == "mirror":
        replay = [np.ascontiguousarray(f[:, ::-1]) for f in frames]
    else:
        replay = frames if light == "plain" else _other_light(frames)
    return write_edit(path, [frames, away, replay], EDIT_FPS)


GROUP_CLIPS = ("atd_kitchen.mp4", "tvhid_highfive_0018.avi", "tvhid_highfive_0005.avi", "tvhid_handshake_0001.avi",
               "mmaction2_hug_lab.mp4", "pyscenedetect_archive_two_women.mp4", "yakhyo_classroom_group.mp4")


def every_pair(media: Path, work: Path, worker) -> int:
    """Wrong joins over every ordered pair of the group clips (module doc); returns the ids shared."""
    from pipeline.clip import ClipSpec
    from tests.video_edits import clip_frames, identity_across_cutaway, write_edit

    frames = {clip: clip_frames(media / clip, EDIT_FPS, EDIT_SIZE) for clip in GROUP_CLIPS}
    cutaway = int(CUTAWAY_SECONDS * EDIT_FPS)
    shared_total = 0
    for first, away in itertools.permutations(GROUP_CLIPS, 2):
        path = work / f"{Path(first).stem}__{Path(away).stem}.mp4"
        starts = write_edit(path, [frames[first], frames[away][:cutaway], frames[first][-cutaway:]], EDIT_FPS)
        s = identity_across_cutaway(worker(ClipSpec(path.stem, str(path))).tracks.to_pylist(), starts)
        shared_total += len(s["shared"])
        print(f"{path.stem:64s} ids {s['first']} | {s['cutaway']} | {s['replay']} shared {s['shared']}", flush=True)
    n = len(GROUP_CLIPS) * (len(GROUP_CLIPS) - 1)
    print(f"every pair: {n} edits, cutaway ids shared with the clip around them {shared_total}")
    return shared_total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--clips", nargs="*", default=list(CLIPS), help="shared clip file names (default: all)")
    parser.add_argument("--light", choices=("plain", "other", "mirror", "both"), default="both",
                        help="replay as is, under other light, mirrored left to right, or both plain and other light (default)")
    parser.add_argument("--media", type=Path, default=None, help="shared media folder (default: found as the tests do)")
    parser.add_argument("--work", type=Path, default=None, help="folder for the edited videos (default: a temporary one)")
    parser.add_argument("--every-pair", action="store_true",
                        help="count wrong joins over every ordered pair of the clips with two or more people (module doc)")
    args = parser.parse_args(argv)

    from pipeline.clip import ClipSpec
    from pipeline.config import Config
    from pipeline.perception import PerceptionWorker
    from tests.shared_media import find_media_dir
    from tests.video_edits import identity_across_cutaway, pieces_of

    media = args.media or find_media_dir()
    lights = ("plain", "other") if args.light == "both" else (args.light,)
    totals = {light: Counter() for light in lights}
    with tempfile.TemporaryDirectory() as scratch, closing(PerceptionWorker(Config())) as worker:
        work = args.work or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        if args.every_pair:
            every_pair(media, work, worker)
            return 0
        for k, clip in enumerate(args.clips):
            for light in lights:
                path = work / f"cutaway_{k}_{light}.mp4"
                starts = build_edit(media, clip, light, path)
                started = time.perf_counter()
                result = worker(ClipSpec(f"cutaway_{k}_{light}", str(path)))
                rows = result.tracks.to_pylist()
                if light == "mirror":  # the replay's boxes back into the first piece's picture
                    rows = [{**r, "bbox": [1 - r["bbox"][2], r["bbox"][1], 1 - r["bbox"][0], r["bbox"][3]]}
                            if piece == 2 else r for r, piece in zip(rows, pieces_of(rows, starts))]
                s = identity_across_cutaway(rows, starts)
                total = totals[light]
                total.update(first=len(s["first"]), seen=len(s["seen"]), kept=len(s["kept"]), wrong=len(s["wrong"]), split=len(s["split"]),
                             shared=len(s["shared"]), described=int(result.timings.get("faces_described", 0)))
                print(f"{clip:36s} {light:5s} shots {s['shots']} first {s['first']} seen again {s['seen']} "
                      f"kept {len(s['kept'])}/{len(s['seen'])} wrong {s['wrong']} split {s['split']} unseen {s['unseen']} "
                      f"cutaway {s['cutaway']} shared {s['shared']} "
                      f"faces described {int(result.timings.get('faces_described', 0))} "
                      f"({time.perf_counter() - started:.1f} s)", flush=True)
    for light, t in totals.items():
        print(f"{light}: kept {t['kept']}/{t['seen']} of the people seen in both pieces ({t['first']} in the first), "
              f"wrong joins {t['wrong']}, ids of a split person {t['split']}, cutaway ids shared {t['shared']}, faces described {t['described']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
