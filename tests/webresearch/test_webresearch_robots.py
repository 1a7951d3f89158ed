"""robots.txt beyond Allow/Disallow: its Crawl-delay, and one read shared by the fetchers of a pool (no network)."""

from __future__ import annotations

import asyncio

from agents.web.download import FetchSettings
from agents.web.robots import RobotsBoard, RobotsFile, crawl_delay

UA = FetchSettings().user_agent  # raystorm/0.1 (+research)


def test_the_crawl_delay_for_our_agent_wins_over_the_one_for_any():
    assert crawl_delay(["User-agent: *", "Disallow: /private/", "Crawl-delay: 0.3"], UA) == 0.3
    ours = ["User-agent: other", "Crawl-delay: 9", "", "User-agent: googlebot", "User-agent: RayStorm",
            "Crawl-delay: 2 # for us", "User-agent: *", "Crawl-delay: 1"]
    assert crawl_delay(ours, UA) == 2.0


def test_no_usable_crawl_delay_reads_as_none():
    assert crawl_delay(["User-agent: other", "Crawl-delay: 9", "Disallow: /"], UA) == 0.0  # not ours
    assert crawl_delay(["User-agent: *", "Crawl-delay: soon", "Crawl-delay: -4"], UA) == 0.0
    # a user-agent line after a rule starts a new group: the delay below is only the other agent's
    assert crawl_delay(["User-agent: *", "Disallow: /x", "User-agent: other", "Crawl-delay: 5"], UA) == 0.0
    assert crawl_delay([], UA) == 0.0


def test_one_fetcher_reads_a_sites_robots_txt_and_the_others_wait_for_its_answer():
    async def run() -> None:
        board = RobotsBoard()
        assert await board.claim("pool1 http://a/robots.txt", 5.0) is None  # the first reads it
        waiting = asyncio.ensure_future(board.claim("pool1 http://a/robots.txt", 5.0))
        await asyncio.sleep(0.02)
        assert not waiting.done()
        await board.post("pool1 http://a/robots.txt", None)  # the reader got no answer: the next one reads it
        assert await waiting is None
        answer = RobotsFile(200, b"User-agent: *\nDisallow: /x\n")
        waiting = asyncio.ensure_future(board.claim("pool1 http://a/robots.txt", 5.0))
        await asyncio.sleep(0.02)
        await board.post("pool1 http://a/robots.txt", answer)
        assert await waiting == answer
        assert await board.claim("pool1 http://a/robots.txt", 5.0) == answer  # kept for the pool
        assert await board.claim("pool2 http://a/robots.txt", 5.0) is None  # another pool (run) reads its own
        board.forget("pool1 ")
        assert await board.claim("pool1 http://a/robots.txt", 5.0) is None

    asyncio.run(run())


def test_a_reader_that_never_posts_is_replaced_after_its_claim_time():
    async def run() -> None:
        board = RobotsBoard()
        assert await board.claim("p http://b/robots.txt", 0.1) is None  # ... and this reader dies
        assert await asyncio.wait_for(board.claim("p http://b/robots.txt", 0.1), 5.0) is None

    asyncio.run(run())


def test_an_answer_older_than_a_day_is_read_again():
    async def run() -> None:
        board = RobotsBoard(max_age_s=0.05)
        assert await board.claim("p http://c/robots.txt", 5.0) is None
        await board.post("p http://c/robots.txt", RobotsFile(404, b""))
        assert await board.claim("p http://c/robots.txt", 5.0) == RobotsFile(404, b"")
        await asyncio.sleep(0.06)
        assert await board.claim("p http://c/robots.txt", 5.0) is None
        assert board._answers == {}  # dropped, not only passed over

    asyncio.run(run())
