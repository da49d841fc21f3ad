#!/usr/bin/env node
// The test oracle: the official Hugging Face tokenizers (npm tokenizers@0.23.2,
// the Rust library behind a Node binding) run on our test cases.
//
//   node oracle.js encode TOKENIZER_JSON < cases.jsonl > answers.jsonl
//   node oracle.js sweep TOKENIZER_JSON [pretok] > sweep.tsv
//
// encode: each input line is {"text", "pair"?, "max_length"?} or {"batch": [...]}
// with texts already resolved. max_length replaces tokenizer.json's
// truncation max_length (keeping its strategy and direction, LongestFirst and
// Right when it has none), as the Go API's maxLen does. Single encodes run
// with padding off; a batch runs encodeBatch with tokenizer.json's padding
// (BatchLongest when it has none), as Go's Pad does. Each output line is
// {"ids", "type_ids", "mask"?, "tokens"}, or {"error"}
// where HF refuses the case.
//
// sweep: every code point (except surrogates and the unassigned planes 4–13)
// through the normalizer, as "hex<TAB>json(normalized)" for each code point
// the normalizer changes; with "pretok", also "hex<TAB>S" (white space: split
// and dropped) or "hex<TAB>P" (isolated) from pre-tokenizing "a" + c + "b".
//
// The module is found through $R2MED_TOKENIZERS_JS (its directory), then
// ../../.ci/.tools/node_modules/tokenizers (what .ci/run installs), then
// require('tokenizers').
'use strict';
const fs = require('fs');
const path = require('path');

function loadModule() {
  const tries = [];
  if (process.env.R2MED_TOKENIZERS_JS) tries.push(path.resolve(process.env.R2MED_TOKENIZERS_JS));
  tries.push(path.join(__dirname, '..', '..', '.ci', '.tools', 'node_modules', 'tokenizers'));
  tries.push('tokenizers');
  for (const t of tries) {
    try { return require(t); } catch (e) { if (t === 'tokenizers') throw e; }
  }
}

const { Tokenizer } = loadModule();

// Tokenizer with tokenizer.json's settings, padding off and, when
// maxLength > 0, truncation at maxLength.
function makeTokenizer(doc, maxLength, withPadding) {
  const d = Object.assign({}, doc);
  if (!withPadding) d.padding = null;
  else if (!d.padding) d.padding = { strategy: 'BatchLongest', direction: 'Right', pad_to_multiple_of: null, pad_id: padID(doc), pad_type_id: 0, pad_token: '[PAD]' };
  if (maxLength > 0) {
    const t = d.truncation || { direction: 'Right', strategy: 'LongestFirst', stride: 0 };
    d.truncation = Object.assign({}, t, { max_length: maxLength });
  }
  return Tokenizer.fromString(JSON.stringify(d));
}

function padID(doc) {
  const v = doc.model && doc.model.vocab;
  return v && v['[PAD]'] !== undefined ? v['[PAD]'] : 0;
}

// encodeAll answers cases (objects with resolved texts) in order.
async function encodeAll(doc, cases) {
  const cache = new Map();
  const get = (maxLength, withPadding) => {
    const k = maxLength + '/' + withPadding;
    if (!cache.has(k)) cache.set(k, makeTokenizer(doc, maxLength, withPadding));
    return cache.get(k);
  };
  const out = [];
  for (const c of cases) {
    const tk = get(c.max_length || 0, !!c.batch);
    if (c.batch) {
      const encs = await tk.encodeBatch(c.batch);
      out.push({
        ids: encs.map(e => e.getIds()),
        type_ids: encs.map(e => e.getTypeIds()),
        mask: encs.map(e => e.getAttentionMask()),
      });
      continue;
    }
    let e;
    try {
      e = c.pair !== undefined ? await tk.encode(c.text, c.pair) : await tk.encode(c.text);
    } catch (err) {
      // HF refuses some truncations (only_first when the first text is too
      // short); the Go side documents its fallback instead.
      out.push({ error: String(err && err.message || err) });
      continue;
    }
    out.push({ ids: e.getIds(), type_ids: e.getTypeIds(), tokens: e.getTokens() });
  }
  return out;
}

function* sweepCodePoints() {
  for (let cp = 0; cp <= 0x10ffff; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    if (cp >= 0x40000 && cp < 0xe0000) { cp = 0xe0000 - 1; continue; }
    yield cp;
  }
}

function sweep(doc, pretok, write) {
  const tk = makeTokenizer(doc, 0, false);
  const n = tk.getNormalizer();
  const p = tk.getPreTokenizer();
  for (const cp of sweepCodePoints()) {
    const c = String.fromCodePoint(cp);
    const hex = cp.toString(16);
    if (n) {
      const s = n.normalizeString(c);
      if (s !== c) write(hex + '\t' + JSON.stringify(s) + '\n');
    }
    if (pretok && p) {
      const parts = p.preTokenizeString('a' + c + 'b').map(x => x[0]);
      if (parts.length === 2 && parts[0] === 'a' && parts[1] === 'b') write(hex + '\tS\n');
      else if (parts.length === 3 && parts[1] === c) write(hex + '\tP\n');
      else if (!(parts.length === 1 && parts[0] === 'a' + c + 'b')) write(hex + '\t?' + JSON.stringify(parts) + '\n');
    }
  }
}

async function main() {
  const [mode, file, extra] = process.argv.slice(2);
  if (!file) {
    console.error('usage: oracle.js encode|sweep TOKENIZER_JSON');
    process.exit(2);
  }
  const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
  if (mode === 'sweep') {
    const chunks = [];
    sweep(doc, extra === 'pretok', s => chunks.push(s));
    process.stdout.write(chunks.join(''));
    return;
  }
  if (mode !== 'encode') throw new Error('unknown mode ' + mode);
  const cases = fs.readFileSync(0, 'utf8').split('\n').filter(l => l !== '').map(l => JSON.parse(l));
  const out = await encodeAll(doc, cases);
  process.stdout.write(out.map(o => JSON.stringify(o)).join('\n') + (out.length ? '\n' : ''));
}

module.exports = { encodeAll, makeTokenizer };

if (require.main === module) {
  main().catch(e => { console.error(e && e.stack || e); process.exit(1); });
}
