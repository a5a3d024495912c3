package nmservice

import (
	"errors"
	"testing"

	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
)

// The node's YARN facts reach the AM as the class it rebuilds; any other error as a
// YarnException, per container and for a whole call.
func TestNodeErrorsKeepTheirClass(t *testing.T) {
	f := failureOf(nil, exceptions.Errorf(exceptions.InvalidAuxService, "The auxService:%s does not exist", "x"))
	if f.GetException().GetClassName() != exceptions.InvalidAuxService || f.GetException().GetMessage() != "The auxService:x does not exist" {
		t.Errorf("per container: %v", f)
	}
	if f := failureOf(nil, errors.New("disk gone")); f.GetException().GetClassName() != exceptions.YarnException || f.GetException().GetMessage() != "disk gone" {
		t.Errorf("a plain error per container: %v", f)
	}
	var re *rpc.RemoteError
	if err := callError(errors.New("container c is not running")); !errors.As(err, &re) || re.Class != exceptions.YarnException {
		t.Errorf("a plain error for the call: %#v", err)
	}
	if err := callError(exceptions.Errorf(exceptions.NMNotYetReady, "not yet")); !errors.Is(err, exceptions.ErrNMNotYetReady) {
		t.Errorf("a YARN fact for the call: %#v", err)
	}
}
