// Package javahost runs a Java auxiliary service for Bobbin's NodeManager: a class
// extending Hadoop's AuxiliaryService (Spark's YarnShuffleService, Tez's ShuffleHandler),
// loaded in a helper JVM (AuxServiceHost.java, run by Java's source-file launcher) that
// the NodeManager drives through the service's lifecycle over the helper's stdin and
// stdout, one call at a time. The service opens its own ports (Spark's shuffle: 7337)
// inside that JVM; the NodeManager hands it applications' service data and containers as
// the Java NodeManager's AuxServices does, and AMs get its metadata.
//
// The cost: a JVM per service on every node (Spark's shuffle service: about 200 MB
// resident, measured, the source launcher's compiler included), started with the
// NodeManager; a JDK (the source launcher compiles the helper) and a Hadoop installation
// for AuxiliaryService's classes.
package javahost

import (
	"bufio"
	"context"
	_ "embed"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/bobbin-yarn/bobbin/nodemanager/auxservices"
	"github.com/bobbin-yarn/bobbin/records"
)

//go:embed AuxServiceHost.java
var hostSource []byte

// Config is one Java auxiliary service.
type Config struct {
	Name, Class string
	// Java is the java launcher (a JDK's: it compiles the helper).
	Java string
	// Classpath is the helper's: the node's configuration directory and Hadoop's jars.
	Classpath []string
	// ServiceClasspath, when set, is the service's own (.classpath, as written: entries
	// split on ':'), loaded in Hadoop's ApplicationClassLoader as the Java NodeManager
	// loads it.
	ServiceClasspath string
	// RecoveryDir, when set, is the service's recovery path (setRecoveryPath).
	RecoveryDir string
	// WorkDir holds the helper's source.
	WorkDir string
	// StartTimeout bounds the JVM's start and the service's init and start; CallTimeout
	// each later call.
	StartTimeout, CallTimeout time.Duration
	Logger                    *logrus.Entry
}

// Service is a Java auxiliary service in its helper JVM.
type Service struct {
	cfg Config

	// mu is held for one call (a line out, its answer in); a leaf lock.
	mu      sync.Mutex
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	answers chan string   // the helper's lines; closed when its stdout ends
	exited  chan struct{} // closed when the helper's process has ended
	meta    []byte
}

var (
	_ auxservices.Service        = (*Service)(nil)
	_ auxservices.ContainerHooks = (*Service)(nil)
)

// New is the service, not started.
func New(cfg Config) *Service { return &Service{cfg: cfg} }

func (s *Service) Name() string { return s.cfg.Name }

// Start starts the helper and waits for the service's init and start.
func (s *Service) Start() error {
	src := filepath.Join(s.cfg.WorkDir, "AuxServiceHost.java")
	if err := os.MkdirAll(s.cfg.WorkDir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(src, hostSource, 0o644); err != nil {
		return err
	}
	args := []string{"-cp", strings.Join(s.cfg.Classpath, ":"), src, s.cfg.Name, s.cfg.Class, s.cfg.RecoveryDir, s.cfg.ServiceClasspath}
	cmd := exec.Command(s.cfg.Java, args...)
	cmd.Dir = s.cfg.WorkDir
	// Its own process group: a signal to the NodeManager's group (a terminal's ^C) is the
	// NodeManager's to pass on, by stopping the service.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s for %s: %w", s.cfg.Java, s.cfg.Class, err)
	}
	s.cmd, s.stdin = cmd, stdin
	s.answers, s.exited = make(chan string, 1), make(chan struct{})
	log := s.cfg.Logger.WithFields(logrus.Fields{"service": s.cfg.Name, "pid": cmd.Process.Pid})
	var pipes sync.WaitGroup
	pipes.Add(2)
	go func() { // ends with the helper's stdout
		defer pipes.Done()
		defer close(s.answers)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			s.answers <- sc.Text()
		}
	}()
	go func() { // ends with the helper's stderr: what the service logs, one event a line
		defer pipes.Done()
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			log.Info(sc.Text())
		}
	}()
	go func() { // ends with the helper's process
		pipes.Wait() // Wait closes the pipes: read them to their end first
		err := cmd.Wait()
		log.WithError(err).Info("auxiliary service's JVM exited")
		close(s.exited)
	}()
	first, err := s.await(s.cfg.StartTimeout)
	if err != nil {
		s.kill()
		return fmt.Errorf("%s (%s): %w", s.cfg.Name, s.cfg.Class, err)
	}
	if s.meta, err = base64.StdEncoding.DecodeString(first); err != nil {
		s.kill()
		return fmt.Errorf("%s: its metadata: %w", s.cfg.Name, err)
	}
	log.WithField("class", s.cfg.Class).Info("Java auxiliary service started")
	return nil
}

// await reads the helper's next answer: the value after "ok", or the error after "err".
func (s *Service) await(within time.Duration) (string, error) {
	t := time.NewTimer(within)
	defer t.Stop()
	select {
	case line, ok := <-s.answers:
		if !ok {
			<-s.exited
			return "", fmt.Errorf("its JVM exited (%v); its log lines say why", s.cmd.ProcessState)
		}
		status, value, _ := strings.Cut(line, " ")
		switch status {
		case "ok":
			return value, nil
		case "err":
			return "", errors.New(value)
		}
		return "", fmt.Errorf("unexpected answer %q", line)
	case <-t.C:
		return "", fmt.Errorf("%w within %s", errNoAnswer, within)
	}
}

var errNoAnswer = errors.New("no answer")

// call sends one call and waits for its answer.
func (s *Service) call(words ...string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return "", fmt.Errorf("%s is not running", s.cfg.Name)
	}
	if _, err := io.WriteString(s.stdin, strings.Join(words, " ")+"\n"); err != nil {
		return "", fmt.Errorf("%s: %w", s.cfg.Name, err)
	}
	v, err := s.await(s.cfg.CallTimeout)
	if errors.Is(err, errNoAnswer) {
		// Its late answer would be taken for the next call's: a service that hangs is
		// stopped for good, and says so on every call after.
		s.kill()
	}
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", s.cfg.Name, words[0], err)
	}
	return v, nil
}

// kill ends the helper's JVM and waits for it (its answers drained, so that the reader
// of its stdout reaches the end).
func (s *Service) kill() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	s.cmd.Process.Kill()
	go func() { // ends when the killed JVM's stdout closes the channel
		for range s.answers {
		}
	}()
	<-s.exited
}

// Stop stops the service (stop()) and waits for its JVM; past ctx's end it is killed.
func (s *Service) Stop(ctx context.Context) error {
	if s.cmd == nil {
		return nil
	}
	_, err := s.call("stop")
	s.stdin.Close()
	select {
	case <-s.exited:
	case <-ctx.Done():
		s.kill()
		err = errors.Join(err, ctx.Err())
	}
	return err
}

// Meta is what getMetaData answered at start (Spark's shuffle: nothing; its port is the
// application's own setting).
func (s *Service) Meta() []byte { return s.meta }

// InitializeApplication hands the service an application's service data; its exception
// refuses the container, as the Java NodeManager's AuxServices does.
func (s *Service) InitializeApplication(init auxservices.AppInit) error {
	_, err := s.call("initApp", init.App.String(), init.User, base64.StdEncoding.EncodeToString(init.Data))
	return err
}

func (s *Service) StopApplication(app records.ApplicationID) {
	if _, err := s.call("stopApp", app.String()); err != nil {
		s.cfg.Logger.WithError(err).WithField("application", app.String()).Warn("auxiliary service's stopApplication failed")
	}
}

func (s *Service) InitializeContainer(id records.ContainerID, user string) {
	if _, err := s.call("initContainer", id.String(), user); err != nil {
		s.cfg.Logger.WithError(err).WithField("container", id.String()).Warn("auxiliary service's initializeContainer failed")
	}
}

func (s *Service) StopContainer(id records.ContainerID, user string) {
	if _, err := s.call("stopContainer", id.String(), user); err != nil {
		s.cfg.Logger.WithError(err).WithField("container", id.String()).Warn("auxiliary service's stopContainer failed")
	}
}
