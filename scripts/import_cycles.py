"""Import circles among raystorm's modules: the import graph of actors/ agents/ retrieval/ cluster/
(TYPE_CHECKING and function-level imports included), and every circle in it; exits 1 when there is one.

    python -m scripts.import_cycles
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

PACKAGES = ("actors", "agents", "retrieval", "cluster")


def modules(root: Path) -> dict[str, Path]:
    out = {}
    for package in PACKAGES:
        for f in (root / package).rglob("*.py"):
            parts = list(f.relative_to(root).with_suffix("").parts)
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    return out


def import_graph(mods: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the modules of `mods` it imports anywhere in its text (a name imported from a package
    counts as the package, or as its submodule when it is one)."""
    def resolve(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m, f in mods.items():
        here = m.split(".") if f.name == "__init__.py" else m.split(".")[:-1]
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(here[:len(here) - (node.level - 1)] + ([base] if base else []))
                targets = [f"{base}.{a.name}" for a in node.names] + [base]
            else:
                continue
            graph[m].update(r for r in map(resolve, targets) if r and r != m)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, edges = work[-1]
            w = next(edges, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1], help="the repository")
    graph = import_graph(modules(parser.parse_args().root.resolve()))
    found = circles(graph)
    print(f"{len(graph)} modules, {sum(map(len, graph.values()))} import edges, {len(found)} circles")
    for component in found:
        print("circle:", " <-> ".join(component))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
