"""The rules every events table must satisfy (issue 10 part 2), checked from the table alone: each broken
rule is reported as one readable line. Used on synthetic scenes, random tracks and the shared clips."""
from __future__ import annotations

import json
from itertools import combinations

import pyarrow as pa

from events.config import EventConfig

EPS = 1e-9
SCENE_KINDS = ("person", "hands", "object")


def _overlap(a: dict, b: dict) -> bool:
    return min(a["end_time"], b["end_time"]) - max(a["start_time"], b["start_time"]) > EPS


def _name(row: dict) -> str:
    return f"#{row['event_id']} {row['event_type']} {row['persons_involved']} {row['start_time']:.3f}-{row['end_time']:.3f}"


def _own_target(details: dict, person: int) -> bool:
    return details.get("target_type") in ("person", "hands") and details.get("target_id") == person


def rule_violations(events: pa.Table, clip_duration: float, config: EventConfig = EventConfig()) -> list[str]:
    """Every broken rule of one video's events table, as lines naming the events."""
    rows = events.to_pylist()
    details = {r["event_id"]: json.loads(r["details"]) for r in rows}
    by_type: dict[str, list[dict]] = {}
    for r in rows:
        by_type.setdefault(r["event_type"], []).append(r)
    bad: dict[int, str] = {}

    def flag(row: dict, why: str) -> None:
        bad.setdefault(row["event_id"], f"{_name(row)}: {why}")

    for r in rows:
        if r["start_time"] < -EPS or r["end_time"] > clip_duration + EPS or r["end_time"] < r["start_time"]:
            flag(r, f"outside [0, {clip_duration:.3f}] or reversed")
    looks = by_type.get("gaze_at", [])
    for a, b in combinations(looks, 2):
        if a["initiator_id"] == b["initiator_id"] and _overlap(a, b):
            flag(b, f"a second gaze target of person {a['initiator_id']} while #{a['event_id']} lasts")
    for a, b in combinations(by_type.get("mutual_gaze", []), 2):
        if set(a["persons_involved"]) & set(b["persons_involved"]) and _overlap(a, b):
            flag(b, f"eye contact with two people at once (with #{a['event_id']})")
    for contact in by_type.get("mutual_gaze", []):
        for aversion in by_type.get("gaze_aversion", []):
            if set(contact["persons_involved"]) == set(aversion["persons_involved"]) and _overlap(contact, aversion):
                flag(aversion, f"overlaps eye contact #{contact['event_id']}")
    for r in by_type.get("gaze_aversion", []):
        # the contact it breaks is a reported mutual_gaze (the one starting at contact_start_time) that ends
        # by the time the aversion starts
        start = details[r["event_id"]]["contact_start_time"]
        if not any(set(c["persons_involved"]) == set(r["persons_involved"]) and abs(c["start_time"] - start) < 1e-6
                   and c["end_time"] <= r["start_time"] + EPS for c in by_type.get("mutual_gaze", [])):
            flag(r, "breaks no reported eye contact")
    for r in by_type.get("joint_attention", []):
        d = details[r["event_id"]]
        if d.get("target_type") not in SCENE_KINDS:
            flag(r, f"shared attention on {d.get('target_type')}")
        if len(r["persons_involved"]) < 2 or set(d.get("joined_later", [])) & set(r["persons_involved"]):
            flag(r, "fewer than two people, or a member also listed as joined later")
        # a pair's shared focus holds on every frame: neither looks at something else meanwhile
        foci = {(f["target_type"], f["target_id"]) for f in d.get("targets", [])} | {(d.get("target_type"), d.get("target_id"))}
        if len(set(r["persons_involved"]) | set(d.get("joined_later", []))) == 2:
            for look in looks:
                other = details[look["event_id"]]
                if (look["initiator_id"] in r["persons_involved"] and _overlap(look, r)
                        and (other["target_type"], other["target_id"]) not in foci):
                    flag(r, f"person {look['initiator_id']} looks at something else meanwhile (#{look['event_id']})")
        for look in looks:
            same = details[look["event_id"]]
            if ((same["target_type"], same["target_id"]) == (d.get("target_type"), d.get("target_id"))
                    and look["start_time"] <= r["start_time"] + EPS < look["end_time"]
                    and look["initiator_id"] not in r["persons_involved"]):
                flag(r, f"person {look['initiator_id']} attends at the first frame (#{look['event_id']}) but is not involved")
    for r in by_type.get("gaze_following", []):
        d = details[r["event_id"]]
        leader, follower = r["leader_id"], r["follower_id"]
        if d.get("target_type") not in SCENE_KINDS or _own_target(d, follower) or leader == follower:
            flag(r, f"follows onto {d.get('target_type')} {d.get('target_id')} (follower {follower})")
        lag = r["lag_seconds"]
        if lag is None or not config.following_min_lag_seconds - 1e-6 <= lag <= config.following_max_lag_seconds + 1e-6:
            flag(r, f"lag {lag} outside the configured bounds")
        for look in looks:
            same = details[look["event_id"]]
            if (look["initiator_id"] == follower and (same["target_type"], same["target_id"]) == (d["target_type"], d["target_id"])
                    and look["start_time"] <= d["leader_onset_time"] + EPS < look["end_time"]):
                flag(r, f"the follower already looks at the target when the leader starts (#{look['event_id']})")
    for r in by_type.get("attention_capture", []):
        d = details[r["event_id"]]
        if d.get("target_type") not in SCENE_KINDS or len(r["persons_involved"]) < config.capture_min_people:
            flag(r, f"capture by {d.get('target_type')} of {len(r['persons_involved'])} people")
    by_id = {r["event_id"]: r for r in rows}
    for r in by_type.get("gaze_follows_gesture", []):
        target = details[r["event_id"]].get("target")
        if r["follower_id"] == r["leader_id"] or (target and target[0] == "person" and target[1] == r["follower_id"]):
            flag(r, "the gesturer, or the gesture's target person, counted as following the gesture")
    for kind in ("eye_contact_during_gesture", "gaze_gesture_alignment"):
        for r in by_type.get(kind, []):
            for p in r["parent_event_ids"]:
                parent = by_id.get(p)
                if parent and not (parent["start_time"] - EPS <= r["start_time"] and r["end_time"] <= parent["end_time"] + EPS):
                    flag(r, f"interval outside its parent #{p}")
    # cross events must not cite a missing or rule-breaking parent (parents have lower ids only by time order)
    for r in rows:
        for p in r["parent_event_ids"] or []:
            if p not in by_id:
                flag(r, f"cites a missing parent #{p}")
            elif p in bad:
                flag(r, f"cites rule-breaking parent #{p}")
    return [bad[k] for k in sorted(bad)]
