// Package latextest compiles LaTeX that tests wrote (the --format latex
// tables) with pdflatex, so a table that would not compile fails its test.
package latextest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Compile runs pdflatex on an article holding body, with booktabs loaded.
// Without pdflatex the test is skipped, except under R2MED_CI=1 (.ci/run
// installs texlive), where it fails.
func Compile(t testing.TB, body string) {
	t.Helper()
	bin, err := exec.LookPath("pdflatex")
	if err != nil {
		if os.Getenv("R2MED_CI") == "1" {
			t.Fatal("pdflatex not found but R2MED_CI=1: install texlive-latex-base and texlive-latex-recommended")
		}
		t.Skip("pdflatex not found (apt-get install texlive-latex-base texlive-latex-recommended); LaTeX output not compiled")
	}
	dir := t.TempDir()
	doc := "\\documentclass{article}\n\\usepackage{booktabs}\n\\usepackage[margin=1cm,landscape]{geometry}\n\\begin{document}\n" + body + "\\end{document}\n"
	if err := os.WriteFile(filepath.Join(dir, "t.tex"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-interaction=nonstopmode", "-halt-on-error", "t.tex")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pdflatex failed: %v\n%s\n%s", err, out, doc)
	}
}
