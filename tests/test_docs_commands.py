"""Every command the docs and the dataset cards print runs as printed: each `bench` command of
a fenced block of README.md and docs/*.md parses with the command line's own parser, and every
card's "Get it" command runs, its placeholders filled with a real file."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from bench.cli import build_parser, main
from bench.datasets import DATASETS

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def documented_commands() -> list[tuple[str, str]]:
    """``(file, command)`` for each `bench ...` command line of a fenced block: in a
    ``console`` block the lines after ``$ ``, in a ``bash``/``sh`` block every line (``\\``
    continuations joined, comments and shell redirections cut)."""
    out = []
    for f in DOCS:
        text = f.read_text(encoding="utf-8")
        for lang, block in re.findall(r"```(\w*)\n(.*?)```", text, re.S):
            if lang not in ("console", "bash", "sh", "shell"):
                continue
            block = block.replace("\\\n", " ")
            for line in block.splitlines():
                line = line.strip()
                if lang == "console":
                    if not line.startswith("$ "):
                        continue  # output, not a command
                    line = line[2:]
                for part in re.split(r"\s(?:\||&&|;)\s", line.split(" #")[0]):
                    part = re.split(r"\s[<>]\s", part.strip())[0]
                    if part.startswith("bench "):
                        out.append((f.name, part))
    return out


COMMANDS = documented_commands()


def test_the_docs_have_commands_to_check():
    assert len(COMMANDS) >= 20  # the extraction finds the README's and the guides' commands


@pytest.mark.parametrize(("doc", "command"), COMMANDS, ids=[f"{d}:{c[:60]}" for d, c in COMMANDS])
def test_every_documented_command_parses(doc, command):
    try:
        build_parser().parse_args(shlex.split(command)[1:])
    except SystemExit as e:
        pytest.fail(f"{doc}: `{command}` is not a valid bench command (exit {e.code})")


def _fill(command: str, file: Path) -> list[str]:
    """A card's command with its placeholders filled: FILE, COL (text, label, private), the
    optional [...] part kept with a real column."""
    command = command.replace("[--set private=[COL,...]]", "--set private=[author]")
    command = command.replace("path=FILE", f"path={file}").replace("text=COL", "text=body")
    return shlex.split(command.replace("label=COL", "label=topic"))[1:]


CARD_COMMANDS = [(n, DATASETS.get(n).card.how_to_get) for n in DATASETS.names()
                 if DATASETS.get(n).card.how_to_get.startswith("bench ")]


@pytest.mark.parametrize(("name", "command"), CARD_COMMANDS, ids=[n for n, _ in CARD_COMMANDS])
def test_every_card_command_runs_as_printed(name, command, tmp_path, capsys):
    rows = [{"body": f"text number {i} about the bank", "topic": ["a", "b"][i % 2],
             "author": ["x", "y", "z"][i % 3]} for i in range(60)]
    file = tmp_path / f"mine.{name}"
    if name == "csv":
        file.write_text("body,topic,author\n" + "".join(
            f"{r['body']},{r['topic']},{r['author']}\n" for r in rows), encoding="utf-8")
    else:
        file.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    argv = _fill(command, file) + ["--cache-dir", str(tmp_path / "cache")]
    assert "COL" not in " ".join(argv) and "FILE" not in " ".join(argv)
    assert main(argv) == 0, capsys.readouterr().err
    assert any((tmp_path / "cache").iterdir())
