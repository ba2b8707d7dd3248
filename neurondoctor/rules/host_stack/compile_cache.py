"""compile-cache: why the next start will recompile or wait (docs/cache.md).

Sources: the neuron-caching page (a failed compile is cached and skipped until `--retry_failed_compilation`; the
cache is per neuronx-cc version: `neuronxcc-<version>/`), vllm-neuron's compilation-cache design (a held entry lock
is waited on up to NEURON_LIBTORCH_COMPILATION_TIMEOUT, 600 s), and users' reports of a killed compile leaving
`model.hlo_module.pb.lock` that every later run waits on ("Another process must be compiling …"). The facts are
check's bounded count (host/cache_index.py); each fix is a `neurondoctor cache prune` line, which moves, never
deletes (actions/cache/prune.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Optional

from neurondoctor.facts.cache_states import ENTRY_DONE, ENTRY_FAILED
from neurondoctor.facts.mounts import NETWORK_FILESYSTEMS, TMP, PathMount
from neurondoctor.facts.python_env import PythonEnvironment
from neurondoctor.host.compile_cache import CACHE_DIR_FLAG
from neurondoctor.rules.check import FindingSpec, RuleSet
from neurondoctor.rules.context import RuleContext
from neurondoctor.rules.finding import SEVERITY_INFO, SEVERITY_WARNING, Finding
from neurondoctor.rules.fix import Fix, Shell, Word, alternative, command, note
from neurondoctor.rules.host_stack.cache_words import cache_word
from neurondoctor.rules.host_stack.compile_flags import compiler_flags, flags_keys, key_words
from neurondoctor.rules.host_stack.compiler_installs import compiler_environments, installed_compiler_versions
from neurondoctor.rules.host_stack.resources import GIB

if TYPE_CHECKING:
    from neurondoctor.facts.cache_index import CacheIndex, CacheLock, CompilerCache

CATEGORY = "compile-cache"
# vLLM Neuron waits on a held entry lock up to NEURON_LIBTORCH_COMPILATION_TIMEOUT, 600 s by default (vllm-neuron
# docs, design/compilation/compilation_cache.md): an unheld lock older than that is left by a killed compile.
STALE_LOCK_S = 600.0
STALE_LOCK_IN_CONTAINER_S = 3 * 3600.0
FAILED_SHOWN = 3


def _finding(finding_id: str, severity: str, *, title: str, detail: str, evidence: dict[str, object],
             fix: Fix) -> Finding:
    return Finding(id=finding_id, category=CATEGORY, severity=severity, title=title, detail=detail,
                   evidence=evidence, fix=fix)


def _index(ctx: RuleContext) -> Optional[CacheIndex]:
    cache = ctx.facts.host.snapshot.compile_cache
    return cache.index if cache is not None and cache.index is not None and cache.index.exists else None


def _prune(ctx: RuleContext, option: str, envs: Sequence[tuple[PythonEnvironment, str]] = ()) -> Fix:
    """`neurondoctor cache prune CACHE OPTION [--root R] [--venv V | --python EXE]... --yes`: the cache the check
    counted, under the same root, judged against the same environments' compilers."""
    cache = ctx.facts.host.snapshot.compile_cache
    words: list[Word] = ["neurondoctor", "cache", "prune", cache_word(cache) if cache is not None else "", option]
    if ctx.facts.host.root not in ("/", ""):
        words += ["--root", ctx.facts.host.root]
    for env, _ in envs:
        words += ["--python", env.interpreter] if env.mode == "live" and env.interpreter else ["--venv", env.path]
    return Fix([command(*words, "--yes", note="moves them into a folder beside the cache; deletes nothing")])


def _bound(index: CacheIndex) -> str:
    return f" ({index.cut})" if index.cut else ""


def failed_entries(ctx: RuleContext) -> list[Finding]:
    """ND-CACHE-001: failed compilations of an installed compiler, which later runs skip."""
    index = _index(ctx)
    if index is None:
        return []
    installed = installed_compiler_versions(compiler_environments(ctx.facts.environments))
    compilers = [compiler for compiler in index.compilers if compiler.states[ENTRY_FAILED]
                 and (not installed or compiler.compiler_version in installed)]
    count = sum(compiler.states[ENTRY_FAILED] for compiler in compilers)
    if not count:
        return []
    shown = [(compiler, name) for compiler in compilers for name in compiler.failed_entries][:FAILED_SHOWN]
    errors = [f"{compiler.name}/{name}: {compiler.failed_errors.get(name, '')}" for compiler, name in shown]
    meanings = {f"{compiler.name}/{name}": compiler.failed_meanings[name] for compiler, name in shown
                if name in compiler.failed_meanings}
    said = [error + (f" ({compiler.failed_meanings[name]})" if name in compiler.failed_meanings else "")
            for error, (compiler, name) in zip(errors, shown)]
    return [_finding(
        "ND-CACHE-001", SEVERITY_WARNING,
        title=f"{count:,} failed compilation(s) in the compile cache {index.path} will be skipped{_bound(index)}",
        detail=("neuronx-cc caches a failed compile too, and later runs load the failure instead of compiling "
                "(`Got a cached failed neff at … Will skip compilation, please set --retry_failed_compilation`). "
                "Each failure in the compiler's own words (the first line of its model.log with a compiler code or "
                "an ERROR), with what explain reads in it: " + "; ".join(said)),
        evidence={"path": index.path, "failed": count, "errors": errors, "meanings": meanings,
                  "compilers": [compiler.name for compiler in compilers]},
        fix=Fix([*_prune(ctx, "--failed").steps,
                 alternative("compile them again once: add --retry_failed_compilation to NEURON_CC_FLAGS")]),
    )]


def locks_may_be_live(index: CacheIndex, locks: Sequence[CacheLock] = ()) -> Optional[str]:
    """Why an entry's unheld locks (`locks`; none given: any lock of the cache) could still be a running compile's,
    or None. Compiles do not always hold their lock where /proc/locks shows it (users' reports: runs wait on a lock
    with no process holding it), so while a neuronx-cc runs here a lock is called stale only when it is older than
    every running compile (`older_than_every_compile`), and never on a network filesystem (a compile on another node
    may hold it)."""
    if index.compilers_running and not (locks and older_than_every_compile(index, locks)):
        return f"neuronx-cc is running here ({', '.join(index.compilers_running[:3])}): a lock may be its"
    if index.filesystem in NETWORK_FILESYSTEMS:
        return f"{index.path} is on {index.filesystem}: a compile on another node may hold its locks"
    return None


# The compile wrapper makes an entry's lock file before it starts neuronx-cc (ASSUMED: the order is not documented;
# the wait it prints names the entry before the compile), so a live compile's lock is a little older than its
# process. A lock is none of a running compile's only when it is older than the oldest of them by more than this.
LOCK_BEFORE_COMPILE_S = 600.0


def older_than_every_compile(index: CacheIndex, locks: Sequence[CacheLock]) -> bool:
    """Whether every lock of an entry was made before each neuronx-cc running here started (by more than
    LOCK_BEFORE_COMPILE_S): then none of those compiles made it. False when a compile's start is not known."""
    ages = index.compiles_age_s
    if not ages or len(ages) != len(index.compilers_running) or any(age is None for age in ages):
        return False
    oldest = max(age for age in ages if age is not None)
    return all(lock.age_s is not None and lock.age_s > oldest + LOCK_BEFORE_COMPILE_S for lock in locks)


def stale(locks: Sequence[CacheLock], older_than_s: float) -> bool:
    """Whether an entry's locks are left by a stopped compile: some, none held by a process here, all older than
    `older_than_s`, in an entry that is not finished (a finished entry's lock is waited on by nobody). The check's
    finding and `cache prune --stale-locks` judge by this one rule."""
    return bool(locks) and all(lock.holder_pid is None and lock.age_s is not None and lock.age_s >= older_than_s
                               and lock.entry_state != ENTRY_DONE for lock in locks)


def stale_after_s(container: bool) -> float:
    """How old an unheld lock must be to be called stale: in a container, whose process list hides compiles in
    other containers that share the cache (a pod's hostPath), longer than any compile users report (100 min)."""
    return STALE_LOCK_IN_CONTAINER_S if container else STALE_LOCK_S


def stale_locks(ctx: RuleContext) -> list[Finding]:
    """ND-CACHE-002: unfinished entries whose lock no process holds, left by a killed compile."""
    index = _index(ctx)
    if index is None:
        return []
    older_than = stale_after_s(ctx.facts.host.snapshot.container)
    locks_of: dict[str, list[CacheLock]] = {}
    for lock in index.locks:
        locks_of.setdefault(lock.entry, []).append(lock)
    stale_entries = sorted(entry for entry, locks in locks_of.items() if stale(locks, older_than)
                           and not locks_may_be_live(index, locks))
    if not stale_entries:
        return []
    compiles = (f"the neuronx-cc running here ({', '.join(index.compilers_running[:3])}) started more than "
                f"{LOCK_BEFORE_COMPILE_S / 60:.0f} minutes after these locks were made, so none is theirs"
                if index.compilers_running else "no neuronx-cc runs here")
    return [_finding(
        "ND-CACHE-002", SEVERITY_WARNING,
        title=f"{len(stale_entries)} stale compile lock(s) in {index.path}: the next run that needs those graphs "
              f"waits on them",
        detail=("A compile that was killed leaves its `*.lock` in the entry; later runs wait for the compile that is "
                "no longer running (\"Another process must be compiling …\"). No process on this host holds these "
                f"locks, {compiles}, the cache is on a local filesystem, and the locks are older than "
                f"{older_than / 60:.0f} minutes: " + ", ".join(stale_entries[:3])),
        evidence={"path": index.path, "entries": stale_entries,
                  "compiles_running": index.compilers_running[:3]},
        fix=_prune(ctx, "--stale-locks"),
    )]


def _by_compiler(ctx: RuleContext) -> Optional[tuple[CacheIndex, list[tuple[PythonEnvironment, str]], set[str],
                                                     list[CompilerCache], list[CompilerCache]]]:
    """(the cache's index, the environments with a compiler, their compiler versions, the index's folders of those
    compilers, the folders of other compilers that hold finished graphs); None without a cache or a compiler."""
    index = _index(ctx)
    envs = compiler_environments(ctx.facts.environments)
    if index is None or not envs:
        return None
    installed = installed_compiler_versions(envs)
    mine = [compiler for compiler in index.compilers if compiler.compiler_version in installed]
    others = [compiler for compiler in index.compilers if compiler.compiler_version not in installed
              and compiler.states[ENTRY_DONE]]
    return index, envs, installed, mine, others


def other_compilers(ctx: RuleContext) -> list[Finding]:
    """ND-CACHE-003: the cache holds finished entries only for compilers other than the installed one(s)."""
    split = _by_compiler(ctx)
    if split is None:
        return []
    index, envs, installed, mine, others = split
    if not others or any(compiler.states[ENTRY_DONE] for compiler in mine):
        return []
    if index.cut and mine:  # the installed compiler's folder was not counted to its end: its graphs may be there
        return []
    entries = sum(compiler.states[ENTRY_DONE] for compiler in others)
    size = sum(compiler.bytes for compiler in others)
    return [_finding(
        "ND-CACHE-003", SEVERITY_WARNING,
        title=f"the compile cache {index.path} has {entries:,} compiled graph(s), none for the installed neuronx-cc "
              f"{', '.join(sorted(installed))}: the next start compiles every graph again{_bound(index)}",
        detail=(f"The cache is kept per compiler version; its entries are for "
                f"{'; '.join(_made_by(ctx, compiler.compiler_version) for compiler in others)} "
                f"({size / GIB:.1f} GiB), which this environment does not have. Moving them aside frees the "
                "room; to use them instead, the environment needs that compiler's release."),
        evidence={"path": index.path, "installed": sorted(installed),
                  "other_compilers": [compiler.name for compiler in others], "entries": entries, "bytes": size},
        fix=_prune(ctx, "--other-compilers", envs),
    )]


def _made_by(ctx: RuleContext, compiler_version: Optional[str]) -> str:
    """`neuronx-cc 2.15.141.0 (Neuron 2.20.1)`: the releases the release data lists that compiler in, or says that
    it lists it in none (not guessed)."""
    releases = ctx.catalog.releases_with("neuronx-cc", compiler_version or "") if compiler_version else []
    shown = ", ".join(releases[:2]) if releases else "a release the release data does not list"
    return f"neuronx-cc {compiler_version} (Neuron {shown})" if releases else f"neuronx-cc {compiler_version} ({shown})"


def unused_compilers(ctx: RuleContext) -> list[Finding]:
    """ND-CACHE-009 (info): finished graphs of compilers no environment here has, beside the installed compiler's own
    (after an upgrade): never loaded again, only room taken. Where the installed compiler has none, ND-CACHE-003
    says so as a warning instead."""
    split = _by_compiler(ctx)
    if split is None:
        return []
    index, envs, installed, mine, others = split
    if not others or not any(compiler.states[ENTRY_DONE] for compiler in mine):
        return []
    entries = sum(compiler.states[ENTRY_DONE] for compiler in others)
    size = sum(compiler.bytes for compiler in others)
    made_by = [_made_by(ctx, compiler.compiler_version) for compiler in others]
    return [_finding(
        "ND-CACHE-009", SEVERITY_INFO,
        title=f"the compile cache {index.path} keeps {entries:,} compiled graph(s) ({size / GIB:.1f} GiB) of "
              f"{'; '.join(made_by[:3])}, which no environment here has{_bound(index)}",
        detail=("The cache is kept per compiler version, and the installed neuronx-cc "
                f"{', '.join(sorted(installed))} never loads another's graphs: after an upgrade they only take room. "
                "Moving them aside frees it; keep them only for an environment that still runs that compiler."),
        evidence={"path": index.path, "installed": sorted(installed),
                  "other_compilers": [compiler.name for compiler in others], "made_by": made_by,
                  "entries": entries, "bytes": size},
        fix=_prune(ctx, "--other-compilers", envs),
    )]


PER_USER_CACHE = Shell('"$HOME"/.cache/neuron-compile-cache')


def unwritable(ctx: RuleContext) -> list[Finding]:
    """ND-CACHE-004: a cache this user cannot write (or create), or one on a read-only filesystem."""
    cache = ctx.facts.host.snapshot.compile_cache
    if cache is None or cache.remote or not (cache.read_only or cache.writable is False):
        return []
    exists = cache.index is not None and cache.index.exists
    user = ctx.facts.host.snapshot.user_name or "this user"
    if cache.read_only:
        title = f"the compile cache {cache.path} is on a read-only filesystem"
    elif exists:
        title = f"{user} cannot write the compile cache {cache.path}"
    else:
        title = f"{user} cannot create the compile cache {cache.path} (its parent folder is not writable)"
    if cache.source == "NEURON_CC_FLAGS --cache_dir":
        flags = CACHE_DIR_FLAG.sub("", ctx.facts.environ.get("NEURON_CC_FLAGS", "")).strip()
        fix = command("export", (Shell("NEURON_CC_FLAGS="), f"{flags} --cache_dir=".lstrip(), PER_USER_CACHE))
    else:
        fix = command("export", (Shell("NEURON_COMPILE_CACHE_URL="), PER_USER_CACHE))
    mount = cache.mount
    if cache.read_only and mount is not None and mount.read_only:
        title += f" ({mount.point} is mounted read-only: {mount.table})"
    return [_finding(
        "ND-CACHE-004", SEVERITY_WARNING, title=title,
        detail=("neuronx-cc stores each compiled graph in the cache, and the compile wrapper opens a lock file in it "
                "even to use a graph that is there: on a read-only cache users meet `OSError: [Errno 30] Read-only "
                "file system: '…/lock'` (a serving container given a cache inside its read-only model folder). "
                "Where this user cannot write, what it compiles is not kept for the next start (ASSUMED: the "
                "wrapper's exact behaviour, an error or a compile without caching, is not documented). A cache made "
                "by one user (often root, with sudo) is not writable by the others: give each user a cache of "
                "their own."),
        evidence={"path": cache.path, "source": cache.source, "read_only": cache.read_only,
                  "writable": cache.writable, "user": ctx.facts.host.snapshot.user_name,
                  **_mount_evidence(mount)},
        fix=Fix([fix]),
    )]


def _mount_evidence(mount: Optional[PathMount]) -> dict[str, object]:
    if mount is None:
        return {}
    return {"mount": mount.point, "filesystem": mount.filesystem, "mount_options": mount.options,
            "mount_table": mount.table}


def on_network_filesystem(ctx: RuleContext) -> list[Finding]:
    """ND-CACHE-007: the cache is on a network filesystem (EFS, FSx for Lustre, NFS, an S3 mount): an info, never a
    warning. Sharing a cache across nodes is a design AWS documents (vLLM Neuron's remote tier is an NFS or FSx
    mount); what it changes is what this node can know: a compile on another node holds locks /proc/locks here
    does not show, so stale locks are not judged (ND-CACHE-002)."""
    cache = ctx.facts.host.snapshot.compile_cache
    mount = cache.mount if cache is not None else None
    if cache is None or cache.remote or mount is None or not mount.network:
        return []
    return [_finding(
        "ND-CACHE-007", SEVERITY_INFO,
        title=f"the compile cache {cache.path} is on {mount.filesystem} ({mount.point}): other nodes may compile "
              "into it",
        detail=("A cache on a network filesystem is shared by every node that mounts it. Its lock files may be held "
                "by a compile on another node, which this node's /proc/locks does not show: the doctor does not call "
                "them stale, and a run here may wait on a compile elsewhere. Each compile's graph also travels over "
                "the network. Node-local caches avoid both; a shared one saves each node its own compile."),
        evidence={"path": cache.path, "source": cache.source, **_mount_evidence(mount)},
        fix=Fix([note("nothing to repair: keep the shared cache, or give each node a local one (a folder on its "
                      "own disk in NEURON_COMPILE_CACHE_URL)")]),
    )]


# The compile wrapper makes a graph's workdir under /tmp/<user>/neuroncc_compile_workdir/<id>/ (its
# `Call compiler with cmd: neuronx-cc compile … /tmp/ubuntu/neuroncc_compile_workdir/…` log lines in users'
# reports); TorchNeuron's torch.compile backend keeps its artifacts in TORCH_NEURONX_DEBUG_DIR, /tmp/neuron_backend
# by default (torch-neuronx environment variables reference).


def workdir_read_only(ctx: RuleContext) -> list[Finding]:
    """ND-CACHE-008: /tmp, where every compile writes its graph first, is on a read-only mount, in an environment
    that compiles."""
    tmp = next((mount for mount in ctx.facts.host.snapshot.mounts if mount.path == TMP), None)
    envs = compiler_environments(ctx.facts.environments)
    if tmp is None or not tmp.read_only or not envs:
        return []
    return [_finding(
        "ND-CACHE-008", SEVERITY_WARNING,
        title=f"{TMP} is on a read-only mount ({tmp.point}, {tmp.filesystem}): neuronx-cc cannot write a graph's "
              "workdir there",
        detail=("Before neuronx-cc runs, the compile wrapper writes the graph to "
                "/tmp/<user>/neuroncc_compile_workdir/<id>/, and TorchNeuron's torch.compile backend keeps its "
                "artifacts in /tmp/neuron_backend (TORCH_NEURONX_DEBUG_DIR): on a read-only /tmp no graph that is "
                "not cached can compile. Containers started with a read-only root filesystem have it unless /tmp "
                "is a mount of its own. ASSUMED: whether TMPDIR moves the wrapper's workdir is not documented."),
        evidence={"path": TMP, **_mount_evidence(tmp),
                  "environments": [env.path for env, _ in envs]},
        fix=Fix([note("give the host or the container a writable /tmp (a tmpfs, or a pod's emptyDir at /tmp)")]),
    )]


def other_flags(ctx: RuleContext) -> list[Finding]:
    """ND-CACHE-005: no finished graph of the installed compiler is keyed by the flags in force now, the flags added
    and removed against the nearest cached set named (rules/host_stack/compile_flags.py says how a key is made)."""
    index = _index(ctx)
    words = key_words(ctx.facts.environ.get("NEURON_CC_FLAGS", ""))
    installed = installed_compiler_versions(compiler_environments(ctx.facts.environments))
    if index is None or not words or not installed or index.cut:
        return []  # no flags set: entries may be keyed by a framework's own flags; a cut count: keys not all seen
    mine = compiler_flags(words)
    compilers = [compiler for compiler in index.compilers if compiler.compiler_version in installed
                 and compiler.states[ENTRY_DONE]]
    keys = {key for compiler in compilers for key in compiler.flag_keys}
    samples = [compiler_flags(flags) for compiler in compilers for flags in compiler.flag_samples]
    if not compilers or keys & flags_keys(words) or any(flags == mine for flags in samples):
        return []
    nearest = min(samples, key=lambda flags: (len(flags ^ mine), sorted(flags))) if samples else None
    added = sorted(mine - nearest) if nearest is not None else sorted(mine)
    removed = sorted(nearest - mine) if nearest is not None else []
    change = "; ".join(part for part in (f"added {' '.join(added)}" if added else "",
                                         f"removed {' '.join(removed)}" if removed else "") if part)
    graphs = sum(compiler.states[ENTRY_DONE] for compiler in compilers)
    return [_finding(
        "ND-CACHE-005", SEVERITY_INFO,
        title=f"none of the {graphs:,} compiled graph(s) of neuronx-cc {', '.join(sorted(installed))} in "
              f"{index.path} was built with the NEURON_CC_FLAGS set now"
              + (f" ({change}, against the nearest cached flags)" if nearest is not None else "")
              # Flags only removed may be ones a framework adds when it runs (not in NEURON_CC_FLAGS here).
              + (f": unless the framework adds {' '.join(removed)} itself, the next start compiles again"
                 if removed and not added else ": the next start compiles again"),
        detail=("The `+<flags>` part of an entry's name is the md5 of its compile flags, so removing a flag changes "
                "it as much as adding one. No finished entry's key is the key of the flags set now (wrapper flags "
                "such as --cache_dir left out; torch-neuronx's own --target, --framework and --verbose are not in "
                "the key). Keep the new flags and the first start compiles once and caches again, or set back the "
                "flags the cached graphs were built with. A framework that adds flags of its own when it runs "
                "(not what NEURON_CC_FLAGS holds here) keys its graphs by those: then this is not known."),
        evidence={"path": index.path, "user_flags": sorted(mine), "keys_now": sorted(flags_keys(words)),
                  "keys_in_cache": sorted(keys)[:10], "looked_at": len(samples), "added": added,
                  "removed": removed, "nearest_cached_flags": sorted(nearest) if nearest is not None else None},
        fix=Fix([note("nothing to repair: keep the new flags (one compile), or set NEURON_CC_FLAGS back to the "
                      "cached graphs' flags")]),
    )]


def not_judged(ctx: RuleContext) -> list[Finding]:
    """ND-CACHE-006: unattended health left the default cache unmeasured, another user controlling the way to it
    (a link any user can make in /var/tmp must not drain a node); an info that says why, never a verdict."""
    cache = ctx.facts.host.snapshot.compile_cache
    if cache is None or cache.not_judged is None:
        return []
    return [_finding(
        "ND-CACHE-006", SEVERITY_INFO,
        title=f"the compile cache {cache.path} was not judged: {cache.not_judged}",
        detail=("Any user can create names in /var/tmp, so what stands at the default cache location may be theirs: "
                "a link to a small or full filesystem would decide this node's verdict. Unattended `health` judges "
                "the default cache only where root owns it and every link and folder on the way to it; a cache the "
                "operator configured (health.conf's `compile_cache`, or NEURON_COMPILE_CACHE_URL or --cache_dir in "
                "the environment health runs with) is judged wherever it is. `check` judges it as usual."),
        evidence={"path": cache.path, "source": cache.source, "why": cache.not_judged},
        fix=Fix([note("to judge it unattended, name it in /etc/neurondoctor/health.conf (compile_cache = {}), or "
                      "give the way to it to root", cache.path)]),
    )]


RULE_SET = RuleSet(
    rules=(failed_entries, stale_locks, other_compilers, unwritable, other_flags, not_judged, on_network_filesystem,
           workdir_read_only, unused_compilers),
    findings=(
        FindingSpec("ND-CACHE-001", CATEGORY, SEVERITY_WARNING, "failed compilations in the compile cache that "
                    "later runs skip"),
        FindingSpec("ND-CACHE-002", CATEGORY, SEVERITY_WARNING, "stale compile locks that later runs wait on"),
        FindingSpec("ND-CACHE-003", CATEGORY, SEVERITY_WARNING, "a compile cache with entries only for other "
                    "compiler versions"),
        FindingSpec("ND-CACHE-004", CATEGORY, SEVERITY_WARNING, "a compile cache this user cannot write, or on a "
                    "read-only filesystem"),
        FindingSpec("ND-CACHE-005", CATEGORY, SEVERITY_INFO, "no cached graph of the installed compiler was built "
                    "with the NEURON_CC_FLAGS set now"),
        FindingSpec("ND-CACHE-006", CATEGORY, SEVERITY_INFO, "unattended health did not judge the default compile "
                    "cache: another user controls the way to it"),
        FindingSpec("ND-CACHE-007", CATEGORY, SEVERITY_INFO, "the compile cache is on a network filesystem (EFS, "
                    "FSx, NFS, an S3 mount): other nodes may compile into it"),
        FindingSpec("ND-CACHE-008", CATEGORY, SEVERITY_WARNING, "the temporary folder, where compiles write their "
                    "graphs first, is on a read-only mount"),
        FindingSpec("ND-CACHE-009", CATEGORY, SEVERITY_INFO, "compiled graphs of compilers no environment here has, "
                    "beside the installed compiler's own (room only)"),
    ),
)
