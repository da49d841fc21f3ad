// Checks the token ids stored in the fixtures' reference.json files against
// the official Hugging Face tokenizers (npm package, Rust inside):
//   (cd /tmp/tk && npm install tokenizers@0.23.2)
//   NODE_PATH=/tmp/tk/node_modules node onnx/testdata/gen/check_tokens.js
// Run after make_tiny_bert.py; it prints how many cases differ (want 0).
const { Tokenizer } = require('tokenizers');
const fs = require('fs');
(async () => {
  for (const dir of ['tiny-bert', 'tiny-cross-1', 'tiny-cross-2']) {
    const d = require('path').join(__dirname, '..', dir);
    const tk = Tokenizer.fromFile(d + '/tokenizer.json');
    const ref = JSON.parse(fs.readFileSync(d + '/reference.json'));
    let bad = 0;
    for (const c of ref.cases) {
      const e = c.text !== undefined ? await tk.encode(c.text) : await tk.encode(c.query, c.document);
      const ids = e.getIds(), t = e.getTypeIds();
      if (JSON.stringify(ids) !== JSON.stringify(c.ids) || JSON.stringify(t) !== JSON.stringify(c.type_ids)) { bad++; console.log('DIFF', c.text||c.query, ids, c.ids); }
    }
    console.log(dir, ref.cases.length, 'cases', bad, 'differ');
  }
})();
