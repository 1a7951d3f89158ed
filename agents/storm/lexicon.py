"""Common encyclopedia section types and article kinds, for outlines without an LLM.

STORM's outline writer leans on what an LLM knows about how articles of a kind are
laid out (a film has Plot, Cast, Production, Release, Reception). The extractive
model gets that knowledge from this table instead: section names that recur across
Wikipedia articles, each with a cue (what such a section typically says, phrased
like the content it holds, so that it can be matched to evidence by embedding
similarity), and article kinds with the sections they usually have, in the usual
order; and which kind a topic and its evidence look like. Nothing here names any
particular article.
"""

from __future__ import annotations

import re
from typing import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict

from agents.lm.nlp import TextToolkit
from agents.storm.evidence import similarity, vectors


class SectionType(BaseModel):
    model_config = ConfigDict(frozen=True)

    heading: str
    cue: str  # typical content of such a section
    parent: str | None = None  # the section it usually sits under, when it is a subsection


class ArticleKind(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    cue: str  # what an article of this kind is about
    sections: tuple[str, ...]  # headings of its usual sections, in the usual order


def _s(heading: str, cue: str, parent: str | None = None) -> SectionType:
    return SectionType(heading=heading, cue=cue, parent=parent)


SECTION_TYPES: tuple[SectionType, ...] = (
    # general
    _s("Background", "the situation and earlier events that led up to it; the context before it happened"),
    _s("History", "how it began and developed over the years; founded, established, introduced, earlier versions"),
    _s("Overview", "what it is, in general terms; a general description"),
    _s("Etymology", "where the name or term comes from; the word was coined, first used, named after"),
    _s("Definition", "how the term is defined; the meaning and scope of the term, what counts and what does not"),
    _s("Characteristics", "typical traits, features and attributes that distinguish it"),
    _s("Description", "what it looks like and consists of; its parts, size and features"),
    _s("Legacy", "its lasting influence and how it is remembered years later"),
    _s("Controversies", "disputes, allegations, criticism and scandals surrounding it"),
    _s("Criticism", "critics argued against it, objections and complaints about it"),
    _s("Media coverage", "how newspapers, television and the press reported on it; media attention and analysis"),
    _s("Public response", "how the public reacted; crowds, opinion polls, social media and public statements"),
    _s("Timeline", "a dated sequence of what happened, month by month"),
    _s("Impact", "the effects and consequences it had"),
    _s("Statistics", "numbers, figures, counts and measurements about it"),
    # events
    _s("Event", "what happened on the day, hour by hour; the incident itself as it unfolded"),
    _s("Incident", "the incident itself: what happened, where and when, and who was involved"),
    _s("Explosion", "the explosion or blast, the detonation and the fire that followed"),
    _s("Attack", "the attack: the assailants struck, fired, bombed the target"),
    _s("Casualties", "people killed, injured or wounded; the number of deaths and victims"),
    _s("Damage", "the physical damage and destruction caused to buildings, structures and infrastructure"),
    _s("Economic impact", "economic losses, costs, prices, trade and financial consequences"),
    _s("Reactions", "statements and responses by officials, governments and public figures to what happened"),
    _s("Domestic reactions", "responses within the country: the government, politicians and citizens reacted",
       parent="Reactions"),
    _s("International reactions", "foreign governments, world leaders and international organisations responded, "
       "condemned or expressed concern", parent="Reactions"),
    _s("Aftermath", "what happened afterwards as a consequence; the days and months after"),
    _s("Investigation", "investigators, police and authorities examined the cause, collected evidence, "
       "identified suspects and reported findings"),
    _s("Responsibility", "who claimed or was blamed for responsibility; accusations and denials of involvement"),
    _s("Arrests and charges", "suspects were arrested, detained, charged and prosecuted"),
    _s("Rescue and relief", "rescue workers, emergency services and aid efforts after the disaster"),
    _s("Response", "how authorities and agencies responded and what measures they took"),
    _s("Security", "police, security measures, guards and safety arrangements"),
    _s("Funeral", "the funeral, memorial service, mourning and burial"),
    _s("Memorials", "memorials, commemorations, tributes and remembrance ceremonies"),
    _s("Organisation", "how it was organised and run: arrangements, planning, staff, volunteers and logistics"),
    _s("Route", "the route and path it followed, the streets and places along the way"),
    _s("Attendance", "how many people attended or took part, participants, visitors and waiting times"),
    _s("Incidents", "incidents that occurred: people were arrested, fell ill, were injured or caused disruption"),
    _s("Precedents", "earlier occasions of the same kind in the past that it followed or was compared with"),
    # weather and natural disasters
    _s("Meteorological history", "the storm formed, strengthened, moved across the sea, made landfall and weakened; "
       "wind speeds, pressure and forecasts"),
    _s("Preparations", "warnings were issued ahead of it; evacuations, shelters, closures and other preparations"),
    # competitions and contests
    _s("Format", "how the competition works: rounds, rules, scoring, qualification, promotion and relegation"),
    _s("Participants", "the teams, clubs, contestants or candidates taking part; debuts, returns and withdrawals"),
    _s("Results", "who won and the final placements, standings, scores and winners"),
    _s("Awards", "prizes and special awards given: best player, top scorer, champion and runner-up"),
    _s("Broadcasting", "television and streaming coverage, broadcast rights, sponsors and media partners"),
    # people
    _s("Early life", "born, childhood, parents, family and upbringing"),
    _s("Education", "studied at school and university, graduated with a degree"),
    _s("Career", "worked as, was appointed, professional career and positions held"),
    _s("Club career", "played for the club, signed a contract, made his debut, scored goals, joined on loan",
       parent="Career"),
    _s("International career", "played for the national team, international caps, appearances and goals at "
       "tournaments", parent="Career"),
    _s("Personal life", "married, partner, children, family life and private interests"),
    _s("Political views", "political opinions, ideology and public positions the person held"),
    _s("Activism", "campaigning and activism for a cause, protests and advocacy"),
    _s("Death", "died, was killed; the death and its circumstances"),
    _s("Killing", "was killed or murdered; the assassination and how the victim died"),
    _s("Honours and awards", "awards, honours, prizes and decorations received"),
    # legal
    _s("Legal proceedings", "the court case: hearings, judges, rulings, appeals and judgments"),
    _s("Court rulings", "the judge ruled, the court decided, the verdict and the judgment"),
    _s("Appeals", "the appeal to a higher court and its outcome"),
    _s("Inquest", "the coroner's inquest into the cause of death and its conclusion"),
    _s("Medical treatment", "hospital care, doctors, life support, treatment and diagnosis"),
    _s("Campaign", "campaigns, petitions, fundraising and advocacy by family or supporters"),
    _s("Regulation", "rules, laws, regulators and compliance requirements that apply"),
    # film, television, books
    _s("Plot", "the story: the protagonist sets out, discovers, fights and finally defeats the villain"),
    _s("Premise", "the basic story idea and setting of the work"),
    _s("Cast", "the actors and the roles they play; starring, featuring"),
    _s("Characters", "the main characters and who they are in the story"),
    _s("Production", "how it was made: development, writing, casting, filming and post-production"),
    _s("Development", "the project was conceived, planned, announced and developed"),
    _s("Casting", "actors were cast, signed or joined the cast for roles"),
    _s("Filming", "principal photography, shooting schedule and filming locations"),
    _s("Music", "the score, soundtrack and songs composed for it; the composer"),
    _s("Soundtrack", "the soundtrack album and songs of a film, composed and released"),
    _s("Marketing", "trailers, posters, teasers and promotional campaigns before release"),
    _s("Release", "the release date; it was released, premiered, distributed and made available"),
    _s("Theatrical release", "released in cinemas and theatres on a date, screens and premiere",
       parent="Release"),
    _s("Home media", "streaming, DVD, digital and television rights and premiere", parent="Release"),
    _s("Distribution", "the distributor acquired distribution rights in territories", parent="Release"),
    _s("Reception", "how it was received by critics and audiences; reviews and ratings"),
    _s("Critical reception", "critics reviewed it, praising or criticising it; review scores and ratings",
       parent="Reception"),
    _s("Box office", "grossed at the box office, ticket sales and earnings in theatres", parent="Reception"),
    _s("Accolades", "awards and nominations it won or received"),
    _s("Sequel", "a sequel or follow-up was announced, planned or made"),
    _s("Themes", "the themes, motifs and ideas it explores"),
    _s("Publication", "published by a publisher in a year; editions and translations"),
    _s("Adaptations", "adapted into other media: film, television, stage or games"),
    # music
    _s("Recording", "recorded in the studio with producers and engineers; the recording sessions"),
    _s("Composition", "the musical style, genre, instrumentation and sound of the songs"),
    _s("Lyrics", "the lyrics and what the words of the songs are about"),
    _s("Artwork", "the cover art, album title and artwork design"),
    _s("Singles", "songs released as singles, their music videos and chart positions", parent="Release"),
    _s("Promotion", "promoted with performances, interviews and appearances", parent="Release"),
    _s("Tour", "the concert tour: shows, dates, venues and supporting acts"),
    _s("Commercial performance", "chart positions, sales figures, streams and certifications"),
    _s("Track listing", "the list of tracks and songs, songwriters and producers for each"),
    _s("Personnel", "musicians, producers and engineers credited on the recording"),
    _s("Charts", "peak positions on weekly record charts in different countries"),
    _s("Release history", "release dates and formats by region"),
    # organisations and companies
    _s("Founding", "the company was founded or established by its founders in a year"),
    _s("Operations", "what the organisation does day to day: its operations, services and activities"),
    _s("Products", "the products it makes and sells"),
    _s("Services", "the services it offers to customers"),
    _s("Ownership", "owned by, shareholders, acquisition, parent company and structure"),
    _s("Governance", "the board, directors, members and how decisions are made"),
    _s("Leadership", "the chief executive, president, directors and senior officers"),
    _s("Finances", "revenue, profit, turnover, assets and financial results"),
    _s("Acquisitions", "acquired, bought, merged with or sold businesses and subsidiaries"),
    _s("Notable projects", "notable projects, contracts and buildings it delivered"),
    _s("Locations", "where it operates: offices, branches and the areas it serves"),
    # technology, spaceflight
    _s("Design", "how it is designed and built; components, engines, structure and specifications"),
    _s("Testing", "tests carried out before use; test campaigns and results"),
    _s("Launch", "the launch: lift-off from the launch pad, countdown and ascent"),
    _s("Flight", "the flight profile and what happened during the flight, stage separation and trajectory"),
    _s("Objectives", "the goals and objectives the mission or test was meant to achieve"),
    _s("Environmental impact", "effects on the environment, wildlife, pollution, debris and dust"),
    _s("Safety", "safety risks, hazards, accidents and safety measures"),
    _s("Technical assessment", "engineers analysed the data; technical failures, anomalies and their causes"),
    # society, concepts, places
    _s("Demographics", "population, age groups, birth years and the size of the group"),
    _s("Culture", "arts, music, fashion, entertainment and cultural life"),
    _s("Technology use", "use of the internet, smartphones, social media and digital technology"),
    _s("Economy", "jobs, income, spending, wealth and economic power"),
    _s("Politics", "political views, voting and political participation"),
    _s("Health", "physical and mental health, wellbeing and health care"),
    _s("Values", "beliefs, values, attitudes and priorities"),
    _s("Social life", "friendships, relationships, dating and social interaction"),
    _s("Environment", "climate change, environmental attitudes and sustainability"),
    _s("Geography", "location, terrain, climate and surroundings"),
    _s("Construction", "built, constructed, opened; the construction work, cost and contractors"),
    _s("Transport", "roads, railways, traffic and transport links"),
    # insurance, policies and programmes
    _s("Coverage", "what is covered and insured, covered perils, limits and benefits"),
    _s("Exclusions", "what is excluded and not covered"),
    _s("Eligibility", "who may apply, qualify, buy or take part; eligibility rules and requirements"),
    _s("Costs and deductibles", "premiums, prices, deductibles, fees and how much is paid"),
    _s("Claims", "how claims are filed, inspected, adjusted, settled and paid"),
    _s("Provisions", "the main rules and provisions it sets out"),
    _s("Implementation", "how it was put into effect, effective dates and transitional rules"),
    _s("Changes", "amendments, revisions and changes over time; what was replaced or superseded"),
)

ARTICLE_KINDS: tuple[ArticleKind, ...] = (
    ArticleKind(name="event", cue="an explosion, attack, accident, disaster or incident that happened on a date, "
                "with casualties, damage and reactions",
                sections=("Background", "Event", "Explosion", "Attack", "Incident", "Casualties", "Damage",
                          "Economic impact", "Reactions", "Domestic reactions", "International reactions",
                          "Aftermath", "Investigation", "Responsibility", "Arrests and charges")),
    ArticleKind(name="natural disaster", cue="a storm, cyclone, hurricane, flood, earthquake or wildfire: it formed "
                "and struck, with winds, rainfall, warnings, evacuations, damage and deaths",
                sections=("Background", "Meteorological history", "Preparations", "Impact", "Casualties", "Damage",
                          "Economic impact", "Rescue and relief", "Aftermath", "Reactions")),
    ArticleKind(name="competition", cue="a sports league, tournament, championship, pageant or contest: clubs or "
                "contestants compete for a title, with results, winners and awards",
                sections=("Background", "History", "Format", "Participants", "Results", "Awards", "Broadcasting",
                          "Controversies")),
    ArticleKind(name="public occasion", cue="a public ceremony, state funeral, procession, queue or gathering "
                "attended by crowds of people",
                sections=("Background", "Precedents", "Route", "Organisation", "Security", "Attendance",
                          "Public response", "Media coverage", "Incidents", "Aftermath")),
    ArticleKind(name="person", cue="the life of a person: born, educated, worked as, married, died",
                sections=("Early life", "Education", "Career", "Club career", "International career",
                          "Political views", "Activism", "Personal life",
                          "Death", "Killing", "Investigation", "Reactions", "Funeral", "Legacy",
                          "Honours and awards")),
    ArticleKind(name="legal case", cue="a court case or legal dispute: a judge ruled on an application, "
                "hearings, appeals and judgments",
                sections=("Background", "Incident", "Medical treatment", "Legal proceedings", "Court rulings",
                          "Appeals", "Inquest", "Timeline", "Campaign", "Media coverage", "Reactions")),
    ArticleKind(name="film", cue="a feature film directed by a director, starring actors, released in cinemas",
                sections=("Plot", "Cast", "Production", "Development", "Casting", "Filming", "Music",
                          "Marketing", "Release", "Theatrical release", "Distribution", "Home media",
                          "Reception", "Critical reception", "Box office", "Accolades", "Sequel")),
    ArticleKind(name="television series", cue="a television series or show with episodes and seasons, aired "
                "on a network or streaming service",
                sections=("Premise", "Cast", "Characters", "Production", "Release", "Reception", "Accolades")),
    ArticleKind(name="book", cue="a book or novel written by an author and published by a publisher",
                sections=("Background", "Plot", "Characters", "Themes", "Publication", "Reception",
                          "Adaptations")),
    ArticleKind(name="album", cue="a music album or record by a singer or band: songs recorded in the studio, "
                "released as singles, charting",
                sections=("Background", "Recording", "Production", "Composition", "Music", "Lyrics", "Artwork",
                          "Release", "Singles", "Promotion", "Tour", "Reception", "Critical reception",
                          "Commercial performance", "Accolades", "Track listing", "Personnel", "Charts",
                          "Release history")),
    ArticleKind(name="company", cue="a company or business: founded, headquartered, owned, with products, "
                "services, contracts and revenue",
                sections=("History", "Founding", "Operations", "Products", "Services", "Notable projects",
                          "Ownership", "Leadership", "Finances", "Acquisitions", "Controversies")),
    ArticleKind(name="organisation", cue="an organisation, association or institution with members, a board "
                "and a mission",
                sections=("History", "Governance", "Leadership", "Operations", "Services", "Locations",
                          "Finances", "Controversies")),
    ArticleKind(name="spaceflight", cue="a rocket, spacecraft or space mission: a launch, a flight test, "
                "engines and orbit",
                sections=("Background", "Development", "Design", "Objectives", "Testing", "Launch", "Flight",
                          "Aftermath", "Technical assessment", "Environmental impact", "Investigation")),
    ArticleKind(name="technology", cue="a machine, vehicle, device or technology: designed, built, tested, used",
                sections=("History", "Development", "Design", "Testing", "Operations", "Safety", "Reception")),
    ArticleKind(name="social group", cue="a generation, group of people or social phenomenon described by a "
                "term, with age range and traits",
                sections=("Etymology", "Definition", "Demographics", "Characteristics", "Culture", "Economy",
                          "Environment", "Health", "Politics", "Social life", "Technology use", "Values")),
    ArticleKind(name="concept", cue="an idea, term or concept: what it means, where it comes from, how it is used",
                sections=("Etymology", "Definition", "History", "Characteristics", "Criticism")),
    ArticleKind(name="place", cue="a place, town, building or structure: located, built, opened, used",
                sections=("History", "Geography", "Construction", "Description", "Transport", "Economy")),
    ArticleKind(name="insurance product", cue="an insurance policy, rider or plan: what it covers, who may buy "
                "it, deductibles, exclusions and claims",
                sections=("Overview", "History", "Eligibility", "Coverage", "Exclusions", "Costs and deductibles",
                          "Claims", "Changes", "Regulation")),
    ArticleKind(name="policy or law", cue="a law, regulation, rule, bulletin or programme: what it provides, "
                "when it takes effect, what it replaced",
                sections=("Background", "Provisions", "Implementation", "Changes", "Reactions", "Criticism")),
)

# Every template heading must be a section type; the lookup keeps the two tables honest.
SECTIONS_BY_HEADING: dict[str, SectionType] = {s.heading: s for s in SECTION_TYPES}


def section_type(heading: str) -> SectionType | None:
    return SECTIONS_BY_HEADING.get(heading)


def section_text(section: SectionType) -> str:
    """What is embedded for a section type: its heading and its cue."""
    return f"{section.heading}: {section.cue}"


def kind_text(kind: ArticleKind) -> str:
    return f"{kind.name}: {kind.cue}"


PERSON_KIND = "person"
_HE_OR_SHE = re.compile(r"\b(?:he|she|him|his|her|himself|herself)\b", re.IGNORECASE)


def person_share(texts: Sequence[str]) -> float:
    """The share of `texts` that speak of someone as "he" or "she": high in the evidence on a life
    (a career, a death), whatever the person did; low for events, places and works."""
    return sum(bool(_HE_OR_SHE.search(t)) for t in texts) / len(texts) if texts else 0.0


_DISAMBIGUATOR = re.compile(r"^.+?\s*\((?P<what>[^()]*\b[a-z]{3,}[^()]*)\)\s*$")


def kind_words(topic: str) -> str:
    """What a topic's own words say of its kind: an encyclopedia title's disambiguator when it names a
    class ("Takeoff (rapper)" → "rapper", "Sardar (2022 film)" → "2022 film"), else the whole topic
    ("Liga 1 (Indonesia)": a place that qualifies the name, not what it is)."""
    m = _DISAMBIGUATOR.match(topic.strip())
    return m.group("what") if m else topic


# what a person's article title says of them in its disambiguator ("Takeoff (rapper)")
_PERSON_CLASSES = "a singer, rapper, musician, actor, actress, athlete, footballer, politician, writer or journalist"


def _class_text(kind: ArticleKind) -> str:
    return f"{kind.name}: {_PERSON_CLASSES}" if kind.name == PERSON_KIND else kind_text(kind)


def article_kind(topic: str, texts: Sequence[str], nlp: TextToolkit, evidence_weight: float = 0.5,
                 person_weight: float = 0.0) -> ArticleKind:
    """The article kind whose description best fits the topic (and the evidence, if any, weighted
    `evidence_weight` against the topic's own words). With `person_weight`, the kind "person" also
    gains that weight times `person_share` of the evidence: a singer's evidence is about songs and an
    actress's about films, but both are told of a "she". A title that names its class in brackets
    (`kind_words`) decides alone."""
    kinds = [kind_text(k) for k in ARTICLE_KINDS]
    named = kind_words(topic)
    if named != topic:  # a title that names its class is not second-guessed by the evidence
        score = similarity([named], [_class_text(k) for k in ARTICLE_KINDS], nlp)[0]
        return ARTICLE_KINDS[int(np.argmax(np.round(score, 6)))]
    score = similarity([topic], kinds, nlp)[0]
    if texts:
        centroid = vectors(list(texts), nlp, kinds).mean(axis=0)
        centroid /= max(float(np.linalg.norm(centroid)), 1e-9)
        fit = (vectors(kinds, nlp, texts) @ centroid if nlp.embeds([*texts, *kinds])
               else similarity([" ".join(texts)], kinds, nlp)[0])
        score = (1 - evidence_weight) * score + evidence_weight * fit
        if person_weight:
            score[[k.name for k in ARTICLE_KINDS].index(PERSON_KIND)] += person_weight * person_share(texts)
    return ARTICLE_KINDS[int(np.argmax(np.round(score, 6)))]


def kind_fit(kind: ArticleKind, texts: Sequence[str], nlp: TextToolkit) -> float:
    """How well the evidence fits its article kind: the cosine of its centroid to the kind's description
    (a film's evidence fits "film" well; an armorial's fits no kind, and the lexicon misleads it)."""
    if not texts:
        return 0.0
    if not nlp.embeds([*texts, kind_text(kind)]):
        return float(similarity([" ".join(texts)], [kind_text(kind)], nlp)[0, 0])
    centroid = vectors(list(texts), nlp).mean(axis=0)
    centroid /= max(float(np.linalg.norm(centroid)), 1e-9)
    return float((vectors([kind_text(kind)], nlp) @ centroid)[0])
