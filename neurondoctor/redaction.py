"""Redaction: secrets never leave the doctor (reports, command lines, bundles), identifiers only on request.

Bundles apply it to every byte while collecting (never as an afterthought).

Always: AWS access key ids and secret keys, session tokens, `HF_TOKEN` and every `*_TOKEN`/`*_SECRET`/
`*PASSWORD*`/`*_KEY` value, private key blocks, bearer tokens, credentials in URLs (pip index URLs included).
With `--obfuscate` also hostnames, IPv4 addresses, instance ids and account ids, each mapped consistently
(the same input gets the same token everywhere) with the map kept outside the archive.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MARK = "[REDACTED]"

_PRIVATE_KEY = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)", re.S)
_URL_USERINFO = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s'\"]+@")
_ACCESS_KEY_ID = re.compile(r"\b(?:AKIA|ASIA|AROA|AIDA)[0-9A-Z]{16}\b")
_ASSIGNMENT = re.compile(
    r"(?i)(?P<key>\b[\w.-]*(?:token|secret|password|passwd|pwd|api[_-]?key|access[_-]?key|secret[_-]?key|"
    r"credential|session)[\w.-]*)(?P<sep>\s*[=:]\s*)(?P<quote>['\"]?)(?P<value>[^\s'\",;]+)")
_SECRET_OPTION = re.compile(r"(?i)(?P<key>--?[\w-]*(?:token|secret|password|passwd|api[_-]?key|access[_-]?key)"
                            r"[\w-]*)(?P<sep>\s+)(?P<value>[^\s-][^\s]*)")
_BEARER = re.compile(r"(?i)\b(bearer|token)\s+[A-Za-z0-9._~+/=-]{16,}")
_HF_TOKEN = re.compile(r"\bhf_[A-Za-z0-9]{20,}\b")
_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")

# An address, not a version: Neuron versions look like addresses (`2.27.34.0-ec8cd5e8b`, `2.9.0.2.15.32035`), so
# runs continued by `.N` or a `-hash` suffix are skipped, and so are first octets 0-2 (versions start there;
# addresses there are rare).
_IPV4 = re.compile(r"(?<![\w.=/-])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]\d|[3-9])\.)(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){2}"
                   r"(?:25[0-5]|2[0-4]\d|1?\d?\d)(?![\d]|\.\d|-[0-9a-f])")
_INSTANCE_ID = re.compile(r"\bi-[0-9a-f]{8}(?:[0-9a-f]{9})?\b")
# Account ids only where they are named as such: in ARNs and after "account" (a bare 12-digit number is too often a
# size or a timestamp).
_ACCOUNT_ID = re.compile(r"(?i)(?P<lead>arn:aws[\w-]*:[\w-]*:[\w-]*:|account[\s_-]*(?:id)?[\s\"':=]*)(?P<id>\d{12})"
                         r"(?!\d)")
_EC2_HOSTNAME = re.compile(r"\b(?:ip|ec2)-\d{1,3}-\d{1,3}-\d{1,3}-\d{1,3}(?:\.[a-z0-9.-]+)?\b")


@dataclass
class Redactor:
    """Scrubs text; with `obfuscate`, also identifiers, keeping a consistent map."""

    obfuscate: bool = False
    hostnames: list[str] = field(default_factory=list)
    mapping: dict[str, str] = field(default_factory=dict)
    redactions: int = 0

    def _token(self, kind: str, value: str) -> str:
        if value not in self.mapping:
            count = sum(1 for token in self.mapping.values() if token.startswith(f"{kind}-")) + 1
            self.mapping[value] = f"{kind}-{count}"
        return self.mapping[value]

    def _count(self, text: str, pattern: re.Pattern[str], replacement: object) -> str:
        result, number = pattern.subn(replacement, text)  # type: ignore[call-overload]
        self.redactions += number
        return str(result)

    def secrets(self, text: str) -> str:
        text = self._count(text, _PRIVATE_KEY, MARK)
        text = self._count(text, _URL_USERINFO, lambda match: f"{match.group('scheme')}{MARK}@")
        text = self._count(text, _ASSIGNMENT, lambda match: (
            f"{match.group('key')}{match.group('sep')}{match.group('quote')}{MARK}"
            if match.group("value") != MARK else match.group(0)))
        text = self._count(text, _SECRET_OPTION, lambda match: f"{match.group('key')}{match.group('sep')}{MARK}"
                           if match.group("value") != MARK else match.group(0))
        text = self._count(text, _BEARER, lambda match: f"{match.group(1)} {MARK}")
        text = self._count(text, _HF_TOKEN, MARK)
        text = self._count(text, _ACCESS_KEY_ID, MARK)
        return self._count(text, _AWS_SECRET, lambda match: MARK if _looks_secret(match.group(0)) else match.group(0))

    def identifiers(self, text: str) -> str:
        names = (name for name in self.hostnames if name and name not in ("localhost", "localhost.localdomain"))
        for hostname in sorted(names, key=len, reverse=True):
            text = text.replace(hostname, self._token("host", hostname))
        text = _EC2_HOSTNAME.sub(lambda match: self._token("host", match.group(0)), text)
        text = _INSTANCE_ID.sub(lambda match: self._token("instance", match.group(0)), text)
        text = _IPV4.sub(lambda match: self._token("ip", match.group(0)), text)
        return _ACCOUNT_ID.sub(lambda match: match.group("lead") + self._token("account", match.group("id")), text)

    def text(self, text: str) -> str:
        text = self.secrets(text)
        return self.identifiers(text) if self.obfuscate else text

    def filename(self, name: str) -> str:
        return self.identifiers(name) if self.obfuscate else name


def _looks_secret(candidate: str) -> bool:
    """A 40-character base64 run with mixed case and digits (an AWS secret key), not a hex digest or a path."""
    return (any(c.islower() for c in candidate) and any(c.isupper() for c in candidate)
            and any(c.isdigit() for c in candidate) and not re.fullmatch(r"[0-9a-f]{40}", candidate))


def redact_url_credentials(text: str) -> str:
    """`https://user:token@host/simple` -> `https://[REDACTED]@host/simple`: reports and bundles get shared."""
    return _URL_USERINFO.sub(lambda match: f"{match.group('scheme')}{MARK}@", text)


def redact_secrets(text: str) -> str:
    """Every secret pattern, no identifier mapping (command lines shown in `check` reports)."""
    return Redactor().secrets(text)
