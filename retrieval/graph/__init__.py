"""The evidence graph: which documents supersede, amend, refer to and attach to which, found at ingest.

No model calls: edges come from front matter, header lines, reference text and
edition order (`extract`), are stored next to the collection (`store`), and are
read back as an `EvidenceGraph` (`view`) that answers which passages are current
and supports `locate` / `expand` (`navigate`).
"""
