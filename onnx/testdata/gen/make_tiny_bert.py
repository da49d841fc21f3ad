#!/usr/bin/python3
"""Writes a random-weight BERT-shaped ONNX model, its WordPiece tokenizer and
a numpy reference forward pass, for r2med's ONNX tests and benchmarks.

Run with Debian's python (needs python3-onnx, python3-numpy, python3-scipy):

    /usr/bin/python3 onnx/testdata/gen/make_tiny_bert.py onnx/testdata          # the committed fixtures
    DIMS=30522,512,384,12,12,1536 /usr/bin/python3 make_tiny_bert.py --kind encoder --no-reference OUT

The graph uses the operators of a Hugging Face BERT export at opset 14
(Gather, Shape, Slice, Unsqueeze, Cast, MatMul, Add, Sub, Mul, Div, Reshape,
Transpose, Softmax, Erf-GELU, ReduceMean/Pow/Sqrt layer norm) with inputs
input_ids, attention_mask, token_type_ids (int64 [batch, seq]).

  encoder  output last_hidden_state [batch, seq, H]
  cross1   BertForSequenceClassification with 1 label: logits [batch, 1]
  cross2   the same with 2 labels (monoBERT style): logits [batch, 2]

The reference is computed in float64 from the same weights, so it is an
independent check of ONNX Runtime, not a copy of its output. Texts are
tokenized here by a minimal BERT tokenizer that is exact for the plain ASCII
reference texts (lower-case, split on white space and punctuation, greedy
longest-match WordPiece); the ids are stored so the Go tokenizer is checked
against them too.
"""

import argparse
import json
import os
import string

import numpy as np
import onnx
from scipy.special import erf
from onnx import TensorProto, helper, numpy_helper

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
PUNCT = list(".,?!-():;'/%+")
WORDS = """the of and a in to is with for by on from what how does which are was be
patient patients disease treatment cancer heart blood pressure diabetes insulin gene
protein cell cells acute chronic pain fever infection virus bacteria drug dose therapy
clinical trial study risk symptoms diagnosis high low type kidney liver lung brain
mutation receptor dna rna enzyme level levels after before during year old man woman
child presents history test result normal severe mild cause effect""".split()
SUFFIXES = ["##s", "##ed", "##ing", "##ly", "##er", "##al", "##ic", "##tion", "##itis",
            "##io", "##logy", "##ness", "##ment", "##ous", "##ive", "##ia", "##ase"]
PREFIXES = ["card", "hyper", "hypo", "neuro", "gastro", "immun", "anti", "bio", "micro"]


def tiny_vocab():
    v = list(SPECIALS) + PUNCT + list(string.digits) + list(string.ascii_lowercase)
    v += ["##" + c for c in string.ascii_lowercase + string.digits]
    v += WORDS + PREFIXES + SUFFIXES + ["tension", "##tension"]
    return list(dict.fromkeys(v))  # single letters such as "a" are also words


def synthetic_vocab(size):
    """A vocabulary of `size` entries: the tiny one plus pronounceable
    syllable words and their ## continuations (for benchmark models)."""
    v = tiny_vocab()
    seen = set(v)
    cons, vows = "bcdfghklmnprstvz", "aeiou"
    syl = [c + w for c in cons for w in vows]
    i = 0
    while len(v) < size:
        a, b = divmod(i, len(syl))
        word = syl[b] if a == 0 else syl[a % len(syl)] + syl[b] + (syl[a // len(syl)] if a >= len(syl) else "")
        for w in (word, "##" + word):
            if len(v) < size and w not in seen:
                v.append(w)
                seen.add(w)
        i += 1
    return v


def tokenizer_json(vocab):
    ids = {t: i for i, t in enumerate(vocab)}
    special = lambda t, tid: {"SpecialToken": {"id": t, "type_id": tid}}
    seq = lambda s, tid: {"Sequence": {"id": s, "type_id": tid}}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {"id": ids[t], "content": t, "single_word": False, "lstrip": False,
             "rstrip": False, "normalized": False, "special": True}
            for t in SPECIALS
        ],
        "normalizer": {"type": "BertNormalizer", "clean_text": True,
                       "handle_chinese_chars": True, "strip_accents": None,
                       "lowercase": True},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [special("[CLS]", 0), seq("A", 0), special("[SEP]", 0)],
            "pair": [special("[CLS]", 0), seq("A", 0), special("[SEP]", 0),
                     seq("B", 1), special("[SEP]", 1)],
            "special_tokens": {
                t: {"id": t, "ids": [ids[t]], "tokens": [t]} for t in ("[CLS]", "[SEP]")
            },
        },
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": "[UNK]",
                  "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": ids},
    }


def wordpiece(text, ids):
    """BERT tokenization, exact for plain ASCII text."""
    words, cur = [], ""
    for ch in text.lower():
        if ch.isspace():
            if cur:
                words.append(cur)
            cur = ""
        elif ch in string.punctuation:
            if cur:
                words.append(cur)
            words.append(ch)
            cur = ""
        else:
            cur += ch
    if cur:
        words.append(cur)
    out = []
    for w in words:
        pieces, start = [], 0
        while start < len(w):
            end = len(w)
            while end > start:
                piece = w[start:end] if start == 0 else "##" + w[start:end]
                if piece in ids:
                    break
                end -= 1
            if end == start:
                pieces = [ids["[UNK]"]]
                break
            pieces.append(ids[piece])
            start = end
        out += pieces
    return out


def encode(ids, a, b=None):
    x = [ids["[CLS]"]] + wordpiece(a, ids) + [ids["[SEP]"]]
    t = [0] * len(x)
    if b is not None:
        y = wordpiece(b, ids) + [ids["[SEP]"]]
        x += y
        t += [1] * len(y)
    return x, t


class Weights:
    def __init__(self, rng, V, P, H, heads, layers, FF, labels):
        f = lambda *s, std=0.2: (rng.standard_normal(s) * std).astype(np.float32)
        self.word, self.pos, self.type = f(V, H, std=1.0), f(P, H, std=0.5), f(2, H, std=0.5)
        self.ln_e = (1 + f(H, std=0.1), f(H, std=0.1))
        self.layers = []
        for _ in range(layers):
            self.layers.append(dict(
                q=(f(H, H), f(H, std=0.1)), k=(f(H, H), f(H, std=0.1)),
                v=(f(H, H), f(H, std=0.1)), o=(f(H, H), f(H, std=0.1)),
                ln1=(1 + f(H, std=0.1), f(H, std=0.1)),
                ff1=(f(H, FF), f(FF, std=0.1)), ff2=(f(FF, H), f(H, std=0.1)),
                ln2=(1 + f(H, std=0.1), f(H, std=0.1))))
        self.heads = heads
        self.labels = labels
        if labels:
            self.pooler = (f(H, H), f(H, std=0.1))
            self.cls = (f(H, labels, std=0.5), f(labels, std=0.1))


EPS = 1e-12
NEG = float(np.finfo(np.float32).min)


def build_graph(w, name):
    inits, nodes = [], []
    H = w.word.shape[1]
    dh = H // w.heads
    counter = [0]

    def fresh(p):
        counter[0] += 1
        return f"{p}_{counter[0]}"

    def const(value, nm=None, dtype=None):
        nm = nm or fresh("const")
        arr = np.asarray(value, dtype=dtype) if dtype is not None else np.asarray(value)
        inits.append(numpy_helper.from_array(arr, nm))
        return nm

    def op(kind, inputs, **attrs):
        out = fresh(kind.lower())
        nodes.append(helper.make_node(kind, inputs, [out], name=out, **attrs))
        return out

    def layer_norm(x, g, b):
        mean = op("ReduceMean", [x], axes=[-1], keepdims=1)
        d = op("Sub", [x, mean])
        var = op("ReduceMean", [op("Pow", [d, const(np.float32(2))])], axes=[-1], keepdims=1)
        std = op("Sqrt", [op("Add", [var, const(np.float32(EPS))])])
        return op("Add", [op("Mul", [op("Div", [d, std]), const(g)]), const(b)])

    def dense(x, wb):
        return op("Add", [op("MatMul", [x, const(wb[0])]), const(wb[1])])

    # Embeddings: word + position (sliced to the sequence length) + type.
    seq_len = op("Gather", [op("Shape", ["input_ids"]), const(np.int64(1))], axis=0)
    ends = op("Unsqueeze", [seq_len, const(np.array([0], np.int64))])
    pos_ids = op("Slice", [const(np.arange(w.pos.shape[0], dtype=np.int64)[None, :]),
                           const(np.array([0], np.int64)), ends, const(np.array([1], np.int64))])
    emb = op("Add", [op("Add", [op("Gather", [const(w.word, "word_embeddings"), "input_ids"]),
                                op("Gather", [const(w.pos, "position_embeddings"), pos_ids])]),
                     op("Gather", [const(w.type, "token_type_embeddings"), "token_type_ids"])])
    h = layer_norm(emb, *w.ln_e)

    # Extended attention mask: (1 - mask) * float32.min, broadcast over heads and queries.
    m = op("Cast", [op("Unsqueeze", ["attention_mask", const(np.array([1, 2], np.int64))])],
           to=TensorProto.FLOAT)
    ext = op("Mul", [op("Sub", [const(np.float32(1)), m]), const(np.float32(NEG))])

    split = const(np.array([0, 0, w.heads, dh], np.int64))
    merge = const(np.array([0, 0, H], np.int64))
    for L in w.layers:
        q = op("Transpose", [op("Reshape", [dense(h, L["q"]), split])], perm=[0, 2, 1, 3])
        k = op("Transpose", [op("Reshape", [dense(h, L["k"]), split])], perm=[0, 2, 3, 1])
        v = op("Transpose", [op("Reshape", [dense(h, L["v"]), split])], perm=[0, 2, 1, 3])
        scores = op("Add", [op("Div", [op("MatMul", [q, k]), const(np.float32(np.sqrt(dh)))]), ext])
        ctx = op("MatMul", [op("Softmax", [scores], axis=-1), v])
        ctx = op("Reshape", [op("Transpose", [ctx], perm=[0, 2, 1, 3]), merge])
        h = layer_norm(op("Add", [dense(ctx, L["o"]), h]), *L["ln1"])
        f = dense(h, L["ff1"])
        gelu = op("Mul", [op("Mul", [f, op("Add", [op("Erf", [op("Div", [f, const(np.float32(np.sqrt(2)))])]),
                                                  const(np.float32(1))])]), const(np.float32(0.5))])
        h = layer_norm(op("Add", [dense(gelu, L["ff2"]), h]), *L["ln2"])

    if w.labels:
        first = op("Gather", [h, const(np.int64(0))], axis=1)
        pooled = op("Tanh", [dense(first, w.pooler)])
        out, out_name, out_shape = dense(pooled, w.cls), "logits", ["batch", w.labels]
    else:
        out, out_name, out_shape = h, "last_hidden_state", ["batch", "sequence", H]
    nodes.append(helper.make_node("Identity", [out], [out_name], name="output"))

    ints = lambda nm: helper.make_tensor_value_info(nm, TensorProto.INT64, ["batch", "sequence"])
    graph = helper.make_graph(
        nodes, name,
        [ints("input_ids"), ints("attention_mask"), ints("token_type_ids")],
        [helper.make_tensor_value_info(out_name, TensorProto.FLOAT, out_shape)],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)],
                              producer_name="r2med make_tiny_bert.py")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def forward(w, ids, types, mask):
    """float64 numpy forward pass of the same graph, [B,S] → [B,S,H] (or logits)."""
    d = lambda a: np.asarray(a, np.float64)
    ids, types, mask = map(np.asarray, (ids, types, mask))
    B, S = ids.shape
    H = w.word.shape[1]
    dh = H // w.heads

    def ln(x, gb):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + EPS) * d(gb[0]) + d(gb[1])

    lin = lambda x, wb: x @ d(wb[0]) + d(wb[1])
    h = ln(d(w.word)[ids] + d(w.pos)[None, :S] + d(w.type)[types], w.ln_e)
    ext = (1.0 - mask[:, None, None, :].astype(np.float64)) * NEG
    heads = lambda x: x.reshape(B, S, w.heads, dh).transpose(0, 2, 1, 3)
    for L in w.layers:
        q, k, v = heads(lin(h, L["q"])), heads(lin(h, L["k"])), heads(lin(h, L["v"]))
        s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(dh) + ext
        s = np.exp(s - s.max(-1, keepdims=True))
        p = s / s.sum(-1, keepdims=True)
        ctx = (p @ v).transpose(0, 2, 1, 3).reshape(B, S, H)
        h = ln(lin(ctx, L["o"]) + h, L["ln1"])
        f = lin(h, L["ff1"])
        h = ln(lin(f * 0.5 * (1 + erf(f / np.sqrt(2))), L["ff2"]) + h, L["ln2"])
    if w.labels:
        return lin(np.tanh(lin(h[:, 0], w.pooler)), w.cls)
    return h


TEXTS = [
    "What causes high blood pressure in patients with diabetes?",
    "Insulin therapy",
    "A 54 year old man presents with acute chest pain, fever and a history of cardiology visits.",
    "hypertension",
    "Chronic kidney disease (CKD) is a risk for heart disease; treatment after diagnosis reduces symptoms.",
    "zzyzx qwv",
]
PAIRS = [
    ("what causes fever", "Fever is a symptom of infection by a virus or bacteria."),
    ("insulin dose", "The study tested insulin dose levels in type 1 diabetes."),
    ("gene mutation", "Protein receptor levels were normal."),
]


def pooled(h):
    """CLS, mean and last-token pooling of one unpadded sequence, plus L2-normalized copies."""
    out = {"cls": h[0], "mean": h.mean(0), "last": h[-1]}
    norm = {k: v / np.linalg.norm(v) for k, v in out.items()}
    tolist = lambda dct: {k: [float(x) for x in v] for k, v in dct.items()}
    return tolist(out), tolist(norm)


def write(outdir, kind, dims, seed, reference):
    V, P, H, heads, layers, FF = dims
    labels = {"encoder": 0, "cross1": 1, "cross2": 2}[kind]
    vocab = tiny_vocab() if V == 0 else synthetic_vocab(V)
    V = len(vocab)
    ids = {t: i for i, t in enumerate(vocab)}
    rng = np.random.default_rng(seed)
    w = Weights(rng, V, P, H, heads, layers, FF, labels)
    os.makedirs(outdir, exist_ok=True)
    onnx.save(build_graph(w, f"r2med_tiny_{kind}"), os.path.join(outdir, "model.onnx"))
    with open(os.path.join(outdir, "tokenizer.json"), "w") as f:
        json.dump(tokenizer_json(vocab), f, indent=1, ensure_ascii=False)
        f.write("\n")
    config = {"model_type": "bert", "architectures": ["BertForSequenceClassification" if labels else "BertModel"],
              "vocab_size": V, "max_position_embeddings": P, "hidden_size": H,
              "num_attention_heads": heads, "num_hidden_layers": layers, "intermediate_size": FF,
              "type_vocab_size": 2, "layer_norm_eps": EPS, "hidden_act": "gelu",
              "pad_token_id": ids["[PAD]"], "r2med_generator": {"script": "onnx/testdata/gen/make_tiny_bert.py",
                                                             "kind": kind, "seed": seed}}
    if labels:
        config["num_labels"] = labels
    with open(os.path.join(outdir, "config.json"), "w") as f:
        json.dump(config, f, indent=1)
        f.write("\n")
    if not reference:
        return
    ref = {"kind": kind, "tolerance_note": "float64 numpy forward pass of the same weights", "cases": []}
    if labels:
        for q, doc in PAIRS:
            x, t = encode(ids, q, doc)
            logits = forward(w, [x], [t], [[1] * len(x)])[0]
            ref["cases"].append({"query": q, "document": doc, "ids": x, "type_ids": t,
                                 "logits": [float(v) for v in logits]})
    else:
        for text in TEXTS:
            x, t = encode(ids, text)
            h = forward(w, [x], [t], [[1] * len(x)])[0]
            p, n = pooled(h)
            ref["cases"].append({"text": text, "ids": x, "type_ids": t,
                                 "last_hidden_state": [[float(v) for v in row] for row in h],
                                 "pooled": p, "normalized": n})
    with open(os.path.join(outdir, "reference.json"), "w") as f:
        json.dump(ref, f, indent=None, separators=(",", ":"))
        f.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir", help="with --kind: the model directory; without: the testdata directory "
                                   "that receives tiny-bert/, tiny-cross-1/ and tiny-cross-2/")
    ap.add_argument("--kind", choices=["encoder", "cross1", "cross2"])
    ap.add_argument("--dims", default=os.environ.get("DIMS", "0,64,32,4,2,64"),
                    help="V,P,H,heads,layers,FF (V=0: the tiny medical vocabulary); env DIMS")
    ap.add_argument("--seed", type=int, default=20261122)
    ap.add_argument("--no-reference", action="store_true")
    a = ap.parse_args()
    dims = [int(x) for x in a.dims.split(",")]
    if len(dims) != 6 or dims[2] % dims[3]:
        ap.error("--dims needs V,P,H,heads,layers,FF with H divisible by heads")
    if a.kind:
        write(a.outdir, a.kind, dims, a.seed, not a.no_reference)
        return
    for sub, kind, seed in (("tiny-bert", "encoder", a.seed), ("tiny-cross-1", "cross1", a.seed + 1),
                            ("tiny-cross-2", "cross2", a.seed + 2)):
        write(os.path.join(a.outdir, sub), kind, dims, seed, not a.no_reference)


if __name__ == "__main__":
    main()
