package rpc

import (
	"fmt"

	commonpb "github.com/bobbin-yarn/bobbin/hadoop-proto/common"
)

// Java exception classes of the IPC layer that Hadoop clients rebuild from the error
// header. Nested classes use '$'. YARN's own classes are in yarn/exceptions.
const (
	ClassIOException          = "java.io.IOException"
	ClassRpcServerException   = "org.apache.hadoop.ipc.RpcServerException"
	ClassRpcNoSuchProtocol    = "org.apache.hadoop.ipc.RpcNoSuchProtocolException"
	ClassRpcNoSuchMethod      = "org.apache.hadoop.ipc.RpcNoSuchMethodException"
	ClassVersionMismatch      = "org.apache.hadoop.ipc.RPC$VersionMismatch"
	ClassAccessControl        = "org.apache.hadoop.security.AccessControlException"
	ClassInvalidToken         = "org.apache.hadoop.security.token.SecretManager$InvalidToken"
	ClassSaslException        = "javax.security.sasl.SaslException"
	ClassUnsupportedOperation = "java.lang.UnsupportedOperationException"
	// ClassStandby is what a standby server answers: Java's failover proxies move on to
	// the next server when they see it.
	ClassStandby = "org.apache.hadoop.ipc.StandbyException"
)

// ErrorCode is the errorDetail of a response header.
type ErrorCode = commonpb.RpcResponseHeaderProto_RpcErrorCodeProto

// RemoteError is a Hadoop IPC error: the Java exception class and message of an ERROR or
// FATAL response. Server handlers return it to choose the class the client rebuilds; the
// client returns it for error responses.
type RemoteError struct {
	Class   string
	Message string
	Code    ErrorCode
	// Fatal is set for FATAL responses, after which the connection is closed.
	Fatal bool
}

func (e *RemoteError) Error() string {
	return fmt.Sprintf("%s: %s", e.Class, e.Message)
}

// Is makes a RemoteError with only a Class (a sentinel, as yarn/exceptions declares) match
// every error of that class: errors.Is(err, sentinel).
func (e *RemoteError) Is(target error) bool {
	t, ok := target.(*RemoteError)
	return ok && t.Message == "" && t.Class == e.Class
}

// JavaException is an error that names the Java exception a client rebuilds from it (the
// daemons' logic builds them without knowing of RPC, see yarn/exceptions): a server
// answers it as an application error of that class, whatever wraps it.
type JavaException interface {
	error
	JavaClass() string
	JavaMessage() string
}

// Errorf builds an application error (ERROR_APPLICATION) of a Java class.
func Errorf(class, format string, args ...any) *RemoteError {
	return &RemoteError{Class: class, Message: fmt.Sprintf(format, args...), Code: commonpb.RpcResponseHeaderProto_ERROR_APPLICATION}
}

func fatalf(code ErrorCode, class, format string, args ...any) *RemoteError {
	return &RemoteError{Class: class, Message: fmt.Sprintf(format, args...), Code: code, Fatal: true}
}
