"""Which ``alpha`` of LinearL2SVC gives SVMlin's supervised solution at ``-W``?

Builds SVMlin 1.0 (``linear_subprocess.py``), runs ``-A 1 -W W`` on pcmac's 50 labeled rows for several ``W``
and compares SVMlin's weights with ``LinearL2SVC`` at ``alpha = W / l`` and ``alpha = W * l`` (``l`` = 50),
and with scikit-learn's ``LinearSVC(C=1 / (2 W), loss="squared_hinge")``::

    python benchmarks/linear_alpha_mapping.py
"""

import argparse
import tempfile
from pathlib import Path

import linear_subprocess as lsp
import numpy as np
from _harness import RESULTS_DIR, Lines, ResultsFile, markdown_row, provenance, reductions, table_head
from sklearn.svm import LinearSVC

from skssl.datasets import load_pcmac
from skssl.svm import LinearL2SVC

DEFAULT_W = [0.05, 0.5, 5.0]


def rel_diff(w, b, w_ref, b_ref):
    """Max |difference| of ``(w, b)`` relative to max |``(w_ref, b_ref)``|."""
    a, r = np.append(w, b), np.append(w_ref, b_ref)
    return float(np.abs(a - r).max() / np.abs(r).max())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--svmlin-src", default=str(lsp.DEFAULT_SVMLIN_SRC))
    parser.add_argument("--W", type=float, nargs="+", default=DEFAULT_W)
    parser.add_argument("--out", default=None, help="default: benchmarks/results/linear_alpha_mapping.md")
    args = parser.parse_args(argv)
    results = ResultsFile(RESULTS_DIR / "linear_alpha_mapping.md", args.out, reduced=reductions(args, W=DEFAULT_W))
    with tempfile.TemporaryDirectory(prefix="skssl-svmlin-") as workdir:
        svmlin, how = lsp.build_svmlin(args.svmlin_src, workdir)
        if svmlin is None:
            print(f"SVMlin is needed for this comparison and could not be built: {how}")
            return
        pc = load_pcmac()
        labeled = pc.y_train != -1
        l = int(labeled.sum())
        examples, labels = Path(workdir) / "pcmac.examples", Path(workdir) / "pcmac.labels"
        lsp.write_svmlin_examples(pc.X_train, examples)
        lsp.write_svmlin_labels(pc.y_train, labels)
        header = ["SVMlin -W", "SVMlin test %", "LinearL2SVC alpha = W / l", "LinearL2SVC alpha = W * l"]
        header.append("LinearSVC C = 1 / (2 W)")
        log = Lines()
        log("# LinearL2SVC's alpha against SVMlin's -W (supervised mode -A 1) and LinearSVC's C", "", provenance(argv))
        log(
            "",
            f"pcmac, l = {l} labeled rows. SVMlin {how}. Cells: max |difference| of (w, b) relative to "
            "max |SVMlin's (w, b)|; test accuracy in brackets.",
            "",
            *table_head(header),
        )

        def acc(w, b):
            return 100 * np.mean((pc.X_test @ w + b > 0).astype(int) == pc.y_test)

        for W in args.W:
            s = lsp.run_svmlin(svmlin, examples, labels, workdir, algo=1, alpha=W, n_features=pc.X_train.shape[1])
            models = [LinearL2SVC(alpha=alpha, tol=1e-12).fit(pc.X_train, pc.y_train) for alpha in (W / l, W * l)]
            svc = LinearSVC(C=1 / (2 * W), dual=False, tol=1e-12, max_iter=100_000)
            models.append(svc.fit(pc.X_train[labeled], pc.y_train[labeled]))
            cells = [f"{W:g}", f"{acc(s['w'], s['b']):.1f}"]
            for m in models:
                w, b = m.coef_.ravel(), float(m.intercept_[0])
                cells.append(f"{rel_diff(w, b, s['w'], s['b']):.1e} ({acc(w, b):.1f})")
            log(markdown_row(cells))
        log(
            "",
            "SVMlin's supervised costs are 1 per row (not 1/l), so its objective is l times LinearL2SVC's "
            "at alpha = W / l; LinearSVC's is 1/(2 alpha) times it at C = 1 / (2 alpha l) = 1 / (2 W).",
        )
    results.finish(log.text())


if __name__ == "__main__":
    main()
