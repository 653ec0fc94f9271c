"""The offline router's learned classifier: hashed n-gram features and a linear model.

``predict(text)`` gives each intent's probability (social, question, task, urgent) from the
weights shipped in ``router_weights.json``, trained by ``bench/train_router.py`` on the
labelled set ``tests/data/triage_set.jsonl`` (see docs/router.md). Inference is plain Python
on purpose: NumPy is not a runtime dependency, and a message costs a few hundred hashes and
array reads (about a quarter of a millisecond). The same ``feature_names`` function feeds
the training script, so training and inference cannot drift apart.

Features, all hashed (CRC-32) into ``buckets`` slots: the words and word pairs of the
folded text (lower case, accents dropped, digits as ``0``), the character 3- to 5-grams of
each word with its edges marked, the first and last token, and the message's shape (``?``,
``!``, emoji, a shouted word; not its length). Each message's vector is scaled to unit length, so a
long rambling message weighs as much as a short one.
"""

from __future__ import annotations

import base64
import itertools
import json
import math
import re
import unicodedata
import zlib
from array import array
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field
from functools import cache, lru_cache
from importlib import resources
from typing import Any

INTENTS = ("social", "question", "task", "urgent")
WEIGHTS_FILE = "router_weights.json"
MAX_CHARS = 2000  # a longer message is scored on its first 2,000 characters
TOKEN = re.compile(r"[^\W\d_]+|\d+|[^\w\s]", re.UNICODE)
DIGIT = re.compile(r"\d")
SHOUTED = re.compile(r"\b[^\W\d_a-z]{3,}\b")
# Scripts written without spaces between words (kana, CJK ideographs): a "token" there is a
# whole clause, so its characters and character pairs are its words.
UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")


@lru_cache(maxsize=16)  # a message is folded by the router and by each rule in turn
def fold(text: str) -> str:
    """Lower case, accents dropped (``é`` → ``e``), curly quotes straightened, digits as ``0``."""
    if not text.isascii():  # ASCII has no accents or curly quotes: NFKD leaves it as it is
        decomposed = unicodedata.normalize("NFKD", text.replace("’", "'").replace("‘", "'"))
        text = "".join(char for char in decomposed if not unicodedata.combining(char))
    return DIGIT.sub("0", text.lower())


def is_emoji(char: str) -> bool:
    """A pictograph or another symbol character (emoji, hearts, stars)."""
    return unicodedata.category(char) == "So"


def feature_names(text: str) -> list[str]:
    """The message's features, once per occurrence (built in comprehensions: this is the
    per-message cost, a few hundred short strings)."""
    raw = text[:MAX_CHARS]
    tokens = TOKEN.findall(fold(raw))
    names = ["w:" + token for token in tokens]
    names += [f"b:{left} {right}" for left, right in itertools.pairwise(tokens)]
    for marked in [f"<{token}>" for token in tokens if token.isalnum()]:
        names += ["c:" + marked[start:start + size] for size in (3, 4, 5)
                  for start in range(max(1, len(marked) - size + 1))]
    for run in [token for token in tokens if UNSPACED.search(token)]:
        names += ["u:" + run[start:start + 2] for start in range(len(run) - 1)]
        names += ["u:" + char for char in run]
    if tokens:
        names += ["first:" + tokens[0], "last:" + tokens[-1]]
    # No length feature: the training rows' lengths (short thanks, longer requests) did not
    # carry over to messages written apart from them (a long thank-you went to the agent).
    if "?" in raw or "¿" in raw:
        names.append("shape:question-mark")
    if "!" in raw:
        names.append("shape:exclamation")
    if any(is_emoji(char) for char in raw if not char.isascii()):
        names.append("shape:emoji")
    if SHOUTED.search(raw):
        names.append("shape:shouted")
    return names


def features(text: str) -> dict[str, float]:
    """The message's features and their weights (counts), scaled to unit length."""
    counts = Counter(feature_names(text))
    norm = math.sqrt(sum(value * value for value in counts.values())) or 1.0
    return {name: value / norm for name, value in counts.items()}


def bucket(name: str, buckets: int) -> int:
    """The slot a feature hashes to (CRC-32: the same in every process, unlike ``hash``)."""
    return zlib.crc32(name.encode("utf-8")) % buckets


@dataclass(frozen=True)
class RouterWeights:
    """A trained linear model: one row of ``buckets`` weights per intent, plus biases.

    Weights are stored as 16-bit integers times ``scale`` (the file stays small; the
    rounding moves a probability by well under 0.1 %)."""

    intents: tuple[str, ...]
    buckets: int
    scale: float
    bias: tuple[float, ...]
    weights: array  # type: ignore[type-arg]  # int16, bucket-major: weights[b * k + i]
    training: dict[str, Any] = field(default_factory=dict)  # how they were trained

    def scores(self, text: str) -> list[float]:
        """The linear score of each intent (``features`` inlined: this runs per message; one
        list per intent summed at C speed beats a loop over features by a fifth)."""
        k = len(self.intents)
        buckets = self.buckets
        weights = self.weights
        crc32 = zlib.crc32  # looked up once: this runs per feature
        counts = Counter(feature_names(text))
        starts = [crc32(name.encode("utf-8")) % buckets * k for name in counts]
        values = list(counts.values())
        pairs = list(zip(starts, values, strict=True))
        totals = [sum([weights[start + i] * value for start, value in pairs]) for i in range(k)]
        norm = math.sqrt(sum(value * value for value in values)) or 1.0
        factor = self.scale / norm
        return [bias + total * factor for bias, total in zip(self.bias, totals, strict=True)]

    def predict(self, text: str) -> dict[str, float]:
        """Each intent's probability (softmax of the scores)."""
        scores = self.scores(text)
        top = max(scores)
        exps = [math.exp(score - top) for score in scores]
        total = sum(exps)
        return {intent: e / total for intent, e in zip(self.intents, exps, strict=True)}

    def to_json(self) -> str:
        """The weights file's text (what ``bench/train_router.py`` writes)."""
        packed = base64.b64encode(zlib.compress(self.weights.tobytes(), 9)).decode("ascii")
        return json.dumps({"format": 1, "intents": list(self.intents), "buckets": self.buckets,
                           "scale": self.scale, "bias": list(self.bias),
                           "training": self.training,
                           "weights_int16_zlib_base64": packed}, indent=1) + "\n"

    @classmethod
    def from_json(cls, text: str) -> RouterWeights:
        """Read a weights file written by ``to_json``."""
        data = json.loads(text)
        weights = array("h")
        weights.frombytes(zlib.decompress(base64.b64decode(data["weights_int16_zlib_base64"])))
        intents = tuple(str(intent) for intent in data["intents"])
        if len(weights) != int(data["buckets"]) * len(intents):
            raise ValueError(f"{WEIGHTS_FILE}: {len(weights)} weights for "
                             f"{data['buckets']} buckets × {len(intents)} intents")
        return cls(intents=intents, buckets=int(data["buckets"]), scale=float(data["scale"]),
                   bias=tuple(float(b) for b in data["bias"]), weights=weights,
                   training=dict(data.get("training", {})))


@cache
def shipped_weights() -> RouterWeights:
    """The weights inside the package, read once on the first message (not at start)."""
    text = resources.files("bot.models").joinpath(WEIGHTS_FILE).read_text(encoding="utf-8")
    return RouterWeights.from_json(text)


def predict(text: str) -> dict[str, float]:
    """Each intent's probability for ``text``, by the shipped weights."""
    return shipped_weights().predict(text)


def choose_intent(probabilities: dict[str, float],
                  allowed: Collection[str] = INTENTS) -> str:
    """The intent to act on: the most likely *route* first, then its most likely intent.

    Question and task both go to the agent, so their probabilities are pooled against social
    (a quick reply) and urgent (the owner is told) before the two are told apart: a message
    that is 40 % question and 35 % task goes to the agent even when it is 45 % social."""
    pools: dict[str, list[str]] = {}
    for intent in allowed:
        pools.setdefault("agent" if intent in ("question", "task") else intent, []).append(intent)
    best_pool = max(pools.values(), key=lambda pool: sum(probabilities[i] for i in pool))
    return max(best_pool, key=lambda intent: probabilities[intent])
