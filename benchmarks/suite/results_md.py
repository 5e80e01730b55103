"""RESULTS.md as one generated text for sections 1-7 followed by self-contained blocks for the
later sections, each between ``<!-- begin: KEY -->`` and ``<!-- end: KEY -->``.  A run of some
sections replaces only their text and keeps the rest of the file as it was recorded."""
import os
import re

_BLOCK = re.compile(r"<!-- begin: (\w+) -->\n.*?<!-- end: \1 -->\n", re.S)


def block(key, text):
    return f"<!-- begin: {key} -->\n{text.rstrip()}\n<!-- end: {key} -->\n"


def split(text):
    """(the text outside every block, {key: block text}) of a RESULTS.md."""
    blocks = {m.group(1): m.group(0) for m in _BLOCK.finditer(text)}
    return _BLOCK.sub("", text), blocks


def update(path, classic=None, blocks=None):
    """Write path: classic (or the recorded text outside the blocks when None), then the recorded
    blocks in their order with those in ``blocks`` {key: text} replaced or appended."""
    old = open(path).read() if os.path.exists(path) else ""
    old_classic, old_blocks = split(old)
    body = classic if classic is not None else old_classic
    merged = dict(old_blocks)
    merged.update({k: block(k, v) for k, v in (blocks or {}).items()})
    # the blank line before each block is the writer's, not the text's: without this, each
    # rewrite would keep the old ones and add new ones
    text = body.rstrip("\n") + "\n" if body.strip() else ""
    for k in merged:
        text += ("\n" if text and not text.endswith("\n\n") else "") + merged[k]
    with open(path, "w") as f:
        f.write(text)
