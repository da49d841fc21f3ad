package onnx

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// RuntimeVersion is the ONNX Runtime release the project tests with and
// tells users to fetch. Any release ≥ 1.24 works: onnxruntime_go v1.27.0
// asks for C API 24, and newer libraries serve older API versions.
const RuntimeVersion = "1.30.0"

// LibraryEnv names the environment variable that points at the ONNX
// Runtime shared library (or a directory holding it).
const LibraryEnv = "ONNXRUNTIME_LIB"

// FindLibrary returns the path of the ONNX Runtime shared library:
// $ONNXRUNTIME_LIB if set (a file, or a directory holding the library),
// else the first library found next to the executable (and its ../lib),
// in $R2MED_HOME (and its lib/), in ./third_party/onnxruntime and
// ./.ci/.tools/onnxruntime-*, on $LD_LIBRARY_PATH, then in /usr/local/lib,
// /usr/lib and the platform's multiarch directory. The error says where it
// looked and how to get the library.
func FindLibrary() (string, error) {
	exe, _ := os.Executable()
	return findLibrary(os.Getenv, exe, runtime.GOOS, runtime.GOARCH)
}

func libraryNames(goos string) []string {
	switch goos {
	case "darwin":
		return []string{"libonnxruntime.dylib", "libonnxruntime." + RuntimeVersion + ".dylib"}
	case "windows":
		return []string{"onnxruntime.dll"}
	}
	return []string{"libonnxruntime.so.1", "libonnxruntime.so", "libonnxruntime.so." + RuntimeVersion}
}

func findLibrary(getenv func(string) string, exe, goos, goarch string) (string, error) {
	names := libraryNames(goos)
	if p := getenv(LibraryEnv); p != "" {
		st, err := os.Stat(p)
		switch {
		case err != nil:
			return "", fmt.Errorf("%s=%s: %w\n%s", LibraryEnv, p, err, fetchHint(goos, goarch))
		case !st.IsDir():
			return absPath(p), nil
		}
		for _, n := range names {
			if isFile(filepath.Join(p, n)) {
				return absPath(filepath.Join(p, n)), nil
			}
		}
		return "", fmt.Errorf("%s=%s is a directory without %s\n%s", LibraryEnv, p, strings.Join(names, " or "), fetchHint(goos, goarch))
	}
	var dirs []string
	if exe != "" {
		d := filepath.Dir(exe)
		dirs = append(dirs, d, filepath.Join(d, "..", "lib"))
	}
	if h := getenv("R2MED_HOME"); h != "" {
		dirs = append(dirs, h, filepath.Join(h, "lib"))
	}
	dirs = append(dirs, filepath.Join("third_party", "onnxruntime"))
	tools, _ := filepath.Glob(filepath.Join(".ci", ".tools", "onnxruntime-*"))
	dirs = append(dirs, tools...)
	for _, d := range filepath.SplitList(getenv("LD_LIBRARY_PATH")) {
		if d != "" {
			dirs = append(dirs, d)
		}
	}
	dirs = append(dirs, "/usr/local/lib", "/usr/lib")
	if goos == "linux" {
		multi := map[string]string{"amd64": "x86_64-linux-gnu", "arm64": "aarch64-linux-gnu"}[goarch]
		if multi != "" {
			dirs = append(dirs, filepath.Join("/usr/lib", multi))
		}
	}
	for _, d := range dirs {
		for _, n := range names {
			if p := filepath.Join(d, n); isFile(p) {
				return absPath(p), nil
			}
		}
	}
	return "", fmt.Errorf("ONNX Runtime library (%s) not found; %s is unset and none is in %s\n%s",
		names[0], LibraryEnv, strings.Join(dirs, ", "), fetchHint(goos, goarch))
}

// absPath makes a found library path absolute: dlopen reads a name
// without a slash ("libonnxruntime.so.1", which filepath.Join(".", n)
// gives) as a request to search the system directories, not the file we
// found in the working directory.
func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// fetchHint says how to get the CPU library without a GPU or a
// post-install download: npm's onnxruntime-node tarball carries it (a
// plain `npm install` fails, its post-install script fetches CUDA parts).
func fetchHint(goos, goarch string) string {
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[goarch]
	if goos != "linux" || arch == "" {
		return fmt.Sprintf("Get ONNX Runtime ≥ 1.24 for %s/%s from https://github.com/microsoft/onnxruntime/releases "+
			"and set %s to its library file.", goos, goarch, LibraryEnv)
	}
	return fmt.Sprintf(`Get ONNX Runtime %[1]s (CPU) from npm and point %[2]s at it:
  npm pack onnxruntime-node@%[1]s
  tar -xzf onnxruntime-node-%[1]s.tgz --strip-components=5 package/bin/napi-v6/linux/%[3]s/libonnxruntime.so.1
  export %[2]s=$PWD/libonnxruntime.so.1
(any ONNX Runtime ≥ 1.24 works; do not use a plain "npm install onnxruntime-node": its post-install script downloads CUDA parts and fails offline)`,
		RuntimeVersion, LibraryEnv, arch)
}
