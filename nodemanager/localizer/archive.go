package localizer

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// safeJoin joins an archive entry name under dir, refusing names that would escape it.
func safeJoin(dir, name string) (string, error) {
	p := filepath.Join(dir, name)
	if p != dir && !strings.HasPrefix(p, dir+string(filepath.Separator)) {
		return "", fmt.Errorf("archive entry %q escapes the unpack directory", name)
	}
	return p, nil
}

// unzip unpacks a zip or jar into dir; with a pattern (a Java regex matched against the
// whole entry name, as RunJar.unJar does) only matching entries.
func unzip(src, dir, pattern string) error {
	var re *regexp.Regexp
	if pattern != "" {
		var err error
		if re, err = regexp.Compile("^(?:" + pattern + ")$"); err != nil {
			return fmt.Errorf("pattern %q: %w", pattern, err)
		}
	}
	zr, err := zip.OpenReader(src)
	if err != nil {
		return fmt.Errorf("unzip: %w", err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		if re != nil && !re.MatchString(f.Name) {
			continue
		}
		target, err := safeJoin(dir, f.Name)
		if err != nil {
			return err
		}
		if f.FileInfo().IsDir() || strings.HasSuffix(f.Name, "/") {
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return fmt.Errorf("unzip %s: %w", f.Name, err)
		}
		perm := f.Mode().Perm()
		if perm == 0 {
			perm = 0o644
		}
		err = writeFile(target, rc, perm)
		rc.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// untar unpacks a tar (gzipped when gz) into dir: files, directories and symlinks that
// stay inside it.
func untar(src, dir string, gz bool) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	var r io.Reader = f
	if gz {
		g, err := gzip.NewReader(f)
		if err != nil {
			return fmt.Errorf("untar: %w", err)
		}
		defer g.Close()
		r = g
	}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("untar: %w", err)
		}
		target, err := safeJoin(dir, h.Name)
		if err != nil {
			return err
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := writeFile(target, tr, os.FileMode(h.Mode).Perm()); err != nil {
				return err
			}
		case tar.TypeSymlink:
			if filepath.IsAbs(h.Linkname) {
				return fmt.Errorf("archive symlink %q points outside (%s)", h.Name, h.Linkname)
			}
			if _, err := safeJoin(dir, filepath.Join(filepath.Dir(h.Name), h.Linkname)); err != nil {
				return err
			}
			os.MkdirAll(filepath.Dir(target), 0o755)
			if err := os.Symlink(h.Linkname, target); err != nil {
				return err
			}
		}
	}
}
