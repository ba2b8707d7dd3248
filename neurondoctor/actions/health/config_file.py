"""Reading `health.conf` from disk: the file `health` and `check --health-conf` take their options from.

The parsing is `config.py`'s (pure); here is what root must refuse before it trusts a file's options: a link to a
file another user owns (they could rewrite the node's checks), a file past MAX_CONFIG_BYTES (never cut: a `skip`
past the cut would be lost), a file it cannot read. Each is a problem that makes the verdict unknown.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Optional

from neurondoctor.actions.health.config import (
    CONFIG_ENV,
    MAX_CONFIG_BYTES,
    HealthConfig,
    config_path,
    parse_health_config,
)
from neurondoctor.regular_files import read_regular_file


def _foreign_link(path: Path) -> Optional[str]:
    """Why a config that is a link to a file neither root nor this user owns is not read, else None: root trusts
    the options of a root-owned file, not those of a file another user can write."""
    if not path.is_symlink():
        return None
    owner = path.stat().st_uid
    if owner in (0, os.geteuid()):
        return None
    return f"{path}: a link to a file owned by uid {owner}, not by root: not read"


def load_health_config(environ: Mapping[str, str]) -> HealthConfig:
    """health.conf as the file says, or the problems that make the verdict unknown: missing when named, a foreign
    link, past MAX_CONFIG_BYTES, unreadable."""
    path = config_path(environ)
    try:
        refusal = _foreign_link(path)
        if refusal:
            return HealthConfig(problems=[refusal])
        data = read_regular_file(path, MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        config = HealthConfig()
        if environ.get(CONFIG_ENV):
            config.problems.append(f"{path}: no such file ({CONFIG_ENV} names it)")
        return config
    except OSError as error:
        return HealthConfig(problems=[f"{path}: cannot be read: {error.strerror or error}"])
    if len(data) > MAX_CONFIG_BYTES:
        return HealthConfig(problems=[f"{path}: larger than {MAX_CONFIG_BYTES >> 10} KiB: not read"])
    return parse_health_config(data.decode("utf-8", errors="replace"), str(path))
