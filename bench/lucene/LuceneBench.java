// LuceneBench indexes an R2MED-layout corpus with Lucene (EnglishAnalyzer,
// BM25Similarity k1=0.9 b=0.4, as Pyserini/Anserini run BM25) and times
// IndexSearcher top-k search of its queries on 1 and more threads: the
// peer of r2med's BM25 benchmarks (docs/BENCHMARKS.md). It reads
// DIR/corpus.jsonl ({"id","text"} per line) and DIR/query.jsonl, as
// `r2med synth --combined N --out DIR` writes them.
//
//	java -Xmx4g -cp /usr/share/java/lucene-core-8.7.0.jar:/usr/share/java/lucene-analyzers-common-8.7.0.jar \
//	    bench/lucene/LuceneBench.java DIR [--threads 1,2] [--passes 5] [--warmup 3] [--modes top-k,exhaustive]
//	    [--k 100] [--index DIR2 [--reuse]] [--run FILE]
//
// --index keeps the Lucene index in DIR2 (default: a temporary directory,
// removed at the end); --reuse searches the index already there instead of
// building it again.
//
// Queries are built as Anserini's bag-of-words generator builds them (one
// SHOULD TermQuery per distinct analyzed term, boosted by its count) before
// any timing. Each pass searches every query once, the threads taking
// queries from a shared counter; three untimed passes warm the JIT first.
// Two collectors are timed: "top-k" is IndexSearcher.search(query, k),
// Lucene 8's default, which counts hits only up to 1,000 and may skip
// documents that cannot enter the top k (block-max WAND); "exhaustive"
// counts every hit (TopScoreDocCollector with an unbounded threshold), so
// every matching document is scored, as r2med scores them.
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.en.EnglishAnalyzer;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.document.*;
import org.apache.lucene.index.*;
import org.apache.lucene.search.*;
import org.apache.lucene.search.similarities.BM25Similarity;
import org.apache.lucene.store.FSDirectory;

public class LuceneBench {
  public static void main(String[] args) throws Exception {
    if (args.length < 1) {
      System.err.println("usage: LuceneBench DIR [--threads 1,2] [--passes 5] [--warmup 3] [--modes top-k,exhaustive] [--k 100] [--index DIR2 [--reuse]] [--run FILE]");
      System.exit(2);
    }
    Path dir = Paths.get(args[0]);
    int[] threads = {1, 2};
    int passes = 5, k = 100, warmup = 3;
    Set<String> only = null;
    Path indexDir = null, runFile = null;
    boolean reuse = false;
    for (int i = 1; i < args.length; i += 2) {
      switch (args[i]) {
        case "--threads": threads = Arrays.stream(args[i + 1].split(",")).mapToInt(Integer::parseInt).toArray(); break;
        case "--passes": passes = Integer.parseInt(args[i + 1]); break;
        case "--k": k = Integer.parseInt(args[i + 1]); break;
        case "--index": indexDir = Paths.get(args[i + 1]); break;
        case "--run": runFile = Paths.get(args[i + 1]); break;
        case "--reuse": reuse = true; i--; break;
        case "--warmup": warmup = Integer.parseInt(args[i + 1]); break;
        case "--modes": only = new HashSet<>(Arrays.asList(args[i + 1].split(","))); break;
        default: throw new IllegalArgumentException("unknown flag " + args[i]);
      }
    }
    BM25Similarity sim = new BM25Similarity(0.9f, 0.4f);
    Analyzer analyzer = new EnglishAnalyzer();
    boolean temp = indexDir == null;
    if (temp) indexDir = Files.createTempDirectory("lucene-bench");

    boolean exists = false;
    if (reuse && !temp) {
      try (FSDirectory d = FSDirectory.open(indexDir)) {
        exists = DirectoryReader.indexExists(d);
      }
    }
    if (exists) {
      System.out.printf("lucene %s: reusing the index in %s%n", org.apache.lucene.util.Version.LATEST, indexDir);
    } else {
      index(dir, indexDir, analyzer, sim);
    }

    List<String[]> qs = readJsonl(dir.resolve("query.jsonl"));
    BooleanQuery.setMaxClauseCount(Integer.MAX_VALUE);
    Query[] queries = new Query[qs.size()];
    for (int i = 0; i < queries.length; i++) queries[i] = bagOfWords(analyzer, qs.get(i)[1]);

    try (FSDirectory d = FSDirectory.open(indexDir); DirectoryReader reader = DirectoryReader.open(d)) {
      IndexSearcher searcher = new IndexSearcher(reader);
      searcher.setSimilarity(sim);
      final int kk = k;
      if (runFile != null) {
        try (PrintWriter pw = new PrintWriter(Files.newBufferedWriter(runFile, StandardCharsets.UTF_8))) {
          for (int i = 0; i < queries.length; i++) {
            ScoreDoc[] hits = searcher.search(queries[i], kk).scoreDocs;
            for (int r = 0; r < hits.length; r++) {
              String id = searcher.doc(hits[r].doc).get("id");
              pw.printf("%s Q0 %s %d %s lucene%n", qs.get(i)[0], id, r + 1, Float.toString(hits[r].score));
            }
          }
        }
      }
      Map<String, Searcher> modes = new LinkedHashMap<>();
      modes.put("top-k", q -> searcher.search(q, kk));
      modes.put("exhaustive", q -> {
        TopScoreDocCollector c = TopScoreDocCollector.create(kk, Integer.MAX_VALUE);
        searcher.search(q, c);
        return c.topDocs();
      });
      for (Map.Entry<String, Searcher> m : modes.entrySet()) {
        if (only != null && !only.contains(m.getKey())) continue;
        for (int p = 0; p < warmup; p++) pass(m.getValue(), queries, 1, null); // JIT warm-up
        for (int t : threads) {
          double[] qps = new double[passes];
          List<Long> lat = new ArrayList<>();
          ExecutorService pool = Executors.newFixedThreadPool(t);
          for (int p = 0; p < passes; p++) {
            long s = System.nanoTime();
            if (t == 1) pass(m.getValue(), queries, 1, lat);
            else poolPass(m.getValue(), queries, t, pool);
            qps[p] = queries.length / ((System.nanoTime() - s) / 1e9);
          }
          pool.shutdown();
          Arrays.sort(qps);
          String latency = "";
          if (!lat.isEmpty()) {
            Collections.sort(lat);
            latency = String.format(" p50 %.0f µs p99 %.0f µs", lat.get(lat.size() / 2) / 1e3, lat.get(lat.size() * 99 / 100) / 1e3);
          }
          System.out.printf("search %s k=%d threads=%d: %d queries × %d passes: queries/s min %.0f median %.0f max %.0f%s%n",
              m.getKey(), kk, t, queries.length, passes, qps[0], qps[passes / 2], qps[passes - 1], latency);
        }
      }
    } finally {
      if (temp) {
        try (var walk = Files.walk(indexDir)) {
          walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
      }
    }
  }

  static void index(Path dir, Path indexDir, Analyzer analyzer, BM25Similarity sim) throws IOException {
    List<String[]> docs = readJsonl(dir.resolve("corpus.jsonl"));
    long t0 = System.nanoTime();
    IndexWriterConfig cfg = new IndexWriterConfig(analyzer).setSimilarity(sim).setRAMBufferSizeMB(512)
        .setOpenMode(IndexWriterConfig.OpenMode.CREATE);
    try (FSDirectory d = FSDirectory.open(indexDir); IndexWriter w = new IndexWriter(d, cfg)) {
      for (String[] doc : docs) {
        Document ld = new Document();
        ld.add(new StringField("id", doc[0], Field.Store.YES));
        ld.add(new TextField("contents", doc[1], Field.Store.NO));
        w.addDocument(ld);
      }
      w.forceMerge(1);
      w.commit();
    }
    double sec = (System.nanoTime() - t0) / 1e9;
    System.out.printf("lucene %s: indexed %d documents in %.2f s (%.0f docs/s), one segment%n",
        org.apache.lucene.util.Version.LATEST, docs.size(), sec, docs.size() / sec);
  }

  interface Searcher {
    TopDocs search(Query q) throws IOException;
  }

  static void pass(Searcher s, Query[] queries, int threads, List<Long> lat) throws IOException {
    for (Query q : queries) {
      long t = System.nanoTime();
      s.search(q);
      if (lat != null) lat.add(System.nanoTime() - t);
    }
  }

  static void poolPass(Searcher s, Query[] queries, int threads, ExecutorService pool) throws Exception {
    AtomicInteger next = new AtomicInteger();
    List<Future<?>> fs = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      fs.add(pool.submit(() -> {
        for (int i = next.getAndIncrement(); i < queries.length; i = next.getAndIncrement()) s.search(queries[i]);
        return null;
      }));
    }
    for (Future<?> f : fs) f.get();
  }

  // bagOfWords is Anserini's BagOfWordsQueryGenerator: each distinct term
  // once, boosted by how often the query has it.
  static Query bagOfWords(Analyzer a, String text) throws IOException {
    Map<String, Integer> counts = new LinkedHashMap<>();
    try (TokenStream ts = a.tokenStream("contents", text)) {
      CharTermAttribute term = ts.addAttribute(CharTermAttribute.class);
      ts.reset();
      while (ts.incrementToken()) counts.merge(term.toString(), 1, Integer::sum);
      ts.end();
    }
    BooleanQuery.Builder b = new BooleanQuery.Builder();
    for (Map.Entry<String, Integer> e : counts.entrySet()) {
      b.add(new BoostQuery(new TermQuery(new Term("contents", e.getKey())), (float) e.getValue()), BooleanClause.Occur.SHOULD);
    }
    return b.build();
  }

  // readJsonl reads the "id" and "text" string fields of each line.
  static List<String[]> readJsonl(Path p) throws IOException {
    List<String[]> out = new ArrayList<>();
    try (BufferedReader r = Files.newBufferedReader(p, StandardCharsets.UTF_8)) {
      String line;
      int n = 0;
      while ((line = r.readLine()) != null) {
        n++;
        if (line.isBlank()) continue;
        String id = field(line, "id"), text = field(line, "text");
        if (id == null || text == null) throw new IOException(p + ":" + n + ": no \"id\" or \"text\" string field");
        out.add(new String[] {id, text});
      }
    }
    return out;
  }

  // field returns the value of a top-level string field of a one-line JSON
  // object, unescaped (enough for the files r2med writes: string values,
  // standard escapes).
  static String field(String line, String name) {
    String key = "\"" + name + "\"";
    int i = 0;
    while ((i = line.indexOf(key, i)) >= 0) {
      int j = i + key.length();
      while (j < line.length() && line.charAt(j) == ' ') j++;
      if (j < line.length() && line.charAt(j) == ':') {
        j++;
        while (j < line.length() && line.charAt(j) == ' ') j++;
        if (j < line.length() && line.charAt(j) == '"') return unescape(line, j + 1);
      }
      i = j;
    }
    return null;
  }

  static String unescape(String s, int i) {
    StringBuilder b = new StringBuilder();
    for (; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"') return b.toString();
      if (c != '\\') { b.append(c); continue; }
      char e = s.charAt(++i);
      switch (e) {
        case 'n': b.append('\n'); break;
        case 't': b.append('\t'); break;
        case 'r': b.append('\r'); break;
        case 'b': b.append('\b'); break;
        case 'f': b.append('\f'); break;
        case 'u': b.append((char) Integer.parseInt(s.substring(i + 1, i + 5), 16)); i += 4; break;
        default: b.append(e);
      }
    }
    throw new IllegalArgumentException("unterminated string");
  }
}
