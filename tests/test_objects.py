"""Objects (--object-weights): an Ultralytics detection model run alongside people, its detections
tracked into object ids, written to the objects table and offered to gaze / pointing as targets.

The plumbing runs on an untrained model (yolo11n.yaml builds one offline; its low-score boxes are
still boxes); the target logic on synthetic observations with a known answer."""
from __future__ import annotations

from contextlib import closing

import numpy as np
import pyarrow as pa
import pytest

from detectors.objects import FrameObjects, ObjectDetector, object_classes
from detectors.observation import FrameObservations
from pipeline import schema
from pipeline.clip import ClipSpec
from pipeline.config import Config
from pipeline.perception import PerceptionWorker, associate_targets, build_objects_table, holder_of
from tracking.config import TrackingConfig
from tracking.objects import assign_object_ids

# an untrained head scores every anchor about 1e-5 (Ultralytics' prior bias): keep them all
UNTRAINED = {"object_weights": "yolo11n.yaml", "object_conf": 1e-6}


def _objects(*rows) -> FrameObjects:
    """FrameObjects from (label, x1, y1, x2, y2, conf) rows."""
    return FrameObjects(np.array([r[1:5] for r in rows], np.float32).reshape(-1, 4),
                        np.array([r[5] for r in rows], np.float32), np.array([r[0] for r in rows], dtype=object))


def test_object_ids_follow_each_object_and_never_mix_classes() -> None:
    # a cup moving right and a bottle standing still, the cup passing over the bottle's place;
    # a second shot starts at frame 4: ids there are new
    frames = [
        _objects(("cup", 0.10 + 0.05 * k, 0.5, 0.20 + 0.05 * k, 0.6, 0.9), ("bottle", 0.30, 0.5, 0.40, 0.6, 0.8))
        for k in range(4)
    ] + [_objects(("cup", 0.6, 0.2, 0.7, 0.3, 0.9))] * 2
    ids = assign_object_ids(frames, np.array([0, 0, 0, 0, 1, 1]), TrackingConfig(), fps=2.0, min_conf=0.35)
    cup = [int(i[0]) for i in ids]
    bottle = [int(i[1]) for i in ids[:4]]
    assert cup[:4] == [0] * 4 and bottle == [1] * 4  # numbered by first appearance, left to right
    assert cup[4] == cup[5] == 2  # new shot, new id
    with pytest.raises(ValueError, match="2 frames but 3 shot ids"):
        assign_object_ids(frames[:2], np.zeros(3), TrackingConfig(), fps=2.0, min_conf=0.35)


def test_object_ids_hold_through_a_whip_pan_with_the_camera_moves_taken_out() -> None:
    """Two lamps 0.2 apart while the camera pans 0.2 of the frame between samples: each lamp lands where the
    other stood. With the camera's moves each keeps its id; on box overlap alone the ids hop from lamp to lamp."""
    pan = [0.0, 0.2, 0.4]
    frames = [_objects(("lamp", 0.5 - p, 0.4, 0.55 - p, 0.5, 0.9), ("lamp", 0.7 - p, 0.4, 0.75 - p, 0.5, 0.9)) for p in pan]
    moves = np.array([[-p, 0.0] for p in pan])
    shots = np.zeros(3, np.int64)
    with_moves = assign_object_ids(frames, shots, TrackingConfig(), fps=2.0, min_conf=0.35, camera_moves=moves)
    assert [i.tolist() for i in with_moves] == [[0, 1]] * 3
    plain = assign_object_ids(frames, shots, TrackingConfig(), fps=2.0, min_conf=0.35)
    assert [i.tolist() for i in plain] != [[0, 1]] * 3


def test_gaze_and_pointing_can_target_an_object() -> None:
    # person 0 at the left looks and points to the right, straight at a laptop; person 1 is far below
    people = FrameObservations(
        xyxy=[[0.05, 0.2, 0.25, 0.9], [0.6, 0.8, 0.7, 1.0]], confidence=[0.9, 0.9],
        head_xyxy=[[0.1, 0.2, 0.2, 0.35], [0.62, 0.8, 0.68, 0.86]],
        gaze_origin=[[0.15, 0.27], [0.65, 0.83]], gaze_dir=[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
        gaze_conf=[0.9, 0.9], gaze_source=["face_mesh", "face_mesh"],
        point_origin=[[0.3, 0.5], [np.nan, np.nan]], point_dir=[[1.0, 0.0], [np.nan, np.nan]],
        point_conf=[0.9, 0.0], tracker_id=[0, 1],
    )
    laptop = _objects(("laptop", 0.7, 0.15, 0.85, 0.6, 0.8))
    config = Config()
    with_objects = associate_targets([people], 1.0, config, objects=([laptop], [np.array([0], np.int32)]))[0]
    assert with_objects.gaze_type[0] == "object" and with_objects.gaze_id[0] == 0
    assert with_objects.point_type[0] == "object" and with_objects.point_id[0] == 0
    without = associate_targets([people], 1.0, config)[0]
    assert without.gaze_type[0] != "object" and without.point_type[0] != "object"
    # an object no track claimed (id -1) is not a target
    unclaimed = associate_targets([people], 1.0, config, objects=([laptop], [np.array([-1], np.int32)]))[0]
    assert unclaimed.gaze_type[0] != "object"


def test_objects_table_rows_and_holder() -> None:
    people = FrameObservations(xyxy=[[0.1, 0.1, 0.4, 0.9]], confidence=[0.9],
                               hand_xyxy=[[[0.30, 0.50, 0.36, 0.56], [np.nan] * 4]], tracker_id=[7])
    cup = _objects(("cup", 0.31, 0.49, 0.38, 0.58, 0.7), ("tv", 0.6, 0.1, 0.9, 0.4, 0.6))
    assert holder_of(cup.xyxy[0], people) == 7 and holder_of(cup.xyxy[1], people) is None
    table = build_objects_table("v", [cup], [np.array([1, -1], np.int32)], [people], np.array([0.5]))
    assert table.schema.equals(schema.OBJECTS_SCHEMA)
    assert table.to_pylist() == [{"video_id": "v", "frame_idx": 0, "t": 0.5, "object_id": 1, "label": "cup",
                                  "bbox": pytest.approx([0.31, 0.49, 0.38, 0.58]), "conf": pytest.approx(0.7),
                                  "holder_id": 7}]


@pytest.mark.slow
def test_untrained_object_model_fills_the_objects_table(media_dir) -> None:
    config = Config().replace(sampling={"fps": 4.0}, detector=UNTRAINED)
    detector = ObjectDetector(config.detector)
    # an untrained model has 80 numbered classes; a COCO model's "person" is left to the pose model
    assert len(detector.names) == 80 and len(detector.classes) == 80
    with closing(PerceptionWorker(config)) as worker:
        result = worker(ClipSpec(video_id="handshake", uri=str(media_dir / "tvhid_handshake_0001.avi")))
    objects = result.objects
    assert isinstance(objects, pa.Table) and objects.schema.equals(schema.OBJECTS_SCHEMA)
    assert objects.num_rows > 0  # an untrained head still scores every anchor a little
    rows = objects.to_pandas()
    assert set(rows.video_id) == {"handshake"} and "person" not in set(rows.label)
    assert rows.frame_idx.between(0, result.n_frames - 1).all()
    assert rows.groupby("object_id").label.nunique().max() == 1  # an id keeps its class
    assert not rows.duplicated(["frame_idx", "object_id"]).any()
    boxes = np.stack(rows.bbox.to_numpy())
    assert ((boxes >= 0) & (boxes <= 1)).all() and (boxes[:, 2:] >= boxes[:, :2]).all()
    assert sorted(rows.object_id.unique()) == list(range(rows.object_id.nunique()))
    assert result.timings["objects"] > 0
    # off by default
    with closing(PerceptionWorker(Config().replace(detector={"backend": "mediapipe"}))) as worker:
        assert worker.object_detector is None


def test_people_are_left_to_the_pose_model() -> None:
    assert object_classes(["person", "bicycle", "cup"]) == [1, 2]
    assert object_classes(["0", "1"]) == [0, 1]


def test_missing_object_weights_is_a_one_line_error(tmp_path) -> None:
    config = Config().replace(detector={"object_weights": str(tmp_path / "coco.pt")})
    with pytest.raises(ValueError, match=r"coco.pt: object weights file not found \(socialtrace never downloads"):
        ObjectDetector(config.detector)
