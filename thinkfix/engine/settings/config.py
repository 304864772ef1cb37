"""Settings from `[tool.thinkfix]` (pyproject.toml) or thinkfix.toml, `THINKFIX_*`, and flags.

Precedence, lowest first: built-in defaults, the config file, environment
variables, command-line flags. A list given at a higher level replaces the one
below (it does not extend it). The config file is `--config FILE` when given,
else the first `thinkfix.toml` or `pyproject.toml` with a `[tool.thinkfix]`
table found from the working folder upward. Keys may be written `snake_case`
or `kebab-case`; environment variables are `THINKFIX_` + the key in upper case
(`THINKFIX_OUTPUT_FORMAT=json`, `THINKFIX_EXCLUDE=a/**,b/**`). Paths in the
config file (baseline, output, reports, `disable.paths`) are relative to the
file's folder. Which value wins is click's work (`cli.options`: the file read here becomes
the command's `default_map`, each `THINKFIX_*` a setting's `envvar`); this module finds and
checks the file (`config_values`) and gives the winning values their meaning (`settings`).

A config file travels with the files it configures, so it is trusted no more than they are
(docs/reliability.md, "A hostile checkout"): a value it gives may not name a file to write
outside its own folder (symlinks and `..` resolved), nor weaken redaction (`redact = "none"`),
nor lift the bounds on hostile input (`max-record-size`, `max-findings`), nor read a baseline
from outside that folder; its `jobs` is at most twice the cores; the same value from a flag or
`THINKFIX_*`, which come from whoever runs thinkfix, may.
Example:

    [tool.thinkfix]
    exclude = ["archive/**"]
    select = ["block", "orphan_close", "unclosed"]
    baseline = "thinkfix-baseline.json"
    orphan-close = "strip"
    disable = {paths = ["datasets/**"], models = ["minimax-*"]}"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from collections.abc import Mapping
from enum import Enum
from typing import Any

from thinkfix.engine.health.model import parse_checks
from thinkfix.engine.inputs.files import InputOptions, UnknownPolicy
from thinkfix.engine.scan.options import ScanOptions, select_kinds
from thinkfix.engine.secrets.redaction import Redaction
from thinkfix.engine.settings.values import (
    CONFIG_NAMES,
    ENV_PREFIX,
    FIELDS,
    INTERNAL,
    LISTS,
    PATHS,
    SETTING_NAMES,
    WRITES,
    ConfigError,
    Settings,
    coerce,
    setting_key,
)
from thinkfix.io.regular import NotRegular, open_regular
from thinkfix.normalizer.policy import (
    DEFAULT,
    Policy,
)


def _inside(path: str, root: str) -> bool:
    """Does `path`, every symlink and `..` resolved, lie inside the folder `root`?"""
    real, top = os.path.realpath(path), os.path.realpath(root)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


#: Code points HFS+ ignores in a name (git's `is_hfs_dotgit`): `.g\u200cit` is `.git` there.
_IGNORED = re.compile("[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]")


def _git_name(part: str) -> bool:
    """Is this path component a git folder's name on some file system: `.git` in any case
    (case-insensitive systems), with trailing dots or spaces (NTFS drops them), with the
    code points HFS+ ignores, or NTFS's short name `git~1`? git refuses to check any of them
    out, so no checkout's content lies there."""
    name = _IGNORED.sub("", part).rstrip(". ").lower()
    return name in (".git", "git~1")


def _not_checkout_content(path: str, root: str) -> str | None:
    """Why a config in `root` may not write `path` though it lies inside: it is in a git
    folder (a hook there runs on the next commit), or what is there now is not a plain,
    non-executable file (a config's report never replaces a program). None: it may."""
    real, top = os.path.realpath(path), os.path.realpath(root)
    if any(_git_name(part) for part in os.path.relpath(real, top).split(os.sep)):
        return "inside a git folder, which is not the checkout's content"
    try:
        st = os.stat(real)
    except OSError:
        return None  # not there yet: written afresh
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    if st.st_mode & 0o111:
        return "an executable file"
    return None


def _trusted_file_value(name: str, value: Any, config_file: str) -> None:
    """ConfigError when a config file's value writes outside its folder (or into what is
    not the checkout's content: `_not_checkout_content`), unmasks secrets, lifts a bound on
    hostile input (`BOUNDS`), or reads a baseline from outside its folder or from what never
    ends (a FIFO, a device): the config of a checkout is as untrusted as the sessions in it."""
    root = os.path.dirname(config_file)
    if name in WRITES:
        targets = value if isinstance(value, tuple) else (value,)
        for target in targets:
            path = target.partition("=")[2] if name == "report" else target
            if not path:
                continue
            why = (
                f"outside the project ({root})"
                if not _inside(path, root)
                else _not_checkout_content(path, root)
            )
            if why is not None:
                real = os.path.realpath(path)
                if not why.startswith("outside") and real != os.path.abspath(path):
                    why = f"{why} ({real})"  # where a link in the path leads
                raise ConfigError(
                    f"{config_file}: {name} names {path!r}, {why}; a config file writes only "
                    f"files of its own folder's content (a flag or ${env_name(name)} may name "
                    "any file)"
                )
    if name == "redact" and _weakens(value):
        raise ConfigError(
            f"{config_file}: redact = {value!r} would show what the default masks; a config "
            "file may only ask for as much or more (secrets, all); --redact none or "
            f"${env_name('redact')}=none may ask for less"
        )
    if name in BOUNDS and not 0 < value <= Settings._field_defaults[name]:
        raise ConfigError(
            f"{config_file}: {name} = {value!r} would lift a bound on hostile input (the "
            f"default is {Settings._field_defaults[name]}, and 0 turns it off); a config file "
            f"may only lower it; --{name.replace('_', '-')} or ${env_name(name)} may lift it"
        )
    if name == "baseline" and value:
        why = (
            f"outside the project ({root})"
            if not _inside(value, root)
            else _not_a_file(os.path.realpath(value))
        )
        if why is not None:
            raise ConfigError(
                f"{config_file}: baseline names {value!r}, {why}; a config file reads a "
                f"baseline only from its own folder (--baseline or ${env_name('baseline')} "
                "may name any file)"
            )


#: The settings that bound the work hostile input can cause: a config file may lower them.
BOUNDS = ("max_record_size", "max_findings")


def _not_a_file(path: str) -> str | None:
    """Why `path` is no file to read a baseline from (a FIFO never ends a read, a device
    such as /dev/zero neither), or None: a regular file, or nothing (the read says so)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return None if stat.S_ISREG(st.st_mode) else "not a regular file"


def _file_jobs(jobs: int) -> int:
    """A config file's `jobs`, at most twice the cores this process may use: a checkout's
    config started a process for every session file it held (`jobs = 100000`). Twice, not
    once: a value written for the machine of whoever committed it is kept on a CI runner
    with half its cores, and more workers than that only wait on the same disk."""
    from thinkfix.engine.parallel.pool import default_jobs  # only a config that sets jobs

    return min(jobs, 2 * default_jobs()) if jobs else jobs


def _weakens(redact: Any) -> bool:
    try:
        return Redaction.from_flag(redact) is Redaction.NONE
    except ValueError:
        return False  # not a redaction at all: `redaction` says so


def find_config(start: str) -> str | None:
    """The first thinkfix.toml, or pyproject.toml with [tool.thinkfix], from `start` upward.
    One that another user owns is refused (`_foreign`), never read as ours."""
    folder = os.path.abspath(start)
    while True:
        for name in CONFIG_NAMES:
            path = os.path.join(folder, name)
            # a FIFO or device of that name is read (and refused by name, `_text`), never
            # passed over: a parent folder's settings would apply instead of these
            if not os.path.exists(path) or os.path.isdir(path):
                continue
            owner = _foreign(path)
            if owner is not None and (name != "pyproject.toml" or _has_table(path, quiet=True)):
                raise ConfigError(
                    f"{path}: owned by another user (uid {owner}), so it may be anyone's "
                    "(a shared folder such as /tmp above this one): not read; name it with "
                    "--config to use it, or pass --isolated"
                )
            if owner is None and (name != "pyproject.toml" or _has_table(path)):
                return path
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


#: The most bytes of a config file read: a config is a few lines, and a checkout's may be a
#: sparse file of any size (a FIFO or device is refused before a byte is read).
MAX_CONFIG_BYTES = 4 * 2**20


#: Compiled on a TOML error only (re's cache keeps it): not a start-up cost (#26 item 3).
_TOML_AT = r"\s*\(at (?:line (\d+), column (\d+)|end of document)\)$"


def toml_error(path: str, exc: ValueError, text: str) -> ConfigError:
    """`path:line:col: invalid TOML: message`, the location editors jump to.

    tomllib puts the place at the end of its message ("... (at line 3, column 5)"); it becomes
    the prefix, where compilers and linters put it. `text` is what was parsed (the file is not
    read again: it may have changed, or never end).
    """
    message = str(exc)
    at = re.search(_TOML_AT, message)
    if at is None:
        return ConfigError(f"{path}: invalid TOML: {message}")
    if at[1] is None:  # "at end of document": the place is after the last line
        lines = text.count("\n") or 1
        return ConfigError(
            f"{path}:{lines}:1: invalid TOML: {message[: at.start()]} (at end of document)"
        )
    return ConfigError(f"{path}:{at[1]}:{at[2]}: invalid TOML: {message[: at.start()]}")


def _text(path: str) -> str:
    """A config file's text, read as a session is: never `open`, since a FIFO waits for a
    writer forever and /dev/zero never ends (`open_regular` refuses both by name), and at
    most `MAX_CONFIG_BYTES` of a regular file. Raises `ConfigError` naming the file."""
    try:
        with open_regular(path) as fp:
            data = fp.read(MAX_CONFIG_BYTES + 1)
    except NotRegular as exc:
        # only what it is: "stdin, as '-'", which the message adds for sessions, is no config
        raise ConfigError(
            f"{path}: cannot read config: {str(exc.strerror).partition(';')[0]}"
        ) from exc
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config: {exc.strerror or exc}") from exc
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(
            f"{path}: cannot read config: larger than {MAX_CONFIG_BYTES:,} bytes, which no "
            "config needs"
        )
    try:
        return data.decode()
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path}: cannot read config: not UTF-8 (byte {exc.start}: {exc.reason}), as TOML "
            "must be"
        ) from exc


def _load(path: str) -> dict[str, Any]:
    # Imported here: most runs read no config file, and tomllib costs ~2 ms of start-up.
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10 with the tomli backport
        import tomli as tomllib  # type: ignore[import-not-found, no-redef, unused-ignore]
    text = _text(path)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise toml_error(path, exc, text) from exc


def _has_table(pyproject: str, *, quiet: bool = False) -> bool:
    # A pyproject.toml that does not parse is an error, never "no table here": skipping it
    # would silently apply a parent folder's settings instead of the ones the user wrote.
    # Another user's (`quiet`) is no table: what it holds is not ours to be stopped by.
    try:
        doc = _load(pyproject)
    except ConfigError:
        if quiet:
            return False
        raise
    return isinstance(doc.get("tool"), dict) and "thinkfix" in doc["tool"]


def _foreign(path: str) -> int | None:
    """The owner of a config file found upward when it is another user, neither us nor root,
    and we are not root; else None. Anyone may write /tmp/thinkfix.toml, and a run anywhere
    under /tmp would obey it (git refuses such a repository: `safe.directory`)."""
    if not hasattr(os, "getuid"):  # pragma: no cover - Windows: no owners to compare
        return None
    me = os.getuid()
    try:
        owner = os.stat(path).st_uid
    except OSError:
        return None
    return owner if me != 0 and owner not in (me, 0) else None


def read_config(path: str) -> dict[str, Any]:
    """The settings a config file sets, typed and with paths made absolute."""
    doc = _load(path)
    tool = doc.get("tool")
    if isinstance(tool, dict) and isinstance(tool.get("thinkfix"), dict):
        table, where = tool["thinkfix"], f"{path} [tool.thinkfix]"
    elif os.path.basename(path) == "pyproject.toml":
        return {}
    else:
        table, where = {k: v for k, v in doc.items() if k != "tool"}, path
    flat: dict[str, Any] = {}
    for raw_key, value in table.items():
        key = setting_key(raw_key)
        if key == "disable":
            if not isinstance(value, dict):
                raise ConfigError(
                    f"{where}: disable must be a table {{paths = [...], models = [...]}}"
                )
            for sub, items in value.items():
                name = f"disable_{setting_key(sub)}"
                if name not in ("disable_paths", "disable_models"):
                    raise ConfigError(f"{where}: unknown key disable.{sub} (known: paths, models)")
                flat[name] = items
            continue
        if key not in FIELDS or key in INTERNAL:
            raise ConfigError(f"{where}: unknown key {raw_key!r}")
        flat[key] = value
    out = {k: coerce(k, v, where) for k, v in flat.items()}
    root = os.path.dirname(os.path.abspath(path))
    for key in PATHS & out.keys():
        out[key] = os.path.join(root, out[key])
    if "report" in out:
        out["report"] = tuple(_report_path(spec, root) for spec in out["report"])
    return out


def _report_path(spec: str, root: str) -> str:
    name, sep, target = spec.partition("=")
    return f"{name}={os.path.join(root, target)}" if sep and target else spec


def config_values(
    config: str | None, *, isolated: bool = False, cwd: str | None = None
) -> tuple[str | None, dict[str, Any]]:
    """The config file to use and the settings it sets (typed, paths made absolute), keyed by
    setting name, which is the name of the command-line parameter that sets it: `config`
    when given, else the first one found from `cwd` upward (none with `isolated`). What
    the CLI hands click as `ctx.default_map`. Raises `ConfigError`."""
    path = config or (None if isolated else find_config(cwd or os.getcwd()))
    if not path:
        return None, {}
    return os.path.abspath(path), read_config(path)


class Origin(Enum):
    """Where a setting's value came from, lowest precedence first (click picks the winner)."""

    DEFAULT = "default"
    FILE = "file"
    ENV = "env"
    FLAG = "flag"


def env_name(name: str) -> str:
    """The environment variable that sets `name`: `THINKFIX_` and the name in upper case."""
    return ENV_PREFIX + name.upper()


def settings(
    given: Mapping[str, tuple[Any, Origin]],
    config_file: str | None = None,
    flags: Mapping[str, str] | None = None,
) -> Settings:
    """The settings from each one's winning value and where it came from: a file's value is
    already typed (`read_config`), an environment variable's is text, a flag's is what click
    parsed (a repeatable flag also takes comma-separated lists; `flags` spells each one as
    given, for its errors); a default leaves the field's
    own. A config file's value that writes outside its folder or weakens redaction is refused
    (`_trusted_file_value`). Raises `ConfigError` naming the variable, flag or file."""
    values: dict[str, Any] = {}
    for name, (value, origin) in given.items():
        if name not in SETTING_NAMES:
            raise ConfigError(f"unknown setting {name!r}")
        if origin is Origin.ENV:
            values[name] = coerce(name, value, f"${env_name(name)}")
        elif origin is Origin.FLAG:
            if name in LISTS and isinstance(value, tuple) and name != "report":
                # FORMAT=PATH may hold a comma; other lists also take comma-separated values
                value = tuple(v.strip() for item in value for v in item.split(",") if v.strip())
            values[name] = coerce(name, value, (flags or {}).get(name, "flag"))
        elif origin is Origin.FILE:
            if config_file is not None:
                _trusted_file_value(name, value, config_file)
            values[name] = _file_jobs(value) if name == "jobs" else value
    return Settings(config_file=config_file, **values)


#: Policy settings and the `Policy` attribute each sets.
_POLICY_FIELDS = {
    "tags": "tags",
    "orphan_close": "orphan_close",
    "native_mode": "native",
    "protect_code": "protect_code",
    "trim": "trim",
    "harmony": "harmony",
    "prose_delimiters": "prose_delimiters",
}


def describe(settings: Settings, sources: Mapping[str, str]) -> str:
    """The resolved settings as TOML-like lines, each with its source as a comment."""
    lines = [f"# config file: {settings.config_file or '(none)'}"]
    for name in sorted(sources):
        value = getattr(settings, name)
        if value is None and name in _POLICY_FIELDS:  # unset: the default policy's own value
            value = getattr(DEFAULT, _POLICY_FIELDS[name])
        if isinstance(value, Enum):
            value = value.value
        shown = (
            "(unset)"
            if value is None
            else json.dumps(list(value) if isinstance(value, tuple) else value, ensure_ascii=False)
        )
        lines.append(f"{name} = {shown}  # {sources[name]}")
    return "\n".join(lines) + "\n"


def policy(settings: Settings, base: Policy = DEFAULT) -> Policy:
    """The normalizer policy the settings ask for."""
    changes: dict[str, Any] = {}
    for name in ("tags", "orphan_close", "protect_code", "trim", "harmony", "prose_delimiters"):
        value = getattr(settings, name)
        if value is not None:
            changes[name] = value
    if settings.native_mode is not None:
        changes["native"] = settings.native_mode
    return base.with_changes(**changes) if changes else base


def redaction(settings: Settings) -> Redaction:
    """How much session text outputs may show: secrets masked unless `redact = "none"`."""
    try:
        return Redaction.from_flag(settings.redact)
    except ValueError:
        raise ConfigError(
            f"redact must be one of none, secrets, all, not {settings.redact!r}"
        ) from None


def scan_options(settings: Settings, base_policy: Policy | None = None) -> ScanOptions:
    """What the engine needs from the settings."""
    try:
        kinds = select_kinds(settings.select, settings.ignore)
        checks = parse_checks(settings.check)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    return ScanOptions(
        policy=base_policy if base_policy is not None else policy(settings),
        kinds=kinds,
        inputs=InputOptions(
            include=settings.include,
            exclude=settings.exclude,
            anchor=settings.pattern_anchor,
            respect_ignore=settings.respect_gitignore,
            format=settings.format,
            unknown=UnknownPolicy(settings.unknown_format),
        ),
        disabled_models=settings.disable_models,
        disabled_paths=settings.disable_paths,
        disabled_base=settings.pattern_anchor,
        prefilter=not settings.parse_all,
        max_findings=settings.max_findings,
        max_record_size=settings.max_record_size,
        allow_no_sessions=settings.allow_no_sessions,
        redaction=redaction(settings),
        checks=checks,
    )
