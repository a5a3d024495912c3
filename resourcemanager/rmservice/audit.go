package rmservice

import (
	"context"

	"github.com/bobbin-yarn/bobbin/resourcemanager/rmcore"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/yarn/audit"
)

// auditCall writes one call's RMAuditLogger line for the caller in ctx, on target (the
// Java service's name): success, or failure with the exception's words and the
// permission it needed; ids name what the call concerns.
func auditCall(ctx context.Context, rm *rmcore.Core, op, target, permissions string, err error, ids ...audit.KV) {
	user, ip := "", ""
	if c, ok := rpc.CallerFrom(ctx); ok && c != nil {
		user, ip = c.User, audit.IP(c.RemoteAddr)
	}
	if err != nil {
		rm.Audit().Failure(user, ip, op, target, audit.Why(err), permissions, ids...)
		return
	}
	rm.Audit().Success(user, ip, op, target, ids...)
}
