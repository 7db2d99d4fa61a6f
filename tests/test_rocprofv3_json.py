"""rocprofv3 JSON (parsers/rocprofv3_json.py), against the document read here with the json module.

The MI350X file (../shared/fixtures/rocprof/v3_mi350x_rocm_json_results.json.gz): 43,915 kernel
dispatches of a BF16 training run, kernel trace only; counts and intervals are worked here from
the JSON, never through the reader.
"""

from __future__ import annotations

import gzip
import json

import pytest

from rooflint import parsers
from rooflint.core import timeline
from rooflint.core.errors import InputError
from rooflint.core.profile import InputFormat
from rooflint.hardware.identify import identify
from rooflint.parsers import rocprofv3_json
from tests.helpers import plain_union, shared

MI350X = "rocprof/v3_mi350x_rocm_json_results.json.gz"


@pytest.fixture(scope="module")
def document() -> dict:
    with gzip.open(shared(MI350X)) as fh:
        return json.load(fh)["rocprofiler-sdk-tool"][0]


@pytest.fixture(scope="module")
def profile():
    return parsers.read(shared(MI350X))


@pytest.mark.e2e
def test_every_dispatch_is_a_launch(document, profile):
    dispatches = document["buffer_records"]["kernel_dispatch"]
    assert len(dispatches) == 43_915
    assert parsers.detect(shared(MI350X)) is rocprofv3_json.READER
    assert profile.format == InputFormat.ROCPROFV3_JSON
    assert len(profile.launches) == len(dispatches)


@pytest.mark.e2e
def test_the_mi350x_is_identified_from_its_agents(profile):
    """agents: eight GPUs named "AMD Instinct MI350X", gfx950, 256 CUs."""
    launches = profile.launches
    assert set(launches["device_name"]) == {"AMD Instinct MI350X"}
    assert set(launches["arch"]) == {"gfx950"} and profile.device_hints["cu_count"] == 256
    found = identify(launches, profile.device_hints)
    assert (found.device.id, found.provisional) == ("mi350x", False)


@pytest.mark.e2e
def test_rccl_kernels_are_communication(document, profile):
    names = {k["kernel_id"]: k["truncated_kernel_name"] for k in document["kernel_symbols"]}
    dispatches = document["buffer_records"]["kernel_dispatch"]
    rccl = [d for d in dispatches if names[d["dispatch_info"]["kernel_id"]].startswith("nccl")]
    assert len(rccl) == 1_310
    kinds = profile.launches["kind"]
    assert (kinds == timeline.COMMUNICATION).sum() == len(rccl)


@pytest.mark.e2e
def test_busy_time_is_the_union_of_the_dispatches(document, profile):
    """One GPU ran every dispatch (agent 37946, the first GPU agent: device 0)."""
    dispatches = document["buffer_records"]["kernel_dispatch"]
    assert {d["dispatch_info"]["agent_id"]["handle"] for d in dispatches} == {37946}
    (device,) = timeline.build(profile.launches, profile.steps).devices
    spans = [(d["start_timestamp"], d["end_timestamp"]) for d in dispatches]
    assert device.device == 0
    assert device.busy_s == pytest.approx(plain_union(spans) * 1e-9, abs=1e-9)


@pytest.mark.e2e
def test_grid_in_workgroups_as_the_other_readers_print_it(document, profile):
    """HIP's grid_size counts work-items: the first dispatch, 512 work-items in workgroups of
    512, is a grid of one block."""
    first = min(document["buffer_records"]["kernel_dispatch"], key=lambda d: d["start_timestamp"])
    info = first["dispatch_info"]
    assert info["grid_size"]["x"] == info["workgroup_size"]["x"] == 512
    assert profile.launches["grid"].iloc[0] == "(1, 1, 1)"
    assert profile.launches["block"].iloc[0] == "(512, 1, 1)"


def test_a_document_without_dispatches_is_refused(tmp_path):
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"rocprofiler-sdk-tool": [{"agents": [], "buffer_records": {}}]}))
    assert parsers.detect(path) is rocprofv3_json.READER
    with pytest.raises(InputError) as err:
        parsers.read(path)
    assert "--kernel-trace" in str(err.value)


def test_a_copy_and_the_records_not_read_yet(tmp_path):
    """A hand-made document: one GPU agent, one dispatch (1,024 work-items in workgroups of 256:
    a grid of 4) and one host-to-device copy, named by the document's own MEMORY_COPY operation
    list; its roctx records are said to be unread."""
    gpu = {"type": 2, "id": {"handle": 9}, "logical_node_type_id": 0, "name": "gfx942",
           "product_name": "AMD Instinct MI300X", "cu_count": 304}  # fmt: skip
    run = {
        "agents": [gpu],
        "kernel_symbols": [{"kernel_id": 3, "kernel_name": "k.kd", "demangled_kernel_name": "k"}],
        "strings": {"buffer_records": [{"kind": "MEMORY_COPY", "operations": [
            "MEMORY_COPY_NONE", "MEMORY_COPY_HOST_TO_HOST", "MEMORY_COPY_HOST_TO_DEVICE"]}]},
        "buffer_records": {
            "kernel_dispatch": [{
                "start_timestamp": 2_000, "end_timestamp": 2_500,
                "correlation_id": {"internal": 1},
                "dispatch_info": {"agent_id": {"handle": 9}, "queue_id": {"handle": 4},
                                  "kernel_id": 3, "grid_size": {"x": 1024, "y": 1, "z": 1},
                                  "workgroup_size": {"x": 256, "y": 1, "z": 1}}}],
            "memory_copy": [{
                "start_timestamp": 1_000, "end_timestamp": 1_800, "operation": 2,
                "src_agent_id": {"handle": 1}, "dst_agent_id": {"handle": 9},
                "bytes": 1_048_576, "correlation_id": {"internal": 2}}],
            "marker_api": [{"start_timestamp": 0, "end_timestamp": 10}],
        },
    }  # fmt: skip
    path = tmp_path / "run_results.json"
    path.write_text(json.dumps({"rocprofiler-sdk-tool": [run]}))
    profile = parsers.read(path)
    launches = profile.launches
    assert list(launches["kernel"]) == ["Memcpy HtoD", "k"]
    assert list(launches["kind"]) == [timeline.MEMCPY, timeline.KERNEL]
    assert list(launches["device_index"]) == [0, 0]
    assert launches["grid"].iloc[1] == "(4, 1, 1)" and launches["block"].iloc[1] == "(256, 1, 1)"
    assert list(launches["start_s"] * 1e9) == pytest.approx([0, 1_000])
    assert rocprofv3_json.NOT_READ["marker_api"] in profile.notes


def test_a_record_of_another_shape_is_one_line(tmp_path):
    path = tmp_path / "results.json"
    run = {"agents": [], "buffer_records": {"kernel_dispatch": [{"dispatch_info": 5}]}}
    path.write_text(json.dumps({"rocprofiler-sdk-tool": [run]}))
    with pytest.raises(InputError) as err:
        parsers.read(path)
    assert "not as rocprofv3 writes them" in str(err.value) and "\n" not in str(err.value)
