"""The EMA of the weights: the warm-up schedule and one update, without a net."""

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("skorch")

from skssl.deep._ema import EMAState, ema_momentum_at  # noqa: E402


def test_warm_up_then_the_momentum():
    assert ema_momentum_at(0.999, 0) == pytest.approx(0.1)
    assert ema_momentum_at(0.999, 90) == pytest.approx(91 / 100)
    assert ema_momentum_at(0.9, 10_000) == 0.9
    assert ema_momentum_at(0.0, 5) == 0.0


def test_update_averages_parameters_and_copies_buffers():
    module = torch.nn.BatchNorm1d(2)
    ema = EMAState(module)
    assert not any(p.requires_grad for p in ema.module.parameters())
    with torch.no_grad():
        module.weight.fill_(3.0)  # the EMA copy starts at 1
        module.running_mean.fill_(5.0)
    ema.update(module, momentum=0.999)  # step 0: momentum 0.1
    torch.testing.assert_close(ema.module.weight, torch.full((2,), 0.1 * 1 + 0.9 * 3))
    torch.testing.assert_close(ema.module.running_mean, torch.full((2,), 5.0))
    assert ema.steps == 1
