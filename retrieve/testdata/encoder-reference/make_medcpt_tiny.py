# MedCPT-shaped fidelity references for r2med's local ONNX encoders: two tiny random-weight BERT encoders
# (a query encoder and an article encoder, as ncbi/MedCPT-Query-Encoder and ncbi/MedCPT-Article-Encoder),
# the real uncased BERT vocabulary, exported to ONNX and checked with onnxruntime against torch before any
# reference is written. CPU, float32, eager attention. Usage: python3 make_medcpt_tiny.py OUT DATA VOCAB
# with DATA holding corpus.jsonl {id,text} and query.jsonl {id,text}.
#
# Recipes (r2med's registry, models/models.go): medcpt = query encoder on the query text, article encoder on
# the pair ("", text); medcpt-r2med = the article encoder on both (queries as plain text). CLS pooling, max
# length 512, longest_first truncation. To keep the fixture small, the word-embedding rows of tokens that no
# reference text uses are zeroed (a token id the tokenizer gets wrong still lands on another row).
import gzip, io, json, os, sys, tarfile, platform
import numpy as np, torch, transformers, onnxruntime as ort, tokenizers as tks
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, decoders
from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

out, data, vocab_path = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(out, exist_ok=True)
torch.set_grad_enabled(False)
vocab = {t: i for i, t in enumerate(open(vocab_path).read().splitlines())}
tk = Tokenizer(models.WordPiece(vocab=vocab, unk_token="[UNK]", max_input_chars_per_word=100))
tk.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True)
tk.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
tk.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
                                                  special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])])
tk.decoder = decoders.WordPiece()
tok = PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="[UNK]", cls_token="[CLS]", sep_token="[SEP]",
                              pad_token="[PAD]", mask_token="[MASK]", model_max_length=512)
assert len(tok.get_vocab()) == 30522, len(tok.get_vocab())
docs = [json.loads(l) for l in open(f"{data}/corpus.jsonl")]
qs = [json.loads(l) for l in open(f"{data}/query.jsonl")]
assert len(docs) == 300 and len(qs) == 50, (len(docs), len(qs))
dtext = [d["text"] for d in docs]; qtext = [q["text"] for q in qs]
empty = [""] * len(dtext)

def enc(a, b=None):
    t = tok(a, b, truncation=True, max_length=512, padding=True, return_tensors="pt", return_token_type_ids=True)
    return t["input_ids"], t["attention_mask"], t["token_type_ids"]

used = set(vocab[t] for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"))
for a, b in ((qtext, None), (empty, dtext), (dtext, None)):
    ids, _, _ = enc(a, b); used |= set(ids.flatten().tolist())

class Wrap(torch.nn.Module):
    def __init__(s, m): super().__init__(); s.m = m
    def forward(s, input_ids, attention_mask, token_type_ids):
        return s.m(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids).last_hidden_state

report = {"versions": {"torch": torch.__version__, "transformers": transformers.__version__, "onnxruntime": ort.__version__,
                       "tokenizers": tks.__version__, "python": platform.python_version()}, "used_token_rows": len(used)}

def make(name, seed):
    torch.manual_seed(seed)
    cfg = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                     max_position_embeddings=512, attn_implementation="eager")
    m = BertModel(cfg, add_pooling_layer=False).eval()
    w = m.embeddings.word_embeddings.weight
    keep = torch.zeros(w.shape[0], dtype=torch.bool); keep[sorted(used)] = True
    w[~keep] = 0.0
    d = f"{out}/models/{name}"; os.makedirs(d + "/onnx", exist_ok=True)
    cfg.save_pretrained(d); tok.save_pretrained(d)
    saved = Tokenizer.from_file(d + "/tokenizer.json"); assert saved.get_vocab_size() == 30522
    ids, mask, tt = enc(["a short one", "a somewhat longer second example text for padding"])
    axes = {k: {0: "b", 1: "s"} for k in ["input_ids", "attention_mask", "token_type_ids", "last_hidden_state"]}
    torch.onnx.export(Wrap(m), (ids, mask, tt), d + "/onnx/model.onnx", input_names=["input_ids", "attention_mask", "token_type_ids"],
                      output_names=["last_hidden_state"], dynamic_axes=axes, opset_version=18, dynamo=True, external_data=False)
    sess = ort.InferenceSession(d + "/onnx/model.onnx", providers=["CPUExecutionProvider"])
    def cls(a, b=None, bs=32):
        tv, ov = [], []
        for i in range(0, len(a), bs):
            ids, mask, tt = enc(a[i:i+bs], b[i:i+bs] if b else None)
            h = Wrap(m)(ids, mask, tt)
            o = sess.run(None, {"input_ids": ids.numpy(), "attention_mask": mask.numpy(), "token_type_ids": tt.numpy()})[0]
            tv.append(h[:, 0].numpy()); ov.append(o[:, 0])
        return np.concatenate(tv).astype(np.float32), np.concatenate(ov).astype(np.float32)
    return cls

lines = []
def emit(model, recipe, side, ids, vecs, ort_vecs, pair):
    diff = float(np.abs(vecs - ort_vecs).max())
    report[f"{recipe}.{side}"] = {"model": model, "torch_vs_onnxruntime_max_abs": diff, "pair": pair}
    assert diff < 1e-5, (recipe, side, diff)
    for i, v in zip(ids, vecs):
        lines.append(json.dumps({"recipe": recipe, "model": model, "input": side, "id": i, "pair_with_empty_first": pair,
                                 "vector": [float("%.9g" % x) for x in v]}))

qenc = make("medcpt-query-tiny", 3)
aenc = make("medcpt-article-tiny", 4)
qids = [q["id"] for q in qs]; dids = [d["id"] for d in docs]
t, o = qenc(qtext); emit("medcpt-query-tiny", "medcpt", "query", qids, t, o, False)
t, o = aenc(empty, dtext); emit("medcpt-article-tiny", "medcpt", "document", dids, t, o, True)
t, o = aenc(qtext); emit("medcpt-article-tiny", "medcpt-r2med", "query", qids, t, o, False)
# The pair encoding differs from the plain one (token types, the empty first segment): check it matters.
plain, _ = aenc(dtext[:20]); paired, _ = aenc(empty[:20], dtext[:20])
report["pair_vs_plain_max_abs"] = float(np.abs(plain - paired).max())
lens = [len(x) for x in tok(empty, dtext, truncation=False)["input_ids"]]
report["docs_over_512_as_pairs"] = int(sum(l > 512 for l in lens))
report["same_tokenizer_json_as_bge_tiny"] = None
if len(sys.argv) > 4:
    report["same_tokenizer_json_as_bge_tiny"] = open(sys.argv[4], "rb").read() == open(f"{out}/models/medcpt-query-tiny/tokenizer.json", "rb").read()
with gzip.open(f"{out}/reference.jsonl.gz", "wt") as f:
    f.write("\n".join(lines) + "\n")
with tarfile.open(f"{out}/medcpt-tiny.tgz", "w:gz") as tf:
    for name in ("medcpt-query-tiny", "medcpt-article-tiny"): tf.add(f"{out}/models/{name}", arcname=name)
json.dump(report, open(f"{out}/report.json", "w"), indent=1)
print(json.dumps(report))
