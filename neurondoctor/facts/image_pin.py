"""A managed image's Inf1 driver pin: its own module, imported only where a container node is read (a record
class costs every run that imports it)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ImageInf1Pin:
    """A managed image's boot service that puts an older driver on Inf1 (host/node_role.py says which images):
    `unit` is its systemd unit, `service` its script, `cached` the aws-neuronx-dkms versions of the packages it
    installs from `cache_dir`, `line` the driver line its script names."""

    unit: str
    service: str
    cache_dir: str
    line: str
    cached: list[str] = field(default_factory=list)

    def installs(self, driver: str) -> bool:
        """Whether `driver` is of the line the image's service installs."""
        return driver.startswith(self.line + ".")
