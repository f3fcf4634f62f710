"""bertviz's head view and model view as one self-contained page: offline, injection-safe, small.

bertviz's own `head_view(..., html_action="return")` loads require.js, d3 and jQuery from a CDN,
pastes the tokens into an inline <script> with plain json.dumps, and writes every attention
value twice (its template marker also sits in a comment, and both get replaced). This module
keeps bertviz's drawing code (`head_view.js`, `model_view.js` from the installed package) and
builds the page around it:

- d3 v5 (from the `mpld3` package) and jQuery (from `XStatic-jQuery`) are inlined, read from the
  installed packages at run time, followed by a small shim (`requirejs(deps, f)` calls
  `f(jQuery, d3)`); bertviz's `require.config` block with its CDN paths is cut out.
- The data is one sentence, the chosen layers, padding excluded, values rounded to 3 decimals,
  written once, as integers in thousandths ("8" for 0.008: a third of the bytes of "0.008");
  the shim divides them by 1000 before bertviz sees them.
- The JSON is ASCII-only, with `<`, `>`, `&`, U+2028 and U+2029 written as \\uXXXX, so no
  token can end the script or open a comment in it.
- bertviz draws tokens with d3's `.text()`, never `.html()`, so a token is shown as text.
- Defence in depth: the page starts with a Content-Security-Policy meta tag (`page_csp`) that
  allows no network request at all and runs only its own inline scripts (by SHA-256), so a
  future slip in the escaping could neither run injected script nor send anything anywhere.

Pure: no streamlit, no model. Trace in, HTML string out.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import importlib.util
import json
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from model.capture import KIND_SIDES

VIEWS = ("head", "model")
DEFAULT_BUDGET = 8_000_000
# bertviz draws one SVG line per attention value on screen: the head view one layer's heads,
# the model view every layer and head of a kind. 786k lines (model view, 128 tokens, 6 x 8)
# took 54 s in headless Chromium on 2 cores; 197k (64 tokens) took 5 s.
DEFAULT_MAX_LINES = 300_000
ROOT_ID = "bertviz"
_KIND_NAMES = {"enc_self": "Encoder", "dec_self": "Decoder", "cross": "Cross"}
_SCRIPT_END = re.compile(r"</script|<!--", re.IGNORECASE)
_REQUIRE_CONFIG = re.compile(r"require\.config\(\{.*?\}\);\s*", re.DOTALL)
_HEADER_COMMENT = re.compile(r"\A\s*/\*\*.*?\*\*/\s*", re.DOTALL)
_PARAMS = "const params = PYTHON_PARAMS;"
_HEAD_COLOURS = "d3.scaleOrdinal(d3.schemeCategory10)"  # head_view.js's palette
BERTVIZ_COLOURS = 10  # ... of 10 colours, repeated from head 10 on
# requirejs(['jquery', 'd3'], f) -> f(jQuery, d3): the only call bertviz's scripts make; and
# attentionFromThousandths(params): the sent integers back to probabilities.
_SHIM = """window.requirejs = function (deps, f) {
  var libs = {jquery: window.jQuery, d3: window.d3};
  return f.apply(null, deps.map(function (d) { return libs[d]; }));
};
window.require = window.requirejs;
window.require.config = function () {};
window.attentionFromThousandths = function (params) {
  function scale(x) { return Array.isArray(x) ? x.map(scale) : x / 1000; }
  params.attention.forEach(function (a) { a.attn = scale(a.attn); });
  return params;
};
"""
_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026",
                 "\u2028": "\\u2028", "\u2029": "\\u2029"}
_THOUSANDTHS = np.array([str(i) for i in range(1001)], dtype=object)  # 0.008 -> "8"
_PAGE_CSS = ("body{margin:0;padding:8px;background:#fff;color:#000;"
             "font-family:'Helvetica Neue',Helvetica,Arial,sans-serif}"
             "select{margin-right:12px}#vis{margin-top:8px}")


class BertvizTooLarge(ValueError):
    """The page would be too big to send or to draw; the message says what to do instead.

    `size` is in bytes; when the byte budget was fine but the drawing was not, `lines` is the
    number of SVG lines bertviz would draw at once.
    """

    def __init__(self, n_tokens: int, size: int, budget: int = DEFAULT_BUDGET, *,
                 lines: int | None = None, max_lines: int = DEFAULT_MAX_LINES) -> None:
        self.n_tokens, self.size, self.budget, self.lines = n_tokens, size, budget, lines
        if lines is None:
            what = (f"would be about {size / 1e6:.1f} MB, over the {budget / 1e6:.1f} MB "
                    "limit")
        else:
            what = (f"would draw {lines:,} lines at once, more than a browser draws smoothly "
                    f"({max_lines:,})")
        super().__init__(
            f"The bertviz view of this {n_tokens}-token input {what}. Shorten the input or "
            "show fewer layers, or use the attention view (plotly), which draws one head, "
            "one layer or all layers as heatmaps without this limit.")


# --- the JavaScript, read from installed packages ----------------------------------------


def _package_dir(name: str) -> Path:
    """Folder of an installed package, found without importing it (mpld3 pulls matplotlib)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(f"package {name!r} is not installed; pip install -r requirements.txt")
    return Path(next(iter(spec.submodule_search_locations)))


def _checked(text: str, source: str) -> str:
    """Library code that is inlined must not contain `</script` or `<!--` itself."""
    if _SCRIPT_END.search(text):
        raise RuntimeError(f"{source} contains '</script' or '<!--' and cannot be inlined")
    return text


@functools.lru_cache(maxsize=1)
def d3_js() -> str:
    """d3 v5, as shipped in the mpld3 package."""
    path = _package_dir("mpld3") / "js" / "d3.v5.min.js"
    return _checked(path.read_text(encoding="utf-8"), str(path))


@functools.lru_cache(maxsize=1)
def jquery_js() -> str:
    """jQuery, as shipped in the XStatic-jQuery package (its BASE_DIR)."""
    from xstatic.pkg import jquery

    path = Path(jquery.BASE_DIR) / "jquery.min.js"
    text = path.read_text(encoding="utf-8")
    text = re.sub(r"//# sourceMappingURL=\S*", "", text)  # no source map request from devtools
    return _checked(text, str(path))


@functools.lru_cache(maxsize=len(VIEWS))
def view_js(view: str) -> str:
    """bertviz's head_view.js or model_view.js without its CDN config, ready for the params."""
    if view not in VIEWS:
        raise ValueError(f"view must be one of {VIEWS}, not {view!r}")
    path = _package_dir("bertviz") / f"{view}_view.js"
    text = path.read_text(encoding="utf-8")
    text = _HEADER_COMMENT.sub("", text, count=1)  # licence-free change log with URLs
    text, n_config = _REQUIRE_CONFIG.subn("", text, count=1)
    # bertviz's marker is repeated in a comment on the same line, which is why its pages
    # carry every value twice; keep the statement, drop the comment.
    text = re.sub(re.escape(_PARAMS) + r"[^\n]*", _PARAMS, text, count=1)
    if n_config != 1 or text.count(_PARAMS) != 1 or (
            view == "head" and text.count(_HEAD_COLOURS) != 1):
        raise RuntimeError(f"{path} is not the bertviz 1.4.1 script this module expects")
    return _checked(text, str(path))


def head_colours(n_heads: int) -> list[str]:
    """One colour per head for the head view: plotly's 24 dark qualitative colours, or evenly
    spaced hues in two lightnesses beyond that (models with 32 or 64 heads)."""
    from plotly.colors import qualitative

    if n_heads <= len(qualitative.Dark24):
        return list(qualitative.Dark24[:n_heads])
    return [f"hsl({round(360 * i / n_heads)}, 70%, {35 if i % 2 else 50}%)"
            for i in range(n_heads)]


def _libraries_size(view: str) -> int:
    return len(d3_js()) + len(jquery_js()) + len(_SHIM) + len(view_js(view))


# --- data --------------------------------------------------------------------------------


def display_token(token: str) -> str:
    """A piece as bertviz shows it: word markers as spaces, invisible characters spelled out."""
    token = str(token).replace("Ġ", " ").replace("▁", " ").replace("</w>", "")
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in token)


def script_json(value) -> str:
    """JSON that is safe inside <script>: ASCII only, `<`, `>`, `&`, U+2028/9 escaped.

    ensure_ascii writes NUL, other control characters and lone surrogates as \\uXXXX too.
    """
    text = json.dumps(value, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    return _escape_json(text)


def _escape_json(text: str) -> str:
    for raw, escaped in _JSON_ESCAPES.items():
        text = text.replace(raw, escaped)
    return text


def _thousandths(a: np.ndarray) -> str:
    """Nested JSON arrays of values in [0, 1] as integer thousandths (rounded to 3 decimals)."""
    per_mille = np.rint(np.clip(np.nan_to_num(a), 0.0, 1.0) * 1000).astype(np.int16)
    text = _THOUSANDTHS[per_mille]
    rows = [",".join(r) for r in text.reshape(-1, a.shape[-1]).tolist()]
    for size in reversed(a.shape[:-1]):
        rows = [",".join(f"[{r}]" for r in rows[i:i + size]) for i in range(0, len(rows), size)]
    return f"[{rows[0]}]"


def _kinds(trace, b: int) -> list[str]:
    """Attention kinds present in the trace whose two sides are not empty for sentence b."""
    out = []
    for kind in _KIND_NAMES:
        if kind in trace.attn and all(trace.length(s, b) for s in KIND_SIDES[kind]):
            out.append(kind)
    if not out:
        raise ValueError(f"sentence {b} has no attention to show")
    return out


def _layers(trace, kinds: Sequence[str], layers: Sequence[int] | None) -> list[int]:
    """Layers to send; bertviz shares one layer list between its Encoder/Decoder/Cross tabs."""
    common = min(trace.attn[k].shape[0] for k in kinds)
    if layers is None:
        return list(range(common))
    chosen = sorted({int(i) for i in layers})
    if not chosen or chosen[0] < 0 or chosen[-1] >= common:
        raise ValueError(f"layers {list(layers)} must be a non-empty subset of 0..{common - 1}")
    return chosen


def bertviz_height(trace, b: int, view: str = "head", layers: Sequence[int] | None = None) -> int:
    """Pixel height of the drawn page (bertviz's own layout constants), for a fixed iframe."""
    kinds = _kinds(trace, b)
    n = max(trace.length(s, b) for k in kinds for s in KIND_SIDES[k])
    controls = 40
    if view == "head":
        return int(controls + 30 + n * 22.5 + 30)  # bertviz: TEXT_TOP + n * BOXHEIGHT
    n_layers = len(_layers(trace, kinds, layers))
    n_heads = trace.attn[kinds[0]].shape[2]
    thumb = n * 7 * 12 / n_heads + 10
    return int(controls + max(n_layers * thumb + 38, n * 18 + 55) + 20)


def _left_room(trace, b: int, kinds: Sequence[str]) -> int:
    """Pixels to add on the left so the head view's right-aligned left column is not cut off."""
    sides = {"src": trace.src_tokens[b], "tgt": trace.tgt_tokens[b]}
    longest = max(len(display_token(t)) for k in kinds for t in sides[KIND_SIDES[k][0]])
    return int(min(max(longest * 9 - 100, 0), 600))  # ~9 px per character at 15 px, 100 px box


def _entry(trace, b: int, kind: str, layers: list[int], name: str | None) -> str:
    q_side, k_side = KIND_SIDES[kind]
    nq, nk = trace.length(q_side, b), trace.length(k_side, b)
    tokens = {"src": trace.src_tokens[b], "tgt": trace.tgt_tokens[b]}
    attn = np.asarray(trace.attn[kind])[layers, b, :, :nq, :nk]  # (L', H, Q, K)
    left = [display_token(t) for t in tokens[q_side][:nq]]
    right = [display_token(t) for t in tokens[k_side][:nk]]
    return (f'{{"name":{script_json(name)},"attn":{_thousandths(attn)},'
            f'"left_text":{script_json(left)},"right_text":{script_json(right)}}}')


def _params(view: str, kinds: list[str], entries: list[str], layers: list[int], n_heads: int,
            layer: int | None, heads: Sequence[int] | None) -> str:
    settings: dict = {"default_filter": "0", "root_div_id": ROOT_ID, "include_layers": layers}
    if view == "head":
        settings.update(layer=layer, heads=list(heads) if heads else None)
    else:
        settings.update(display_mode="light", include_heads=list(range(n_heads)),
                        total_heads=n_heads)
    rest = script_json(settings)
    return '{"attention":[' + ",".join(entries) + "]," + rest[1:]


def _controls(view: str, kinds: list[str]) -> str:
    parts = ['Layer: <select id="layer"></select>'] if view == "head" else []
    if len(kinds) > 1:
        options = "".join(f'<option value="{i}">{_KIND_NAMES[k]}</option>'
                          for i, k in enumerate(kinds))
        parts.append(f'Attention: <select id="filter">{options}</select>')
    return " ".join(parts)


def page_csp(scripts: Sequence[str]) -> str:
    """The CSP for a page whose only scripts are `scripts` (inline, in this order).

    st.iframe renders the page from `srcdoc` with `allow-same-origin allow-scripts`, so its
    scripts run with the app's origin. Nothing may be fetched (`default-src 'none'`,
    `connect-src 'none'`, images only as data: URLs); scripts run only when their text hashes
    to one of ours, which also blocks injected inline handlers; inline styles stay allowed
    (bertviz and the controls set style attributes). Hashes rather than 'unsafe-inline': the
    scripts are fixed when the page is built, and an injected <script> would not run.
    """
    hashes = " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(s.encode("utf-8")).digest()).decode() + "'"
        for s in dict.fromkeys(scripts))
    return (f"default-src 'none'; script-src {hashes}; style-src 'unsafe-inline'; "
            "img-src data:; connect-src 'none'; font-src 'none'; base-uri 'none'; "
            "form-action 'none'")


def csp_meta(scripts: Sequence[str]) -> str:
    """`page_csp` as the meta tag that must open every HTML page the app puts in an iframe."""
    return f'<meta http-equiv="Content-Security-Policy" content="{page_csp(scripts)}">'


def bertviz_html(trace, b: int, view: str = "head", layers: list[int] | None = None,
                 budget_bytes: int = DEFAULT_BUDGET, *, layer: int | None = None,
                 heads: Sequence[int] | None = None,
                 max_lines: int = DEFAULT_MAX_LINES) -> str:
    """A complete offline HTML page with bertviz's head or model view of sentence b.

    An encoder–decoder trace gets bertviz's Encoder / Decoder / Cross selector; an encoder-only
    or decoder-only trace shows its one kind. `layers` limits what is sent (default: all layers
    the kinds have in common). `layer` and `heads` preselect the head view's layer and heads.
    Raises BertvizTooLarge when the page would exceed budget_bytes (before building it when
    even the smallest encoding would not fit), or when bertviz would draw more than max_lines
    SVG lines at once.
    """
    if view not in VIEWS:
        raise ValueError(f"view must be one of {VIEWS}, not {view!r}")
    if not 0 <= b < len(trace.src_tokens):
        raise IndexError(f"sentence {b} is not in a batch of {len(trace.src_tokens)}")
    kinds = _kinds(trace, b)
    chosen = _layers(trace, kinds, layers)
    if layer is not None and layer not in chosen:
        raise ValueError(f"layer {layer} is not among the layers shown {chosen}")
    n_heads = trace.attn[kinds[0]].shape[2]
    n_tokens = max(trace.length(s, b) for k in kinds for s in KIND_SIDES[k])
    n_values = sum(len(chosen) * n_heads * trace.length(KIND_SIDES[k][0], b)
                   * trace.length(KIND_SIDES[k][1], b) for k in kinds)
    floor = 2 * n_values + _libraries_size(view)  # every value at least "0,"
    if floor > budget_bytes:
        raise BertvizTooLarge(n_tokens, floor, budget_bytes)
    per_layer = max(n_heads * trace.length(KIND_SIDES[k][0], b) * trace.length(KIND_SIDES[k][1], b)
                    for k in kinds)
    lines = per_layer * (1 if view == "head" else len(chosen))
    if lines > max_lines:
        raise BertvizTooLarge(n_tokens, floor, budget_bytes, lines=lines, max_lines=max_lines)

    named = len(kinds) > 1  # bertviz names the entries only when there is a selector
    entries = [_entry(trace, b, k, chosen, _KIND_NAMES[k] if named else None) for k in kinds]
    params = _params(view, kinds, entries, chosen, n_heads, layer, heads)
    script = view_js(view).replace(
        _PARAMS, f"const params = window.attentionFromThousandths({params});", 1)
    if view == "head" and n_heads > BERTVIZ_COLOURS:  # GPT-2's head 10 had head 0's colour
        palette = json.dumps(head_colours(n_heads))
        script = script.replace(_HEAD_COLOURS, f"d3.scaleOrdinal({palette})", 1)
    extra_css = f"#vis{{margin-left:{_left_room(trace, b, kinds)}px}}" if view == "head" else ""
    scripts = [d3_js(), jquery_js(), _SHIM, script]  # hashed into the page's CSP
    html = "\n".join([
        "<!DOCTYPE html>",
        f'<html lang="en"><head>{csp_meta(scripts)}<meta charset="utf-8">',
        f"<title>bertviz {view} view</title><style>{_PAGE_CSS}{extra_css}</style></head><body>",
        f'<div id="{ROOT_ID}"><span style="user-select:none">{_controls(view, kinds)}</span>',
        '<div id="vis"></div></div>',
        *(f"<script>{code}</script>" for code in scripts),
        "</body></html>",
    ])
    size = len(html.encode("utf-8"))
    if size > budget_bytes:
        raise BertvizTooLarge(n_tokens, size, budget_bytes)
    return html
