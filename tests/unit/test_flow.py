"""Information-flow routes: a hand-worked graph, then properties on a real (tiny) model."""

from __future__ import annotations

import numpy as np
import pytest

from model import Trace, capture
from model.analysis.flow import flow_routes, incoming


def _hand_trace() -> Trace:
    """One encoder and one decoder layer, one head, two tokens a side (see the test)."""
    d = 2
    hid_e, hid_d = np.zeros((2, 1, 2, d), np.float32), np.zeros((2, 1, 2, d), np.float32)
    hid_d[0, 0, 1] = [3, 4]  # ‖x‖ = 5
    hid_e[0, 0, 0] = [0, 1]  # ‖x‖ = 1
    enc, dec, cross = (np.zeros((1, 1, 1, 2, 2), np.float32) for _ in range(3))
    dec[0, 0, 0, 1] = [1, 2]
    cross[0, 0, 0, 1] = [2, 0]
    enc[0, 0, 0, 0] = [1, 3]
    no = np.zeros((1, 2, 2), bool)
    return Trace(src_tokens=[["▁a", "</s>"]], tgt_tokens=[["<s>", "▁b"]],
                 src_ids=np.array([[5, 3]]), tgt_ids=np.array([[2, 6]]),
                 masks={"enc_self": no, "dec_self": no, "cross": no}, scores={}, attn={},
                 q={}, k={}, v={}, hidden={"enc": hid_e, "dec": hid_d},
                 pos_table=np.zeros((4, d), np.float32), logits=None,
                 norms={"enc_self": enc, "dec_self": dec, "cross": cross})


def test_a_hand_worked_graph():
    tr = _hand_trace()
    # into (dec, 1, 1): residual 5, self 1 and 2, cross 2 and 0 -> total 10
    shares = {(e.kind, e.src): round(e.weight, 6) for e in incoming(tr, 0, ("dec", 1, 1))}
    assert shares == {("residual", ("dec", 0, 1)): 0.5, ("dec_self", ("dec", 0, 0)): 0.1,
                      ("dec_self", ("dec", 0, 1)): 0.2, ("cross", ("enc", 1, 0)): 0.2}
    g = flow_routes(tr, 0, 1, threshold=0.15)
    got = {(e.kind, e.src, e.dst, round(e.weight, 6)) for e in g.edges}
    # then into (enc, 1, 0): residual 1, self 1 and 3 -> total 5
    assert got == {("residual", ("dec", 0, 1), ("dec", 1, 1), 0.5),
                   ("dec_self", ("dec", 0, 1), ("dec", 1, 1), 0.2),
                   ("cross", ("enc", 1, 0), ("dec", 1, 1), 0.2),
                   ("residual", ("enc", 0, 0), ("enc", 1, 0), 0.2),
                   ("enc_self", ("enc", 0, 0), ("enc", 1, 0), 0.2),
                   ("enc_self", ("enc", 0, 1), ("enc", 1, 0), 0.6)}
    assert g.nodes == {("dec", 1, 1), ("dec", 0, 1), ("enc", 1, 0), ("enc", 0, 0),
                       ("enc", 0, 1)}
    assert flow_routes(tr, 0, 1, threshold=0.55).edges == []


@pytest.fixture(scope="module")
def trace(bundle):
    return capture(bundle, ["the cat eats fish every day .", "winter is cold"],
                   ["고양이는 매일 생선을 먹어요.", "겨울은 추워요."], target_lang="ko",
                   names=["norms", "hidden"])


def _two_head_trace() -> Trace:
    """Two sentences, two heads, a 1-layer encoder and a 2-layer decoder; sentence 1 is padded
    (3 target, 2 source tokens) and its padding slots carry huge norms that must be ignored.
    Sentence 0 is filled with ones so that reading the wrong sentence shows."""
    d, pad = 2, 100.0
    hid_e = np.ones((2, 2, 3, d), np.float32)
    hid_d = np.ones((3, 2, 4, d), np.float32)
    enc = np.ones((1, 2, 2, 3, 3), np.float32)
    dec = np.ones((2, 2, 2, 4, 4), np.float32)
    cross = np.ones((2, 2, 2, 4, 3), np.float32)
    for arr in (hid_e, hid_d, enc, dec, cross):
        arr[:, 1] = 0.0
    enc[:, 1, :, :, 2] = dec[:, 1, :, :, 3] = cross[:, 1, :, :, 2] = pad  # padded keys
    # into (dec, 2, 2): residual ‖(6, 8)‖ = 10; self heads (1, 4, 0) and (3, 0, 2); cross heads
    # (0, 5) and (5, 0): total 10 + 10 + 10 = 30
    hid_d[1, 1, 2] = [6, 8]
    dec[1, 1, 0, 2, :3] = [1, 4, 0]
    dec[1, 1, 1, 2, :3] = [3, 0, 2]
    cross[1, 1, 0, 2, :2] = [0, 5]
    cross[1, 1, 1, 2, :2] = [5, 0]
    # into (dec, 1, 2): residual 3, self head 0 from key 0: 1 -> total 4
    hid_d[0, 1, 2] = [0, 3]
    dec[0, 1, 0, 2, :3] = [1, 0, 0]
    # into (dec, 1, 1): residual 2, cross head 1 from key 1: 8 -> total 10
    hid_d[0, 1, 1] = [2, 0]
    cross[0, 1, 1, 1, :2] = [0, 8]
    # into (dec, 1, 0): nothing at all (total 0: no edges)
    # into (enc, 1, 0): residual 2, self heads (0, 6) and (2, 0) -> total 10
    hid_e[0, 1, 0] = [0, 2]
    enc[0, 1, 0, 0, :2] = [0, 6]
    enc[0, 1, 1, 0, :2] = [2, 0]
    # into (enc, 1, 1): residual ‖(3, 4)‖ = 5 alone
    hid_e[0, 1, 1] = [3, 4]
    no_e, no_d, no_c = (np.zeros((2, 3, 3), bool), np.zeros((2, 4, 4), bool),
                        np.zeros((2, 4, 3), bool))
    return Trace(src_tokens=[["▁a", "▁b", "</s>"], ["▁c", "</s>"]],
                 tgt_tokens=[["<s>", "▁x", "▁y", "▁z"], ["<s>", "▁u", "▁v"]],
                 src_ids=np.array([[5, 6, 3], [7, 3, 0]]),
                 tgt_ids=np.array([[2, 8, 9, 10], [2, 11, 12, 0]]),
                 masks={"enc_self": no_e, "dec_self": no_d, "cross": no_c}, scores={},
                 attn={}, q={}, k={}, v={}, hidden={"enc": hid_e, "dec": hid_d},
                 pos_table=np.zeros((4, d), np.float32), logits=None,
                 norms={"enc_self": enc, "dec_self": dec, "cross": cross})


def test_a_two_head_two_layer_graph_with_padding():
    """Unequal weights worked by hand (see _two_head_trace): heads into one key add up, the
    edge names its larger head, padded keys and the other sentence are never read, and the
    walk goes down both stacks, visiting (enc, 1, 1) once although two edges reach it."""
    tr = _two_head_trace()
    into_top = {(e.kind, e.src): (e.weight, e.head) for e in incoming(tr, 1, ("dec", 2, 2))}
    want_top = {("residual", ("dec", 1, 2)): (10 / 30, -1),
                ("dec_self", ("dec", 1, 0)): (4 / 30, 1),  # heads 1 + 3, head 1 larger
                ("dec_self", ("dec", 1, 1)): (4 / 30, 0),  # 4 + 0
                ("dec_self", ("dec", 1, 2)): (2 / 30, 1),
                ("cross", ("enc", 1, 0)): (5 / 30, 1),
                ("cross", ("enc", 1, 1)): (5 / 30, 0)}
    assert set(into_top) == set(want_top)
    for key, (weight, head) in want_top.items():
        assert into_top[key][0] == pytest.approx(weight, abs=1e-9), key
        assert into_top[key][1] == head, key
    g = flow_routes(tr, 1, threshold=0.1)
    assert g.target == ("dec", 2, 2)
    got = sorted((e.kind, e.src, e.dst, round(e.weight, 9), e.head) for e in g.edges)
    want = sorted([
        ("residual", ("dec", 1, 2), ("dec", 2, 2), round(1 / 3, 9), -1),
        ("dec_self", ("dec", 1, 0), ("dec", 2, 2), round(2 / 15, 9), 1),
        ("dec_self", ("dec", 1, 1), ("dec", 2, 2), round(2 / 15, 9), 0),
        ("cross", ("enc", 1, 0), ("dec", 2, 2), round(1 / 6, 9), 1),
        ("cross", ("enc", 1, 1), ("dec", 2, 2), round(1 / 6, 9), 0),
        ("residual", ("dec", 0, 2), ("dec", 1, 2), 0.75, -1),
        ("dec_self", ("dec", 0, 0), ("dec", 1, 2), 0.25, 0),
        ("residual", ("dec", 0, 1), ("dec", 1, 1), 0.2, -1),
        ("cross", ("enc", 1, 1), ("dec", 1, 1), 0.8, 1),
        ("residual", ("enc", 0, 0), ("enc", 1, 0), 0.2, -1),
        ("enc_self", ("enc", 0, 0), ("enc", 1, 0), 0.2, 1),
        ("enc_self", ("enc", 0, 1), ("enc", 1, 0), 0.6, 0),
        ("residual", ("enc", 0, 1), ("enc", 1, 1), 1.0, -1),
    ])
    assert got == want
    assert incoming(tr, 1, ("dec", 1, 0)) == []  # nothing flows in: no edge, no division by 0


def test_edges_never_come_from_padding(trace, bundle):
    for side, n_layers in (("enc", 2), ("dec", 2)):
        n = trace.length("src" if side == "enc" else "tgt", 1)
        for depth in range(1, n_layers + 1):
            for i in range(n):
                edges = incoming(trace, 1, (side, depth, i))
                assert edges and all(0 < e.weight <= 1 for e in edges)
                assert all(e.src[2] < trace.length("src" if e.src[0] == "enc" else "tgt", 1)
                           for e in edges)


def test_routes_reach_the_source_through_cross_attention_and_shrink_with_the_threshold(trace):
    full = flow_routes(trace, 0, threshold=0.0)
    assert full.target == ("dec", 2, trace.length("tgt", 0) - 1)
    kinds = {e.kind for e in full.edges}
    assert kinds == {"residual", "dec_self", "cross", "enc_self"}
    assert {("enc", 0, s) for s in range(trace.length("src", 0))} <= full.nodes
    previous = {(e.src, e.dst, e.kind) for e in full.edges}
    for threshold in (0.02, 0.1, 0.3):
        g = flow_routes(trace, 0, threshold=threshold)
        now = {(e.src, e.dst, e.kind) for e in g.edges}
        assert now <= previous and all(e.weight >= threshold for e in g.edges)
        previous = now


def test_bad_requests_say_what_is_wrong(trace, bundle):
    with pytest.raises(ValueError, match="position"):
        flow_routes(trace, 0, 99)
    with pytest.raises(ValueError, match="threshold"):
        flow_routes(trace, 0, threshold=2)
    with pytest.raises(ValueError, match="norms"):
        flow_routes(capture(bundle, ["winter is cold"], names=["attn"]))
    enc_only = flow_routes(trace, 0, 2, threshold=0.1, side="enc")
    assert enc_only.target == ("enc", 2, 2) and all(e.kind != "cross" for e in enc_only.edges)


def test_figure_draws_every_kept_edge_and_escapes_tokens(trace):
    import plotly.graph_objects as go

    from viz.flow import flow_figure

    g = flow_routes(trace, 0, threshold=0.01)
    g.tokens["enc"] = ["</script><img src=x onerror=alert(1)>"] * len(g.tokens["enc"])
    fig = go.Figure(flow_figure(g).to_dict())  # plotly validates every property
    lines = [t for t in fig.data if t.mode == "lines"]
    assert sum(list(t.x).count(None) for t in lines) == len(g.edges)
    names = {"residual": "residual", "enc_self": "encoder self-attention",
             "dec_self": "decoder self-attention", "cross": "cross-attention"}
    assert len({e.kind for e in g.edges}) == 4
    assert sorted(t.name for t in lines if t.showlegend) == sorted(
        names[k] for k in {e.kind for e in g.edges})
    text = " ".join(str(t.text) for t in fig.data if t.text is not None)
    assert "<img" not in text and "&lt;img" in text
