"""People found by their face alone (detectors/face_people.py, issue 23) on real model output: a close-up
made from atd_kitchen (a fixed crop around the grey-shirt man's head, scaled up: tests/video_edits.py),
whose head box is known from atd_kitchen_heads.csv."""
from __future__ import annotations

import csv
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest

from detectors.face_people import face_only_people
from detectors.observation import FrameObservations
from pipeline.config import Config
from pipeline.perception import detector_for
from tests.video_edits import clip_frames, cropped

SIZE = (640, 360)
# the close-up: 533 x 300 px of the 1280 x 720 frame, the man's head (about 133 x 136 px) in its upper half
CROP_PX = (168.0, 0.0, 701.0, 300.0)
HEAD_TOLERANCE = 0.05  # the truth's head box is drawn by hand; a face detector's head box is its own


@pytest.fixture(scope="module")
def scenes(media_dir: Path) -> dict:
    """The first frame of atd_kitchen (RGB) wide and as a close-up, the close-up's true head box of the
    grey-shirt man (normalised), and the default detector's people and faces in each."""
    wide = clip_frames(media_dir / "atd_kitchen.mp4", 2.0, (1280, 720), seconds=0.1)[:1]
    box = tuple(v / s for v, s in zip(CROP_PX, (1280, 720, 1280, 720)))
    close = cropped(wide, box, SIZE)
    with open(media_dir / "atd_kitchen_heads.csv") as f:
        head = next([float(r[k]) for k in ("x1", "y1", "x2", "y2")] for r in csv.DictReader(f)
                    if r["frame"] == "0" and r["person"] == "0")
    x0, y0, x1, y1 = CROP_PX
    truth = np.array([(head[0] - x0) / (x1 - x0), (head[1] - y0) / (y1 - y0),
                      (head[2] - x0) / (x1 - x0), (head[3] - y0) / (y1 - y0)])
    out = {"truth": truth}
    with closing(detector_for(Config())) as detector:
        models = detector.pool.model_sets[0]
        for name, frames in (("wide", wide), ("close", close)):
            rgb = np.ascontiguousarray(frames[0][..., ::-1])  # clip_frames gives BGR
            out[name] = (rgb, detector.detect([rgb])[0], models.faces(rgb))
    return out


def test_a_face_close_up_without_a_body_is_one_person_with_its_head(scenes) -> None:
    """Where the pose model finds no one (as in film close-ups the tool missed), the face in the close-up
    becomes exactly one person: the face's head box on the man's head, and a body box below it that runs
    off the bottom of the frame."""
    image, _, faces = scenes["close"]
    assert faces, "the face detector finds the face in the close-up"
    people, used = face_only_people(faces, FrameObservations.empty(), image.shape[1], image.shape[0],
                                    Config().detector.face_people_max_body_heads)
    assert len(people) == 1 and len(used) == 1
    head, truth = people.head_xyxy[0], scenes["truth"]
    centre = (head[:2] + head[2:]) / 2
    assert np.abs(centre - (truth[:2] + truth[2:]) / 2).max() <= HEAD_TOLERANCE, (head, truth)
    body = people.xyxy[0]
    assert body[0] <= head[0] and body[2] >= head[2] and body[1] <= head[1] + 1e-6
    assert body[3] > 1.0  # extrapolated off-frame: the body is out of view


def test_no_face_only_person_on_a_body_or_where_the_body_is_in_view(scenes) -> None:
    """The pose model's own person in the close-up keeps the face (no second person on top of it), the
    detector returns one person there; in the wide shot the faces' bodies are in view, so no face alone
    makes a person even with no one else found."""
    image, people, faces = scenes["close"]
    assert len(people) == 1  # the default detector, face-only people included
    extra, _ = face_only_people(faces, people, image.shape[1], image.shape[0],
                                Config().detector.face_people_max_body_heads)
    assert len(extra) == 0
    image, people, faces = scenes["wide"]
    assert faces and len(people) == 2
    extra, _ = face_only_people(faces, FrameObservations.empty(), image.shape[1], image.shape[0],
                                Config().detector.face_people_max_body_heads)
    assert len(extra) == 0
