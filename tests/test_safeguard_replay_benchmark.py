"""benchmarks/safeguard_replay.py: the probe of the safeguard's check and the rules replayed from its log."""

import numpy as np
import pytest
from sklearn.preprocessing import StandardScaler

import skssl.svm._base as svm_base

from ._benchmarks import load_benchmark
from .svm._problems import bars_along_the_labels


@pytest.fixture(scope="module")
def replay():
    return load_benchmark("safeguard_replay")


def _record(scores, discordant, auto_checks=True, acc_semi=0.9, acc_supervised=0.8):
    return dict(
        scores=scores,
        discordant=discordant,
        auto_checks=auto_checks,
        acc_semi=acc_semi,
        acc_supervised=acc_supervised,
    )


def test_the_rules_decide_as_they_say(replay):
    ahead = _record([0.8, 0.7], [3.0, 1.0])
    tie = _record([0.7, 0.7], [2.0, 2.0])
    small_lead = _record([0.6, 0.7], [2.0, 4.0])  # c - b = 2 < sqrt(6): within one standard error
    clear_lead = _record([0.5, 0.8], [1.0, 7.0])  # c - b = 6 > sqrt(8)
    unchecked = _record(None, None)
    outside = _record([0.8, 0.7], [3.0, 1.0], auto_checks=False)

    def returns_supervised(rule, rec):
        return replay.accuracy_under(rule, rec) == rec["acc_supervised"]

    assert [returns_supervised("auto", r) for r in (ahead, tie, small_lead, clear_lead)] == [
        True,
        False,
        False,
        False,
    ]
    assert [returns_supervised("auto, ties fall back", r) for r in (ahead, tie, small_lead, clear_lead)] == [
        True,
        True,
        False,
        False,
    ]
    assert [returns_supervised("auto, margin 1 s.e.", r) for r in (ahead, tie, small_lead, clear_lead)] == [
        True,
        True,
        True,
        False,
    ]
    assert [returns_supervised("everywhere, margin 1 s.e.", r) for r in (ahead, tie, small_lead, clear_lead)] == [
        True,
        True,
        True,
        False,
    ]
    # No scores (too few labels for two folds): no rule but "supervised only" falls back.
    assert [returns_supervised(rule, unchecked) for rule in replay.RULES] == [False] * 7 + [True]
    # Where "auto" keeps the agreement alone, only the rules that check everywhere fall back.
    assert not any(returns_supervised(rule, outside) for rule in ("auto", "auto, margin 1 s.e."))
    assert all(returns_supervised(rule, outside) for rule in ("everywhere", "everywhere, margin 1 s.e."))
    assert not returns_supervised("agreement", ahead)


def test_each_estimator_s_built_rule_is_its_own(replay):
    from skssl.svm import DeterministicAnnealingSVC, PottsDeterministicAnnealingSVC, TransductiveSVC

    margins = {"tsvm": TransductiveSVC, "da": DeterministicAnnealingSVC, "potts": PottsDeterministicAnnealingSVC}
    for method, Estimator in margins.items():
        margin = Estimator._check_margin
        expected = "auto" if margin is None else f"auto, margin {margin:g} s.e."
        assert replay.BUILT[method] == expected
        assert replay.CHECKED[method] == expected.replace("auto", "everywhere")


def test_replay_gives_each_sets_mean_gain_over_its_baseline(replay):
    records = [
        dict(
            _record([0.8, 0.7], [3.0, 1.0], acc_semi=0.9, acc_supervised=0.8), method="tsvm", group="dev", dataset="a"
        ),
        dict(
            _record([0.7, 0.8], [1.0, 3.0], acc_semi=0.7, acc_supervised=0.6), method="tsvm", group="dev", dataset="a"
        ),
    ]
    gains = replay.replay(records, {"a": 0.75})
    # TSVM's rule: the first draw falls back (0.8), the second keeps the semi-supervised model (0.7).
    assert gains["tsvm", "dev", "auto"] == pytest.approx({"a": 0.0})
    assert gains["tsvm", "dev", "agreement"] == pytest.approx({"a": 5.0})
    assert gains["tsvm", "dev", "supervised only"] == pytest.approx({"a": -5.0})


def test_the_probe_of_da_replays_its_margin(replay):
    """Bars side by side, where DA's model leads the supervised one by one held-out row: the margin falls back."""
    X, y, y_semi = bars_along_the_labels(0)
    rec = replay.probe_fit(replay.uv.Split(X, y_semi, X, y, []), "da")
    # The plain comparison would keep DA's model, the margin returns the supervised one, and they differ here.
    assert not replay.RULES["everywhere"](rec) and replay.RULES["everywhere, margin 1 s.e."](rec)
    assert rec["acc_semi"] != rec["acc_supervised"]
    assert rec["acc_checked"] == replay.accuracy_under(replay.CHECKED["da"], rec) == rec["acc_supervised"]


@pytest.mark.parametrize(("method", "seed"), [("tsvm", 0), ("tsvm", 1), ("tsvm", 2), ("da", 0), ("da", 1)])
def test_the_probe_logs_what_the_check_decided_and_restores_skssl(replay, method, seed):
    """The replay of the estimator's rule with the check everywhere is the checked fit's own test accuracy."""
    rng = np.random.RandomState(seed)
    n = 240
    y = rng.randint(0, 2, n)
    X = rng.randn(n, 4) + 0.8 * y[:, None] * rng.choice([-1, 1], 4)
    y_semi = np.where(rng.rand(n) < 0.15, y, -1)
    y_semi[:2], y_semi[2:4] = 0, 1  # two labels of each class at least
    split = replay.uv.Split(X[:180], y_semi[:180], X[180:], y[180:], [StandardScaler()])
    fall_back, scores = svm_base._LinearFitMixin._fall_back_where_held_out_labels_say, svm_base.compare_on_folds
    rec = replay.probe_fit(split, method)
    assert svm_base._LinearFitMixin._fall_back_where_held_out_labels_say is fall_back
    assert svm_base.compare_on_folds is scores
    assert rec["scores"] is not None and rec["n_features"] == 4 and rec["auto_checks"]
    assert rec["acc_checked"] == replay.accuracy_under(replay.CHECKED[method], rec)
    b, c = rec["discordant"]
    weight = round((rec["scores"][0] - rec["scores"][1]) * rec["n_labeled"])
    assert b - c == pytest.approx(weight)  # the supervised model's lead, in held-out rows


def test_the_probe_refuses_a_held_back_set_not_named_by_its_group(replay, capsys):
    eighth = next(d.name for d in replay.uv.DATASETS if d.group in replay.uv.HELD_BACK)
    with pytest.raises(SystemExit):
        replay.main(["--methods", "da", "--only", eighth, "--log", "unused.jsonl"])
    assert "held back" in capsys.readouterr().err
