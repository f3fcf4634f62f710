"""Faulty checkpoints and what a link may select, through the app (AppTest); and a grep that no
code path unpickles or evaluates anything.

The checkpoint folder holds a good tiny "paper" and broken copies of it; choosing a broken one
shows an error naming the file and the reason, and the app stays usable with "paper".
"""

from __future__ import annotations

import io
import json
import pickle
import re
import shutil
import sys
import tokenize
from pathlib import Path

import pytest
from streamlit import config
from streamlit.testing.v1 import AppTest

from model import Tokenizer, save_checkpoint
from tests.app.conftest import APP
from tests.conftest import ROOT
from tests.hostile.conftest import VERBS, WORDS, tiny_model
from tests.hostile.inputs import NORMAL


def _truncate(d: Path) -> None:
    w = d / "model.safetensors"
    w.write_bytes(w.read_bytes()[: w.stat().st_size // 2])


def _pickle(d: Path) -> None:
    (d / "model.safetensors").write_bytes(pickle.dumps({"weights": list(range(100))}))


def _edit_config(**changes):
    def edit(d: Path) -> None:
        cfg = json.loads((d / "config.json").read_text())
        cfg.update(changes)
        (d / "config.json").write_text(json.dumps(cfg))
    return edit


def _bad_json(d: Path) -> None:
    (d / "config.json").write_text('{"d_model": 32,')


def _no_tokenizer(d: Path) -> None:
    (d / "tokenizer.model").unlink()


def _other_vocab(d: Path) -> None:
    english = [f"{w} {v}." for w in WORDS for v in VERBS]
    other = Tokenizer.train(english * 30, vocab_size=320)  # a valid model, fewer pieces
    assert other.vocab_size != json.loads((d / "config.json").read_text())["vocab_size"]
    other.save(d / "tokenizer.model")


def _hf_garbage(d: Path) -> None:
    (d / "config.json").write_text('{"model_type": "no-such-architecture"}')


# name: (how to break a copy of "paper", file named in the error, reason named in the error)
BROKEN = {
    "truncated": (_truncate, "model.safetensors", "truncated"),
    "pickled": (_pickle, "model.safetensors", "not a safetensors"),
    "disagree": (_edit_config(d_ff=48), "model.safetensors", "disagree"),
    "huge_config": (_edit_config(d_model=65_536, d_ff=262_144), "model.safetensors", "disagree"),
    "bad_json": (_bad_json, "config.json", "invalid JSON"),
    "no_tokenizer": (_no_tokenizer, "tokenizer.model", "missing"),
    "other_vocab": (_other_vocab, "tokenizer.model", "vocab_size"),
    "hf_garbage": (_hf_garbage, "config.json", "not a usable Hugging Face config"),
}


@pytest.fixture(scope="module")
def folders(tmp_path_factory, hostile_tokenizer):
    """root/: paper + broken copies; listed/: a model named only in ATTN_MODELS;
    secret/: a valid checkpoint that no link may reach."""
    base = tmp_path_factory.mktemp("faulty")
    root = base / "root"
    good = save_checkpoint(tiny_model(hostile_tokenizer), hostile_tokenizer, root / "paper",
                           card={"variant": "paper"})
    for name, (breaker, _, _) in BROKEN.items():
        shutil.copytree(good, root / name)
        breaker(root / name)
    shutil.copytree(good, base / "listed" / "extra")
    (base / "listed" / "extra" / "card.json").write_text('{"variant": "LISTED-MODEL"}')
    shutil.copytree(good, base / "secret")
    (base / "secret" / "card.json").write_text('{"variant": "SECRET-MODEL"}')
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ATTN_CHECKPOINTS_DIR", str(root))
        mp.setenv("ATTN_MODELS", str(base / "listed"))
        mp.delenv("ATTN_ALLOW_HUB", raising=False)
        yield base


def session(**query) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=90)
    for key, value in query.items():
        at.query_params[key] = value
    config.set_option("client.showErrorDetails", "full")
    at.run()
    return at


def shown(elements) -> str:
    return " ".join(str(e.value) for e in elements).replace("\\", "")


def usable(at: AppTest, ckpt: str = "paper") -> None:
    """No exception; the given checkpoint serves the page; its charts are drawn."""
    assert not at.exception, [e.value for e in at.exception]
    assert at.query_params["ckpt"] == ckpt
    assert len(at.get("plotly_chart")) >= 2


@pytest.mark.parametrize("name", list(BROKEN))
def test_broken_checkpoint_from_a_link(folders, name):
    _, file, reason = BROKEN[name]
    at = session(ckpt=name, text="Winter is cold.")
    err = shown(at.error)
    assert name in err and file in err and reason in err, err
    assert "Traceback" not in err
    assert "Showing checkpoint paper instead" in shown(at.warning)
    usable(at)


@pytest.mark.parametrize("name", ["truncated", "bad_json", "other_vocab"])
def test_selecting_a_broken_checkpoint_keeps_the_session(folders, name):
    at = session(text="Winter is cold.")
    usable(at)
    assert not at.error
    at.selectbox(key="ckpt").select(name).run()
    err = shown(at.error)
    assert name in err and BROKEN[name][2] in err, err
    assert len(at.get("plotly_chart")) >= 2  # the default checkpoint still draws
    at.selectbox(key="ckpt").select("paper").run()
    at.text_area(key="text").input(NORMAL).run()
    usable(at)
    assert not at.error


def test_model_listed_in_attn_models_is_selectable_by_name(folders):
    at = session(ckpt="extra", text="Winter is cold.")
    usable(at, "extra")
    assert "LISTED-MODEL" in shown(at.caption)
    # an untrained random model is unsure of everything it writes: the page says so, and
    # that is the only warning (its card has no calibrated threshold: the default is used)
    unsure = [w for w in at.warning if "unsure of this translation" in str(w.value)]
    assert len(unsure) == 1, shown(at.warning)
    assert len(at.warning) == 1, shown(at.warning)


class OpenedFiles:
    """Paths the process opens or lists while `on` (an audit hook cannot be removed)."""

    def __init__(self) -> None:
        self.on, self.paths = False, []
        sys.addaudithook(self)

    def __call__(self, event: str, args: tuple) -> None:
        if self.on and event in ("open", "os.listdir", "os.scandir") and args:
            self.paths.append(str(args[0]))


@pytest.fixture(scope="module")
def opened() -> OpenedFiles:
    return OpenedFiles()


def refused_links(base: Path) -> list[str]:
    secret = base / "secret"
    return [str(secret), "../secret", "paper/../../secret", f"{base}/root/../secret",
            "~/../../" + str(secret).lstrip("/"), f"file://{secret}", "secret",
            str(base / "listed" / "extra"), "../listed/extra", "/etc/passwd", "/proc/self/environ",
            "C:\\Windows\\win.ini", "\\\\server\\share", "facebook/bart-base", "gpt2",
            "https://huggingface.co/gpt2", "paper\x00", "paper/", "./paper", ".."]


def test_a_link_reads_only_listed_checkpoints(folders, opened):
    """Paths, '..', absolute paths, hub ids and unknown names are refused with a message;
    nothing outside the listed folders is opened while the app handles them."""
    secret = str(folders / "secret")
    for ref in refused_links(folders):
        opened.paths.clear()
        opened.on = True
        try:
            at = session(ckpt=ref, text="Winter is cold.")
        finally:
            opened.on = False
        note = shown(at.warning)
        assert "refused" in note or "Unknown checkpoint" in note, (ref, note)
        usable(at)
        assert "SECRET-MODEL" not in shown(at.caption) + shown(at.markdown)
        assert any(p.startswith(str(folders / "root")) for p in opened.paths)  # hook is live
        reached = [p for p in opened.paths if p.startswith(secret) or p.startswith("/etc")
                   or p.startswith("/proc/self/environ")]
        assert not reached, (ref, reached)


SCANNED = ["app.py", "ui", "model", "viz", "benchmarks"]
FORBIDDEN = {
    "pickle": re.compile(r"^\s*(import|from)\s+(c?pickle|dill|shelve|marshal)\b|"
                         r"\b(c?pickle|dill|marshal)\.loads?\(|joblib\.load\(", re.M),
    "unsafe yaml": re.compile(r"yaml\.(unsafe_)?load\((?![^)]*SafeLoader)"),
    "numpy pickle": re.compile(r"allow_pickle\s*=\s*True"),
    "remote code": re.compile(r"trust_remote_code\s*=\s*True"),
}


def builtin_calls(text: str, names=("eval", "exec", "compile", "__import__")) -> list[str]:
    """Calls of these builtins in real code (not comments, strings or methods like .eval())."""
    toks = [t for t in tokenize.generate_tokens(io.StringIO(text).readline)
            if t.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE)]
    found = []
    for before, tok, after in zip([None, *toks], toks, toks[1:]):
        if (tok.type == tokenize.NAME and tok.string in names and after.string == "("
                and not (before is not None and before.string == ".")):
            found.append(f"line {tok.start[0]}: {tok.string}(")
    return found


def python_files() -> list[Path]:
    files = []
    for name in SCANNED:
        path = ROOT / name
        files += [path] if path.is_file() else sorted(path.rglob("*.py"))
    return files


def test_nothing_is_unpickled_or_evaluated():
    offenders = []
    for path in python_files():
        text = path.read_text(encoding="utf-8")
        for call in re.finditer(r"torch\.load\(([^)]*)\)?", text):
            if "weights_only=True" not in call.group(1):
                offenders.append(f"{path.relative_to(ROOT)}: {call.group(0)[:80]}")
        for what, pattern in FORBIDDEN.items():
            for hit in pattern.finditer(text):
                offenders.append(f"{path.relative_to(ROOT)}: {what}: {hit.group(0)[:80]}")
        offenders += [f"{path.relative_to(ROOT)}: {c}" for c in builtin_calls(text)]
    assert len(python_files()) > 20
    assert not offenders, "\n".join(offenders)


def test_the_grep_catches_what_it_should():
    samples = {"torch.load(f)": True, "torch.load(f, weights_only=True)": False,
               "import pickle": True, "x = pickle.loads(b)": True, "model.eval()": False,
               "eval(code)": True, "exec (code)": True, "self.exec_step()": False,
               "x = 1  # eval() is slow": False, "s = 'eval(x)'": False,
               "np.load(p, allow_pickle=True)": True, "yaml.load(s)": True}
    for sample, bad in samples.items():
        hits = [p for p in FORBIDDEN.values() if p.search(sample)] + builtin_calls(sample)
        torch_bad = re.search(r"torch\.load\(", sample) and "weights_only=True" not in sample
        assert bool(hits or torch_bad) == bad, sample
