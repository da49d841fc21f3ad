package onnx

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func touch(t *testing.T, p string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("not really a library"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestFindLibraryEnv(t *testing.T) {
	dir := t.TempDir()
	lib := touch(t, filepath.Join(dir, "custom", "libonnxruntime-custom.so"))
	elsewhere := touch(t, filepath.Join(dir, "home", "lib", "libonnxruntime.so.1"))

	got, err := findLibrary(env(map[string]string{LibraryEnv: lib, "R2MED_HOME": filepath.Join(dir, "home")}), "", "linux", "amd64")
	if err != nil || got != lib {
		t.Fatalf("a file in %s: got %q, %v; want %q", LibraryEnv, got, err, lib)
	}

	// A directory is searched for the usual names.
	got, err = findLibrary(env(map[string]string{LibraryEnv: filepath.Join(dir, "home", "lib")}), "", "linux", "amd64")
	if err != nil || got != elsewhere {
		t.Fatalf("a directory in %s: got %q, %v; want %q", LibraryEnv, got, err, elsewhere)
	}

	// A set but wrong variable is an error, not a silent fallback to R2MED_HOME.
	_, err = findLibrary(env(map[string]string{LibraryEnv: filepath.Join(dir, "missing.so"), "R2MED_HOME": filepath.Join(dir, "home")}), "", "linux", "amd64")
	if err == nil || !strings.Contains(err.Error(), "missing.so") || !strings.Contains(err.Error(), "npm pack onnxruntime-node@1.30.0") {
		t.Fatalf("missing %s file: err = %v", LibraryEnv, err)
	}
	_, err = findLibrary(env(map[string]string{LibraryEnv: filepath.Join(dir, "custom")}), "", "linux", "amd64")
	if err == nil || !strings.Contains(err.Error(), "is a directory without libonnxruntime.so.1") {
		t.Fatalf("directory without the library: err = %v", err)
	}

	// Relative settings come back absolute: dlopen would look a bare
	// "libonnxruntime.so.1" up in the system directories, not here.
	t.Chdir(filepath.Join(dir, "home", "lib"))
	for _, rel := range []string{".", "libonnxruntime.so.1"} {
		got, err = findLibrary(env(map[string]string{LibraryEnv: rel}), "", "linux", "amd64")
		if err != nil || got != elsewhere {
			t.Errorf("%s=%s: got %q, %v; want %q", LibraryEnv, rel, got, err, elsewhere)
		}
	}
}

func TestFindLibraryPlaces(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir) // the relative places (third_party, .ci/.tools) are empty here
	exe := filepath.Join(dir, "bin", "r2med")
	home := filepath.Join(dir, "home")
	homeLib := touch(t, filepath.Join(home, "lib", "libonnxruntime.so.1"))

	got, err := findLibrary(env(map[string]string{"R2MED_HOME": home}), exe, "linux", "amd64")
	if err != nil || got != homeLib {
		t.Fatalf("R2MED_HOME/lib: got %q, %v; want %q", got, err, homeLib)
	}
	// Next to the executable wins over R2MED_HOME.
	byExe := touch(t, filepath.Join(dir, "bin", "libonnxruntime.so"))
	got, err = findLibrary(env(map[string]string{"R2MED_HOME": home}), exe, "linux", "amd64")
	if err != nil || got != byExe {
		t.Fatalf("next to the binary: got %q, %v; want %q", got, err, byExe)
	}
	// The CI cache directory, relative to the working directory.
	ci := touch(t, filepath.Join(dir, ".ci", ".tools", "onnxruntime-1.30.0", "libonnxruntime.so.1"))
	got, err = findLibrary(env(nil), "", "linux", "amd64")
	if err != nil || got != ci {
		t.Fatalf(".ci/.tools: got %q, %v; want %q", got, err, ci)
	}
}

func TestFindLibraryNotFoundSaysHow(t *testing.T) {
	t.Chdir(t.TempDir())
	_, err := findLibrary(env(map[string]string{"LD_LIBRARY_PATH": "/nonexistent/a:/nonexistent/b"}), "/nonexistent/bin/r2med", "linux", "arm64")
	if err == nil {
		t.Skip("this machine has ONNX Runtime installed in a system directory")
	}
	msg := err.Error()
	for _, want := range []string{
		"(libonnxruntime.so.1) not found", "ONNXRUNTIME_LIB is unset", "/nonexistent/bin", "/nonexistent/b",
		"npm pack onnxruntime-node@1.30.0",
		"tar -xzf onnxruntime-node-1.30.0.tgz --strip-components=5 package/bin/napi-v6/linux/arm64/libonnxruntime.so.1",
		"export ONNXRUNTIME_LIB=",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	_, err = findLibrary(env(nil), "", "darwin", "arm64")
	if err == nil || !strings.Contains(err.Error(), "libonnxruntime.dylib") || !strings.Contains(err.Error(), "github.com/microsoft/onnxruntime/releases") {
		t.Errorf("darwin: err = %v", err)
	}
}

func TestBatchCheck(t *testing.T) {
	ok := Batch{IDs: make([]int64, 6), Rows: 2, Len: 3}
	if err := ok.check(); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string]Batch{
		"empty":      {Rows: 0, Len: 3},
		"short ids":  {IDs: make([]int64, 5), Rows: 2, Len: 3},
		"short mask": {IDs: make([]int64, 6), AttentionMask: make([]int64, 3), Rows: 2, Len: 3},
		"long types": {IDs: make([]int64, 6), TypeIDs: make([]int64, 7), Rows: 2, Len: 3},
	} {
		if err := b.check(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
