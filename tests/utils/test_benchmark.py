"""ember.utils.benchmark against torch.utils.benchmark: Measurement statistics and printout
on the same replicate times, Compare's table on the same measurements, Timer's fields on the
same statement."""

import re

import numpy as np
import pytest
import torch.utils.benchmark as tb

import ember
import ember.utils.benchmark as eb

TIMES = {
    "steady": [1.00e-3, 1.01e-3, 0.99e-3, 1.02e-3, 1.00e-3, 0.98e-3, 1.01e-3],
    "noisy": [1e-6, 2e-6, 1.5e-6, 4e-6, 1.1e-6, 3e-6],
    "gross": [5e-9, 9e-9, 20e-9, 6e-9],
    "one": [2.5e-2],
    "three": [3.2, 3.3, 3.1],
}
SPECS = [
    dict(stmt="x + 1", setup="pass"),
    dict(stmt="x @ x", setup="x = torch.ones(4)", label="mm", sub_label="4x4",
         description="float32", num_threads=2),
    dict(stmt="y = x * 2\ny.sum()", setup="x = 1\nz = 2", sub_label="two lines"),
    dict(stmt="x", setup="", label="lbl", env="ember-env"),
]


def _pair(times, number=10, **spec):
    e = eb.Measurement(number, list(times), eb.TaskSpec(**spec))
    t = tb.Measurement(number, list(times), tb.TaskSpec(**spec))
    return e, t


def _body(m) -> str:
    """The repr without its first line (the object's address)."""
    return repr(m).split("\n", 1)[1]


@pytest.mark.parametrize("times", list(TIMES))
@pytest.mark.parametrize("spec", range(len(SPECS)))
def test_measurement_matches_torch(times, spec):
    e, t = _pair(TIMES[times], **SPECS[spec])
    assert _body(e) == _body(t)
    for field in ("times", "number_per_run", "raw_times", "title", "as_row_name", "env",
                  "num_threads", "stmt", "label", "sub_label", "description",
                  "has_warnings", "significant_figures"):
        assert getattr(e, field) == getattr(t, field), field
    # statistics through NumPy's quantiles / mean against torch's: the same linear
    # interpolation, summed in another order (a rounding apart)
    for field in ("mean", "median", "iqr"):
        assert getattr(e, field) == pytest.approx(getattr(t, field), rel=1e-12, abs=1e-18)
    assert e.meets_confidence(0.2) == t.meets_confidence(0.2)


def test_measurement_repr_first_line_names_the_class():
    e, _ = _pair(TIMES["steady"], **SPECS[0])
    assert re.fullmatch(r"<ember\.utils\.benchmark\.utils\.common\.Measurement object at "
                        r"0x[0-9a-f]+>", repr(e).splitlines()[0])


def test_merge_pools_replicates_as_torch():
    spec = SPECS[1]
    es = [eb.Measurement(n, TIMES["noisy"], eb.TaskSpec(**spec)) for n in (1, 10)]
    ts = [tb.Measurement(n, TIMES["noisy"], tb.TaskSpec(**spec)) for n in (1, 10)]
    (e,), (t,) = eb.Measurement.merge(es), tb.Measurement.merge(ts)
    assert e.number_per_run == t.number_per_run == 1 and e.raw_times == t.raw_times


def _grid(mod):
    out = []
    rng = np.random.default_rng(0)
    for threads in (1, 4):
        for sub in ("small", "a much longer row"):
            for desc in ("float32", "float64"):
                base = {"small": 2e-6, "a much longer row": 3e-4}[sub] * (2 if desc == "float64"
                                                                          else 1)
                times = list(base * (1 + 0.05 * rng.standard_normal(8)))
                out.append(mod.Measurement(100, times, mod.TaskSpec(
                    stmt="f(x)", setup="pass", label="ops", sub_label=sub, description=desc,
                    num_threads=threads)))
    out.append(mod.Measurement(10, [1e-3, 1.5e-3, 0.7e-3, 2e-3], mod.TaskSpec(
        stmt="g(x)", setup="pass", label="other", description="only")))
    return out


@pytest.mark.parametrize("options", [(), ("trim",), ("colorize",), ("rowwise",),
                                     ("highlight",), ("trim", "highlight", "colorize")])
def test_compare_table_is_torchs(options):
    e, t = eb.Compare(_grid(eb)), tb.Compare(_grid(tb))
    for c in (e, t):
        if "trim" in options:
            c.trim_significant_figures()
        if "colorize" in options:
            c.colorize()
        if "rowwise" in options:
            c.colorize(rowwise=True)
        if "highlight" in options:
            c.highlight_warnings()
    assert str(e) == str(t)


def test_compare_refuses_what_is_not_a_measurement():
    with pytest.raises(ValueError, match="Measurement"):
        eb.Compare([1.0])


def test_timer_fields_match_torchs():
    x = ember.ones(8)
    kw = dict(label="add", sub_label="8", description="ones", num_threads=1)
    e = eb.Timer("x + x", globals={"x": x}, **kw)
    t = tb.Timer("x + x", globals={"x": 1.0}, **kw)
    me, mt = e.timeit(200), t.timeit(200)
    assert me.number_per_run == mt.number_per_run == 200
    assert len(me.raw_times) == len(mt.raw_times) == 1
    assert me.task_spec.__dict__ == mt.task_spec.__dict__
    # the printout has the same lines, numbers aside
    def shape(m):
        return re.sub(r"[\d.]+ (ns|us|ms|s)\b", "T", _body(m))
    assert shape(me) == shape(mt)


def test_blocked_autorange_runs_for_min_run_time():
    m = eb.Timer("sum(range(10))").blocked_autorange(min_run_time=0.05)
    assert sum(m.raw_times) >= 0.05 and m.number_per_run >= 1
    assert len(m.times) == len(m.raw_times)
    assert all(t == r / m.number_per_run for t, r in zip(m.times, m.raw_times))


def test_adaptive_autorange_stops_on_a_small_spread_or_the_time_limit():
    m = eb.Timer("sum(range(10))").adaptive_autorange(threshold=0.5, max_run_time=1.0)
    assert len(m.raw_times) > 3 or sum(m.raw_times) > 1.0
    assert m.meets_confidence(0.5) or sum(m.raw_times) > 1.0


def test_timer_sees_ember_as_torch_and_sets_threads():
    seen = []
    before = ember.get_num_threads()
    eb.Timer("seen.append((torch.get_num_threads(), torch is ember))",
             globals={"seen": seen, "ember": ember}, num_threads=1).timeit(3)
    assert seen[-1] == (1, True) and ember.get_num_threads() == before


def test_timer_refuses_what_torch_refuses():
    with pytest.raises(ValueError):
        eb.Timer(stmt=lambda: None)
    with pytest.raises(ValueError, match="global_setup"):
        eb.Timer("x", global_setup="int x = 1;")
