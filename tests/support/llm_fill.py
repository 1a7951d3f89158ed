"""Replies built from the text of a chat request, for the stand-in endpoint (`llm_endpoint.py`).

`fill(schema, prompt)` returns a value valid against `schema` (a pydantic-made JSON schema:
`$ref`/`$defs`, `anyOf`, enums, min/max items and lengths) whose content comes from the request:
strings are sentences of the numbered passages in the prompt (`[n] title` + `<document>...`)
followed by their `[n]`, integers that name sources are numbers present in the prompt, headings
and focus aspects are headings the prompt lists, lists have 1-3 items (or as many as a
`max_<field>: N` line in the prompt asks for), enums take a value of the enum. A few field names
get the reply a step needs to move on (a writer's next question from its focus list and its
thank-you once the list is done; a polish that keeps the section; a tool choice that writes once
`min_calls` tools ran), so every raystorm step gets a well-formed reply about real passages.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

_SOURCE = re.compile(r"^\[(\d+)\][^\n]*\n<document>\n(.*?)\n</document>", re.DOTALL | re.MULTILINE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9-]+")
_STOP = set("""a an and are as at be by for from has have how in is it its of on or that the this to was what
when where which who why with does do did their there these those about into over under than then also not
known say says said sources source question topic""".split())
_SCHEMA_INTRO = "validates against this JSON schema:\n"
_CITING = re.compile(r"\[n\]|cit|source|sentence", re.IGNORECASE)
_FALLBACK_HEADINGS = ["Background", "Coverage", "Eligibility", "Claims", "Exclusions", "History",
                      "Changes", "Costs", "Limits", "Procedures"]


@dataclass
class Prompt:
    """What a request says: its system and last user message, the numbered passages, a few labelled lines."""

    system: str
    user: str
    sources: dict[int, str]
    data: dict | None  # the user message, when it is a JSON object (steps that render their input as JSON)
    used: set[str] = field(default_factory=set)  # headings and names given out in this reply

    @classmethod
    def of(cls, messages: list[dict]) -> "Prompt":
        def text(m: dict) -> str:
            c = m.get("content")
            return c if isinstance(c, str) else " ".join(p.get("text", "") for p in c or [] if isinstance(p, dict))

        system = "\n".join(text(m) for m in messages if m.get("role") == "system")
        users = [text(m) for m in messages if m.get("role") == "user"]
        # a repair turn asks again about the first user message: that one holds the input
        user = users[0] if users else ""
        sources = {int(n): body for n, body in _SOURCE.findall("\n".join(users))}
        try:
            data = json.loads(user)
        except ValueError:
            data = None
        return cls(system, user, sources, data if isinstance(data, dict) else None)

    def line(self, label: str) -> str | None:
        """The value of a `Label: value` line of the user message."""
        m = (re.search(rf"^{re.escape(label)}:[ \t]*(.+)$", self.user, re.MULTILINE | re.IGNORECASE)
             or re.search(rf"^#+[ \t]*(?:main[ \t]+)?{re.escape(label)}[ \t]*\n+(?!#)(.+)$", self.user,
                          re.MULTILINE | re.IGNORECASE))  # a "## Main question" block
        if m:
            return m.group(1).strip()
        if self.data is not None and isinstance(self.data.get(label.lower()), (str, int)):
            return str(self.data[label.lower()])
        return None

    @property
    def topic(self) -> str:
        return self.line("Topic") or self.line("Question") or "the topic"

    def count_for(self, name: str) -> int | None:
        """N from a `max_<name>: N` or `<name>_per_...: N` line, e.g. max_personas, questions_per_persona."""
        keys = {"personas": ["max_personas"], "queries": ["max_queries"], "focus": ["questions_per_persona"],
                "basic_focus": ["questions_per_persona"]}.get(name, [f"max_{name}"])
        for key in keys:
            value = self.line(key)
            if value and value.isdigit():
                return int(value)
        return None

    def sentences(self) -> list[tuple[int, str]]:
        """(n, sentence) of every passage, in order; markdown headings and bare labels left out."""
        out = []
        for n, body in sorted(self.sources.items()):
            for block in re.split(r"\n\s*\n|\n(?=\s*(?:[-*+]|\d+\.)\s)", body):  # paragraphs and list items
                lines = [x for x in block.splitlines() if not x.lstrip().startswith(("#", "|"))]
                block = re.sub(r"^\s*(?:[-*+]|\d+\.)\s+", "", " ".join(" ".join(lines).split()))
                block = block.replace("**", "").replace("__", "")
                for s in _SENTENCE.split(block):
                    s = s.strip()
                    if len(_WORD.findall(s)) >= 4:
                        out.append((n, s))
        return out

    def relevant_sentences(self, about: str, k: int) -> list[tuple[int, str]]:
        """The `k` sentences sharing most words with `about` (the topic's words count half), from
        different passages, best first."""
        topic = set(keywords(self.topic))
        want = set(keywords(about)) - topic
        scored = [(2 * len(want & set(keywords(s))) + len(topic & set(keywords(s))), -i, n, s)
                  for i, (n, s) in enumerate(self.sentences())]
        scored.sort(reverse=True)
        picked, passages = [], set()
        for _, _, n, s in scored:
            if n not in passages:
                picked.append((n, s))
                passages.add(n)
            if len(picked) == k:
                break
        return picked

    def headings(self) -> list[str]:
        """Heading-like phrases the prompt lists: focus aspects, document headings, a draft outline."""
        found: list[str] = []
        for label in ("Your focus", "Source document headings", "Subsections", "Section"):
            value = self.line(label)
            if value and value != "(none)":
                found += [h.strip() for h in value.split(";")]
        found += re.findall(r"^\s*- ([^:\n]{3,60})$", self.user, re.MULTILINE)  # a draft outline's lines
        for m in re.finditer(r"^- [^:\n]+: (.+)$", self.user, re.MULTILINE):  # related documents' headings
            found += [h.strip() for h in m.group(1).split(";")]
        if self.data is not None:
            found += [str(self.data[k]) for k in ("heading",) if isinstance(self.data.get(k), str)]
        clean = []
        for h in found:
            h = re.sub(r"^(Section|Part|Article)\s+\d+\.?\s*", "", h).strip(" .*#")
            if 2 <= len(h) <= 60 and len(h.split()) <= 5 and h.lower() not in {c.lower() for c in clean}:
                clean.append(h)
        return clean + [h for h in _FALLBACK_HEADINGS if h.lower() not in {c.lower() for c in clean}]

    def fresh_heading(self) -> str:
        for h in self.headings():
            if h.lower() not in self.used and h.lower() != self.topic.lower():
                self.used.add(h.lower())
                return h
        n = len(self.used) + 1
        self.used.add(f"part {n}")
        return f"Part {n}"


def keywords(text: str) -> list[str]:
    return [w for w in (x.lower() for x in _WORD.findall(text)) if w not in _STOP and len(w) > 2]


def cited_text(prompt: Prompt, about: str, k: int = 2) -> str:
    """Sentences about `about` from the passages, each followed by its passage's [n]."""
    picked = prompt.relevant_sentences(about, k)
    if not picked:
        return prompt.topic
    return " ".join(f"{s}[{n}]" for n, s in picked)


def fill(schema: dict, prompt: Prompt) -> object:
    """A value of `schema` (the root, with its `$defs`) made from `prompt`."""
    return _Filler(schema, prompt).value(schema, "")


def tool_call(tools: list[dict], messages: list[dict]) -> tuple[str, dict]:
    """(tool name, arguments) for a function-calling request: the offered tools in turn, one per
    earlier call in the conversation, then the one named write* once the prompt's "at least N" calls
    were made (or every other tool was called)."""
    prompt = Prompt.of(messages)
    functions = [t.get("function", t) for t in tools]
    done = sum(1 for m in messages if m.get("role") == "tool")
    least = re.search(r"at least (\d+)", prompt.user)
    writing = [f for f in functions if f.get("name", "").startswith("write")]
    others = [f for f in functions if f not in writing] or functions
    if writing and done >= (int(least.group(1)) if least else len(others)):
        chosen = writing[0]
    else:
        chosen = others[done % len(others)]
    return chosen["name"], fill(chosen.get("parameters") or {"type": "object", "properties": {}}, prompt)


def schema_in_system(system: str) -> dict | None:
    """The JSON schema raystorm's system message carries (text mode: no response_format)."""
    at = system.find(_SCHEMA_INTRO)
    if at < 0:
        return None
    try:
        value, _ = json.JSONDecoder().raw_decode(system, at + len(_SCHEMA_INTRO))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


class _Filler:
    def __init__(self, root: dict, prompt: Prompt):
        self.root = root
        self.p = prompt

    def resolve(self, node: dict) -> dict:
        while "$ref" in node:
            name = node["$ref"].rsplit("/", 1)[-1]
            node = {**self.root.get("$defs", {}).get(name, {}), **{k: v for k, v in node.items() if k != "$ref"}}
        for key in ("anyOf", "oneOf"):
            if key in node:
                options = [o for o in node[key] if o.get("type") != "null"] or node[key]
                node = {**{k: v for k, v in node.items() if k != key}, **self.resolve(options[0])}
        if "allOf" in node:
            merged = {k: v for k, v in node.items() if k != "allOf"}
            for part in node["allOf"]:
                merged.update(self.resolve(part))
            node = merged
        return node

    def value(self, node: dict, name: str) -> object:
        node = self.resolve(node)
        if "enum" in node:
            return self.choice(node["enum"], name)
        if "const" in node:
            return node["const"]
        kind = node.get("type")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "string")
        if kind == "object" or "properties" in node:
            return self.obj(node, name)
        if kind == "array":
            return self.array(node, name)
        if kind == "integer":
            return self.integer(node, name)
        if kind == "number":
            low, high = node.get("minimum", 0.0), node.get("maximum", 1.0)
            return round(low + 0.8 * (high - low), 3)
        if kind == "boolean":
            return not name.startswith(("stop", "refus", "skip"))
        return self.string(node, name)

    def obj(self, node: dict, name: str) -> dict:
        props = node.get("properties")
        if not props:  # free-form arguments: what a search tool takes
            about = f"{self.p.topic} {self.p.line('Heading') or (self.p.data or {}).get('heading', '')}".strip()
            return {"topic": about} if self._action == "interview_agents" else {"query": about}
        out: dict = {}
        for key, sub in props.items():
            out[key] = self.value(sub, key)
            if key == "action":
                self._action = out[key]
        return out

    _action: object = None

    def array(self, node: dict, name: str) -> list:
        items = node.get("items", {"type": "string"})
        asked = self.p.count_for(name)
        # an outline of four sections with one subsection each; other lists 1-3 items unless the prompt asks
        n = asked if asked is not None else {"sections": 4, "subsections": 1}.get(name, 2)
        n = max(node.get("minItems", 0), min(n, node.get("maxItems", n)))
        item = self.resolve(items)
        if item.get("type") == "integer" and self.p.sources:
            numbers = self.source_numbers(name)
            return numbers[: max(n, 1)]
        out = []
        for _ in range(n):
            v = self.value(items, name)
            if v not in out:
                out.append(v)
        return out

    def source_numbers(self, name: str) -> list[int]:
        about = self.p.line("Question") or self.p.line("Query") or self.p.topic
        numbers = [n for n, _ in self.p.relevant_sentences(about, 3)] or sorted(self.p.sources)[:1]
        if "ind" in name.lower() and min(self.p.sources, default=1) >= 1:
            numbers = [n - 1 for n in numbers]  # 0-based positions
        return numbers

    def integer(self, node: dict, name: str) -> int:
        if self.p.sources and re.search(r"cit|source|passage|ind|^n$", name, re.IGNORECASE):
            return self.source_numbers(name)[0]
        low = node.get("minimum", node.get("exclusiveMinimum", 0) + (1 if "exclusiveMinimum" in node else 0))
        return max(low, min(1, node.get("maximum", 1)))

    def choice(self, options: list, name: str) -> object:
        data = self.p.data or {}
        if "write" in options and "min_calls" in data:  # a tool choice: tools until min_calls, then write
            done = len(data.get("observations") or [])
            if done >= int(data["min_calls"]):
                return "write"
            tools = [o for o in options if o != "write" and (o != "interview_agents" or data.get("can_interview"))]
            return tools[done % len(tools)]
        return options[0]

    def string(self, node: dict, name: str) -> str:
        key = name.lower()
        p = self.p
        if key == "question":
            text = self.next_question()
        elif key == "topic" and p.line("Section to write"):  # a tool's subject: the section of the topic
            text = f"{p.topic} {p.line('Section to write')}"
        elif key in ("query", "queries"):
            asked = p.line("Question") or p.line("Query") or p.line("Section to write") or p.topic
            text = " ".join(dict.fromkeys(keywords(f"{p.topic} {asked}")))[:100] or p.topic
        elif key in ("heading", "subsections", "focus", "basic_focus", "sections"):
            text = p.fresh_heading()
        elif key == "name":
            text = f"{p.fresh_heading()} researcher"
        elif key == "description":
            text = f"Wants to know what the documents say about {p.topic}."
        elif "short" in key or "span" in key:  # a span copied from the answer: a number or the first words
            answer = re.sub(r"\[\d+(?:,\s*\d+)*\]", "", str((p.data or {}).get("answer") or p.line("Answer") or ""))
            number = re.search(r"\b\d[\d,.]*(?:\s+[a-z]+)?", answer)
            text = number.group(0) if number else " ".join(answer.split()[:4])
        elif key == "text" and "Section text:\n" in p.user:  # polish: nothing in it repeats, keep it
            text = p.user.split("Section text:\n", 1)[1].strip()
        elif p.sources and (key in ("answer", "text", "lead", "summary", "report", "content")
                            or _CITING.search(node.get("description", ""))):
            about = " ".join(filter(None, [p.line("Question"), p.line("Section"), p.line("Query"),
                                           (p.data or {}).get("heading")]))
            text = cited_text(p, about or p.topic)
        else:
            first = p.sentences()
            text = first[0][1] if first else f"The documents describe {p.topic}."
        limit = node.get("maxLength")
        if limit and len(text) > limit:
            text = text[:limit].rsplit(" ", 1)[0] or text[:limit]
        return text or p.topic[: limit or None]

    def next_question(self) -> str:
        """The writer's question on the next aspect of its focus; its thank-you once every aspect was asked."""
        p = self.p
        focus = [f.strip() for f in (p.line("Your focus") or "").split(";") if f.strip()]
        asked = len(re.findall(r"^You: ", p.user, re.MULTILINE))
        done = re.search(r'exactly\s+"([^"]+)"', p.system)
        if asked < len(focus):
            return f"What do the documents say about the {focus[asked].lower()} of {p.topic}?"
        if done and (focus or asked >= 3):
            return done.group(1)
        return f"What else is known about {p.topic}?"
