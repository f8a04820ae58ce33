"""Digraph rendering: through Graphviz's `dot` where it is installed, matplotlib where not."""

import os
import stat
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ember
from ember.utils.viz import digraph, make_dot

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def course_dot():
    a = ember.tensor(2.0, requires_grad=True)
    b = ember.tensor(3.0, requires_grad=True)
    loss = ((a * b) * (a + b)) ** 2
    loss.backward()
    return make_dot(loss, params={"a": a, "b": b, "L": loss}, show_values=True)


@pytest.fixture
def no_graphviz(monkeypatch):
    monkeypatch.setattr(digraph, "find_dot", lambda: None)


def test_fallback_renders_a_png_and_saves_the_source(tmp_path, no_graphviz):
    dot = course_dot()
    out = dot.render(tmp_path / "graph", format="png")
    assert out == str(tmp_path / "graph.png")
    assert (tmp_path / "graph").read_text() == dot.source  # graphviz's render saves it too
    data = (tmp_path / "graph.png").read_bytes()
    assert data.startswith(PNG_MAGIC)
    import matplotlib.image

    img = matplotlib.image.imread(str(tmp_path / "graph.png"))
    h, w = img.shape[:2]
    assert h > w > 100  # the course graph is a tall column of 9 boxes
    # the leaves are light blue (173, 216, 230) and the output green (202, 255, 112)
    pixels = {tuple(p) for p in (img[..., :3] * 255).round().astype(int).reshape(-1, 3)}
    assert (173, 216, 230) in pixels and (202, 255, 112) in pixels


def test_fallback_cleanup_outfile_svg_pdf_and_pipe(tmp_path, no_graphviz):
    dot = course_dot()
    out = dot.render(tmp_path / "g", format="svg", cleanup=True)
    assert not (tmp_path / "g").exists()
    assert "<svg" in open(out).read()
    out = dot.render(outfile=tmp_path / "pic.pdf")
    assert out == str(tmp_path / "pic.pdf")
    assert (tmp_path / "pic.pdf").read_bytes().startswith(b"%PDF")
    assert (tmp_path / "pic.gv").read_text() == dot.source
    assert dot.pipe(format="png").startswith(PNG_MAGIC)
    svg = dot._repr_svg_()
    assert svg.lstrip().startswith("<?xml") and "</svg>" in svg
    with pytest.raises(ValueError, match="needs Graphviz's `dot` program"):
        dot.render(tmp_path / "g", format="gif")


def test_view_renders_and_names_the_file(tmp_path, no_graphviz):
    with pytest.warns(UserWarning, match="opens no viewer; the graph is drawn in .*g.pdf"):
        out = course_dot().view(tmp_path / "g")
    assert open(out, "rb").read().startswith(b"%PDF")  # graphviz's default format


def test_graphviz_is_used_where_installed(tmp_path, monkeypatch):
    # A stand-in `dot` that records its arguments and copies the DOT text it is given.
    fake = tmp_path / "bin" / "dot"
    fake.parent.mkdir()
    fake.write_text(textwrap.dedent(f"""\
        #!{sys.executable}
        import sys
        args = sys.argv[1:]
        open(args[args.index("-o") + 1], "w").write(" ".join(args) + "\\n" + sys.stdin.read())
        """))
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", str(fake.parent) + os.pathsep + os.environ.get("PATH", ""))
    assert digraph.find_dot() == str(fake)
    dot = course_dot()
    out = dot.render(tmp_path / "graph", format="gif")  # any format dot knows
    first, rest = open(out).read().split("\n", 1)
    assert first == f"-Tgif -o {tmp_path / 'graph.gif'}"
    assert rest == dot.source


def test_the_course_png_is_drawn_headless(tmp_path):
    """In a fresh process with no display: the PNG is written, pyplot is never imported."""
    script = textwrap.dedent(f"""\
        import sys
        import ember
        from ember.utils.viz import digraph, make_dot
        assert digraph.find_dot() is None, "this test wants the matplotlib path"
        a = ember.tensor(2.0, requires_grad=True)
        b = ember.tensor(3.0, requires_grad=True)
        L = ((a * b) * (a + b)) ** 2
        L.backward()
        make_dot(L, params={{"a": a, "b": b}}, show_values=True).render(
            {str(tmp_path / "course")!r}, format="png")
        assert "matplotlib.pyplot" not in sys.modules
        """)
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "MPLBACKEND")}
    env["PATH"] = os.path.dirname(sys.executable)  # no Graphviz on it
    subprocess.run([sys.executable, "-c", script], check=True, env=env, timeout=120)
    assert (tmp_path / "course.png").read_bytes().startswith(PNG_MAGIC)


def test_a_big_graph_is_scaled_to_fit(tmp_path, no_graphviz):
    x = ember.ones(3, requires_grad=True)
    y = x
    for _ in range(150):
        y = y.sin()
    out = make_dot(y.sum()).render(tmp_path / "tall", format="png")
    import matplotlib.image

    h, w = matplotlib.image.imread(out).shape[:2]
    assert h <= 60 * 100 + 1  # the fallback's limit: 60 inches at 100 dpi
    assert np.isfinite(h) and w > 0
