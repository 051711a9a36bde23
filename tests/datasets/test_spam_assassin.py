"""spam_assassin: e-mails parsed into subject and body, headers never in the text; the fetched
corpus's size and labels (needs `bench data fetch spam_assassin`, which `make test` runs)."""

from __future__ import annotations

import pytest

from bench.datasets import DatasetConfigError, load_dataset
from bench.datasets.spam_assassin import html_text, message_text

PLAIN = (
    "From alice@example.org  Thu Aug 22 12:36:23 2002\n"
    "Return-Path: <alice@example.org>\n"
    "From: Alice Liddell <alice@example.org>\n"
    "To: list@example.org\n"
    "Subject: =?iso-8859-1?q?Caf=E9?= plans\n"
    "Content-Type: text/plain; charset=iso-8859-1\n"
    "\n"
    "Bob wrote:\n"
    "> the meeting is at noon\n"
    "|> older quote\n"
    "    From: Bob <bob@example.org>\n"
    "I will bring the caf\xe9 menu.\n"
    "-- \n"
    "Alice Liddell, Wonderland Inc.\n"
)

HTML_ONLY = (
    "From: spammer@example.com\n"
    "Subject: WIN NOW\n"
    "MIME-Version: 1.0\n"
    'Content-Type: multipart/alternative; boundary="b"\n'
    "\n"
    "--b\n"
    "Content-Type: text/html\n"
    "\n"
    "<html><head><style>p {color: red}</style><script>track()</script></head>"
    "<body><p>Claim your &amp; prize</p><br>today</body></html>\n"
    "--b--\n"
)


def test_headers_quotes_and_signature_never_reach_the_text():
    text = message_text(PLAIN)
    assert text == "Café plans Bob wrote: I will bring the café menu."
    for leaked in ("alice@example.org", "Return-Path", "noon", "older quote", "bob@",
                   "Wonderland"):
        assert leaked not in text
    kept = message_text(PLAIN, strip_quotes=False)
    assert "noon" in kept and "Wonderland" in kept and "Return-Path" not in kept


def test_an_html_only_message_gives_its_visible_text():
    assert message_text(HTML_ONLY) == "WIN NOW Claim your & prize today"
    assert html_text("<p>a</p><script>x</script>b") == "\na b".replace(" ", "")


def test_the_fetched_corpus_size_labels_and_content():
    ds = load_dataset("spam_assassin")
    assert len(ds) == 5896 == ds.card.size  # 6,046 messages less empty ones and duplicates
    assert ds.tasks["spam"].counts() == {"ham": 4105, "spam": 1791}
    assert ds.privacy_tasks == {} and ds.groups is None
    assert len(set(ds.texts)) == len(ds.texts) and all(len(t.split()) >= 5 for t in ds.texts)
    assert not any(t.startswith("Return-Path") for t in ds.texts)
    # a header only where a body forwards a whole message (bounces): 11 of 5,896
    assert sum("Received:" in t for t in ds.texts) == 11
    assert ds.content_hash.startswith("c0615ae4a51a910d")


@pytest.mark.parametrize("bad", [{"strip_quotes": "yes"}, {"min_words": 0},
                                 {"min_words": True}])
def test_bad_options_name_the_option(bad):
    with pytest.raises(DatasetConfigError, match=f"spam_assassin.*{next(iter(bad))}"):
        load_dataset("spam_assassin", **bad)
