"""socialtrace events: social events from one video's tracks (DESIGN.md §5).

Entry point: ``detect_events(tracks, config.events, objects=None, fps=None, clip_duration=None) -> pa.Table``
with exactly ``pipeline.schema.EVENTS_SCHEMA``, sorted by (start_time, event_type, persons_involved),
event_id 0..n-1.

Time conventions: start_time is the time of the first sampled frame of the event; end_time is one sampling
step (1 / fps) after its last frame, so an event seen in n frames lasts n / fps seconds - but never after
the next sampled frame nor after ``clip_duration`` (the probed length of the video): every event lies
inside [0, clip duration], and an event that the clip's end cuts below its type's minimum duration is
dropped. start_frame / end_frame are the tracks' frame_idx of the first / last frame.
Events never cross a shot change (shot_id is the event's shot) and a person missing for longer than smoothing_gap_seconds ends their events.
Confidence = fraction of the interval's frames where the cue was seen x mean gaze_conf (point_conf for
pointing) on those frames; cross events take the geometric mean of their two parents.

Consistency by construction (the rules pipeline/consistency.py checks on every table): each person has one
gaze target per frame (smoothing bridges gaps only over frames with no target), so one person's gaze_at
events never overlap; eye contact and the aversion that breaks it never overlap, and a person is in one
eye contact at a time; joint attention, gaze following and attention capture are about things in the
scene (a person, hands, an object), never the camera or gaze that hits nothing.

Target columns: target_type is person | object | none. A face target has target_type "person",
target_person_id = that person, target_label null; someone's hands: target_type "person",
target_person_id = the hands' owner, target_label "hands"; an object: target_type "object", target_label =
its label; the camera: target_type "none", target_label "camera".

``details`` (JSON object) keys by event_type. ``target_type`` inside details is the finer gaze/pointing
vocabulary: person (face) | hands | object | camera | none; ``target_id`` is the person_id
(person, hands), object_id (object) or null.
- gaze_at: target_type, target_id, support (fraction of frames with that target before smoothing).
  persons_involved = [looker]; initiator_id = looker.
- mutual_gaze: first_looker (person_id whose look at the other began first, null when unknown), support.
  persons_involved = the pair; initiator_id = first_looker. Gaps up to mutual_gaze_merge_gap_seconds are
  merged, except a gap that begins with an aversion (the aversion ends the contact; a contact resumed
  after it is a new event) or in which one of the pair makes eye contact with someone else.
- gaze_aversion: averter_id (looked away), holder_id (kept looking), contact_start_time, contact_seconds,
  averted_to_type / averted_to_id (where the averter looked next). The interval runs from the break (where
  the mutual_gaze event it breaks ends: contact_start_time / contact_seconds are that event's) to the end
  of the holder's continued look or the averter's look back, whichever comes first. initiator_id = averter, target_person_id = holder.
- joint_attention: target_type, target_id (the focus held longest), targets (list of {target_type,
  target_id, start_time, end_time}: a group whose shared focus moves together, e.g. from one person's
  hands to the other's, stays one event), joined_later (person_ids who joined after the start; the
  persons_involved are everyone looking at the start). Only on a person, hands or an object.
- gaze_following: target_type, target_id, leader_onset_time, follower_onset_time. leader_id, follower_id,
  lag_seconds columns set; the interval runs from the leader's onset to the follower's onset. The target is
  a person, hands or an object and never the follower's own face or hands; the follower did not look at
  it from following_unseen_before_seconds before the leader's onset on.
- attention_capture: target_type, target_id (the new common target: a person, hands or an object), shifts (list of {person_id, time,
  from_target_type, from_target_id} in onset order), spread_seconds (first to last shift).
  The interval runs from the first shift while all of them still look at the target.
- sudden_gaze_shift: from_target_type, from_target_id, to_target_type, to_target_id, amplitude (head-
  relative gaze movement, frame widths), movement_seconds, mean_speed (frame widths / s). The interval is
  centred on the movement and lasts at least shift_min_seconds. initiator_id = the person.
- pointing: target_type (person | hands | object | none), target_id, hand (null: the tracks do not say
  which hand), support. persons_involved = pointer (+ the target person); initiator_id = pointer.
- reaching: target_type (person | object), target_id, hand ("left" | "right").
- showing: target_type "person", target_id (the viewer), object_id, object_label, hand.
- giving: target_type "person", target_id (the receiver), object_id, object_label, handover_time, hand.
- co_occur / adjacent: gaze_event_type, gesture_event_type, shared_persons, first ("gaze" | "gesture" |
  "simultaneous"), gap_seconds, overlap_seconds. parent_event_ids = [gaze event, gesture event]; the
  interval spans both parents. Paired gaze events are all gaze types except gaze_at.
- gaze_follows_gesture: gaze_event_type ("gaze_at"), gesture_event_type, target (["person"|"object"|
  "camera", id]). leader_id = gesturer, follower_id = who turned, lag_seconds = gesture start to gaze onset.
- eye_contact_during_gesture: gaze_event_type ("mutual_gaze"), gesture_event_type, partner_id; interval =
  overlap of the gesture and the eye contact; target_person_id = partner.
- gaze_gesture_alignment: gaze_event_type ("gaze_at"), gesture_event_type, target; interval = overlap of
  the gesturer's look at the target and the gesture.
"""
from events.detect import detect_events

__all__ = ["detect_events"]
