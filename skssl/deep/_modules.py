"""Default torch modules of the nets, sized from ``X`` at fit time.

:class:`MLPModule` for 2-D input and :class:`SmallCNN` for images; both
return logits and draw their weights from the fit's generator
(``reset_parameters(generator)``).
Design decisions: user guide, Implementation decisions (deep), "Defaults sized for a CPU".
"""

import math
from numbers import Integral

import torch
from torch import nn

__all__ = ["MLPModule", "SmallCNN", "default_module_for"]


def _reset_layers(module, generator):
    """torch's default initialisation of every layer of ``module``, drawn from ``generator``."""
    for layer in module.modules():
        if isinstance(layer, (nn.Linear, nn.Conv2d)):
            # drawn contiguous, then copied: the numbers of a freshly built layer
            weight = torch.empty(layer.weight.shape, dtype=layer.weight.dtype, device=layer.weight.device)
            nn.init.kaiming_uniform_(weight, a=math.sqrt(5), generator=generator)
            with torch.no_grad():
                layer.weight.copy_(weight)
            if layer.bias is not None:
                fan_in, _ = nn.init._calculate_fan_in_and_fan_out(layer.weight)
                bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
                nn.init.uniform_(layer.bias, -bound, bound, generator=generator)
        elif isinstance(layer, nn.BatchNorm2d):
            layer.reset_parameters()
        elif next(layer.parameters(recurse=False), None) is not None:  # pragma: no cover - guards future layers
            raise TypeError(f"no generator-driven initialisation for {type(layer).__name__}")
    return module


class _GeneratorModule(nn.Module):
    """Base of the default modules (weights drawn from a generator)."""

    def reset_parameters(self, generator=None):
        """Redraw every weight with torch's default initialisation, from ``generator``.

        Parameters
        ----------
        generator : torch.Generator or None, default=None
            Source of the random numbers; ``None`` is torch's global generator.

        Returns
        -------
        self : object
            This module, re-initialised in place.
        """
        return _reset_layers(self, generator)


def _widths(value):
    """Layer widths from an int or a sequence of ints."""
    return (int(value),) if isinstance(value, Integral) else tuple(int(v) for v in value)


class MLPModule(_GeneratorModule):
    """Multi-layer perceptron returning class logits.

    The default module for 2-D ``X``: ReLU layers without dropout or BatchNorm.

    Parameters
    ----------
    input_dim : int
        Number of input features.
    n_classes : int
        Number of output logits.
    hidden_units : int or tuple of int, default=(128, 128)
        Width of each hidden layer; an int is one layer.

    See Also
    --------
    SmallCNN : The default module for images.
    default_module_for : How the nets pick and size the default module.

    Examples
    --------
    >>> import torch
    >>> from skssl.deep import MLPModule
    >>> MLPModule(4, 3)(torch.zeros(2, 4)).shape
    torch.Size([2, 3])
    """

    def __init__(self, input_dim, n_classes, hidden_units=(128, 128)):
        super().__init__()
        layers = []
        width = int(input_dim)
        for units in _widths(hidden_units):
            layers += [nn.Linear(width, int(units)), nn.ReLU()]
            width = int(units)
        layers.append(nn.Linear(width, int(n_classes)))
        self.net = nn.Sequential(*layers)

    def forward(self, X):
        """Return the logits of a batch.

        Parameters
        ----------
        X : tensor of shape (n, input_dim)
            A batch of rows.

        Returns
        -------
        logits : tensor of shape (n, n_classes)
            Class logits.
        """
        return self.net(X)


class SmallCNN(_GeneratorModule):
    """Small convolutional network for ``(n, channels, height, width)`` images.

    The default module for 4-D ``X``: blocks of 3x3 convolution, max pooling,
    BatchNorm and ReLU, a 4x4 average pool and a linear layer, channels-last.

    Parameters
    ----------
    in_channels : int
        Number of input channels.
    n_classes : int
        Number of output logits.
    channels : int or tuple of int, default=(16, 32)
        Output channels of each block; an int is one block.

    See Also
    --------
    MLPModule : The default module for vectors.
    default_module_for : How the nets pick and size the default module.

    Examples
    --------
    >>> import torch
    >>> from skssl.deep import SmallCNN
    >>> SmallCNN(1, 10)(torch.zeros(2, 1, 8, 8)).shape
    torch.Size([2, 10])
    """

    def __init__(self, in_channels, n_classes, channels=(16, 32)):
        super().__init__()
        self.in_channels = int(in_channels)
        blocks = []
        width = self.in_channels
        for out in _widths(channels):
            blocks += [
                nn.Conv2d(width, int(out), kernel_size=3, padding=1),
                # pooled first, so BatchNorm and ReLU see a quarter of the pixels; ceil_mode keeps a 1x1 map
                nn.MaxPool2d(2, ceil_mode=True),
                nn.BatchNorm2d(int(out)),
                nn.ReLU(),
            ]
            width = int(out)
        self.features = nn.Sequential(*blocks)
        self.pool = nn.AdaptiveAvgPool2d(4)
        self.head = nn.Linear(width * 16, int(n_classes))
        self.to(memory_format=torch.channels_last)

    def forward(self, X):
        """Return the logits of a batch of images.

        Parameters
        ----------
        X : tensor of shape (n, in_channels, height, width)
            A batch of images.

        Returns
        -------
        logits : tensor of shape (n, n_classes)
            Class logits.
        """
        if X.shape[1] != self.in_channels:
            raise ValueError(f"SmallCNN expects images of shape (n, {self.in_channels}, h, w); got {tuple(X.shape)}.")
        h = self.pool(self.features(X))
        return self.head(h.flatten(1))


def default_module_for(input_shape, n_classes):
    """Return the default module class and its sizing kwargs for ``input_shape``.

    Parameters
    ----------
    input_shape : tuple of int
        ``X.shape[1:]``: ``(n_features,)`` or ``(channels, height, width)``.
    n_classes : int
        Number of classes.

    Returns
    -------
    module_cls : type
        :class:`MLPModule` or :class:`SmallCNN`.
    kwargs : dict
        Sizing arguments for ``module_cls``.
    """
    if len(input_shape) == 1:
        return MLPModule, {"input_dim": int(input_shape[0]), "n_classes": int(n_classes)}
    return SmallCNN, {"in_channels": int(input_shape[0]), "n_classes": int(n_classes)}
