"""Sphinx extension: the benchmark results pages come from the scripts' output.

Each ``benchmarks/results/*.md`` file (written by the matching
``benchmarks/*.py`` script) is copied at build time into
``docs/benchmarks/_generated/`` so that ``docs/benchmarks.rst`` can include it
with MyST. A missing results file becomes a short note naming the script to
run, so the docs build before any benchmark has run.
"""

from pathlib import Path

RESULTS = (
    "linear_vs_svmlin",
    "linear_vs_svmlin_reuters",
    "defaults_vs_svmlin_20ng",
    "defaults_vs_svmlin_polarity",
    "defaults_vs_svmlin_20ng_da",
    "defaults_vs_svmlin_polarity_da",
    "defaults_profile",
    "block_products",
    "linear_scaling",
    "linear_scaling_20ng",
    "dask_scaling",
    "linear_scaling_memory",
    "linear_scaling_memory_njobs2",
    "potts_newsgroups",
    "potts_time",
    "potts_time_20_1",
    "potts_time_all",
    "deep_ssl",
    "deep_time",
    "deep_long_tail",
    "curriculum",
    "when_to_use",
    "user_value",
    "user_value_safeguard",
    "user_value_unseen",
    "user_value_unseen_before",
    "user_value_uniform",
    "user_value_cross_validation",
    "user_value_fresh4_agreement",
    "user_value_fresh5_cross_validation",
    "user_value_fresh5_agreement",
    "user_value_fresh6_cross_validation",
    "safeguard_replay_tsvm",
    "safeguard_replay_tsvm_fresh7",
    "safeguard_replay_da",
    "safeguard_replay_da_fresh7",
    "calibration",
)


def _copy_results(app):
    docs = Path(app.srcdir)
    source = docs.parent / "benchmarks" / "results"
    target = docs / "benchmarks" / "_generated"
    target.mkdir(parents=True, exist_ok=True)
    for name in RESULTS:
        result = source / f"{name}.md"
        if result.exists():
            text = result.read_text(encoding="utf-8")
        else:
            text = f"*No results yet: run* `python benchmarks/{name}.py` *from the repository root.*\n"
        out = target / f"{name}.md"
        if not out.exists() or out.read_text(encoding="utf-8") != text:
            out.write_text(text, encoding="utf-8")


def setup(app):
    app.connect("builder-inited", _copy_results)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
