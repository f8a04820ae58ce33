"""docs/api-coverage.md (written by tools/api_coverage.py) tells the truth about ember: every
API it calls present exists at its PyTorch path, and its counts add up."""

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "docs" / "api-coverage.md"


def _tool():
    path = ROOT / "tools" / "api_coverage.py"
    spec = importlib.util.spec_from_file_location("api_coverage", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


TOOL = _tool()
TEXT = TABLE.read_text()


def _ranked_rows():
    rows = re.findall(r"^\| (\d+) \| `([^`]+)` \| ([^|]+) \| (\d+) \| ([^|]+) \|$", TEXT, re.M)
    return [(int(r), api, status.strip()) for r, api, _, _, status in rows]


def _present_lists():
    blocks = re.findall(r"<summary><code>([\w.]+)</code> \((\d+)\)</summary>\n\n(.*?)\n",
                        TEXT, re.S)
    return [(ns, int(n), re.findall(r"`(\w+)`", names)) for ns, n, names in blocks]


def test_ranked_table_is_complete_and_in_order():
    rows = _ranked_rows()
    assert len(rows) >= 300
    assert [r for r, _, _ in rows] == list(range(1, len(rows) + 1))


@pytest.mark.parametrize("rank,api,status", [r for r in _ranked_rows() if r[2] == "present"],
                         ids=lambda v: str(v) if isinstance(v, int) else None)
def test_every_ranked_api_called_present_exists(rank, api, status):
    path = TOOL.usage_path(api)
    assert path is not None and TOOL.ember_has(path), f"{api} (rank {rank}) is not in ember"


def test_instance_attributes_called_present_exist():
    for _, api, status in _ranked_rows():
        if status.startswith("present (an instance"):
            assert TOOL.instance_has(TOOL.usage_path(api)), api


@pytest.mark.parametrize("ns", TOOL.NAMESPACES)
def test_every_name_called_present_exists(ns):
    lists = {name: (count, names) for name, count, names in _present_lists()}
    count, names = lists[ns]
    assert count == len(names)
    summary = re.search(rf"^\| `{re.escape(ns)}` \| (\d+) \| (\d+) \|", TEXT, re.M)
    assert int(summary[2]) == count
    absent = [n for n in names if not TOOL.ember_has(f"{ns}.{n}")]
    assert not absent, f"the table calls these present but ember lacks them: {absent}"


def test_usage_names_resolve_to_torch_paths():
    assert TOOL.usage_path("Tensor.__add__ (+)") == "torch.Tensor.__add__"
    assert TOOL.usage_path("nn.Module.parameters") == "torch.nn.Module.parameters"
    assert TOOL.usage_path("torch.no_grad (decorator)") == "torch.no_grad"
    assert TOOL.ember_has("torch.nn.functional.relu")
    assert not TOOL.ember_has("torch.nn.functional.no_such_function")
