package delegation

import (
	"context"
	"fmt"
	"time"

	"github.com/bobbin-yarn/bobbin/rpc/token"
)

// Local renews and cancels this RM's own delegation tokens for the applications that
// submit them (tokenrenewer's kind RM_DELEGATION_TOKEN), as Java's
// RMDelegationTokenIdentifier.Renewer does with the local secret manager: as the token's
// renewer, without a call.
type Local struct{ M *Manager }

// Manages is true for tokens this RM issued and still holds; another RM's tokens are not
// renewed here.
func (l Local) Manages(t *token.Token) bool {
	id, err := decode(t.Proto())
	if err != nil {
		return false
	}
	return l.M.holds(id)
}

// Renew renews the token as its renewer.
func (l Local) Renew(_ context.Context, t *token.Token) (time.Time, error) {
	id, err := decode(t.Proto())
	if err != nil {
		return time.Time{}, err
	}
	return l.M.Renew(t.Proto(), id.GetRenewer())
}

// Cancel cancels the token as its renewer.
func (l Local) Cancel(_ context.Context, t *token.Token) error {
	id, err := decode(t.Proto())
	if err != nil {
		return err
	}
	return l.M.Cancel(t.Proto(), id.GetRenewer())
}

// MaxDate is the token's max lifetime.
func (l Local) MaxDate(t *token.Token) time.Time {
	id, err := decode(t.Proto())
	if err != nil {
		return time.Time{}
	}
	return millis(id.GetMaxDate())
}

// Describe is Java's Token.toString for the token.
func (l Local) Describe(t *token.Token) string {
	if id, err := decode(t.Proto()); err == nil {
		return fmt.Sprintf("Kind: %s, Service: %s, Ident: (%s)", t.Kind, t.Service, describe(id))
	}
	return t.String()
}
