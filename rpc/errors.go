package rpc

import (
	"fmt"

	commonpb "github.com/bobbin-yarn/bobbin/hadoop-proto/common"
)

// Java exception classes that Hadoop and YARN clients rebuild from the error header
// (RPCUtil.unwrapAndThrowException instantiates them by name). Nested classes use '$'.
const (
	ClassIOException                = "java.io.IOException"
	ClassRpcServerException         = "org.apache.hadoop.ipc.RpcServerException"
	ClassRpcNoSuchProtocol          = "org.apache.hadoop.ipc.RpcNoSuchProtocolException"
	ClassRpcNoSuchMethod            = "org.apache.hadoop.ipc.RpcNoSuchMethodException"
	ClassVersionMismatch            = "org.apache.hadoop.ipc.RPC$VersionMismatch"
	ClassAccessControl              = "org.apache.hadoop.security.AccessControlException"
	ClassInvalidToken               = "org.apache.hadoop.security.token.SecretManager$InvalidToken"
	ClassSaslException              = "javax.security.sasl.SaslException"
	ClassUnsupportedOperation       = "java.lang.UnsupportedOperationException"
	ClassYarnException              = "org.apache.hadoop.yarn.exceptions.YarnException"
	ClassApplicationNotFound        = "org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException"
	ClassApplicationAttemptNotFound = "org.apache.hadoop.yarn.exceptions.ApplicationAttemptNotFoundException"
	ClassContainerNotFound          = "org.apache.hadoop.yarn.exceptions.ContainerNotFoundException"
	ClassAMNotRegistered            = "org.apache.hadoop.yarn.exceptions.ApplicationMasterNotRegisteredException"
	ClassInvalidAMRequest           = "org.apache.hadoop.yarn.exceptions.InvalidApplicationMasterRequestException"
	ClassInvalidResourceRequest     = "org.apache.hadoop.yarn.exceptions.InvalidResourceRequestException"
	ClassInvalidBlacklistRequest    = "org.apache.hadoop.yarn.exceptions.InvalidResourceBlacklistRequestException"
	ClassInvalidContainerRelease    = "org.apache.hadoop.yarn.exceptions.InvalidContainerReleaseException"
	ClassNMNotYetReady              = "org.apache.hadoop.yarn.exceptions.NMNotYetReadyException"
	ClassInvalidContainer           = "org.apache.hadoop.yarn.exceptions.InvalidContainerException"
	ClassInvalidAuxService          = "org.apache.hadoop.yarn.exceptions.InvalidAuxServiceException"
	ClassApplicationIDNotProvided   = "org.apache.hadoop.yarn.exceptions.ApplicationIdNotProvidedException"
	// ClassFeatureNotEnabled is 3.x's answer for a feature switched off (resource profiles).
	ClassFeatureNotEnabled = "org.apache.hadoop.yarn.exceptions.YARNFeatureNotEnabledException"
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

// Errorf builds an application error (ERROR_APPLICATION) of a Java class.
func Errorf(class, format string, args ...any) *RemoteError {
	return &RemoteError{Class: class, Message: fmt.Sprintf(format, args...), Code: commonpb.RpcResponseHeaderProto_ERROR_APPLICATION}
}

func fatalf(code ErrorCode, class, format string, args ...any) *RemoteError {
	return &RemoteError{Class: class, Message: fmt.Sprintf(format, args...), Code: code, Fatal: true}
}
