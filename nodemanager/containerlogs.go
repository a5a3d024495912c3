package nodemanager

import (
	"errors"
	"io/fs"
	"os"

	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/yarn/secureio"
)

// Container log files are written by the container (as its user, with
// LinuxContainerExecutor) and read by the NodeManager (as root) for the web pages, the
// REST API and log aggregation. Every such read goes through yarn/secureio: no link is
// followed below a configured log dir, only regular files are read, and when
// containers run as their users a file must be that user's.

// logDirsOf opens the container's log dirs, <log dir>/<app>/<container>, one per
// configured log dir that has it. A dir that is a link (the application owns
// <log dir>/<app> and could put one there) is refused and logged, not followed. Close
// what it returns.
func (nm *NodeManager) logDirsOf(id records.ContainerID) []*secureio.Dir {
	var out []*secureio.Dir
	for _, l := range nm.settings.LogDirs {
		d, err := secureio.OpenDir(l, id.Attempt.App.String(), id.String())
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				nm.log.WithError(err).WithField("container", id.String()).Warn("container log dir refused")
			}
			continue
		}
		out = append(out, d)
	}
	return out
}

// closeDirs closes dirs from logDirsOf.
func closeDirs(dirs []*secureio.Dir) {
	for _, d := range dirs {
		d.Close()
	}
}

// appFileOwner is the user id a file the containers of an application of appUser write must
// belong to: with LinuxContainerExecutor, the user the application's containers run as
// (when appUser is "", the application being no longer known here, the owner of
// <log dir>/<app>, which the NodeManager handed to that user); secureio.AnyOwner when
// containers run as the NodeManager. It takes no lock.
func (nm *NodeManager) appFileOwner(appUser string, appLogDir *secureio.Dir) int {
	if !nm.runAs.enabled {
		return secureio.AnyOwner
	}
	if appUser != "" {
		if u, err := nm.runAs.userFor(appUser); err == nil && u != nil {
			return int(u.UID)
		}
	}
	if appLogDir != nil {
		if uid, err := appLogDir.UID(); err == nil {
			return uid
		}
	}
	// Nothing says whose the files are: only the NodeManager's own would do, and a
	// container never writes as the NodeManager here.
	return os.Geteuid()
}

// ownerOfContainerLogs is appFileOwner for a container of an application of appUser ("":
// unknown), looking at the application's log dir in the first configured log dir that
// has one.
func (nm *NodeManager) ownerOfContainerLogs(id records.ContainerID, appUser string) int {
	if !nm.runAs.enabled {
		return secureio.AnyOwner
	}
	for _, l := range nm.settings.LogDirs {
		if d, err := secureio.OpenDir(l, id.Attempt.App.String()); err == nil {
			defer d.Close()
			return nm.appFileOwner(appUser, d)
		}
	}
	return nm.appFileOwner(appUser, nil)
}

// openContainerLog opens one of a container's log files for a reader on the web. It
// returns fs.ErrNotExist when no log dir has the file, and a *secureio.RefusedError
// (logged here with the ids) when one has it but it may not be read.
func (nm *NodeManager) openContainerLog(id records.ContainerID, name string) (*os.File, error) {
	dirs := nm.logDirsOf(id)
	defer closeDirs(dirs)
	owner := nm.ownerOfContainerLogs(id, nm.table.UserOf(id.Attempt.App))
	for _, d := range dirs {
		f, err := d.Open(name, owner)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			nm.log.WithError(err).WithFields(map[string]any{"container": id.String(), "file": name}).Warn("container log file refused")
			return nil, err
		}
		return f, nil
	}
	return nil, fs.ErrNotExist
}

// listContainerLogs lists the files of a container's log dirs that openContainerLog would
// open: regular files, of the user the container ran as. appUser is the application's
// user ("" when unknown); it takes no lock.
func (nm *NodeManager) listContainerLogs(id records.ContainerID, appUser string) (files []secureio.Entry, found bool) {
	dirs := nm.logDirsOf(id)
	defer closeDirs(dirs)
	owner := secureio.AnyOwner
	if len(dirs) > 0 {
		owner = nm.ownerOfContainerLogs(id, appUser)
	}
	for _, d := range dirs {
		list, err := d.List()
		if err != nil {
			continue
		}
		for _, e := range list {
			if owner == secureio.AnyOwner || e.UID == owner {
				files = append(files, e)
			}
		}
	}
	return files, len(dirs) > 0
}
