"""Removes credentials from values the doctor reports (pip index URLs with `user:password@`)."""

from __future__ import annotations

import re

_URL_CREDENTIALS = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<userinfo>[^/@\s]+)@")
_SECRET_OPTION = re.compile(
    r"(?i)(--?[\w-]*(?:token|secret|password|passwd|api[_-]?key|access[_-]?key)[\w-]*[= ])(\S+)")
_SECRET_ASSIGNMENT = re.compile(r"(?i)\b([A-Z0-9_]*(?:TOKEN|SECRET|PASSWORD|PASSWD)[A-Z0-9_]*=)(\S+)")
_AWS_ACCESS_KEY = re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")


def redact_secrets(text: str) -> str:
    """Command lines shown in reports: `--hf-token X`, `HF_TOKEN=X`, AWS access key ids, URL credentials."""
    text = redact_url_credentials(text)
    text = _SECRET_OPTION.sub(lambda match: f"{match.group(1)}***", text)
    text = _SECRET_ASSIGNMENT.sub(lambda match: f"{match.group(1)}***", text)
    return _AWS_ACCESS_KEY.sub("***", text)


def redact_url_credentials(text: str) -> str:
    """`https://user:token@host/simple` -> `https://***@host/simple`: reports and bundles get shared."""
    return _URL_CREDENTIALS.sub(lambda match: f"{match.group('scheme')}***@", text)
