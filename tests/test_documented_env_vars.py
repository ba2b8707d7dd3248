"""Environment variables judged from manifests/env-vars.json: a retired variable still set (ND-ENV-005), a value
its page does not allow (ND-ENV-006), and the logical-core rules reading their values and families from the data.
Each failure is built from an AWS page or a real report, with the near miss beside it that must stay clean."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from neurondoctor.actions.check.check_run import CheckOptions, run_check
from neurondoctor.release_data.catalog import ReleaseCatalog
from tests.host_fixture import HostSpec, build_host


def env_findings(catalog: ReleaseCatalog, tmp_path: Path, environ: dict[str, str], name: str = "host",
                 **fields: Any) -> dict[str, Any]:
    root = build_host(tmp_path / name, HostSpec(**fields))
    report = run_check(CheckOptions(root=str(root), environ=environ, select=["host-env"]), catalog=catalog)
    return {finding.id: finding for finding in report.findings}


def test_neuroncore_group_sizes_is_ignored_since_neuron_1_20(catalog: ReleaseCatalog, tmp_path: Path) -> None:
    """A torch-neuron data-parallel script set NEURONCORE_GROUP_SIZES to 64 groups of one on an inf1.24xlarge
    (aws-neuron/aws-neuron-sdk issues: `os.environ['NEURONCORE_GROUP_SIZES'] = ','.join(['1'] * 64)`); from Neuron
    SDK 1.20.0 setting it no longer affects the application (announcements/neuron1.x/eol-ncgs-env_2.rst). Its
    replacements, NEURON_RT_VISIBLE_CORES or NEURON_RT_NUM_CORES, are what Triton's Inferentia backend moved to."""
    finding = env_findings(catalog, tmp_path, {"NEURONCORE_GROUP_SIZES": ",".join(["1"] * 24)},
                           instance_type="inf2.48xlarge")["ND-ENV-005"]
    assert (finding.category, finding.severity) == ("env-var-misconfig", "warning")
    assert finding.title == "NEURONCORE_GROUP_SIZES is set: ignored since Neuron 1.20.0 (this host runs 2.31.1)"
    assert "NEURON_RT_VISIBLE_CORES" in finding.detail and "eol-ncgs-env_2.rst" in finding.detail
    assert finding.evidence["replaced_by"] == ["NEURON_RT_VISIBLE_CORES", "NEURON_RT_NUM_CORES"]
    # a group layout has no one-variable equivalent: the fix only removes what is ignored
    assert finding.fix_lines == ["unset NEURONCORE_GROUP_SIZES"]
    replaced = env_findings(catalog, tmp_path, {"NEURON_RT_VISIBLE_CORES": "0-23"}, "replaced",
                            instance_type="inf2.48xlarge")
    assert replaced == {}


def test_implicit_async_mode_is_judged_against_the_hosts_release(catalog: ReleaseCatalog, tmp_path: Path) -> None:
    """NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS no longer enables asynchronous execution from Neuron 2.32.0 and
    only warns (release-notes/components/runtime.rst): ignored on a 2.32.0 host, still read on a 2.31.1 one, where
    unsetting it would change what runs, so that info prints no line."""
    ignored = env_findings(catalog, tmp_path, {"NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS": "3"}, release="2.32.0")
    finding = ignored["ND-ENV-005"]
    assert (finding.severity, finding.fix_lines) == ("warning", ["unset NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS"])
    assert "explicit Neuron Runtime async APIs" in finding.detail
    still_read = env_findings(catalog, tmp_path, {"NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS": "3"}, "older",
                              release="2.31.1")["ND-ENV-005"]
    assert (still_read.severity, still_read.fix_lines) == ("info", [])
    assert "still read by this host's Neuron 2.31.1, ignored from 2.32.0" in still_read.title


def test_a_retired_variable_on_a_host_of_no_known_release_is_an_info(catalog: ReleaseCatalog,
                                                                      tmp_path: Path) -> None:
    """Without the host's release, whether its runtime still reads the variable is not known: an info, no line."""
    finding = env_findings(catalog, tmp_path, {"NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS": "3"},
                           release=None)["ND-ENV-005"]
    assert (finding.severity, finding.fix_lines) == ("info", [])
    assert "is not known" in finding.title


def test_deprecated_but_honoured_variables_are_infos(catalog: ReleaseCatalog, tmp_path: Path) -> None:
    """XLA_USE_BF16 is deprecated from torch-neuronx 2.5 but still casts to BF16 with a warning
    (release-notes/components/pytorch.rst): unsetting it would change the training, so no line is printed and the
    detail names the code change. BUCKET_CAP_MB has a direct equivalent, ALLREDUCE_GRADIENTS_BUCKET_SIZE_MB
    (torch-neuron-envvars.rst): its fix carries the value over."""
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn1.32xlarge"))
    report = run_check(CheckOptions(root=str(root), environ={"XLA_USE_BF16": "1", "BUCKET_CAP_MB": "512"},
                                    select=["host-env"]), catalog=catalog)
    assert [(finding.id, finding.severity) for finding in report.findings] == [("ND-ENV-005", "info")] * 2
    bucket, bf16 = report.findings
    assert (bucket.evidence["variable"], bucket.fix_lines) == (
        "BUCKET_CAP_MB", ["export ALLREDUCE_GRADIENTS_BUCKET_SIZE_MB=512", "unset BUCKET_CAP_MB"])
    assert (bf16.evidence["variable"], bf16.fix_lines) == ("XLA_USE_BF16", [])
    assert "model.to(torch.bfloat16)" in bf16.detail
    assert env_findings(catalog, tmp_path, {"ALLREDUCE_GRADIENTS_BUCKET_SIZE_MB": "512"}, "new",
                        instance_type="trn1.32xlarge") == {}


def test_both_the_old_and_the_new_bucket_size_keeps_the_new_one(catalog: ReleaseCatalog, tmp_path: Path) -> None:
    """When the replacement is already set the fix does not overwrite it: it only drops the old name."""
    finding = env_findings(catalog, tmp_path, {"BUCKET_CAP_MB": "512", "ALLREDUCE_GRADIENTS_BUCKET_SIZE_MB": "256"},
                           instance_type="trn1.32xlarge")["ND-ENV-005"]
    assert finding.fix_lines == ["unset BUCKET_CAP_MB"]


@pytest.mark.parametrize(("value", "fix"), [("yes", "export NEURON_RT_VALIDATE_HASH=1"),
                                             ("off", "export NEURON_RT_VALIDATE_HASH=0"),
                                             ("maybe", "unset NEURON_RT_VALIDATE_HASH")])
def test_a_runtime_boolean_given_another_word(catalog: ReleaseCatalog, tmp_path: Path, value: str, fix: str) -> None:
    """The runtime's booleans accept 0, 1, false or true in any case (nrt-env-var-reference.rst); the guide's own
    examples are `NEURON_RT_VALIDATE_HASH=true` and `=TRUE` (configuration-guide.rst). What it does with `yes` is
    not documented: a warning, whose fix writes the switch the user meant."""
    finding = env_findings(catalog, tmp_path, {"NEURON_RT_VALIDATE_HASH": value})["ND-ENV-006"]
    assert (finding.severity, finding.fix_lines) == ("warning", [fix])
    assert finding.title == f"NEURON_RT_VALIDATE_HASH={value!r} is not one of 0, 1, false, true"


@pytest.mark.parametrize("value", ["1", "0", "true", "TRUE", "False"])
def test_documented_boolean_spellings_stay_clean(catalog: ReleaseCatalog, tmp_path: Path, value: str) -> None:
    assert env_findings(catalog, tmp_path, {"NEURON_RT_VALIDATE_HASH": value,
                                            "NEURON_RT_STOCHASTIC_ROUNDING_EN": value}) == {}


def test_an_unknown_numerical_error_level_fails_the_runtime(catalog: ReleaseCatalog, tmp_path: Path) -> None:
    """Any value but none, critical, debug or verbose (case-insensitive) makes nrt_init() fail with NRT_INVALID
    (configuration-guide.rst): an error; `CRITICAL`, the spelling of the 2.25.0 release note in capitals, is fine."""
    finding = env_findings(catalog, tmp_path, {"NEURON_RT_NUMERICAL_ERRORS_VERBOSITY": "nan"})["ND-ENV-006"]
    assert (finding.severity, finding.fix_lines) == ("error", ["unset NEURON_RT_NUMERICAL_ERRORS_VERBOSITY"])
    assert "NRT_INVALID" in finding.detail
    assert env_findings(catalog, tmp_path, {"NEURON_RT_NUMERICAL_ERRORS_VERBOSITY": "CRITICAL"}, "ok") == {}


def test_log_levels_every_documented_spelling(catalog: ReleaseCatalog, tmp_path: Path) -> None:
    """The table says WARNING, the developer guide WARN, the guide's prose QUIET: all stay clean, in any case."""
    for level in ("INFO", "info", "WARN", "WARNING", "QUIET", "TRACE"):
        assert env_findings(catalog, tmp_path, {"NEURON_RT_LOG_LEVEL": level}, level) == {}, level
    finding = env_findings(catalog, tmp_path, {"NEURON_RT_LOG_LEVEL_NRT": "VERBOSE"}, "bad")["ND-ENV-006"]
    assert finding.severity == "warning"


def test_an_execution_timeout_that_is_not_a_number(catalog: ReleaseCatalog, tmp_path: Path) -> None:
    """NEURON_RT_EXEC_TIMEOUT is 0 to INT_MAX seconds (configuration-guide.rst)."""
    finding = env_findings(catalog, tmp_path, {"NEURON_RT_EXEC_TIMEOUT": "30s"})["ND-ENV-006"]
    assert (finding.severity, finding.fix_lines) == ("warning", ["unset NEURON_RT_EXEC_TIMEOUT"])
    assert env_findings(catalog, tmp_path, {"NEURON_RT_EXEC_TIMEOUT": "600"}, "ok") == {}


def test_values_no_page_states_are_never_judged(catalog: ReleaseCatalog, tmp_path: Path) -> None:
    """FI_PROVIDER, NEURON_FRAMEWORK_DEBUG and the log location have no complete list of values in the docs;
    names the data does not list (a NEURON_ variable of the user's own) are nobody's business."""
    environ = {"FI_PROVIDER": "sockets", "NEURON_FRAMEWORK_DEBUG": "yes", "NEURON_RT_LOG_LOCATION": "/tmp/nrt.log",
               "NEURON_RT_ROOT_COMM_ID": "localhost:48620", "NEURON_MY_OWN_SETTING": "whatever",
               "NEURON_RT_INSPECT_DEVICE_PROFILE": "true"}
    assert env_findings(catalog, tmp_path, environ) == {}


def test_visible_cores_count_logical_cores_at_the_lnc_in_effect(catalog: ReleaseCatalog, tmp_path: Path) -> None:
    """A trn2.48xlarge presents 64 NeuronCores at LNC=2, the default, and 128 at LNC=1
    (logical-neuroncore-config.rst): cores 64-127 exist only at LNC=1."""
    default = env_findings(catalog, tmp_path, {"NEURON_RT_VISIBLE_CORES": "64-127"}, instance_type="trn2.48xlarge")
    finding = default["ND-ENV-001"]
    assert finding.severity == "error" and "64 logical (NEURON_LOGICAL_NC_CONFIG=2) NeuronCores" in finding.title
    assert env_findings(catalog, tmp_path, {"NEURON_RT_VISIBLE_CORES": "64-127", "NEURON_LOGICAL_NC_CONFIG": "1"},
                        "lnc1", instance_type="trn2.48xlarge") == {}


def test_logical_core_config_values_and_families_come_from_the_data(catalog: ReleaseCatalog,
                                                                     tmp_path: Path) -> None:
    """LNC can only be 1 or 2, on Trn2 and Trn3 only (logical-neuroncore-config.rst)."""
    wrong = env_findings(catalog, tmp_path, {"NEURON_LOGICAL_NC_CONFIG": "4"}, instance_type="trn2.48xlarge")
    assert wrong["ND-ENV-003"].title == "NEURON_LOGICAL_NC_CONFIG='4': it must be 1 or 2"
    assert env_findings(catalog, tmp_path, {"NEURON_LOGICAL_NC_CONFIG": "1"}, "trn2",
                        instance_type="trn2.48xlarge") == {}
    leftover = env_findings(catalog, tmp_path, {"NEURON_LOGICAL_NC_CONFIG": "2"}, "inf2", instance_type="inf2.xlarge")
    assert leftover["ND-ENV-003"].severity == "warning" and "trn2, trn3 only" in leftover["ND-ENV-003"].detail
