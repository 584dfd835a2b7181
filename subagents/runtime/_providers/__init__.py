"""Model providers: the one small protocol the loop calls, and its implementations.

:mod:`.base` is the :class:`~subagents.runtime.Provider` protocol and its
request, response and stream values; :mod:`.anthropic` calls the official SDK;
:mod:`.scripted` answers offline from policies (:mod:`.reply`) and scripts
(:mod:`.script`); :mod:`.default` picks one when the caller names none.
"""
