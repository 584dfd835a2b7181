"""Progress: what every agent of a run is doing, read off the event bus.

:mod:`.tracker` follows the bus into a :class:`~subagents.runtime.ProgressTracker`;
:mod:`.tree` keeps the agents as a tree with per-subtree tallies; :mod:`.values`
holds the frozen snapshots it hands out; :mod:`.text` words a status or a tool
call for people (the live view, the plain printer and the report use it);
:mod:`.facts` holds what each of the agent loop's facts does to an agent's row,
and the :class:`~.facts.ProgressFeed` that applies them directly, without an
event; :mod:`.follower` is the runtime's own consumer: a bus listener of the
kernel's spawns and status changes that feeds the tracker (and logs each status
change) as each is published.
"""
