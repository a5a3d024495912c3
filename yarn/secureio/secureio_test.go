package secureio

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Each thing a container could leave in its log dir to make the daemon read something
// else is refused with a reason, and a plain file of the right owner is read.
func TestOpenRefusesWhatIsNotTheContainersOwnFile(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "app", "container")
	os.MkdirAll(dir, 0o755)
	outside := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(outside, []byte("secret"), 0o600)
	os.WriteFile(filepath.Join(dir, "stdout"), []byte("hello"), 0o644)
	os.Symlink(outside, filepath.Join(dir, "link.log"))
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.log"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(dir, "sub.log"), 0o755)
	os.Symlink(filepath.Dir(outside), filepath.Join(base, "app", "linked"))
	me := os.Geteuid()

	f, err := OpenFile(me, base, "app", "container", "stdout")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(f)
	f.Close()
	if string(b) != "hello" {
		t.Fatalf("read %q", b)
	}
	for name, want := range map[string]string{"link.log": "symbolic link", "fifo.log": "FIFO", "sub.log": "directory", "../container/stdout": "plain file name"} {
		f, err := OpenFile(AnyOwner, base, "app", "container", name)
		if err == nil {
			f.Close()
			t.Errorf("%s opened", name)
			continue
		}
		if !IsRefused(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want a refusal saying %q", name, err, want)
		}
	}
	// A directory below the base that is a link is not followed.
	if _, err := OpenFile(AnyOwner, base, "app", "linked", "secret"); !IsRefused(err) || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("through a linked dir: %v", err)
	}
	if _, err := OpenFile(AnyOwner, base, "app", "container", "absent"); !errors.Is(err, fs.ErrNotExist) || IsRefused(err) {
		t.Errorf("absent: %v", err)
	}
	// Another owner's file (a hard link to it reads the same) is refused.
	if _, err := OpenFile(me+1, base, "app", "container", "stdout"); !IsRefused(err) || !strings.Contains(err.Error(), "owned by uid") {
		t.Errorf("another owner: %v", err)
	}

	d, err := OpenDir(base, "app", "container")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	list, err := d.List()
	if err != nil || len(list) != 1 || list[0].Name != "stdout" || list[0].Size != 5 || list[0].UID != me {
		t.Fatalf("list: %+v %v", list, err)
	}
}

// A device node is refused before it is opened (opening some devices does something).
func TestOpenRefusesADevice(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making a device node needs root")
	}
	dir := t.TempDir()
	if err := syscall.Mknod(filepath.Join(dir, "zero.log"), syscall.S_IFCHR|0o644, 1<<8|5); err != nil {
		t.Skipf("mknod: %v", err)
	}
	if _, err := OpenFile(AnyOwner, dir, "zero.log"); !IsRefused(err) || !strings.Contains(err.Error(), "device") {
		t.Fatalf("device: %v", err)
	}
}
