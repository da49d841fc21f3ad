// Package expand turns a query and an LLM generation for it into the text a
// retriever searches with (generation-augmented retrieval, GAR), following
// R2MED's rules exactly, and reads the generations R2MED publishes
// (<task>/<method>/<llm>/query_with_hydoc.jsonl).
//
// A Generation is one query's raw LLM output (hy_doc) with the method and
// LLM that produced it. Three rules turn it into retrieval input:
//
//   - Split extracts the answer from a reasoning model's output, as R2MED's
//     split_response_for_r1 does; which extraction applies is decided by the
//     LLM's name (FormatOf).
//   - BM25Text is the BM25 query string (R2MED's eval_BM25 load_retrieval_data).
//   - Dense is the dense retriever's query input: one string, or two whose
//     embeddings are averaged (R2MED's eval_retrieval load_retrieval_data).
//
// Apply replaces the texts of a task's queries by their BM25 texts and
// refuses a generation set that does not cover the task exactly: R2MED
// retrieves only the ids in the generation file, so a partial file would
// silently evaluate a smaller task.
//
// # Where the rules come from
//
// Read from R2MED/R2MED at commit 45cbac5: src/base.py (r1_model_list and
// split_response_for_r1), src/eval_bench_BM25.py (BM25 query strings) and
// src/eval_bench.py (dense query inputs); later copies of those loaders
// (eval_BM25.py, eval_retrieval.py) build the same strings. Points the
// reference notes leave open:
//
//   - Reasoning models are an exact list of names, not name patterns:
//     r1-llama-8b, r1-qwen-32b, r1-llama-70b, qwq-32b, qwen3-8b, qwen3-32b
//     (</think>), huatuo-o1-8b, huatuo-o1-70b ("Final Response"), sky-32b
//     (<|begin_of_solution|>), qwen-3b-ins, qwen-7b-ins (<answer>). Any other
//     name, qwen3-14b or r1-qwen-7b included, is treated as non-reasoning:
//     its output is used whole and the query text is kept.
//   - huatuo's pattern is `Final Response\s*(.*)` with re.DOTALL, so the
//     answer runs to the end of the text across newlines.
//   - Every extracted answer is passed through Python's str.strip(), which
//     removes Unicode whitespace including U+001C..U+001F; when the marker is
//     missing the output is returned unstripped.
//   - BM25: a non-reasoning LLM's query2doc is text+text+" "+hy_doc and lamer
//     text+" "+hy_doc; every other method (hyde, search-o1, search-r1) uses
//     hy_doc alone. A reasoning LLM uses only the extracted answer, whatever
//     the method. All published search-o1 (qwq-32b, qwen3-32b) and search-r1
//     (qwen-3b-ins, qwen-7b-ins) generations come from reasoning LLMs.
//   - Dense: a reasoning LLM gives [text, answer] averaged (query2doc too);
//     otherwise query2doc gives the single string text+"[SEP]"+hy_doc and
//     every other method [text, hy_doc] averaged.
//   - The query text comes from the generation file's "text", not from
//     query.jsonl: R2MED does not read query.jsonl in GAR runs.
//
// Beyond R2MED's methods, BRIGHT-style query reasoning (Reasoning,
// ReasoningAppend) uses the same layout under <task>/reasoning/<llm>/ and
// its own rule: the reasoning replaces the query, or follows it.
package expand
