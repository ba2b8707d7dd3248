"""Rules judged on facts built in memory: no disk, no venv (docs/contracts.md §2)."""

from __future__ import annotations

from typing import Optional

from neurondoctor.facts import Facts, HostFacts
from neurondoctor.facts.python_env import (
    SITE_ROLE_VENV,
    Distribution,
    PipConfigSource,
    PythonEnvironment,
    SiteDir,
    TorchBuild,
)
from neurondoctor.release_data.catalog import ReleaseCatalog
from neurondoctor.rules.context import RuleContext
from neurondoctor.rules.finding import Finding
from neurondoctor.rules.registry import CHECKS

REPO_URL = "https://pip.repos.neuron.amazonaws.com"


def dist(name: str, version: str, placeholder: bool = False) -> Distribution:
    return Distribution(name=name, display_name=name, version=version, location="/v/site",
                        metadata_dir=f"/v/site/{name}-{version}.dist-info", installer="pip", placeholder=placeholder)


def environment(*dists: Distribution, python: str = "3.11.7", torch_version: Optional[str] = None,
                index_url: Optional[str] = None) -> PythonEnvironment:
    build = TorchBuild(path="/v/site/torch/version.py", version=torch_version) if torch_version else None
    config = PipConfigSource(origin="/v/pip.conf", index_url=index_url,
                             extra_index_urls=[] if index_url else [REPO_URL])
    return PythonEnvironment(path="/v", mode="static", interpreter="/v/bin/python", python_version=python,
                             site_dirs=[SiteDir("/v/site", SITE_ROLE_VENV, distributions=list(dists),
                                                torch_build=build)],
                             pip_config=[config])


def findings(catalog: ReleaseCatalog, env: PythonEnvironment, instance: Optional[str] = None,
             target: Optional[str] = None) -> dict[str, list[Finding]]:
    ctx = RuleContext(Facts(HostFacts(root="/", instance_type=instance), [env]), catalog, target_release=target)
    found: dict[str, list[Finding]] = {}
    for check in CHECKS:
        for rule in check.rules:
            for finding in rule(ctx):
                found.setdefault(finding.id, []).append(finding)
    return found


def test_native_stack_is_judged_by_its_own_pin(catalog: ReleaseCatalog) -> None:
    lite = dist("libtorch-neuronx-lite", "2.11.0.1.0.1284")
    healthy = environment(lite, dist("neuronx-cc", "2.27.5334.0"), dist("torch", "2.11.0"),
                          torch_version="2.11.0+cpu")
    assert findings(catalog, healthy, instance="trn2.48xlarge") == {}
    stray = environment(lite, dist("neuronx-cc", "2.27.5334.0"), dist("torch", "2.9.0"), torch_version="2.9.0+cpu")
    found = findings(catalog, stray, instance="trn2.48xlarge")
    assert list(found) == ["ND-TORCH-001"]
    assert found["ND-TORCH-001"][0].fix_lines == [  # the CPU build: the native stack needs no CUDA either
        "/v/bin/python -m pip install --force-reinstall --no-deps 'torch==2.11.0+cpu' --index-url "
        "https://download.pytorch.org/whl/cpu"]


def test_native_stack_on_trn1_is_instance_unsupported(catalog: ReleaseCatalog) -> None:
    env = environment(dist("libtorch-neuronx-lite", "2.11.0.1.0.1284"), dist("torch", "2.11.0"),
                      torch_version="2.11.0+cpu")
    found = findings(catalog, env, instance="trn1.32xlarge")
    assert list(found) == ["ND-INST-001"]
    assert findings(catalog, env, instance=None) == {}


def test_placeholder_found_by_its_code_not_its_version(catalog: ReleaseCatalog) -> None:
    env = environment(dist("libneuronxla", "1.0", placeholder=True), dist("neuronx-cc", "2.26.6360.0"))
    found = findings(catalog, env)
    assert "ND-PIP-001" in found and "ND-REL-002" not in found


def test_neuron_repository_as_the_only_index(catalog: ReleaseCatalog) -> None:
    env = environment(dist("neuronx-cc", "2.26.6360.0"), index_url=REPO_URL + "/")
    found = findings(catalog, env)
    assert list(found) == ["ND-PIP-003"]
    assert found["ND-PIP-003"][0].fix_lines == [
        f"sed -i 's#^index-url *= *{REPO_URL}.*#extra-index-url = {REPO_URL}#' /v/pip.conf"]


def test_target_release_flags_every_package_outside_it(catalog: ReleaseCatalog) -> None:
    env = environment(dist("torch-neuronx", "2.9.0.2.14.27725"), dist("neuronx-cc", "2.25.3371.0"),
                      dist("torch", "2.9.0"), dist("torch-xla", "2.9.0"), dist("nki", "0.4.0"),
                      torch_version="2.9.0+cpu")
    assert findings(catalog, env) == {}
    found = findings(catalog, env, target="2.31.1")
    assert {f.evidence["package"] for f in found["ND-PIN-001"]} == {"torch-neuronx", "neuronx-cc"}
    assert [f.evidence["package"] for f in found["ND-REL-001"]] == ["nki"]
    assert found["ND-REL-001"][0].fix_lines == [
        f"/v/bin/python -m pip install 'nki==0.5.0' --extra-index-url {REPO_URL}"]


def test_python_unsupported_by_one_package_only(catalog: ReleaseCatalog) -> None:
    # 2.28.1: torch-neuronx 2.7 has no Python 3.12 wheels while 2.8/2.9 do (n2-manifest; docs/neuron-facts.md §3.3).
    env = environment(dist("torch-neuronx", "2.7.0.2.12.22436"), dist("neuronx-cc", "2.23.6484.0"),
                      dist("torch", "2.7.0"), dist("torch-xla", "2.7.0"), python="3.12.1", torch_version="2.7.0+cpu")
    found = findings(catalog, env)
    assert list(found) == ["ND-PY-001"]
    assert "torch-neuronx support 3.10, 3.11" in found["ND-PY-001"][0].title


def test_two_torch_records_in_one_directory(catalog: ReleaseCatalog) -> None:
    env = environment(dist("torch-neuronx", "2.9.0.2.15.32035"), dist("neuronx-cc", "2.26.6360.0"),
                      dist("torch", "2.9.0"), dist("torch", "2.10.0"), dist("torch-xla", "2.9.0"),
                      torch_version="2.9.0+cpu")
    found = findings(catalog, env)
    assert list(found) == ["ND-TORCH-004"]
    assert found["ND-TORCH-004"][0].fix_lines[0] == "rm -rf /v/site/torch-2.10.0.dist-info"


def test_compile_cache_space_and_memlock(catalog: ReleaseCatalog) -> None:
    from neurondoctor.facts.host import CompileCache, HostSnapshot, PciFunction

    snapshot = HostSnapshot(pci=[PciFunction("0000:10:1e.0", "0x7164", "trn1")], efa_present=True,
                            memlock_limit=64 * 1024,
                            compile_cache=CompileCache("/var/tmp/neuron-compile-cache", "default",
                                                       free_bytes=1 << 30, total_bytes=100 << 30))
    ctx = RuleContext(Facts(HostFacts(root="/", instance_type="trn1.32xlarge", snapshot=snapshot), []), catalog)
    from neurondoctor.rules.host_stack.resources import compile_cache_space, memlock_limit

    cache = compile_cache_space(ctx)[0]
    assert (cache.id, cache.severity) == ("ND-RES-001", "error") and "1.0 GiB free" in cache.title
    memlock = memlock_limit(ctx)[0]
    assert (memlock.id, memlock.category) == ("ND-RES-003", "resource")
    assert [line for line in cache.fix_lines if line.startswith("rm")] == []  # not counted: nothing named to delete
    snapshot.compile_cache.free_bytes = 50 << 30
    snapshot.memlock_limit = -1  # RLIM_INFINITY
    assert compile_cache_space(ctx) == [] and memlock_limit(ctx) == []


def test_low_cache_disk_names_only_the_folders_of_compilers_installed_nowhere(catalog: ReleaseCatalog) -> None:
    """ND-RES-001's delete lines: each folder of a compiler no environment has, named (a `neuronxcc-*` glob would
    take the installed compiler's graphs too, and the next start would compile everything again)."""
    from neurondoctor.facts.cache_index import CacheIndex, CompilerCache
    from neurondoctor.facts.host import CompileCache, HostSnapshot, PciFunction
    from neurondoctor.rules.host_stack.resources import compile_cache_space

    index = CacheIndex("/var/tmp/neuron-compile-cache", exists=True, compilers=[
        CompilerCache("neuronxcc-2.15.141.0+d3cfc8ca", "2.15.141.0", entries=1200),
        CompilerCache("neuronxcc-2.26.6360.0+bd4c5f4b", "2.26.6360.0", entries=40)])
    snapshot = HostSnapshot(pci=[PciFunction("0000:10:1e.0", "0x7164", "trn1")], efa_present=True,
                            compile_cache=CompileCache("/var/tmp/neuron-compile-cache", "default", free_bytes=1 << 30,
                                                       total_bytes=100 << 30, index=index))
    env = environment(dist("neuronx-cc", "2.26.6360.0+bd4c5f4b"), dist("torch-neuronx", "2.9.0.2.15.32035"))
    ctx = RuleContext(Facts(HostFacts(root="/", instance_type="trn1.32xlarge", snapshot=snapshot), [env]), catalog)
    (finding,) = compile_cache_space(ctx)
    assert [line for line in finding.fix_lines if line.startswith("rm")] == [
        "rm -rf /var/tmp/neuron-compile-cache/neuronxcc-2.15.141.0+d3cfc8ca  # 1,200 entries of neuronx-cc 2.15.141.0, "
        "installed nowhere here"]


def test_command_lines_in_reports_are_redacted() -> None:
    from neurondoctor.redaction import redact_secrets

    line = ("python train.py --hf-token hf_abcdef --password=hunter2 HF_TOKEN=hf_xyz AKIAABCDEFGHIJKLMNOP "
            "--index-url https://user:pw@mirror.example/simple --epochs 3")
    redacted = redact_secrets(line)
    for secret in ("hf_abcdef", "hunter2", "hf_xyz", "AKIAABCDEFGHIJKLMNOP", "user:pw"):
        assert secret not in redacted
    assert "--epochs 3" in redacted and "train.py" in redacted


def test_device_permission_names_the_user_and_groups_who_run(catalog: ReleaseCatalog) -> None:
    from neurondoctor.facts.host import DeviceNode, HostSnapshot
    from neurondoctor.rules.host_stack.devices import device_permission

    node = DeviceNode("/dev/neuron0", True, 0o020660, 0, 990)
    snapshot = HostSnapshot(device_nodes=[node], uid=1000, groups=[1000, 27], user_name="ubuntu",
                            group_names=["ubuntu", "sudo"])
    ctx = RuleContext(Facts(HostFacts(root="/", instance_type="trn1.2xlarge", snapshot=snapshot), []), catalog)
    finding = device_permission(ctx)[0]
    assert finding.severity == "error"
    assert "ubuntu (uid 1000; groups ubuntu, sudo)" in finding.title and "/dev/neuron0 (0660 0:990)" in finding.title
    snapshot.groups.append(990)  # in the nodes' group: 0660 is enough
    assert device_permission(ctx) == []


def test_a_real_vllm_neuron_environment_of_neuron_2_32_is_healthy(catalog: ReleaseCatalog) -> None:
    """The Python environment of a public environment report (2026-10-10; tests/recorded/neuron-ls/SOURCES.md): a
    conda Python 3.13 on a trn2.48xlarge running vLLM Neuron with the native stack, the Neuron and torch lines of
    its `pip list` as printed (build tags included). Neuron 2.32.0 with its vLLM Neuron Beta packages, and nothing to
    fix: torch-xla 2.11.0 beside libtorch-neuronx-lite is that release's pair, not a mix."""
    env = environment(
        dist("huggingface-hub", "1.27.0"), dist("libtorch-neuronx-lite", "2.11.0.1.0.1284+f49d8626"),
        dist("neuron-agentic-development", "1.3"), dist("neuronx-cc", "2.27.5334.0+f702b353"),
        dist("nki", "0.6.0+31049202112.g85070674"), dist("opencv-python", "5.0.0.93"), dist("torch", "2.11.0"),
        dist("torch-c-dlpack-ext", "0.1.5"), dist("torch-model-archiver", "0.11.0"), dist("torch-xla", "2.11.0"),
        dist("torchaudio", "2.11.0"), dist("torchserve", "0.11.0"), dist("torchvision", "0.26.0"),
        dist("transformers", "5.15.0"), dist("vllm", "0.24.0"), dist("vllm-neuron", "0.24.0.1.1.0"),
        python="3.13.7", torch_version="2.11.0")
    assert findings(catalog, env, instance="trn2.48xlarge") == {}
    ctx = RuleContext(Facts(HostFacts(root="/", instance_type="trn2.48xlarge"), [env]), catalog)
    assert ctx.release_of(env).release == "2.32.0"


def test_a_real_hf_dlami_environment_of_neuron_2_18_has_only_its_cuda_torch_to_say(catalog: ReleaseCatalog) -> None:
    """huggingface/optimum-neuron#617: the HF DLAMI of 2024-05-31 (Neuron 2.18.0) on inf2, its `optimum-cli env`
    as posted. torch 2.1.2+cu121 comes from PyTorch's CUDA index, its CUDA libraries inside the wheel (no nvidia-*
    package): the one finding says so, without calling it PyPI's, and nothing of the stack is mismatched."""
    env = environment(
        dist("torch", "2.1.2+cu121"), dist("aws-neuronx-runtime-discovery", "2.9"), dist("libneuronxla", "2.0.965"),
        dist("neuronx-cc", "2.13.66.0+6dfecc895"), dist("neuronx-distributed", "0.7.0"),
        dist("torch-neuronx", "2.1.2.2.1.0"), dist("torch-xla", "2.1.2"), dist("transformers-neuronx", "0.10.0.21"),
        dist("optimum-neuron", "0.0.22"), dist("optimum", "1.18.1"), dist("transformers", "4.36.2"),
        dist("huggingface-hub", "0.23.2"), python="3.8.10", torch_version="2.1.2+cu121")
    found = findings(catalog, env, instance="inf2.xlarge")
    assert list(found) == ["ND-TORCH-002"], found
    [cuda] = found["ND-TORCH-002"]
    assert cuda.severity == "warning"
    assert cuda.title == ("torch 2.1.2+cu121 is a CUDA build (its CUDA libraries inside the wheel) in a Neuron "
                          "environment")
    assert "PyPI" not in cuda.title

