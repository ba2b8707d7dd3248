"""The states of a compile cache entry (facts/cache_index.py says what each is): plain names, so the rules that
judge them do not pay for the index's records on a host without a cache."""

ENTRY_DONE = "done"
ENTRY_FAILED = "failed"  # model.log and no usable NEFF: skipped until --retry_failed_compilation
ENTRY_LOCKED = "locked"  # no result yet and a `*.lock` in it: a compile under way, or one killed that left its lock
ENTRY_INCOMPLETE = "incomplete"  # no result and no lock: a compile that was stopped, or a NEFF still being written
# One state per entry, as optimum-neuron's cache/cleanup.py classifies them: an entry is counted once.
ENTRY_STATES = (ENTRY_DONE, ENTRY_FAILED, ENTRY_LOCKED, ENTRY_INCOMPLETE)


def writes_done_marker(compiler_version: str | None) -> bool:
    """Whether this neuronx-cc marks a finished entry with `model.done`: from 2.15 on. Up to 2.14 an entry never has
    one (the public copies of 2.11, 2.12 and 2.14.227.0), so there a whole NEFF alone is a finished entry. A version
    that does not read as numbers is taken as a current one."""
    parts = (compiler_version or "").split(".")
    if len(parts) < 2 or not (parts[0].isdigit() and parts[1].isdigit()):
        return True
    return (int(parts[0]), int(parts[1])) >= (2, 15)

