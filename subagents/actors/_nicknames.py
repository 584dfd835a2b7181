"""Nicknames: short, memorable names for agents, unique among the open ones.

Names come from a pool (the one shipped here, or one the user gives). When every
name of the pool is taken, ordinals are added: ``"Ada the 2nd"``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, final

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
    """Hands out nicknames unique among those currently taken.

    Names are given in pool order, round-robin, so consecutive agents get
    different names even when earlier ones were released.
    """

    __slots__ = ("_cursor", "_lowest", "_names", "_pool", "_pool_taken", "_taken")

    def __init__(self, names: Sequence[str]) -> None:
        self._names = tuple(names)
        self._pool = frozenset(self._names)
        self._cursor = 0
        # name -> (base name, ordinal; 1 for the bare name)
        self._taken: dict[str, tuple[str, int]] = {}
        # base name -> lowest ordinal that may be free (a hint, never too high)
        self._lowest: dict[str, int] = {}
        self._pool_taken = 0  # how many bare pool names are taken

    def __len__(self) -> int:
        return len(self._taken)

    def take(self, preferred: str | None = None) -> str:
        """Reserve and return a free nickname.

        ``preferred`` (a restored agent's old name, a definition's own pool
        entry) is used as is when free, else with the lowest free ordinal.
        """
        taken = self._taken
        if preferred is not None:
            if preferred not in taken:
                taken[preferred] = (preferred, 1)
                self._pool_taken += preferred in self._pool
                return preferred
            return self._with_ordinal(preferred)
        names = self._names
        size = len(names)
        if self._pool_taken < size:
            for step in range(size):
                name = names[(self._cursor + step) % size]
                if name not in taken:
                    self._cursor = (self._cursor + step + 1) % size
                    taken[name] = (name, 1)
                    self._pool_taken += 1
                    return name
        base = names[self._cursor]
        self._cursor = (self._cursor + 1) % size
        return self._with_ordinal(base)

    def release(self, name: str) -> None:
        """Give ``name`` back to the pool; releasing a free name is a no-op."""
        entry = self._taken.pop(name, None)
        if entry is not None:
            base, n = entry
            if n == 1:
                self._pool_taken -= name in self._pool
            elif n < self._lowest.get(base, 2):
                self._lowest[base] = n

    def _with_ordinal(self, base: str) -> str:
        n = self._lowest.get(base, 2)
        name = f"{base} the {ordinal(n)}"
        while name in self._taken:
            n += 1
            name = f"{base} the {ordinal(n)}"
        self._lowest[base] = n + 1
        self._taken[name] = (base, n)
        return name
