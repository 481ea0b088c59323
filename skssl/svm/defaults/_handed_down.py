"""What a fit decided from its rows, handed explicitly to the fits it starts on the same rows.

The class fractions, the factor of ``alpha="auto"`` and the annealing start
are handed in a :class:`HandedDown` (through ``_fit_for_parent``) to the
safeguard's candidates, the check's folds and the annealing start's halves,
so that no answer is worked out twice on the same rows; and whether the
rows were validated already, so that no fit on them validates them again.
"""

from dataclasses import dataclass

import numpy as np

from ._cluster_fractions import RowClusters

__all__ = ["HandedDown"]


@dataclass(frozen=True)
class HandedDown:
    """The parent fit's answers; a field left ``None`` is worked out by the fit that receives it.

    Attributes
    ----------
    fractions : ndarray of shape (n_classes,) or None
        The class fractions the parent used (read only by a fit that estimates them on the parent's labels).
    penalty_factor : float or None
        The factor of the rule's ``alpha`` that the parent's labeled rows support.
    initial_temperature : float or None
        The start the parent's annealing took with ``initial_temperature="auto"``.
    clusters : RowClusters or None
        The k-means clusters of the parent's rows and weights, shared with every fit on those rows.
    warns_on_caps : bool
        False where the fit's caps say nothing of the model the user gets (the fits of a check).
    rows_validated : bool
        True where ``X`` is rows of the parent's validated ones (float64; CSR or C-contiguous) and ``y`` integer
        class indices with ``-1`` on the unlabeled rows, so that the fit does not validate them again; set by
        ``_fit_for_parent``, the in-memory entry of every fit that another one starts.
    """

    fractions: np.ndarray | None = None
    penalty_factor: float | None = None
    initial_temperature: float | None = None
    clusters: RowClusters | None = None
    warns_on_caps: bool = True
    rows_validated: bool = False
