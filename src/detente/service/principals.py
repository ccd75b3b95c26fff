"""The key registry's use cases: register and remove agent keys, each change recorded in
the log.

The registry is ``principals.json`` beside the first served repository's default database
(:func:`detente.vcs.principals_path`); ``detente serve --auth keys`` reads it. Every change is first
appended to that repository's log (``principal.key_registered`` / ``principal.key_removed``
v1 on the stream ``principal/<name>``, with the name, the key's fingerprint, the roles and,
like every event, the acting principal), then written to the file: a change the log could
not record is not made. Editing the file by hand leaves no such event, which
``detente principal list`` does not hide: the log is the record of who registered what.
"""

from __future__ import annotations

from detente.domain import events as ev
from detente.errors import NotFoundError, ValidationError
from detente.security.signatures import KeyRegistry, RegisteredKey
from detente.service.core import ServiceCore
from detente.vcs import principals_path

__all__ = ["PrincipalsService"]


class PrincipalsService:
    """Agent keys (``--auth keys``), changed with a record in the log."""

    def __init__(self, core: ServiceCore) -> None:
        self.core = core

    def _home(self) -> tuple[str, KeyRegistry]:
        for name, config in self.core.repos.items():
            if config.path is not None:
                return name, KeyRegistry(principals_path(config.path))
        raise ValidationError("no served repository has a working tree to keep keys beside")

    def list_keys(self) -> list[RegisteredKey]:
        """Every registered key, by name."""
        return self._home()[1].list()

    def register_key(self, name: str, public_key: bytes, roles: tuple[str, ...]) -> RegisteredKey:
        """Register (or replace) ``name``'s key: recorded, then written.

        Raises:
            ValidationError: ``validation_error`` naming ``name``, ``role`` or
                ``ed25519-public-key``; nothing is recorded or written.
        """
        repo, registry = self._home()
        entry = registry.entry(name, public_key, roles)
        self._record(repo, ev.PRINCIPAL_KEY_REGISTERED, entry)
        registry.put(entry)
        return entry

    def remove_key(self, name: str) -> RegisteredKey:
        """Remove ``name``'s key: recorded, then removed from the file. Requests it signed
        are refused from then on (the server re-reads the file).

        Raises:
            NotFoundError: ``not_found`` when no key is registered as ``name``.
        """
        repo, registry = self._home()
        entry = registry.get(name)
        if entry is None:
            raise NotFoundError(f"no key is registered as {name!r}", name=name)
        self._record(repo, ev.PRINCIPAL_KEY_REMOVED, entry)
        registry.remove(name)
        return entry

    def _record(self, repo: str, event_type: str, entry: RegisteredKey) -> None:
        def decide(_state: object) -> list[ev.Event]:
            return [
                ev.stream_event(
                    self.core.ids,
                    ev.principal_subject(entry.name),
                    event_type,
                    name=entry.name,
                    fingerprint=entry.fingerprint,
                    roles=list(entry.roles),
                )
            ]

        self.core.run(repo, decide, lambda _state, _events: None)
