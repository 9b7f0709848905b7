"""Hooks of the whole suite."""

from __future__ import annotations

import pytest


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``xdist_group`` under pytest 9: pytest-xdist 3.8 names an item's group by setting
    ``item._nodeid``, which pytest 9 no longer reads, so ``--dist loadgroup`` spread the
    tests of one group over both workers (the local model servers beside the kill -9 load).
    Here the group goes into the node id as xdist means it to, where xdist's did not."""
    if not getattr(config.option, "loadgroup", False):  # set by xdist on its workers
        return
    try:
        from _pytest.nodeid import coerce_node_id  # pytest 9; xdist's own works before
    except ImportError:
        return
    for item in items:
        names = {
            str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
            for mark in item.iter_markers("xdist_group")
        }
        if names and item.nodeid.rfind("@") <= item.nodeid.rfind("]"):
            item._id = coerce_node_id(f"{item.nodeid}@{'_'.join(sorted(names))}")  # type: ignore[attr-defined]
