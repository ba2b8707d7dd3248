"""Removes credentials from values the doctor reports (pip index URLs with `user:password@`)."""

from __future__ import annotations

import re

_URL_CREDENTIALS = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<userinfo>[^/@\s]+)@")


def redact_url_credentials(text: str) -> str:
    """`https://user:token@host/simple` -> `https://***@host/simple`: reports and bundles get shared."""
    return _URL_CREDENTIALS.sub(lambda match: f"{match.group('scheme')}***@", text)
