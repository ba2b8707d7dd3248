"""Attack class: a managed image's Inf1 pin folder as others could leave it.

The doctor reads the names of the packages an EKS or ECS image caches for Inf1 (host/node_role.py) to say which
driver the image pins. The folder is data: a link out of the root must not be followed outside it, a folder of
a hundred thousand names must cost a bounded read, and a name that only looks like a package (a newline in it,
a version with letters) is no version."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import check_json, cli_env, findings_by_id
from tests.host_fixture import HostSpec, build_host

CACHE = "opt/ecs/neuron/inf1-rpms"
ECS_INF1 = HostSpec(instance_type="inf1.6xlarge", release="2.33.1", os="al2023", node="ecs",
                    kernel="6.1.158-180.294.amzn2023.x86_64", inf1_pin=True,
                    package_versions={"aws-neuronx-dkms": "2.21.37.0"}, loaded_version="2.21.37.0")


def _pin(tmp_path: Path, root: Path) -> dict[str, object]:
    code, report, _ = check_json(["--root", str(root)], env=cli_env({"HOME": str(tmp_path / "home")}))
    assert code == 0, report["findings"]
    (finding,) = findings_by_id(report)["ND-DRV-005"]
    pin = finding["evidence"]["image_inf1_pin"]
    assert isinstance(pin, dict)
    return pin


def test_a_cache_folder_linked_out_of_the_root_is_read_inside_it(tmp_path: Path) -> None:
    outside = tmp_path / "outside" / CACHE
    outside.mkdir(parents=True)
    (outside / "aws-neuronx-dkms-9.9.9.0-dkms.noarch.rpm").write_text("not this machine's")
    root = build_host(tmp_path / "node", ECS_INF1)
    for name in (root / CACHE).iterdir():
        name.unlink()
    (root / CACHE).rmdir()
    (root / CACHE).symlink_to("/" + CACHE + "-elsewhere")  # absolute: inside the root, where nothing is
    assert _pin(tmp_path, root)["cached"] == []


def test_a_folder_of_many_names_is_read_to_a_bound(tmp_path: Path) -> None:
    root = build_host(tmp_path / "node", ECS_INF1)
    for number in range(5_000):
        (root / CACHE / f"junk-{number:05d}").write_text("")
    cached = _pin(tmp_path, root)["cached"]
    assert isinstance(cached, list) and len(cached) <= 1  # at most the names read, never all 5,001


def test_names_that_only_look_like_packages_give_no_version(tmp_path: Path) -> None:
    root = build_host(tmp_path / "node", ECS_INF1)
    for name in ("aws-neuronx-dkms-2.21.37.0\nrm -rf -dkms.noarch.rpm", "aws-neuronx-dkms-2.x.1-dkms.noarch.rpm",
                 "aws-neuronx-dkms-2.21.37.0-dkms.noarch.rpm.partial"):
        (root / CACHE / name).write_text("")
    assert _pin(tmp_path, root)["cached"] == ["2.21.37.0"]
