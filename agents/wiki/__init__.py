"""The compiled wiki: pages whose statements are claims tied to exact source lines by hash.

A claim's evidence is `SOURCE#Lx-Ly` plus the sha256 of exactly those lines and
hashes of a few lines around them, so `check` can say ok / relocated / stale /
unresolved by reading files, with no model call. A report's `report.md` gets the
same sidecar, so an old report can be checked against its sources too.
"""
