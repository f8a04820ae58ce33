"""A directed graph that prints as Graphviz DOT and renders to a file.

`make_dot` returns one of these, in the shape of the `graphviz.Digraph` that torchviz
returns: `.source` is the DOT text, `.render(path, format=)` writes a picture,
`.pipe(format=)` returns its bytes and `_repr_svg_` shows it in a notebook. Nodes and
edges are also kept as data (`.nodes`, `.edges`), so the picture can be drawn without
Graphviz: where the `dot` program is installed it lays the graph out; where it is not,
`matplotlib_render` draws the same nodes and edges with matplotlib (Agg, no screen).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import warnings

from ..._user_warnings import user_stacklevel

# Formats the matplotlib fallback writes; Graphviz writes these and many more.
FALLBACK_FORMATS = ("png", "svg", "pdf")


def find_dot() -> str | None:
    """The path of Graphviz's `dot` program, or None when it is not installed."""
    return shutil.which("dot")


def _quote(value) -> str:
    """A DOT ID: a quoted string with quotes and backslashes escaped, newlines as `\\n`."""
    text = str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{text}"'


def _attr_list(attrs: dict) -> str:
    return " ".join(f"{k}={_quote(v)}" for k, v in attrs.items())


class Digraph:
    """A directed graph: nodes with attributes (`label`, `fillcolor` ...), edges between them."""

    def __init__(self, name: str | None = None, *, graph_attr: dict | None = None,
                 node_attr: dict | None = None, edge_attr: dict | None = None,
                 format: str = "pdf") -> None:
        self.name = name
        self.graph_attr = dict(graph_attr or {})
        self.node_attr = dict(node_attr or {})
        self.edge_attr = dict(edge_attr or {})
        self.format = format  # graphviz.Digraph's default output format
        self.nodes: dict[str, dict] = {}  # id -> attributes, in the order first added
        self.edges: list[tuple[str, str, dict]] = []  # (tail, head, attributes)

    def node(self, name: str, label: str | None = None, **attrs) -> None:
        """Add node `name` (or update its attributes, as a later DOT statement would)."""
        entry = self.nodes.setdefault(str(name), {})
        if label is not None:
            entry["label"] = label
        entry.update(attrs)

    def edge(self, tail: str, head: str, **attrs) -> None:
        """Add an edge `tail -> head`; `dir="none"` draws it without an arrowhead."""
        self.edges.append((str(tail), str(head), dict(attrs)))

    @property
    def body(self) -> list[str]:
        """The statements between the braces, one line each (graphviz.Digraph's `body`)."""
        lines = []
        for name, attrs in self.nodes.items():
            lines.append(f"\t{_quote(name)} [{_attr_list(attrs)}]" if attrs
                         else f"\t{_quote(name)}")
        for tail, head, attrs in self.edges:
            stmt = f"\t{_quote(tail)} -> {_quote(head)}"
            lines.append(f"{stmt} [{_attr_list(attrs)}]" if attrs else stmt)
        return lines

    @property
    def source(self) -> str:
        """The graph as DOT text."""
        head = "digraph" + (f" {_quote(self.name)}" if self.name else "") + " {"
        lines = [head]
        for kind, attrs in (("graph", self.graph_attr), ("node", self.node_attr),
                            ("edge", self.edge_attr)):
            if attrs:
                lines.append(f"\t{kind} [{_attr_list(attrs)}]")
        lines.extend(self.body)
        lines.append("}")
        return "\n".join(lines) + "\n"

    def __str__(self) -> str:
        return self.source

    def save(self, filename: str | os.PathLike | None = None,
             directory: str | os.PathLike | None = None) -> str:
        """Write the DOT source to `filename` (default `Digraph.gv`); returns its path."""
        path = _join(directory, filename or f"{self.name or 'Digraph'}.gv")
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.source)
        return path

    def pipe(self, format: str | None = None) -> bytes:
        """The rendered picture's bytes (`format`: png, svg, pdf ...)."""
        fmt = format or self.format
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, f"graph.{fmt}")
            self._draw(out, fmt)
            with open(out, "rb") as f:
                return f.read()

    def render(self, filename: str | os.PathLike | None = None,
               directory: str | os.PathLike | None = None, view: bool = False,
               cleanup: bool = False, format: str | None = None, *,
               outfile: str | os.PathLike | None = None) -> str:
        """Save the DOT source to `filename` and draw it to `filename.<format>`, as
        graphviz.Digraph.render does; returns the picture's path. `outfile` names the
        picture directly (its extension gives the format). `cleanup` removes the
        source afterwards. `view` opens no viewer: it warns with the picture's path."""
        if outfile is not None:
            out = os.fspath(outfile)
            fmt = format or os.path.splitext(out)[1].lstrip(".") or self.format
            source = self.save(*((filename, directory) if filename is not None
                                 else (os.path.splitext(out)[0] + ".gv", None)))
        else:
            fmt = format or self.format
            source = self.save(filename, directory)
            out = f"{source}.{fmt}"
        self._draw(out, fmt)
        if cleanup:
            os.remove(source)
        if view:
            warnings.warn(f"ember opens no viewer; the graph is drawn in {out}",
                          stacklevel=user_stacklevel())
        return out

    def view(self, filename: str | os.PathLike | None = None,
             directory: str | os.PathLike | None = None, cleanup: bool = False) -> str:
        """Render (graphviz.Digraph.view also opens a viewer; ember only warns with the path)."""
        return self.render(filename, directory, view=True, cleanup=cleanup)

    def _draw(self, out: str, fmt: str) -> None:
        dot = find_dot()
        if dot is not None:
            subprocess.run([dot, f"-T{fmt}", "-o", out], input=self.source.encode(),
                           check=True, capture_output=True)
            return
        if fmt not in FALLBACK_FORMATS:
            raise ValueError(
                f"format {fmt!r} needs Graphviz's `dot` program, which is not installed; "
                f"without it ember draws {', '.join(FALLBACK_FORMATS)} with matplotlib")
        from .matplotlib_render import draw

        os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
        draw(self, out, fmt)

    def _repr_svg_(self) -> str:
        """The graph as SVG text, for Jupyter."""
        return self.pipe(format="svg").decode("utf-8")


def _join(directory, filename) -> str:
    filename = os.fspath(filename)
    return os.path.join(os.fspath(directory), filename) if directory else filename
