"""AWS's published support rules as data (manifests/support-ranges.json) and the findings they drive: ND-SUP-001 for
a version outside the range a release publishes, ND-SUP-002 for a package line on a family it is not for.

The environments are the ones AWS publishes: the DLAMI's JAX venv of 2.31 (dlami/index.rst; the versions are 2.31.1's
release content), the XLA stack of each release (tests/neuron_envs.py), NxD Inference 0.10.18399 (2.31's release
content) and vLLM Neuron 0.21.0.1.0.0, the beta wheel the 2.31 release content lists as an additional Trn2/Trn3
package. Each failure has its near miss beside it: the range's boundary, the family the line is for, the release
before the rule.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from neurondoctor.python_packaging import canonical_name, valid_specifier
from neurondoctor.release_data.catalog import bundled_manifest_dir, load_catalog
from neurondoctor.rules.python_stack.support_ranges import in_span, severity_of
from neurondoctor.rules.registry import all_finding_specs
from tests.conftest import check_json, cli_env, findings_by_id, run_cli
from tests.host_fixture import HostSpec, build_host
from tests.neuron_envs import HEALTHY_STACKS, jax_stack_wheels, simple_wheel, stack_wheels
from tests.wheelhouse import (
    VenvFactory,
    WheelSpec,
    install_image_interpreter,
    repoint_to_image_interpreter,
    write_pip_conf,
)

DATA = bundled_manifest_dir() / "support-ranges.json"

# 2.33's vLLM Neuron line, 0.29.0.1.x (the vLLM Omni Neuron setup guide of 2.33.0), which the release data does not
# list: a member of it.
VLLM_NEURON_2_33 = simple_wheel("vllm-neuron", "0.29.0.1.0")


def _check(tmp_path: Path, venvs: VenvFactory, instance_type: str, release: str, wheels: list[WheelSpec],
           args: tuple[str, ...] = (), env: dict[str, str] | None = None) -> tuple[Path, dict[str, Any]]:
    root = build_host(tmp_path / "host", HostSpec(instance_type=instance_type, release=release))
    venv = venvs.create(f"sup-{tmp_path.parent.name}-{tmp_path.name}")
    venvs.install(venv, wheels)
    _, report, _ = check_json(["--root", str(root), "--venv", str(venv), *args], env=env)
    return venv, report


def _sup(report: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(item["id"], item["severity"], item["evidence"]["rule"]) for item in report["findings"]
            if item["id"].startswith("ND-SUP")]


# --- the data ---------------------------------------------------------------------------------------------------

def test_every_entry_has_its_page_a_valid_range_and_a_known_cover() -> None:
    """Each entry names its https page, valid specifiers, a span of real releases and, when another finding judges
    it, an id that exists (a finding id, or an end-of-support announcement for the versions under a range)."""
    document = json.loads(DATA.read_text())
    catalog = load_catalog(environ={})
    assert not [problem for problem in catalog.problems if "support-ranges" in problem.path]
    finding_ids = {spec.id for _, spec in all_finding_specs()}
    announcements = {item["id"]: item for item in catalog.end_of_support["announcements"]}
    families = {str(item["family"]) for item in catalog.instances.values()} | {"trn3"}
    for entry in [*document["ranges"], *document["instances"]]:
        assert entry["source"].startswith("https://") and entry["outside"] in ("fails", "unsupported"), entry["id"]
        assert entry.get("covered_by") in (None, *finding_ids), entry["id"]
        names = [entry["package"], *entry.get("beside", {})]
        assert names == [canonical_name(name) for name in names], entry["id"]  # installed records are keyed so
    for entry in document["ranges"]:
        assert valid_specifier(entry["supported"]) and entry["supported"], entry["id"]
        assert all(valid_specifier(spec) for spec in entry["beside"].values()), entry["id"]
        if entry.get("below_covered_by"):
            covered = announcements[entry["below_covered_by"]]
            assert entry["package"] in covered["packages"], entry["id"]
    for entry in document["instances"]:
        assert valid_specifier(entry["versions"]) and set(entry["instances"]) <= families, entry["id"]
    assert all(item["source"].startswith("https://") and item["why"] for item in document["not_published"])


def test_one_pair_one_severity_across_nd_inst_001_and_nd_sup_002() -> None:
    """Where the release data lists a line for some families only, ND-INST-001 judges it as an error; an entry here
    for the same package and versions that ND-INST-001 would judge must also say `fails` (an error), so the same
    pair is never an error in one report and a warning in another."""
    catalog = load_catalog(environ={})
    for entry in json.loads(DATA.read_text())["instances"]:
        if entry.get("covered_by"):
            continue
        restricted = [package for release in catalog.release_names for package in
                      catalog.entries(release, entry["package"])
                      if set(package.instances) <= set(entry["instances"]) and package.instances]
        if restricted:
            assert severity_of(entry) == "error", (entry["id"], restricted)


def test_the_2_34_rules_apply_to_the_release_known_in_part(tmp_path: Path, venvs: VenvFactory) -> None:
    """2.34.0 is in the data in part (its TorchNeuron families and announcements; no host versions): its JAX range
    applies to an environment judged as 2.34.0. JAX 0.9 gets the announcement's finding (JAX earlier than 0.10.0
    unsupported from 2.34: announce-no-support-jax-0-8-0-9) with its fix, 0.12.0 is above the range, 0.10.0 its
    floor and clean. A JAX host's packages do not say 2.34 (their versions are not published), so `--release` names
    it, as a user told of the announcement would."""
    catalog = load_catalog(environ={})
    assert "2.34.0" in catalog.releases and in_span("2.34.0", next(
        item for item in catalog.support_ranges["ranges"] if item["id"] == "jax-2.34"))
    found = {}
    for jax in ("0.9.2", "0.12.0", "0.10.0"):
        _, report = _check(tmp_path / jax, venvs, "trn2.48xlarge", "2.33.1", jax_stack_wheels(jax, "3.0.12293.0"),
                           ("--release", "2.34.0"))
        eos = [(item["id"], item["severity"], item["evidence"]["announcement"], bool(item["fix"]))
               for item in report["findings"] if item["id"] == "ND-EOS-001"]
        found[jax] = _sup(report) + eos
    assert found == {"0.9.2": [("ND-EOS-001", "warning", "jax-before-0.10", True)],
                     "0.12.0": [("ND-SUP-001", "warning", "jax-2.34")], "0.10.0": []}


def test_a_support_file_of_garbage_is_one_line_and_the_report_still_comes(tmp_path: Path) -> None:
    manifests = tmp_path / "manifests"
    shutil.copytree(bundled_manifest_dir(), manifests)
    (manifests / "support-ranges.json").write_text(json.dumps(
        {"schema": "neurondoctor.support-ranges/1", "ranges": [{"id": "x", "package": "jax", "beside": {},
                                                                "supported": ">=>0.1", "releases": {"from": "2.31.0"},
                                                                "outside": "unsupported", "source": "https://x"}],
         "instances": [], "not_published": []}))
    catalog = load_catalog(manifests, environ={})
    (problem,) = catalog.problems
    assert problem.path.endswith("support-ranges.json") and "is not a version specifier" in problem.message
    assert catalog.support_ranges == {} and catalog.releases


# --- ND-SUP-001: a version outside the published range ----------------------------------------------------------

@pytest.mark.parametrize(("jax", "expected"), [
    ("0.11.2", [("ND-SUP-001", "warning", "jax-2.31-2.33")]),  # above 2.31's 0.7.0-0.10.0
    ("0.10.0", []),  # the range's top: the DLAMI's own JAX
    ("0.7.0", [("ND-EOS-001", "jax-0.7")]),  # in the range's words, but its own end (2.30) is an announcement
    ("0.6.2", [("ND-SUP-001", "warning", "jax-2.31-2.33")]),  # under the range, and no announcement covers 0.6
])
def test_jax_on_a_2_31_1_trn1_against_the_release_notes_range(tmp_path: Path, venvs: VenvFactory, jax: str,
                                                              expected: list[tuple[str, ...]]) -> None:
    _, report = _check(tmp_path, venvs, "trn1.32xlarge", "2.31.1", jax_stack_wheels(jax))
    eos = [(item["id"], item["evidence"]["announcement"]) for item in report["findings"]
           if item["id"].startswith("ND-EOS")]
    assert _sup(report) + eos == expected


def test_the_jax_finding_names_the_range_the_page_and_the_pin(tmp_path: Path, venvs: VenvFactory) -> None:
    venv, report = _check(tmp_path, venvs, "trn1.32xlarge", "2.31.1", jax_stack_wheels("0.11.2"))
    (finding,) = findings_by_id(report)["ND-SUP-001"]
    assert finding["title"] == (f"{venv}: jax 0.11.2 is outside the versions Neuron 2.31.1 supports beside "
                                "jax-neuronx (jax>=0.7.0,<=0.10.0)")
    assert finding["docs"] == ["docs/findings/ND-SUP-001.md",  # its own page first, then the page it rests on
                               "https://awsdocs-neuron.readthedocs-hosted.com/en/v2.32.0/_sources/release-notes/"
                               "components/jax.rst"]
    assert finding["fix"] == [f"{venv}/bin/python -m pip install 'jax==0.10.0'"]
    assert finding["category"] == "framework-pin-mismatch"


def test_jax_without_jax_neuronx_is_not_judged(tmp_path: Path, venvs: VenvFactory) -> None:
    """The range is the JAX the Neuron plugin supports: a JAX environment without it is not a Neuron one."""
    _, report = _check(tmp_path, venvs, "trn1.32xlarge", "2.31.1", [simple_wheel("jax", "0.11.2")])
    assert _sup(report) == []


def test_a_declared_protobuf_requirement_is_said_once_by_nd_req_001(tmp_path: Path, venvs: VenvFactory) -> None:
    """protobuf 3.19.6 under torch-neuronx (whose wheel declares protobuf>=3.20): ND-REQ-001's error alone, not a
    second finding from the published end of protobuf 3.19 (announce-eos-probuf); 3.20.0 is clean of both."""
    stack = [spec for spec in stack_wheels(HEALTHY_STACKS["2.31.1"]) if spec.name != "protobuf"]
    _, report = _check(tmp_path / "old", venvs, "trn1.32xlarge", "2.31.1",
                       [*stack, simple_wheel("protobuf", "3.19.6")])
    assert _sup(report) == [] and any(item["evidence"]["requirement"] == "protobuf>=3.20"
                                      for item in findings_by_id(report)["ND-REQ-001"])
    _, report = _check(tmp_path / "edge", venvs, "trn1.32xlarge", "2.31.1",
                       [*stack, simple_wheel("protobuf", "3.20.0")])
    assert _sup(report) == [] and "ND-REQ-001" not in findings_by_id(report)


def test_protobuf_3_19_under_a_torch_neuronx_that_does_not_declare_it(tmp_path: Path, venvs: VenvFactory) -> None:
    """A torch-neuronx record without the protobuf requirement (a wheel rebuilt in-house): the published end of
    protobuf 3.19 for PyTorch NeuronX (from Neuron 2.20) still says it, as a warning with the pin."""
    stack = [spec for spec in stack_wheels(HEALTHY_STACKS["2.31.1"]) if spec.name not in ("protobuf", "torch-neuronx")]
    torch_neuronx = simple_wheel("torch-neuronx", HEALTHY_STACKS["2.31.1"].torch_neuronx,
                                 ("torch==2.9.*", "torch-xla==2.9.*", "libneuronxla<3.0,>=2.2"))
    venv, report = _check(tmp_path, venvs, "trn1.32xlarge", "2.31.1",
                          [*stack, torch_neuronx, simple_wheel("protobuf", "3.19.6")])
    (finding,) = findings_by_id(report)["ND-SUP-001"]
    assert finding["severity"] == "warning" and finding["evidence"]["rule"] == "protobuf-torch-neuronx"
    assert finding["fix"] == [f"{venv}/bin/python -m pip install 'protobuf>=3.20'"]


def test_the_2_34_range_applies_once_the_data_holds_2_34(tmp_path: Path, venvs: VenvFactory) -> None:
    """With release data that holds a 2.34.0 (here 2.33.0's list under that name), `--release 2.34.0` judges JAX
    by 2.34's published range: 0.12.0 is above it (ND-SUP-001), 0.9.2 under it is the end-of-support announcement's
    alone (ND-EOS-001), 0.11.2 is its top and clean."""
    manifests = tmp_path / "manifests"
    shutil.copytree(bundled_manifest_dir(), manifests)
    release = json.loads((manifests / "releases/2.33.0.json").read_text())
    release["release"] = "2.34.0"
    (manifests / "releases/2.34.0.json").write_text(json.dumps(release))
    sdk = json.loads((manifests / "sdk.json").read_text())
    sdk["releases"] = ["2.34.0", *sdk["releases"]]
    (manifests / "sdk.json").write_text(json.dumps(sdk))
    env = cli_env({"NEURONDOCTOR_MANIFESTS": str(manifests)})
    found = {}
    for jax in ("0.12.0", "0.9.2", "0.11.2"):
        _, report = _check(tmp_path / jax, venvs, "trn1.32xlarge", "2.33.0", jax_stack_wheels(jax, "3.0.10135.0"),
                           ("--release", "2.34.0"), env)
        eos = [(item["id"], item["evidence"]["announcement"]) for item in report["findings"]
               if item["id"] == "ND-EOS-001"]
        found[jax] = _sup(report) + eos
    assert found == {"0.12.0": [("ND-SUP-001", "warning", "jax-2.34")],
                     "0.9.2": [("ND-EOS-001", "jax-before-0.10")], "0.11.2": []}


@pytest.mark.parametrize(("vllm", "expected"), [
    ("0.28.0", [("ND-SUP-001", "warning", "vllm-neuron-2.33")]),
    ("0.29.0", []),  # the vLLM the 2.33 guide names
])
def test_vllm_beside_2_33s_vllm_neuron(tmp_path: Path, venvs: VenvFactory, vllm: str,
                                       expected: list[tuple[str, str, str]]) -> None:
    _, report = _check(tmp_path, venvs, "trn2.48xlarge", "2.33.0", [
        *stack_wheels(HEALTHY_STACKS["2.33.0"]), VLLM_NEURON_2_33, simple_wheel("vllm", vllm)])
    assert _sup(report) == expected


# --- ND-SUP-002: a package line on a family it is not for -------------------------------------------------------

@pytest.mark.parametrize(("instance_type", "release", "extra", "expected"), [
    ("trn1.32xlarge", "2.33.0", VLLM_NEURON_2_33, [("ND-SUP-002", "error", "vllm-neuron-trn2-trn3")]),
    ("inf2.xlarge", "2.33.0", VLLM_NEURON_2_33, [("ND-SUP-002", "error", "vllm-neuron-trn2-trn3")]),
    ("trn2.48xlarge", "2.33.0", VLLM_NEURON_2_33, []),  # the family it is for
    ("trn1.32xlarge", "2.28.1", simple_wheel("vllm-neuron", "0.4.1"), []),  # the NxD Inference plugin: Trn1 too
    ("trn1.32xlarge", "2.31.1", simple_wheel("neuronx-distributed-inference", "0.10.18399"),
     [("ND-SUP-002", "warning", "nxd-inference-trn2-and-newer")]),
    ("trn2.48xlarge", "2.31.1", simple_wheel("neuronx-distributed-inference", "0.10.18399"), []),
    ("trn1.32xlarge", "2.28.1", simple_wheel("neuronx-distributed-inference", "0.8.16251"), []),  # before 2.29
])
def test_a_line_on_a_family_it_is_not_for(tmp_path: Path, venvs: VenvFactory, instance_type: str, release: str,
                                          extra: WheelSpec, expected: list[tuple[str, str, str]]) -> None:
    _, report = _check(tmp_path, venvs, instance_type, release, [*stack_wheels(HEALTHY_STACKS[release]), extra])
    assert _sup(report) == expected


def test_nxd_inference_on_trn1_after_2_28_is_degraded_with_the_pages_way_forward(tmp_path: Path,
                                                                                  venvs: VenvFactory) -> None:
    stack = [*stack_wheels(HEALTHY_STACKS["2.31.1"]), simple_wheel("neuronx-distributed-inference", "0.10.18399")]
    venv, report = _check(tmp_path, venvs, "trn1.32xlarge", "2.31.1", stack)
    (finding,) = findings_by_id(report)["ND-SUP-002"]
    assert finding["title"] == (f"{venv}: neuronx-distributed-inference 0.10.18399 is supported from Neuron 2.29.0 "
                                "on trn2, trn3 only, not on this trn1.32xlarge")
    assert finding["fix"] == [
        "# the way forward: 'an environment of Neuron 2.28.1, the last release whose NxD Inference supports Trn1 and "
        "Inf2' (https://awsdocs-neuron.readthedocs-hosted.com/en/v2.29.1/_sources/release-notes/components/"
        "nxd-inference.rst)"]
    assert report["health"]["state"] in ("degraded", "unhealthy")


def test_nxd_inference_in_an_image_venv_found_on_trn1_is_an_info(tmp_path: Path, venvs: VenvFactory) -> None:
    """The multi-framework DLAMI ships `aws_neuronx_venv_pytorch_2_9_nxd_inference` on every family (dlami/index.rst):
    found there on a trn1 and not named, NxD Inference's Trn2-only support is news (an info) and the host stays ok;
    named with --venv it is the warning above."""
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn1.32xlarge", release="2.31.1"))
    interpreter = install_image_interpreter(root, "3.11")
    placed = venvs.create("aws_neuronx_venv_pytorch_2_9_nxd_inference", parent=root / "opt")
    venvs.install(placed, [*stack_wheels(HEALTHY_STACKS["2.31.1"]),
                           simple_wheel("neuronx-distributed-inference", "0.10.18399")])
    write_pip_conf(placed)
    repoint_to_image_interpreter(placed, interpreter)
    code, report, _ = check_json(["--root", str(root)])
    assert [(item["id"], item["severity"]) for item in report["findings"] if item["id"] == "ND-SUP-002"] == [
        ("ND-SUP-002", "info")]
    assert code == 0 and report["health"]["state"] == "ok"
    _, named, _ = check_json(["--root", str(root), "--venv", str(placed)])
    assert [item["severity"] for item in findings_by_id(named)["ND-SUP-002"]] == ["warning"]


def test_vllm_neuron_of_the_release_data_on_trn1_is_nd_inst_001_alone(tmp_path: Path, venvs: VenvFactory) -> None:
    """vLLM Neuron 0.24.0.1.1.0, which the release data lists for trn2/trn3, on a trn1: ND-INST-001 judges it, as an
    error, the same severity ND-SUP-002 gives 2.33's 0.29.0.1.x line the data does not list."""
    stack = [*stack_wheels(HEALTHY_STACKS["2.32.0"]), simple_wheel("vllm-neuron", "0.24.0.1.1.0")]
    _, report = _check(tmp_path, venvs, "trn1.32xlarge", "2.32.0", stack)
    assert _sup(report) == []
    assert [item["severity"] for item in findings_by_id(report)["ND-INST-001"]
            if item["evidence"]["package"] == "vllm-neuron"] == ["error"]


def test_torchneuron_on_trn1_is_left_to_nd_inst_001(tmp_path: Path, venvs: VenvFactory) -> None:
    """TorchNeuron's Trn2/Trn3-only rule is in the data with its page and covered by ND-INST-001, which says it."""
    wheels = [simple_wheel("torch-neuronx", "2.14.3.0.1024", ("torch==2.14.*", "neuronx-cc>=2", "nki")),
              simple_wheel("neuronx-cc", "2.28.7631.0"), simple_wheel("nki", "0.7.0"),
              simple_wheel("torch", "2.14.0")]
    _, report = _check(tmp_path, venvs, "trn1.32xlarge", "2.33.0", wheels)
    assert _sup(report) == []
    assert any(item["evidence"]["package"] == "torch-neuronx" for item in findings_by_id(report)["ND-INST-001"])


def test_manifests_status_names_the_rules_and_what_is_not_published() -> None:
    done = run_cli(["manifests", "status", "--json"])
    document = json.loads(done.stdout)
    assert {"jax-2.34", "vllm-neuron-trn2-trn3"} <= {item["id"] for item in document["support_rules"]}
    assert "the numpy bounds of each neuronx-cc line" in [item["what"] for item in document["not_published"]]
    text = run_cli(["manifests", "status", "-v"]).stdout
    assert "not published, so never judged: the numpy bounds of each neuronx-cc line;" in text


# --- ranges added from the component notes: JAX in 2.30.0, vLLM beside vLLM Neuron 0.21 (2.31) ----------------------

def _jax_2_30_wheels(jax: str) -> list[WheelSpec]:
    """Release 2.30.0's JAX line as its release content lists it: jax_neuronx 0.10.0.1.0.9913, libneuronxla
    3.0.2891.0 (the 3.* line JAX needs), neuronx-cc 2.25.3371.0; with JAX `jax` and its jaxlib."""
    return [simple_wheel("jax-neuronx", "0.10.0.1.0.9913", ("libneuronxla>=3.0", "neuronx-cc>=2.25")),
            simple_wheel("libneuronxla", "3.0.2891.0"), simple_wheel("neuronx-cc", "2.25.3371.0"),
            simple_wheel("jax", jax, (f"jaxlib<={jax},>={jax}",)), simple_wheel("jaxlib", jax)]


@pytest.mark.parametrize(("jax", "expected"), [
    ("0.9.0", []),  # the JAX the 2.30 announcement and image name
    ("0.8.2", []),  # the other version the 2.30.0 notes introduce
    ("0.10.0", []),  # above what the notes name: their top is not published, so not judged
    ("0.7.0", [("ND-EOS-001", "jax-0.7")]),  # its own end (2.30) speaks, not the range
    ("0.6.2", [("ND-SUP-001", "warning", "jax-2.30")]),
])
def test_jax_on_a_2_30_0_trn1_against_its_notes(tmp_path: Path, venvs: VenvFactory, jax: str,
                                                expected: list[tuple[str, ...]]) -> None:
    _, report = _check(tmp_path, venvs, "trn1.32xlarge", "2.30.0", _jax_2_30_wheels(jax))
    eos = [(item["id"], item["evidence"]["announcement"]) for item in report["findings"]
           if item["id"].startswith("ND-EOS")]
    assert _sup(report) + eos == expected


@pytest.mark.parametrize(("vllm", "expected"), [
    ("0.21.0", []),  # "supports vLLM version 0.21.0" (the 2.31.0 component index)
    ("0.20.1", [("ND-SUP-001", "warning", "vllm-neuron-2.31")]),
])
def test_vllm_beside_2_31s_vllm_neuron(tmp_path: Path, venvs: VenvFactory, vllm: str,
                                       expected: list[tuple[str, str, str]]) -> None:
    _, report = _check(tmp_path, venvs, "trn2.48xlarge", "2.31.1", [
        *stack_wheels(HEALTHY_STACKS["2.31.1"]), simple_wheel("vllm-neuron", "0.21.0.1.0.0"),
        simple_wheel("vllm", vllm)])
    assert _sup(report) == expected
