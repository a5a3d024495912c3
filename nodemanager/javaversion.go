package nodemanager

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/bobbin-yarn/bobbin/nodemanager/launch"
)

// addOpensFor is what <ADD_OPENS> becomes in containers' command lines and environment.
// The Java NodeManager decides by its own JVM (Shell.isJavaVersionAtLeast(17)); Bobbin's
// has none, so it decides by the Java containers get: JAVA_HOME (whitelisted into their
// environment), else the java on PATH. A Java whose version cannot be read counts as
// older than 17, where the option strings would stop the JVM from starting.
func addOpensFor(getenv func(string) string) string {
	home := getenv("JAVA_HOME")
	if home == "" {
		p, err := exec.LookPath("java")
		if err != nil {
			return ""
		}
		if p, err = filepath.EvalSymlinks(p); err != nil {
			return ""
		}
		home = filepath.Dir(filepath.Dir(p)) // <home>/bin/java
	}
	if javaMajor(filepath.Join(home, "release")) >= 17 {
		return launch.JDK17AddOpens
	}
	return ""
}

// javaMajor reads a JDK's release file (JAVA_VERSION="17.0.15", "1.8.0_402"): its major
// version, 0 if unknown.
func javaMajor(release string) int {
	f, err := os.Open(release)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		v, ok := strings.CutPrefix(sc.Text(), "JAVA_VERSION=")
		if !ok {
			continue
		}
		v = strings.Trim(v, `"`)
		v = strings.TrimPrefix(v, "1.") // 1.8.0_402 → 8
		digits := strings.FieldsFunc(v, func(r rune) bool { return r < '0' || r > '9' })
		if len(digits) == 0 {
			return 0
		}
		n, _ := strconv.Atoi(digits[0])
		return n
	}
	return 0
}
