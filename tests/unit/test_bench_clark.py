"""benchmarks/bench_clark.py without running a model: it writes nothing when MiniLM is absent,
and its README block's verdicts follow the figures (a BERT-base-like run reads 'same' on every
line, a run that parks on [CLS] instead of [SEP] reads 'differs' there)."""

from __future__ import annotations

from benchmarks import bench_clark
from benchmarks.common import Report

RUN = {"measured": "2026-11-28 20:00 UTC", "cpu_cores": 2, "load_average": [3.0, 2.0, 1.0]}


def _figures(cls: list[float], sep: list[float], punct: list[float], entropy: list[float],
             over_half: dict) -> dict:
    layers = [{"layer": i, "cls": c, "sep": s, "punct": p, "entropy": e}
              for i, (c, s, p, e) in enumerate(zip(cls, sep, punct, entropy))]
    top = [[0, 1, 0.9, 0.1]]
    return {"sentences": 3, "pieces": 30, "layers": layers, "n_layers": len(layers),
            "n_heads": 4, "uniform": {"cls": 0.1, "sep": 0.1, "punct": 0.2, "entropy": 2.3},
            "top": {"previous_token": top, "next_token": top, "punctuation": top},
            "top_positional": top * 5, "over_half": over_half, "seconds": 1.0, **RUN}


def _verdicts(text: str) -> list[str]:
    rows = [line for line in text.splitlines() if line.endswith(("| same |", "| differs |"))]
    return [line.rsplit("|", 2)[1].strip() for line in rows]


def test_absent_minilm_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(bench_clark, "FOLDER", tmp_path / "minilm")
    monkeypatch.setattr(bench_clark, "ROOT", tmp_path)
    out = bench_clark.main()
    assert not isinstance(out, Report) and "absent" in out[0]


def test_the_verdicts_follow_the_figures():
    bert_like = _figures(cls=[0.6, 0.3, 0.1, 0.05, 0.05, 0.05],
                         sep=[0.05, 0.1, 0.6, 0.7, 0.2, 0.1],
                         punct=[0.05, 0.05, 0.1, 0.1, 0.3, 0.4],
                         entropy=[2.2, 1.5, 1.0, 1.0, 1.2, 1.4],
                         over_half={"previous_token": [[0, 1]], "next_token": [[1, 3]]})
    text = bench_clark.block({"bench_clark": {"minilm": bert_like}})
    assert _verdicts(text) == ["same"] * 6
    assert "Like BERT-base, its middle layers park most of their attention on [SEP] (65% on " \
        "average)" in text
    parks_on_cls = _figures(cls=[0.2, 0.55, 0.6, 0.56, 0.5, 0.3],
                            sep=[0.1, 0.02, 0.02, 0.02, 0.03, 0.04],
                            punct=[0.2, 0.1, 0.05, 0.05, 0.05, 0.05],
                            entropy=[1.0, 1.1, 1.2, 1.3, 1.6, 1.9],
                            over_half={"previous_token": [], "next_token": [[4, 2]]})
    text = bench_clark.block({"bench_clark": {"minilm": parks_on_cls}})
    assert _verdicts(text) == ["differs"] * 6
    assert "over half in layers 1–3" in text
    assert "MiniLM's put 2% there on average and 58% on [CLS]: [CLS] is its resting place" in text
    assert "`bench_clark.minilm`, 2026-11-28 20:00 UTC, 2 cores, load average 3.0" in text


def test_no_run_yet():
    assert "No run recorded yet" in bench_clark.block({})
