"""Whether only root controls where a path inside the root leads: what an unattended verdict may rest on.

Anyone may create names in /tmp, /var/tmp or /dev/shm, so what stands at a default location there (the compile
cache at /var/tmp/neuron-compile-cache) may be any user's: a link they made to a full filesystem would decide a
node's verdict. The path is walked as `RootFS.resolve` walks it, links followed inside the root; every folder it
enters, every link and the last component must be root's and writable by no one else (run_trust's rule: a
root-owned sticky folder such as /var/tmp excepted). The first one that is not is named.
"""

from __future__ import annotations

from typing import Optional

from neurondoctor.host.rootfs import RootFS
from neurondoctor.run_trust import foreign_control


def controlled_by_another_user(fs: RootFS, inner: str) -> Optional[str]:
    """Why a user other than root could change what `inner` leads to, or None when root alone controls every step
    of the way. A link loop (or a chain of more links than the reader follows) is someone's doing too."""
    passed = fs.path_through(inner)
    if passed is None:
        return f"{fs.shown_path(inner)} is a link loop"
    for machine_path in passed:
        reason = foreign_control(str(machine_path))
        if reason:
            return reason
    return None
