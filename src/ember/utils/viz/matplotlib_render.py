"""Draw a `Digraph` with matplotlib where Graphviz is not installed.

The layout comes from `layered_layout`; this module measures the labels, draws filled
boxes, the edges as polylines with arrowheads (none for `dir="none"`, dotted for
`style="dotted"`), and saves the figure through the Agg canvas, so no screen or
interactive backend is ever touched. matplotlib is the `examples` extra.
"""

from __future__ import annotations

from .layered_layout import layout

# Graphviz (X11) colour names that matplotlib does not know.
_X11 = {"darkolivegreen1": "#caff70", "darkolivegreen2": "#bcee68",
        "darkolivegreen3": "#a2cd5a", "darkolivegreen4": "#6e8b3d"}
_DEFAULT_FILL = "lightgrey"  # Graphviz's fill for style=filled without a fillcolor
_CHAR_W = 0.6  # a monospace character's width, in font sizes
_LINE_H = 1.25  # a line's height, in font sizes
_PAD = 4.0  # points between a box's text and its border
_MAX_INCHES = 60.0  # a bigger graph is scaled down to fit, as Graphviz's `size` does


def _color(name: str) -> str:
    return _X11.get(name, name)


def _box_size(label: str, fontsize: float) -> tuple[float, float]:
    lines = label.split("\n")
    width = max(len(line) for line in lines) * fontsize * _CHAR_W + 2 * _PAD
    height = len(lines) * fontsize * _LINE_H + 2 * _PAD
    return max(width, 2 * fontsize), height


def _clip(box: tuple[float, float, float, float], toward: tuple[float, float]):
    """Where the segment from the box's centre toward a point leaves the box."""
    x, y, w, h = box
    dx, dy = toward[0] - x, toward[1] - y
    if dx == 0 and dy == 0:
        return x, y
    sx = (w / 2) / abs(dx) if dx else float("inf")
    sy = (h / 2) / abs(dy) if dy else float("inf")
    s = min(sx, sy, 1.0)
    return x + dx * s, y + dy * s


def draw(graph, out: str, fmt: str, dpi: int = 100) -> None:
    """Lay out `graph` (a Digraph) and save it to `out` as `fmt` (png, svg or pdf)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import FancyArrowPatch, Rectangle

    fontsize = float(graph.node_attr.get("fontsize", 14))
    font = graph.node_attr.get("fontname", "monospace")
    nodes = {name: dict(graph.node_attr, **attrs) for name, attrs in graph.nodes.items()}
    for tail, head, _ in graph.edges:  # an edge names its ends into being, as in DOT
        for end in (tail, head):
            nodes.setdefault(end, dict(graph.node_attr))
    labels = {n: str(a.get("label", n)) for n, a in nodes.items()}
    sizes = {n: _box_size(labels[n], fontsize) for n in nodes}
    lay = layout(sizes, [(t, h) for t, h, _ in graph.edges], gap=fontsize * 1.5,
                 layer_gap=fontsize * 3)

    margin = fontsize
    width, height = lay.width + 2 * margin, lay.height + 2 * margin
    scale = min(1.0, _MAX_INCHES * 72 / max(width, height, 1.0))
    fig = Figure(figsize=(width * scale / 72, height * scale / 72))
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(-margin, lay.width + margin)
    ax.set_ylim(lay.height + margin, -margin)  # y down, layer 0 on top
    ax.axis("off")

    for i, (tail, head, attrs) in enumerate(graph.edges):
        pts = list(lay.paths[i])
        if len(pts) < 2 or tail == head:
            continue
        pts[0] = _clip(lay.boxes[tail], pts[1])
        pts[-1] = _clip(lay.boxes[head], pts[-2])
        style = ":" if attrs.get("style") == "dotted" else "-"
        xs, ys = zip(*pts[:-1])
        if len(pts) > 2:
            ax.plot(xs, ys, color="black", linewidth=0.8 * scale, linestyle=style)
        arrow = "-" if attrs.get("dir") == "none" else "-|>"
        ax.add_patch(FancyArrowPatch(pts[-2], pts[-1], arrowstyle=arrow,
                                     mutation_scale=fontsize * scale, color="black",
                                     linewidth=0.8 * scale, linestyle=style,
                                     shrinkA=0, shrinkB=0))
    for n, attrs in nodes.items():
        x, y, w, h = lay.boxes[n]
        filled = "filled" in str(attrs.get("style", ""))
        face = _color(attrs.get("fillcolor", _DEFAULT_FILL)) if filled else "white"
        ax.add_patch(Rectangle((x - w / 2, y - h / 2), w, h, facecolor=face,
                               edgecolor="black", linewidth=0.8 * scale))
        ax.text(x, y, labels[n], ha="center", va="center", multialignment="center",
                family=font, fontsize=fontsize * scale, linespacing=_LINE_H / 1.2)
    fig.savefig(out, format=fmt, dpi=dpi)
