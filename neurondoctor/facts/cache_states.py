"""The states of a compile cache entry (facts/cache_index.py says what each is): plain names, so the rules that
judge them do not pay for the index's records on a host without a cache."""

ENTRY_DONE = "done"
ENTRY_FAILED = "failed"  # model.log and no usable NEFF: skipped until --retry_failed_compilation
ENTRY_INCOMPLETE = "incomplete"  # neither: a compile that was stopped, or one under way (then it is locked)
ENTRY_STATES = (ENTRY_DONE, ENTRY_FAILED, ENTRY_INCOMPLETE)

