"""ember's graph layer: capture what a program binds, as a graph, and run it compiled.

- `ir`: the graph IR (Graph, Node, Value), printed as a table;
- `lazy`: LazyTensor, a result the graph has not computed yet;
- `capture`: the interpreter that records ops into a graph, and runs it when a value is
  needed (graph breaks) or the call ends;
- `passes`: dead code, and which nodes share a kernel;
- `program`: a graph lowered to generated Python over kernels;
- `fuse`: pointwise chains as generated C loops;
- `c_program`: a whole graph as one generated C function, where every node has a C rule;
- `backward`: a backward pass replayed from the one recorded at the same place.

`ember.compile`, `ember.compiler` and `ember._dynamo` are faces over this layer.
"""
