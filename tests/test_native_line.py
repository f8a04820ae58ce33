"""The NumPy-kernel line's selection (tests/native_line.py): the tests the first line
recorded reading the kernel mode are run again, with every test of tests/native and
tests/graph and of files that start processes (but not those marked `oracle_only`); the
rest are deselected."""

from pathlib import Path
from types import SimpleNamespace

import native_line


def _item(root: Path, rel: str, name: str, marks: tuple = ()):
    path = root / rel
    return SimpleNamespace(path=path, nodeid=f"{rel}::{name}",
                           get_closest_marker=lambda m: m if m in marks else None)


def test_selector_keeps_recorded_tests_and_the_always_run_ones(tmp_path):
    for rel, text in [("tests/ops/test_a.py", "x = 1\n"), ("tests/ops/test_b.py",
                      "import subprocess\n"), ("tests/native/test_c.py", "x = 1\n")]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    trace = tmp_path / "trace"
    trace.mkdir()
    # two workers' records; an id with a space and brackets (a parametrized test)
    (trace / "1.txt").write_text("tests/ops/test_a.py::test_one[a b]\n")
    (trace / "2.txt").write_text("tests/ops/test_a.py::test_three\n")
    items = [_item(tmp_path, "tests/ops/test_a.py", n)
             for n in ("test_one[a b]", "test_two", "test_three")]
    items += [_item(tmp_path, "tests/ops/test_b.py", "test_spawns"),
              _item(tmp_path, "tests/ops/test_b.py", "test_oracle", ("oracle_only",)),
              _item(tmp_path, "tests/native/test_c.py", "test_native")]
    dropped = []
    config = SimpleNamespace(hook=SimpleNamespace(
        pytest_deselected=lambda items: dropped.extend(items)))
    native_line.Selector(str(trace), tmp_path).pytest_collection_modifyitems(config, items)
    assert [i.nodeid.split("::")[1] for i in items] == \
        ["test_one[a b]", "test_three", "test_spawns", "test_native"]
    assert [i.nodeid for i in dropped] == ["tests/ops/test_a.py::test_two",
                                           "tests/ops/test_b.py::test_oracle"]


def test_selector_without_records_keeps_everything(tmp_path):
    items = [_item(tmp_path, "tests/ops/test_a.py", "test_one")]
    native_line.Selector(str(tmp_path / "none"), tmp_path).pytest_collection_modifyitems(
        None, items)
    assert len(items) == 1
