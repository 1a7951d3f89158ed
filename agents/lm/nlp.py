"""`TextToolkit`: the classical NLP that extractive steps are written with.

One object, passed to every `Step.extract(inp, nlp)`, so that steps share one
stemmer, one embedding cache and one definition of "a sentence" or "a keyword".
Deterministic; dense embeddings only when an `embed` callable is injected
(e.g. the retrieval layer's embedder), lexical tf-idf cosine otherwise.

    nlp = TextToolkit()                                  # lexical only
    nlp = TextToolkit(embed=embedder.embed)              # + dense similarity
    nlp.sentences(passage)      -> exact substrings of passage
    nlp.keywords([question])    -> ["vaccine", "trial", ...]
    nlp.entities(passage)       -> [Entity(text="Maria Okafor", kind="name", ...)]
    nlp.novel_entities(passage, known=question)  -> bridge-entity candidates
    nlp.mmr_select(question, sentences, k=3)     -> indices, relevant and diverse
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence

from agents.lm.text import entities as _entities
from retrieval import cjk as _cjk
from agents.lm.text import sentences as _sentences
from agents.lm.text import tokens as _tokens
from agents.lm.text import vectors as _vectors
from agents.lm.text.entities import KINDS, Entity, EntityKind
from agents.lm.text.vectors import Vector

EmbedFn = Callable[[list[str]], Sequence[Sequence[float]]]
Query = str | Sequence[str] | Sequence[float]


class TextToolkit:
    """Sentence splitting, tokens, keywords, entities, similarity, MMR, clustering.

    `embed`: maps texts to dense vectors (one per text, same order); when given,
    `similarities`, `mmr_select` and `cluster` on texts use it, else tf-idf bags.
    `embed_cache_size`: how many texts' vectors to keep (0 turns caching off).
    """

    STOPWORDS = _tokens.ALL_STOPWORDS

    def __init__(self, embed: EmbedFn | None = None, *, embed_cache_size: int = 20_000):
        self._embed = embed
        self._cache_size = embed_cache_size
        self._cache: dict[str, list[float]] = {}

    @property
    def has_embeddings(self) -> bool:
        return self._embed is not None

    def embeds(self, texts: Sequence[str]) -> bool:
        """Whether `texts` are compared by their embeddings. Not when Chinese or Japanese is among them: the
        bundled embedding model (all-MiniLM-L6-v2) was trained on English and puts any two such texts at
        about the same cosine (0.68-0.73 over a Chinese corpus), while their character bigrams (content
        tokens) tell them apart."""
        return self.has_embeddings and not any(_cjk.has_cjk(t) for t in texts)

    # --- sentences and tokens -------------------------------------------------

    def sentences(self, text: str) -> list[str]:
        """Sentences of `text`, each an exact substring (see `sentence_spans`)."""
        return _sentences.sentences(text)

    def sentence_spans(self, text: str) -> list[tuple[int, int]]:
        return _sentences.sentence_spans(text)

    def words(self, text: str) -> list[str]:
        """Word tokens as written; "HM-204", "3.5" and "don't" stay whole."""
        return _tokens.words(text)

    def is_stopword(self, word: str) -> bool:
        return _tokens.is_stopword(word)

    def stem(self, word: str) -> str:
        return _tokens.stem(word.lower())

    def content_tokens(self, text: str) -> list[str]:
        """Lowercase stems of the non-stopwords of `text`, in order."""
        return _tokens.content_tokens(text)

    # --- keywords ----------------------------------------------------------------

    def keywords(self, texts: str | Sequence[str], k: int = 10, background: Sequence[str] = ()) -> list[str]:
        """The `k` words that best characterise `texts`, most characteristic first.

        Score: sublinear term frequency over `texts` × idf over `texts` and
        `background` documents together (so words common to every document sink).
        Returned as written (lowercased unless always capitalised), one per stem.
        """
        docs = [texts] if isinstance(texts, str) else list(texts)
        doc_words = [_tokens.content_words(d) for d in docs]
        tf: Counter[str] = Counter()
        first_seen: dict[str, int] = {}
        forms: dict[str, Counter[str]] = defaultdict(Counter)
        for words in doc_words:
            for surface, stem in words:
                tf[stem] += 1
                first_seen.setdefault(stem, len(first_seen))
                forms[stem][surface] += 1
        all_docs = [[s for _, s in w] for w in doc_words] + [_tokens.content_tokens(b) for b in background]
        idf = _vectors.idf_table(all_docs) if len(all_docs) > 1 else {}
        score = {s: (1.0 + math.log(c)) * idf.get(s, 1.0) for s, c in tf.items()}
        ranked = sorted(score, key=lambda s: (-score[s], first_seen[s]))[:k]
        return [_surface(forms[s]) for s in ranked]

    def keyphrases(self, text: str, k: int = 5, max_words: int = 4) -> list[str]:
        """Up to `k` key phrases of `text` by RAKE (Rose et al. 2010): runs of content
        words between stopwords and punctuation, scored by word degree / frequency.
        Each phrase is an exact substring of `text`."""
        phrases: list[tuple[int, int, list[str]]] = []  # start, end, lowercase words
        run: list[tuple[int, int, str]] = []

        def close() -> None:
            for i in range(0, len(run), max_words):
                chunk = run[i:i + max_words]
                phrases.append((chunk[0][0], chunk[-1][1], [w for _, _, w in chunk]))
            run.clear()

        last_end = 0
        for m in _tokens.WORD.finditer(text):
            gap = text[last_end:m.start()]
            if run and gap.strip():  # punctuation between words ends a phrase
                close()
            word = m.group().lower()
            if _tokens.is_stopword(word) or (len(word) < 2 and not word.isdigit()):
                close()
            else:
                run.append((m.start(), m.end(), word))
            last_end = m.end()
        close()
        freq: Counter[str] = Counter(w for _, _, ws in phrases for w in ws)
        degree: Counter[str] = Counter()
        for _, _, ws in phrases:
            for w in ws:
                degree[w] += len(ws)
        best: dict[str, tuple[float, int, str]] = {}
        for start, end, ws in phrases:
            key = " ".join(ws)
            score = sum(degree[w] / freq[w] for w in ws)
            if key not in best:
                best[key] = (score, start, text[start:end])
        ranked = sorted(best.values(), key=lambda x: (-x[0], x[1]))
        return [surface for _, _, surface in ranked[:k]]

    # --- entities ----------------------------------------------------------------

    def entities(self, text: str, kinds: Sequence[EntityKind] = KINDS) -> list[Entity]:
        """Names, references, codes, dates, quantities and numbers in `text`, by position."""
        return _entities.extract_entities(text, tuple(kinds))

    def novel_entities(self, text: str, known: str | Sequence[str],
                       kinds: Sequence[EntityKind] = KINDS) -> list[Entity]:
        """Entities of `text` that `known` (the question, earlier hops) never mentions,
        first occurrence of each: the candidates for a bridge entity."""
        known_text = " ".join([known] if isinstance(known, str) else known).lower()
        known_text = " ".join(known_text.split())
        seen: set[str] = set()
        out = []
        for e in self.entities(text, kinds):
            if e.key not in seen and e.key not in known_text:
                seen.add(e.key)
                out.append(e)
        return out

    # --- similarity ----------------------------------------------------------------

    def lexical_similarity(self, a: str, b: str) -> float:
        """Cosine of the two texts' content-token bags (sublinear tf), in [0, 1]."""
        return _vectors.cosine(_vectors.bag(self.content_tokens(a)), _vectors.bag(self.content_tokens(b)))

    def similarities(self, query: str, texts: Sequence[str]) -> list[float]:
        """Similarity of each text to `query`: dense cosine with `embed`, else tf-idf cosine."""
        query_vec, vecs = self._vectors(query, list(texts))
        return [_vectors.cosine(query_vec, v) for v in vecs]

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Dense vectors of `texts` through the injected `embed` (cached)."""
        if self._embed is None:
            raise RuntimeError("this TextToolkit has no embed callable; construct it with embed=...")
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        vectors = list(self._embed(missing)) if missing else []
        if len(vectors) != len(missing):
            raise ValueError(f"embed returned {len(vectors)} vectors for {len(missing)} texts")
        fresh = {t: [float(x) for x in v] for t, v in zip(missing, vectors)}
        if self._cache_size:
            if len(self._cache) + len(fresh) > self._cache_size:
                self._cache.clear()
            self._cache.update(fresh)
        return [fresh[t] if t in fresh else self._cache[t] for t in texts]

    def mmr_select(self, query: Query, candidates: Sequence[str] | Sequence[Sequence[float]],
                   k: int, lambda_: float = 0.7) -> list[int]:
        """Indices of up to `k` candidates, relevant to `query` and unlike each other.

        `query`: a text; a list of content tokens (as from `content_tokens`, used
        as-is); or a dense vector, with candidates as vectors (or as texts when
        `embed` is set). `lambda_` 1.0 ranks by relevance alone, 0.0 by novelty alone.
        """
        if not candidates:
            return []
        query_vec, vecs = self._vectors(query, list(candidates))
        return _vectors.mmr(query_vec, vecs, k, lambda_)

    def cluster(self, texts: Sequence[str], n: int) -> list[list[int]]:
        """Up to `n` groups of similar texts (indices), deterministic; see `vectors.cluster`."""
        if self.embeds(texts):
            vecs: list[Vector] = list(self.embed(texts))
        else:
            token_lists = [self.content_tokens(t) for t in texts]
            idf = _vectors.idf_table(token_lists)
            vecs = [_vectors.bag(t, idf) for t in token_lists]
        return _vectors.cluster(vecs, n)

    def _vectors(self, query: Query, candidates: list) -> tuple[Vector, list[Vector]]:
        texts = all(isinstance(c, str) for c in candidates)
        if isinstance(query, str) and texts and self.embeds([query, *candidates]):
            vecs = self.embed([query, *candidates])
            return vecs[0], vecs[1:]
        if isinstance(query, str) or all(isinstance(t, str) for t in query):  # a text, or tokens
            if not texts:
                raise TypeError("a text or token query needs text candidates")
            q_tokens = self.content_tokens(query) if isinstance(query, str) else list(query)
            token_lists = [self.content_tokens(c) for c in candidates]
            idf = _vectors.idf_table([q_tokens, *token_lists])
            return _vectors.bag(q_tokens, idf), [_vectors.bag(t, idf) for t in token_lists]
        if texts:
            return list(query), list(self.embed(candidates))
        return list(query), [list(c) for c in candidates]


def _surface(forms: Counter[str]) -> str:
    """The usual written form of a word: lowercase unless it is always capitalised."""
    if all(f[:1].isupper() for f in forms):
        return forms.most_common(1)[0][0]
    return min((f for f in forms if not f[:1].isupper()), key=lambda f: (-forms[f], f))
