"""Synthetic test scenarios, one module per idea:

- scene.py: ``Scenario``, the scene builder (people, gaze, gestures, objects -> tracks and objects tables);
- truth.py: ``TruthEvent`` and ``expected_events``, the events a scenario implies;
- matching.py: ``temporal_iou`` and ``match_events``, detected events against the truth;
- benchmark_tracks.py: ``random_tracks``, large random tracks for the benchmark and the identity test.
"""
from tests.scenarios.benchmark_tracks import random_tracks
from tests.scenarios.matching import match_events, temporal_iou
from tests.scenarios.scene import Scenario
from tests.scenarios.truth import TruthEvent, expected_events

__all__ = ["Scenario", "TruthEvent", "expected_events", "match_events", "random_tracks", "temporal_iou"]
