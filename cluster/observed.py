"""A language model and a retriever that tell a callback what they do as they do it: the events a
streamed answer is made of (each search, each model step in brief)."""

from __future__ import annotations


VERB = {"superseded": "supersedes", "amended": "amends"}  # a passage's state, said of the newer document


class ObservedModel:
    """A language model that tells `observe` of each step it ran and what came out (in brief)."""

    def __init__(self, inner, observe):
        self._inner, self._observe = inner, observe

    async def run(self, step, inp):
        out = await self._inner.run(step, inp)
        brief = {k: v for k, v in out.model_dump(mode="json").items() if isinstance(v, (str, int, float, bool))}
        self._observe({"event": "step", "step": step.name,
                       "output": {k: (v[:300] if isinstance(v, str) else v) for k, v in brief.items()}})
        return out

    def __getattr__(self, name):
        return getattr(self._inner, name)


class ObservedRetriever:
    """A retriever that tells `observe` of each search (a hop's query) as it is sent, and what it found."""

    def __init__(self, inner, observe):
        self._inner, self._observe = inner, observe

    async def search(self, query, *args, **kwargs):
        self._observe({"event": "search", "query": query})
        hits = await self._inner.search(query, *args, **kwargs)
        # how many passages came back, and which documents they are: what the page tells a reader of a hop
        replaced = [f"{' and '.join(h.status.by_titles or h.status.by)} {VERB.get(h.status.state, h.status.state)} "
                    f"{h.passage.title}" for h in hits if h.status is not None and h.status.state != "current"]
        self._observe({"event": "found", "query": query, "count": len(hits),
                       "titles": list(dict.fromkeys(h.passage.title for h in hits))[:5],
                       "replaced": list(dict.fromkeys(replaced))})
        return hits

    def __getattr__(self, name):
        return getattr(self._inner, name)
