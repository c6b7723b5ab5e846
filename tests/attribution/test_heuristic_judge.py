"""The heuristic judge's rules on small hand-built units, and the excerpt the LLM judge is shown
of a long unit: each rule with the verdict it must give, and the case it must not overreach to."""

from __future__ import annotations

from datetime import UTC, datetime

from service.attribution.judges.base import Question
from service.attribution.judges.heuristic import HeuristicJudge
from service.text import GAP, content_tokens, excerpt

ACCIDENT = (
    "Melanie: After the accident my family went with me to the Grand Canyon, and we all "
    "enjoyed it so much. They mean the world to me, I am so grateful for them."
)
FEELING = Question(
    case_id="c-1",
    question="How did Melanie feel about her family after the accident?",
    expected_answer="They are important and mean the world to her",
    wrong_answer="She was angry at them",
    evidence_texts=(ACCIDENT,),
)


def verdict(question: Question, content: str, kind: str = "memory", when: datetime | None = None):
    return HeuristicJudge().verdict(question, content, when, kind)


def test_a_memory_written_from_the_evidence_carries_it_though_the_answer_is_paraphrased() -> None:
    # what an extractor kept of the evidence turn: its own words, the answer's words left out
    kept = "Melanie's family went to the Grand Canyon after the accident and enjoyed it."
    assert verdict(FEELING, kept).carries is True


def test_a_memory_of_the_same_topic_from_another_turn_does_not() -> None:
    other = "Melanie's son got hurt in an accident during their road trip to the lake."
    assert verdict(FEELING, other).carries is False


def test_a_copy_that_changed_a_date_or_name_of_the_evidence_does_not() -> None:
    said = "Farid: Did you hear? Hana Morales started learning the trumpet in November 2012."
    question = Question(
        "c-5", "When did Hana Morales start learning the trumpet?", "November 2012", "2023", (said,)
    )
    changed = "Farid: Did you hear? Hana Morales started learning the trumpet in November 2023."
    assert verdict(question, changed, kind="context").carries is False
    assert verdict(question, said, kind="context").carries is True


def test_a_short_segment_of_evidence_words_is_too_short_to_tell() -> None:
    assert verdict(FEELING, "Melanie enjoyed the family trip.").carries is False


def test_a_derived_segment_inside_a_long_context_carries_it() -> None:
    context = "\n".join(
        [
            "Caroline is looking into adoption agencies.",
            "Melanie's family went to the Grand Canyon after the accident and enjoyed it.",
            "Caroline has a guinea pig named Oscar.",
        ]
    )
    assert verdict(FEELING, context, kind="context").carries is True


def test_without_evidence_the_derived_rule_does_not_apply() -> None:
    bare = Question("c-2", FEELING.question, FEELING.expected_answer, FEELING.wrong_answer)
    kept = "Melanie's family went to the Grand Canyon after the accident and enjoyed it."
    assert verdict(bare, kept).carries is False


OPENED = Question(
    case_id="c-3",
    question="When did Gina open her online clothing store?",
    expected_answer="16 March, 2023",
    wrong_answer="June 2022",
)
MARCH_16 = datetime(2023, 3, 16, 14, 0, tzinfo=UTC)


def test_a_message_telling_of_the_event_is_dated_by_when_it_was_said() -> None:
    said = "Gina: Yay! My online clothing store is open! I've been dreaming of this."
    assert verdict(OPENED, said, kind="message", when=MARCH_16).carries is True


def test_a_line_of_that_day_about_something_else_does_not_carry_the_date() -> None:
    # it names Gina and was written that day, but says nothing of her opening the store
    memory = "Jon finds Gina's success inspiring and her determination awesome."
    assert verdict(OPENED, memory, kind="memory", when=MARCH_16).carries is False
    # a memory of the event written that day still does
    kept = "Gina opened her online clothes store, which she had dreamt of for a while."
    assert verdict(OPENED, kept, kind="memory", when=MARCH_16).carries is True


def test_said_on_another_day_it_does_not_carry_the_date() -> None:
    said = "Gina: Yay! My online clothing store is open! I've been dreaming of this."
    other_day = datetime(2023, 5, 2, tzinfo=UTC)
    assert verdict(OPENED, said, kind="message", when=other_day).carries is False


def test_a_message_naming_another_date_keeps_that_date() -> None:
    said = "Gina: I plan to open my online clothing store on 2 May."
    assert verdict(OPENED, said, kind="message", when=MARCH_16).carries is False


def test_a_context_is_not_dated_by_its_own_time() -> None:
    # a retrieved context is assembled at question time: its time says nothing of the event
    context = "Gina opened her online clothing store and enjoys being her own boss."
    assert verdict(OPENED, context, kind="context", when=MARCH_16).carries is False


def test_a_date_written_without_spaces_or_as_an_ordinal_is_still_a_date() -> None:
    # LoCoMo writes answers such as "The week before 15April, 2022" and "Aug 15th"
    assert content_tokens("The week before 16March, 2023") == {"week", "16", "march", "2023"}
    assert content_tokens("on the 16th") == {"16"}
    # other words of digits and letters stay whole (an audit names what an update lost)
    assert content_tokens("item6 5k gpt4") == {"item6", "5k", "gpt4"}
    glued = Question("c-5", OPENED.question, "16March, 2023", OPENED.wrong_answer)
    said = "Gina: Yay! My online clothing store is open! I've been dreaming of this."
    assert verdict(glued, said, kind="message", when=MARCH_16).carries is True
    other_day = datetime(2023, 5, 2, tzinfo=UTC)
    assert verdict(glued, said, kind="message", when=other_day).carries is False


def test_only_when_questions_take_the_day_it_was_said() -> None:
    what = Question("c-4", "What did Gina open?", "16 March, 2023", "a bakery")
    said = "Gina: Yay! My online clothing store is open!"
    assert verdict(what, said, kind="message", when=MARCH_16).carries is False


BUFFER = "\n".join(
    [
        f"Speaker {i % 2}: we talked about the weather and the traffic again today."
        for i in range(200)
    ]
)
FACT = "Caroline: I adopted a dog named Rex from the shelter in May."
LONG = BUFFER.replace(
    "Speaker 0: we talked about the weather and the traffic again today.", FACT, 1
)
LONG = "\n".join([*LONG.split("\n")[1:150], FACT, *LONG.split("\n")[150:]])


def test_excerpt_shows_the_segment_about_the_question_not_the_head() -> None:
    shown, left_out = excerpt(LONG, "What dog did Caroline adopt? Rex", 400)
    assert FACT in shown
    assert not shown.startswith("Speaker 1")  # the head is not what is shown
    assert shown.startswith(GAP)
    assert len(shown.replace(GAP, "")) <= 400
    assert left_out == len(LONG) - len(shown.replace(f"{GAP} ", "").replace(f" {GAP}", ""))


def test_excerpt_keeps_the_text_between_chosen_segments_verbatim() -> None:
    text = "Intro line.\n" * 50 + "Ann moved to Paris. She loves it there.\n" + "Outro line.\n" * 50
    shown, _ = excerpt(text, "Where does Ann live? Paris", 120)
    assert "Ann moved to Paris. She loves it there." in shown


def test_excerpt_of_a_text_that_fits_is_the_text() -> None:
    assert excerpt("short", "anything", 100) == ("short", 0)


def test_excerpt_sharing_nothing_is_the_head() -> None:
    shown, left_out = excerpt("x" * 50 + "\n" + "y" * 50, "Paris", 60)
    assert shown == "x" * 50 + "\n" + "y" * 9 and left_out == 41


def test_a_copy_that_left_out_the_date_asked_for_does_not_carry_it() -> None:
    # an extraction that drops dates keeps every other word of the turn: the date was the fact
    said = "Farid: Hana Morales started learning the trumpet at the music school on 12 May 2021."
    question = Question(
        "c-6", "When did Hana Morales start learning the trumpet?", "12 May 2021", "2023", (said,)
    )
    dropped = "Hana Morales started learning the trumpet at the music school."
    assert verdict(question, dropped).carries is False


def test_a_context_line_that_left_out_the_date_does_not_carry_it_either() -> None:
    # the context's copy of a memory whose extractor dropped the date: the date is gone
    said = "Farid: Hana Morales started learning the trumpet at the music school on 12 May 2021."
    question = Question(
        "c-7", "When did Hana Morales start learning the trumpet?", "12 May 2021", "2023", (said,)
    )
    line = "Hana Morales started learning the trumpet at the music school."
    assert verdict(question, f"Ann likes tea.\n{line}", kind="context").carries is False


def test_a_carrier_by_words_in_a_long_unit_is_less_sure() -> None:
    # one of hundreds of lines sharing the answer's words may do so by chance: the llm judge asks
    filler = "\n".join(f"Line {i}: we talked about the weather and our plans." for i in range(80))
    memory = "Ann lives in Paris since May."
    question = Question("c-8", "Which city does Ann live in now?", "Paris", "London")
    short, long = verdict(question, memory), verdict(question, f"{filler}\n{memory}")
    assert short.carries is True and long.carries is True
    assert short.confidence >= 0.8 > long.confidence


AUDITION = Question("c-10", "What was Joanna's audition for?", "writing gig", "")
HALF = "Joanna's audition went well. Her first passion was acting, now she shines in writing."
FULL = "Joanna auditioned for a writing gig last week."


def test_a_long_memory_carries_only_what_it_states_well() -> None:
    # A buffer that still holds the evidence holds it verbatim (the walk settles that first):
    # half of the answer's words in one of its many lines is an unsure "no", the LLM is asked.
    filler = "\n".join(f"Line {i}: we talked about the weather and our plans." for i in range(80))
    assert verdict(AUDITION, HALF).carries is True  # a short memory: the judge's usual line
    partial = verdict(AUDITION, f"{filler}\n{HALF}")
    assert partial.carries is False and partial.confidence < 0.8
    assert verdict(AUDITION, f"{filler}\n{HALF}", kind="context").carries is True
    assert verdict(AUDITION, f"{filler}\n{FULL}").carries is True


def _talk(lines: int, start: int = 0) -> list[str]:
    """A conversation's worth of turns about other things, both speakers named in it."""
    topics = ["the weather", "a new recipe", "the garden", "a film", "the office", "a book"]
    return [
        f"{'Alice' if i % 2 else 'Bob'}: I keep thinking about {topics[i % len(topics)]}, "
        f"it came up again on day {i}."
        for i in range(start, start + lines)
    ]


SISTER = Question(
    "c-9",
    "Where does Alice's sister live?",
    "Denver",
    "Boston",
    evidence_texts=("Alice: My sister Emma moved away last spring.",),
)


def test_a_long_context_whose_answer_words_are_scattered_does_not_carry_it() -> None:
    # "Denver" and the names occur in a long buffer, never near the sister or where she lives
    scattered = [*_talk(40), "Bob: The Denver airport was so crowded, Alice.", *_talk(40, 40)]
    assert verdict(SISTER, "\n".join(scattered), kind="context").carries is False


def test_a_long_context_stating_the_answer_for_the_question_carries_it() -> None:
    colocated = [*_talk(40), "Alice: My sister Emma lives in Denver now.", *_talk(40, 40)]
    assert verdict(SISTER, "\n".join(colocated), kind="context").carries is True
