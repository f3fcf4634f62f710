"""Hostile inputs, one list for every layer: capture(), AppTest and the real browser.

Each case is either text typed into the sentence box (`text`) or a link (`query`: the URL
query parameters as the server decodes them; `from_url` decodes a raw, percent-encoded query
string exactly as Streamlit does, so invalid UTF-8 arrives as U+FFFD). `note` is a phrase the
page must show (a warning, info or error) because the input was cut or refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import parse_qs

DEFAULT_TEXT = "겨울은 추워요.\n감기 조심하세요."  # app.DEFAULT_TEXT, without importing the app
NORMAL = "The big dog eats the fish."  # the next input after each hostile one


@dataclass(frozen=True)
class Hostile:
    name: str
    text: str | None = None  # typed into the sentence box
    query: dict[str, str | list[str]] = field(default_factory=dict)  # link parameters, decoded
    note: str = ""  # the page must say this (input cut or refused)
    literal: str = ""  # must never be rendered as markup
    every_view: bool = False  # also run on every view in AppTest (the representative subset)
    browser: bool = False  # also run in the real browser (the representative dozen)

    @property
    def source(self) -> str:
        """What ends up in the sentence box."""
        if self.text is not None:
            return self.text
        text = self.query.get("text", DEFAULT_TEXT)
        return text[-1] if isinstance(text, list) else text  # Streamlit reads the last value

    @property
    def wire_text(self) -> str | None:
        """The typed text as a browser can send it: lone surrogates become U+FFFD on the wire."""
        if self.text is None:
            return None
        return self.text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")

    def __str__(self) -> str:
        return self.name


def from_url(name: str, raw: str, **kw) -> Hostile:
    """A case from a raw query string, decoded the way Streamlit decodes it (parse_qs)."""
    parsed = parse_qs(raw, keep_blank_values=True)
    return Hostile(name, query={k: v[0] if len(v) == 1 else v for k, v in parsed.items()}, **kw)


def T(name: str, text: str, **kw) -> Hostile:  # noqa: N802 - reads like a table row
    return Hostile(name, text=text, **kw)


def Q(name: str, note: str = "", **query: str) -> Hostile:  # noqa: N802
    return Hostile(name, query=dict(query), note=note)


ASCII_CONTROLS = "".join(chr(i) for i in range(32)) + "\x7f"
LONG_PAGE = "The big dog eats the fish in the park. " * 2_600  # 101,400 characters
THOUSAND_LINES = "\n".join(f"Line {i} is cold." for i in range(1_000))
COMBINING = "a" + "".join(chr(0x300 + i % 0x70) for i in range(50))  # 50 marks on one letter

CASES: list[Hostile] = [
    # --- size and emptiness -------------------------------------------------------------
    T("empty", "", note="Type one or more sentences", browser=True),
    T("spaces", "     ", note="Type one or more sentences"),
    T("newlines", "\n\n\n\n", note="Type one or more sentences"),
    T("mixed_whitespace", " \t \n \r\n \u3000 \u00a0 ", note="Type one or more sentences"),
    T("one_char", "a"),
    T("one_hangul", "가"),
    T("one_dot", "."),
    T("100k_chars", LONG_PAGE, note="only the first 20,000", every_view=True, browser=True),
    T("1000_lines", THOUSAND_LINES, note="only the first 16", every_view=True),
    T("5000_char_word", "a" * 5_000, note="too long", every_view=True, browser=True),
    T("5000_hangul_word", "가" * 5_000, note="too long"),
    T("cjk_no_spaces", "漢字" * 3_000, note="too long"),
    T("17_lines_exact", "\n".join(["Winter is cold."] * 17), note="only the first 16"),
    # --- control characters and broken text -------------------------------------------
    T("ascii_controls", ASCII_CONTROLS + "Winter is cold.", note="control character",
      every_view=True, browser=True),
    T("nul", "Winter\x00 is cold.", note="control character"),
    T("only_controls", "\x00\x01\x02\x1b[31m", note="control character"),
    T("c1_controls", "Winter\x85 is\x9b cold.", note="control character"),
    T("ansi_escape", "\x1b[2J\x1b[31mred\x1b[0m", note="control character"),
    T("lone_high_surrogate", "abc\ud800def", every_view=True),
    T("lone_low_surrogate", "\udfff"),
    T("surrogate_pair_split", "x\ud83d", note=""),
    from_url("invalid_utf8_url", "text=%ff%fe"),
    from_url("cesu_surrogate_url", "text=%ed%a0%80abc"),
    from_url("overlong_utf8_url", "text=%c0%afWinter"),
    from_url("nul_in_url", "text=Winter%00cold", note="control character"),
    # --- scripts, emoji, invisible characters -----------------------------------------
    T("emoji_zwj", "👩‍👩‍👧‍👦 🏳️‍🌈 👨🏽‍💻", every_view=True, browser=True),
    T("skin_tones", "👍🏻👍🏼👍🏽👍🏾👍🏿 👋🏿"),
    T("flags", "🇰🇷🇺🇸🇯🇵"),
    T("combining_50", COMBINING, every_view=True),
    T("zalgo_hangul", "겨" + "\u0336" * 50 + "울은 추워요."),
    T("rtl_mixed_korean", "مرحبا بالعالم 겨울은 추워요 שלום עולם", every_view=True, browser=True),
    T("rtl_override", "Winter \u202eis cold\u202c."),
    T("hebrew_niqqud", "שָׁלוֹם עֲלֵיכֶם"),
    T("fullwidth_latin", "Ｗｉｎｔｅｒ ｉｓ ｃｏｌｄ．"),
    T("zero_width", "Win\u200bter\u200d is\u200c cold\ufeff.", every_view=True),
    T("only_zero_width", "\u200b\u200c\u200d\ufeff"),
    T("line_separators", "Winter is cold.\u2028겨울은 추워요.\u2029The dog eats.", browser=True),
    T("private_use_nonchars", "\ue000\uf8ff\ufffe\uffff"),
    T("astral_math", "𝐖𝐢𝐧𝐭𝐞𝐫 𝐢𝐬 𝐜𝐨𝐥𝐝"),
    T("tag_characters", "flag\U000e0067\U000e0062\U000e007f"),
    T("special_pieces", "<pad> <s> </s> <unk> <2en> <2ko> ▁", literal="<2ko>"),
    # --- markup the page must never interpret -----------------------------------------
    T("html", "<b>bold</b> <i>x</i>", literal="<b>bold</b>", every_view=True, browser=True),
    T("script_close", "</script><script>alert(1)</script>", literal="</script>",
      every_view=True, browser=True),
    T("html_comment", "<!-- Winter is cold.", literal="<!--"),
    T("img_onerror", "<img src=x onerror=alert(1)>", literal="<img", browser=True),
    T("javascript_url", "javascript:alert(document.cookie)", literal="javascript:"),
    T("iframe", "<iframe src=javascript:alert(1)></iframe>", literal="<iframe"),
    T("svg_onload", "<svg onload=alert(1)>", literal="<svg"),
    T("entities", "&lt;b&gt; &amp; &#x3C;script&#x3E;", literal="&lt;b&gt;"),
    T("style_tag", "<style>*{display:none}</style>", literal="<style>"),
    T("md_bold", "**bold** __under__", literal="**bold**", every_view=True, browser=True),
    T("md_italic", "*a* _b_ ~~c~~", literal="~~c~~"),
    T("latex_inline", "$x^2$ and $$\\int_0^1 f$$", literal="$x^2$", browser=True),
    T("streamlit_colour", ":red[text] :blue-background[x] :rainbow[y]", literal=":red[text]"),
    T("md_heading", "# heading\n## sub", literal="# heading"),
    T("md_link_js", "[link](javascript:alert(1))", literal="[link](javascript:alert(1))"),
    T("md_image_remote", "![x](http://example.com/x.png)", literal="![x]"),
    T("md_code_fence", "```python\nprint(1)\n```", literal="```"),
    T("md_table", "| a | b |\n|---|---|\n| 1 | 2 |", literal="| a | b |"),
    T("emoji_shortcodes", ":smile: :material/home:", literal=":material/home:"),
    T("backslashes", "\\n \\x00 \\\\ \\*", literal="\\x00"),
    T("format_strings", "{0} %s {{x}} ${7*7}", literal="{{x}}"),
    T("sql_quotes", "'; DROP TABLE users; -- \"", literal="DROP TABLE"),
    # --- links: wrong types, out of range, path tricks ------------------------------------
    Q("view_unknown", note="nonsense", view="nonsense"),
    Q("view_case", note="TOKENS", view="TOKENS"),
    Q("view_script", note="script", view="<script>alert(1)</script>"),
    Q("layer_negative", note="-1", view="attention", layer="-1"),
    Q("layer_huge", note="99999999999999999999", view="attention", layer="99999999999999999999"),
    Q("layer_superscript", note="²", view="attention", layer="²"),
    Q("layer_float", note="1.5", view="attention", layer="1.5"),
    Q("head_word", note="abc", view="attention", head="abc"),
    Q("head_hex", note="0x1", view="attention", head="0x1"),
    Q("head_spaces", note=" 1", view="attention", head=" 1"),
    Q("kind_unknown", note="bogus", view="attention", kind="bogus"),
    Q("kind_empty", note="Unknown attention kind", view="attention", kind=""),
    Q("lang_unknown", note="fr", lang="fr"),
    Q("lang_markup", note="Unknown language", lang="**ko**"),
    Q("ablate_garbage", note="Ignoring the heads", ablate="enc_self:x:y"),
    Q("ablate_out_of_range", note="enc_self:0:99", ablate="enc_self:0:99"),
    Q("ablate_superscript", note="Ignoring the heads", ablate="enc_self:0:²"),
    Q("ablate_flood", note="not knocked out",
      ablate=",".join(f"enc_self:{i}:0" for i in range(5, 3_000))),
    Q("ckpt_dotdot", note="../../etc/passwd", ckpt="../../etc/passwd"),
    Q("ckpt_absolute", note="/etc/passwd", ckpt="/etc/passwd"),
    Q("ckpt_home", note="~/.ssh", ckpt="~/.ssh"),
    Q("ckpt_hub_id", note="facebook/bart-base", ckpt="facebook/bart-base"),
    Q("ckpt_file_url", note="file:///etc/passwd", ckpt="file:///etc/passwd"),
    Q("ckpt_http", note="http://example.com/x", ckpt="http://example.com/x"),
    Q("ckpt_inside_dotdot", note="paper/../paper", ckpt="paper/../paper"),
    Q("ckpt_empty", note="''", ckpt=""),
    from_url("repeated_params", "view=tokens&view=masks&view=bogus", note="bogus"),
    from_url("empty_values", "view=&layer=&head=&kind=&lang=&ckpt=", note="Unknown view"),
    from_url("long_text_url", "text=" + "Winter%20is%20cold.%0A" * 20_000,
             note="only the first"),
    from_url("query_over_streamlit_limit", "text=" + "a" * 600_000),
    from_url("thousand_fields", "&".join(f"p{i}=x" for i in range(1_200)) + "&view=bogus"),
    from_url("embed_params", "embed=true&embed_options=show_toolbar&view=masks"),
    from_url("percent_markup", "text=%3Cscript%3Ealert(1)%3C%2Fscript%3E",
             literal="<script>"),
]

# --- zero tokens and position limits (issue 17): what other tokenizers make of text --------
# A BERT-style normalizer (clean_text, strip_accents) removes format characters and combining
# marks, so these reach some Hugging Face models as no tokens at all; OVER_POSITIONS is one
# sentence of ~600 words, past every position table here (32, 40) and the shipped 520.
OVER_POSITIONS = " ".join(["Winter is cold and the big dog eats the fish."] * 60)
ZERO_TOKEN_NAMES = ("only_zero_width", "only_combining", "format_only", "zero_width_lines")
CASES += [
    T("only_combining", "\u0301\u0300\u0302\u0308\u0327"),
    T("format_only", "\u00ad\u2060\u200e\u200f\u2061"),
    T("zero_width_lines", "\u200b\n\u00ad\u0301\nWinter is cold."),
    T("over_positions", OVER_POSITIONS, note="too long"),
]

BY_NAME = {c.name: c for c in CASES}
EVERY_VIEW = [c for c in CASES if c.every_view]
BROWSER = [c for c in CASES if c.browser]

assert len(BY_NAME) == len(CASES), "case names must be unique"
