"""Tests for bench.embeddings: GloVe, text loaders, malformed files, tokenization, OOV policy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bench.embeddings import (
    UNK,
    Embedding,
    EmbeddingFormatError,
    check_oov_policy,
    detokenize,
    load_embedding,
    load_text_embedding,
    oov_leaks,
    tokenize,
)


@pytest.fixture(scope="module")
def glove() -> Embedding:
    return load_embedding()


def _write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


# ------------------------------------------------------------------ GloVe 6B 50d


def test_glove_default(glove):
    assert glove.name == "glove-6b-50d"
    assert glove.vectors.shape == (50_000, 50) and glove.vectors.dtype == np.float64
    assert glove.words[:3] == ["the", ",", "."]
    assert glove.size == 50_000 and glove.dim == 50 and glove.unk_id == 50_000
    assert glove.word_to_id["the"] == 0 and glove.word_to_id["."] == 2
    assert np.all(np.isfinite(glove.vectors))


def test_glove_vocab_size_and_subset(glove):
    small = load_embedding("glove-6b-50d", vocab_size=1_000)
    assert small.vectors.shape == (1_000, 50)
    sub = glove.subset(1_000)
    assert sub.words == small.words
    np.testing.assert_array_equal(sub.vectors, small.vectors)
    np.testing.assert_array_equal(sub.vectors, glove.vectors[:1_000])
    for bad in (1, 0, 50_001, 2.5, True):
        with pytest.raises(ValueError, match="vocab_size"):
            glove.subset(bad)
    with pytest.raises(ValueError, match="vocab_size"):
        load_embedding("glove-6b-50d", vocab_size=400_001)


def test_unknown_embedding_name():
    with pytest.raises(ValueError, match="did you mean 'glove-6b-50d'"):
        load_embedding("glove-6b-50")


def test_input_vectors_and_unk_row(glove):
    inp = glove.input_vectors()
    assert inp.shape == (50_001, 50)
    np.testing.assert_array_equal(inp[:-1], glove.vectors)
    np.testing.assert_allclose(inp[-1], glove.vectors.mean(axis=0))


# ------------------------------------------------------------------ tokenization and encoding


def test_tokenize_glove_conventions():
    assert tokenize("Don't stop.") == ["do", "n't", "stop", "."]
    assert tokenize("The cat sat. It slept.") == ["the", "cat", "sat", ".", "it", "slept", "."]
    assert tokenize("The U.S. economy...") == ["the", "u.s.", "economy", "..."]
    assert tokenize("Hello, World!") == ["hello", ",", "world", "!"]
    assert tokenize("") == []


def test_detokenize():
    assert detokenize(["do", "n't", "stop", "."]) == "don't stop."
    assert detokenize(tokenize("The cat sat on the mat.")) == "the cat sat on the mat."
    assert detokenize(["hello", ",", "world", "!"]) == "hello, world!"


def test_encode_unk_and_keep(glove):
    tokens = ["the", "qwxzvbnm", "cat", "."]
    ids, oov = glove.encode(tokens)
    assert ids.tolist() == [0, glove.unk_id, glove.word_to_id["cat"], 2]
    assert oov.tolist() == [False, True, False, False]
    ids_keep, oov_keep = glove.encode(tokens, oov="keep")
    assert ids_keep.tolist() == [0, -1, glove.word_to_id["cat"], 2]
    assert oov_keep.tolist() == oov.tolist()
    assert glove.decode(ids[[0, 2, 3]]) == ["the", "cat", "."]
    with pytest.raises(ValueError, match="oov policy"):
        glove.encode(tokens, oov="drop")
    empty_ids, empty_mask = glove.encode([])
    assert empty_ids.shape == (0,) and empty_mask.shape == (0,)


def test_oov_policy_helpers():
    assert oov_leaks("keep") is True and oov_leaks("unk") is False
    check_oov_policy("unk")
    with pytest.raises(ValueError):
        check_oov_policy("UNK")
    with pytest.raises(ValueError):
        oov_leaks("drop")


def test_embedding_validation():
    v = np.zeros((3, 2))
    with pytest.raises(ValueError, match="duplicate"):
        Embedding("e", ["a", "b", "a"], v)
    with pytest.raises(ValueError, match="reserved"):
        Embedding("e", ["a", UNK, "c"], v)
    with pytest.raises(ValueError, match="shape"):
        Embedding("e", ["a", "b"], v)
    with pytest.raises(ValueError, match="at least 2"):
        Embedding("e", ["a"], np.zeros((1, 2)))
    bad = v.copy()
    bad[1, 0] = np.nan
    with pytest.raises(ValueError, match="row 1"):
        Embedding("e", ["a", "b", "c"], bad)


# ------------------------------------------------------------------ text loaders


def test_load_glove_text(tmp_path):
    p = _write(tmp_path, "g.txt", "the 0.1 0.2 0.3\ncat -1 2 3.5e-1\ndog 0 0 1\n")
    e = load_text_embedding(p, vocab_size=None)
    assert e.words == ["the", "cat", "dog"] and e.dim == 3
    np.testing.assert_array_equal(e.vectors[1], [-1.0, 2.0, 0.35])
    two = load_text_embedding(p, vocab_size=2, fmt="glove")
    assert two.words == ["the", "cat"]
    via = load_embedding(path=p, vocab_size=3)
    assert via.words == e.words and via.name == str(p)


def test_load_vec_format(tmp_path):
    # fastText .vec: header "<count> <dim>", lines may end with a trailing space
    p = _write(tmp_path, "f.vec", "3 2\nthe 0.5 1 \n, 2 3 \nof -1 -2 \n")
    for fmt in ("auto", "vec"):
        e = load_text_embedding(p, vocab_size=None, fmt=fmt)
        assert e.words == ["the", ",", "of"]
        np.testing.assert_array_equal(e.vectors, [[0.5, 1], [2, 3], [-1, -2]])
    assert load_text_embedding(p, vocab_size=2).words == ["the", ","]


def test_loader_argument_errors(tmp_path):
    p = _write(tmp_path, "g.txt", "a 1\nb 2\n")
    with pytest.raises(ValueError, match="format"):
        load_text_embedding(p, fmt="bin")
    with pytest.raises(FileNotFoundError):
        load_text_embedding(tmp_path / "missing.txt")
    with pytest.raises(ValueError, match="vocab_size 5 requested"):
        load_text_embedding(p, vocab_size=5)
    one = _write(tmp_path, "one.txt", "a 1 2\n")
    with pytest.raises(EmbeddingFormatError, match="fewer than 2"):
        load_text_embedding(one, vocab_size=None)


@pytest.mark.parametrize(
    "name,text,fmt,line,match",
    [
        ("bad_value.txt", "a 1 2\nb 1 x\n", "auto", 2, "non-numeric"),
        ("wrong_dim.txt", "a 1 2\nb 1 2\nc 1 2 3\n", "auto", 3, "expected 2 values"),
        ("nan.txt", "a 1 2\nb nan 2\n", "auto", 2, "NaN or inf"),
        ("inf.txt", "a 1 2\nb 1 -inf\n", "glove", 2, "NaN or inf"),
        ("dup.txt", "a 1 2\nb 1 2\na 3 4\n", "auto", 3, "duplicate word 'a'"),
        ("bad_header.vec", "the 1 2\nb 1 2\n", "vec", 1, "header"),
        ("header_dim.vec", "2 3\na 1 2 3\nb 1 2\n", "auto", 3, "expected 3 values"),
        ("empty_line.txt", "a 1 2\n\nb 1 2\n", "auto", 2, "empty line"),
        ("no_values.txt", "a\nb\n", "auto", 1, "no vector values"),
    ],
)
def test_malformed_files_name_file_and_line(tmp_path, name, text, fmt, line, match):
    p = _write(tmp_path, name, text)
    with pytest.raises(EmbeddingFormatError, match=match) as info:
        load_text_embedding(p, vocab_size=None, fmt=fmt)
    assert f"{p}:{line}:" in str(info.value)


def test_non_utf8_file_names_file_and_line(tmp_path):
    from bench.embeddings import EmbeddingFormatError, load_text_embedding

    p = tmp_path / "latin1.txt"
    p.write_bytes(b"the 0.1 0.2\ncaf\xe9 0.3 0.4\n")
    with pytest.raises(EmbeddingFormatError, match=r"latin1\.txt:2: not valid UTF-8"):
        load_text_embedding(p, vocab_size=None)
