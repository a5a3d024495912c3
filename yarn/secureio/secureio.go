// Package secureio opens the files a daemon reads on behalf of an application (container
// log files served on the web pages and REST API, or copied into an aggregated log) so
// that the application cannot make the daemon read anything else, as Java's
// SecureIOUtils.openForRead does for the NodeManager, and more: a container writes its
// own log dir, and the daemon reads as root.
//
//   - No symbolic link is followed, in the file's name or in any directory below the
//     trusted base (a configured log dir): every component is opened with O_NOFOLLOW.
//   - Only a regular file is opened: a FIFO would block the reader forever, a device
//     could be read or changed by opening it. The file is first named by an O_PATH
//     descriptor (which opens nothing), checked through it (fstat), and then opened
//     through it (/proc/self/fd), O_NONBLOCK: what is opened is what was checked.
//   - When containers run as their users, the file must belong to the user the
//     container ran as: a hard link to someone else's file is refused.
//
// A refusal is a *RefusedError, which says why; other errors are the system's.
package secureio

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// AnyOwner accepts a file whatever user owns it (containers run as the daemon's user).
const AnyOwner = -1

// RefusedError is a path the daemon will not read for the application, and why.
type RefusedError struct {
	Path   string
	Reason string
}

func (e *RefusedError) Error() string { return fmt.Sprintf("%s: %s", e.Path, e.Reason) }

// IsRefused reports whether err is (or wraps) a *RefusedError.
func IsRefused(err error) bool {
	var r *RefusedError
	return errors.As(err, &r)
}

// Dir is a directory opened without following symbolic links below its base.
type Dir struct {
	f *os.File
}

// OpenDir opens base (trusted: configured by the administrator, so it is opened as
// named) and then each of names below it, none of which may be a symbolic link or
// anything but a directory.
func OpenDir(base string, names ...string) (*Dir, error) {
	fd, err := unix.Open(base, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: base, Err: err}
	}
	p := base
	for _, name := range names {
		if err := checkName(p, name); err != nil {
			unix.Close(fd)
			return nil, err
		}
		p = filepath.Join(p, name)
		next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			err = refusal(fd, name, p, err)
		}
		unix.Close(fd)
		if err != nil {
			return nil, err
		}
		fd = next
	}
	return &Dir{f: os.NewFile(uintptr(fd), p)}, nil
}

// Path is the directory's name as it was opened.
func (d *Dir) Path() string { return d.f.Name() }

// Close closes the directory.
func (d *Dir) Close() error { return d.f.Close() }

// UID is the user that owns the directory.
func (d *Dir) UID() (int, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(d.f.Fd()), &st); err != nil {
		return 0, &fs.PathError{Op: "fstat", Path: d.Path(), Err: err}
	}
	return int(st.Uid), nil
}

// Entry is a regular file in a directory, as List found it.
type Entry struct {
	Name    string
	Size    int64
	ModTime time.Time
	UID     int
}

// List returns the directory's regular files (by their own kind: links are not
// followed, and other kinds are left out), in the order the directory gives them.
func (d *Dir) List() ([]Entry, error) {
	names, err := d.f.Readdirnames(-1)
	if _, serr := d.f.Seek(0, 0); err == nil {
		err = serr
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", d.Path(), err)
	}
	out := make([]Entry, 0, len(names))
	for _, n := range names {
		var st unix.Stat_t
		if unix.Fstatat(int(d.f.Fd()), n, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
			continue
		}
		out = append(out, Entry{Name: n, Size: st.Size, ModTime: time.Unix(st.Mtim.Unix()), UID: int(st.Uid)})
	}
	return out, nil
}

// Subdirs returns the names of the directory's subdirectories (not links to one).
func (d *Dir) Subdirs() ([]string, error) {
	ents, err := d.f.ReadDir(-1)
	if _, serr := d.f.Seek(0, 0); err == nil {
		err = serr
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", d.Path(), err)
	}
	var out []string
	for _, e := range ents {
		if e.Type() == fs.ModeDir {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// OpenDir opens a subdirectory of d, not following a link.
func (d *Dir) OpenDir(name string) (*Dir, error) {
	if err := checkName(d.Path(), name); err != nil {
		return nil, err
	}
	p := filepath.Join(d.Path(), name)
	fd, err := unix.Openat(int(d.f.Fd()), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, refusal(int(d.f.Fd()), name, p, err)
	}
	return &Dir{f: os.NewFile(uintptr(fd), p)}, nil
}

// Open opens the regular file name in d for reading. owner is the user id the file must
// belong to, or AnyOwner.
func (d *Dir) Open(name string, owner int) (*os.File, error) {
	if err := checkName(d.Path(), name); err != nil {
		return nil, err
	}
	p := filepath.Join(d.Path(), name)
	dfd := int(d.f.Fd())
	// An O_PATH descriptor names the file without opening it (no device or FIFO is
	// opened, a link is the link itself); the file is checked through it, then opened
	// through it, so what is opened is what was checked.
	pfd, err := unix.Openat(dfd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	defer unix.Close(pfd)
	var before unix.Stat_t
	if err := unix.Fstat(pfd, &before); err != nil {
		return nil, &fs.PathError{Op: "fstat", Path: p, Err: err}
	}
	if err := check(p, &before, owner); err != nil {
		return nil, err
	}
	fd, err := unix.Open(fmt.Sprintf("/proc/self/fd/%d", pfd), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	var after unix.Stat_t
	if err := unix.Fstat(fd, &after); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "fstat", Path: p, Err: err}
	}
	if after.Dev != before.Dev || after.Ino != before.Ino {
		unix.Close(fd)
		return nil, &RefusedError{Path: p, Reason: "the file was replaced while it was being opened"}
	}
	// A regular file reads the same either way; the descriptor is made blocking so that
	// os.File treats it as the plain file it is.
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "fcntl", Path: p, Err: err}
	}
	return os.NewFile(uintptr(fd), p), nil
}

// OpenFile opens base/names.../file as Open does, each directory below base as OpenDir.
func OpenFile(owner int, base string, names ...string) (*os.File, error) {
	if len(names) == 0 {
		return nil, &RefusedError{Path: base, Reason: "no file named"}
	}
	d, err := OpenDir(base, names[:len(names)-1]...)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Open(names[len(names)-1], owner)
}

// check refuses anything but a regular file of owner.
func check(p string, st *unix.Stat_t, owner int) error {
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
	case unix.S_IFLNK:
		return &RefusedError{Path: p, Reason: "is a symbolic link"}
	case unix.S_IFIFO:
		return &RefusedError{Path: p, Reason: "is a FIFO, not a regular file"}
	case unix.S_IFCHR, unix.S_IFBLK:
		return &RefusedError{Path: p, Reason: "is a device, not a regular file"}
	case unix.S_IFSOCK:
		return &RefusedError{Path: p, Reason: "is a socket, not a regular file"}
	case unix.S_IFDIR:
		return &RefusedError{Path: p, Reason: "is a directory"}
	default:
		return &RefusedError{Path: p, Reason: "is not a regular file"}
	}
	if owner != AnyOwner && int(st.Uid) != owner {
		return &RefusedError{Path: p, Reason: fmt.Sprintf("is owned by uid %d, not by uid %d, the user the container ran as", st.Uid, owner)}
	}
	return nil
}

// checkName refuses names that would leave the directory.
func checkName(dir, name string) error {
	if name == "" || name == "." || name == ".." || name != filepath.Base(name) {
		return &RefusedError{Path: filepath.Join(dir, name), Reason: "is not a plain file name"}
	}
	return nil
}

// refusal turns an open's error into a refusal where the path is a link (O_NOFOLLOW
// answers ELOOP, and ENOTDIR with O_DIRECTORY) or not a directory, else wraps it.
func refusal(dirfd int, name, p string, err error) error {
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
		var st unix.Stat_t
		if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
			return &RefusedError{Path: p, Reason: "is a symbolic link"}
		}
		if errors.Is(err, unix.ENOTDIR) {
			return &RefusedError{Path: p, Reason: "is not a directory"}
		}
		return &RefusedError{Path: p, Reason: "is a symbolic link"}
	}
	return &fs.PathError{Op: "open", Path: p, Err: err}
}
