"""Node ids and the other ids built from them (nodeids.py): built and split in one module."""

from __future__ import annotations

# private: unit test of the node-id grammar (built and parsed in one module), no public face
from pytest_verial._nodeids import (
    benchmark_run_id,
    criterion_nodeid,
    file_of,
    parse,
    property_name,
    task_key_of,
    task_name,
    task_nodeid,
    task_run_of,
)


def test_a_criterion_node_id_is_built_and_split_by_the_same_module() -> None:
    key = task_key_of("pa-lumbar-mri", "john-smith")
    assert key == "pa-lumbar-mri[john-smith]"
    task = task_nodeid("b/prior-auth.verial.yaml", task_name(key, "good@v2", True))
    nodeid = criterion_nodeid(task, "pa-submitted")
    assert nodeid == "b/prior-auth.verial.yaml::pa-lumbar-mri[john-smith]@good@v2::pa-submitted"
    assert parse(nodeid) == ("b/prior-auth.verial.yaml", key + "@good@v2", "pa-submitted")
    assert task_run_of(nodeid) == task
    assert file_of(nodeid) == "b/prior-auth.verial.yaml"


def test_ids_around_node_ids() -> None:
    assert task_key_of("t", None) == "t"
    assert benchmark_run_id("a.verial.yaml", ["good"]) == "a.verial.yaml@good"
    assert benchmark_run_id("a.verial.yaml", ["r1", "r2"]) == "a.verial.yaml@r1+r2"
    assert (
        property_name("a.verial.yaml::t::c", "verial_score") == "a.verial.yaml::t::c::verial_score"
    )
    # a Python test's node id and a bare path argument: the same file part as pytest's
    assert file_of("tests/test_x.py::TestA::test_b[p::q]") == "tests/test_x.py"
    assert file_of("example_benchmarks") == "example_benchmarks"
