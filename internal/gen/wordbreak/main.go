// Command wordbreak generates the character property table that
// analysis.StandardTokenizer uses to reproduce Lucene's StandardTokenizer.
//
// It reads the Unicode Character Database (Debian's unicode-data package
// installs it under /usr/share/unicode) and writes one Go file holding sorted,
// merged code point ranges. The output is committed, so only someone updating
// the Unicode version ever needs this program or the data files:
//
//	go generate ./analysis
//
// Every code point gets a 16-bit property word: its Word_Break value in the
// low bits plus flags for the few other properties the Lucene grammar
// consults (Line_Break=SA, Script=Han/Hiragana, and the emoji properties).
// Folding them into one word lets the tokenizer classify a rune with a single
// lookup instead of one table search per property.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

const maxRune = 0x10FFFF

// wbValues lists the Word_Break values in the order of their numeric codes;
// Other must be 0 because it is the default for unlisted code points.
var wbValues = []string{
	"Other", "CR", "LF", "Newline", "Extend", "ZWJ", "Regional_Indicator",
	"Format", "Katakana", "Hebrew_Letter", "ALetter", "Single_Quote",
	"Double_Quote", "MidNumLet", "MidLetter", "MidNum", "Numeric",
	"ExtendNumLet", "WSegSpace",
}

// Go identifiers for wbValues, same order.
var wbNames = []string{
	"wbOther", "wbCR", "wbLF", "wbNewline", "wbExtend", "wbZWJ", "wbRegionalIndicator",
	"wbFormat", "wbKatakana", "wbHebrewLetter", "wbALetter", "wbSingleQuote",
	"wbDoubleQuote", "wbMidNumLet", "wbMidLetter", "wbMidNum", "wbNumeric",
	"wbExtendNumLet", "wbWSegSpace",
}

// Flag bits above the Word_Break code. The tokenizer depends on these exact
// names; the values are free to change with a regeneration.
const (
	wbMask          = 0x1F
	flagSA          = 1 << 5
	flagHan         = 1 << 6
	flagHiragana    = 1 << 7
	flagEmojiChar   = 1 << 8
	flagEmojiModBas = 1 << 9
	flagEmojiMod    = 1 << 10
)

func main() {
	ucd := flag.String("ucd", "/usr/share/unicode", "Unicode Character Database directory")
	out := flag.String("o", "wordbreak_tables.go", "output Go file")
	pkg := flag.String("pkg", "analysis", "package name of the output")
	flag.Parse()

	props := make([]uint16, maxRune+1)
	versions := map[string]string{}

	wbCode := map[string]uint16{}
	for i, v := range wbValues {
		wbCode[v] = uint16(i)
	}
	versions["WordBreakProperty"] = parse(filepath.Join(*ucd, "auxiliary", "WordBreakProperty.txt"), func(lo, hi rune, v string) {
		code, ok := wbCode[v]
		if !ok {
			log.Fatalf("unknown Word_Break value %q", v)
		}
		for r := lo; r <= hi; r++ {
			props[r] = props[r]&^wbMask | code
		}
	})

	// Lucene's NumericEx adds the fullwidth digits (Block HalfAndFullForms,
	// General_Category Nd) in case the data files do not already say Numeric;
	// apply the same union so an older or newer UCD cannot change digit runs.
	for r := rune(0xFF10); r <= 0xFF19; r++ {
		props[r] = props[r]&^wbMask | wbCode["Numeric"]
	}

	versions["LineBreak"] = parse(filepath.Join(*ucd, "LineBreak.txt"), func(lo, hi rune, v string) {
		if v == "SA" {
			for r := lo; r <= hi; r++ {
				props[r] |= flagSA
			}
		}
	})
	versions["Scripts"] = parse(filepath.Join(*ucd, "Scripts.txt"), func(lo, hi rune, v string) {
		var f uint16
		switch v {
		case "Han":
			f = flagHan
		case "Hiragana":
			f = flagHiragana
		default:
			return
		}
		for r := lo; r <= hi; r++ {
			props[r] |= f
		}
	})

	// Lucene's EmojiChar is Extended_Pictographic plus those Emoji characters
	// that are not Regional_Indicator, keycap bases [0-9#*], the "accidental"
	// emoji ©®™〰〽 or Emoji_Modifier: those only form emoji in sequences.
	emoji := make([]bool, maxRune+1)
	extPict := make([]bool, maxRune+1)
	versions["emoji-data"] = parse(filepath.Join(*ucd, "emoji", "emoji-data.txt"), func(lo, hi rune, v string) {
		for r := lo; r <= hi; r++ {
			switch v {
			case "Emoji":
				emoji[r] = true
			case "Extended_Pictographic":
				extPict[r] = true
			case "Emoji_Modifier":
				props[r] |= flagEmojiMod
			case "Emoji_Modifier_Base":
				props[r] |= flagEmojiModBas
			}
		}
	})
	for r := rune(0); r <= maxRune; r++ {
		isRI := props[r]&wbMask == wbCode["Regional_Indicator"]
		keycapBase := r >= '0' && r <= '9' || r == '#' || r == '*'
		accidental := r == 0xA9 || r == 0xAE || r == 0x2122 || r == 0x3030 || r == 0x303D
		rkam := isRI || keycapBase || accidental || props[r]&flagEmojiMod != 0
		if extPict[r] || emoji[r] && !rkam {
			props[r] |= flagEmojiChar
		}
	}

	// The tables must describe one Unicode version; a mix would silently
	// give rules and properties that no Lucene release ever paired.
	version := versions["WordBreakProperty"]
	for _, v := range versions {
		if v != version {
			log.Fatalf("mixed Unicode versions: %v", versions)
		}
	}

	type rng struct {
		lo, hi rune
		p      uint16
	}
	var ranges []rng
	for r := rune(0); r <= maxRune; r++ {
		p := props[r]
		if p == 0 {
			continue
		}
		if n := len(ranges); n > 0 && ranges[n-1].hi == r-1 && ranges[n-1].p == p {
			ranges[n-1].hi = r
			continue
		}
		ranges = append(ranges, rng{r, r, p})
	}

	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by internal/gen/wordbreak from the Unicode %s Character Database; DO NOT EDIT.\n\n", version)
	fmt.Fprintf(&b, "package %s\n\n", *pkg)
	fmt.Fprintf(&b, "// unicodeVersion is the Unicode version of the tables below.\nconst unicodeVersion = %q\n\n", version)
	b.WriteString("// Word_Break values, stored in the low bits (wbMask) of a property word.\nconst (\n")
	for i, n := range wbNames {
		fmt.Fprintf(&b, "\t%s = %d\n", n, i)
	}
	b.WriteString(")\n\n")
	b.WriteString("// Property flags above the Word_Break bits.\nconst (\n")
	fmt.Fprintf(&b, "\twbMask = 0x%02X\n", wbMask)
	fmt.Fprintf(&b, "\tflagSA = 0x%03X // Line_Break=Complex_Context (South East Asian scripts)\n", flagSA)
	fmt.Fprintf(&b, "\tflagHan = 0x%03X // Script=Han\n", flagHan)
	fmt.Fprintf(&b, "\tflagHiragana = 0x%03X // Script=Hiragana\n", flagHiragana)
	fmt.Fprintf(&b, "\tflagEmojiChar = 0x%03X // Lucene's EmojiChar: Extended_Pictographic or a stand-alone Emoji\n", flagEmojiChar)
	fmt.Fprintf(&b, "\tflagEmojiModBase = 0x%03X // Emoji_Modifier_Base\n", flagEmojiModBas)
	fmt.Fprintf(&b, "\tflagEmojiMod = 0x%03X // Emoji_Modifier\n", flagEmojiMod)
	b.WriteString(")\n\n")
	fmt.Fprintf(&b, "// propRanges holds every code point whose property word is not 0, merged\n// into sorted, disjoint ranges (%d of them).\n", len(ranges))
	b.WriteString("var propRanges = [...]propRange{\n")
	for _, r := range ranges {
		fmt.Fprintf(&b, "\t{0x%04X, 0x%04X, 0x%03X},\n", r.lo, r.hi, r.p)
	}
	b.WriteString("}\n")

	src, err := format.Source(b.Bytes())
	if err != nil {
		log.Fatalf("formatting output: %v", err)
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		log.Fatal(err)
	}
}

var (
	versionRE      = regexp.MustCompile(`-(\d+\.\d+\.\d+)\.txt`)
	emojiVersionRE = regexp.MustCompile(`Emoji Version (\d+\.\d+)`)
)

// parse calls fn for each "range ; value" line of a UCD file and returns the
// Unicode version named in its header (emoji-data.txt names it differently
// from the others, hence the second pattern).
func parse(path string, fn func(lo, hi rune, value string)) string {
	f, err := os.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	version := ""
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if version == "" && strings.HasPrefix(line, "#") {
			if m := versionRE.FindStringSubmatch(line); m != nil {
				version = m[1]
			} else if m := emojiVersionRE.FindStringSubmatch(line); m != nil {
				version = m[1] + ".0"
			}
		}
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		fields := strings.Split(line, ";")
		if len(fields) < 2 {
			log.Fatalf("%s:%d: no ';'", path, n)
		}
		lo, hi := parseRange(path, n, strings.TrimSpace(fields[0]))
		fn(lo, hi, strings.TrimSpace(fields[1]))
	}
	if err := sc.Err(); err != nil {
		log.Fatal(err)
	}
	if version == "" {
		log.Fatalf("%s: no Unicode version in the header", path)
	}
	return version
}

func parseRange(path string, line int, s string) (rune, rune) {
	a, b, isRange := strings.Cut(s, "..")
	lo, err := strconv.ParseUint(a, 16, 32)
	if err != nil {
		log.Fatalf("%s:%d: %v", path, line, err)
	}
	hi := lo
	if isRange {
		if hi, err = strconv.ParseUint(b, 16, 32); err != nil {
			log.Fatalf("%s:%d: %v", path, line, err)
		}
	}
	if hi < lo || hi > maxRune {
		log.Fatalf("%s:%d: bad range %s", path, line, s)
	}
	return rune(lo), rune(hi)
}
