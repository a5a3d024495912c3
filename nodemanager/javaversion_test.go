package nodemanager

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/bobbin-yarn/bobbin/nodemanager/launch"
)

// The Java containers get decides <ADD_OPENS>: JAVA_HOME's release file.
func TestAddOpensFollowsContainersJava(t *testing.T) {
	for release, want := range map[string]string{
		`JAVA_VERSION="17.0.15"`:   launch.JDK17AddOpens,
		`JAVA_VERSION="21"`:        launch.JDK17AddOpens,
		`JAVA_VERSION="1.8.0_402"`: "",
		`JAVA_VERSION=""`:          "",
		"IMPLEMENTOR=nobody":       "",
	} {
		home := t.TempDir()
		os.WriteFile(filepath.Join(home, "release"), []byte("IMPLEMENTOR=x\n"+release+"\n"), 0o644)
		if got := addOpensFor(func(k string) string { return map[string]string{"JAVA_HOME": home}[k] }); got != want {
			t.Errorf("%s: %q, want %q", release, got, want)
		}
	}
}
