"""skssl's regression benchmarks for asv (airspeed velocity).

Each module times ``fit``, measures its peak memory and tracks the objective
and the test accuracy of one family on small cached data sets, so that a
change that slows a fit, grows its memory or moves its answer shows up in
``asv continuous``. The side-by-side studies (SVMlin, the papers' protocols,
the user-value benchmark) are the scripts one folder up.
"""
