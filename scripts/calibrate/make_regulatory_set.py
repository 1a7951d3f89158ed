"""Write the regulatory dev set: long policy forms in several editions, bulletins amending them, questions.

    python -m scripts.calibrate.make_regulatory_set tests/data/regulatory [--seed 38]

Six form families (fictional insurers' forms), each in two or three editions (front matter `family:`,
`edition:`, `effective:`, so the evidence graph orders them) and one bulletin per family whose
"**Supersedes:** Section N of Form CODE" line replaces one section of the newest edition. Each family has
its own provisions (a fold never shares a provision, a form or a phrasing draw with another), written in
numbered paragraphs among paragraphs without the asked values; values are written in words, in digits or
both ("five (5) percent"), drawn per document. Questions, three kinds: the value in a named edition, the
value now in force (the bulletin's where it amends the provision), and the change between two editions.
Folds: by family (fold = family index mod 5), so a held-out fold's documents and provisions are unseen.
Output: DIR/docs/*.md and DIR/questions.json ({"questions": [{id, question, kind, answers, fold, source}]}).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

_ONES = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen " \
        "seventeen eighteen nineteen".split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()


def words(n: int) -> str:
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + (f"-{_ONES[n % 10]}" if n % 10 else "")
    if n < 1000:
        return f"{_ONES[n // 100]} hundred" + (f" {words(n % 100)}" if n % 100 else "")
    if n < 1_000_000:
        return f"{words(n // 1000)} thousand" + (f" {words(n % 1000)}" if n % 1000 else "")
    return f"{words(n // 1_000_000)} million" + (f" {words(n % 1_000_000)}" if n % 1_000_000 else "")


# kind -> (unit word(s), how to write a value in digits)
def written(kind: str, n: int, unit: str, style: str) -> str:
    unit = unit[:-1] if n == 1 and unit.endswith("s") else unit
    if kind == "money":
        return {"words": f"{words(n)} dollars", "digits": f"${n:,}", "both": f"{words(n)} dollars (${n:,})"}[style]
    if kind == "percent":
        return {"words": f"{words(n)} percent", "digits": f"{n}%", "both": f"{words(n)} ({n}) percent"}[style]
    return {"words": f"{words(n)} {unit}", "digits": f"{n} {unit}", "both": f"{words(n)} ({n}) {unit}"}[style]


def gold(kind: str, n: int, unit: str) -> str:
    return written(kind, n, unit, "digits")


# A provision: kind, unit, the thing it is about, the sentences that state it ({v} the value), the questions
# that ask it ({q} the edition qualifier), values to draw from.
P = dict
PROVISIONS = [
    # fold 0
    P(kind="money", unit="", thing="money, bank notes, bullion and precious metals", values=[200, 250, 300, 500],
      say=["The most we will pay for loss to {t} is {v}.", "Our limit of liability for {t} is {v} in any one loss."],
      ask=["What is the special limit on {t}{q}?", "How much is the most paid for loss to {t}{q}?"]),
    P(kind="duration", unit="days", thing="notice of cancellation for nonpayment of premium", values=[10, 14, 20],
      say=["We may cancel for nonpayment of premium by giving {v} notice in writing.",
           "Written notice of cancellation for nonpayment of premium shall be mailed at least {v} before the "
           "date cancellation takes effect."],
      ask=["How far in advance must {t} be given{q}?", "How many days of {t} are required{q}?"]),
    P(kind="size", unit="horsepower", thing="outboard motors", values=[25, 50, 75],
      say=["Watercraft powered by outboard motors of more than {v} are not covered while away from the "
           "residence premises.", "We do not cover outboard motors rated above {v}."],
      ask=["Above what horsepower are {t} excluded{q}?", "What is the horsepower threshold for {t}{q}?"]),
    P(kind="percent", unit="", thing="the hurricane deductible", values=[2, 5, 10],
      say=["The hurricane deductible is {v} of the Coverage A limit shown in the Declarations.",
           "For loss caused by a named hurricane the deductible shall equal {v} of the dwelling limit."],
      ask=["What percentage of the dwelling limit is {t}{q}?", "What is {t} as a share of Coverage A{q}?"]),
    # fold 1
    P(kind="duration", unit="days", thing="the period the premises may be rented to others", values=[30, 45, 60],
      say=["Rental of the residence premises to others on an occasional basis is permitted if it does not exceed "
           "{v} in the policy period.", "The residence premises may be rented to others for no more than {v} in "
           "any policy period."],
      ask=["For how many days can the premises be rented to others{q}?", "What is the maximum rental period "
                                                                          "for the premises{q}?"]),
    P(kind="money", unit="", thing="theft of jewelry, watches and furs", values=[1500, 2000, 2500],
      say=["Theft of jewelry, watches and furs is covered up to {v} in total.",
           "We will pay no more than {v} for loss by theft of jewelry, watches and furs."],
      ask=["What is the limit for {t}{q}?", "What cap applies to {t}{q}?"]),
    P(kind="money", unit="", thing="the all other perils deductible", values=[500, 750, 1000],
      say=["The minimum deductible for all other perils is {v} per occurrence.",
           "No deductible for all other perils may be written below {v}."],
      ask=["What is the floor on {t}{q}?", "What is the minimum for {t}{q}?"]),
    P(kind="duration", unit="hours", thing="reporting a theft to the police", values=[24, 48, 72],
      say=["Theft must be reported to the police within {v} of its discovery.",
           "You must notify the police of a theft no later than {v} after you discover it."],
      ask=["Within how many hours must a theft be reported to the police{q}?",
           "How long does the insured have for {t}{q}?"]),
    # fold 2
    P(kind="money", unit="", thing="trees, shrubs and plants, per item", values=[500, 750, 1000],
      say=["We will not pay more than {v} for any one tree, shrub or plant.",
           "The limit for trees, shrubs and plants is {v} for any one tree, shrub or plant."],
      ask=["What is the per-item limit on {t}{q}?", "How much will be paid at most for one tree{q}?"]),
    P(kind="duration", unit="months", thing="additional living expense", values=[12, 18, 24],
      say=["Additional living expense is paid for the shortest time needed to repair the home, but not beyond "
           "{v} after the loss.", "Payment for additional living expense shall not continue for more than {v}."],
      ask=["For how long is {t} paid{q}?", "What is the maximum period of {t}{q}?"]),
    P(kind="size", unit="feet", thing="sailing vessels", values=[20, 26, 30],
      say=["Sailing vessels {v} or more in overall length are not covered.",
           "We exclude any sailing vessel with an overall length of {v} or more."],
      ask=["From what length are {t} excluded{q}?", "What is the length limit on {t}{q}?"]),
    P(kind="percent", unit="", thing="debris removal", values=[5, 10, 15],
      say=["An additional {v} of the limit of liability is available for debris removal.",
           "Debris removal expense is covered for up to an additional {v} of the limit that applies."],
      ask=["What additional percentage of the limit is available for {t}{q}?", "How large is the extra "
                                                                               "allowance for {t}{q}?"]),
    # fold 3
    P(kind="duration", unit="days", thing="notice of nonrenewal", values=[30, 45, 60],
      say=["If we decide not to renew, we will mail notice of nonrenewal at least {v} before the expiration date.",
           "Notice of nonrenewal shall be delivered not less than {v} before the end of the policy period."],
      ask=["How much advance notice of nonrenewal is required{q}?", "How many days before expiration must "
                                                                   "{t} be mailed{q}?"]),
    P(kind="money", unit="", thing="the fire department service charge", values=[500, 750, 1000],
      say=["We will pay up to {v} for your liability under a written agreement for fire department charges.",
           "The fire department service charge is reimbursed up to {v}."],
      ask=["What is the maximum reimbursed for {t}{q}?", "How much is covered for {t}{q}?"]),
    P(kind="count", unit="roomers or boarders", thing="roomers or boarders", values=[2, 3, 4],
      say=["The dwelling may house no more than {v} in addition to the family.",
           "Coverage applies to a dwelling occupied by the family and not more than {v}."],
      ask=["How many {t} may live in the dwelling{q}?", "What is the maximum number of {t}{q}?"]),
    P(kind="duration", unit="years", thing="bringing suit against the company", values=[1, 2, 3],
      say=["No action can be brought against us unless it is started within {v} after the date of loss.",
           "Any suit against the company must be filed within {v} of the loss."],
      ask=["Within how many years must suit be brought{q}?", "What is the deadline for {t}{q}?"]),
    # fold 4
    P(kind="money", unit="", thing="credit card, fund transfer card and forgery coverage", values=[500, 1000, 2500],
      say=["The limit of liability for credit card, fund transfer card, forgery and counterfeit money is {v}.",
           "We will pay up to {v} for loss under credit card, fund transfer card and forgery coverage."],
      ask=["What is the limit for {t}{q}?", "How much does {t} pay at most{q}?"]),
    P(kind="duration", unit="days", thing="vacancy before vandalism coverage ends", values=[30, 60, 90],
      say=["Vandalism is not covered if the dwelling has been vacant for more than {v} consecutive before "
           "the loss.", "Coverage for vandalism ends once the dwelling has been vacant more than {v}."],
      ask=["After how many days of vacancy does vandalism coverage end{q}?",
           "How long may the dwelling be vacant before vandalism is excluded{q}?"]),
    P(kind="size", unit="miles per hour", thing="golf carts", values=[15, 20, 25],
      say=["Golf carts built to exceed a speed of {v} on level ground are not covered.",
           "Coverage does not extend to any golf cart capable of more than {v}."],
      ask=["Above what speed are {t} excluded{q}?", "What is the speed limit for covered {t}{q}?"]),
    P(kind="percent", unit="", thing="coverage for other structures", values=[10, 15, 20],
      say=["Other structures are insured for {v} of the Coverage A limit.",
           "The limit for other structures on the premises is {v} of the dwelling limit."],
      ask=["What share of the dwelling limit is {t}{q}?", "What is the limit on other structures as a "
                                                          "percentage{q}?"]),
    # fold 5 (folded with fold 0 by index mod 5, its own family and provisions)
    P(kind="duration", unit="days", thing="submitting a sworn proof of loss", values=[60, 90, 120],
      say=["You must send us a signed, sworn proof of loss within {v} after our request.",
           "A sworn proof of loss shall be submitted within {v} of the company's request."],
      ask=["How many days does the insured have for {t}{q}?", "What is the time limit for {t}{q}?"]),
    P(kind="money", unit="", thing="grave markers, including mausoleums", values=[5000, 7500, 10000],
      say=["We cover grave markers, including mausoleums, up to {v} for any one loss.",
           "The limit for loss to grave markers, including mausoleums, is {v}."],
      ask=["What is the limit on {t}{q}?", "How much is paid at most for {t}{q}?"]),
    P(kind="money", unit="", thing="refrigerated property spoilage", values=[500, 1000],
      say=["Spoilage of refrigerated property after a power interruption is covered up to {v}.",
           "We pay up to {v} for refrigerated property spoiled by an off-premises power failure."],
      ask=["What is the cap on {t}{q}?", "How much is covered for {t}{q}?"]),
    P(kind="duration", unit="days", thing="appointing an appraiser", values=[15, 20, 30],
      say=["Each party shall choose a competent appraiser within {v} after receiving a written request from "
           "the other.", "Within {v} of a written demand for appraisal, each party names its appraiser."],
      ask=["Within how many days must each party name an appraiser{q}?", "How long does each party have for "
                                                                           "{t}{q}?"]),
]
FAMILIES = [("HX-3", "Homeowners Special Form", "Lakeshore Mutual"),
            ("DP-7", "Dwelling Fire Policy", "Granite Ridge Insurance"),
            ("CP-20", "Condominium Unit Owners Form", "Tidewater Casualty"),
            ("MH-5", "Manufactured Home Policy", "Prairie States Insurance"),
            ("RB-4", "Renters Broad Form", "Cascade Indemnity"),
            ("FO-9", "Farmowners Dwelling Form", "Blue Mesa Mutual")]
EDITION_DATES = [("2016-04", "April 1, 2016"), ("2019-10", "October 1, 2019"), ("2023-07", "July 1, 2023")]
FILLER = [
    "We provide the insurance described in this policy in return for the premium and compliance with all "
    "applicable provisions of this policy.",
    "This section does not increase the limit of liability that applies to the covered property.",
    "The insured must protect the property from further damage, make reasonable and necessary repairs, and "
    "keep an accurate record of repair expenses.",
    "Loss to a pair or set is settled by repairing or replacing any part to restore the pair or set to its "
    "value before the loss.",
    "We may inspect the property at any reasonable time; an inspection is not a warranty that the property is "
    "safe or healthful.",
    "Any act of a covered person that is concealed from us or misrepresented to us voids coverage for that "
    "person.",
    "The terms of this section apply to each insured separately, except as to the limits of liability.",
    "If any provision of this form conflicts with the statutes of the state in which the policy is issued, the "
    "provision is amended to conform to those statutes.",
    "Payment under this coverage is made to the named insured unless another payee is named in the Declarations.",
    "Mortgagees named in the Declarations are paid as their interests appear.",
    "Coverage applies only to loss that occurs during the policy period shown in the Declarations.",
    "The company will not pay for loss caused by neglect of an insured to use all reasonable means to save "
    "and preserve property at and after the time of a loss.",
]
SECTION_TITLES = ["Definitions", "Property Coverages", "Special Limits of Liability", "Exclusions", "Conditions",
                  "Deductibles", "Loss Settlement", "Cancellation and Nonrenewal", "Additional Coverages"]

SECTIONS_OF = {"money": ["Property Coverages", "Special Limits of Liability", "Additional Coverages"],
               "duration": ["Conditions", "Cancellation and Nonrenewal", "Loss Settlement"],
               "size": ["Exclusions", "Property Coverages"], "percent": ["Deductibles", "Additional Coverages"],
               "count": ["Definitions", "Conditions"]}


def qualifier(rng, kind: str, code: str, name: str, edition: str = "", date: str = "") -> str:
    if kind == "named":
        return rng.choice([f" under the {edition} edition of Form {code}", f" in edition {edition} of Form {code}",
                           f" according to Form {code} ({edition} edition)",
                           f" in the {edition[:4]} edition of the {name}",
                           f" under the {name} edition effective {date}"])
    return rng.choice([f" under Form {code} today", f" currently under the {name}", f" now in force for Form {code}",
                       f" under the current {name}", f" for Form {code} as it stands now"])


def document(rng, code, name, insurer, edition, date, provisions, values, styles, supersedes=""):
    lines = ["---", f"title: {name} (Form {code}, edition {edition})", f"family: {code}", f"edition: {edition}",
             f"effective: {date}", "---", f"# {name} (Form {code}, edition {edition})", "", f"**Form:** {code}", f"**Edition:** {edition}",
             f"**Effective:** {date}", f"**Issued by:** {insurer}", ""]
    if supersedes:
        lines += [f"This edition replaces the {supersedes} edition of Form {code} in its entirety.", ""]
    placed = {SECTION_TITLES.index(p["section"]): [] for p in provisions}
    for p in provisions:
        placed[SECTION_TITLES.index(p["section"])].append(p)
    for s, title in enumerate(SECTION_TITLES, start=1):
        lines += [f"## Section {s}. {title}", ""]
        paras = rng.sample(FILLER, rng.randint(5, 9))
        for p in placed.get(s - 1, []):
            at = rng.randint(0, len(paras))
            paras.insert(at, p["sentence"].format(t=p["thing"], v=written(p["kind"], values[p["id"]], p["unit"],
                                                                            styles[p["id"]])))
        for n, text in enumerate(paras, start=1):
            lines += [f"{s}.{n} {text}", ""]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="folder to write (docs/ and questions.json)")
    ap.add_argument("--seed", type=int, default=38)
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    out = Path(args.out)
    (out / "docs").mkdir(parents=True, exist_ok=True)
    questions = []
    per_family = len(PROVISIONS) // len(FAMILIES)
    for f, (code, name, insurer) in enumerate(FAMILIES):
        fold = f % 5
        n_editions = 3 if f % 2 == 0 else 2
        editions = EDITION_DATES[3 - n_editions:]
        provisions = []
        for i, base in enumerate(PROVISIONS[f * per_family:(f + 1) * per_family]):
            provisions.append({**base, "id": i, "section": rng.choice(SECTIONS_OF[base["kind"]]),
                               "sentence": rng.choice(base["say"])})
        # values per edition: each provision changes at least once, sometimes stays between two editions
        history = []
        for p in provisions:
            seq = [rng.choice(p["values"]) for _ in editions]
            if len(set(seq)) == 1:
                seq[-1] = next(v for v in p["values"] if v != seq[0])
            history.append(seq)
        for e, (edition, date) in enumerate(editions):
            values = {p["id"]: history[p["id"]][e] for p in provisions}
            styles = {p["id"]: rng.choice(["words", "digits", "both"]) for p in provisions}
            text = document(rng, code, name, insurer, edition, date, provisions, values, styles,
                            supersedes=editions[e - 1][0] if e else "")
            (out / "docs" / f"form-{code.lower()}-{edition}.md").write_text(text, encoding="utf-8")
        # the bulletin: replaces the section of the newest edition that holds the first provision
        amended = provisions[0]
        section = SECTION_TITLES.index(amended["section"]) + 1
        new_value = next(v for v in sorted(amended["values"], reverse=True) if v != history[0][-1])
        issued = "January 15, 2025"
        bulletin_no = f"2025-{f + 1:02d}"
        say = rng.choice([s for s in amended["say"] if s != amended["sentence"]] or amended["say"])
        body = [f"---", f"title: Bulletin {bulletin_no}: Amendment of the {name}, Section {section}", "---",
                f"# Bulletin {bulletin_no}: Amendment of the {name}, Section {section}", "", f"**Issued:** {issued}",
                f"**Effective:** March 1, 2025", f"**Applies to:** Form {code}",
                f"**Supersedes:** Section {section} of Form {code}", "",
                f"## Section {section}. {amended['section']} (as amended)", ""]
        paras = rng.sample(FILLER, 4)
        paras.insert(rng.randint(0, 4), say.format(t=amended["thing"], v=written(
            amended["kind"], new_value, amended["unit"], rng.choice(["words", "digits", "both"]))))
        body += [f"{section}.{n} {t}\n" for n, t in enumerate(paras, start=1)]
        body += ["## Reason for the amendment", "", f"{insurer} reviewed its loss experience under Form {code} "
                 "and amends the section named above for policies written or renewed on or after the effective "
                 "date. All other provisions of the form are unchanged.", ""]
        (out / "docs" / f"bulletin-{bulletin_no}-{code.lower()}.md").write_text("\n".join(body), encoding="utf-8")
        # questions
        for p in provisions:
            seq = history[p["id"]]
            asks = p["ask"]
            for e, (edition, date) in enumerate(editions):
                q = rng.choice(asks).format(t=p["thing"], q=qualifier(rng, "named", code, name, edition, date))
                questions.append({"question": q, "kind": "named", "answers": [gold(p["kind"], seq[e], p["unit"])],
                                  "fold": fold, "source": f"form-{code.lower()}-{edition}.md"})
            now = new_value if p is amended else seq[-1]
            source = f"bulletin-{bulletin_no}-{code.lower()}.md" if p is amended else \
                f"form-{code.lower()}-{editions[-1][0]}.md"
            q = rng.choice(asks).format(t=p["thing"], q=qualifier(rng, "current", code, name))
            questions.append({"question": q, "kind": "current", "answers": [gold(p["kind"], now, p["unit"])],
                              "fold": fold, "source": source})
            pairs = [(a, b) for a in range(len(editions)) for b in range(a + 1, len(editions)) if seq[a] != seq[b]]
            a, b = rng.choice(pairs)
            thing = p["thing"]
            q = rng.choice([f"How did the provision on {thing} change from the {editions[a][0]} edition to the "
                            f"{editions[b][0]} edition of Form {code}?",
                            f"Between editions {editions[a][0]} and {editions[b][0]} of Form {code}, how did the "
                            f"figure for {thing} change?",
                            f"What changed in Form {code} for {thing} from edition {editions[a][0]} to edition "
                            f"{editions[b][0]}?"])
            questions.append({"question": q, "kind": "change",
                              "answers": [gold(p["kind"], seq[a], p["unit"]), gold(p["kind"], seq[b], p["unit"])],
                              "fold": fold, "source": f"form-{code.lower()}-{editions[b][0]}.md"})
    for n, q in enumerate(questions):
        q["id"] = f"reg-{n:03d}"
    (out / "questions.json").write_text(json.dumps({
        "about": "Regulatory dev set written by scripts.calibrate.make_regulatory_set: `answers` are the gold values "
                 "(a change: the old value, then the new one); `fold` by form family; `source` the document "
                 "that states the answer.", "questions": questions}, indent=1), encoding="utf-8")
    print(f"{len(list((out / 'docs').glob('*.md')))} documents, {len(questions)} questions in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
