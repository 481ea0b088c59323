"""Built-in data and helpers to set up semi-supervised experiments."""

from ._pcmac import load_pcmac
from ._semi_supervised import make_semi_supervised

__all__ = ["load_pcmac", "make_semi_supervised"]
