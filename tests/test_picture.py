"""The picture inside black bars or a blurred fill (pipeline/picture.py): found on synthetic frames with known bars
and fills and on a shared clip posted in a wider frame with a blurred fill, left alone where dark or soft footage
is no bar or fill (every shared clip), mapped between picture and frame coordinates both ways, and cropped and turned
for a rotated video. A real clip given bars, run end to end, is tests/test_camera_invariance.py's."""
from __future__ import annotations

import av
import cv2
import numpy as np
import pyarrow as pa
import pytest

from pipeline import schema
from pipeline.picture import (OBJECT_COORDINATES, TRACK_COORDINATES, coded_window, displayed_moves, find_picture,
                              picture_aspect, picture_window, to_frame, to_picture, window_of)


def _scene(height: int = 120, width: int = 200, seed: int = 0) -> np.ndarray:
    """Textured footage: luma 40-230 everywhere."""
    return np.random.RandomState(seed).randint(40, 230, (height, width)).astype(np.uint8)


def test_letterbox_and_pillarbox_bars_are_found_to_the_line():
    frames = [_scene(seed=k) for k in range(3)]
    for frame in frames:
        frame[:15] = 16  # video black in limited range, as a decoder may give it
        frame[-15:] = 0
    assert picture_window(frames) == pytest.approx((0.0, 15 / 120, 1.0, 105 / 120))
    frames = [_scene(seed=k) for k in range(3)]
    for frame in frames:
        frame[:, :25] = 3
        frame[:, -24:] = 5
    assert picture_window(frames) == pytest.approx((25 / 200, 0.0, 176 / 200, 1.0))


def test_dark_footage_is_no_bar():
    """A dark side of a room is at one edge only; a night scene dark in one probed frame is not dark in all of
    them; the darkest real rows of the shared clips read 28-51; a video dark almost throughout keeps its frame."""
    one_side = [_scene(seed=k) for k in range(3)]
    for frame in one_side:
        frame[:30] = 2
    assert picture_window(one_side) is None
    lopsided = [_scene(seed=k) for k in range(3)]
    for frame in lopsided:
        frame[:40], frame[-3:] = 0, 0  # 3 lines at the bottom: no pair for 40 at the top
    assert picture_window(lopsided) is None
    passing = [_scene(seed=k) for k in range(3)]
    passing[1][:20], passing[1][-20:] = 0, 0  # black in one frame only (a fade)
    assert picture_window(passing) is None
    dim = [np.full((120, 200), 30, np.uint8) for _ in range(3)]
    for frame in dim:
        frame[:20], frame[-20:] = 0, 0
    assert picture_window(dim) == pytest.approx((0.0, 20 / 120, 1.0, 100 / 120))  # dim is not black
    night = [np.zeros((120, 200), np.uint8) for _ in range(3)]
    for frame in night:
        frame[55:65] = 200  # one bright band: the picture would keep less than MIN_PICTURE_SHARE
    assert picture_window(night) is None
    assert picture_window([]) is None


def _lettered(frame: np.ndarray, rows: slice, columns: slice = slice(40, 160)) -> np.ndarray:
    """``frame`` with white lettering (a subtitle) burned into ``rows``."""
    frame = frame.copy()
    frame[rows, columns] = np.where(np.random.RandomState(7).rand(rows.stop - rows.start, columns.stop - columns.start)
                                    > 0.5, 235, 0)
    return frame


def test_subtitles_burned_into_a_letterbox_bar_do_not_hide_it():
    """A letterboxed film with subtitles burned into its lower bar: a bar row may hold lettering where its ends stay
    dark and the whole row is dark in some frame that is no black frame, or the upper bar is clean in every frame;
    the bars are centred then. Dark ends alone (a vignette, a black frame among the probes) are no bar, nor are
    bars of different depths; lettering in both bars in every probe leaves only the lines outside it."""
    films = [_scene(seed=k) for k in range(7)]
    for frame in films:
        frame[:15], frame[-15:] = 0, 0
    subtitled = [_lettered(f, slice(108, 114)) if k % 2 == 0 else f for k, f in enumerate(films)]
    assert picture_window(subtitled) == pytest.approx((0.0, 15 / 120, 1.0, 105 / 120))
    pillarboxed = [np.pad(f, ((0, 0), (30, 30))) for f in subtitled]  # and inside pillar bars
    assert picture_window(pillarboxed) == pytest.approx((30 / 260, 15 / 120, 230 / 260, 105 / 120))
    always = [_lettered(f, slice(108, 114)) for f in films]  # a subtitle on screen in every probe
    assert picture_window(always) == pytest.approx((0.0, 15 / 120, 1.0, 105 / 120))
    # lettering in both bars in every probe: only the lines outside it, dark in every probe, are bars
    assert picture_window([_lettered(f, slice(5, 11)) for f in always]) == pytest.approx((0.0, 5 / 120, 1.0, 114 / 120))
    vignetted = [_scene(seed=k) for k in range(7)]
    for frame in vignetted:
        frame[:15, :25], frame[:15, -25:], frame[-15:, :25], frame[-15:, -25:] = 0, 0, 0, 0
    assert picture_window(vignetted) is None
    assert picture_window(vignetted + [np.zeros((120, 200), np.uint8)]) is None
    lopsided = [f.copy() for f in subtitled]
    for frame in lopsided:
        frame[:25] = 0  # a top bar deeper than the bottom one by more than the offset allowed
    assert picture_window(lopsided) is None


def _footage(height: int = 120, width: int = 200, seed: int = 0) -> np.ndarray:
    """Textured footage that is smooth from pixel to pixel, as camera footage is (``_scene``'s pixel noise steps
    as much between neighbours as anywhere): a random field blurred 3 pixels, luma 40-230."""
    field = cv2.GaussianBlur(np.random.RandomState(seed).rand(height, width).astype(np.float32), (0, 0), 3.0)
    return (40 + 190 * (field - field.min()) / (field.max() - field.min())).astype(np.uint8)


def _filled(picture: np.ndarray, margin: int, blur: float = 12.0, axis: int = 1) -> np.ndarray:
    """``picture`` between two margins of ``margin`` lines (columns for axis 1, rows for axis 0) showing it
    enlarged and blurred, as a phone video is posted in a wider frame."""
    if axis == 0:
        return _filled(picture.T, margin, blur).T.copy()
    height, width = picture.shape
    enlarged = cv2.resize(picture, (width + 2 * margin, height * (width + 2 * margin) // width))
    top = (enlarged.shape[0] - height) // 2
    frame = cv2.GaussianBlur(enlarged[top:top + height], (0, 0), blur)
    frame[:, margin:margin + width] = picture
    return frame


def test_a_blurred_or_flat_fill_is_found_to_the_line():
    frames = [_filled(_footage(width=120, seed=k), 40) for k in range(3)]
    assert picture_window(frames) == pytest.approx((40 / 200, 0.0, 160 / 200, 1.0))
    flat = [_footage(width=120, seed=k) for k in range(3)]
    flat = [np.pad(f, ((0, 0), (40, 40)), constant_values=128) for f in flat]  # grey pillars, not black
    assert picture_window(flat) == pytest.approx((40 / 200, 0.0, 160 / 200, 1.0))
    rows = [_filled(_footage(height=80, width=200, seed=k), 20, axis=0) for k in range(3)]
    assert picture_window(rows) == pytest.approx((0.0, 20 / 120, 1.0, 100 / 120))
    # a fill inside letterbox bars
    boxed = [np.pad(f, ((15, 15), (0, 0))) for f in frames]
    assert picture_window(boxed) == pytest.approx((40 / 200, 15 / 150, 160 / 200, 135 / 150))


def test_soft_footage_is_no_fill():
    """A soft side of a scene is at one edge only, or fades into the picture over many pixels (a background out
    of focus), or is soft in one probed frame only; a fill is centred; a flat frame tells nothing."""
    one_side = [_footage(seed=k) for k in range(3)]
    for frame in one_side:
        frame[:, :40] = cv2.GaussianBlur(frame, (0, 0), 12)[:, :40]
    assert picture_window(one_side) is None
    fading = []
    for k in range(3):
        sharp = _footage(seed=k).astype(np.float32)
        blurred = cv2.GaussianBlur(sharp, (0, 0), 12)
        # softer and softer towards both sides: no line where the picture starts
        weight = np.clip(np.abs(np.arange(200) - 99.5) / 60 - 0.3, 0, 1)[None, :]
        fading.append((weight * blurred + (1 - weight) * sharp).astype(np.uint8))
    assert picture_window(fading) is None
    off_centre = [np.pad(_footage(width=120, seed=k), ((0, 0), (55, 25)), constant_values=128) for k in range(3)]
    assert picture_window(off_centre) is None
    passing = [_footage(seed=k) for k in range(3)]
    passing[1] = _filled(_footage(width=120, seed=1), 40)
    assert picture_window(passing) is None
    assert picture_window([np.full((120, 200), 90, np.uint8)] * 3) is None


def _card(height: int = 120, width: int = 200) -> np.ndarray:
    """A title card shown full frame: flat grey with lettering in the middle (no picture, no fill edge)."""
    card = np.full((height, width), 60, np.uint8)
    card[height // 2 - 8:height // 2 + 8, width // 2 - 50:width // 2 + 50] = _scene(16, 100) // 2 + 120
    return card


def test_one_title_or_end_card_among_the_probes_does_not_hide_a_fill():
    """Of 7 probed frames one may lack the fill's edge (a title or end card); with fewer than 4 that tell (not
    flat), every one must have it; the margins' softness is asked of every probe still."""
    filled = [_filled(_footage(width=120, seed=k), 40) for k in range(6)]
    assert picture_window([_card()] + filled) == pytest.approx((40 / 200, 0.0, 160 / 200, 1.0))
    assert picture_window(filled[:5] + [_card(), filled[5]]) == pytest.approx((40 / 200, 0.0, 160 / 200, 1.0))
    assert picture_window([_card()] + filled[:2]) is None
    assert picture_window([_card(), _card()] + filled[:5]) is None  # two cards: the edge is in 5 of 7 only
    passing = [_footage(seed=k) for k in range(6)] + [filled[0]]  # a fill in one frame of seven
    assert picture_window(passing) is None


@pytest.mark.parametrize("shown", ["half the time", "all the time"])
def test_a_letterboxed_clip_with_burned_in_subtitles_is_cropped_back(media_dir, tmp_path, shown):
    """tvhid_highfive_0018 letterboxed (bars of a fifth of its height above and below) with two subtitles burned into
    the lower bar, each shown for half a second with half a second between, or one after the other with no pause:
    the picture is found to the pixel."""
    from tests.camera_edits import edit_clip

    frame_number = iter(range(10_000))
    bar = 82  # a fifth of the clip's 416 rows, even

    def letterbox_with_subtitles(image: np.ndarray) -> np.ndarray:
        k = next(frame_number)
        height, width = image.shape[:2]
        frame = np.zeros((height + 2 * bar, width, 3), np.uint8)
        frame[bar:bar + height] = image
        if shown == "all the time" or (k // 12) % 2 == 0:
            text = "I never said she stole my money" if (k // 24) % 2 == 0 else "Where were you last night?"
            (text_width, text_height), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, 0.8, 2)
            cv2.putText(frame, text, ((width - text_width) // 2, height + bar + (bar + text_height) // 2),
                        cv2.FONT_HERSHEY_SIMPLEX, 0.8, (235, 235, 235), 2)
        return frame

    subtitled = edit_clip(media_dir / "tvhid_highfive_0018.avi", tmp_path / "subtitled.mp4", letterbox_with_subtitles,
                          lambda w, h: (w, h + 2 * bar))
    assert find_picture(str(subtitled)) == pytest.approx((0.0, bar / 580, 1.0, (bar + 416) / 580))


@pytest.mark.parametrize("opening", ["title card", "fade from black"])
def test_a_posted_clip_opening_on_a_title_card_or_a_fade_is_cropped_back(media_dir, tmp_path, opening):
    """The blurred-fill edit of tvhid_highfive_0018 whose first half second is a full-frame title card, or fades in
    from black: the encoder's one keyframe is that opening frame, so every frame probed is decoded on to its own
    instant (a keyframe-only probe saw the opening frame seven times and found no fill)."""
    from tests.camera_edits import FILL, edit_clip, make_edit

    filled = make_edit(FILL, media_dir / "tvhid_highfive_0018.avi", tmp_path)
    frame_number = iter(range(10_000))

    def open_with(image: np.ndarray) -> np.ndarray:
        k = next(frame_number)
        if k >= 12:
            return image
        if opening == "fade from black":
            return (image * (k / 12)).astype(np.uint8)
        card = np.full_like(image, 40)
        cv2.putText(card, "HOSPITAL", (image.shape[1] // 2 - 90, image.shape[0] // 2), cv2.FONT_HERSHEY_SIMPLEX, 1.2,
                    (255, 255, 255), 3)
        return card

    opened = edit_clip(filled, tmp_path / "opened.mp4", open_with)
    with av.open(str(opened)) as container:
        width = container.streams.video[0].codec_context.width
        keyframes = sum(packet.is_keyframe for packet in container.demux(video=0) if packet.size)
    assert keyframes < 7  # fewer keyframes than probes: the case this guards
    margin = (width - 544) // 2
    assert find_picture(str(opened)) == pytest.approx((margin / width, 0.0, (width - margin) / width, 1.0))


def test_a_shared_clip_posted_with_a_blurred_fill_is_cropped_back_and_no_shared_clip_has_one(media_dir, tmp_path):
    """The blurred-fill edit (tests/camera_edits.py FILL) of tvhid_highfive_0018 gives back the original's place in
    the frame to the pixel; no shared clip as it is has bars or a fill."""
    from tests.camera_edits import FILL, make_edit

    filled = make_edit(FILL, media_dir / "tvhid_highfive_0018.avi", tmp_path)
    with av.open(str(filled)) as container:
        width = container.streams.video[0].codec_context.width
    margin = (width - 544) // 2  # the clip is 544 pixels wide
    assert find_picture(str(filled)) == pytest.approx((margin / width, 0.0, (width - margin) / width, 1.0))
    clips = sorted(p for p in media_dir.iterdir() if p.suffix.lower() in (".mp4", ".avi", ".mov"))
    assert len(clips) >= 10
    assert {p.name: find_picture(str(p)) for p in clips} == {p.name: None for p in clips}


@pytest.mark.parametrize("portrait", [True, False], ids=["portrait in landscape", "landscape in portrait"])
def test_a_lossy_posted_phone_video_is_cropped_back_to_the_pixel(media_dir, tmp_path, portrait):
    """tvhid_highfive_0018 posted as phone videos are, and encoded lossily (x264 crf 32: the encoder rings beside
    the fill's edge and smears it over two lines): its 9:16 middle in a 640x360 frame beside a darkened blur, or the
    whole clip in a 360x640 frame between blurred bands. The picture is found where it was put, to the pixel."""
    from tests.camera_edits import edit_clip

    frame_size = (640, 360) if portrait else (360, 640)

    def post(image: np.ndarray) -> np.ndarray:
        height, width = image.shape[:2]
        if portrait:
            kept = int(height * 9 / 16)
            picture = image[:, (width - kept) // 2:(width - kept) // 2 + kept]
            shown = cv2.resize(picture, (kept * 360 // height // 2 * 2, 360), interpolation=cv2.INTER_AREA)
            cover = cv2.resize(picture, (640, picture.shape[0] * 640 // kept))
            top = (cover.shape[0] - 360) // 2
            frame = (cv2.GaussianBlur(cover[top:top + 360], (0, 0), 20) * 0.7).astype(np.uint8)
            left = (640 - shown.shape[1]) // 2
            frame[:, left:left + shown.shape[1]] = shown
        else:
            shown = cv2.resize(image, (360, height * 360 // width // 2 * 2), interpolation=cv2.INTER_AREA)
            cover = cv2.resize(image, (width * 640 // height, 640))
            left = (cover.shape[1] - 360) // 2
            frame = np.ascontiguousarray(cv2.GaussianBlur(cover[:, left:left + 360], (0, 0), 25))
            top = (640 - shown.shape[0]) // 2
            frame[top:top + shown.shape[0]] = shown
        return frame

    posted = edit_clip(media_dir / "tvhid_highfive_0018.avi", tmp_path / "posted.mp4", post, lambda w, h: frame_size,
                       crf=32)
    # the clip is 544x416: 234 of 416 rows kept 9:16 make a 202x360 picture; 544x416 at 360 wide is 360x274
    expected = (219 / 640, 0.0, 421 / 640, 1.0) if portrait else (0.0, 183 / 640, 1.0, 457 / 640)
    assert find_picture(str(posted)) == pytest.approx(expected)


def test_coordinates_map_between_picture_and_frame_both_ways():
    window = (0.1, 0.125, 0.9, 0.875)
    tracks = schema.table_from_rows([{
        "video_id": "v", "frame_idx": 0, "native_frame_idx": 0, "t": 0.0, "shot_id": 0, "shot_start_t": 0.0,
        "person_id": 0, "det_conf": 0.9, "bbox": [0.0, 0.0, 1.0, 1.0], "head_bbox": [0.5, 0.2, 0.6, 0.4],
        "keypoints": [0.5, 0.5, 0.8] * 17, "gaze_origin": [0.25, 0.5], "gaze_dir": [0.0, 0.6, -0.8],
        "gaze_conf": 0.5, "gaze_point": [1.0, 0.0], "gaze_target_type": "elsewhere", "pointing": False,
        "point_dir": [0.6, 0.8], "point_conf": 0.0, "hand_bboxes": [[0.0, 0.0, 0.5, 0.5]], "hand_open": [0.0],
    }], schema.TRACKS_SCHEMA)
    framed = to_frame(tracks, window, TRACK_COORDINATES).to_pylist()[0]
    assert framed["bbox"] == pytest.approx([0.1, 0.125, 0.9, 0.875])
    assert framed["head_bbox"] == pytest.approx([0.5, 0.275, 0.58, 0.425])
    assert framed["keypoints"][:3] == pytest.approx([0.5, 0.5, 0.8])  # the score is no coordinate
    assert framed["gaze_origin"] == pytest.approx([0.3, 0.5]) and framed["gaze_point"] == pytest.approx([0.9, 0.125])
    assert framed["hand_bboxes"][0] == pytest.approx([0.1, 0.125, 0.5, 0.5])
    # directions are not coordinates: the camera frame's and the pixels' own
    assert framed["gaze_dir"] == pytest.approx([0.0, 0.6, -0.8]) and framed["point_dir"] == pytest.approx([0.6, 0.8])
    back = to_picture(to_frame(tracks, window, TRACK_COORDINATES), window, TRACK_COORDINATES).to_pylist()[0]
    for name in TRACK_COORDINATES:
        original = tracks.to_pylist()[0][name]
        assert (back[name] is None) if original is None else np.allclose(np.ravel(back[name]), np.ravel(original),
                                                                        atol=1e-6), name
    assert to_frame(tracks, None, TRACK_COORDINATES) is tracks
    objects = pa.table({"bbox": pa.array([[0.5, 0.5, 1.0, 1.0]], pa.list_(pa.float32(), 4))})
    assert to_frame(objects, window, OBJECT_COORDINATES).column("bbox").to_pylist()[0] == pytest.approx([0.5, 0.5, 0.9, 0.875])
    assert picture_aspect(1600, 900, window) == pytest.approx(1280 / 675)
    assert picture_aspect(1600, 900, None) == pytest.approx(16 / 9)
    assert window_of({"picture": [0.1, 0.125, 0.9, 0.875]}) == window and window_of({"picture": None}) is None


def test_an_unreadable_file_has_no_bars(tmp_path):
    broken = tmp_path / "broken.mp4"
    broken.write_bytes(b"not a video")
    assert find_picture(str(broken)) is None  # perception names the file and the reason, not this probe


def test_the_stored_frame_of_a_rotated_video_is_cropped_and_its_moves_turned_as_the_display_shows_them():
    """A phone's portrait video is stored on its side: the picture found on displayed frames is cropped from the
    stored frame where rotate_image puts it back, and a move of the stored content is the displayed one."""
    from pipeline.video import rotate_image

    stored = np.zeros((60, 100), np.uint8)
    stored[10:50, 20:70] = 1  # the picture, in the stored frame
    for rotation in (0, 90, 180, 270):
        shown = rotate_image(stored[..., None], rotation)[..., 0]
        rows, columns = np.nonzero(shown)
        height, width = shown.shape
        window = (columns.min() / width, rows.min() / height, (columns.max() + 1) / width, (rows.max() + 1) / height)
        assert coded_window(window, rotation) == pytest.approx((0.2, 10 / 60, 0.7, 50 / 60)), rotation
        # a marker moved right by 5 px in the stored frame moves where rotate_image shows it
        before, after = np.zeros((60, 100), np.uint8), np.zeros((60, 100), np.uint8)
        before[30, 40], after[30, 45] = 1, 1
        (r0, c0), (r1, c1) = [np.argwhere(rotate_image(m[..., None], rotation)[..., 0])[0] for m in (before, after)]
        moved = displayed_moves(np.array([[5 / 100, 0.0]]), rotation)[0]
        assert moved == pytest.approx([(c1 - c0) / width, (r1 - r0) / height]), rotation
    assert coded_window(None, 90) is None
