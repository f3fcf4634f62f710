"""Every view, and every part of the heads view, on a 12-layer GPT-2-shaped and a 12-layer
Llama-shaped (grouped-query, rotary) random model listed through ATTN_MODELS: no error box, no
exception. Narrow (48 wide) so they build and run in seconds; the depth and head counts are
the real ones that broke the layers × heads grid."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tests import word_models
from tests.app.conftest import run_app
from tests.app.test_views import charts, ok, texts
from tests.chartdata import array, find
from tests.hf_folders import save_families
from ui.views import VIEWS
from ui.views.heads import HEADS_PARTS

TEXT = "the cat eats fish every day .\nwinter is cold"
MODELS = ("gpt2-12", "llama-12")


def build(name: str):
    import transformers as tf

    if name == "gpt2-12":
        return word_models.gpt2(48, 12, 12, 64)
    common = word_models.vocab_args()
    return tf.LlamaForCausalLM(tf.LlamaConfig(
        hidden_size=48, num_hidden_layers=12, num_attention_heads=12, num_key_value_heads=4,
        intermediate_size=32, max_position_embeddings=64, **common)), "<s> $A"


@pytest.fixture(scope="module", autouse=True)
def hf_models(tmp_path_factory):
    root = tmp_path_factory.mktemp("hf_views")
    save_families(root, MODELS, build)
    before = torch.get_num_threads()
    torch.set_num_threads(1)  # small tensors: thread start-up costs more on a busy machine
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ATTN_MODELS", str(root))
        mp.setenv("HF_HUB_OFFLINE", "1")
        yield root
    torch.set_num_threads(before)


def no_errors(at) -> None:
    ok(at)
    assert not at.error, texts(at.error)


@pytest.mark.parametrize("view", [v for v in VIEWS if v != "heads"])
@pytest.mark.parametrize("name", MODELS)
def test_every_view_opens_without_an_error(name, view):
    at = run_app({"ckpt": name, "view": view, "text": TEXT, "layer": "11", "head": "11"},
                 timeout=120)
    no_errors(at)


@pytest.mark.parametrize("part", list(HEADS_PARTS))
@pytest.mark.parametrize("name", MODELS)
def test_every_heads_part_opens_without_an_error(name, part):
    at = run_app({"ckpt": name, "view": "heads", "text": TEXT}, timeout=120)
    no_errors(at)
    at.radio(key="_w_heads_part").set_value(part).run(timeout=120)
    no_errors(at)
    if part == "scan":
        at.button(key="scan_go").click().run(timeout=120)
        no_errors(at)


def titles(at) -> str:
    return " ".join(str(c["layout"].get("title", {}).get("text", "")) for c in charts(at))


def test_steps_show_the_recorded_numbers_and_the_shared_kv_heads():
    at = run_app({"ckpt": "llama-12", "view": "steps", "text": TEXT, "layer": "3",
                  "head": "4"}, timeout=120)
    no_errors(at)
    shown = titles(at)
    for title in ("Q for head 4", "K for head 4", "attention probabilities"):
        assert title in shown
    assert "K and V shared with heads 3–5" in texts(at.caption)
    assert "head 4 · kv 1" in at.selectbox(key="_w_head").format_func(4)


def test_the_shared_kv_heads_note_in_korean():
    """kv_note was an f-string, English in the Korean interface; heads 3-5 share kv head 1
    (12 query heads over 4 key/value heads, as in the English test above)."""
    at = run_app({"ckpt": "llama-12", "view": "steps", "text": TEXT, "layer": "3",
                  "head": "4", "lang_ui": "ko"}, timeout=120)
    assert not at.exception and not at.error, texts(at.error)  # ok() wants the English title
    assert "K와 V를 헤드 3–5와 함께 씀 (키/값 헤드 1)" in texts(at.caption)


def test_translation_controls_only_for_models_that_translate():
    at = run_app({"ckpt": "gpt2-12", "view": "tokens", "text": TEXT}, timeout=120)
    no_errors(at)
    labels = [w.label for w in at.sidebar.selectbox] + [w.label for w in at.sidebar.radio]
    assert "Translate into" not in labels and "Decoder input" not in labels
    at = run_app({"ckpt": "gpt2-12", "view": "translation", "text": TEXT}, timeout=120)
    no_errors(at)
    assert "decoder-only model continues text" in texts(at.info)


@pytest.mark.parametrize("name", MODELS)
def test_tokens_view_says_shifted_right_only_after_a_start_piece(hf_models, name):
    """GPT-2's tokenizer puts no <s> first (the Llama template does): the page said "shifted
    right, starting with <s>" on both. The first piece is taken from the tokenizer itself."""
    from transformers import AutoTokenizer

    ids = AutoTokenizer.from_pretrained(hf_models / name)(TEXT.splitlines()[0])["input_ids"]
    first = AutoTokenizer.from_pretrained(hf_models / name).convert_ids_to_tokens(ids[:1])[0]
    at = run_app({"ckpt": name, "view": "tokens", "text": TEXT}, timeout=120)
    no_errors(at)
    said = texts(at.markdown)
    if first == "<s>":
        assert "shifted right, starting with <s>" in said
        assert "no start piece" not in said
    else:
        assert "no start piece comes first" in said and "shifted right" not in said


def test_positional_view_per_family():
    at = run_app({"ckpt": "gpt2-12", "view": "positional", "text": TEXT}, timeout=120)
    no_errors(at)
    assert "Positional table of gpt2-12" in titles(at)
    at = run_app({"ckpt": "llama-12", "view": "positional", "text": TEXT}, timeout=120)
    no_errors(at)
    assert "Rotary positions" in titles(at) and "relative distance" in titles(at)


def test_knocking_out_a_head_of_a_hugging_face_model():
    at = run_app({"ckpt": "gpt2-12", "view": "heads", "text": TEXT,
                  "ablate": "dec_self:11:3"}, timeout=120)
    no_errors(at)
    at.radio(key="_w_heads_part").set_value("ablation").run(timeout=120)
    no_errors(at)
    assert any("Loss" in m.label for m in at.metric)
    assert "not supported" not in texts(at.warning)
    assert at.checkbox(key="abl:dec_self:11:3").value


def _runs(empty: np.ndarray) -> list[slice]:
    """The runs of False in a bool vector: the panels between the grid's NaN gaps."""
    edges = np.flatnonzero(np.diff(np.concatenate([[1], empty.astype(int), [1]])))
    return [slice(a, b) for a, b in zip(edges[::2], edges[1::2])]


def test_attention_head_and_grid_are_transformers_attention(hf_models):
    """The attention view on the grouped-query rotary Llama: the chosen head's map and every
    panel of the layers × heads grid against transformers' own eager attention weights."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    line = TEXT.splitlines()[0]
    at = run_app({"ckpt": "llama-12", "view": "attention", "text": line, "layer": "11",
                  "head": "11"}, timeout=120)
    no_errors(at)
    folder = hf_models / "llama-12"
    lm = AutoModelForCausalLM.from_pretrained(folder, attn_implementation="eager").eval()
    ids = torch.tensor([AutoTokenizer.from_pretrained(folder)(line)["input_ids"]])
    with torch.no_grad():
        want = torch.stack(lm(ids, output_attentions=True).attentions)[:, 0].numpy()
    figs = charts(at)  # want: (L, H, T, T)
    np.testing.assert_allclose(array(find(figs, "· head 11 ·")["data"][0]["z"]), want[11, 11],
                               atol=1e-5)
    grid = array(find(figs, "every layer (rows)")["data"][0]["z"])
    gaps = np.isnan(grid)
    rows, cols = _runs(gaps.all(1)), _runs(gaps.all(0))
    assert (len(rows), len(cols)) == want.shape[:2]
    for layer, r in enumerate(rows):
        for head, c in enumerate(cols):
            np.testing.assert_allclose(grid[r, c], want[layer, head], atol=1e-5,
                                       err_msg=f"layer {layer} head {head}")


@pytest.fixture(scope="module")
def wide(hf_models) -> str:
    """"gpt2-wide": a GPT-2 40 rows wider than its tokenizer (as the 50,257-row GPT-2-small
    shape over the word list is), its final norm steered so every prediction is row n + 5,
    which the tokenizer cannot name."""
    from tests.hf_folders import SPECIALS, WORDS, wide_gpt2

    n = len(SPECIALS) + len(WORDS)

    def favour_unnamed(model) -> None:
        with torch.no_grad():
            model.transformer.ln_f.weight.zero_()
            model.transformer.ln_f.bias.copy_(model.transformer.wte.weight[n + 5])

    save_families(hf_models, ("gpt2-wide",), lambda _name: wide_gpt2(40, positions=64),
                  favour_unnamed)
    return "gpt2-wide"


def test_a_continuation_of_rows_past_the_tokenizer_is_named(hf_models, wide):
    """A GPT-2 wider than its tokenizer continues with rows the tokenizer cannot write: the
    generation and KV-cache pages said "⟶ (empty)" and 'None'. The pieces are named by id, as
    model.generate names them."""
    from model import generate, load_checkpoint
    from tests.hf_folders import SPECIALS, WORDS

    line = TEXT.splitlines()[0]
    ids = generate(load_checkpoint(hf_models / wide), line, max_new=24)[0].ids
    assert ids and all(i >= len(SPECIALS) + len(WORDS) for i in ids)  # none can be decoded
    want = line + " ⟶ " + " ".join(f"[id {i}]" for i in ids)
    for view in ("generate", "cache"):
        at = run_app({"ckpt": wide, "view": view, "text": line}, timeout=120)
        no_errors(at)
        assert [c.value for c in at.code][:1] == [want], view


def test_the_tours_output_step_names_rows_past_the_tokenizer(hf_models, wide):
    """Tour step 19 (the output softmax) read the top pieces by index into the tokenizer's
    list: IndexError on the GPT-2-small shape. Its guesses are the model's argmax rows."""
    from model import capture, load_checkpoint

    line = TEXT.splitlines()[0]
    trace = capture(load_checkpoint(hf_models / wide), [line], names={"logits"})
    top = int(trace.logits[0, 0].argmax())
    at = run_app({"ckpt": wide, "view": "tour", "step": "19", "text": line}, timeout=120)
    no_errors(at)
    assert f"[id {top}]" in texts(at.markdown)


def test_the_direct_attribution_asks_room_for_one_pass_only(hf_models, monkeypatch):
    """The contributions page draws the direct logit attribution (one pass) before any
    knock-out; the admission gate was asked for 64 knock-out copies for it, so a 512-piece
    line of the GPT-2-small shape was refused (31 GB asked, 0.5 GB run). With a budget that
    holds one pass but not 64 copies, the attribution runs (equal to a direct call) and the
    sweep is still refused."""
    from model import load_checkpoint
    from model.analysis.contributions import head_contributions
    from model.dispatch import estimate_contributions
    from ui import runtime
    from ui.admission import TooLarge, server_gate

    bundle = load_checkpoint(hf_models / "gpt2-12")
    line, step = TEXT.splitlines()[0], 3
    one = estimate_contributions(bundle, line, chunk=1).bytes
    sweep = estimate_contributions(bundle, line, chunk=64).bytes
    assert sweep > 2 * one
    monkeypatch.setattr(server_gate(), "budget", (one + sweep) // 2)
    args = (bundle, "gpt2-12-one-pass-test", line, None, "", step)
    got = runtime.cached_contributions(*args, knockout=False)
    want = head_contributions(bundle, line, step=step, knockout=False)
    np.testing.assert_allclose(got.dla["dec_self"], want.dla["dec_self"], atol=1e-6)
    with pytest.raises(TooLarge):
        runtime.cached_contributions(*args, knockout=True)


def test_patching_by_attribution_asks_room_for_its_passes_not_32_copies(hf_models,
                                                                         monkeypatch):
    """The patch page shows the attribution estimate (two forwards, one backward) while exact
    patching waits for its button; the gate was asked for 32 patched copies for it, so a
    512-piece line on the GPT-2-small shape was refused (15,713 MB asked; the run grew the
    process by 1,068 MB, 1,964 MB estimated now). With a budget between the two, exact
    patching is refused and the attribution is drawn."""
    from model import load_checkpoint
    from model.dispatch import encode
    from model.patching import estimate_patch
    from ui.admission import server_gate
    from ui.views.patch import ATTRIBUTION_PASSES, CHUNK

    bundle = load_checkpoint(hf_models / "gpt2-12")
    line = "a cat runs every day ."  # a pair of its own: no other test's kept result
    pair = encode(bundle, [line, line.replace("cat", "dog")])  # as the page asks for it
    passes = estimate_patch(bundle, pair, chunk=ATTRIBUTION_PASSES).bytes
    copies = estimate_patch(bundle, pair, chunk=CHUNK).bytes
    assert copies > 2 * passes
    monkeypatch.setattr(server_gate(), "budget", (passes + copies) // 2)
    at = run_app({"ckpt": "gpt2-12", "view": "patch", "text": line,
                  "corrupt": line.replace("cat", "dog")}, timeout=120)
    no_errors(at)
    assert "needs about" in texts(at.warning)  # exact, this tiny model's default: 32 copies
    at.radio(key="patch_method").set_value("attribution").run(timeout=120)
    no_errors(at)
    assert "needs about" not in texts(at.warning)
    assert "attribution" in texts(at.caption) and charts(at)


def test_the_cache_budget_chart_asks_first_when_its_runs_are_estimated_long(monkeypatch):
    """view=cache's loss-against-budget chart (4 policies × every budget, each re-scoring the
    continuation) ran at once below 256 positions whatever the model: 45 s on the 768-wide
    GPT-2-small shape. It now waits for a button when ui/cost.py estimates it over
    ASK_SECONDS; here the threshold is moved below and above this model's estimate."""
    from ui import cost

    query = {"ckpt": "gpt2-12", "view": "cache", "text": TEXT.splitlines()[0]}
    monkeypatch.setattr(cost, "ASK_SECONDS", 0.0)
    at = run_app(query, timeout=120)
    no_errors(at)
    asked = [b for b in at.button if b.key == "cache_sweep"]
    assert asked and "runs, about" in asked[0].label
    titles_asked = titles(at)
    assert "against the cache budget" not in titles_asked
    monkeypatch.setattr(cost, "ASK_SECONDS", 1e9)
    at = run_app(query, timeout=120)
    no_errors(at)
    assert not [b for b in at.button if b.key == "cache_sweep"]
    assert "against the cache budget" in titles(at)


def test_the_query_key_map_asks_first_when_its_capture_is_estimated_long(monkeypatch):
    """view=qkmap captured 234-300 sentences on first open whatever the model: 25-49 s on
    the 768-wide GPT-2-small shape, no button. It now waits for one when ui/cost.py estimates
    the capture over ASK_SECONDS (the threshold moved below and above gpt2-12's estimate);
    once built, every head opens at once."""
    from ui import cost
    from ui.runtime import qkmap_cache

    qkmap_cache.clear()  # an earlier test may have built this model's map
    query = {"ckpt": "gpt2-12", "view": "qkmap", "text": TEXT.splitlines()[0]}
    monkeypatch.setattr(cost, "ASK_SECONDS", 0.0)
    at = run_app(query, timeout=120)
    no_errors(at)
    assert [b.label for b in at.button if b.key == "qk_go"][0].startswith(
        "Build the query–key map (about")
    assert not charts(at)
    monkeypatch.setattr(cost, "ASK_SECONDS", 1e9)
    at = run_app(query, timeout=120)
    no_errors(at)
    assert not [b for b in at.button if b.key == "qk_go"] and charts(at)
    monkeypatch.setattr(cost, "ASK_SECONDS", 0.0)  # built: no button, even at threshold 0
    at = run_app({**query, "layer": "5", "head": "3"}, timeout=120)
    no_errors(at)
    assert not [b for b in at.button if b.key == "qk_go"] and charts(at)


def test_exact_patching_asks_room_for_the_copies_it_runs(hf_models, monkeypatch):
    """A slow exact sweep runs one patched copy per forward (so Cancel lands within a second),
    but the gate was asked for 32 copies: at 512 pieces on the GPT-2-small shape "Run exact
    patching (about 276 s)" led to a refusal (15,713 MB asked). Here ui/cost.py is made slow
    so the sweep runs 1 copy a forward, and the budget holds one copy but not 32."""
    from model import load_checkpoint
    from model.dispatch import encode
    from model.patching import estimate_patch
    from ui import cost
    from ui.admission import server_gate
    from ui.views.patch import CHUNK

    bundle = load_checkpoint(hf_models / "gpt2-12")
    line = "a dog runs every day ."  # a pair of its own: no other test's kept result
    pair = encode(bundle, [line, line.replace("dog", "cat")])
    one = estimate_patch(bundle, pair, chunk=1).bytes
    copies = estimate_patch(bundle, pair, chunk=CHUNK).bytes
    assert copies > 2 * one
    monkeypatch.setattr(cost, "FLOPS_PER_THREAD", 1e3)  # every forward "takes" minutes
    monkeypatch.setattr(server_gate(), "budget", (one + copies) // 2)
    at = run_app({"ckpt": "gpt2-12", "view": "patch", "text": line,
                  "corrupt": line.replace("dog", "cat"), "layer": "1"}, timeout=120)
    no_errors(at)
    at.button(key="patch_go").click().run(timeout=120)
    no_errors(at)
    assert "needs about" not in texts(at.warning)
    assert "exact" in texts(at.caption) and charts(at)
