// Package latextest compiles LaTeX that tests wrote (the --format latex
// tables) with pdflatex, so a table that would not compile, or would not
// fit its page, fails its test.
package latextest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Compile runs pdflatex on an article holding body, with booktabs,
// graphicx and array loaded, on landscape pages with 1 cm margins.
// Without pdflatex the test is skipped, except under R2MED_CI=1 (.ci/run
// installs texlive), where it fails.
func Compile(t testing.TB, body string) {
	t.Helper()
	compile(t, "\\usepackage{booktabs,graphicx,array,longtable,pdflscape}\n\\usepackage[margin=1cm,landscape]{geometry}\n", body)
}

// CompilePage runs pdflatex on a plain article (portrait, LaTeX's own
// margins: a 345 pt line) holding body, with packages loaded, and fails
// the test when what body sets does not fit the page: an overfull box
// (a table wider than the line) or a float taller than the page. It
// returns the log.
func CompilePage(t testing.TB, packages []string, body string) string {
	t.Helper()
	log := compile(t, "\\usepackage{"+strings.Join(packages, ",")+"}\n", body)
	for _, bad := range overflow.FindAllString(log, -1) {
		t.Errorf("pdflatex: %s", bad)
	}
	return log
}

// overflow matches what pdflatex logs for something that does not fit.
var overflow = regexp.MustCompile(`(?m)^(Overfull \\[hv]box.*|.*Float too large.*)$`)

func compile(t testing.TB, preamble, body string) string {
	t.Helper()
	bin, err := exec.LookPath("pdflatex")
	if err != nil {
		if os.Getenv("R2MED_CI") == "1" {
			t.Fatal("pdflatex not found but R2MED_CI=1: install texlive-latex-base and texlive-latex-recommended")
		}
		t.Skip("pdflatex not found (apt-get install texlive-latex-base texlive-latex-recommended); LaTeX output not compiled")
	}
	dir := t.TempDir()
	doc := "\\documentclass{article}\n" + preamble + "\\begin{document}\n" + body + "\\end{document}\n"
	if err := os.WriteFile(filepath.Join(dir, "t.tex"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-interaction=nonstopmode", "-halt-on-error", "t.tex")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pdflatex failed: %v\n%s\n%s", err, out, doc)
	}
	log, err := os.ReadFile(filepath.Join(dir, "t.log"))
	if err != nil {
		t.Fatal(err)
	}
	return string(log)
}
