"""Redaction: secrets never leave the doctor (reports, command lines, bundles), identifiers only on request.

Every secret form is one row of `SECRET_PATTERNS` (a name, a pattern, what replaces it), so adding a form is one
row and one test case (tests/adversarial/test_secrets.py runs the table). Bundles apply it to every byte while
collecting (never as an afterthought); `check` applies it to command lines and environment values it reports.

With `--obfuscate` also hostnames, IPv4 addresses, instance ids and account ids, each mapped consistently
(the same input gets the same token everywhere) with the map kept outside the archive.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Callable

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
# Every name `_NAME_BODY` takes holds one of these (token, secret, passw/pass/passphrase, pwd, api_key, access_key,
# private_key, client_secret, credential(s), auth_key, session_key), as `re.IGNORECASE` reads it.
_SECRET_NAME_PARTS = ("token", "secret", "pass", "pwd", "api", "access", "private", "credential", "auth",
                      "session")


def _keep_key(match: re.Match[str]) -> str:
    """The key stays (so a reader sees what was there), the mark replaces the value."""
    return match.group(0) if match.group("value") == MARK else match.group("key") + MARK


def _whole(match: re.Match[str]) -> str:
    return MARK


@functools.cache
def _compiled(source: str, flags: int = 0) -> re.Pattern[str]:
    """A pattern compiled the first time a run needs it: most runs need few (`check` redacts a handful of
    environment values), and compiling all of them at import cost 6 ms (docs/measured.md)."""
    return re.compile(source, flags)



def _folded(text: str) -> str:
    """`text` as `re.IGNORECASE` sees ASCII letters: `casefold` maps the Kelvin sign to `k` and `ſ` to `s`;
    dotless `ı` matches `i` and `İ` folds to `i` plus a combining dot (tests/adversarial/test_secrets.py checks
    this against the whole Unicode range)."""
    return text.casefold().replace("\u0131", "i").replace("\u0307", "")


@dataclass(frozen=True)
class SecretPattern:
    """One form of secret: where it stands in text, and what replaces it (the key stays, the value goes).

    `needs` are the literal strings of which every match holds at least one (after `_folded` when the pattern
    ignores case), `needs_also` one more such set, `min_length` the shortest match: text without them cannot
    match, so the pattern is neither compiled nor run on it. Compiling all of them cost `check` 6 ms on every run,
    for environment values such as `1` (docs/measured.md); the results are the same
    (tests/adversarial/test_secrets.py runs every form both ways)."""

    name: str
    source: str
    replace: Replacement
    flags: int = 0
    needs: tuple[str, ...] = ()
    needs_also: tuple[str, ...] = ()
    min_length: int = 0
    ignores_case: bool = False

    @property
    def pattern(self) -> re.Pattern[str]:
        return _compiled(self.source, self.flags)

    def may_match(self, text: str, folded: str) -> bool:
        """False only when no match can be in `text` (`folded` is `_folded(text)`)."""
        if len(text) < self.min_length:
            return False
        seen = folded if self.ignores_case else text
        return all(not group or any(need in seen for need in group) for group in (self.needs, self.needs_also))


SECRET_PATTERNS: tuple[SecretPattern, ...] = (
    SecretPattern("private key block (PEM, OpenSSH, PGP)",
                  r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----.*?"
                  r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)", _whole, re.S,
                  needs=("PRIVATE KEY",)),
    # `user:password@`: a password may hold `@` or `/` (unencoded, as people type them: `s3://KEY:a/b@bucket`), so
    # after a colon the credentials run to the token's last `@`, at most 256 characters (linear on any text).
    SecretPattern("credentials in a URL",
                  r"(?P<scheme>(?<![a-zA-Z0-9+.-])[a-zA-Z][a-zA-Z0-9+.-]*://)"
                  r"(?P<value>[^/@:\s'\"]*(?::[^\s'\"]{0,256})?)@",
                  lambda match: f"{match.group('scheme')}{MARK}@", needs=("://",), needs_also=("@",)),
    SecretPattern("presigned URL signature and credential",
                  r"(?i)(?P<key>[?&](?:X-Amz-(?:Signature|Credential|Security-Token)|sig|Signature|Key-Pair-Id|"
                  r"Policy|AWSAccessKeyId|token|access_token)=)(?P<value>[^&\s'\"#]+)", _keep_key,
                  needs=("?", "&"), needs_also=("x-amz-", "sig=", "signature", "key-pair-id", "policy",
                                                "awsaccesskeyid", "token"), ignores_case=True),
    SecretPattern("Authorization header",
                  r"(?i)(?P<key>\b(?:proxy-)?authorization\s*[:=]\s*['\"]?(?:basic|bearer|token|digest|negotiate|"
                  r"aws4-hmac-sha256)\s+)(?P<value>[^\n'\"\\]+)", _keep_key, needs=("authorization",),
                  ignores_case=True),
    SecretPattern("bearer token", r"(?i)(?P<key>\bbearer\s+)(?P<value>[A-Za-z0-9._~+/=-]{8,})", _keep_key,
                  needs=("bearer",), ignores_case=True),
    SecretPattern("quoted secret in JSON, YAML or code",
                  r"(?i)(?P<key>['\"]?" + _SECRET_NAME + r"['\"]?\s*[:=]\s*)(?P<quote>['\"])"
                  r"(?P<value>(?:\\.|(?!(?P=quote)).)*)(?P=quote)",
                  lambda match: f"{match.group('key')}{match.group('quote')}{MARK}{match.group('quote')}",
                  needs=("'", '"'), needs_also=(":", "=")),
    # A name right after `/` followed by `:` is a file's path and the reason after it (`/etc/passwd: not a
    # directory`, `/run/secrets/token: permission denied`), as every tool words a file error: the reason stays.
    # An unquoted value runs to the end of the line (a password may hold spaces, `;` or `@`), but stops before
    # the next option or assignment of a command line, so `--epochs 3` after it stays readable. A name that is a
    # folder of a path (`/srv/password=x/out.tar.gz`) has a value that ends with the folder's name, so the rest of the
    # path and the error's reason stay.
    SecretPattern("secret assignment (KEY=value, key: value)",
                  r"(?i)(?P<key>(?<![\w-])(?:(?<=/)(?P<path>)|(?<!/))" + _SECRET_NAME
                  + r"\s*(?(path)=|(?:=|:(?!//)))[ \t]*)"
                  r"(?P<value>(?!['\"])(?(path)[^/\s'\"\\]+|" + _UNQUOTED_VALUE + "))", _keep_key, needs=("=", ":"),
                  needs_also=_SECRET_NAME_PARTS, ignores_case=True),
    SecretPattern("secret command-line option",
                  r"(?i)(?P<key>(?<![\w-])--?" + _NAME_BODY + r"(?:=|\s+))(?P<value>(?!-)[^\s'\"\\]+)", _keep_key,
                  needs=("-",), needs_also=_SECRET_NAME_PARTS, ignores_case=True),
    SecretPattern("mysql -pPASSWORD",
                  r"(?P<key>\bmysql(?:dump|admin|import|check|sh)?\b[^\n]*?\s-p)(?P<value>[^\s'\"\\]+)",
                  _keep_key, needs=("mysql",)),
    SecretPattern("curl/wget user:password",
                  r"(?P<key>(?:\s|^)(?:-u|--user|--proxy-user|--http-user|--ftp-user)[\s=]+['\"]?[^:\s'\"]+:)"
                  r"(?P<value>[^\s'\"]+)", _keep_key, needs=("-u",), needs_also=(":",)),
    SecretPattern("GitHub token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})\b", _whole,
                  needs=("gh", "github_pat_")),
    SecretPattern("Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b", _whole, needs=("xox",)),
    SecretPattern("API key (sk-…)", r"\bsk-(?:[A-Za-z0-9_-]+-)?[A-Za-z0-9_-]{20,}\b", _whole, needs=("sk-",)),
    SecretPattern("Hugging Face token", r"\bhf_[A-Za-z0-9]{20,}\b", _whole, needs=("hf_",)),
    SecretPattern("JSON Web Token", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", _whole,
                  needs=("eyJ",)),
    SecretPattern("AWS access key id", r"\b(?:AKIA|ASIA|AROA|AIDA|ANPA|ANVA|AGPA)[0-9A-Z]{16}\b", _whole,
                  needs=("AKIA", "ASIA", "AROA", "AIDA", "ANPA", "ANVA", "AGPA")),
    SecretPattern("AWS secret access key", r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])",
                  lambda match: MARK if _looks_secret(match.group(0)) else match.group(0), min_length=40),
)

# An address, not a version: Neuron versions look like addresses (`2.27.34.0-ec8cd5e8b`, `2.9.0.2.15.32035`), so
# runs continued by `.N` or a `-hash` suffix are skipped, and so are first octets 0-2 (versions start there;
# addresses there are rare).
_IPV4 = (r"(?<![\w.=/-])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]\d|[3-9])\.)(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){2}"
         r"(?:25[0-5]|2[0-4]\d|1?\d?\d)(?![\d]|\.\d|-[0-9a-f])")
_INSTANCE_ID = r"\bi-[0-9a-f]{8}(?:[0-9a-f]{9})?\b"
# Account ids only where they are named as such: in ARNs and after "account" (a bare 12-digit number is too often a
# size or a timestamp).
_ACCOUNT_ID = (r"(?i)(?P<lead>arn:aws[\w-]*:[\w-]*:[\w-]*:|account[\s_-]*(?:id)?[\s\"':=]*)(?P<id>\d{12})"
               r"(?!\d)")
_EC2_HOSTNAME = r"\b(?:ip|ec2)-\d{1,3}-\d{1,3}-\d{1,3}-\d{1,3}(?:\.[a-z0-9.-]+)?\b"


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
        folded = _folded(text)
        for secret in SECRET_PATTERNS:
            if not secret.may_match(text, folded):
                continue

            def replace(match: re.Match[str], secret: SecretPattern = secret) -> str:
                replaced = secret.replace(match)
                if replaced != match.group(0):
                    self.redactions += 1
                return replaced

            replaced_text = secret.pattern.sub(replace, text)
            if replaced_text != text:
                text, folded = replaced_text, _folded(replaced_text)
        return text

    def identifiers(self, text: str) -> str:
        names = (name for name in self.hostnames if name and name not in ("localhost", "localhost.localdomain"))
        for hostname in sorted(names, key=len, reverse=True):
            text = text.replace(hostname, self._token("host", hostname))
        text = _compiled(_EC2_HOSTNAME).sub(lambda match: self._token("host", match.group(0)), text)
        text = _compiled(_INSTANCE_ID).sub(lambda match: self._token("instance", match.group(0)), text)
        text = _compiled(_IPV4).sub(lambda match: self._token("ip", match.group(0)), text)
        return _compiled(_ACCOUNT_ID).sub(
            lambda match: match.group("lead") + self._token("account", match.group("id")), text)

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


_SECRET_VARIABLE = r"(?i)^" + _SECRET_NAME + "$"


def redact_variable(name: str, value: str) -> str:
    """An environment variable's value as reports show it: gone when its name says secret (`*_TOKEN`,
    `*PASSWORD*`, …), else with every secret pattern inside it redacted."""
    folded = _folded(name)
    says_secret = any(part in folded for part in _SECRET_NAME_PARTS) and _compiled(_SECRET_VARIABLE).match(name)
    return MARK if says_secret else redact_secrets(value)


def redact_secrets(text: str) -> str:
    """Every secret pattern, no identifier mapping (command lines shown in `check` reports)."""
    return Redactor().secrets(text)


@functools.lru_cache(maxsize=1)
def _reasons() -> frozenset[str]:
    """The reasons an error line ends with: the system's own words for each errno (`Not a directory`, `Permission
    denied`), and the doctor's forms of the same."""
    import errno
    import os

    return frozenset({os.strerror(number).lower() for number in errno.errorcode}
                     | {"no such directory", "no such file", "not a directory", "not a regular file"})


def redact_keeping_reason(message: str) -> str:
    """An error line with its secrets redacted and its reason kept: an unquoted secret's value runs to the end of
    the line (a password may hold spaces), so a path like `/srv/password=x/out.tar.gz: Not a directory` would lose
    `Not a directory` with it. Where the redaction took a known reason away, the part before it is redacted alone
    and the reason put back."""
    shown = redact_secrets(message)
    head, separator, reason = message.rpartition(": ")
    if separator and shown != message and reason.strip().lower() in _reasons() and not shown.endswith(reason):
        return f"{redact_secrets(head)}: {reason}"
    return shown
