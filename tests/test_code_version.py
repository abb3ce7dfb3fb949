"""A stage's hash holds the source of the code it runs (pipeline/code_version.py): a rerun into an output
folder after an upgrade redoes what the new code computes, instead of keeping the old code's tables."""
from __future__ import annotations

import json

from pipeline import code_version
from pipeline.config import Config
from pipeline.inputs import InputVideo
from pipeline.runner import plan_run
from pipeline.storage import OutputStore


def test_source_fingerprint_follows_every_python_file_and_nothing_else(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "sub" / "b.py").write_text("y = 2\n")
    first = code_version.source_fingerprint(tmp_path)
    assert len(first) == 16 and code_version.source_fingerprint(tmp_path) == first
    (tmp_path / "notes.txt").write_text("not code")
    (tmp_path / "sub" / "c.pyc").write_bytes(b"\0")
    assert code_version.source_fingerprint(tmp_path) == first
    (tmp_path / "sub" / "b.py").write_text("y = 3\n")
    edited = code_version.source_fingerprint(tmp_path)
    assert edited != first
    (tmp_path / "sub" / "b.py").rename(tmp_path / "b.py")  # the same bytes under another name
    assert code_version.source_fingerprint(tmp_path) not in (first, edited)


def test_the_project_packages_are_fingerprinted():
    for stage, packages in code_version.STAGE_PACKAGES.items():
        code = code_version.stage_code(stage)
        assert list(code) == list(packages) and all(len(v) == 16 for v in code.values())


def test_a_stage_hash_moves_with_its_own_code_only(monkeypatch):
    before = Config().stage_hashes()
    real = code_version.package_fingerprint

    def changed(package):
        def fingerprint(name):
            return "0" * 16 if name == package else real(name)
        return fingerprint

    monkeypatch.setattr(code_version, "package_fingerprint", changed("qa_gen"))
    after = Config().stage_hashes()
    assert after["perception"] == before["perception"] and after["events"] == before["events"]
    assert after["qa"] != before["qa"]  # a change to the QA templates redoes QA alone
    monkeypatch.setattr(code_version, "package_fingerprint", changed("detectors"))
    after = Config().stage_hashes()
    assert all(after[stage] != before[stage] for stage in Config.STAGES)


def test_a_rerun_after_an_upgrade_redoes_the_stages_whose_code_changed(tmp_path, monkeypatch):
    store = OutputStore(str(tmp_path))
    video = InputVideo("clip", "/data/clip.mp4")
    (tmp_path / "status").mkdir()

    def write_status(hashes):
        (tmp_path / "status" / "clip.json").write_text(json.dumps(
            {"video_id": "clip", "uri": video.uri, "status": "ok", "stage_hashes": hashes,
             "stage_commands": {stage: "run" for stage in Config.STAGES}}))

    config = Config()
    write_status(config.stage_hashes())
    assert plan_run([video], config, store, overwrite=False).done == [video]
    # the same folder after an upgrade whose QA code differs: QA is re-derived, perception kept
    real = code_version.package_fingerprint
    monkeypatch.setattr(code_version, "package_fingerprint", lambda name: "1" * 16 if name == "qa_gen" else real(name))
    plan = plan_run([video], config, store, overwrite=False)
    assert plan.rederive == [(video, "qa")] and not plan.todo and not plan.done
    # ... and whose detectors differ: the whole clip again
    monkeypatch.setattr(code_version, "package_fingerprint", lambda name: "2" * 16 if name == "detectors" else real(name))
    assert plan_run([video], config, store, overwrite=False).todo == [video]
