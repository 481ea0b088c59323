"""Parameter and attribute text shared by the docstrings of :mod:`skssl.svm._classes`.

The four linear estimators document the same ``alpha="auto"`` and
``intercept_scaling="auto"`` rules, the
same ``class_weight``, ``safeguard`` and (one-vs-rest) ``n_jobs``, and the
same fitted model, and TSVM and DA show the same example; that text is
written once here. A class docstring names a
block with a placeholder ``%(name)s`` on a line of its own and
:func:`fill_doc` (a class decorator) puts the block there, indented like the
placeholder (:func:`skssl.utils._docstrings.insert_blocks`), so the runtime
``__doc__`` -- read by ``help``, numpydoc and sphinx autodoc -- is complete.
What differs between the estimators (the first line of ``alpha``, the
meaning of ``tol`` and ``max_iter`` ...) stays in each class's docstring.
"""

from ..utils._docstrings import insert_blocks

_ALPHA_AUTO = """\
``"auto"`` (the default) sets it from the data:
{rule}, with the mean over {rows},
so that one default suits tf-idf rows (norm 1) and standardized
tabular rows (squared norm = number of features) alike. The labeled
rows then check it: a tenth or a hundredth of it is used instead
where the supervised l2-SVM at that value classifies the labeled rows
better in cross-validation by more than one standard error (nearly
collinear features, whose classes differ in directions of little
variance). The value used is stored in ``alpha_``. A number is used
as given (no check); it must be
at least 2.2e-16 (float64's machine epsilon): below it ``1 + alpha ==
1``, the regularization is lost to rounding next to the loss (whose
curvature along the bias is 1) and ``fit`` raises a ``ValueError``."""

_INTERCEPT_SCALING = """\
intercept_scaling : float or "auto", default="auto"
    The bias is the weight of a constant feature of this value, regularized
    like the other weights, as in scikit-learn's ``LinearSVC``: its penalty
    is ``alpha / intercept_scaling**2`` times ``b**2``, so a larger value
    shrinks the bias less. ``"auto"`` is 1 (SVMlin's objective, the bias
    regularized like a weight: the score at the origin is pulled towards
    0) when ``alpha`` is a number, and with ``alpha="auto"`` on rows whose
    mean is off the origin (tf-idf, counts, pixels, where the origin means
    "no evidence"). With ``alpha="auto"`` on centred rows (standardized
    features: the mean within a tenth of the rows' root mean squared norm
    of the origin, over {rows}), it is ``10 * sqrt(mean_i |x_i|^2)``: the
    bias is then practically not regularized, as in ``LogisticRegression``,
    and a class imbalance or a one-vs-rest problem gets the bias it needs.
    The value used is stored in ``intercept_scaling_``."""

_INITIAL_TEMPERATURE = """\
initial_temperature : float or "auto", default="auto"
    The first temperature of the annealing, in units of
    ``unlabeled_weight``. At SVMlin's 10 (a hot start) the first beliefs
    are nearly uniform and the annealing looks for the lowest objective
    anywhere; where the classes do not follow the clusters of the data
    (sentiment rather than topic) that minimum is a wrong split. At 0.1 (a
    cold start) the beliefs follow the supervised weights at once and the
    annealing stays near them. ``"auto"``: for a binary
    :class:`~skssl.svm.DeterministicAnnealingSVC` with ``alpha="auto"``, the start that labels
    more of the labeled rows right when their labels are hidden half by half
    (the cold one must label at least two more right; four more fits
    without the safeguard); SVMlin's 10 otherwise (a given ``alpha``,
    multi-class problems, Potts DA). It costs about twice the
    CPU of a fit. The start used is ``initial_temperature_``."""

_SAFEGUARD = """\
safeguard : {"auto", "agreement", "cross_validation"} or None, default="auto"
    Follow the unlabeled rows only where the answer is stable, in the
    spirit of S4VM (Li & Zhou, IEEE TPAMI 2015). ``"agreement"`` fits two
    more candidates with the class fractions moved by one standard
    error of their estimate from the labeled rows; the returned model is
    the l2-SVM fitted to the labeled rows and the unlabeled rows on whose
    label all three agree (the same objective, labels fixed; with more
    than two classes on standardized rows, one joint l2-SVM over all
    classes instead of one per class); the disputed rows are left out. A
    fourth candidate reaches the same objective by a second optimizer
    (the annealing estimators: ``TransductiveSVC`` with the same
    parameters; ``TransductiveSVC``: itself without SVMlin's annealing of
    the unlabeled weight), and the rows where it disagrees are left out
    too. It costs about 3 times the CPU of a fit without it.
    ``"cross_validation"`` then asks the labels, as
    :class:`~skssl.self_training.CurriculumLabelingClassifier`'s safeguard
    does: the labeled rows are split into up to 5 folds; for each, this
    estimator (without safeguard) is fitted with the fold's labels hidden
    and the supervised :class:`~skssl.svm.LinearL2SVC` on the other folds'
    labeled rows, and both classify the held-out rows. If the supervised
    model classifies more of them correctly, it replaces the
    semi-supervised one (refitted on all labeled rows);
    :class:`~skssl.svm.DeterministicAnnealingSVC` asks more of its own
    model and keeps it only if it classifies more held-out rows correctly
    by over one standard error of the difference (``c - b > sqrt(b + c)``,
    ``b`` and ``c`` the rows that only the supervised or only the
    semi-supervised model classifies correctly).
    ``safeguard_scores_`` holds the two accuracies. That adds about 5 fits
    without safeguard. ``"auto"`` is ``"cross_validation"`` when the
    distinct labeled rows outnumber the features (tabular data, where
    classes often overlap without a gap of low density between them) and
    ``"agreement"`` otherwise (text and other data with more features
    than labels, where a linear model fits any labeling of the labeled
    rows and a few dozen held-out labels are a noisy judge of a large
    gain), on Dask arrays as in memory. The safeguard acts only
    when ``positive_fraction`` is estimated (``None``): a given fraction
    is taken as known. ``None`` returns the semi-supervised fit itself, as
    SVMlin does."""

_CLASS_WEIGHT = """\
class_weight : dict, "balanced" or None, default=None
    Weights of the classes of the labeled rows, as in scikit-learn's
    ``LinearSVC``: ``{label: weight}`` or ``"balanced"`` (``n_labeled /
    (n_classes * count)``, counted over the labeled rows). They multiply
    ``sample_weight`` on the labeled rows; unlabeled rows are not
    affected."""

_BUSY_CORES = """\
On a machine whose cores are busy with other work, a fit times its
iterations on one thread and on all and keeps the faster (the result does
not depend on it), so ``n_jobs=2`` is then not much slower than
``n_jobs=1``."""

_N_JOBS_ONE_VS_REST = """\
n_jobs : int, default=None
    Threads for the fit (``None`` means 1, ``-1`` all cores; joblib's
    convention). Up to ``n_jobs`` one-vs-rest problems run at once, and
    each running problem computes its sparse products ``X @ w`` and
    ``X.T @ z`` over row blocks with ``n_jobs // (problems running)``
    threads; a binary problem gets all ``n_jobs`` threads for its
    products. The result is the same up to rounding.
    %(busy_cores)s"""

_CLASSES_ALPHA = """\
classes_ : ndarray of shape (n_classes,)
    Labeled classes.
alpha_ : float
    The regularization used: ``alpha``, or its value for ``"auto"``.
intercept_scaling_ : float
    The ``intercept_scaling`` used: the given number, or its value for
    ``"auto"``."""

_MODEL_ONE_VS_REST = f"""\
{_CLASSES_ALPHA}
coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
    Weights; for a binary problem ``classes_[1]`` is the positive class.
intercept_ : ndarray of shape (1,) or (n_classes,)
    Biases.
dask_rounds_ : int
    Only after a fit on a Dask array: the round trips between the client
    and the workers (one per CGLS iteration, a few more per Newton step);
    see "Fitting on a Dask cluster" in the user guide."""

_SAFEGUARD_AGREEMENT = """\
safeguard_agreement_ : float or None
    With the safeguard: the fraction of the unlabeled rows on which the
    four candidates agree (the others were left out of the refit).
    ``None`` when it did not act: ``safeguard=None``, a given
    ``positive_fraction``, or no unlabeled rows; ``None`` also where the
    cross-validated check returned the supervised l2-SVM
    (``safeguard_fell_back_``), which runs first: the candidates are not
    fitted then.
    ``coef_``, ``intercept_`` and ``transduction_`` are those of the
    returned (safe) model, while ``objective_`` and ``n_iter_`` describe
    the semi-supervised solve at the given or estimated class fractions.
safeguard_scores_ : ndarray of shape (2,) or None
    When the safeguard's cross-validated check ran (``"cross_validation"``,
    or ``"auto"`` with more distinct labeled rows than features): the
    cross-validated accuracy, on the labeled rows, of the supervised
    l2-SVM and of this estimator, over the folds fitted (the check stops
    once the folds left could not change its outcome). ``TransductiveSVC`` and
    ``PottsDeterministicAnnealingSVC`` returned the supervised model when
    the first is higher, ``DeterministicAnnealingSVC`` unless the second is
    higher by over one standard error of the difference (``verbose`` prints
    the rows behind it). ``None`` when the check did not run:
    ``safeguard="agreement"`` or ``None``, ``"auto"`` with no more distinct
    labeled rows than features, a given ``positive_fraction``, no
    unlabeled rows, or labeled rows too few for two folds.
safeguard_fell_back_ : bool or None
    Whether that check returned the supervised l2-SVM fitted on the
    labeled rows (``True``: ``coef_`` and ``intercept_`` are that model's)
    or kept this estimator's model (``False``). ``None`` when the check
    did not run (``safeguard_scores_`` is ``None``)."""

_TRANSDUCTION = """\
transduction_ : ndarray of shape (n_samples,)
    Labels of the training rows (predictions for the unlabeled ones); a
    lazy Dask array after a fit on a Dask array."""

_N_FEATURES_IN = """\
n_features_in_ : int
    Number of features seen in ``fit``."""

#: The example of the two binary semi-supervised estimators; ``{name}`` is the class.
_EXAMPLE_TRANSDUCTION = """\
>>> import numpy as np
>>> from skssl.svm import {name}
>>> X = np.array([[-2.0], [-1.8], [-1.5], [1.5], [1.8], [2.0]])
>>> y = np.array([0, -1, -1, -1, -1, 1])
>>> clf = {name}(alpha=1e-2).fit(X, y)
>>> clf.transduction_
array([0, 0, 0, 1, 1, 1])"""

_INITIAL_TEMPERATURE_USED = """\
initial_temperature_ : float
    The first temperature the annealing used, over ``unlabeled_weight``:
    ``initial_temperature`` itself, or the start ``"auto"`` chose."""

_CLASS_FRACTIONS_USED = """\
class_fractions_ : ndarray of shape (n_classes,)
    The fraction of each class among the unlabeled rows that the solve
    enforced, in ``classes_`` order: ``positive_fraction`` when given, else
    the estimate (from the labeled rows, or from clusters of the rows).
    {how}
    Given back with ``alpha_``, ``intercept_scaling_``, the annealing's
    ``initial_temperature_`` and ``safeguard=None``, it reproduces the fit's
    solve, the model before the safeguard (in memory; a fit on a Dask array
    does not set it)."""

_ONE_VS_REST_FRACTIONS = (
    "Each binary problem's positive fraction is its class's entry: pass\n"
    "    ``positive_fraction=class_fractions_[1]`` for two classes, the whole\n"
    "    array for more."
)

#: The blocks, by placeholder name.
_BLOCKS = {
    "alpha_auto": _ALPHA_AUTO.format(
        rule="``mean_i |x_i|^2 (1 + unlabeled_weight) / (n_labeled + unlabeled_weight n_unlabeled)``",
        rows="all rows of the fit",
    ),
    "alpha_auto_labeled": _ALPHA_AUTO.format(
        rule="``mean_i |x_i|^2 / n_labeled``", rows="the labeled rows (the rows it learns from)"
    ),
    "intercept_scaling": _INTERCEPT_SCALING.format(rows="all rows of the fit"),
    "intercept_scaling_labeled": _INTERCEPT_SCALING.format(rows="the labeled rows"),
    "safeguard": _SAFEGUARD,
    "initial_temperature": _INITIAL_TEMPERATURE,
    "initial_temperature_used": _INITIAL_TEMPERATURE_USED,
    "class_fractions_one_vs_rest": _CLASS_FRACTIONS_USED.format(how=_ONE_VS_REST_FRACTIONS),
    "class_fractions_joint": _CLASS_FRACTIONS_USED.format(
        how="Pass the whole array as ``positive_fraction`` (with two classes too)."
    ),
    "class_weight": _CLASS_WEIGHT,
    "n_jobs_one_vs_rest": insert_blocks(_N_JOBS_ONE_VS_REST, {"busy_cores": _BUSY_CORES}),
    "busy_cores": _BUSY_CORES,
    "classes_alpha": _CLASSES_ALPHA,
    "model_one_vs_rest": _MODEL_ONE_VS_REST,
    "safeguard_agreement": _SAFEGUARD_AGREEMENT,
    "transduction": _TRANSDUCTION,
    "n_features_in": _N_FEATURES_IN,
}


def fill_doc(cls):
    """Class decorator: put the shared blocks into ``cls.__doc__`` (see the module's docstring)."""
    example = _EXAMPLE_TRANSDUCTION.format(name=cls.__name__)
    cls.__doc__ = insert_blocks(cls.__doc__, {**_BLOCKS, "example_transduction": example})
    if cls.__doc__ is not None and "%(" in cls.__doc__:
        raise ValueError(f"{cls.__name__}'s docstring names a block that skssl.svm._docs does not have.")
    return cls
