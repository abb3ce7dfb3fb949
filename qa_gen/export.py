"""QA rows (QA_SCHEMA dicts) -> the items of the export formats. Pure formatting: the files, the clips
and the video work are pipeline/export.py's.

grasp-bench: the layout GRASP's evaluation reads (eval/eval_social_qa.py: load_eval_data): one
{"clip_file", "qa"} document per item, ``clip_file`` naming the item's unit clip. The "qa" dict carries
what GRASP's loader and Social Grounding Reward use: category, question, options, answer, answer_text,
difficulty, ``grounding`` ([{"source": "gaze" | "gesture", "persons": [ids]}]) and ``reasoning_trace``
(evidence steps), plus the unit the times count from.
llava-video: one {"id", "video", "conversations"} item per QA row in the LLaVA-Video-178K format.
"""
from __future__ import annotations

from typing import Mapping

EXPORT_FORMATS = ("grasp-bench", "llava-video", "frame-labels")
MCQ_SUFFIX = "Answer with the option's letter from the given choices directly."


def prompt(row: Mapping) -> str:
    """What the model is asked: the question, and for mcq the options and the answer instruction."""
    if row["format"] == "mcq":
        return "\n".join([row["question"], *row["options"], MCQ_SUFFIX])
    return row["question"]


def reply(row: Mapping) -> str:
    """The reference answer as a model would say it."""
    if row["format"] == "mcq":
        return f"{row['answer']}. {row['answer_text']}"
    return row["answer_text"]


def _unit(row: Mapping) -> dict:
    return {"unit_id": row.get("unit_id"), "unit_start": row.get("unit_start"), "unit_end": row.get("unit_end")}


def grasp_bench_item(row: Mapping, clip_file: str) -> dict:
    """The JSON document of one GRASP-Bench item; its times count from the start of ``clip_file``."""
    return {
        "clip_file": clip_file,
        "qa": {
            "category": row["category"],
            "question": row["question"],
            "options": list(row["options"]),
            "answer": row["answer"],
            "answer_text": row["answer_text"],
            "difficulty": row["difficulty"],
            "format": row["format"],
            "qa_id": row["qa_id"],
            "video_id": row["video_id"],
            "time_range": list(row["time_range"]),
            "grounding": [{"source": g["source"], "persons": list(g["persons"])} for g in row["grounding"]],
            "reasoning_trace": [dict(step) for step in row["reasoning_trace"]],
            **_unit(row),
            "template": row.get("template"),  # `socialtrace score` scores an export exactly as OUT/qa
        },
    }


def llava_video_item(row: Mapping, video: str) -> dict:
    """One LLaVA-Video conversation about ``video`` (the item's labelled unit clip)."""
    return {
        "id": row["qa_id"],
        "video": video,
        "conversations": [
            {"from": "human", "value": "<video>\n" + prompt(row)},
            {"from": "gpt", "value": reply(row)},
        ],
        "category": row["category"],
        "format": row["format"],
        "video_id": row["video_id"],
        **_unit(row),
    }
