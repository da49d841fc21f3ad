// LuceneOracle runs real Lucene analysis for analysis/lucene_oracle_test.go.
//
// Usage: java -cp lucene-core.jar:lucene-analyzers-common.jar:. LuceneOracle MODE
// reads one text per line on stdin, hex-encoded UTF-8, and writes one line
// per text: its tokens, each hex-encoded UTF-8, separated by spaces. Hex
// keeps newlines, quotes and any other character out of the framing.
//
// MODE is "standard" (StandardTokenizer alone), "english" (EnglishAnalyzer),
// "porter" (each whole line through PorterStemFilter) or "whitespace"
// (WhitespaceAnalyzer).

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;

import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.Tokenizer;
import org.apache.lucene.analysis.core.KeywordTokenizer;
import org.apache.lucene.analysis.core.WhitespaceAnalyzer;
import org.apache.lucene.analysis.en.EnglishAnalyzer;
import org.apache.lucene.analysis.en.PorterStemFilter;
import org.apache.lucene.analysis.standard.StandardTokenizer;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;

public class LuceneOracle {
  public static void main(String[] args) throws Exception {
    Analyzer a;
    switch (args[0]) {
      case "standard":
        a = new Analyzer() {
          @Override
          protected TokenStreamComponents createComponents(String field) {
            return new TokenStreamComponents(new StandardTokenizer());
          }
        };
        break;
      case "english":
        a = new EnglishAnalyzer();
        break;
      case "porter":
        a = new Analyzer() {
          @Override
          protected TokenStreamComponents createComponents(String field) {
            Tokenizer t = new KeywordTokenizer();
            return new TokenStreamComponents(t, new PorterStemFilter(t));
          }
        };
        break;
      case "whitespace":
        a = new WhitespaceAnalyzer();
        break;
      default:
        throw new IllegalArgumentException("unknown mode " + args[0]);
    }
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    BufferedWriter out = new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      String text = new String(unhex(line), StandardCharsets.UTF_8);
      try (TokenStream ts = a.tokenStream("f", text)) {
        CharTermAttribute term = ts.addAttribute(CharTermAttribute.class);
        ts.reset();
        boolean first = true;
        while (ts.incrementToken()) {
          if (!first) out.write(' ');
          first = false;
          out.write(hex(term.toString().getBytes(StandardCharsets.UTF_8)));
        }
        ts.end();
      }
      out.write('\n');
    }
    out.flush();
  }

  static byte[] unhex(String s) {
    byte[] b = new byte[s.length() / 2];
    for (int i = 0; i < b.length; i++) {
      b[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
    }
    return b;
  }

  static String hex(byte[] b) {
    StringBuilder sb = new StringBuilder(2 * b.length);
    for (byte x : b) sb.append(String.format("%02x", x & 0xff));
    return sb.toString();
  }
}
