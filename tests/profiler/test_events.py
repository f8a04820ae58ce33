"""The key_averages table laid out as torch.profiler's: header, column order, widths, sort_by,
row_limit, group_by_input_shape, time units; per-key fields."""

import re

import numpy as np
import pytest
import torch
import torch.profiler as tprof

import ember
import ember.profiler as eprof


def _run(lib, prof_mod, **kwargs):
    a = lib.tensor(np.ones((8, 8), np.float32))
    b = lib.tensor(np.ones((4, 8), np.float32))
    with prof_mod.profile(**kwargs) as prof:
        with prof_mod.record_function("block"):
            for _ in range(3):
                a @ a
            b @ a
            (a + 1).relu()
    return prof


def _header(table: str) -> list:
    """The column titles, split where PyTorch separates columns (two spaces or more)."""
    lines = table.splitlines()
    return re.split(r"\s{2,}", lines[1].strip())


def _rows(table: str) -> list:
    lines = table.splitlines()
    return lines[3:lines.index(lines[0], 3)]


CONFIGS = [
    (dict(), dict()),
    (dict(profile_memory=True), dict()),
    (dict(record_shapes=True), dict(group_by_input_shape=True)),
    (dict(record_shapes=True, profile_memory=True), dict(group_by_input_shape=True)),
]


@pytest.mark.parametrize("prof_kw,avg_kw", CONFIGS)
def test_table_columns_are_torchs(prof_kw, avg_kw):
    e = _run(ember, eprof, **prof_kw).key_averages(**avg_kw).table(sort_by="cpu_time_total")
    t = _run(torch, tprof, **prof_kw).key_averages(**avg_kw).table(sort_by="cpu_time_total")
    assert _header(e) == _header(t)
    el, tl = e.splitlines(), t.splitlines()
    # the dashed rules: the same column widths, except the name and shapes columns, which
    # fit the longest name / shape list (torch's names are its own)
    assert [len(c) for c in el[0].split()][1:] == [len(c) for c in tl[0].split()][1:] or \
        "Input Shapes" in _header(e)
    assert el[-1].startswith("Self CPU time total: ") and tl[-1].startswith(
        "Self CPU time total: ")
    assert el[0] == el[2] == el[-2]


def test_header_line_text_is_torchs():
    e = _run(ember, eprof, profile_memory=True).key_averages().table()
    t = _run(torch, tprof, profile_memory=True).key_averages().table()
    # the names differ in length, so the name column's width may: compare the rest exactly
    name_e, name_t = len(e.splitlines()[0].split()[0]), len(t.splitlines()[0].split()[0])
    assert e.splitlines()[1][name_e:] == t.splitlines()[1][name_t:]


@pytest.mark.parametrize("sort_by", ["cpu_time_total", "self_cpu_time_total", "count",
                                     "cpu_memory_usage", "self_cpu_memory_usage"])
def test_sort_by_orders_rows_descending(sort_by):
    avg = _run(ember, eprof, profile_memory=True).key_averages()
    rows = _rows(avg.table(sort_by=sort_by))
    names = [r[:len(avg.table().splitlines()[0].split()[0])].strip() for r in rows]
    values = {a.key: getattr(a, sort_by) for a in avg}
    assert [values[n] for n in names] == sorted(values.values(), reverse=True)


def test_row_limit_as_torchs():
    e_avg, t_avg = _run(ember, eprof).key_averages(), _run(torch, tprof).key_averages()
    for limit in (1, 2, 100):
        assert len(_rows(e_avg.table(row_limit=limit))) == min(limit, len(e_avg))
        assert len(_rows(t_avg.table(row_limit=limit))) == min(limit, len(t_avg))
    assert len(e_avg) == 4  # block, aten::mm, aten::add, aten::relu


def test_group_by_input_shape_splits_keys_by_shapes_as_torch():
    def mm_shapes(lib, prof_mod):
        avg = _run(lib, prof_mod, record_shapes=True).key_averages(group_by_input_shape=True)
        return sorted((a.count, str(a.input_shapes)) for a in avg if a.key == "aten::mm")

    assert mm_shapes(ember, eprof) == mm_shapes(torch, tprof) == [
        (1, "[[4, 8], [8, 8]]"), (3, "[[8, 8], [8, 8]]")]


def test_without_grouping_shapes_are_not_shown():
    avg = _run(ember, eprof, record_shapes=True).key_averages()
    assert all(a.input_shapes == "" for a in avg)
    assert "Input Shapes" not in avg.table()


def test_per_key_fields():
    avg = {a.key: a for a in _run(ember, eprof, profile_memory=True).key_averages()}
    mm = avg["aten::mm"]
    assert mm.count == 3 + 1
    assert mm.self_cpu_time_total == pytest.approx(mm.cpu_time_total)  # (no children)
    assert mm.cpu_time == pytest.approx(mm.cpu_time_total / 4)
    assert mm.cpu_memory_usage == mm.self_cpu_memory_usage == 4 * 8 * 8 * 3 + 4 * 4 * 8
    block = avg["block"]
    assert block.self_cpu_time_total < block.cpu_time_total
    assert block.self_cpu_memory_usage == block.cpu_memory_usage - sum(
        a.cpu_memory_usage for k, a in avg.items() if k != "block")


def test_time_unit_and_formats_as_torchs():
    from torch.autograd.profiler_util import _format_memory, _format_time

    from ember.profiler.events import _format_memory as e_mem
    from ember.profiler.events import _format_time as e_time

    for us in (0.5, 12.25, 999.9995, 1000, 2.5e4, 3e6):
        assert e_time(us) == _format_time(us)
    for n in (0, 5, -100, 1023, 1024, 5 << 20, -(3 << 30)):
        assert e_mem(n) == _format_memory(n)
    table = _run(ember, eprof).key_averages().table(time_unit="ms")
    assert all(r.split()[2].endswith("ms") for r in _rows(table))


def test_name_column_truncates_as_torchs():
    def long_names(lib, prof_mod):
        with prof_mod.profile() as prof:
            with prof_mod.record_function("x" * 80):
                lib.ones(2)
        return prof.key_averages().table()

    e, t = long_names(ember, eprof), long_names(torch, tprof)
    assert ("x" * 52 + "...") in e and ("x" * 52 + "...") in t
    assert len(e.splitlines()[0].split()[0]) == len(t.splitlines()[0].split()[0]) == 55
