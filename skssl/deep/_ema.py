"""Exponential moving average (EMA) of a module's weights, used for prediction.

Decision: the momentum of step ``t`` (counting from 0) is
``min(ema_momentum, (1 + t) / (10 + t))``. With a fixed 0.999 (the papers'
value, meant for a million GPU steps) a CPU schedule of a thousand steps would
predict with weights still about 37% from their random initialisation
(``0.999 ** 1000``); the warm-up lets the average follow the early weights and
settle to ``ema_momentum`` later. BatchNorm running statistics (buffers) are
copied, not averaged: they are already running averages.

The averaged module lives in a plain holder (:class:`EMAState`, the net's
``ema_state_``): skorch registers every torch module set as a net attribute
and hands its parameters to the optimizer, and a holder keeps it out of that.
"""

import copy

import torch

__all__ = ["EMAState", "ema_momentum_at", "update_ema"]


def ema_momentum_at(momentum, step):
    """Momentum of EMA step ``step`` (0-based) with the warm-up described above."""
    return min(float(momentum), (1.0 + step) / (10.0 + step))


class EMAState:
    """The averaged weights of a net and the number of EMA steps taken.

    Parameters
    ----------
    module : torch module
        The module to average; a frozen copy of it starts the average.
    """

    def __init__(self, module):
        self.module = copy.deepcopy(module)
        for p in self.module.parameters():
            p.requires_grad_(False)
        self.steps = 0

    def update(self, module, momentum):
        """One EMA step of the average towards ``module``."""
        update_ema(self.module, module, momentum, self.steps)
        self.steps += 1


@torch.no_grad()
def update_ema(ema_module, module, momentum, step):
    """Move ``ema_module`` towards ``module`` by one EMA step; copy the buffers."""
    d = ema_momentum_at(momentum, step)
    for e, p in zip(ema_module.parameters(), module.parameters()):
        e.mul_(d).add_(p.detach(), alpha=1.0 - d)
    for e, b in zip(ema_module.buffers(), module.buffers()):
        e.copy_(b)
