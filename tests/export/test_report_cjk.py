"""A report on an all-Chinese corpus, as a user meets it: `raystorm search` finds a Chinese query's passage
by BM25, `raystorm report` on a Chinese topic writes sections whose every sentence cites the lines it was
copied from, and the PDF export extracts its characters. The corpus is a made-up library, written here."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pypdfium2 as pdfium

from test_cli_errors import raystorm
from test_export import chromium_or_skip, squeezed

TOPIC = "云杉湾社区图书馆"
CORPUS = {
    "overview.md": """# 云杉湾社区图书馆概况

云杉湾社区图书馆位于云杉湾镇中心的老粮仓旧址，于二〇一九年九月正式开放。馆舍共有两层，一层为儿童阅览区和自助借还区，二层为成人阅览区和自习室。

图书馆目前藏书约四万二千册，其中儿童绘本约八千册。馆内还设有地方文献专架，收藏云杉湾镇的老照片、族谱和旧报纸。

## 开放时间

图书馆每周二至周日开放，周一闭馆进行整理。平日开放时间为上午九点至晚上八点，周末为上午十点至下午六点。法定节假日的开放安排会提前一周在馆门口公告。
""",
    "lending.md": """# 云杉湾社区图书馆借阅规则

凡持有云杉湾镇居民证的读者，均可免费办理借书证。办理时需携带身份证件，未满十四岁的读者须由监护人陪同办理。

每张借书证最多可同时借阅十册图书，借期为三十天。读者可以在到期前通过自助机续借一次，续借期为十五天。

## 逾期与损坏

图书逾期归还时，每册每天收取滞纳金两角，最高不超过该书定价。图书损坏或遗失的，读者应按原价赔偿，或购买同一版本的新书归还。

地方文献专架的资料只限馆内阅览，不可外借。
""",
    "renovation.md": """# 云杉湾社区图书馆改造通知

为改善阅读环境，云杉湾社区图书馆将于二〇二四年七月一日起进行为期两个月的屋顶改造。改造期间，二层阅览区和自习室暂停开放。

一层儿童阅览区和自助借还区在改造期间照常开放，开放时间调整为上午九点至下午五点。

改造完成后，二层将新增一间可容纳三十人的多功能活动室，供读书会和讲座使用。
""",
    "volunteers.md": """# 云杉湾社区图书馆志愿者计划

图书馆每年春季和秋季各招募一次志愿者。志愿者年满十六岁即可报名，每月服务时间不少于八小时。

志愿者的主要工作包括整理书架、协助读者使用自助借还机，以及在周六上午为儿童朗读绘本。

服务满一百小时的志愿者，可获得图书馆颁发的年度服务证书，并享有每次借阅十五册图书的权限。
""",
}
CJK = re.compile(r"[\u3000-\u30ff\u4e00-\u9fff\uff00-\uffef]+")
CITED = re.compile(r"([^\s\[\]][^\[\]\n]*?)((?:\[\d+\])+)")  # a sentence and the [n] after it
REFERENCE = re.compile(r"^\[(\d+)\] .*? (\S+\.md) \(lines? ([^)]*)\)", re.M)


def write_corpus(folder: Path) -> None:
    folder.mkdir()
    for name, text in CORPUS.items():
        (folder / name).write_text(text, encoding="utf-8")


def cited_lines(ranges: str) -> set[int]:
    """"3–5, 9" -> {3, 4, 5, 9}."""
    out: set[int] = set()
    for part in ranges.split(","):
        a, _, b = part.strip().partition("–")
        out |= set(range(int(a), int(b or a) + 1))
    return out


def test_a_chinese_query_finds_its_passage_by_bm25(tmp_path):
    write_corpus(tmp_path / "corpus")
    done = raystorm(tmp_path, "ingest", "corpus", "-c", "library", "--quiet")
    assert done.returncode == 0, done.stderr[-2000:]
    done = raystorm(tmp_path, "search", "开放时间", "-c", "library", "--mode", "sparse", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    hits = json.loads(done.stdout)
    # the one passage that names the opening hours first; BM25 found it by the words' bigrams
    assert (Path(hits[0]["path"]).name, hits[0]["line_start"]) == ("overview.md", 9)
    assert hits[0]["text"].startswith("图书馆每周二至周日开放")


def test_a_chinese_report_cites_its_lines_and_its_pdf_extracts_them(tmp_path):
    write_corpus(tmp_path / "corpus")
    done = raystorm(tmp_path, "report", TOPIC, "--corpus", "corpus", "--out", "runs")
    assert done.returncode == 0, done.stderr[-2000:]
    run_dir = tmp_path / "runs" / TOPIC
    md = (run_dir / "report.md").read_text(encoding="utf-8")
    assert "Nothing about this topic was found" not in md, md
    body, _, references = md.partition("\n## References\n")
    assert [h for h in re.findall(r"^## (.+)$", body, re.M)], md  # at least one section
    refs = {int(n): (Path(path.replace("\\", "")).name, cited_lines(ranges))  # (the path as Markdown escapes it)
            for n, path, ranges in REFERENCE.findall(references)}
    assert refs, references
    cited = [(s.strip(), [int(n) for n in re.findall(r"\d+", ns)])
             for line in body.splitlines() if line and not line.startswith("#") for s, ns in CITED.findall(line)]
    assert len(cited) >= 3, body
    for sentence, numbers in cited:
        assert sentence.endswith(("。", "！", "？")), sentence  # whole sentences, cut at the Chinese full stop
        # each sentence is copied from the lines its citation lists
        assert any(sentence in "".join((tmp_path / "corpus" / refs[n][0]).read_text(encoding="utf-8")
                                       .splitlines()[i - 1] for i in sorted(refs[n][1])) for n in numbers), sentence
    claims = json.loads((run_dir / "report.claims.json").read_text(encoding="utf-8"))["claims"]
    for claim in claims:  # and the claims sidecar ties each one to the exact line that holds it
        (place,) = claim["evidence"]
        lines = Path(place["path"]).read_text(encoding="utf-8").splitlines()
        assert claim["text"] in "".join(lines[place["line_start"] - 1:place["line_end"]])

    chromium_or_skip()
    done = raystorm(tmp_path, "export", str(run_dir), "--format", "pdf", "--out", str(tmp_path / "r.pdf"))
    assert done.returncode == 0, done.stderr[-2000:]
    pdf = pdfium.PdfDocument(str(tmp_path / "r.pdf"))
    text = squeezed("".join(pdf[i].get_textpage().get_text_range() for i in range(len(pdf))))
    written = CJK.findall(md)
    assert [w for w in written if w not in text] == []
