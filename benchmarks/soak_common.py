"""What the soak (bench_soak) is told and what it finds: its settings (SoakConfig), its
result and pass rule (SoakResult), and the limits that rule uses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
# the two translators, and the language model for the views only it fills (training,
# generation; issue 41): every view of the bar is drawn on a model it applies to
CHECKPOINTS = ("paper", "seed001", "lm")
HEADS_PARTS = ("stats", "detectors")  # heads › detectors runs the model on random ids
HEADROOM_MB = 600  # the allowance above the Trace cache budget
# Checkpoints that are Hugging Face folders: opening one imports transformers, a fixed cost the
# 600 MB (set when the lab ran only its own models) never covered. The soak measures that import
# in a fresh process and adds it to the bound, and says so (soak_memory.library_mb).
HF_CHECKPOINTS = frozenset({"lm"})
LONG_MODEL = "soaklong"  # the random long-context model long inputs go to (bench_soak builds it)
SLOPE_LIMIT_MB = 5.0  # per 100 inputs: 50 MB over the last 1,000 inputs
KINDS = ("enc_self", "dec_self", "cross")


@dataclass
class SoakConfig:
    inputs: int = 2_000
    every: int = 100  # RSS series interval, in inputs (printed)
    probe: int = 20  # RSS sample interval for the peak and the slopes
    sessions: int = 8  # open at a time
    churn: int = 25  # one session closes and a new one opens every `churn` inputs
    max_lines: int = 16
    max_words: int = 520  # words per line at most (pieces are cut at 519 anyway)
    stress_share: float = 0.1  # inputs drawn up to the limits; the rest are classroom-sized
    ablate_share: float = 0.2
    trace_cache_mb: float | None = None  # None: ATTN_TRACE_CACHE_MB or the app's default
    seed: int = 0
    checkpoints: tuple[str, ...] = CHECKPOINTS  # each input picks one at random
    # long mode (issue 41): this share of inputs pastes a long text (LONG_FROM + 1 ..
    # long_max pieces, log-uniform) into the attention view of LONG_MODEL, a random rotary
    # model built for the soak; the session keeps that LongTrace, held against the gate
    long_share: float = 0.02
    long_max: int = 8_192


@dataclass
class SoakResult:
    config: dict
    samples: list[tuple[int, float]] = field(default_factory=list)  # (inputs done, RSS MB)
    # every `probe` inputs; the printed series is every `every`th of them
    cached_mb: list[float] = field(default_factory=list)  # the Trace cache's bytes at each sample
    trace_cache_mb: float = 0.0
    warmup: int = 0
    peak_after_warmup_mb: float = 0.0
    slope_mb_per_100: float = 0.0
    outside_slope_mb_per_100: float = 0.0  # of RSS minus the Trace cache's bytes (diagnostic)
    peak_outside_mb: float = 0.0  # the most RSS held beyond the Trace cache after warm-up
    caches: dict = field(default_factory=dict)  # name -> {entries, bytes, bound}
    cache_violations: list[str] = field(default_factory=list)
    closed_sessions: int = 0
    closed_alive: int = 0
    states_alive: int = 0  # Streamlit SessionState objects alive after every session closed
    latency_s: list[float] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)  # view -> inputs with an error box
    exceptions: list[str] = field(default_factory=list)
    gate: dict = field(default_factory=dict)  # admission gate at the end: nothing in flight
    long_inputs: int = 0  # inputs that pasted a long text
    long_drawn: int = 0  # of them, those whose page said it was in long mode
    long_pieces: list[int] = field(default_factory=list)  # their lengths, in pieces
    wall_s: float = 0.0
    library_mb: float = 0.0  # transformers' import, measured, where an HF checkpoint is mixed in

    @property
    def bound_mb(self) -> float:
        """The judged peak: the Trace cache's budget + HEADROOM_MB + library_mb."""
        return self.trace_cache_mb + HEADROOM_MB + self.library_mb

    @property
    def passed(self) -> bool:
        return (self.peak_after_warmup_mb <= self.bound_mb
                and abs(self.outside_slope_mb_per_100) <= SLOPE_LIMIT_MB
                and not self.cache_violations and self.closed_alive == 0
                and self.states_alive == 0
                and not self.exceptions and not self.gate.get("running")
                and not self.gate.get("waiting") and not self.gate.get("held")
                and self.long_drawn == self.long_inputs)
