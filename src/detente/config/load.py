"""Reading ``detente.toml``: parse with :mod:`tomllib`, validate every key, apply flags.

Validation is strict so a typo never silently means "the default": an unknown table or
key, a value of the wrong type, or an integer out of range is a ``validation_error``
naming the file, the key and what it expects. Command-line overrides (``detente serve
--max-ttl 600``) go through the same checks and win over the file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import date, datetime, time
from pathlib import Path
from typing import Any

from detente.config.keys import ALL_KEYS, HARNESS_KEYS, LIMIT_KEYS, POLICY_KEYS, ROLE_KEYS, Key
from detente.config.model import (
    DEFAULT_SOURCE,
    EVERYONE,
    LIMITED_ACTIONS,
    ProjectConfig,
    RateLimit,
    Roles,
)
from detente.domain.overlap.paths import normalize_pattern
from detente.domain.overlap.trees import Artifact
from detente.domain.policy import DEFAULT_POLICY
from detente.errors import ValidationError

__all__ = ["CONFIG_FILE", "effective", "load_config"]

#: The configuration file's name at the repository root.
CONFIG_FILE = "detente.toml"

_BY_DOTTED = {key.dotted: key for key in ALL_KEYS}
_SECTIONS = {key.section.split(".")[0] for key in ALL_KEYS}
_LONGEST_ENTRY = 200


def load_config(
    root: Path | None,
    *,
    file: Path | None = None,
    overrides: Mapping[str, tuple[Any, str]] | None = None,
) -> ProjectConfig:
    """The effective configuration: defaults, then the file, then ``overrides``.

    Args:
        root: the repository root; its ``detente.toml`` is read when it exists. None:
            read no file unless ``file`` is given.
        file: an explicit configuration file (``--policy FILE``), read instead of the
            root's; it must exist.
        overrides: dotted key (``policy.max-ttl-seconds``) -> (value, the flag that set
            it, e.g. ``--max-ttl``).

    Returns:
        The validated configuration, each value's source recorded.

    Raises:
        ValidationError: ``validation_error`` (``field`` = the dotted key, ``file`` = the
            file) for a file that is missing (explicit ``file`` only), unreadable, not
            UTF-8, not valid TOML, or has an unknown table or key, a value of the wrong
            type or out of range; also for a bad override (the message names the flag).
    """
    path = file if file is not None else (root / CONFIG_FILE if root is not None else None)
    values: dict[str, tuple[Any, str]] = {}
    read: Path | None = None
    if path is not None and (file is not None or path.is_file()):
        label = CONFIG_FILE if file is None else str(file)
        for dotted, value in _read(path, label).items():
            values[dotted] = (_check(_BY_DOTTED[dotted], value, label), label)
        read = path
    for dotted, (value, flag) in (overrides or {}).items():
        key = _BY_DOTTED.get(dotted)
        if key is None:
            raise ValidationError(f"{flag}: {dotted} is not a configuration key", field=dotted)
        values[dotted] = (_check(key, value, flag), flag)
    return _build(values, read)


def effective(config: ProjectConfig) -> dict[str, Any]:
    """Every key's effective value, JSON-ready, in the order of the key table.

    Returns:
        Dotted key -> value: integers, lists of strings, or None for an unlimited rate.
    """
    out: dict[str, Any] = {}
    for key in POLICY_KEYS:
        value = getattr(config.policy, key.attr)
        out[key.dotted] = list(value) if isinstance(value, tuple) else value
    out["generated.patterns"] = list(config.generated)
    out["generated.artifacts"] = [f"{a.path} <- {' '.join(a.inputs)}" for a in config.artifacts]
    for key in ROLE_KEYS:
        out[key.dotted] = list(config.roles.members(key.name))
    out["local.roles"] = list(config.local_roles)
    for key in HARNESS_KEYS:
        out[key.dotted] = config.harness.get(key.name, key.choices[0])
    for key in LIMIT_KEYS:
        limit = config.limits[key.section.split(".", 1)[1]]
        out[key.dotted] = getattr(limit, key.name.replace("-", "_"))
    return out


# ---------------------------------------------------------------------------- reading


def _read(path: Path, label: str) -> dict[str, Any]:
    """The file's keys, flattened to dotted names; unknown tables and keys refused."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ValidationError(
            f"{label}: no such configuration file", field="policy", file=str(path)
        ) from None
    except OSError as exc:
        raise ValidationError(
            f"{label}: cannot read it: {exc.strerror or exc}", field="policy", file=str(path)
        ) from None
    import tomllib  # here: a repository without detente.toml never needs it

    try:
        document = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ValidationError(f"{label}: not UTF-8 text", file=str(path)) from None
    except tomllib.TOMLDecodeError as exc:
        raise ValidationError(f"{label}: not valid TOML: {exc}", file=str(path)) from None
    flat: dict[str, Any] = {}
    for section, table in document.items():
        if section not in _SECTIONS:
            raise _unknown(path, label, section, None, sorted(_SECTIONS))
        if not isinstance(table, dict):
            raise ValidationError(
                f"{label}: {section} must be a table ([{section}]), got {_type(table)}",
                field=section,
                file=str(path),
            )
        if section == "limits":
            for action, sub in table.items():
                if action not in LIMITED_ACTIONS:
                    raise _unknown(path, label, section, action, list(LIMITED_ACTIONS))
                if not isinstance(sub, dict):
                    raise ValidationError(
                        f"{label}: [limits] {action} must be a table ([limits.{action}]), "
                        f"got {_type(sub)}",
                        field=f"limits.{action}",
                        file=str(path),
                    )
                flat.update(_keys(path, label, f"limits.{action}", sub))
        else:
            flat.update(_keys(path, label, section, table))
    return flat


def _keys(path: Path, label: str, section: str, table: dict[str, Any]) -> dict[str, Any]:
    allowed = [k.name for k in ALL_KEYS if k.section == section]
    for name in table:
        if name not in allowed:
            raise _unknown(path, label, section, name, allowed)
    return {f"{section}.{name}": value for name, value in table.items()}


def _unknown(
    path: Path, label: str, section: str, name: str | None, allowed: list[str]
) -> ValidationError:
    what = f"table [{section}]" if name is None else f"key {name!r} in [{section}]"
    return ValidationError(
        f"{label}: unknown {what}; expected one of: {', '.join(allowed)}",
        field=section if name is None else f"{section}.{name}",
        file=str(path),
    )


# ---------------------------------------------------------------------------- checking


def _check(key: Key, value: Any, where: str) -> Any:
    """``value`` validated for ``key`` (patterns canonical, arrays as tuples)."""

    def bad(why: str = "") -> ValidationError:
        prefix = f"{where}: [{key.section}] {key.name}" if not where.startswith("-") else where
        return ValidationError(
            f"{prefix} must be {key.expected()}, got {_shown(value)}{why}",
            field=key.dotted,
            file=None if where.startswith("-") else where,
        )

    if key.kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise bad()
        if not key.low <= value <= key.high:
            raise bad()
        return value
    if key.kind == "artifacts":
        return _artifacts(key, value, bad)
    if key.kind == "choice":
        if not isinstance(value, str) or value not in key.choices:
            raise bad()
        return value
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise bad()
    if key.kind == "patterns":
        out = []
        for item in value:
            try:
                out.append(normalize_pattern(item, field=key.dotted))
            except ValidationError as exc:
                raise bad(f" ({exc.detail})") from None
        return tuple(dict.fromkeys(out))
    if key.kind == "choices":
        unknown = [v for v in value if v not in key.choices]
        if unknown or len(set(value)) != len(value):
            raise bad(f" ({'unknown: ' + ', '.join(unknown) if unknown else 'repeated names'})")
        return tuple(value)
    for entry in value:
        if not _valid_entry(entry):
            raise bad(f" (bad entry {entry!r})")
    return tuple(dict.fromkeys(value))


def _artifacts(key: Key, value: Any, bad: Callable[[str], ValidationError]) -> Any:
    """``[[generated.artifacts]]`` entries as :class:`Artifact` records."""
    if not isinstance(value, list):
        raise bad("")
    out = []
    for i, entry in enumerate(value):
        if not isinstance(entry, dict) or set(entry) != {"path", "inputs"}:
            raise bad(f" (entry {i + 1} must have exactly path and inputs)")
        path, inputs = entry["path"], entry["inputs"]
        if not isinstance(path, str) or not isinstance(inputs, list) or not inputs:
            raise bad(f" (entry {i + 1}: path is a string, inputs a non-empty array)")
        if not all(isinstance(p, str) for p in inputs):
            raise bad(f" (entry {i + 1}: inputs are strings)")
        try:
            canonical = [normalize_pattern(p, field=key.dotted) for p in (path, *inputs)]
        except ValidationError as exc:
            raise bad(f" (entry {i + 1}: {exc.detail})") from None
        out.append(Artifact(canonical[0], tuple(dict.fromkeys(canonical[1:]))))
    return tuple(out)


def _valid_entry(entry: str) -> bool:
    if entry == EVERYONE:
        return True
    name = entry.removeprefix("group:")
    return (
        0 < len(name) <= _LONGEST_ENTRY
        and name.isprintable()
        and not any(ch.isspace() for ch in name)
        and name != EVERYONE
    )


def _type(value: Any) -> str:
    """The TOML type of a parsed value, as a user reads it."""
    for types, name in _TOML_TYPES:
        if isinstance(value, types):
            return name
    return type(value).__name__


#: Python type(s) of a parsed TOML value -> its TOML name; ``bool`` before ``int``.
_TOML_TYPES: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (bool, "a boolean"),
    (int, "an integer"),
    (float, "a float"),
    (str, "a string"),
    (list, "an array"),
    (dict, "a table"),
    ((datetime, date, time), "a date/time"),
)


def _shown(value: Any) -> str:
    if isinstance(value, bool | int | float | str):
        return f"{_type(value)} {value!r}"
    return _type(value)


# ---------------------------------------------------------------------------- building


def _build(values: Mapping[str, tuple[Any, str]], read: Path | None) -> ProjectConfig:
    policy = replace(
        DEFAULT_POLICY,
        **{k.attr: values[k.dotted][0] for k in POLICY_KEYS if k.dotted in values},
    )
    if policy.min_ttl_seconds > policy.max_ttl_seconds:
        said = " and ".join(
            f"{n}-ttl-seconds from {values[f'policy.{n}-ttl-seconds'][1]}"
            for n in ("min", "max")
            if f"policy.{n}-ttl-seconds" in values
        )
        raise ValidationError(
            f"min-ttl-seconds ({policy.min_ttl_seconds}) exceeds max-ttl-seconds "
            f"({policy.max_ttl_seconds}): check {said or 'the defaults'}",
            field="policy.min-ttl-seconds",
        )
    generated = values.get("generated.patterns", ((), DEFAULT_SOURCE))[0]
    artifacts = values.get("generated.artifacts", ((), DEFAULT_SOURCE))[0]
    defaults = Roles()
    roles = Roles(
        {
            k.name: values[k.dotted][0] if k.dotted in values else defaults.members(k.name)
            for k in ROLE_KEYS
        }
    )
    limits = {
        action: RateLimit(
            per_principal=values.get(f"limits.{action}.per-principal", (None, ""))[0],
            per_session=values.get(f"limits.{action}.per-session", (None, ""))[0],
            window_seconds=values.get(f"limits.{action}.window-seconds", (60, ""))[0],
        )
        for action in LIMITED_ACTIONS
    }
    return ProjectConfig(
        policy=policy,
        generated=generated,
        artifacts=artifacts,
        roles=roles,
        local_roles=values.get("local.roles", ((), DEFAULT_SOURCE))[0],
        harness={
            k.name: values[k.dotted][0] if k.dotted in values else k.choices[0]
            for k in HARNESS_KEYS
        },
        limits=limits,
        file=read,
        sources={dotted: source for dotted, (_, source) in values.items()},
    )
