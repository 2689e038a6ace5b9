"""The local embedding model: all-MiniLM-L6-v2 (int8 ONNX) through onnxruntime + tokenizers.

Shipped inside the package (23 MB, Apache-2.0, see ``models/.../NOTICE``): no network and no
download, ever. Mean pooling over the attention mask, then L2 normalisation, as
sentence-transformers does; inputs truncated at 256 word pieces. One session per process,
created on first use; one intra-op thread by default so a hook or a 2-core CI machine is not
swamped (``threads`` in the routing file).

numpy, onnxruntime and tokenizers are imported here and nowhere on a path that does not embed.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np

from cortexmem.core.text import clean_text

MODEL_DIR = Path(__file__).parent / "models" / "all-MiniLM-L6-v2-onnx-int8"
DIM = 384
MAX_TOKENS = 256
# The tokenizer reads a whole text before truncating it (a 3 MB tool output takes 2.5 s), so
# texts are cut first. Whitespace never becomes a word piece, so runs of it are squeezed before
# the cut; 32k characters is far beyond what 256 word pieces of real text span (4-6 each).
MAX_CHARS = 32_768

_LOCK = threading.Lock()
_MODELS: dict[int, LocalModel] = {}


class LocalModel:
    def __init__(self, threads: int = 1, folder: Path = MODEL_DIR) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        self.session = ort.InferenceSession(
            str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"]
        )
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self.inputs = {i.name for i in self.session.get_inputs()}

    def embed(self, texts: list[str]) -> np.ndarray:
        """``(len(texts), 384)`` float32, unit length, in the order given."""
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        # One text per run: the int8 model quantises its activations per tensor at run time,
        # so a text run together with others gets a different vector than alone (cosine ~0.99,
        # elements off by up to 0.04), and a stored vector would depend on its batch-mates. On
        # one thread batching is no faster here (~450 sentences/s either way).
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for i, text in enumerate(texts):
            out[i] = self._batch([clip(clean_text(text))])[0]
        return out

    def _batch(self, texts: list[str]) -> np.ndarray:
        encoded = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        feed: dict[str, Any] = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        hidden = self.session.run(None, feed)[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)


def clip(text: str) -> str:
    """``text`` cut to what the model can read (same word pieces, at most ``MAX_CHARS``)."""
    if len(text) <= MAX_CHARS:
        return text
    return " ".join(text[: 8 * MAX_CHARS].split())[:MAX_CHARS]


def model(threads: int = 1) -> LocalModel:
    """The process's model (created once per thread count)."""
    with _LOCK:
        found = _MODELS.get(threads)
        if found is None:
            found = _MODELS[threads] = LocalModel(threads)
        return found
