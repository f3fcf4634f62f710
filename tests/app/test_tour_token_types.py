"""Tour step 3 on a model with token types (BERT): the segment row per piece and the sum.

MiniLM adds word + position + token-type rows and normalises the sum with its embedding
LayerNorm. Step 3 draws the type rows and their sum; the sum is checked against the input
of the model's own embeddings LayerNorm, caught by a forward hook during model.capture (not
the tables the view reads), on a single line (all row 0) and on an "A [SEP] B" line (B's
pieces row 1). The paper checkpoint and a tiny GPT-2 have no token types: no such charts.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from model import capture, load_checkpoint
from tests.app.conftest import run_app
from tests.chartdata import array
from tests.conftest import ROOT, installed_minilm, skip_or_fail
from tests.hostile.families import build_folder

SINGLE = "the cat sat on the mat ."
PAIR = "the cat sat on the mat . [SEP] it was warm there ."
TYPE_TITLE = "Token-type rows of sentence 1"
SUM_TITLE = "piece + position + token type of sentence 1"


def charts(at) -> dict[str, np.ndarray]:
    """Step 3's heatmaps by title: (rows, D) as drawn."""
    out = {}
    for c in at.get("plotly_chart"):
        spec = json.loads(c.proto.spec)
        title = str(spec["layout"].get("title", {}).get("text", ""))
        z = spec["data"][0].get("z")
        if z is not None:
            out[title] = np.asarray(array(z), dtype=np.float64)
    return out


def hooked_sum(bundle, line: str) -> tuple[np.ndarray, list[int]]:
    """(n, D) what the embeddings' LayerNorm reads for `line`, and the line's ids."""
    emb = next(m for m in bundle.model.modules() if hasattr(m, "token_type_embeddings"))
    seen = []
    handle = emb.LayerNorm.register_forward_hook(
        lambda _m, args, _out: seen.append(args[0].detach().double().cpu().numpy()))
    try:
        tr = capture(bundle, [line])
    finally:
        handle.remove()
    assert seen, "the embedding LayerNorm did not run"
    return seen[0][0], list(map(int, tr.ids("src")[0]))


@pytest.fixture(scope="module")
def minilm():
    return load_checkpoint(installed_minilm())


@pytest.mark.parametrize("line, ones", [(SINGLE, 0), (PAIR, None)])
def test_step3_sum_is_what_the_embedding_layernorm_reads(minilm, line, ones):
    at = run_app({"view": "tour", "ckpt": "minilm", "text": line, "step": "3"}, timeout=300)
    assert not at.exception, [str(x.value)[:300] for x in at.exception]
    drawn = charts(at)
    assert TYPE_TITLE in " ".join(drawn) and SUM_TITLE in drawn, list(drawn)
    want, ids = hooked_sum(minilm, line)
    got = drawn[SUM_TITLE]
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, atol=1e-4)  # float32 rows, drawn
    # B's pieces read row 1: the type chart's rows equal the table's row 0 or 1 per piece
    table = next(m.token_type_embeddings for m in minilm.model.modules()
                 if hasattr(m, "token_type_embeddings")).weight.detach().double().numpy()
    sep = minilm.tokenizer.sep_token_id
    first = ids.index(sep)
    expect = [0 if i <= first else 1 for i in range(len(ids))]
    if ones == 0:
        assert sum(expect) == 0
    else:
        assert sum(expect) >= 5, expect  # "it was warm there ." and the last [SEP]
    types = next(v for k, v in drawn.items() if k.startswith(TYPE_TITLE))
    np.testing.assert_allclose(types, table[expect], atol=1e-6)
    said = " ".join(m.value for m in at.markdown)
    assert "token-type (segment) row" in said
    assert ("row 1" in said) == bool(sum(expect)), said


@pytest.fixture(scope="module")
def gpt2_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("tour_types")
    torch.manual_seed(0)
    build_folder(root, "gpt2")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ATTN_MODELS", str(root))
        mp.setenv("HF_HUB_OFFLINE", "1")
        yield root


@pytest.mark.parametrize("name", ["paper", "gpt2"])
def test_step3_without_token_types_is_unchanged(name, gpt2_root):
    if name == "paper" and not (ROOT / "checkpoints" / "paper" / "config.json").is_file():
        skip_or_fail("checkpoints/paper is not installed")
    at = run_app({"view": "tour", "ckpt": name, "text": SINGLE, "step": "3"}, timeout=300)
    assert not at.exception, [str(x.value)[:300] for x in at.exception]
    assert at.subheader[-1].value.startswith("3. ")
    drawn = charts(at)
    assert len(drawn) == 1 and next(iter(drawn)).startswith("input_embs of sentence 1"), \
        list(drawn)
    assert "token-type" not in " ".join(m.value for m in at.markdown)


def test_step3_speaks_korean_on_a_pair(minilm):
    at = run_app({"view": "tour", "ckpt": "minilm", "text": PAIR, "step": "3",
                  "lang_ui": "ko"}, timeout=300)
    assert not at.exception, [str(x.value)[:300] for x in at.exception]
    drawn = charts(at)
    want, _ids = hooked_sum(minilm, PAIR)
    np.testing.assert_allclose(drawn["문장 1의 조각 + 위치 + 토큰 타입"], want, atol=1e-4)
    said = " ".join(m.value for m in at.markdown)
    assert "토큰 타입(세그먼트) 행" in said and "1행" in said, said
