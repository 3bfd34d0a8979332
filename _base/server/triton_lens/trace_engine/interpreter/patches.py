"""Patching something for one run and undoing it: the engine's one mechanism.

The engine changes objects that belong to the user's program (triton's interpreter classes, torch.cuda,
os.environ, sys.modules entries) for the length of a run, and nothing may stay changed after it. Every such
change goes through a `PatchScope`: each operation records its own undo, and leaving the scope (`with`, or
`restore()`) runs the undos last first. An attribute or key that was absent before is removed again rather
than set to a stand-in value. Every undo runs even when one of them raises (a half-restored interpreter
would break the user's next run in the same process); the first error is raised after all have run.

This is the only engine module that puts saved attributes back (tests/arch/test_invariants.py).
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from contextlib import AbstractContextManager
from typing import Any, TypeVar

T = TypeVar("T")
K = TypeVar("K")
V = TypeVar("V")


class PatchScope:
    """The patches of one run (or one part of it), undone together in reverse order."""

    def __init__(self) -> None:
        self._undo: list[Callable[[], None]] = []

    # -- attributes ---------------------------------------------------------------------------------
    def patch(self, owner: Any, name: str, make: Callable[[Any], Any]) -> None:
        """Replace owner.name with make(original): `original` is what owner.name reads now (inherited
        included), None where the release lacks it. The wrappers of the interpreter are made this way."""
        self.set_attr(owner, name, make(getattr(owner, name, None)))

    def set_attr(self, owner: Any, name: str, value: Any) -> None:
        """owner.name = value; the undo puts back the owner's own value (its __dict__ entry, a descriptor
        as it was stored), or deletes the attribute where the owner had none of its own (an inherited
        or missing one reads through again)."""
        own = vars(owner)
        had, old = name in own, own.get(name)

        def undo() -> None:
            if had:
                setattr(owner, name, old)
            elif name in vars(owner):
                delattr(owner, name)

        setattr(owner, name, value)
        self._undo.append(undo)

    # -- mappings (sys.modules, os.environ, a module's or an object's __dict__) -------------------
    def set_item(self, mapping: MutableMapping[K, V], key: K, value: V) -> None:
        """mapping[key] = value; the undo puts the old value back, or removes the key where it was absent."""
        self.keep_item(mapping, key)
        mapping[key] = value

    def keep_item(self, mapping: MutableMapping[K, V], key: K) -> None:
        """The undo puts mapping[key] back as it is now (present or absent), whatever changes it meanwhile:
        for a value set through a descriptor (a knob) that stores it in the object's __dict__."""
        if key in mapping:
            old = mapping[key]

            def undo() -> None:
                mapping[key] = old

        else:

            def undo() -> None:
                mapping.pop(key, None)

        self._undo.append(undo)

    def keep_dict(self, mapping: MutableMapping[K, V]) -> None:
        """The undo puts the whole mapping back as it is now: for state whose keys differ by release
        (triton's driver config: `active` on 3.2, `_active` under a property on 3.3+)."""
        saved = dict(mapping)

        def undo() -> None:
            mapping.clear()
            mapping.update(saved)

        self._undo.append(undo)

    # -- anything else ------------------------------------------------------------------------------
    def defer(self, undo: Callable[[], object]) -> None:
        """Run undo() when the scope is left, in order with the other undos (a mode to exit, a directory
        to remove)."""

        def run() -> None:
            undo()

        self._undo.append(run)

    def enter(self, context: AbstractContextManager[T]) -> T:
        """Enter `context` (a torch mode) now and exit it when the scope is left, in order with the undos."""
        value = context.__enter__()
        self.defer(lambda: context.__exit__(None, None, None))
        return value

    def nested(self) -> PatchScope:
        """A scope of its own inside this one: left by itself (`with scope.nested() as inner:`), or with
        this one at the latest, at the point where it was opened."""
        inner = PatchScope()
        self._undo.append(inner.restore)
        return inner

    # -- leaving --------------------------------------------------------------------------------------
    def restore(self) -> None:
        """Undo everything, last first; every undo runs, then the first error (if any) is raised with
        the others noted on it. Idempotent: a second call has nothing left to undo."""
        errors: list[BaseException] = []
        while self._undo:
            undo = self._undo.pop()
            try:
                undo()
            except BaseException as e:  # noqa: BLE001 - the rest must still be undone; raised below
                errors.append(e)
        if errors:
            first = errors[0]
            note = getattr(first, "add_note", None)  # Python 3.11+
            for other in errors[1:]:
                if note is not None:
                    note(f"(another undo of the same scope also failed: {type(other).__name__}: {other})")
            raise first

    def __enter__(self) -> PatchScope:
        return self

    def __exit__(self, *exc: object) -> None:
        self.restore()
