"""Answers to Stanford STORM's own prompts (knowledge-storm 1.1, DSPy 2.4), for the stand-in endpoint.

STORM's prompts are plain text written by DSPy, not JSON schemas: an instruction, a "Follow the
following format." block (left out where STORM turns guidelines off), then the inputs as
`Prefix: value` lines and the prefix of the field the model must write. `answer_storm_prompt`
recognises each prompt by its instruction and replies in the format STORM parses, from the text
of the request: related topics (no URLs, so STORM fetches nothing), personas as `1. name:
description` lines, a writer's question, search queries as `- query` lines, an expert's answer
whose sentences come from the numbered snippets with their `[n]`, outlines as `# heading` lines,
sections citing `[n]`, a lead section from the draft's cited sentences, a de-duplicated page.
Chain-of-thought prompts get the rest of the reasoning line and then the output field's prefix,
so DSPy needs no second call. Anything else returns None (the endpoint's next answerer).

Register it with the endpoint, or run the endpoint with it (same flags as `llm_endpoint.py`):

    from tests.support.llm_endpoint import PLAIN_TEXT_ANSWERERS
    PLAIN_TEXT_ANSWERERS.append(answer_storm_prompt)

    python -m tests.support.storm_prompts --port 0 --latency fixed:1000
"""

from __future__ import annotations

import re
from collections.abc import Callable

from tests.support.llm_fill import keywords

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9-]+")
_CITE = re.compile(r"\[\d+\]")
_HEADINGS = ["Overview", "History", "Coverage", "Eligibility", "Claims", "Exclusions", "Costs and limits"]
_PERSPECTIVES = [
    ("Policyholder advocate", "focuses on the rights, duties and deadlines of policyholders under {t}."),
    ("Claims specialist", "focuses on how claims under {t} are reported, assessed and paid."),
    ("Regulatory historian", "focuses on how {t} changed over time and which bulletins amended or superseded it."),
    ("Underwriting analyst", "focuses on eligibility, limits, deductibles and premiums of {t}."),
    ("Industry journalist", "focuses on how {t} compares with similar products and why it matters."),
]
# words of a persona's or a question's framing, never a subject to ask about
_FRAMING = set("""focuses focusing broadly covering basic fact facts writer reader know first should
wikipedia editor page article""".split())
_MARKUP = re.compile(r"\*\*|__|`")
_ITEM = re.compile(r"^\s*(?:[-*+>]|\d+[.)])\s+")
_LABEL = re.compile(r"^[A-Z][\w ]{0,30}:\s")  # "Issued: April 19, 2021": a line of its own


def _text(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return " ".join(p.get("text", "") for p in content or [] if isinstance(p, dict))


def query_block(prompt: str) -> str:
    """The filled-in part of a DSPy prompt: what follows its last `---` separator."""
    return re.split(r"\n---\n", prompt)[-1].strip("\n")


def fields(block: str, prefixes: list[str]) -> dict[str, str]:
    """The values after each of `prefixes` (in that order) in `block`, each up to the next prefix."""
    spots = []
    start = 0
    for prefix in prefixes:
        i = block.find(prefix, start)
        if i < 0:
            continue
        spots.append((prefix, i))
        start = i + len(prefix)
    out = {}
    for k, (prefix, i) in enumerate(spots):
        end = spots[k + 1][1] if k + 1 < len(spots) else len(block)
        out[prefix] = block[i + len(prefix):end].strip()
    return out


def sentences(text: str) -> list[str]:
    """Prose sentences of a snippet: markdown headings, table rows and short fragments left out."""
    units: list[str] = []  # paragraphs, each list item and each "Label: value" line on its own
    for block in re.split(r"\n\s*\n", _MARKUP.sub("", text)):
        lines: list[str] = []
        for line in block.splitlines():
            line = line.strip()
            if not line or line.startswith(("#", "|", "---")):
                continue
            if (_ITEM.match(line) or _LABEL.match(line)) and lines:
                units.append(" ".join(lines))
                lines = []
            lines.append(_ITEM.sub("", line).strip())
            if _LABEL.match(line):
                units.append(lines.pop())
        if lines:
            units.append(" ".join(lines))
    out = []
    for unit in units:
        for s in _SENTENCE.split(unit):
            s = _CITE.sub("", s).strip()
            if len(_WORD.findall(s)) >= 5 and s[-1:] in ".!?":
                out.append(s)
    return out


def numbered(info: str, pattern: str) -> dict[int, str]:
    """`{n: snippet}` from STORM's numbered information (`[n]: text` or `[n]\\ntext`)."""
    parts = re.split(pattern, "\n" + info)
    return {int(parts[i]): parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}


def cited(sources: dict[int, str], about: str, k: int, context: str = "") -> list[str]:
    """Up to `k` sentences sharing most words with `about` (then `context`), one per source first, each
    ending in its [n]."""
    want, near = set(keywords(about)), set(keywords(context))
    scored = []
    for n, body in sources.items():
        for i, s in enumerate(sentences(body)):
            words = set(keywords(s))
            scored.append((2 * len(want & words) + len(near & words), -n, -i, n, s))
    scored.sort(reverse=True)
    picked, used, seen = [], set(), set()
    for rounds in (0, 1):  # first one sentence per source, then the best of the rest
        for _, _, _, n, s in scored:
            if len(picked) == k:
                break
            if s in seen or (rounds == 0 and n in used):
                continue
            picked.append(f"{s}[{n}]")
            used.add(n)
            seen.add(s)
    return picked


def title_case(words: list[str]) -> str:
    return " ".join(w if w.isupper() else w.capitalize() for w in words)


def aspect(text: str, avoid: set[str], size: int = 2) -> list[str]:
    """The first `size` keywords of `text` not in `avoid`."""
    out = []
    for w in keywords(text):
        if w not in avoid and w not in out:
            out.append(w)
        if len(out) == size:
            break
    return out


# Each answerer gets the prompt's query block and returns the reply STORM parses.

def related_topics(block: str) -> str:
    topic = fields(block, ["Topic of interest:", "Reasoning:"]).get("Topic of interest:", "the topic")
    words = keywords(topic)
    lines = [f"- {topic} history", f"- {title_case(words[:2])} regulation", f"- {title_case(words[-2:])} claims"]
    return ("produce the related_topics. We list pages on subjects close to the topic.\nRelated Topics: "
            + "\n".join(lines))


def personas(block: str) -> str:
    topic = fields(block, ["Topic of interest:", "Wiki page outlines"]).get("Topic of interest:", "the topic")
    lines = [f"{i}. {name}: {desc.format(t=topic)[0].upper()}{desc.format(t=topic)[1:]}"
             for i, (name, desc) in enumerate(_PERSPECTIVES, start=1)]
    return "produce the personas. We pick editors who each cover one side of the topic.\nPersonas: " + "\n".join(lines)


def question(block: str) -> str:
    got = fields(block, ["Topic you want to write:", "Your persona besides being a Wikipedia writer:",
                         "Conversation history:", "Reasoning:"])
    topic = got.get("Topic you want to write:", "the topic")
    persona = got.get("Your persona besides being a Wikipedia writer:", "")
    conv = got.get("Conversation history:", "N/A")
    asked = [line[5:] for line in conv.splitlines() if line.startswith("You: ")]
    answers = [line[8:] for line in conv.splitlines() if line.startswith("Expert: ")]
    avoid = set(keywords(topic)) | {w for q in asked for w in keywords(q)} | _FRAMING
    focus = persona.split(":", 1)[-1]
    if not asked:
        ask = f"What are the basic facts about {topic} that a reader should know first?"
    else:
        terms = aspect(focus, avoid) or aspect(" ".join(answers[-1:]), avoid) or [f"point {len(asked) + 1}"]
        ask = f"What does {topic} say about {' and '.join(terms)}?"
    return f"produce the question. We ask about what the conversation has not covered yet.\nQuestion: {ask}"


def queries(block: str) -> str:
    got = fields(block, ["Topic you are discussing about:", "Question you want to answer:", "Queries:"])
    topic = got.get("Topic you are discussing about:", "")
    ask = got.get("Question you want to answer:", topic).rstrip("?")
    return f"- {ask}\n- {topic} {' '.join(keywords(ask)[:4])}".strip()


def answer(block: str) -> str:
    got = fields(block, ["Topic you are discussing about:", "Question:", "Gathered information:", "Now give your response."])
    sources = numbered(got.get("Gathered information:", ""), r"\n\[(\d+)\]: ")
    picked = cited(sources, got.get("Question:", ""), 3, got.get("Topic you are discussing about:", ""))
    if not picked:
        return "I cannot answer this question based on the available information."
    return " ".join(picked)


def draft_outline(block: str) -> str:
    topic = fields(block, ["The topic you want to write:", "Write the Wikipedia page outline:"]).get(
        "The topic you want to write:", "")
    words = set(keywords(topic))
    first = [h for h in _HEADINGS if set(keywords(h)) & words]
    order = first + [h for h in _HEADINGS if h not in first]
    return "\n".join(f"# {h}" for h in order[:5])


def refined_outline(block: str) -> str:
    got = fields(block, ["The topic you want to write:", "Conversation history:", "Current outline:",
                         "Write the Wikipedia page outline"])
    topic = got.get("The topic you want to write:", "")
    draft = [line.lstrip("#").strip() for line in got.get("Current outline:", "").splitlines()
             if line.startswith("# ")] or _HEADINGS[:4]
    subsections: dict[str, list[str]] = {h: [] for h in draft}
    avoid = set(keywords(topic)) | _FRAMING
    asked = [line[len("Wikipedia Writer: "):] for line in got.get("Conversation history:", "").splitlines()
             if line.startswith("Wikipedia Writer: ")]
    for i, ask in enumerate(asked):
        terms = aspect(ask, avoid)
        if not terms:
            continue
        # the draft heading sharing most words with the question, else the next one in turn
        best = max(draft, key=lambda h: len(set(keywords(h)) & set(terms)))
        heading = best if set(keywords(best)) & set(terms) else draft[i % len(draft)]
        sub = " and ".join(terms).capitalize()
        if sub.lower() != heading.lower() and sub not in subsections[heading]:
            subsections[heading].append(sub)
    lines = []
    for h in draft:
        lines.append(f"# {h}")
        lines += [f"## {s}" for s in subsections[h]]
    return "\n".join(lines)


def section(block: str) -> str:
    got = fields(block, ["The collected information:", "The topic of the page:", "The section you need to write:",
                         "Write the section with proper inline citations"])
    name = got.get("The section you need to write:", "Overview")
    sources = numbered(got.get("The collected information:", ""), r"\n\[(\d+)\]\n")
    picked = cited(sources, name, 4, got.get("The topic of the page:", ""))
    body = " ".join(picked) if picked else f"The sources say little about {name.lower()}."
    return f"# {name}\n{body}"


def lead_section(block: str) -> str:
    page = fields(block, ["The topic of the page:", "The draft page:", "Write the lead section:"]).get(
        "The draft page:", "")
    picked = []
    for part in re.split(r"^#+ .*$", page, flags=re.MULTILINE):
        first = next((s.strip() for s in re.split(r"(?<=\])\s+", part.strip())
                      if _CITE.search(s) and s.strip() not in picked), None)
        if first:
            picked.append(first)
        if len(picked) == 4:
            break
    return " ".join(picked) or "The draft page has no cited sentences."


def polished_page(block: str) -> str:
    page = fields(block, ["The draft article:", "Your revised article:"]).get("The draft article:", "")
    seen, out = set(), []
    for line in page.splitlines():
        if line.startswith("#"):
            out.append(line)
            continue
        kept = []
        for s in re.split(r"(?<=\])\s+", line):
            key = _CITE.sub("", s).strip().lower()
            if key and key not in seen:
                seen.add(key)
                kept.append(s)
        out.append(" ".join(kept))
    return "\n".join(out)


# (the instruction that marks a prompt, its answerer), checked in order: "Improve an outline" before
# the draft outline's "Write an outline", the persona writer before the plain one.
KINDS: list[tuple[str, Callable[[str], str]]] = [
    ("identify and recommend some Wikipedia pages on closely related subjects", related_topics),
    ("select a group of Wikipedia editors", personas),
    ("You are an experienced Wikipedia writer", question),
    ("You want to answer the question using Google search", queries),
    ("You are an expert who can use information effectively", answer),
    ("Improve an outline for a Wikipedia page", refined_outline),
    ("Write an outline for a Wikipedia page", draft_outline),
    ("Write a Wikipedia section based on the collected information", section),
    ("Write a lead section for the given Wikipedia page", lead_section),
    ("You are a faithful text editor", polished_page),
]


def storm_kind(prompt: str) -> str | None:
    """The name of the answerer for a STORM prompt, or None when the text is not one of STORM's prompts."""
    head = prompt.split("\n---\n", 1)[0]
    for marker, fn in KINDS:
        if marker in head:
            return fn.__name__
    return None


def answer_storm_prompt(messages: list[dict]) -> str | None:
    """The reply to a STORM prompt (the last user message), or None when it is not one."""
    users = [_text(m) for m in messages if m.get("role") == "user"]
    if not users:
        return None
    prompt = users[-1]
    kind = storm_kind(prompt)
    if kind is None:
        return None
    return dict((fn.__name__, fn) for _, fn in KINDS)[kind](query_block(prompt))


def main() -> None:
    from tests.support import llm_endpoint

    llm_endpoint.PLAIN_TEXT_ANSWERERS.append(answer_storm_prompt)
    llm_endpoint.main()


if __name__ == "__main__":
    main()
