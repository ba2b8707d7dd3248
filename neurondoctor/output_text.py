"""The one output boundary: every line a text renderer writes passes `printable` (docs/trust-model.md).

The strings neurondoctor shows come from others: a package's version, os-release, a process's command line, a
hostname, another node's report. A newline in one forges a second `OK:` line for NHC or splits node-problem-
detector's message; an escape sequence reaches the terminal raw (OSC 52 writes the clipboard, CSI rewrites what was
printed above); a bidi override reorders what the reader sees. So every text line is neutralised here: C0 and C1
controls, ESC, DEL, bidi controls and the Unicode line and paragraph separators are shown escaped (`\\n`, `\\x1b`,
`\\u202e`), and bytes that did not decode (surrogate escapes) as `\\xNN`. JSON keeps the raw values (its own escapes
make them harmless), so readers of reports see what the host had.

The same boundary makes every command work on any output encoding: where the stream cannot encode the marks
(`PYTHONIOENCODING=ascii`, `latin-1`, `LANG=C` on an older Python), they take their ASCII forms, and any other
character the stream cannot encode is written as a backslash escape instead of a UnicodeEncodeError.
"""

from __future__ import annotations

import codecs
import functools
import os
import re
import sys
from collections.abc import Mapping
from typing import Optional, TextIO

_UNSAFE = "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\udc80-\udcff]"
_SHORT = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}

# Marks and punctuation of the reports, and their ASCII forms (boxes first: `[✓]` is `[ok]`, a bare `✓` is `ok`).
_ASCII_BOXES = {"[✓]": "[ok]", "[✗]": "[x]", "[–]": "[-]", "[☠]": "[crash]"}
_ASCII_CHARACTERS = str.maketrans({"✓": "ok", "✗": "x", "☠": "crash", "–": "-", "—": "-", "·": "-", "…": "...",
                                   "×": "x", "•": "*", "≥": ">=", "≤": "<=", "→": "->", "≠": "!=", "☐": "[ ]"})
_MARKS_PROBE = "✓✗–☠·…×•"


def _escaped(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if char in _SHORT:
        return _SHORT[char]
    if 0xDC80 <= code <= 0xDCFF:  # a byte that did not decode (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def neutralize(text: str) -> str:
    """The text on one line, with every control, bidi control and undecodable byte shown escaped.

    Every character `_UNSAFE` names is one `str.isprintable` refuses (categories Cc, Cf, Cs, Zl, Zp), so text it
    accepts is returned as it is, without compiling or running the pattern (a `--json` report is one such line)."""
    if text.isprintable():
        return text
    return re.sub(_UNSAFE, _escaped, text)


def field_text(value: object) -> str:
    """A value from a file name, a log or another node as one field of a text line, neutralised before the line is
    assembled: `write_text` splits its text on newlines first, so a newline left in a field would end the line there
    and let the rest (`Ways out:`, `FAKE: ok`) stand as a line of its own."""
    return neutralize(str(value))


def ascii_forms(text: str) -> str:
    """The report's marks and punctuation in ASCII (`[✓]` → `[ok]`, `·` → `-`, `…` → `...`)."""
    for box, plain in _ASCII_BOXES.items():
        text = text.replace(box, plain)
    return text.translate(_ASCII_CHARACTERS)


def locale_declares_ascii(environ: Mapping[str, str], utf8_mode: int) -> bool:
    """True when the user's locale names no UTF-8 character set (`LANG=C`, `LC_ALL=POSIX`, `LANG=de_DE.ISO-8859-1`)
    and Python writes UTF-8 only because it switched to it itself: on a C or POSIX locale Python 3.7+ turns its UTF-8
    mode on (PEP 540) and rewrites `LC_CTYPE` to `C.UTF-8` (PEP 538), so the stream's encoding says UTF-8 whatever the
    terminal shows. No locale variable at all, a UTF-8 one, or an encoding the user chose for Python
    (`PYTHONIOENCODING`, `PYTHONUTF8`) keeps the stream's own answer."""
    if "PYTHONIOENCODING" in environ or environ.get("PYTHONUTF8") or not utf8_mode:
        return False
    ctype = environ.get("LC_CTYPE", "")
    names = (environ.get("LC_ALL", ""), "" if ctype == "C.UTF-8" else ctype, environ.get("LANG", ""))
    declared = next((name for name in names if name), "")
    return bool(declared) and not re.search(r"utf-?8", declared, re.IGNORECASE)


@functools.lru_cache(maxsize=1)
def _terminal_locale_is_ascii() -> bool:
    return locale_declares_ascii(os.environ, sys.flags.utf8_mode)


def needs_ascii(stream: TextIO) -> bool:
    """True when the stream's encoding cannot write the report's marks, or when it is this process's stdout or stderr
    and the user's locale says the terminal is not UTF-8 (`locale_declares_ascii`)."""
    encoding = getattr(stream, "encoding", None)
    if encoding is None:  # a text buffer (StringIO) holds any character
        return False
    if stream in (sys.stdout, sys.stderr) and _terminal_locale_is_ascii():
        return True
    try:
        _MARKS_PROBE.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return True
    return False


def printable(text: str, ascii_only: bool = False) -> str:
    """One line as a text renderer may write it: neutralised, in ASCII forms when the stream needs them."""
    line = neutralize(text)
    return ascii_forms(line) if ascii_only else line


def tolerant_streams() -> None:
    """Make stdout and stderr write what their encoding cannot hold as backslash escapes, never raise: the last
    net under `printable`, for text that is not a mark (a non-ASCII package name on an ASCII terminal)."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is None:
            continue
        try:
            codecs.lookup(stream.encoding or "ascii")
            reconfigure(errors="backslashreplace")
        except (LookupError, ValueError, OSError):
            continue


def write_text(text: str, stream: Optional[TextIO] = None) -> None:
    """Write a text renderer's output: each line through `printable` for this stream (renderers whose lines must
    stay one per result, nhc and npd, neutralise their fields before joining)."""
    stream = stream or sys.stdout
    ascii_only = needs_ascii(stream)
    stream.write("\n".join(printable(line, ascii_only) for line in text.split("\n")))


# Compiled by `re` when Markdown is first written (`check --format markdown`), not on every run.
_MARKDOWN_SPECIAL = r"([\\`*_\[\]<>|#~])"
_MARKDOWN_LINK_OR_HTML = r"([\\\[\]<>|])"


def markdown_data(text: str) -> str:
    """A field that is all data (a path, a hostname, a version) for Markdown: neutralised, every metacharacter
    escaped, so it can forge no table cell, link, heading, HTML or code span."""
    return re.sub(_MARKDOWN_SPECIAL, r"\\\1", neutralize(text))


def markdown_prose(text: str) -> str:
    """Our sentences with data inside (a title, a detail) for Markdown: neutralised, with the characters that
    make links, HTML and table cells escaped; the code spans the sentences use themselves stay."""
    return re.sub(_MARKDOWN_LINK_OR_HTML, r"\\\1", neutralize(text))
