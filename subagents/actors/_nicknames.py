"""Nicknames: short, memorable names for agents, never two agents under one name.

Names come from a pool (the one shipped here, or one the user gives), each used
once per cycle. When every name has been used, the pool resets and its names
come back with an ordinal: ``"Ada the 2nd"``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, final

from ._exceptions import InvalidConfiguration

__all__ = ["DEFAULT_NICKNAMES", "NicknamePool", "ordinal"]

# People who shaped computing. Short, distinct, and pleasant to read in a log.
DEFAULT_NICKNAMES: Final[tuple[str, ...]] = (
    "Ada", "Alan", "Grace", "Edsger", "Barbara", "Donald", "Margaret", "Dennis",
    "Frances", "Ken", "Hedy", "Niklaus", "Radia", "Tony", "Katherine", "John",
    "Sophie", "Leslie", "Jean", "Claude", "Dorothy", "Guido", "Shafi", "Robin",
    "Annie", "Butler", "Adele", "Fernando", "Mary", "Alonzo", "Lynn", "Kristen",
    "Joan", "Seymour", "Evelyn", "Edgar", "Betty", "Peter", "Karen", "Vint",
    "Ida", "Bjarne", "Carol", "Marvin", "Anita", "Per", "Hal", "Xavier",
    "Susan", "Yukihiro", "Elaine", "Brian", "Mildred", "Gordon", "Ruth", "Tim",
    "Cynthia", "Whitfield", "Irma", "Rob", "Lois", "Andrew", "Nancy", "Jim",
    "Amanda", "Wesley", "Kathleen", "Charles", "Lorinda", "Herbert", "Judea",
    "Daphne", "Raj", "Manuela", "Stephen", "Monica", "Ivan", "Juris", "Olga",
    "Rich", "Hope", "Dana", "Silvio", "Ellen", "Leonard", "Mitchell", "Ole",
    "Eva", "Jon", "Telle", "Erna", "Sally", "Robert", "Martha", "Ward", "Lixia",
)  # fmt: skip


def ordinal(n: int) -> str:
    """English ordinal of ``n``: ``2nd``, ``3rd``, ``11th``, ``21st``."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


@final
class NicknamePool:
    """Hands out nicknames as Codex does: no name twice until the pool resets.

    Names are given in pool order, round-robin. A name is used once per cycle:
    closing its agent frees it for a resume of that agent, never for another
    agent, so a log never shows two agents under one name. Once every name of
    the cycle is used, the pool resets and the next cycle's names carry an
    ordinal (``"Ada the 2nd"``, then ``"Ada the 3rd"``...), as Codex's
    ``AgentRegistry::reserve_agent_nickname`` does (openai/codex,
    ``codex-rs/core/src/agent/registry.rs``: ``used_agent_nicknames`` is cleared
    only when the pool runs out, and ``nickname_reset_count`` picks the ordinal).
    """

    __slots__ = ("_current", "_cursor", "_cycle", "_names", "_taken", "_used")

    def __init__(self, names: Sequence[str]) -> None:
        self._names = tuple(names)
        if not self._names:
            raise InvalidConfiguration("A nickname pool needs at least one name.")
        self._cursor = 0
        self._cycle = 0  # how many times the pool has reset
        self._current = frozenset(self._names)  # this cycle's names
        self._used: set[str] = set()  # names of this cycle already handed out
        self._taken: set[str] = set()  # names held by open agents

    def __len__(self) -> int:
        return len(self._taken)

    @property
    def cycle(self) -> int:
        """How many times every name has been used and the pool reset (0 at first)."""
        return self._cycle

    def take(self, preferred: str | None = None) -> str:
        """Reserve and return a nickname no open agent holds.

        ``preferred`` (a resumed agent's own name) is given back verbatim when
        no open agent holds it, as Codex restores a resumed agent's nickname;
        otherwise the agent gets the pool's next name.
        """
        if preferred is not None and preferred not in self._taken:
            self._hold(preferred)
            return preferred
        names, size = self._names, len(self._names)
        while True:
            for step in range(size):
                index = (self._cursor + step) % size
                name = _with_cycle(names[index], self._cycle)
                if name not in self._used and name not in self._taken:
                    self._cursor = (index + 1) % size
                    self._hold(name)
                    return name
            # Every name of this cycle is used (or held): reset with the next ordinal.
            self._cycle += 1
            self._used.clear()
            self._current = frozenset(_with_cycle(name, self._cycle) for name in names)

    def release(self, name: str) -> None:
        """``name``'s agent closed: free it for a resume, not for another agent; idempotent."""
        self._taken.discard(name)

    def _hold(self, name: str) -> None:
        self._taken.add(name)
        if name in self._current:  # a name of another cycle cannot come up again
            self._used.add(name)


def _with_cycle(name: str, cycle: int) -> str:
    """``name`` as the pool gives it after ``cycle`` resets: ``"Ada"``, ``"Ada the 2nd"``..."""
    return name if cycle == 0 else f"{name} the {ordinal(cycle + 1)}"
