"""Load house rules from preset TOML files, checked once, with errors that name the problem.

A preset file looks like::

    name = "kenko"
    extends = "standard"        # optional: a preset name or a path relative to this file
    description = "..."

    [game]
    time_limit_minutes = 50

Only the keys that differ from the base need to be given.  Unknown sections or keys,
wrong types and values out of range raise :class:`RulesConfigError` naming the file, the
key and what is allowed; nothing is half-loaded.
"""

from __future__ import annotations

import difflib
import functools
import os
import stat
import tomllib
import types
import typing
from dataclasses import fields
from importlib import resources
from pathlib import Path
from typing import Any

from tablectl.rules.options import CHIP_ITEMS, SECTIONS, HouseRules

PRESET_PACKAGE = "tablectl.rules.presets"
TOP_LEVEL_KEYS = ("name", "extends", "description")


class RulesConfigError(ValueError):
    """A rules file is missing, malformed, or holds a value that is not allowed."""


def preset_names() -> list[str]:
    """Names of the presets shipped with the package, sorted."""
    return list(_shipped_presets())


@functools.cache
def _shipped_presets() -> tuple[str, ...]:
    # The package's own files: they do not change while the process runs.
    folder = resources.files(PRESET_PACKAGE)
    return tuple(sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".toml")))


#: Largest rules file read: the biggest preset is a few KiB.
MAX_RULES_FILE = 1024 * 1024


def _read_toml(source: str, text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RulesConfigError(f"{source}: not valid TOML: {exc}") from exc
    except RecursionError:
        raise RulesConfigError(f"{source}: not valid TOML: nested too deeply") from None


#: What a path that is not a regular file is, for the one line that refuses it.
_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def regular_file_problem(path: Path, *, absent_ok: bool = False) -> str | None:
    """Why ``path`` is not a regular file to open (None when it is one, or when it is
    absent and ``absent_ok``). Looked at with ``stat`` only, never opened: a FIFO would
    hang the reader and a device would feed it for ever. A symlink is followed, so a
    link to a device is refused as the device. Every command that opens a journal, a
    rules file, a config or an event file asks this first."""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None if absent_ok else "no file there"
    except OSError as exc:
        return f"cannot look at it: {exc.strerror or exc}"
    except ValueError:  # a NUL in the path
        return "not a usable path (it holds a NUL)"
    if stat.S_ISREG(mode):
        return None
    kind = next((name for test, name in _KINDS if test(mode)), "not a file")
    return f"not a regular file ({kind})"


def read_small_file(path: Path, what: str, limit: int = MAX_RULES_FILE) -> str:
    """The text of ``path``, a regular file of at most ``limit`` bytes (not a FIFO, a
    device or ``/dev/zero``, which would hang or fill the memory). Raises ValueError
    saying what is wrong (the caller names the file), or OSError when reading fails."""
    problem = regular_file_problem(path)
    if problem is not None:
        raise ValueError(problem)
    size = path.stat().st_size
    if size > limit:
        raise ValueError(f"{size} bytes; a {what} is at most {limit}")
    with path.open("rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"a {what} is at most {limit} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("not UTF-8 text") from None


def _locate(ref: str, relative_to: Path | None) -> tuple[str, str, Path | None]:
    """Find a preset by name or path; returns (source label, text, its folder or None)."""
    if ref in _shipped_presets():
        text = resources.files(PRESET_PACKAGE).joinpath(f"{ref}.toml").read_text("utf-8")
        return f"preset {ref!r}", text, None
    path = Path(ref)
    if relative_to is not None and not path.is_absolute():
        path = relative_to / path
    if path.suffix == ".toml" or os.path.exists(path):
        try:
            return str(path), read_small_file(path, "rules file"), path.parent
        except OSError as exc:
            raise RulesConfigError(f"{path}: cannot read rules file: {exc.strerror}") from exc
        except ValueError as exc:
            raise RulesConfigError(f"{path}: cannot read rules file: {exc}") from None
    if "/" in ref:
        # Written as a path: the missing file is the news, not the presets.
        raise RulesConfigError(f"{ref}: no rules file there (and no preset of that name)")
    raise RulesConfigError(_unknown_rules(ref))


def _unknown_rules(ref: str) -> str:
    """What to say of a rules name ``ref`` that is neither a preset nor a file, naming it
    as the user gave it (never a path made of it)."""
    known = ", ".join(preset_names())
    hint = difflib.get_close_matches(ref, preset_names(), n=1)
    extra = f" (did you mean {hint[0]!r}?)" if hint else ""
    return f"unknown preset {ref!r}{extra}; known presets: {known}, or a path to a rules file"


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = {k: dict(v) if isinstance(v, dict) else v for k, v in base.items()}
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = {**out[key], **value}
        else:
            out[key] = value
    return out


def _resolve(ref: str, relative_to: Path | None, seen: tuple[str, ...]) -> dict[str, Any]:
    source, text, folder = _locate(ref, relative_to)
    if source in seen:
        chain = " -> ".join((*seen, source))
        raise RulesConfigError(f"{source}: 'extends' loops back on itself: {chain}")
    raw = _read_toml(source, text)
    _check_shape(source, raw)
    raw["__source__"] = source
    parent = raw.get("extends")
    if parent is None:
        return raw
    if not isinstance(parent, str):
        raise RulesConfigError(f"{source}: 'extends' must be a preset name or a file path")
    base = _resolve(parent, folder, (*seen, source))
    base.pop("name", None)
    base.pop("description", None)
    return _merge(base, raw)


def _unknown(source: str, where: str, key: str, allowed: list[str]) -> RulesConfigError:
    hint = difflib.get_close_matches(key, allowed, n=1)
    extra = f" (did you mean {hint[0]!r}?)" if hint else ""
    return RulesConfigError(
        f"{source}: unknown {where} {key!r}{extra}; allowed: {', '.join(allowed)}"
    )


#: Options that were replaced, with what replaces them (for a clear message).
REPLACED = {
    ("flow", "nagashi_counts_as_win"): (
        "nagashi_flow: 'dealer_repeats' for true, 'draw' for false, or 'win'"
    ),
    ("game", "tie_break"): "tie (same values: 'seat_order' or 'share_uma'; RULES.md's name)",
}


def _check_shape(source: str, raw: dict[str, Any]) -> None:
    allowed_top = [*TOP_LEVEL_KEYS, *SECTIONS]
    for key, value in raw.items():
        if key not in allowed_top:
            raise _unknown(source, "key", key, allowed_top)
        if key in SECTIONS:
            if not isinstance(value, dict):
                raise RulesConfigError(f"{source}: [{key}] must be a table of options")
            names = [f.name for f in fields(SECTIONS[key])]
            for sub in value:
                if (key, sub) in REPLACED:
                    raise RulesConfigError(
                        f"{source}: [{key}] {sub} was replaced by {REPLACED[key, sub]}"
                    )
                if sub not in names:
                    raise _unknown(source, f"option in [{key}]", sub, names)


def _describe(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin is typing.Literal:
        return "one of " + ", ".join(repr(a) for a in typing.get_args(tp))
    if origin in (types.UnionType, typing.Union):
        return " or ".join(_describe(a) for a in typing.get_args(tp))
    if origin is tuple:
        return f"a list of {_describe(typing.get_args(tp)[0])}"
    if tp is type(None):
        return "absent (omit the key)"
    return {bool: "true or false", int: "an integer", str: "a string"}.get(tp, str(tp))


def _convert(where: str, tp: Any, value: Any, meta: dict[str, Any]) -> Any:
    """Check ``value`` against the type ``tp`` and the field's limits; returns the value."""
    origin = typing.get_origin(tp)
    if origin in (types.UnionType, typing.Union):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return _convert(where, args[0], value, meta)
    if origin is typing.Literal:
        allowed = typing.get_args(tp)
        if value not in allowed:
            raise RulesConfigError(
                f"{where} is {value!r}; allowed: {', '.join(repr(a) for a in allowed)}"
            )
        return value
    if origin is tuple:
        if not isinstance(value, list):
            raise RulesConfigError(f"{where} must be {_describe(tp)}, got {value!r}")
        item_tp = typing.get_args(tp)[0]
        return tuple(_convert(f"{where}[{i}]", item_tp, v, meta) for i, v in enumerate(value))
    if tp is bool:
        if not isinstance(value, bool):
            raise RulesConfigError(f"{where} must be true or false, got {value!r}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise RulesConfigError(f"{where} must be an integer, got {value!r}")
        if "choices" in meta and value not in meta["choices"]:
            raise RulesConfigError(
                f"{where} is {value}; allowed: {', '.join(str(c) for c in meta['choices'])}"
            )
        if "min" in meta and value < meta["min"]:
            raise RulesConfigError(f"{where} is {value}; it must be at least {meta['min']}")
        if "max" in meta and value > meta["max"]:
            raise RulesConfigError(f"{where} is {value}; it must be at most {meta['max']}")
        return value
    if tp is str:
        if not isinstance(value, str):
            raise RulesConfigError(f"{where} must be a string, got {value!r}")
        if "items" in meta and value not in meta["items"]:
            raise RulesConfigError(
                f"{where} is {value!r}; allowed: {', '.join(repr(c) for c in meta['items'])}"
            )
        return value
    raise TypeError(f"unsupported option type {tp!r}")  # pragma: no cover


#: The rules' name shows on console displays and in the records; the description in
#: ``tablectl rules list``.
NAME_MAX = 40
DESCRIPTION_MAX = 500


def _label(source: str, key: str, value: Any, limit: int) -> str:
    """``name`` or ``description``: printable text (no escape sequence reaches a
    terminal or a display), at most ``limit`` characters."""
    if not isinstance(value, str):
        raise RulesConfigError(f"{source}: {key} must be a string")
    if len(value) > limit:
        raise RulesConfigError(f"{source}: {key} is {len(value)} characters; at most {limit}")
    odd = next((c for c in value if not c.isprintable()), None)
    if odd is not None:
        raise RulesConfigError(f"{source}: {key} holds the unprintable character {odd!r}")
    return value


@functools.cache
def _section_hints(name: str) -> dict[str, Any]:
    return typing.get_type_hints(SECTIONS[name])


def _build(source: str, raw: dict[str, Any]) -> HouseRules:
    sections: dict[str, Any] = {}
    for name, cls in SECTIONS.items():
        hints = _section_hints(name)
        values = raw.get(name, {})
        kwargs = {}
        for f in fields(cls):
            if f.name in values:
                where = f"{source}: [{name}] {f.name}"
                kwargs[f.name] = _convert(where, hints[f.name], values[f.name], dict(f.metadata))
        sections[name] = cls(**kwargs)
    rules = HouseRules(
        name=_label(source, "name", raw.get("name", "custom"), NAME_MAX),
        description=_label(source, "description", raw.get("description", ""), DESCRIPTION_MAX),
        **sections,
    )
    _check_consistency(source, rules)
    return rules


def _check_consistency(source: str, rules: HouseRules) -> None:
    """Cross-field checks that a single field's limits cannot express."""
    players = rules.game.players
    if rules.game.uma and len(rules.game.uma) != players:
        raise RulesConfigError(
            f"{source}: [game] uma has {len(rules.game.uma)} entries; it needs one per player"
            f" ({players}) or none"
        )
    if rules.game.uma and sum(rules.game.uma) != 0:
        raise RulesConfigError(f"{source}: [game] uma must sum to 0, got {sum(rules.game.uma)}")
    table = rules.scoring.tenpai_table
    if table and len(table) != players - 1:
        raise RulesConfigError(
            f"{source}: [scoring] tenpai_table needs {players - 1} rows (1 to {players - 1}"
            f" tenpai players), got {len(table)}"
        )
    for i, row in enumerate(table):
        if len(row) != 2:
            raise RulesConfigError(
                f"{source}: [scoring] tenpai_table[{i}] must be [each tenpai gets, each noten pays]"
            )
    if rules.wall.north_pulls and players != 3:
        raise RulesConfigError(f"{source}: [wall] north_pulls needs [game] players = 3")
    if rules.game.return_points < rules.game.start_points and rules.game.oka_to_top:
        raise RulesConfigError(
            f"{source}: [game] return_points ({rules.game.return_points}) is below start_points"
            f" ({rules.game.start_points}); set oka_to_top = false or raise return_points"
        )
    if rules.riichi.furiten_at_draw == "chombo" and not rules.tiles.furiten:
        raise RulesConfigError(
            f"{source}: [riichi] furiten_at_draw = 'chombo' punishes a furiten riichi, which"
            " [tiles] furiten = false says does not exist"
        )
    if rules.flow.multiple_ron == "every_discarder" and not rules.wall.own_walls:
        raise RulesConfigError(
            f"{source}: [flow] multiple_ron = 'every_discarder' is kantan's turn-based ron and"
            " needs [wall] own_walls = true"
        )
    _check_money(source, rules)


def _check_money(source: str, rules: HouseRules) -> None:
    """The ``[money]`` section's cross-field checks: a count of chips needs a chip value,
    a chip value something that earns chips, a five's chips a five of that colour."""
    money = rules.money
    players = rules.players
    if money.uma and len(money.uma) != players:
        raise RulesConfigError(
            f"{source}: [money] uma has {len(money.uma)} entries; it needs one per player"
            f" ({players}) or none"
        )
    if money.uma and sum(money.uma) != 0:
        raise RulesConfigError(f"{source}: [money] uma must sum to 0, got {sum(money.uma)}")
    counts = [f"{item}_chips" for item in CHIP_ITEMS] + ["yakuman_chips"]
    earning = [name for name in counts if getattr(money, name)]
    if earning and not money.chip_value:
        raise RulesConfigError(
            f"{source}: [money] {earning[0]} is {getattr(money, earning[0])} but chip_value"
            " is 0: give the P a chip is worth"
        )
    if money.chip_value and not earning:
        raise RulesConfigError(
            f"{source}: [money] chip_value is {money.chip_value} but nothing earns chips:"
            f" set one of {', '.join(counts)}"
        )
    if money.gold_chips and not rules.tiles.gold_fives:
        raise RulesConfigError(
            f"{source}: [money] gold_chips is {money.gold_chips} but [tiles] gold_fives is"
            " empty: no tile earns them"
        )
    if money.red_chips and not rules.tiles.red_fives:
        raise RulesConfigError(
            f"{source}: [money] red_chips is {money.red_chips} but [tiles] red_fives is"
            " empty: no tile earns them"
        )


def load_rules(ref: str) -> HouseRules:
    """Load a preset by name (``kenko``) or a parlor's own TOML file by path.  A shipped
    preset is read and checked once per process (the rules are frozen, and a replay or a
    journal reader loads its game's preset again for every game); a file is read every
    time, as it may have been edited."""
    if ref in _shipped_presets():
        return _load_preset(ref)
    return _load(ref)


@functools.cache
def _load_preset(name: str) -> HouseRules:
    return _load(name)


def _load(ref: str) -> HouseRules:
    raw = _resolve(ref, None, ())
    source = raw.pop("__source__")
    raw.pop("extends", None)
    if "name" not in raw:
        raw["name"] = Path(ref).stem if ref not in _shipped_presets() else ref
    return _build(source, raw)
