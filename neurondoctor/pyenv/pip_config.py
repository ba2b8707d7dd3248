"""Which package indexes pip would use for an environment: its configuration files and variables.

pip reads, lowest precedence first: `/etc/pip.conf` and `$XDG_CONFIG_DIRS/pip/pip.conf`, the user's
`~/.pip/pip.conf` and `~/.config/pip/pip.conf`, then `<venv>/pip.conf`; `PIP_*` variables override all.
Credentials in URLs are redacted as they are read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Optional

from neurondoctor.facts.python_env import PipConfigSource
from neurondoctor.host.rootfs import RootFS
from neurondoctor.redaction import redact_url_credentials

_SECTIONS = ("global", "install")


def _split_urls(value: str) -> list[str]:
    return [redact_url_credentials(part) for part in value.split() if part]


def parse_pip_config(origin: str, text: str) -> PipConfigSource:
    """Index settings from one pip.conf text; a syntax error is recorded on the source."""
    import configparser  # only when a pip.conf exists: it costs more than the rest of the scan

    source = PipConfigSource(origin=origin)
    parser = configparser.RawConfigParser(strict=False)
    try:
        parser.read_string(text, source=origin)
    except configparser.Error as error:
        source.error = str(error).splitlines()[0]
        return source
    for section in _SECTIONS:
        if not parser.has_section(section):
            continue
        for key, value in parser.items(section):
            key = key.replace("_", "-")
            if key == "index-url":
                source.index_url = redact_url_credentials(value.strip())
            elif key == "extra-index-url":
                source.extra_index_urls.extend(_split_urls(value))
            elif key == "find-links":
                source.find_links.extend(_split_urls(value))
            elif key == "constraint":
                source.constraint = redact_url_credentials(value.strip())
    return source


def host_pip_config_paths(home_dirs: list[str]) -> list[str]:
    """In-root paths pip would read outside the environment, lowest precedence first."""
    paths = ["/etc/pip.conf", "/etc/xdg/pip/pip.conf"]
    for home in home_dirs:
        paths += [f"{home}/.pip/pip.conf", f"{home}/.config/pip/pip.conf"]
    return paths


def _read_source(fs: RootFS, inner: str) -> Optional[PipConfigSource]:
    text = fs.try_read_untrusted_text(inner, 256 * 1024, follow_links=True)  # in homes and environments
    return None if text is None else parse_pip_config(str(fs.host_path(inner)), text)


def _environment_source(environ: Mapping[str, str]) -> Optional[PipConfigSource]:
    variables = PipConfigSource(origin="environment")
    if environ.get("PIP_INDEX_URL"):
        variables.index_url = redact_url_credentials(environ["PIP_INDEX_URL"].strip())
    if environ.get("PIP_EXTRA_INDEX_URL"):
        variables.extra_index_urls = _split_urls(environ["PIP_EXTRA_INDEX_URL"])
    if environ.get("PIP_FIND_LINKS"):
        variables.find_links = _split_urls(environ["PIP_FIND_LINKS"])
    if environ.get("PIP_CONSTRAINT"):
        variables.constraint = redact_url_credentials(environ["PIP_CONSTRAINT"].strip())
    if variables.index_url or variables.extra_index_urls or variables.find_links or variables.constraint:
        return variables
    return None


def read_pip_config(host: RootFS, home_dirs: list[str], venv_fs: Optional[RootFS], venv_inner: Optional[str],
                    environ: Mapping[str, str]) -> list[PipConfigSource]:
    """Every pip configuration source that exists, lowest precedence first.

    Host files come from the root (docs/contracts.md §4: host facts come from the root), the venv's own
    `pip.conf` from wherever the venv lies, and `PIP_*` variables only from a live host's environment.
    """
    found = [_read_source(host, inner) for inner in host_pip_config_paths(home_dirs)]
    if venv_fs is not None and venv_inner is not None:
        found.append(_read_source(venv_fs, f"{venv_inner.rstrip('/')}/pip.conf"))
    if host.is_live:
        found.append(_environment_source(environ))
    return [source for source in found if source is not None]
