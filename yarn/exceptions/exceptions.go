// Package exceptions names the YARN Java exception classes that clients rebuild from an
// IPC error header (RPCUtil.unwrapAndThrowException instantiates them by name), and gives
// each a sentinel error, as colinmarc/hdfs maps Java exceptions to Go errors: a server
// answers with rpc.Errorf(exceptions.ApplicationNotFound, ...), and a Go client tests
// errors.Is(err, exceptions.ErrApplicationNotFound). The IPC layer's own classes
// (IOException, RpcNoSuchMethodException, InvalidToken, ...) stay in package rpc.
package exceptions

import (
	"errors"
	"fmt"

	"github.com/bobbin-yarn/bobbin/rpc"
)

// YARN exception classes.
const (
	YarnException              = "org.apache.hadoop.yarn.exceptions.YarnException"
	ApplicationNotFound        = "org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException"
	ApplicationAttemptNotFound = "org.apache.hadoop.yarn.exceptions.ApplicationAttemptNotFoundException"
	ContainerNotFound          = "org.apache.hadoop.yarn.exceptions.ContainerNotFoundException"
	ApplicationIDNotProvided   = "org.apache.hadoop.yarn.exceptions.ApplicationIdNotProvidedException"
	AMNotRegistered            = "org.apache.hadoop.yarn.exceptions.ApplicationMasterNotRegisteredException"
	InvalidAMRequest           = "org.apache.hadoop.yarn.exceptions.InvalidApplicationMasterRequestException"
	InvalidResourceRequest     = "org.apache.hadoop.yarn.exceptions.InvalidResourceRequestException"
	// InvalidLabelResourceRequest (an InvalidResourceRequestException) refuses a request's
	// node-label expression.
	InvalidLabelResourceRequest = "org.apache.hadoop.yarn.exceptions.InvalidLabelResourceRequestException"
	InvalidBlacklistRequest     = "org.apache.hadoop.yarn.exceptions.InvalidResourceBlacklistRequestException"
	InvalidContainerRelease     = "org.apache.hadoop.yarn.exceptions.InvalidContainerReleaseException"
	NMNotYetReady               = "org.apache.hadoop.yarn.exceptions.NMNotYetReadyException"
	InvalidContainer            = "org.apache.hadoop.yarn.exceptions.InvalidContainerException"
	InvalidAuxService           = "org.apache.hadoop.yarn.exceptions.InvalidAuxServiceException"
	// FeatureNotEnabled is Hadoop 3's answer for a feature switched off (resource
	// profiles, reservations).
	FeatureNotEnabled = "org.apache.hadoop.yarn.exceptions.YARNFeatureNotEnabledException"
)

// Sentinels: errors.Is(err, ErrX) holds for an *rpc.RemoteError of class X, whatever its
// message, wherever it is wrapped.
var (
	ErrYarnException              = &rpc.RemoteError{Class: YarnException}
	ErrApplicationNotFound        = &rpc.RemoteError{Class: ApplicationNotFound}
	ErrApplicationAttemptNotFound = &rpc.RemoteError{Class: ApplicationAttemptNotFound}
	ErrContainerNotFound          = &rpc.RemoteError{Class: ContainerNotFound}
	ErrApplicationIDNotProvided   = &rpc.RemoteError{Class: ApplicationIDNotProvided}
	ErrAMNotRegistered            = &rpc.RemoteError{Class: AMNotRegistered}
	ErrInvalidAMRequest           = &rpc.RemoteError{Class: InvalidAMRequest}
	ErrInvalidResourceRequest     = &rpc.RemoteError{Class: InvalidResourceRequest}
	ErrInvalidBlacklistRequest    = &rpc.RemoteError{Class: InvalidBlacklistRequest}
	ErrInvalidContainerRelease    = &rpc.RemoteError{Class: InvalidContainerRelease}
	ErrNMNotYetReady              = &rpc.RemoteError{Class: NMNotYetReady}
	ErrInvalidContainer           = &rpc.RemoteError{Class: InvalidContainer}
	ErrInvalidAuxService          = &rpc.RemoteError{Class: InvalidAuxService}
	ErrFeatureNotEnabled          = &rpc.RemoteError{Class: FeatureNotEnabled}
)

// Hadoop's own classes YARN services answer with.
const (
	AccessControl = "org.apache.hadoop.security.AccessControlException"
	IOException   = "java.io.IOException"
)

// Error is a YARN exception as a fact of a daemon's logic: the Java class a client
// rebuilds, and the message. The logic builds it without knowing of RPC; the IPC server
// answers it as that class (rpc.JavaException), and errors.Is matches it against the
// sentinels above as it does a *rpc.RemoteError.
type Error struct {
	Class, Message string
}

// Errorf is an Error of class.
func Errorf(class, format string, args ...any) *Error {
	return &Error{Class: class, Message: fmt.Sprintf(format, args...)}
}

func (e *Error) Error() string { return e.Class + ": " + e.Message }

// JavaClass and JavaMessage make it an rpc.JavaException.
func (e *Error) JavaClass() string   { return e.Class }
func (e *Error) JavaMessage() string { return e.Message }

// Is matches a sentinel of its class: a *rpc.RemoteError or an *Error with only a class.
func (e *Error) Is(target error) bool {
	switch t := target.(type) {
	case *rpc.RemoteError:
		return t.Message == "" && t.Class == e.Class
	case *Error:
		return t.Message == "" && t.Class == e.Class
	}
	return false
}

// ClassOf is the Java class and message an error carries, as an Error or as a
// *rpc.RemoteError; ok is false for any other error.
func ClassOf(err error) (class, message string, ok bool) {
	var e *Error
	if errors.As(err, &e) {
		return e.Class, e.Message, true
	}
	var re *rpc.RemoteError
	if errors.As(err, &re) {
		return re.Class, re.Message, true
	}
	return "", "", false
}
