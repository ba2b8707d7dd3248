"""Every finding id and how its fix is proven: executed in user space by a named test, run in the
host simulator by a named case (an id whose fix has both kinds of way out is in both), or advice only.
tests/fixes/test_fix_kinds.py fails when a declared id is missing here or a named test or case does not exist; a
full test run fails when a check printed a user-space fix line (pip, uv, pip config, a variable, venv create) for
an id not in EXECUTED (tests/conftest.py)."""

from __future__ import annotations

EXECUTED = {  # id -> the test that runs its printed fix lines and checks again
    "ND-REQ-003": "tests/test_requirements.py::test_what_optimum_neuron_0_0_19_needs_and_does_not_declare",
    "ND-PIP-001": "tests/fixes/test_plan_fixes.py::test_user_site_placeholders_each_fix_alone_then_clean",
    "ND-PIP-002": "tests/fixes/test_pip_config_fixes.py::test_the_neuron_index_fix_keeps_the_users_two_indexes",
    "ND-TORCH-001": "tests/fixes/test_torch_fixes.py::test_cuda_torch_over_torch_neuronx_becomes_the_pinned_cpu_torch",
    "ND-TORCH-005": "tests/test_torch_companions.py::test_a_torchvision_for_another_torch_x_y",
    "ND-TORCH-006": "tests/test_torch_companions.py::test_a_cuda_torchvision_beside_a_cpu_torch",
    "ND-REQ-001": "tests/test_requirements.py::test_a_transformers_downgrade_under_optimum_neuron",
    "ND-FW-001": "tests/test_venv_create.py::"
                 "test_a_cuda_torch_venv_on_a_neuron_host_gets_the_command_that_builds_the_neuron_one",
    "ND-FW-002": "tests/test_framework_missing.py::test_optimum_neuron_from_pypi_without_its_neuronx_extra",
    "ND-PY-002": "tests/test_venv_create.py::test_an_empty_venv_on_a_python_the_release_has_no_wheels_for",
    "ND-TORCH-002": "tests/fixes/test_torch_fixes.py::test_the_right_torch_as_pypis_cuda_build",
    "ND-TORCH-003": "tests/fixes/test_torch_fixes.py::test_a_torch_xla_of_another_release",
    "ND-TORCH-004": "tests/fixes/test_torch_fixes.py::test_two_torch_records_in_one_site",
    "ND-PIN-001": "tests/fixes/test_torch_fixes.py::test_a_libneuronxla_from_another_release",
    "ND-PIN-003": "tests/fixes/test_torch_fixes.py::test_torch_neuronx_without_torch_and_torch_xla",
    "ND-SHADOW-001": "tests/fixes/test_environment_fixes.py::test_a_torch_copy_in_the_user_site",
    "ND-INST-001": "tests/fixes/test_environment_fixes.py::test_torch_neuron_beside_torch_neuronx_on_trn1",
    "ND-PIP-003": "tests/fixes/test_environment_fixes.py::test_the_neuron_repository_as_the_only_index",
    "ND-VENV-001": "tests/fixes/test_environment_fixes.py::test_a_venv_whose_base_interpreter_was_removed",
    "ND-REL-002": "tests/fixes/test_release_data_fixes.py::test_a_compiler_hotfix_the_release_data_lacks",
    "ND-REL-005": "tests/fixes/test_release_data_fixes.py::test_a_component_newer_than_every_release",
    "ND-REL-006": "tests/fixes/test_release_data_fixes.py::test_a_host_of_the_release_known_in_part",
    "ND-PIN-002": "tests/fixes/test_package_fixes.py::test_jax_beside_torch_xla",
    "ND-REQ-002": "tests/fixes/test_package_fixes.py::test_an_unmet_requirement_of_a_web_framework",
    "ND-REL-001": "tests/fixes/test_package_fixes.py::test_nki_from_another_release",
    "ND-VENV-003": "tests/fixes/test_package_fixes.py::test_damaged_metadata_is_reinstalled",
    "ND-VENV-004": "tests/fixes/test_package_fixes.py::test_a_record_that_is_not_valid_metadata_is_moved_aside",
    "ND-VENV-005": "tests/fixes/test_package_fixes.py::test_a_venv_an_os_upgrade_left_on_another_python",
    "ND-SHADOW-002": "tests/fixes/test_package_fixes.py::test_two_records_of_one_package",
    "ND-PY-001": "tests/test_venv_create.py::test_a_neuron_venv_on_a_python_its_release_dropped",
    "ND-PIN-004": "tests/test_venv_create.py::test_check_reports_a_broken_guard",
    "ND-REL-004": "tests/test_venv_create.py::test_a_venv_older_than_its_host_is_rebuilt_for_the_hosts_release",
    "ND-RT-002": "tests/test_venv_create.py::test_a_compiler_newer_than_the_host_runtime_without_touching_the_host",
    "ND-PIP-004": "tests/test_venv_create.py::test_check_reports_a_broken_guard",
    **{f"ND-ENV-00{number}": "tests/fixes/test_env_var_fixes.py::test_the_env_var_fix_in_the_users_shell"
       for number in range(1, 7)},
    **{f"ND-CACHE-00{number}": "tests/fixes/test_cache_fixes.py::test_the_prune_line_moves_the_plant_and_keeps_the_rest"
       for number in range(1, 4)},
    "ND-CACHE-004": "tests/fixes/test_cache_fixes.py::test_a_cache_another_user_made_gets_a_cache_of_ones_own",
    "ND-EOS-001": "tests/test_venv_create.py::"
                  "test_a_pytorch_2_6_environment_after_its_end_is_rebuilt_for_the_hosts_release",
    "ND-EOS-002": "tests/test_end_of_support.py::test_the_printed_torchneuron_environment_is_built_and_checks_clean",
    "ND-SUP-001": "tests/fixes/test_support_fixes.py::test_a_jax_above_the_releases_range_is_pinned_back",
    "ND-SUP-002": "tests/fixes/test_support_fixes.py::test_vllm_neuron_on_trn1_is_removed",
}

HOST_SIMULATED = {  # id -> the case of tests/fixes/test_host_fixes.py that runs its lines in the host simulator
    "ND-DRV-001": "driver-missing-apt", "ND-DRV-002": "driver-not-loaded", "ND-DRV-003": "driver-stale",
    "ND-DRV-004": "dkms-in-an-image", "ND-DKMS-001": "module-not-built", "ND-DKMS-002": "headers-missing",
    "ND-DKMS-003": "kernel-too-new", "ND-DKMS-004": "legacy-dkms", "ND-RT-001": "runtime-newer-than-driver",
    "ND-RT-002": "compiler-newer-than-runtime", "ND-RT-003": "runtime-missing", "ND-RT-004": "legacy-runtime-1x",
    "ND-RT-005": "legacy-tools", "ND-DEV-002": "device-permission", "ND-DEV-003": "cores-busy",
    "ND-DEV-004": "not-a-device", "ND-RES-003": "memlock-limit", "ND-OS-003": "tools-need-a-newer-glibc",
    "ND-INST-002": "driver-too-new-for-inf1", "ND-INST-003": "trn-runtime-on-inf1",
    "ND-REL-003": "host-packages-mixed", "ND-REL-004": "venv-newer-than-host", "ND-RT-006": "runtime-fix-2.33.1",
}

_ODD_NODE = ("the fix is made on the odd node (its packages, TaskProlog or profile): the line runs that node's own "
             "check, whose fix lines are proven under their own ids")
ADVICE_ONLY = {  # id -> why no command can be run for it
    **{f"ND-FLEET-{number:03d}": _ODD_NODE for number in (1, 2, 3, 4, 5, 7, 8, 9, 10, 11)},
    "ND-FLEET-006": "the root communicator's address is chosen in the job script, for the node that runs rank 0",
    "ND-PERF-001": "a measurement, not a problem: nothing to run",
    "ND-REQ-004": "evidence of the release an add-on's extra targets: the user may keep their versions; the detail "
                  "names the install that brings the extra's back",
    "ND-PERF-002": "a core that stays slow is reported to AWS (`neurondoctor bundle`); the instance is replaced",
    "ND-PERF-003": "the failure's message names the cause (`neurondoctor explain` reads it); no line fixes a device",
    **{f"ND-FLEET-{number:03d}": "a device or EFA path that fails or is slow is repaired (or the instance replaced) "
                                 "by its operator; the line runs the node's own check" for number in (12, 13, 14)},
    "ND-CACHE-005": "the compiler flags are the user's choice: keep them (one compile) or set back the cached ones",
    "ND-CACHE-006": "an operator's choice: name the cache in health.conf or give the way to it to root",
    "ND-CACHE-007": "a shared cache is the operator's choice: nothing to repair",
    "ND-CACHE-008": "a writable /tmp is given by the host's or the container's mounts (a tmpfs, a pod's emptyDir)",
    "ND-RES-005": "remounting without noexec is root's (fstab, the pod's volume), or the environment is made again "
                  "elsewhere",
    "ND-HW-001": "uncorrectable memory errors: the instance is stopped and started (or replaced) by its operator",
    "ND-HW-002": "a NEURON_HW_ERR in the kernel log: the instance is stopped and started (or replaced) by its operator",
    "ND-DEV-005": "devices missing from the instance: a reboot, then a stop and start (or replacement) by its operator",
    "ND-RES-002": "EFA interfaces are attached when the instance is launched",
    "ND-RES-004": "EFA interfaces are attached when the instance is launched",
    "ND-OS-001": "moving to another OS release is a rebuild, not a command",
    "ND-SUP-003": "the container is started from another image (the `docker run` line, the pod or task definition) "
                  "on the host, not changed from inside this one",
    "ND-DRV-005": "a container node gets a newer driver with its image's next release (a node group update), not "
                  "a command on the node",
    "ND-DRV-006": "a container node gets a newer driver with its image's next release (a node group update), not "
                  "a command on the node",
    "ND-OS-004": "moving the framework to an OS its matrix supports is a rebuild, not a command",
    "ND-OP-001": "a code rewrite of the user's model",
    "ND-OP-002": "a code rewrite of the user's model",
    "ND-OP-003": "a code change at the named line of the user's model (keep the value a tensor, or move the branch "
                 "out of the step)",
    "ND-SHAPE-001": "padding to bucket lengths is a change to the user's data pipeline and tracing",
    "ND-CAN-001": "a compiler failure of the canary: the explanation names the way out",
    "ND-CAN-002": "a runtime failure of the canary: the explanation names the way out",
    "ND-CAN-003": "a wrong canary result: reported to AWS with the bundle",
    "ND-DEV-001": "the container's launch options (`docker run --device`, the pod's resource limits) give it devices",
    "ND-RES-001": "freeing disk: the lines list the cache and remove the folders of compilers installed nowhere "
                  "(tests/test_rules_in_memory.py names them), but free space cannot be faked on a fixture root to "
                  "show the finding gone",
    "ND-OS-002": "booting another kernel (`amazon-linux-extras install kernel-5.10`, then a reboot)",
    "ND-VENV-002": "its line runs the interpreter to show its own error; what broke it (a missing libpython, "
                   "another architecture) is repaired outside the environment",
}
