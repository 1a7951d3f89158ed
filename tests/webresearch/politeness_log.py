"""What a server's own request log says about politeness: requests in flight, gaps between starts."""

from __future__ import annotations

from tests.webresearch.local_site import Request


def most_in_flight(requests: list[Request]) -> int:
    events = sorted([(r.start, 1) for r in requests] + [(r.end, -1) for r in requests], key=lambda e: (e[0], e[1]))
    busy = most = 0
    for _, step in events:  # at equal times an end comes before a start
        busy += step
        most = max(most, busy)
    return most


def start_gaps(requests: list[Request]) -> list[float]:
    starts = sorted(r.start for r in requests)
    return [b - a for a, b in zip(starts, starts[1:])]


# The gate spaces request starts at the fetchers; the server logs each start when its handler runs.
# Between the two a busy machine may deschedule a process for a moment, which shortens one gap (and
# lengthens another): on a 2-core machine, at most 7 ms short of the interval at load 12, 25 ms at
# load 20. Without the gate, the starts of a slot's worth of requests are a few ms apart.
JITTER_S = 0.03


def assert_polite(requests: list[Request], max_in_flight: int, min_interval_s: float) -> None:
    """The server's log shows the limits held: never more in flight, no two starts closer than the
    interval (less the scheduling jitter); and the in-flight limit was reached, so it was tested."""
    assert requests and all(r.end for r in requests), "every request has ended"
    spans = [(round(r.start, 3), round(r.end, 3)) for r in requests]
    assert most_in_flight(requests) == max_in_flight, spans
    gaps = start_gaps(requests)
    assert min(gaps) >= min_interval_s - JITTER_S, [round(g, 3) for g in gaps]
