"""Every view through its URL, checked against a capture() of the same input (AppTest, no browser).

The app is pointed at a tiny random checkpoint made here (ATTN_CHECKPOINTS_DIR), plus a broken
one, so these tests need neither the shipped checkpoints nor a trained model.
"""

from __future__ import annotations

import shutil
import sys

import numpy as np
import plotly.graph_objects as go
import pytest

from model import capture, load_checkpoint
from tests.app.conftest import run_app
from tests.chartdata import array, charts  # noqa: F401  (other view tests import them here)
from tests.tiny_model import save_tiny_checkpoint

LINES = ["겨울은 추워요.", "The big dog eats the fish."]
TEXT = "\n".join(LINES)
# charts each view draws for TEXT on an encoder–decoder (steps: 14 + the query–key terms
# bars); None: another change owns the view
CHARTS = {"tokens": 4, "masks": 8, "attention": 3, "steps": 15, "positional": 4,
          "embeddings": 4, "translation": 4, "bertviz": None, "heads": None, "compare": None}


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """A folder with a tiny random 'paper' checkpoint and a 'broken' one (no weights)."""
    root = tmp_path_factory.mktemp("checkpoints")
    paper = save_tiny_checkpoint(
        root / "paper", extra=["내 친구는 공원에서 책을 읽어요."], max_len=40,
        card={"variant": "paper", "metrics": {"en->ko": {"exact_match": 1.0, "chrf": 12.5}}})
    (root / "broken").mkdir()
    shutil.copy(paper / "config.json", root / "broken" / "config.json")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ATTN_CHECKPOINTS_DIR", str(root))
        mp.delenv("ATTN_MODELS", raising=False)
        yield root


@pytest.fixture(scope="module")
def trace(models):
    return capture(load_checkpoint(models / "paper"), LINES, target_lang="auto")


def ok(at) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert [t.value for t in at.title][:1] == ["Attention lab"]


def texts(elements) -> str:
    """Message text as shown: the markdown escapes (\\. \\_ …) removed."""
    return " ".join(str(e.value) for e in elements).replace("\\", "")


@pytest.mark.parametrize("view", list(CHARTS))
def test_every_view_opens_from_its_link(models, trace, view):
    at = run_app({"view": view, "text": TEXT, "kind": "cross", "layer": "1", "head": "2"})
    ok(at)
    assert not at.error, texts(at.error)
    figs = charts(at)
    if CHARTS[view] is not None:
        assert len(figs) == CHARTS[view]
    for fig in figs:
        assert fig["layout"].get("title", {}).get("text"), "every chart has a title"
        # heatmaps are built without plotly's per-property checks (speed); check them here
        go.Figure(fig, skip_invalid=False)
    assert at.query_params["view"] == view and at.query_params["kind"] == "cross"
    nq, nk = trace.length("tgt", 0), trace.length("src", 0)
    if view == "attention":  # the big heatmap is exactly the captured head
        z = array(figs[0]["data"][0]["z"])
        np.testing.assert_array_equal(z, trace.attn["cross"][1, 0, 2, :nq, :nk])
        assert figs[0]["data"][0]["zmin"] == 0 and figs[0]["data"][0]["zmax"] == 1
        assert "▁" in "".join(figs[0]["data"][0]["x"]) or "▁" in "".join(figs[0]["data"][0]["y"])
    if view == "masks":  # the first matrices are the trace's masks, padded
        np.testing.assert_array_equal(array(figs[0]["data"][0]["z"]),
                                      trace.masks["enc_self"][0].astype(np.float32))
        np.testing.assert_array_equal(array(figs[4]["data"][0]["z"]),
                                      trace.masks["cross"][0].astype(np.float32))
        np.testing.assert_array_equal(array(figs[-1]["data"][0]["z"]), trace.attn["cross"][1, 0, 2])
    if view == "steps":  # ÷√d_k is the captured score matrix (padding kept)
        np.testing.assert_allclose(array(figs[5]["data"][0]["z"]), trace.scores["cross"][1, 0, 2],
                                   rtol=1e-4, atol=1e-5)
    if view == "tokens":
        body = " ".join(el.proto.body for el in at.get("html"))
        assert "▁" in body and "&lt;/s&gt;" in body and "겨" in body
        np.testing.assert_array_equal(array(figs[0]["data"][0]["z"]) == 1,
                                      trace.src_ids == trace.pad_id)


def test_empty_text_prompts_with_presets(models):
    at = run_app({"text": "  \n\t \n"})
    ok(at)
    assert "Type one or more sentences" in texts(at.info)
    assert not charts(at)
    at.button(key="preset_main_2").click().run()
    ok(at)
    assert at.session_state["text"] == "The big dog eats the fish."
    assert len(charts(at)) == CHARTS["tokens"]


def test_bad_link_values_fall_back_with_a_note(models):
    at = run_app({"view": "nonsense", "kind": "bogus", "layer": "99", "head": "x", "lang": "fr",
                  "ckpt": "nope", "ablate": "enc_self:9:0", "text": "Winter is cold."})
    ok(at)
    notes = texts(at.warning)
    for word in ("nonsense", "bogus", "99", "fr", "nope", "enc_self:9:0"):
        assert word in notes, (word, notes)
    assert at.radio(key="view").value == "tokens"
    assert len(charts(at)) == CHARTS["tokens"]
    assert dict(at.query_params) == {"ckpt": "paper", "text": "Winter is cold.", "lang": "auto",
                                     "view": "tokens", "kind": "enc_self", "layer": "0",
                                     "head": "0"}


def test_too_many_lines_long_lines_and_odd_text(models):
    lines = [f"Line {i} is cold." for i in range(17)]
    lines[0] = "The big dog eats the fish in the park " * 6  # more pieces than max_len
    lines[1] = "<b>bold?</b> \x07 😀 $x$ :red[no]"
    at = run_app({"text": "\n".join(lines)})
    ok(at)
    notes = texts(at.warning)
    assert "only the first 16" in notes
    assert "control character" in notes
    assert "Sentence 1 was too long" in notes and "cut" in notes
    assert not at.error
    body = " ".join(el.proto.body for el in at.get("html"))
    assert "<b>" not in body and "&lt;" in body  # pieces are escaped, never markup


def test_broken_checkpoint_reports_and_falls_back(models):
    at = run_app({"ckpt": "broken", "text": "Winter is cold."})
    ok(at)
    err = texts(at.error)
    assert "broken" in err and "model.safetensors" in err and "missing" in err
    assert len(charts(at)) == CHARTS["tokens"]  # the default checkpoint still works


def test_widgets_write_the_link(models):
    at = run_app({"view": "attention", "text": TEXT})
    ok(at)
    at.selectbox(key="_w_kind").select("dec_self").run()
    at.selectbox(key="_w_layer").select(1).run()
    ok(at)
    assert (at.query_params["kind"], at.query_params["layer"]) == ("dec_self", "1")
    at.selectbox(key="_w_open").select(2).run()  # the grid's picker: layer 0, head 2
    ok(at)
    assert (at.query_params["layer"], at.query_params["head"]) == ("0", "2")
    assert charts(at)[0]["layout"]["title"]["text"].startswith("decoder self-attention · layer 0")


def test_the_measure_toggle_writes_the_link_and_the_link_reopens_it(models):
    at = run_app({"view": "attention", "text": TEXT})
    ok(at)
    assert "measure" not in at.query_params
    at.radio(key="_w_attn_measure").set_value("norms").run()
    ok(at)
    assert at.query_params["measure"] == "norms"
    again = run_app(dict(at.query_params))  # the copied link, in a new session
    ok(again)
    assert again.radio(key="_w_attn_measure").value == "norms"
    assert again.query_params["measure"] == "norms"
    again.radio(key="_w_attn_measure").set_value("weights").run()
    assert "measure" not in again.query_params


def test_teacher_forcing_translation(models):
    at = run_app({"view": "translation", "text": TEXT})
    at.radio(key="decoder_mode").set_value("typed").run()
    at.text_area(key="targets").input("Winter is cold.\n큰 개가 생선을 먹어요.").run()
    ok(at)
    assert not at.warning, texts(at.warning)
    assert len(charts(at)) == CHARTS["translation"]
    assert "Teacher forcing" in texts(at.markdown)


def test_model_list_reads_both_environment_variables(models, tmp_path, monkeypatch):
    from ui import catalog

    (tmp_path / "hub" / "bert").mkdir(parents=True)
    (tmp_path / "hub" / "bert" / "config.json").write_text("{}")
    (tmp_path / "one").mkdir()
    (tmp_path / "one" / "config.json").write_text("{}")
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("ATTN_MODELS", f"{tmp_path / 'hub'}:{tmp_path / 'one'}:{tmp_path / 'empty'}")
    found = catalog.model_folders()
    assert list(found) == ["paper", "bert", "broken", "one"]  # the default first
    assert found["bert"] == tmp_path / "hub" / "bert"


def test_model_list_reads_attn_models_as_the_readme_writes_it(models, tmp_path, monkeypatch):
    """ATTN_MODELS=/path/a:/path/b (README): ':'-separated like PATH, blanks around an entry
    ignored, missing entries skipped; a shipped name is never replaced by a listed folder."""
    from ui import catalog

    for name in ("paper", "gpt2", "zeta"):
        (tmp_path / "extra" / name).mkdir(parents=True)
        (tmp_path / "extra" / name / "config.json").write_text("{}")
    monkeypatch.setenv("ATTN_MODELS", f" {tmp_path / 'extra' / 'zeta'} :/no/such/folder:"
                                      f"{tmp_path / 'extra'}")
    found = catalog.model_folders()
    # worked by hand: shipped paper + broken, then zeta (a model folder) and the extra/ folder's
    # gpt2 and paper, whose name is taken; "paper" first, the rest by name
    assert list(found) == ["paper", "broken", "gpt2", "zeta"]
    assert found["paper"] == models / "paper"
    assert found["gpt2"] == tmp_path / "extra" / "gpt2"
    assert found["zeta"] == tmp_path / "extra" / "zeta"


def test_input_cleaning():
    from ui import common as app
    from ui.text import md

    lines, notes = app.clean_input("a\r\nb\x00c\n\n  \n" + "x\n" * 20)
    assert lines[:2] == ["a", "bc"] and len(lines) == app.MAX_LINES
    assert any("control" in n for n in notes) and any("first 16" in n for n in notes)
    lines, notes = app.clean_input("y" * (app.MAX_CHARS + 5))
    assert len(lines[0]) == app.MAX_CHARS and "20,000" in notes[0]
    assert md("*a* [b](c) $x$ :red[d] <i>") == (
        "\\*a\\* \\[b\\]\\(c\\) \\$x\\$ \\:red\\[d\\] \\<i\\>")


def count_calls(monkeypatch, name: str, *modules) -> list:
    """Replace `name` in each module (or the name of a (module, name) pair) by a wrapper that
    records its sentences (2nd argument); Streamlit's caches are emptied so the count starts
    from a cold server."""
    import streamlit as st

    calls: list = []

    def counting(real):
        def counted(*args, **kwargs):
            first = args[1]  # the sentences, or the Batch they were tokenized into once
            calls.append(list(first.sources) if hasattr(first, "sources") else first)
            return real(*args, **kwargs)
        return counted

    for module in modules:
        module, attr = module if isinstance(module, tuple) else (module, name)
        monkeypatch.setattr(module, attr, counting(getattr(module, attr)))
    st.cache_resource.clear()
    st.cache_data.clear()
    return calls


def test_each_group_recorded_once_per_input_whichever_views_open(models, monkeypatch):
    """The capture is cached per input and records what the view on screen needs: a view that
    needs more records only the rest; going back, switching options or another session with
    the same input never reruns the model."""
    import streamlit as st

    from ui import runtime

    recorded: list[tuple[tuple[str, ...], frozenset]] = []
    real = runtime.run_lines  # model.dispatch.run, the one path of every kind

    def counted(bundle, lines, targets, lang, needs, ablate, *, admit, **kwargs):
        def counting_admit(cost, work):
            def recording():  # a recording happens only when the gate lets work() run
                recorded.append((tuple(lines), frozenset(needs)))
                return work()
            return admit(cost, recording)
        return real(bundle, lines, targets, lang, needs, ablate, admit=counting_admit, **kwargs)

    monkeypatch.setattr(runtime, "run_lines", counted)
    st.cache_resource.clear()
    st.cache_data.clear()
    at = run_app({"view": "tokens", "text": TEXT})
    views = ("masks", "attention", "steps", "positional", "embeddings", "tokens", "attention")
    for view in views:
        at.radio(key="view").set_value(view).run()
        ok(at)
    at.checkbox(key="numbers").check().run()
    groups = [g for _src, needs in recorded for g in needs]
    assert len(groups) == len(set(groups)), recorded  # no group recorded twice
    assert set(groups) == {"attn", "scores", "q", "k", "v", "steps", "embed", "hidden"}
    assert "norms" not in groups and "logits" not in groups  # no view on the way read them
    n = len(recorded)
    at.text_area(key="text").input("The cat is cold.").run()
    ok(at)
    assert len(recorded) == n + 1 and recorded[-1][0] == ("The cat is cold.",)
    run_app({"view": "attention", "text": "The cat is cold."})  # another session, same input
    assert len(recorded) == n + 1


def test_translation_view_decodes_once_per_input(models, monkeypatch):
    """The capture's greedy decode and the translation view's steps are one translate()."""
    from ui import runtime

    # the page's capture decodes in model.dispatch.run (and hands the result to runtime's
    # translations); without a decode handed in, capture() decodes in the lab's capture
    calls = count_calls(monkeypatch, "translate", runtime,
                        (sys.modules["model.backends.lab.capture"], "translate_native"),
                        (sys.modules["model.backends.lab.backend"], "translate_native"))
    at = run_app({"view": "translation", "text": TEXT})
    ok(at)
    assert len(calls) == 1 and calls[0] == LINES
    at.radio(key="view").set_value("tokens").run()
    ok(at)
    assert len(calls) == 1
