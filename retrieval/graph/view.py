"""The evidence graph in memory: references resolved to nodes, inverses derived, passage status.

Built from the stored per-document records in one pass (cheap: no model, no
vectors), so every process that can reach the store can hold it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date
from itertools import pairwise

from retrieval.graph.model import (
    INVERSE,
    ClaimRecord,
    DocumentRecord,
    Edge,
    Node,
    PassageStatus,
    Reference,
    StatedEdge,
)
from retrieval.graph.references import (
    EDITION_KEY,
    date_phrase,
    edition_hint,
    section_matches,
    title_family,
    topic_matches,
)

_TYPED = ("supersedes", "amends")  # kept even when the target is not in the collection


class EvidenceGraph:
    def __init__(self, records: Iterable[DocumentRecord], claims: Iterable[ClaimRecord] = ()):
        self.records: list[DocumentRecord] = list(records)
        self.nodes: dict[str, Node] = {}
        self.edges: list[Edge] = []
        self._by_key: dict[str, DocumentRecord] = {}
        self._by_doc_id: dict[str, DocumentRecord] = {}
        self._by_node: dict[str, DocumentRecord] = {}
        self._passage_doc: dict[str, tuple[DocumentRecord, list[str]]] = {}
        for r in self.records:
            self._add_document(r)
        for r in self.records:
            for stated in r.edges:
                self.edges += self._resolve(r, stated)
        self.edges += self._edition_order()
        for claim in claims:
            self.edges += self._add_claim(claim)
        self._out: dict[str, list[Edge]] = {}
        self._in: dict[str, list[Edge]] = {}
        self._statuses: dict[tuple[str, tuple[str, ...]], PassageStatus] = {}  # (doc, heading path) -> status
        for e in self.edges:
            self._out.setdefault(e.source, []).append(e)
            self._in.setdefault(e.target, []).append(e)

    # -- building -------------------------------------------------------------------------------

    def _add_document(self, r: DocumentRecord) -> None:
        if r.node_id in self._by_node:  # two files claim one URL: the later is named by its path
            r = _renamed(r, r.path if r.record is None else f"{r.path}#{r.record}")
            self.records[self.records.index(next(x for x in self.records if x.doc_id == r.doc_id))] = r
        self._by_doc_id[r.doc_id] = r
        self._by_node[r.node_id] = r
        for key in r.keys:  # a code several editions share names the newest ("Section 9 of Form HX-3")
            known = self._by_key.get(key)
            if known is None or (known.family and known.family == r.family and _newer(r, known)):
                self._by_key[key] = r
        self.nodes[r.node_id] = Node(id=r.node_id, kind="document", title=r.title, doc=r.node_id, path=r.path)
        for s in r.sections:
            self.nodes[s.node_id] = Node(id=s.node_id, kind="section", title=s.heading_path[-1], doc=r.node_id,
                                         path=r.path, heading_path=s.heading_path, line_start=s.line_start,
                                         line_end=s.line_end)
        for p in r.passages:
            self.nodes[p.passage_id] = Node(id=p.passage_id, kind="passage", title=" > ".join([r.title, *p.heading_path]),
                                            doc=r.node_id, path=r.path, heading_path=p.heading_path,
                                            line_start=p.line_start, line_end=p.line_end)
            self._passage_doc[p.passage_id] = (r, p.heading_path)

    def _add_claim(self, claim: ClaimRecord) -> list[Edge]:
        """A claim node and a `cites` edge to each passage whose lines hold some of its evidence."""
        self.nodes[claim.id] = Node(id=claim.id, kind="claim", title=claim.text)
        out = []
        for ev in claim.evidence:
            for r in self.records:
                if r.path != ev.path:
                    continue
                for p in r.passages:
                    if p.part == ev.part and p.line_start <= ev.line_end and ev.line_start <= p.line_end:
                        out.append(Edge(type="cites", source=claim.id, target=p.passage_id, via="claim evidence",
                                        path=ev.path, line_start=ev.line_start, line_end=ev.line_end,
                                        quote=claim.text[:200]))
        return out

    def _targets(self, ref: Reference) -> list[str]:
        target = self._by_key.get(ref.key)
        if target is None:
            label = f"ref:{ref.text}" + (f" §{', '.join(ref.sections)}" if ref.sections else "")
            return [label]
        wanted = ref.sections or ([ref.topic] if ref.topic else [])
        if not wanted:
            return [target.node_id]
        found = []
        for spec in wanted:
            match = topic_matches if spec == ref.topic and not ref.sections else section_matches
            hits = [s.node_id for s in target.sections if match(spec, s.heading_path[-1])]
            found += hits[:1] or [f"ref:{ref.text} §{spec}"]  # a named section the text lacks stays named
        return list(dict.fromkeys(found))

    def _resolve(self, r: DocumentRecord, stated: StatedEdge) -> list[Edge]:
        out = []
        edition = stated.target.key.startswith(EDITION_KEY)
        for target in self._edition_of(r, stated.target) if edition else self._targets(stated.target):
            external = target.startswith("ref:")
            if external and stated.type not in _TYPED:
                continue  # a filing number or an unknown code: nothing to point at
            if not external and self.nodes[target].doc == r.node_id:
                continue
            if external:
                self.nodes.setdefault(target, Node(id=target, kind="external", title=target[4:]))
            source, target = (target, stated.source) if stated.reverse else (stated.source, target)
            newer = self.document(self.nodes[source].doc) if self.nodes[source].doc else None
            out.append(Edge(type=stated.type, source=source, target=target, via=stated.via, path=r.path,
                            line_start=stated.line_start, line_end=stated.line_end, quote=stated.quote,
                            effective=date_phrase(newer.effective if newer else None), part=stated.part))
        return out

    def _edition_of(self, r: DocumentRecord, ref: Reference) -> list[str]:
        """The edition of `r`'s own family a self-mark names ("replaced by the 2019 edition": the member whose
        edition, label or effective date says 2019), or, when it names none, the next edition after `r`."""
        family = (r.family or "").strip().lower() or None
        mine = title_family(r.title)
        members = [m for m in self.records if m.node_id != r.node_id and (
            (family and (m.family or "").strip().lower() == family) or (not family and mine
                                                                      and title_family(m.title) == mine))]
        hint = ref.key[len(EDITION_KEY):]

        def order(m: DocumentRecord) -> tuple:
            return m.effective_date or date.min, _edition_key(m.edition or edition_hint(m.title))

        if hint:
            found = [m for m in members if any(x == hint or x.startswith(f"{hint}-") for x in (
                m.edition, edition_hint(m.title), m.effective_date and m.effective_date.isoformat()) if x)]
        else:
            found = sorted((m for m in members if order(m) > order(r)), key=order)
        return [found[0].node_id] if found else [f"ref:{ref.text}"]

    def _edition_order(self) -> list[Edge]:
        """Documents of one family, ordered by effective date then edition: a front matter `family:`, or
        titles equal but for what varies between editions, when each edition is dated or numbered apart."""
        families: dict[str, list[DocumentRecord]] = {}
        by_title: dict[str, list[DocumentRecord]] = {}
        for r in self.records:
            if r.family:
                families.setdefault(r.family.strip().lower(), []).append(r)
            elif title_family(r.title):
                by_title.setdefault(title_family(r.title), []).append(r)
        related = {(e.source.split("#")[0], self.nodes[e.target].doc) for e in self.edges
                   if e.type in ("supersedes", "amends") and self.nodes[e.target].doc}
        for key, members in by_title.items():
            marks = [(r.effective_date, r.edition or edition_hint(r.title)) for r in members]
            ids = {r.node_id for r in members}
            if any(a in ids and b in ids for a, b in related):
                continue  # the editions say what each replaces: nothing to infer
            if len(members) > 1 and all(any(m) for m in marks) and len(set(marks)) == len(marks):
                families[f"title:{key}"] = [r.model_copy(update={"edition": r.edition or edition_hint(r.title)})
                                            for r in members]
        stated = {(e.source.split("#")[0], self.nodes[e.target].doc) for e in self.edges
                  if e.type == "supersedes" and self.nodes[e.target].doc}
        out = []
        for name, members in families.items():
            if all(r.effective_date for r in members):
                members.sort(key=lambda r: (r.effective_date, _edition_key(r.edition)))
            elif all(r.edition for r in members):
                members.sort(key=lambda r: _edition_key(r.edition))
            else:
                continue  # some dated, some not: no order to trust
            for older, newer in pairwise(members):
                if {(newer.node_id, older.node_id), (older.node_id, newer.node_id)} & stated:
                    continue  # the documents say it themselves
                out.append(Edge(type="supersedes", source=newer.node_id, target=older.node_id, via="edition order",
                                path=newer.path, line_start=1, line_end=1, effective=date_phrase(newer.effective),
                                quote=f"family {newer.family or name[6:]}: edition {newer.edition or newer.effective} "
                                      f"after {older.edition or older.effective}"))
        return out

    # -- reading --------------------------------------------------------------------------------

    def document(self, node_or_doc_id: str) -> DocumentRecord | None:
        return self._by_node.get(node_or_doc_id) or self._by_doc_id.get(node_or_doc_id)

    def edges_of(self, node: str, names: Iterable[str] | None = None) -> list[tuple[str, Edge]]:
        """(name as seen from `node`, edge) for every edge at `node`, inverses derived."""
        wanted = set(names) if names else None
        out = []
        for e in self._out.get(node, []):
            if wanted is None or e.type in wanted:
                out.append((e.type, e))
        for e in self._in.get(node, []):
            if wanted is None or INVERSE[e.type] in wanted:
                out.append((INVERSE[e.type], e))
        return out

    def status(self, doc: str, heading_path: list[str] | None = None) -> PassageStatus:
        """Current, superseded or amended, for a passage of `doc` (node id or doc_id) under `heading_path`.

        Worked out once per place (the graph does not change once built; every search asks again for each
        hit, and a long document's sections would be walked each time)."""
        key = (doc, tuple(heading_path or ()))
        if key not in self._statuses:
            self._statuses[key] = self._status(doc, heading_path)
        return self._statuses[key]

    def _status(self, doc: str, heading_path: list[str] | None) -> PassageStatus:
        record = self.document(doc)
        if record is None:
            return PassageStatus()
        heading_path = heading_path or []
        places = [record.node_id] + [s.node_id for s in record.sections
                                     if s.heading_path == heading_path[: len(s.heading_path)]]
        hits = [e for place in places for e in self._in.get(place, []) if e.type in _TYPED]
        superseding = [e for e in hits if e.type == "supersedes"]
        chosen = superseding or hits
        if not chosen:
            return PassageStatus()
        by = list(dict.fromkeys(e.source.split("#")[0] for e in chosen))
        titles = [self.nodes[b].title if b in self.nodes else b for b in by]
        effective = next((e.effective for e in chosen if e.effective), None)
        return PassageStatus(state="superseded" if superseding else "amended", by=by, by_titles=titles,
                             effective=effective, via_edges=chosen)

    def passage_status(self, passage_id: str, doc: str | None = None,
                       heading_path: list[str] | None = None) -> PassageStatus:
        if passage_id in self._passage_doc:
            record, hp = self._passage_doc[passage_id]
            return self.status(record.node_id, hp)
        return self.status(doc, heading_path) if doc else PassageStatus()

    def has_superseded(self) -> bool:
        return any(e.type == "supersedes" and not e.target.startswith("ref:") for e in self.edges)

    def status_at(self, path: str, line: int, record: int | None = None) -> PassageStatus:
        """The status of the passage holding `line` of the file at `path` (a citation's place)."""
        for r in self.records:
            if r.path == path and r.record == record:
                hp = next((p.heading_path for p in r.passages if p.line_start <= line <= p.line_end), [])
                return self.status(r.node_id, hp)
        return PassageStatus()

    def edge_names(self) -> list[str]:
        return sorted({e.type for e in self.edges} | {INVERSE[e.type] for e in self.edges})


def _renamed(r: DocumentRecord, new_id: str) -> DocumentRecord:
    def swap(node: str) -> str:
        return new_id + node[len(r.node_id):] if node == r.node_id or node.startswith(r.node_id + "#") else node

    return r.model_copy(update={
        "node_id": new_id,
        "sections": [s.model_copy(update={"node_id": swap(s.node_id)}) for s in r.sections],
        "edges": [e.model_copy(update={"source": swap(e.source)}) for e in r.edges]})


def _newer(a: DocumentRecord, b: DocumentRecord) -> bool:
    """Whether edition `a` of a family comes after `b`: by effective date when both have one, else by edition."""
    if a.effective_date and b.effective_date and a.effective_date != b.effective_date:
        return a.effective_date > b.effective_date
    try:
        return _edition_key(a.edition) > _edition_key(b.edition)
    except TypeError:  # "rev A" against "2": no order to trust
        return False


def _edition_key(edition: str | None) -> tuple:
    if not edition:
        return ()
    return tuple(int(x) if x.isdigit() else x for x in re.findall(r"\d+|[A-Za-z]+", edition))

