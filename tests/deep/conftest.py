"""Collection rules for the deep tests.

``_parallel_worker.py`` is the script that ``torch.distributed.run`` starts in
each process of the data-parallel tests; it is not a test module and imports
torch at the top, so pytest's ``--doctest-modules`` must not import it (it would
fail where torch is not installed).
"""

collect_ignore = ["_parallel_worker.py"]
