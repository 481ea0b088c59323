"""torch is imported only by skssl.deep."""

import subprocess
import sys

import pytest

pytest.importorskip("torch")


def test_rest_of_skssl_imports_without_torch():
    code = (
        "import sys, importlib\n"
        "for name in ('skssl', 'skssl.base', 'skssl.model_selection', 'skssl.utils.estimator_checks'):\n"
        "    importlib.import_module(name)\n"
        "assert 'torch' not in sys.modules, 'torch imported'\n"
        "import skssl.deep\n"
        "assert 'torch' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
