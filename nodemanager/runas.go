package nodemanager

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/container"
	"github.com/bobbin-yarn/bobbin/nodemanager/containers"
	"github.com/bobbin-yarn/bobbin/yarn/kerberos"
)

const (
	classDefaultExecutor = "org.apache.hadoop.yarn.server.nodemanager.DefaultContainerExecutor"
	classLinuxExecutor   = "org.apache.hadoop.yarn.server.nodemanager.LinuxContainerExecutor"
	keyExecutorClass     = "yarn.nodemanager.container-executor.class"
)

// runAs decides which local user runs a container, as Java's LinuxContainerExecutor and
// its setuid container-executor do. With DefaultContainerExecutor (enabled false)
// containers run as the NodeManager's user. With LinuxContainerExecutor they run as the
// application's submitter on a kerberized cluster, and otherwise as
// yarn.nodemanager.linux-container-executor.nonsecure-mode.local-user (nobody) unless
// nonsecure-mode.limit-users is false. container-executor.cfg in the configuration
// directory bans users (banned.users: hdfs, yarn, mapred, bin) and those under
// min.user.id (1000) unless allowed.system.users names them; root never runs a container.
type runAs struct {
	enabled    bool
	secure     bool
	limitUsers bool
	localUser  string
	pattern    *regexp.Regexp
	banned     map[string]bool
	minUID     int
	allowed    map[string]bool
	nmGID      int // the group that owns containers' directories with them (the NM's)
}

// checkExecutorClass refuses executors Bobbin does not serve (ReadSettings reports it
// with the other settings' problems).
func checkExecutorClass(c *conf.Configuration) error {
	class, err := c.Trimmed(keyExecutorClass)
	if err != nil || class == "" || class == classDefaultExecutor || class == classLinuxExecutor {
		return err
	}
	return &conf.ValueError{Source: c.Source(keyExecutorClass), Key: keyExecutorClass, Value: class,
		Reason: "Bobbin runs containers as DefaultContainerExecutor (the NodeManager's user) or LinuxContainerExecutor (the submitting user) does; this executor is not served"}
}

// readRunAs reads the executor class and, for LinuxContainerExecutor, its keys and
// container-executor.cfg; every value it cannot serve is an error naming its key.
func readRunAs(c *conf.Configuration, confDir string) (runAs, error) {
	r := runAs{banned: map[string]bool{"hdfs": true, "yarn": true, "mapred": true, "bin": true}, minUID: 1000, allowed: map[string]bool{}, nmGID: os.Getgid()}
	if err := checkExecutorClass(c); err != nil {
		return r, err
	}
	class, _ := c.Trimmed(keyExecutorClass)
	if class != classLinuxExecutor {
		return r, nil
	}
	if os.Geteuid() != 0 {
		return r, &conf.ValueError{Source: c.Source(keyExecutorClass), Key: keyExecutorClass, Value: class,
			Reason: "LinuxContainerExecutor starts containers as other users, which needs the NodeManager to run as root (Bobbin needs no setuid container-executor binary)"}
	}
	r.enabled = true
	var err error
	if r.secure, err = kerberos.Enabled(c); err != nil {
		return r, err
	}
	if r.limitUsers, err = c.Bool("yarn.nodemanager.linux-container-executor.nonsecure-mode.limit-users"); err != nil {
		return r, err
	}
	if r.localUser, err = c.Trimmed("yarn.nodemanager.linux-container-executor.nonsecure-mode.local-user"); err != nil {
		return r, err
	}
	if r.localUser == "" {
		r.localUser = "nobody"
	}
	const patternKey = "yarn.nodemanager.linux-container-executor.nonsecure-mode.user-pattern"
	pat, err := c.Trimmed(patternKey)
	if err != nil {
		return r, err
	}
	if pat == "" {
		pat = `^[_.A-Za-z0-9][-@_.A-Za-z0-9]{0,255}?[$]?$`
	}
	if r.pattern, err = regexp.Compile(pat); err != nil {
		return r, &conf.ValueError{Source: c.Source(patternKey), Key: patternKey, Value: pat, Reason: err.Error()}
	}
	if confDir != "" {
		if err := r.readExecutorCfg(filepath.Join(confDir, "container-executor.cfg")); err != nil {
			return r, err
		}
	}
	return r, nil
}

// readExecutorCfg reads container-executor.cfg (key=value lines) when it exists.
func (r *runAs) readExecutorCfg(path string) error {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("nodemanager: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return fmt.Errorf("nodemanager: %s:%d: %q is not key=value", path, n, line)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		list := func() map[string]bool {
			m := map[string]bool{}
			for _, u := range strings.Split(v, ",") {
				if u = strings.TrimSpace(u); u != "" {
					m[u] = true
				}
			}
			return m
		}
		switch k {
		case "banned.users":
			r.banned = list()
		case "allowed.system.users":
			r.allowed = list()
		case "min.user.id":
			id, err := strconv.Atoi(v)
			if err != nil || id < 0 {
				return fmt.Errorf("nodemanager: %s:%d: min.user.id = %q is not a user id", path, n, v)
			}
			r.minUID = id
		}
	}
	return sc.Err()
}

// userFor is the local user that runs a container of appUser's (nil: the NodeManager's
// own user). A refused user's error is the container-executor's message.
func (r runAs) userFor(appUser string) (*container.User, error) {
	if !r.enabled {
		return nil, nil
	}
	name := appUser
	if !r.secure && r.limitUsers {
		name = r.localUser
	} else if !r.secure && !r.pattern.MatchString(name) {
		return nil, fmt.Errorf("Invalid user name '%s', it must match '%s'", name, r.pattern)
	}
	if name == "root" {
		return nil, fmt.Errorf("Running as root is not allowed")
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("User %s not found", name)
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("User %s has no numeric ids (%s:%s)", name, u.Uid, u.Gid)
	}
	if uid < r.minUID && !r.allowed[name] {
		return nil, fmt.Errorf("Requested user %s is not whitelisted and has id %d,which is below the minimum allowed %d", name, uid, r.minUID)
	}
	if r.banned[name] {
		return nil, fmt.Errorf("Requested user %s is banned", name)
	}
	cu := &container.User{Name: name, UID: uint32(uid), GID: uint32(gid), Home: u.HomeDir}
	if ids, err := u.GroupIds(); err == nil {
		for _, g := range ids {
			if n, err := strconv.Atoi(g); err == nil {
				cu.Groups = append(cu.Groups, uint32(n))
			}
		}
	}
	return cu, nil
}

// handOver gives a container's directories to the user that runs it, as the Java
// container-executor lays them out: usercache/<user> and the application and container
// dirs owned by the user with the NodeManager's group, 0750 (no other user may enter);
// the work dir's contents and the container's private localized files the user's; its
// log dirs the user's, 0750.
func (r runAs) handOver(u *container.User, d containers.Dirs, userDirs, private []string) error {
	own := func(path string) error {
		if err := os.Lchown(path, int(u.UID), r.nmGID); err != nil {
			return fmt.Errorf("handing %s to %s: %w", path, u.Name, err)
		}
		return nil
	}
	ownDir := func(path string) error {
		if err := own(path); err != nil {
			return err
		}
		return os.Chmod(path, 0o750)
	}
	for _, p := range userDirs {
		if err := ownDir(p); err != nil {
			return err
		}
	}
	for _, p := range append(append([]string(nil), d.AppDirs...), d.LogDirs...) {
		if err := ownDir(p); err != nil {
			return err
		}
	}
	for _, l := range d.LogDirs {
		if err := ownDir(filepath.Dir(l)); err != nil { // <log>/<app>
			return err
		}
	}
	for _, root := range append([]string{d.Work}, private...) {
		err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			return own(p)
		})
		if err != nil {
			return err
		}
	}
	return os.Chmod(d.Work, 0o750)
}

// actAs is who writes an application's logs to a local file system: the user its containers
// run as, with the NodeManager's group (ok false: containers run as the NodeManager).
func (r runAs) actAs(appUser string) (uid, gid int, ok bool) {
	if !r.enabled {
		return 0, 0, false
	}
	u, err := r.userFor(appUser)
	if err != nil || u == nil {
		return 0, 0, false
	}
	return int(u.UID), r.nmGID, true
}

// handOverContainer gives container c's directories and private localized files to u.
func (r runAs) handOverContainer(c *containers.Container, u *container.User, localized map[string]string) error {
	d := c.Dirs
	var userDirs []string
	for _, a := range d.AppDirs { // <local>/usercache/<user>/appcache/<app>
		userDirs = append(userDirs, filepath.Dir(filepath.Dir(a)), filepath.Dir(a))
	}
	var private []string
	for _, p := range localized {
		if strings.Contains(p, string(filepath.Separator)+"usercache"+string(filepath.Separator)) {
			private = append(private, filepath.Dir(p)) // the cache entry, <...>/filecache/<n>
		}
	}
	return r.handOver(u, d, userDirs, private)
}
