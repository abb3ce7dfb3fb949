"""The config and the schema module: the two contracts every stage relies on."""
from __future__ import annotations

import json

import pyarrow as pa
import pytest

from pipeline import schema
from pipeline.config import Config


def test_config_hash_is_stable_and_sensitive_to_outputs_only():
    base = Config()
    assert base.hash() == Config().hash()
    assert base.replace(sampling={"fps": 10}).hash() != base.hash()
    assert base.replace(events={"min_mutual_gaze_seconds": 2.0}).hash() != base.hash()
    assert base.replace(seed=1).hash() != base.hash()
    # how many workers run the job changes no table, so a rerun with more workers still resumes
    assert base.replace(run={"workers": 7}).hash() == base.hash()


def test_config_load_overrides_nested_sections(tmp_path):
    path = tmp_path / "cfg.yaml"
    path.write_text("sampling:\n  fps: 5\nqa:\n  formats: [mcq]\nseed: 4\n")
    config = Config.load(path)
    assert config.sampling.fps == 5
    assert config.qa.formats == ("mcq",)
    assert config.seed == 4
    assert config.tracking == Config().tracking
    round_trip = Config.from_dict(json.loads(json.dumps(config.to_dict())))
    assert round_trip == config


@pytest.mark.parametrize(
    "text, message",
    [
        ("sampling:\n  fsp: 5\n", "unknown config key 'fsp'"),
        ("samplin:\n  fps: 5\n", "unknown config key 'samplin'"),
        ("sampling: 5\n", "must be a mapping"),
        ("- 1\n- 2\n", "mapping of sections"),
    ],
)
def test_config_load_rejects_bad_files_naming_them(tmp_path, text, message):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ValueError) as info:
        Config.load(path)
    assert str(path) in str(info.value)
    assert message in str(info.value)


def test_config_missing_file_names_it(tmp_path):
    with pytest.raises(ValueError, match="nope.yaml"):
        Config.load(tmp_path / "nope.yaml")


def test_table_from_rows_fills_nullable_and_rejects_unknown_columns():
    row = {"video_id": "v", "qa_id": "q", "category": "T1", "category_name": "Gaze Target Identification",
           "difficulty": "easy", "format": "mcq", "question": "Q?", "options": ["A) a", "B) b", "C) c", "D) d"],
           "answer": "A", "answer_text": "a", "time_range": [0.0, 1.0], "source_event_ids": [1], "persons": [0],
           "grounding": [{"source": "gaze", "persons": [0]}],
           "reasoning_trace": [{"text": "t", "modality": "visual", "external_knowledge": False, "event_id": 1}]}
    table = schema.table_from_rows([row], schema.QA_SCHEMA)
    assert table.schema == schema.QA_SCHEMA
    assert table.column("grounding").to_pylist() == [[{"source": "gaze", "persons": [0]}]]
    with pytest.raises(ValueError, match="unknown column"):
        schema.table_from_rows([{**row, "bogus": 1}], schema.QA_SCHEMA)


def test_conform_undoes_hive_dictionary_and_reorders():
    table = pa.table({
        "status": ["ok"], "uri": ["/x.mp4"],
        "video_id": pa.array(["x"]).dictionary_encode(),
    })
    conformed = schema.conform(table, schema.MANIFEST_SCHEMA)
    assert conformed.schema == schema.MANIFEST_SCHEMA
    assert conformed.column("video_id").to_pylist() == ["x"]
    assert conformed.column("n_qa").to_pylist() == [None]
    with pytest.raises(ValueError, match="required column 'status'"):
        schema.conform(pa.table({"video_id": ["x"], "uri": ["u"]}), schema.MANIFEST_SCHEMA)


def test_check_values_names_the_stray_value():
    table = pa.table({"gaze_target_type": ["person", "bogus", None]})
    with pytest.raises(ValueError, match="bogus"):
        schema.check_values(table, "gaze_target_type", schema.GAZE_TARGET_TYPES)
    schema.check_values(pa.table({"gaze_target_type": ["hands", None]}), "gaze_target_type", schema.GAZE_TARGET_TYPES)
