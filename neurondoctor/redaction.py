"""Redaction: secrets never leave the doctor (reports, command lines, bundles), identifiers only on request.

Every secret form is one row of `SECRET_PATTERNS` (a name, a pattern, what replaces it), so adding a form is one
row and one test case (tests/adversarial/test_secrets.py runs the table). Bundles apply it to every byte while
collecting (never as an afterthought); `check` applies it to command lines and environment values it reports.

With `--obfuscate` also hostnames, IPv4 addresses, instance ids and account ids, each mapped consistently
(the same input gets the same token everywhere) with the map kept outside the archive.
"""

from __future__ import annotations

import re
from dataclasses import field
from typing import Callable

from neurondoctor.records import dataclass

MARK = "[REDACTED]"

Replacement = Callable[["re.Match[str]"], str]

# Names that say a value is a secret. `pass` alone only as a whole word part (`db-pass`, `PASS=`), so `passthrough`
# and `compass` stay readable. A name starts where a word starts and is at most ~130 characters: without the anchor
# and the bounds every position of a long word would be tried, and a 64 KiB value would cost minutes (quadratic
# backtracking); tests/adversarial/test_hangs.py times it.
_NAME_BODY = (
    r"(?:[\w.-]{0,64}(?:token|secret|passw(?:or)?d|passphrase|(?<![a-z])pass(?![a-z])|pwd|api[_-]?key|"
    r"access[_-]?key|private[_-]?key|secret[_-]?key|client[_-]?secret|credentials?|auth[_-]?key|"
    r"session[_-]?key)[\w.-]{0,64})")
_SECRET_NAME = r"(?<![\w.-])" + _NAME_BODY
# Characters of an unquoted value, up to the next option (` --x`) or assignment (` KEY=`) of a command line.
_UNQUOTED_VALUE = r"(?:(?!\s+-{1,2}[A-Za-z]|\s+[\w.-]+=)[^\n'\"\\])+"


def _keep_key(match: re.Match[str]) -> str:
    """The key stays (so a reader sees what was there), the mark replaces the value."""
    return match.group(0) if match.group("value") == MARK else match.group("key") + MARK


def _whole(match: re.Match[str]) -> str:
    return MARK


@dataclass(frozen=True)
class SecretPattern:
    """One form of secret: where it stands in text, and what replaces it (the key stays, the value goes)."""

    name: str
    pattern: re.Pattern[str]
    replace: Replacement


SECRET_PATTERNS: tuple[SecretPattern, ...] = (
    SecretPattern("private key block (PEM, OpenSSH, PGP)", re.compile(
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----.*?"
        r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)", re.S), _whole),
    SecretPattern("credentials in a URL", re.compile(
        r"(?P<scheme>(?<![a-zA-Z0-9+.-])[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<value>[^/@\s'\"]+)@"),
        lambda match: f"{match.group('scheme')}{MARK}@"),
    SecretPattern("presigned URL signature and credential", re.compile(
        r"(?i)(?P<key>[?&](?:X-Amz-(?:Signature|Credential|Security-Token)|sig|Signature|Key-Pair-Id|Policy|"
        r"AWSAccessKeyId|token|access_token)=)(?P<value>[^&\s'\"#]+)"), _keep_key),
    SecretPattern("Authorization header", re.compile(
        r"(?i)(?P<key>\b(?:proxy-)?authorization\s*[:=]\s*['\"]?(?:basic|bearer|token|digest|negotiate|aws4-hmac-sha256)"
        r"\s+)(?P<value>[^\n'\"\\]+)"), _keep_key),
    SecretPattern("bearer token", re.compile(r"(?i)(?P<key>\bbearer\s+)(?P<value>[A-Za-z0-9._~+/=-]{8,})"),
                  _keep_key),
    SecretPattern("quoted secret in JSON, YAML or code", re.compile(
        r"(?i)(?P<key>['\"]?" + _SECRET_NAME + r"['\"]?\s*[:=]\s*)(?P<quote>['\"])(?P<value>(?:\\.|(?!(?P=quote)).)*)"
        r"(?P=quote)"), lambda match: f"{match.group('key')}{match.group('quote')}{MARK}{match.group('quote')}"),
    # An unquoted value runs to the end of the line (a password may hold spaces, `;` or `@`), but stops before
    # the next option or assignment of a command line, so `--epochs 3` after it stays readable.
    SecretPattern("secret assignment (KEY=value, key: value)", re.compile(
        r"(?i)(?P<key>(?<![\w-])" + _SECRET_NAME + r"\s*(?:=|:(?!//))[ \t]*)"
        r"(?P<value>(?!['\"])" + _UNQUOTED_VALUE + ")"),
        _keep_key),
    SecretPattern("secret command-line option", re.compile(
        r"(?i)(?P<key>(?<![\w-])--?" + _NAME_BODY + r"(?:=|\s+))(?P<value>(?!-)[^\s'\"\\]+)"), _keep_key),
    SecretPattern("mysql -pPASSWORD", re.compile(
        r"(?P<key>\bmysql(?:dump|admin|import|check|sh)?\b[^\n]*?\s-p)(?P<value>[^\s'\"\\]+)"), _keep_key),
    SecretPattern("curl/wget user:password", re.compile(
        r"(?P<key>(?:\s|^)(?:-u|--user|--proxy-user|--http-user|--ftp-user)[\s=]+['\"]?[^:\s'\"]+:)"
        r"(?P<value>[^\s'\"]+)"), _keep_key),
    SecretPattern("GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})\b"),
                  _whole),
    SecretPattern("Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b"), _whole),
    SecretPattern("API key (sk-…)", re.compile(r"\bsk-(?:[A-Za-z0-9_-]+-)?[A-Za-z0-9_-]{20,}\b"), _whole),
    SecretPattern("Hugging Face token", re.compile(r"\bhf_[A-Za-z0-9]{20,}\b"), _whole),
    SecretPattern("JSON Web Token", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
                  _whole),
    SecretPattern("AWS access key id", re.compile(r"\b(?:AKIA|ASIA|AROA|AIDA|ANPA|ANVA|AGPA)[0-9A-Z]{16}\b"), _whole),
    SecretPattern("AWS secret access key", re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"),
                  lambda match: MARK if _looks_secret(match.group(0)) else match.group(0)),
)

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

    def secrets(self, text: str) -> str:
        """Every secret pattern replaced; `redactions` counts only what was cut (a 40-character base64 run that is a
        hash, not a key, is kept and not counted), so the count matches the markers a reader finds."""
        for secret in SECRET_PATTERNS:
            def replace(match: re.Match[str], secret: SecretPattern = secret) -> str:
                replaced = secret.replace(match)
                if replaced != match.group(0):
                    self.redactions += 1
                return replaced

            text = secret.pattern.sub(replace, text)
        return text

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


_URL_CREDENTIALS = next(secret for secret in SECRET_PATTERNS if secret.name == "credentials in a URL")


def redact_url_credentials(text: str) -> str:
    """`https://user:token@host/simple` -> `https://[REDACTED]@host/simple`: reports and bundles get shared."""
    return _URL_CREDENTIALS.pattern.sub(_URL_CREDENTIALS.replace, text)


_SECRET_VARIABLE = re.compile(r"(?i)^" + _SECRET_NAME + "$")


def redact_variable(name: str, value: str) -> str:
    """An environment variable's value as reports show it: gone when its name says secret (`*_TOKEN`,
    `*PASSWORD*`, …), else with every secret pattern inside it redacted."""
    return MARK if _SECRET_VARIABLE.match(name) else redact_secrets(value)


def redact_secrets(text: str) -> str:
    """Every secret pattern, no identifier mapping (command lines shown in `check` reports)."""
    return Redactor().secrets(text)
