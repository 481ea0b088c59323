"""Parameter and attribute text shared by the docstrings of the deep estimators.

Every public net documents every parameter of its (merged) signature; the
parameters the nets share are written once here and substituted into each
class docstring by :func:`fill_doc` with the class's own defaults (placed by
:func:`skssl.utils._docstrings.insert_blocks`, as the linear estimators'
shared text are), the way skorch builds ``NeuralNetClassifier.__doc__``
from ``NeuralNet.__doc__``.
"""

import inspect
import textwrap

from ..utils._docstrings import insert_blocks

__all__ = ["fill_doc", "inherit_method_docs"]

_MODULE = """\
module : torch module class or instance, default=None
    Must return logits. ``None``: an MLP (:class:`MLPModule`) for 2-D ``X``
    and a small CNN (:class:`SmallCNN`) for 4-D ``X``, sized at fit time;
    tune them with ``module__hidden_units`` (an int or a tuple of ints) and
    ``module__channels``. An instance (``torch.nn.Linear(6, 2)``) is trained
    as given, as in skorch: a later ``fit`` continues from its weights, and
    ``clone`` copies it; pass the class for fresh weights in every fit."""

_SSL_PARAMETERS = """\
masking : masking policy or None, default=None
    Which unlabeled rows get a pseudo-label: an object with ``start``,
    ``update`` and ``mask`` (:class:`FixedThreshold`,
    :class:`SelfAdaptiveThreshold`, :class:`ClassAdaptiveThreshold`, or your
    own). ``None`` uses ``{default_masking}``. The fit uses a clone
    (``masking_``). ``masking__threshold`` / ``masking__momentum`` tune it in
    a search (on ``None``, ``set_params`` first puts in the default policy).
mu : float, default={mu}
    Unlabeled batch size as a multiple of ``batch_size``.
unlabeled_weight : float, default={unlabeled_weight}
    Weight of the unlabeled (pseudo-label) loss, >= 0.
ema_momentum : float, default={ema_momentum}
    Momentum of the exponential moving average of the weights used for
    prediction, in [0, 1), with a warm-up ``min(ema_momentum, (1 + t) /
    (10 + t))`` at step ``t``; 0 predicts with the trained weights.
weak_augment, strong_augment : callable or None, default=None
    Augmentations on torch batches. ``None``: :class:`GaussianNoise` for 2-D
    ``X``, :class:`RandomShift` (weak) and :class:`RandAugment` (strong) for
    4-D ``X`` (see :func:`default_augmentations`). Fitted on clones."""

_NET_PARAMETERS = """\
iterations_per_epoch : {iterations_type}, default={iterations_per_epoch}
    Training steps per epoch{iterations_note}.
random_state : int, RandomState instance or None, default=None
    Seeds the weight initialisation, the batch samplers and the
    augmentations. The fit draws from generators of its own, never from
    torch's global one, so the caller's ``torch.get_rng_state()`` is left
    alone, and the same ``random_state`` (and ``n_jobs``) gives the same net,
    bit for bit, whether it is fitted alone or in threads next to other
    fits. A user ``module`` or an augmentation without a ``generator``
    parameter can only draw from the global generator: those calls take
    turns with other fits under a process-wide lock, with the global
    generator seeded from the fit and restored. ``None`` draws the seed from
    numpy's global random state, as in scikit-learn.
criterion : torch loss class, default=torch.nn.CrossEntropyLoss
    Loss of the labeled rows, on logits. It is built with
    ``reduction="none"`` (unless ``criterion__reduction`` says otherwise) so
    that ``sample_weight`` can weight each row.
optimizer : torch optimizer class, default=torch.optim.Adam
    Optimizer (``optimizer__*`` parameters are routed to it).
lr : float, default={lr}
    Learning rate.
max_epochs : int, default={max_epochs}
    Number of epochs.
batch_size : int, default={batch_size}
    Number of labeled rows per step.
iterator_train, iterator_valid : class, default=torch.utils.data.DataLoader
    Data loaders (``iterator_train__*`` ... are routed to them).
dataset : class or None, default=None
    The skorch dataset class; ``None`` is ``skorch.dataset.Dataset``.
train_split : callable or None, default=None
    A skorch validation split, applied to the labeled rows only; ``None``
    trains on every labeled row.
callbacks : list of (name, callback) or None, default=None
    Extra skorch callbacks, added to the default ones.
predict_nonlinearity : callable, None or "auto", default="auto"
    As in skorch: "auto" applies a softmax to the logits.
warm_start : bool, default=False
    Keep the weights of a previous fit.
verbose : int, default={verbose}
    0 is silent; 1 prints one line per epoch: ``epoch k/N``, the loss, the
    mask rate and the min/mean/max of the per-class thresholds for the
    semi-supervised nets, the epoch's duration and an estimate of the time
    left; colour codes only when standard output is a terminal.
device : str or torch.device, default="{device}"
    Device of the module and the batches. ``fit`` raises a ``ValueError``
    for a CUDA device when ``torch.cuda.is_available()`` is False.
n_jobs : int or None, default=1
    Number of torch intra-op threads (``torch.set_num_threads``) during
    ``fit``, ``partial_fit`` and ``predict_proba``; the caller's setting is
    restored afterwards. ``-1`` means one per core (``-2`` all but one ...);
    ``None`` leaves torch's current setting (by default one thread per
    core). One thread is the default because torch's thread pool costs more
    than it gives on the small batches of CPU training, and because the
    trained net depends on the thread count: the same ``random_state`` and
    ``n_jobs`` give the same net for a given torch build and CPU. In
    threads, each fit runs with its own ``n_jobs`` (torch's CPU builds keep
    the count per thread), also next to fits with another ``n_jobs``; the
    thread that ran a fit and the process's default for new threads get the
    count back that the first of the overlapping fits found.
accelerator : accelerate.Accelerator or None, default=None
    Train one model over several processes (data parallel): start the
    script as ``k`` processes (``torchrun --nproc_per_node k script.py``, or
    ``accelerate launch`` on GPUs), give the net ``Accelerator()`` and call
    ``fit`` on the same data everywhere. Each step's batch is split over the processes
    (``batch_size`` must be a multiple of ``k``), the gradients are averaged,
    and the weights, EMA weights and masking state stay the same on every
    process. ``device`` must be ``accelerator.device``. With one process, or
    ``None``, the fit is the one-process fit. Needs the ``accelerate``
    package (``pip install skssl[deep-parallel]``).
**kwargs
    The routed skorch parameters: ``module__*``, ``optimizer__*``,
    ``criterion__*``, ``callbacks__*``, ``iterator_train__*`` ..."""

_SSL_ATTRIBUTES = """\
classes_ : ndarray of shape (n_classes,)
    Labeled classes, sorted; never -1.
transduction_ : ndarray of shape (n_samples,)
    Label of each training row: its own label, or the prediction for an
    unlabeled row.
n_features_in_ : int
    ``X.shape[1]`` at fit time.
input_shape_ : tuple of int
    ``X.shape[1:]`` at fit time.
masking_ : masking policy
    The fitted clone of ``masking``; its state is in its attributes ending
    in ``_`` (``thresholds_`` ...).
weak_augment_, strong_augment_ : callable
    The fitted clones of the augmentations.
module_ : torch module
    The trained module.
ema_state_ : object or None
    Holds the averaged weights used for prediction (``ema_state_.module``)
    and the number of EMA steps (``ema_state_.steps``); ``None`` when
    ``ema_momentum=0``.
history_ : skorch History
    Per batch ``loss_x``, ``loss_u``, ``mask_rate`` (and ``loss_f`` for
    :class:`FreeMatchClassifier`'s fairness term); per epoch
    ``train_loss``, ``mask_rate``, ``thresholds`` (per class) and their
    ``thr_min``/``thr_mean``/``thr_max``."""

_SSL_REFERENCES = {
    "fixmatch": (
        "K. Sohn, D. Berthelot, C.-L. Li, Z. Zhang, N. Carlini, E. D. Cubuk, A. Kurakin, H. Zhang and "
        'C. Raffel. "FixMatch: Simplifying Semi-Supervised Learning with Consistency and Confidence". '
        "NeurIPS 2020."
    ),
    "freematch": (
        "Y. Wang, H. Chen, Q. Heng, W. Hou, Y. Fan, Z. Wu, J. Wang, M. Savvides, T. Shinozaki, B. Raj, "
        'B. Schiele and X. Xie. "FreeMatch: Self-adaptive Thresholding for Semi-supervised Learning". '
        "ICLR 2023."
    ),
    "adsh": (
        'L.-Z. Guo and Y.-F. Li. "Class-Imbalanced Semi-Supervised Learning with Adaptive Thresholding". ICML 2022.'
    ),
}


def fill_doc(cls, **extra):
    """Substitute the shared blocks into ``cls.__doc__`` with ``cls``'s defaults.

    The placeholders are ``%(ssl_sections)s`` (the Parameters and Attributes
    sections of a semi-supervised net), ``%(module)s``,
    ``%(net_parameters)s`` and ``%(reference_<name>)s``;
    each stands alone on a line indented like the docstring's sections.
    A class whose ``__init__`` adds parameters to its parent's documents them
    in ``cls._added_parameters_doc`` (formatted with the defaults like the
    shared blocks); ``%(ssl_sections)s`` puts that text right after
    ``module``, where the merged signature puts those parameters.
    """
    doc = cls.__doc__
    if not doc or "%(" not in doc:
        return
    defaults = {
        name: p.default
        for name, p in inspect.signature(cls.__init__).parameters.items()
        if p.default is not inspect.Parameter.empty
    }
    iterations = defaults.get("iterations_per_epoch")
    values = {
        **defaults,
        "default_masking": f"{cls._default_masking.__name__}()" if hasattr(cls, "_default_masking") else "",
        "iterations_type": "int" if iterations is not None else "int or None",
        "iterations_note": ""
        if iterations is not None
        else "; ``None``: one pass over the labeled rows, and at least 10 steps or 3 passes, whichever is fewer",
        **extra,
    }
    added = getattr(cls, "_added_parameters_doc", "")
    sections = ("Parameters\n----------", _MODULE, *([added] if added else []), _SSL_PARAMETERS, _NET_PARAMETERS)
    sections = (*sections, "\nAttributes\n----------")
    blocks = {
        "ssl_sections": "\n".join([*sections, _SSL_ATTRIBUTES]),
        "module": _MODULE,
        "net_parameters": _NET_PARAMETERS,
        **{f"reference_{k}": textwrap.fill(v, 79) for k, v in _SSL_REFERENCES.items()},
    }
    # Only the blocks the docstring names are formatted: a class has the defaults of its own signature only.
    formatted = ("ssl_sections", "net_parameters")
    blocks = {
        name: text.format(**values) if name in formatted else text
        for name, text in blocks.items()
        if f"%({name})s" in doc
    }
    cls.__doc__ = insert_blocks(doc, blocks)


def inherit_method_docs(cls, names):
    """Give ``cls``'s overrides of ``names`` the docstring of the method they override.

    A hook (``update``, ``mask``, ``train_step_single``) is documented once on
    the base class; the overrides say in a comment what they do differently.
    """
    for name in names:
        method = cls.__dict__.get(name)
        if method is not None and not method.__doc__:
            method.__doc__ = getattr(super(cls, cls), name).__doc__
