"""Research beyond the corpus: web search and fetched pages.

- `providers`: one adapter per search engine's HTTP API (SearXNG, Tavily, Brave, Serper, Bing, You.com)
- `guard`: which URLs may be requested at all (no loopback, private, metadata addresses by default)
- `politeness`: per-domain limits, a gate every fetcher of the process (or cluster) shares
- `download`, `robots`, `extract`: one page over HTTP, robots.txt, its main text
- `fetch`: a page fetched, cached and kept as a snapshot (`snapshots`), never raising for one page
- `research`, `hybrid`, `records`, `refetch`: web research for reports and answers on top of these

Nothing here imports ray; `actors/fetcher.py` hosts the downloading part on a pool of actors.
"""
