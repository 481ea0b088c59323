"""Exponential moving average (EMA) of a module's weights, used for prediction.

Step ``t`` uses the momentum ``min(ema_momentum, (1 + t) / (10 + t))``.
The averaged module lives in a plain holder (:class:`EMAState`), out of
skorch's reach (skorch hands every module attribute to the optimizer).
Design decisions: user guide, Implementation decisions (deep), "Defaults sized for a CPU".
"""

import copy

import torch

__all__ = ["EMAState", "ema_momentum_at", "update_ema"]


def ema_momentum_at(momentum, step):
    """Momentum of EMA step ``step`` (0-based), with the warm-up."""
    return min(float(momentum), (1.0 + step) / (10.0 + step))


class EMAState:
    """The averaged weights of a net (a frozen copy of ``module`` to start) and the steps taken."""

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
