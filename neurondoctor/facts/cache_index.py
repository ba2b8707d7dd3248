"""What is in a Neuron compile cache: per compiler directory, its entries by state, its size, its locks.

The layout (docs/neuron-facts.md §9, from the neuron-caching page and the public cache copies on the Hugging Face
hub): `neuronxcc-<compiler version>+<hash>/MODULE_<graph hash>+<flags hash>/`. An entry holds the graph
(`model.hlo_module.pb`; `model.hlo.pb` in the 2.11 and 2.12 copies, the 2.14 copy already has the new name) and its
flags (`compile_flags.json` from 2.15, before `compile_flags.txt`); a finished compile adds `model.neff` (and from
2.15 the `model.done` marker: up to 2.14 a whole NEFF alone is the result), a failed one `model.log` without a NEFF,
which later runs skip until `--retry_failed_compilation`. A `*.lock` beside them is the flock file a compiling
process holds; `0_REGISTRY/` is optimum-neuron's model registry. Each entry has one state (facts/cache_states.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from neurondoctor.facts.cache_states import ENTRY_DONE, ENTRY_FAILED, ENTRY_INCOMPLETE, ENTRY_LOCKED, ENTRY_STATES

__all__ = ["ENTRY_DONE", "ENTRY_FAILED", "ENTRY_INCOMPLETE", "ENTRY_LOCKED", "ENTRY_STATES", "LAYOUT_TORCHNEURON",
           "LAYOUT_VLLM", "CacheEntry", "CacheIndex", "CacheLock", "CompilerCache", "KeyedCache"]



@dataclass
class CacheLock:
    """A `*.lock` file in an entry; `holder_pid` from /proc/locks when a process holds it (live host only)."""

    entry: str  # `neuronxcc-…/MODULE_…`
    name: str
    age_s: Optional[float] = None
    holder_pid: Optional[int] = None
    holder_command: Optional[str] = None
    entry_state: Optional[str] = None  # a finished entry's leftover lock is waited on by nobody


@dataclass(frozen=True)
class CacheEntry:
    """One MODULE_ entry as `cache prune` selects from (kept only when asked: a cache may hold 100,000)."""

    compiler: str  # the `neuronxcc-…` directory
    name: str  # `MODULE_…`
    state: str
    mtime: Optional[float]
    bytes: int
    locks: tuple[CacheLock, ...] = ()
    link: bool = False  # a symbolic link where an entry belongs: never followed


@dataclass
class CompilerCache:
    """One `neuronxcc-<version>+<hash>` directory: what its entries are, and how much room the NEFFs and graphs
    take."""

    name: str
    compiler_version: Optional[str]
    entries: int = 0
    states: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ENTRY_STATES, 0))
    locked: int = 0  # the entries in the `locked` state (states["locked"]), kept by its older name
    bytes: int = 0
    oldest: Optional[float] = None  # entry mtimes, seconds since the epoch
    newest: Optional[float] = None
    registry: bool = False
    failed_entries: list[str] = field(default_factory=list)  # the first few, by name
    failed_errors: dict[str, str] = field(default_factory=dict)  # name -> the failure in its log's own words
    failed_meanings: dict[str, str] = field(default_factory=dict)  # name -> what that line means, where it is known
    links: int = 0  # entries that are symbolic links: never followed
    flag_samples: list[list[str]] = field(default_factory=list)  # the flags of the first finished entries (check)
    # The `+<flags>` part of the finished entries' names (the md5 of their flags text, 8 hex digits) -> how many:
    # which flag sets the cache has graphs for (the first FLAG_KEYS_KEPT distinct ones).
    flag_keys: dict[str, int] = field(default_factory=dict)


LAYOUT_VLLM = "vllm-neuron"  # $VLLM_CACHE_ROOT/neuron/compile_cache/<32-character key>/ (libtorch-neuronx-lite's)
LAYOUT_TORCHNEURON = "torchneuron"  # $TORCH_NEURONX_NEFF_CACHE_DIR/ab/cd/<key>.neff


@dataclass
class KeyedCache:
    """A framework's cache of compiled graphs under content keys, not neuronx-cc's folders.

    vLLM Neuron (its compilation-cache design page): `<32-character md5 key>/` per graph, one lock file per key; what
    an entry holds is not published, so its state is not judged (`entries` and `bytes` only). TorchNeuron (its NEFF
    cache source): `ab/cd/<key>.neff`, written to a temporary file and renamed, so a `.neff` is whole (`done`) and a
    `.tmp` beside it a write under way or cut off (`incomplete`)."""

    layout: str
    entries: int = 0
    bytes: int = 0
    done: Optional[int] = None  # None: not known for this layout
    incomplete: Optional[int] = None
    lock_files: int = 0


@dataclass
class CacheIndex:
    """A local cache directory as counted (bounded: `cut` says where the count stopped)."""

    path: str
    exists: bool = False
    compilers: list[CompilerCache] = field(default_factory=list)
    locks: list[CacheLock] = field(default_factory=list)
    other_names: int = 0  # top-level names that are not compiler directories
    unreadable: list[str] = field(default_factory=list)  # one line each
    counted: int = 0
    cut: Optional[str] = None
    problem: Optional[str] = None
    host_path: Optional[str] = None  # the directory on this machine (inside --root), once found
    # Looked at only when a lock file is found: whether a lock could be a live compile's that /proc/locks does not
    # show (a compile on another node of a network filesystem; a neuronx-cc running here).
    filesystem: Optional[str] = None  # the mount's type (`ext4`, `nfs4`), from /proc/self/mounts
    compilers_running: list[str] = field(default_factory=list)  # `PID COMM` of neuronx-cc processes seen here
    # How long ago each of them started, in seconds at the count (/proc/<pid>/stat and the boot time in /proc/stat);
    # None for one whose start could not be read. A lock older than every one of them is none of theirs.
    compiles_age_s: list[Optional[float]] = field(default_factory=list)
    entries: list[CacheEntry] = field(default_factory=list)  # every entry, with `keep_entries` only
    keyed: Optional[KeyedCache] = None  # a framework's keyed layout, where no neuronx-cc folder is found
    # (device, inode) of the directory counted: `cache prune` moves only in that one. Kept out of the JSON (the
    # leading `_`): a detail of this machine, not a fact about the cache.
    _identity: Optional[tuple[int, int]] = field(default=None, repr=False)
