"""`/etc/neurondoctor/health.conf`: the options of a health check started with no arguments (docs/contracts.md §8).

slurmd runs `HealthCheckProgram` with no arguments and an environment holding only `SLURMD_NODENAME`, so the
program reads its options from this file (`NEURONDOCTOR_CONFIG` moves it where the environment has one). The
grammar: one `key = value` per line, `#` starts a comment, blank lines are ignored, a repeated key adds a value
(`venv`, `python`, `select`, `skip`) or is an error (the others). An unknown key or a bad value is a problem the
caller turns into an unknown verdict that changes nothing — a typo must never drain a cluster. Pure: text in,
options and problems out.

A problem names a known key by name and anything else by its line number only, never the line's text: the file
may be a link to another one (a shadow-style file), and problems reach stdout, syslog and the status file.
At most MAX_PROBLEMS are listed, then `+N more`, however many lines repeat a key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from neurondoctor.strict_numbers import finite_float

DEFAULT_CONFIG = Path("/etc/neurondoctor/health.conf")
CONFIG_ENV = "NEURONDOCTOR_CONFIG"
DEFAULT_DEADLINE_S = 30.0
SLURM_HEALTH_LIMIT_S = 60.0  # slurmd kills a HealthCheckProgram after 60 s
SINGLE = ("root", "release", "deadline", "status_file", "slurm_conf", "compile_cache")
MAX_CONFIG_BYTES = 256 << 10
MAX_PROBLEMS = 50


@dataclass
class HealthConfig:
    root: str = "/"
    venvs: list[str] = field(default_factory=list)
    pythons: list[str] = field(default_factory=list)
    release: Optional[str] = None
    select: list[str] = field(default_factory=list)
    skip: list[str] = field(default_factory=list)
    deadline_s: float = DEFAULT_DEADLINE_S
    status_file: Optional[str] = None
    slurm_conf: Optional[str] = None
    compile_cache: Optional[str] = None  # the cache this node's jobs use: judged whoever owns it
    source: Optional[str] = None  # the file it came from, None when there was none
    problems: list[str] = field(default_factory=list)


_LISTS = {"venv": "venvs", "python": "pythons", "select": "select", "skip": "skip"}  # key -> HealthConfig field
REPEATABLE = tuple(_LISTS)


def _deadline(value: str) -> float:
    seconds = finite_float(value)
    if seconds is None:
        raise ValueError("not a number of seconds")
    if not 1.0 <= seconds < SLURM_HEALTH_LIMIT_S:
        raise ValueError(f"must be at least 1 and below Slurm's {SLURM_HEALTH_LIMIT_S:.0f} s")
    return seconds


def _location(value: str) -> str:
    """A compile cache as neuronx-cc takes it: an absolute path (inside `root`) or a URL."""
    if not value.startswith("/") and "://" not in value:
        raise ValueError("not an absolute path or a URL")
    return value


def parse_health_config(text: str, source: str) -> HealthConfig:
    """The options in `text`; every line that cannot be used is a problem naming `source:line`."""
    config = HealthConfig(source=source)
    seen: set[str] = set()
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        where = f"{source}:{number}"
        key, equals, value = (part.strip() for part in line.partition("="))
        if not equals or not key or not value:
            config.problems.append(f"{where}: not a `key = value` line")
            continue
        if key in _LISTS:
            getattr(config, _LISTS[key]).append(value)
            continue
        if key not in SINGLE:
            config.problems.append(f"{where}: an unknown key (known: {', '.join(REPEATABLE + SINGLE)})")
            continue
        if key in seen:
            config.problems.append(f"{where}: {key} given twice")
            continue
        seen.add(key)
        try:
            if key == "deadline":
                config.deadline_s = _deadline(value)
            else:
                setattr(config, key, _location(value) if key == "compile_cache" else value)  # the field's name
        except ValueError as error:
            config.problems.append(f"{where}: {key}: {error}")
    config.problems = capped_problems(config.problems)
    return config


def capped_problems(problems: list[str]) -> list[str]:
    """The first MAX_PROBLEMS problems, then one line that counts the rest."""
    if len(problems) <= MAX_PROBLEMS:
        return problems
    return [*problems[:MAX_PROBLEMS], f"+{len(problems) - MAX_PROBLEMS} more problems"]


def config_path(environ: Mapping[str, str]) -> Path:
    return Path(environ.get(CONFIG_ENV) or DEFAULT_CONFIG)
