"""Configuration: the settings loader, its checks, and every runtime default.

:mod:`.loader` reads the user's and the project's files, the environment and
code into a :class:`~subagents.runtime.RuntimeConfig` (:mod:`.values`),
judging each value by the checks of :mod:`.checks` and naming where a wrong one
was written (:mod:`.origins`, :mod:`.env`); :mod:`.defaults` holds every
default once; :mod:`.limits` is a run's :class:`~subagents.runtime.Limits`.
Workspace trust lives here too (:mod:`.trust`, :mod:`.trusted_folders`,
:mod:`.trust_check`): the loader asks it what an untrusted project may set.
"""
