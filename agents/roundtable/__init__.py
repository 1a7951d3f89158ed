"""Co-STORM's roundtable: experts take turns over the corpus, a moderator asks from what was retrieved but not
yet used, the user may steer, and every cited snippet lands under a concept of a mind map that becomes the report.

The turn order (`engine.Roundtable`) is written once; each turn's work is a stage function (`stages`) run through
a runtime's `stage(...)`: in this process (`agents.runtime.LocalRuntime`) or on the cluster's expert actors.
"""
