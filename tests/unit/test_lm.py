"""The shipped language model (checkpoints/lm): a plain Hugging Face folder in which an
induction head and an earlier previous-token head formed.

- it opens and generates with transformers alone (a subprocess that imports no project code);
- induction and previous-token scores computed here, straight from transformers' eager
  attention weights, rank the same heads first as the lab's detectors;
- the card's figures are what the lab measures on the folder now (figures.measure), and they
  clear the issue's bars;
- the training history and snapshots read back, and a bad log or snapshot gives a clear error.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import torch

from model import CheckpointError, capture, load_checkpoint
from model.analysis import detect_heads
from model.training.lm import figures
from model.training.lm.history import read_history, snapshot_bundle
from model.training.lm.ship import choose
from tests.conftest import ROOT

LM = ROOT / "checkpoints" / "lm"
REPEAT = 24


@pytest.fixture(scope="module")
def bundle():
    return load_checkpoint(str(LM))


@pytest.fixture(scope="module")
def card():
    return json.loads((LM / "card.json").read_text())


def test_plain_transformers_opens_the_folder_and_generates():
    code = (
        "import sys, torch\n"
        "from transformers import AutoModelForCausalLM, AutoTokenizer\n"
        f"tok = AutoTokenizer.from_pretrained({str(LM)!r})\n"
        f"model = AutoModelForCausalLM.from_pretrained({str(LM)!r})\n"
        "ids = tok('Ravonel: The cat eats fish. Ravonel:', return_tensors='pt')\n"
        "out = model.generate(**ids, max_new_tokens=8, do_sample=False)\n"
        "assert out.shape[1] > ids['input_ids'].shape[1], out.shape\n"
        "assert not any(m.startswith(('model', 'viz', 'ui')) for m in sys.modules)\n"
        "print(tok.decode(out[0]))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd="/", env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("<s>")


def _eager_attentions(ids: torch.Tensor) -> np.ndarray:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(LM), attn_implementation="eager").eval()
    with torch.no_grad():
        out = model(input_ids=ids, output_attentions=True)
    return torch.stack(out.attentions).numpy()  # (L, B, H, T, T)


def test_independent_scores_rank_the_same_heads_first_as_the_lab(bundle, card):
    g = torch.Generator().manual_seed(123)
    run = torch.randint(4, bundle.tokenizer.vocab_size, (8, REPEAT), generator=g)
    ids = torch.cat([torch.zeros(8, 1, dtype=torch.long), run, run], dim=1)
    att = _eager_attentions(ids)
    q = np.arange(1 + REPEAT, 1 + 2 * REPEAT)
    induction = att[:, :, :, q, q - REPEAT + 1].mean(axis=(1, 3))  # (L, H)
    text = [figures.DEMO]
    ids_text = torch.tensor([bundle.tokenizer(figures.DEMO)["input_ids"]])
    att_text = _eager_attentions(ids_text)
    qt = np.arange(2, ids_text.shape[1])
    previous = att_text[:, :, :, qt, qt - 1].mean(axis=(1, 3))
    lab = detect_heads(bundle, capture(bundle, text, names={"attn"}))
    for mine, name in ((induction, "induction"), (previous, "previous_token")):
        theirs = lab[name]["dec_self"]
        # the same heads clear 0.5 on both measures, and each measure's best head is one of
        # them (the layer-1 heads all score about 0.9 on induction, so their order is noise)
        assert np.array_equal(mine >= 0.5, theirs >= 0.5), (name, mine, theirs)
        assert mine.flat[theirs.argmax()] >= 0.5 and theirs.flat[mine.argmax()] >= 0.5
    assert np.unravel_index(previous.argmax(), previous.shape) == np.unravel_index(
        lab["previous_token"]["dec_self"].argmax(), previous.shape)
    best_ind = np.unravel_index(induction.argmax(), induction.shape)
    best_prev = np.unravel_index(previous.argmax(), previous.shape)
    assert induction.max() >= 0.5, induction
    assert previous.max() >= 0.7, previous
    assert best_prev[0] < best_ind[0]


def test_the_card_holds_what_the_lab_measures_now(bundle, card):
    now = figures.measure(bundle)
    shipped = card["figures"]
    for key in ("held_out_loss", "icl", "repeat_gap", *(
            f"{m}_{g}_knocked_out" for m in ("icl", "loss", "repeat_gap")
            for g in ("induction", "previous_token", "control"))):
        assert now[key] == pytest.approx(shipped[key], abs=2e-3), key
    for key in ("induction_heads", "previous_token_heads", "control_heads"):
        assert now[key] == shipped[key], key
    assert shipped["induction_heads"] and shipped["previous_token_heads"]
    # words said twice: the second copy is nearly free, and knocking out the induction heads
    # takes all of that away; knocking out the previous-token heads that feed them (those over
    # the threshold) takes most of it (a weaker previous-token head is left in)
    assert shipped["repeat_gap"] < -5
    assert abs(shipped["repeat_gap_induction_knocked_out"]) < 0.5
    assert shipped["repeat_gap_previous_token_knocked_out"] > 0.5 * shipped["repeat_gap"]


def test_in_context_learning_is_clearly_negative_and_the_induction_heads_carry_it(card):
    """On held-out story rows later pieces are clearly easier than early ones; knocking out the
    induction heads takes most of that away, and the score deepened at the phase change."""
    f, t = card["figures"], card["training"]
    assert f["icl"] <= -0.3
    assert f["icl_induction_knocked_out"] - f["icl"] > 0.7 * abs(f["icl"])
    icl = {int(k): v["icl"] for k, v in t["snapshot_figures"].items()}
    phase = t["phase_change_step"]
    before = [v for s, v in icl.items() if 0 < s <= phase - 200]
    after = [v for s, v in icl.items() if s >= phase + 200]
    assert before and after
    assert np.mean(after) < np.mean(before) - 0.3, icl


def test_history_and_snapshots_read_back(bundle, card):
    h = read_history(LM)
    assert len(h.snapshots) >= 16 and h.skipped == 0
    assert h.phase_change() == card["training"]["phase_change_step"]
    first, last = min(h.snapshots), max(h.snapshots)
    early = snapshot_bundle(bundle, h.snapshots[first], first)
    late = snapshot_bundle(bundle, h.snapshots[last], last)
    text = [figures.DEMO]
    a0 = capture(early, text, names={"attn"}).attn["dec_self"]
    a1 = capture(late, text, names={"attn"}).attn["dec_self"]
    a = capture(bundle, text, names={"attn"}).attn["dec_self"]
    assert np.abs(a1 - a).max() < 5e-3  # the last snapshot is the shipped model in fp16
    assert np.abs(a0 - a).max() > 0.1
    total = sum(f.stat().st_size for f in LM.rglob("*") if f.is_file())
    assert total < 40_000_000, total


def test_a_bad_log_or_snapshot_is_named(tmp_path, bundle):
    (tmp_path / "training").mkdir()
    good = json.loads((LM / "training" / "log.jsonl").read_text().splitlines()[0])
    lines = [json.dumps(good), "{not json", json.dumps({**good, "induction": [[1, 2]], "step": 5}),
             json.dumps({**good, "step": "x"})]
    (tmp_path / "training" / "log.jsonl").write_text("\n".join(lines))
    h = read_history(tmp_path)
    assert len(h.steps) == 1 and h.skipped == 3
    (tmp_path / "training" / "log.jsonl").write_text("garbage\n")
    with pytest.raises(CheckpointError, match="no readable probe"):
        read_history(tmp_path)
    bad = tmp_path / "step_000001.safetensors"
    bad.write_bytes(b"\x00" * 64)
    with pytest.raises(CheckpointError, match="safetensors"):
        snapshot_bundle(bundle, bad, 1)
    assert read_history(tmp_path / "nowhere") is None


def test_snapshot_choice_keeps_ends_and_the_phase_change():
    steps = list(range(0, 4100, 100))
    kept = choose(steps, 1700, 20)
    assert len(kept) == 20 and kept[0] == 0 and kept[-1] == 4000
    assert {1600, 1700, 1800} <= set(kept)
    assert choose([0, 100], None, 20) == [0, 100]
