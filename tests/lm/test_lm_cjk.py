"""Chinese and Japanese text in the extractive model's text layer: sentences end at 。！？, unspaced runs
become character bigrams for the lexical parts and for BM25, and English text is cut as before."""

from __future__ import annotations

from agents.lm.text.sentences import sentences
from agents.lm.text.tokens import content_tokens, word_count
from agents.storm.citations import cut_unfinished
from agents.storm.evidence import usable
from retrieval.cjk import bigrams, spaced_bigrams

HOURS = "图书馆每周二至周日开放，周一闭馆进行整理。平日开放时间为上午九点至晚上八点[2]。周末呢？「开放！」"


def test_chinese_and_japanese_sentences_end_at_their_full_stops():
    assert sentences(HOURS) == ["图书馆每周二至周日开放，周一闭馆进行整理。", "平日开放时间为上午九点至晚上八点[2]。",
                                "周末呢？", "「开放！」"]
    assert sentences("図書館は火曜日に開館します。休館日は月曜日です．") == ["図書館は火曜日に開館します。", "休館日は月曜日です．"]
    # English as before: abbreviations, initials, decimals
    assert sentences("Dr. Smith came. He left! U.S. law applies. Is it 3.5? Yes.") == [
        "Dr. Smith came.", "He left!", "U.S. law applies.", "Is it 3.5?", "Yes."]


def test_unspaced_runs_become_bigrams_and_latin_words_stay_words():
    assert bigrams("图书馆") == ["图书", "书馆"] and bigrams("馆") == ["馆"]
    assert content_tokens("云杉湾图书馆于2024年改造, long-term HM-204") == [
        "云杉", "杉湾", "湾图", "图书", "书馆", "馆于", "2024", "年改", "改造", "long", "term", "hm-204"]
    assert content_tokens("The flood riders' waiting periods") == ["flood", "rider", "wait", "period"]
    assert spaced_bigrams("开放时间 hours") == " 开放 放时 时间  hours"
    assert spaced_bigrams("Opening hours, 9-5.") == "Opening hours, 9-5."  # no CJK: the same string


def test_a_chinese_sentence_is_usable_prose_and_its_length_counts_its_characters():
    assert word_count("平日开放时间为上午九点至晚上八点。") == 9  # 17 characters: about 9 words
    assert word_count("The rider has a waiting period.") == 6
    assert usable("图书馆每周二至周日开放，周一闭馆进行整理。") == "图书馆每周二至周日开放，周一闭馆进行整理。"
    assert usable("周末呢？") is None  # too short to say anything
    assert usable("图书馆每周二至周日开放，周一闭馆进行整理") is None  # unfinished
    assert cut_unfinished("平日开放时间为上午九点至晚上八点。[2]周末为") == "平日开放时间为上午九点至晚上八点。[2]"
    assert cut_unfinished("It rained. [1] The river") == "It rained. [1]"
